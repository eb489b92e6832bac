"""Tests of exercise 3's judge-side helpers and reference solution, against PyTorch.

- ``exercises/exercise3/tests/hidden/mistakes.py``: every ``*_variant(mistake=None)`` equals PyTorch
  (``nn.MultiheadAttention`` with copied weights, the torch ``ReferenceBlock``, ``torch.softmax``,
  ``F.layer_norm``, ``F.gelu(approximate='tanh')``); every mistake changes the answer on random inputs; the
  mistakes that can be built from stock torch modules agree with those modules.
- ``exercises/exercise3/tests/reference.py``: the block's ``state_dict`` names are the contract's.
- ``solutions/exercise3/attention.py``: matches PyTorch at 1e-6 and stays finite on x1000 inputs.
- ``exercises/exercise3/skeleton/attention.py``: same signatures as the solution, every body unwritten.

Expected values always come from PyTorch, never from the code under test. Inputs avoid the coincidences
that hide bugs: random weights and non-zero biases, T != n_heads, inputs not at unit scale or zero mean.
"""
from __future__ import annotations

import ast
import importlib.util
import inspect
import math
from pathlib import Path

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from torch import nn

ROOT = Path(__file__).resolve().parent.parent
EX3 = ROOT / "exercises" / "exercise3"


def _load(path: Path, name: str):
    """Import a module from a file path (the exercise folders are not packages)."""
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


mistakes = _load(EX3 / "tests" / "hidden" / "mistakes.py", "ex3_mistakes")
reference = _load(EX3 / "tests" / "reference.py", "ex3_reference")
solution = _load(ROOT / "solutions" / "exercise3" / "attention.py", "ex3_solution")
skeleton = _load(EX3 / "skeleton" / "attention.py", "ex3_skeleton")

# (B, T, d_model, n_heads): lesson-sized, h = 1, h = d (d_head = 1), T = 1, d not a power of two
SHAPES = [(2, 5, 48, 6), (3, 7, 8, 1), (2, 5, 8, 8), (2, 1, 12, 3), (2, 9, 20, 4), (1, 6, 30, 5)]
DIFF_SHAPE = (2, 6, 24, 4)  # for "a mistake changes the answer": T != h, h > 1, T > 2

STATE_DICT_NAMES = {
    "ln1.weight", "ln1.bias", "attn.in_proj_weight", "attn.in_proj_bias", "attn.out_proj.weight",
    "attn.out_proj.bias", "ln2.weight", "ln2.bias", "mlp.fc.weight", "mlp.fc.bias", "mlp.proj.weight",
    "mlp.proj.bias",
}


def _gen(seed: int) -> torch.Generator:
    return torch.Generator().manual_seed(seed)


def _x(shape, seed: int, scale: float = 2.0) -> np.ndarray:
    """Random float64 input, not unit scale and not zero mean."""
    rng = np.random.default_rng(seed)
    return scale * rng.standard_normal(shape) + 0.3


def _err(a: np.ndarray, b: np.ndarray) -> float:
    """Max abs difference; NaN/inf anywhere in either counts as an infinite difference."""
    assert a.shape == b.shape, (a.shape, b.shape)
    if not (np.all(np.isfinite(a)) and np.all(np.isfinite(b))):
        return math.inf
    return float(np.max(np.abs(a - b)))


def _torch_mha(attn: nn.MultiheadAttention, x: np.ndarray, mask: torch.Tensor | None, fastpath: bool) -> np.ndarray:
    """``attn(x, x, x)``: under ``no_grad`` torch may take its fused fast path, with grad the plain one."""
    xt = torch.as_tensor(x)
    with torch.set_grad_enabled(not fastpath):
        y = attn(xt, xt, xt, attn_mask=mask, need_weights=False)[0]
    return y.detach().numpy()


def _setup(shape, seed):
    B, T, d, h = shape
    attn = reference.random_attention(d, h, _gen(seed))
    return attn, _x((B, T, d), seed + 1), reference.attention_weights(attn), h


# ------------------------------------------------------------------------------- contract pins

def test_mistake_keys_are_the_contract():
    assert set(mistakes.MHA_MISTAKES) == {
        "heads_wrong_order", "heads_wrong_join", "heads_no_transpose", "heads_reverse_order", "no_out_proj",
        "out_not_transposed", "qkv_not_transposed", "no_qkv_bias", "no_out_bias", "no_biases", "no_scale",
        "scale_sqrt_d_model", "scale_d_head", "softmax_wrong_axis", "batch_mixed", "mask_leaks_future", "mask_blocks_diagonal",
        "mask_inverted", "mask_added", "mask_added_keep", "mask_after_softmax", "unstable_softmax", "float32",
        "mask_ignored"}
    assert set(mistakes.BLOCK_MISTAKES) == {
        "no_residual", "no_attn_residual", "no_mlp_residual", "residual_doubled", "residual_from_ln",
        "norm_after_sublayer", "no_layer_norm", "post_norm", "eps_1e-6", "ln_eps_outside_sqrt",
        "ln_unbiased_variance", "ln_no_affine", "erf_gelu", "relu", "sigmoid_gelu", "mlp_weights_swapped",
        "causal_ignored"}
    assert set(mistakes.SOFTMAX_MISTAKES) == {"wrong_axis", "axis_ignored", "unstable"}
    assert set(mistakes.LAYER_NORM_MISTAKES) == {"unbiased_variance", "no_affine", "eps_outside_sqrt"}
    assert set(mistakes.GELU_MISTAKES) == {"erf", "relu", "sigmoid_approx"}
    assert mistakes.MHA_CAUSAL_ONLY <= set(mistakes.MHA_MISTAKES)
    assert mistakes.BLOCK_CAUSAL_ONLY <= set(mistakes.BLOCK_MISTAKES)
    for table in (mistakes.MHA_MISTAKES, mistakes.BLOCK_MISTAKES, mistakes.SOFTMAX_MISTAKES,
                  mistakes.LAYER_NORM_MISTAKES, mistakes.GELU_MISTAKES):
        for key, sentence in table.items():
            assert sentence and "\n" not in sentence and len(sentence) < 300, key


def test_unknown_mistake_is_a_clear_error():
    with pytest.raises(ValueError, match="unknown multi-head attention mistake 'nope'; known: batch_mixed, float32"):
        mistakes.mha_variant(np.zeros((1, 2, 4)), np.zeros((12, 4)), np.zeros(12), np.zeros((4, 4)),
                             np.zeros(4), 2, False, mistake="nope")
    with pytest.raises(ValueError, match="unknown transformer block mistake 'nope'"):  # also inside a pair
        mistakes.block_variant(np.zeros((1, 2, 4)), {}, 2, False, mistake=("post_norm", "nope"))


def test_reference_block_state_dict_names_and_random_parameters():
    block = reference.random_block(12, 3, _gen(0))
    params = reference.block_params(block)
    assert set(params) == STATE_DICT_NAMES
    assert params["mlp.fc.weight"].shape == (48, 12) and params["mlp.proj.weight"].shape == (12, 48)
    assert all(a.dtype == np.float64 for a in params.values())
    for name in ("attn.in_proj_bias", "attn.out_proj.bias", "mlp.fc.bias", "mlp.proj.bias", "ln1.bias", "ln2.bias"):
        assert np.all(params[name] != 0), name
    for name in ("ln1.weight", "ln2.weight"):
        assert np.std(params[name]) > 0.1, name
    assert not np.allclose(params["attn.out_proj.weight"], np.eye(12))
    again = reference.block_params(reference.random_block(12, 3, _gen(0)))
    assert all(np.array_equal(params[k], again[k]) for k in params), "same seed, same block"


# ------------------------------------------------------------------- correct variants == PyTorch

@pytest.mark.parametrize("fastpath", [False, True], ids=["plain", "fastpath"])
@pytest.mark.parametrize("causal", [False, True], ids=["full", "causal"])
@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: "B{}T{}d{}h{}".format(*s))
def test_mha_variant_none_matches_torch_multihead_attention(shape, causal, fastpath):
    attn, x, weights, h = _setup(shape, seed=10)
    T = shape[1]
    mask = torch.triu(torch.ones(T, T, dtype=torch.bool), 1) if causal else None
    expected = _torch_mha(attn, x, mask, fastpath)
    got = mistakes.mha_variant(x, *weights, h, causal)
    assert got.dtype == np.float64 and got.shape == x.shape
    assert _err(got, expected) < 1e-10


@pytest.mark.parametrize("causal", [False, True], ids=["full", "causal"])
@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: "B{}T{}d{}h{}".format(*s))
def test_block_variant_none_matches_reference_block(shape, causal):
    B, T, d, h = shape
    block = reference.random_block(d, h, _gen(20))
    x = _x((B, T, d), 21)
    expected = reference.run_block(block, x, causal)
    got = mistakes.block_variant(x, reference.block_params(block), h, causal)
    assert got.dtype == np.float64 and got.shape == x.shape
    assert _err(got, expected) < 1e-10


def test_reference_block_is_the_lessons_pre_norm_block():
    """Cross-check ReferenceBlock itself against torch functionals composed by hand."""
    block = reference.random_block(20, 4, _gen(30))
    x = torch.as_tensor(_x((2, 7, 20), 31))
    with torch.no_grad():
        h = F.layer_norm(x, (20,), block.ln1.weight, block.ln1.bias, 1e-5)
        a = block.attn(h, h, h, attn_mask=torch.triu(torch.ones(7, 7, dtype=torch.bool), 1), need_weights=False)[0]
        x1 = x + a
        h = F.layer_norm(x1, (20,), block.ln2.weight, block.ln2.bias, 1e-5)
        m = F.linear(F.gelu(F.linear(h, block.mlp.fc.weight, block.mlp.fc.bias), approximate="tanh"),
                     block.mlp.proj.weight, block.mlp.proj.bias)
        expected = (x1 + m).numpy()
    assert _err(reference.run_block(block, x.numpy(), True), expected) < 1e-12


@pytest.mark.parametrize("axis", [-1, 0, 1])
def test_softmax_variant_none_matches_torch(axis):
    x = _x((4, 5, 6), 40, scale=3.0)
    expected = torch.softmax(torch.as_tensor(x), dim=axis).numpy()
    assert _err(mistakes.softmax_variant(x, axis), expected) < 1e-12


def test_layer_norm_variant_none_matches_torch():
    x, w, b = _x((3, 4, 10), 41), _x(10, 42, 0.5), _x(10, 43, 0.5)
    for scale in (1.0, 1e-3):
        expected = F.layer_norm(torch.as_tensor(scale * x), (10,), torch.as_tensor(w), torch.as_tensor(b), 1e-5)
        assert _err(mistakes.layer_norm_variant(scale * x, w, b, 1e-5), expected.numpy()) < 1e-10


def test_gelu_variant_none_matches_torch():
    x = _x((5, 7), 44, scale=4.0)
    expected = F.gelu(torch.as_tensor(x), approximate="tanh").numpy()
    assert _err(mistakes.gelu_variant(x), expected) < 1e-12


# ------------------------------------------------------------------------- every mistake is visible

# A mask mistake only shows with causal=True, so it is not drawn with causal=False. Without the transpose
# the (T, T) mask does not fit the (B, T, h, h) scores: that student's code fails (tested below).
@pytest.mark.parametrize("mistake, causal", [
    (m, c) for m in sorted(set(mistakes.MHA_MISTAKES) - {"unstable_softmax", "float32"}) for c in (False, True)
    if (c or m not in mistakes.MHA_CAUSAL_ONLY) and not (c and m == "heads_no_transpose")])
def test_mha_mistake_changes_the_answer(mistake, causal):
    _, x, weights, h = _setup(DIFF_SHAPE, seed=50)
    correct = mistakes.mha_variant(x, *weights, h, causal)
    wrong = mistakes.mha_variant(x, *weights, h, causal, mistake=mistake)
    assert wrong.dtype == np.float64 and wrong.shape == correct.shape
    assert _err(wrong, correct) > 1e-4


@pytest.mark.parametrize("mistake", sorted(mistakes.MHA_CAUSAL_ONLY))
def test_mask_mistakes_are_no_ops_without_causal(mistake):
    _, x, weights, h = _setup(DIFF_SHAPE, seed=51)
    correct = mistakes.mha_variant(x, *weights, h, False)
    assert _err(mistakes.mha_variant(x, *weights, h, False, mistake=mistake), correct) < 1e-12


def test_mha_unstable_softmax_overflows_only_on_large_inputs():
    _, x, weights, h = _setup(DIFF_SHAPE, seed=52)
    x = x / 2.0  # unit scale
    assert _err(mistakes.mha_variant(x, *weights, h, True, "unstable_softmax"),
                mistakes.mha_variant(x, *weights, h, True)) < 1e-12
    big = 1000.0 * x
    with np.errstate(all="ignore"):
        assert not np.all(np.isfinite(mistakes.mha_variant(big, *weights, h, True, "unstable_softmax")))
    assert np.all(np.isfinite(mistakes.mha_variant(big, *weights, h, True)))


@pytest.mark.parametrize("causal", [False, True], ids=["full", "causal"])
def test_mha_float32_loses_precision_but_not_much(causal):
    attn, x, weights, h = _setup(DIFF_SHAPE, seed=53)
    wrong = mistakes.mha_variant(x, *weights, h, causal, "float32")
    assert wrong.dtype == np.float64
    assert 1e-9 < _err(wrong, mistakes.mha_variant(x, *weights, h, causal)) < 1e-4
    # and it is what torch's own float32 module computes, to float32 precision
    attn32 = nn.MultiheadAttention(24, h, batch_first=True, dtype=torch.float32)
    attn32.load_state_dict({k: v.float() for k, v in attn.state_dict().items()})
    T = DIFF_SHAPE[1]
    mask = torch.triu(torch.ones(T, T, dtype=torch.bool), 1) if causal else None
    with torch.no_grad():
        xt = torch.as_tensor(x, dtype=torch.float32)
        expected = attn32(xt, xt, xt, attn_mask=mask, need_weights=False)[0].double().numpy()
    assert _err(wrong, expected) < 1e-5


def test_mask_blocks_diagonal_gives_nan_on_the_first_token_only():
    _, x, weights, h = _setup(DIFF_SHAPE, seed=54)
    with np.errstate(all="ignore"):
        wrong = mistakes.mha_variant(x, *weights, h, True, "mask_blocks_diagonal")
    assert np.all(np.isnan(wrong[:, 0])) and np.all(np.isfinite(wrong[:, 1:]))
    assert _err(wrong[:, 1:], mistakes.mha_variant(x, *weights, h, True)[:, 1:]) > 1e-4


@pytest.mark.parametrize("mistake, causal", [
    (m, c) for m in sorted(mistakes.BLOCK_MISTAKES) for c in (False, True)
    if c or m not in mistakes.BLOCK_CAUSAL_ONLY])
def test_block_mistake_changes_the_answer(mistake, causal):
    B, T, d, h = DIFF_SHAPE
    params = reference.block_params(reference.random_block(d, h, _gen(60)))
    x = _x((B, T, d), 61)
    correct = mistakes.block_variant(x, params, h, causal)
    wrong = mistakes.block_variant(x, params, h, causal, mistake=mistake)
    assert wrong.dtype == np.float64 and wrong.shape == correct.shape
    # eps slips are small (1e-6 vs 1e-5 on rows of variance ~3) but above the checks' 1e-6
    assert _err(wrong, correct) > (2e-6 if mistake in ("eps_1e-6", "ln_eps_outside_sqrt") else 1e-4)


@pytest.mark.parametrize("mistake", sorted(mistakes.SOFTMAX_MISTAKES))
def test_softmax_mistake_changes_the_answer(mistake):
    x = _x((4, 5, 6), 70, scale=3.0)
    axis = 1 if mistake == "axis_ignored" else -1  # ignoring the axis is harmless when it is -1
    correct = mistakes.softmax_variant(x, axis)
    wrong = mistakes.softmax_variant(1000.0 * x if mistake == "unstable" else x, axis, mistake)
    if mistake == "unstable":
        assert not np.all(np.isfinite(wrong))
        assert _err(mistakes.softmax_variant(x, -1, mistake), correct) < 1e-12  # fine at small scale
        assert np.all(np.isfinite(mistakes.softmax_variant(1000.0 * x, -1)))
    else:
        assert _err(wrong, correct) > 1e-4


@pytest.mark.parametrize("mistake", sorted(mistakes.LAYER_NORM_MISTAKES))
def test_layer_norm_mistake_changes_the_answer(mistake):
    x = 0.02 * _x((3, 4, 16), 71)  # small variance, so eps placement shows
    w, b = 1.0 + _x(16, 72, 0.3), _x(16, 73, 0.5)
    correct = mistakes.layer_norm_variant(x, w, b, 1e-5)
    assert _err(mistakes.layer_norm_variant(x, w, b, 1e-5, mistake), correct) > 1e-4


@pytest.mark.parametrize("mistake", sorted(mistakes.GELU_MISTAKES))
def test_gelu_mistake_changes_the_answer(mistake):
    x = _x((5, 7), 74, scale=2.0)
    assert _err(mistakes.gelu_variant(x, mistake), mistakes.gelu_variant(x)) > 1e-4


# ------------------------------------------------ mistakes that stock torch modules can build

def _mha_with(attn: nn.MultiheadAttention, edit) -> nn.MultiheadAttention:
    """A float64 copy of ``attn`` with ``edit(copy)`` applied under no_grad."""
    other = nn.MultiheadAttention(attn.embed_dim, attn.num_heads, batch_first=True, dtype=torch.float64)
    other.load_state_dict(attn.state_dict())
    with torch.no_grad():
        edit(other)
    return other.eval()


def _scale_queries(factor: float):
    def edit(m):
        d = m.embed_dim
        m.in_proj_weight[:d] *= factor
        m.in_proj_bias[:d] *= factor
    return edit


def _identity_out(m):
    m.out_proj.weight.copy_(torch.eye(m.embed_dim, dtype=torch.float64))
    m.out_proj.bias.zero_()


@pytest.mark.parametrize("mistake", ["no_out_proj", "no_scale", "scale_sqrt_d_model", "scale_d_head",
                                     "mask_leaks_future", "mask_ignored"])
def test_mha_mistake_agrees_with_torch_built_equivalent(mistake):
    B, T, d, h = DIFF_SHAPE
    attn, x, weights, _ = _setup(DIFF_SHAPE, seed=80)
    hs = d // h
    edit = {"no_out_proj": _identity_out, "no_scale": _scale_queries(math.sqrt(hs)),
            "scale_sqrt_d_model": _scale_queries(math.sqrt(hs / d)),
            "scale_d_head": _scale_queries(1 / math.sqrt(hs))}.get(mistake, lambda m: None)
    diagonal = {"mask_leaks_future": 2}.get(mistake, 1)
    mask = None if mistake == "mask_ignored" else torch.triu(torch.ones(T, T, dtype=torch.bool), diagonal)
    expected = _torch_mha(_mha_with(attn, edit), x, mask, fastpath=False)
    assert _err(mistakes.mha_variant(x, *weights, h, True, mistake), expected) < 1e-10


def test_mha_mask_blocks_diagonal_agrees_with_torch_on_later_tokens():
    B, T, d, h = DIFF_SHAPE
    attn, x, weights, _ = _setup(DIFF_SHAPE, seed=81)
    expected = _torch_mha(attn, x, torch.triu(torch.ones(T, T, dtype=torch.bool), 0), fastpath=False)
    with np.errstate(all="ignore"):
        got = mistakes.mha_variant(x, *weights, h, True, "mask_blocks_diagonal")
    assert _err(got[:, 1:], expected[:, 1:]) < 1e-10


def test_mha_heads_wrong_order_agrees_with_a_per_head_loop():
    """Independent NumPy loop: head i of the wrong split is the i-th block of T*d_head numbers of q (B, T*d)."""
    B, T, d, h = DIFF_SHAPE
    _, x, (w_qkv, b_qkv, w_out, b_out), _ = _setup(DIFF_SHAPE, seed=82)
    hs = d // h
    qkv = x @ w_qkv.T + b_qkv
    y = np.empty((B, T * d))
    for b in range(B):
        flat = [qkv[b, :, j * d:(j + 1) * d].ravel() for j in range(3)]  # q, k, v flattened token-major
        for i in range(h):
            q, k, v = (f[i * T * hs:(i + 1) * T * hs].reshape(T, hs) for f in flat)
            s = q @ k.T / math.sqrt(hs)
            p = np.exp(s - s.max(axis=1, keepdims=True))
            y[b, i * T * hs:(i + 1) * T * hs] = ((p / p.sum(axis=1, keepdims=True)) @ v).ravel()
    expected = y.reshape(B, T, d) @ w_out.T + b_out
    assert _err(mistakes.mha_variant(x, w_qkv, b_qkv, w_out, b_out, h, False, "heads_wrong_order"), expected) < 1e-10


def test_small_function_mistakes_agree_with_torch():
    x = _x((3, 4, 16), 100, scale=0.05)
    w, b = 1.0 + _x(16, 101, 0.3), _x(16, 102, 0.5)
    xt = torch.as_tensor(x)
    assert _err(mistakes.layer_norm_variant(x, w, b, 1e-5, "no_affine"),
                F.layer_norm(xt, (16,), eps=1e-5).numpy()) < 1e-10
    unbiased = (xt - xt.mean(-1, keepdim=True)) / torch.sqrt(xt.var(-1, keepdim=True, unbiased=True) + 1e-5)
    assert _err(mistakes.layer_norm_variant(x, w, b, 1e-5, "unbiased_variance"),
                (unbiased * torch.as_tensor(w) + torch.as_tensor(b)).numpy()) < 1e-10
    g = _x((5, 7), 103, scale=3.0)
    gt = torch.as_tensor(g)
    assert _err(mistakes.gelu_variant(g, "erf"), F.gelu(gt).numpy()) < 1e-12
    assert _err(mistakes.gelu_variant(g, "relu"), F.relu(gt).numpy()) < 1e-15
    assert _err(mistakes.softmax_variant(_x((4, 6), 104), -1, "wrong_axis"),
                torch.softmax(torch.as_tensor(_x((4, 6), 104)), dim=0).numpy()) < 1e-12
    assert _err(mistakes.softmax_variant(_x((4, 6), 104), 0, "axis_ignored"),
                torch.softmax(torch.as_tensor(_x((4, 6), 104)), dim=-1).numpy()) < 1e-12


# ------------------------------------------------------------------- the reference solution

@pytest.mark.parametrize("scale", [1.0, 1000.0], ids=["unit", "x1000"])
@pytest.mark.parametrize("causal", [False, True], ids=["full", "causal"])
@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: "B{}T{}d{}h{}".format(*s))
def test_solution_matches_torch(shape, causal, scale):
    B, T, d, h = shape
    attn, x, weights, _ = _setup(shape, seed=110)
    x = scale * x
    mask = torch.triu(torch.ones(T, T, dtype=torch.bool), 1) if causal else None
    got = solution.multi_head_attention(x, *weights, h, causal=causal)
    assert got.dtype == np.float64 and got.shape == (B, T, d)
    assert _err(got, _torch_mha(attn, x, mask, fastpath=False)) < 1e-6

    block = reference.random_block(d, h, _gen(111))
    got = solution.transformer_block(x, reference.block_params(block), h, causal=causal)
    assert got.dtype == np.float64 and got.shape == (B, T, d)
    assert _err(got, reference.run_block(block, x, causal)) < 1e-6


@pytest.mark.parametrize("scale", [1.0, 1000.0], ids=["unit", "x1000"])
def test_solution_small_functions_match_torch(scale):
    x = scale * _x((3, 5, 12), 120)
    xt = torch.as_tensor(x)
    for axis in (-1, 0, 1):
        got = solution.softmax(x, axis=axis)
        assert got.dtype == np.float64 and _err(got, torch.softmax(xt, dim=axis).numpy()) < 1e-6
    w, b = 1.0 + _x(12, 121, 0.3), _x(12, 122, 0.5)
    expected = F.layer_norm(xt, (12,), torch.as_tensor(w), torch.as_tensor(b), 1e-5).numpy()
    assert _err(solution.layer_norm(x, w, b), expected) < 1e-6
    expected = F.layer_norm(xt, (12,), torch.as_tensor(w), torch.as_tensor(b), 1e-3).numpy()
    assert _err(solution.layer_norm(x, w, b, eps=1e-3), expected) < 1e-6
    g = x / scale * 3.0  # GELU checked on a sensible range, and for finiteness on the large one
    assert _err(solution.gelu(g), F.gelu(torch.as_tensor(g), approximate="tanh").numpy()) < 1e-6
    with np.errstate(over="ignore"):
        big = solution.gelu(x)
    assert np.all(np.isfinite(big))
    assert _err(big, F.gelu(xt, approximate="tanh").numpy()) < 1e-6


def test_solution_imports_numpy_only():
    tree = ast.parse((ROOT / "solutions" / "exercise3" / "attention.py").read_bytes())
    imported = {alias.name.split(".")[0] for node in ast.walk(tree) if isinstance(node, ast.Import)
                for alias in node.names}
    imported |= {node.module.split(".")[0] for node in ast.walk(tree)
                 if isinstance(node, ast.ImportFrom) and node.module}
    assert imported == {"numpy"}


# ------------------------------------------------------------------------------- the skeleton

FUNCTIONS = ["softmax", "layer_norm", "gelu", "multi_head_attention", "transformer_block"]


@pytest.mark.parametrize("name", FUNCTIONS)
def test_skeleton_has_the_solutions_signatures_and_no_bodies(name):
    sk, sol = getattr(skeleton, name), getattr(solution, name)
    assert inspect.signature(sk) == inspect.signature(sol)
    assert sk.__doc__ and sol.__doc__
    n = inspect.signature(sk).parameters
    with pytest.raises(NotImplementedError):
        sk(*[np.zeros((1, 2, 4)) if p.default is inspect.Parameter.empty else p.default for p in n.values()])


def test_skeleton_and_solution_define_exactly_the_contract():
    for module in (skeleton, solution):
        public = {k for k, v in vars(module).items() if inspect.isfunction(v) and not k.startswith("_")}
        assert public == set(FUNCTIONS), module.__name__
