"""Exercise 3's attention variants for issue 10's mistakes, and combinations, against PyTorch.

Each variant of ``exercises/exercise3/tests/hidden/mistakes.py`` is compared with a stock
``nn.MultiheadAttention`` whose weights or mask were edited to make the same mistake (biases zeroed, weights
transposed, output columns permuted, a float mask, a mask over B * T tokens), or, where no module can express
it (attention across heads), with a plain NumPy loop written here. Pairs of mistakes are the two edits at once.
"""
from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from test_exercise3_mistakes import _err, mistakes, reference  # the same modules, loaded once
from torch import nn

B, T, D, H = 2, 6, 24, 4  # T != H, H > 1, T > 2
HS = D // H


def _setup(seed: int):
    attn = reference.random_attention(D, H, torch.Generator().manual_seed(seed))
    x = 0.3 + 2.0 * np.random.default_rng(seed + 1).standard_normal((B, T, D))
    return attn, x, reference.attention_weights(attn)


def _edited(attn: nn.MultiheadAttention, *edits) -> nn.MultiheadAttention:
    other = nn.MultiheadAttention(D, H, batch_first=True, dtype=torch.float64)
    other.load_state_dict(attn.state_dict())
    with torch.no_grad():
        for edit in edits:
            edit(other)
    return other.eval()


def _run(attn, x, mask=None) -> np.ndarray:
    xt = torch.as_tensor(x)
    with torch.enable_grad():  # the plain path (no fused fast path), which keeps NaN rows NaN
        return attn(xt, xt, xt, attn_mask=mask, need_weights=False)[0].detach().numpy()


def _causal(n: int, diagonal: int = 1) -> torch.Tensor:
    return torch.triu(torch.ones(n, n, dtype=torch.bool), diagonal)


def _no_qkv_bias(m):
    m.in_proj_bias.zero_()


def _no_out_bias(m):
    m.out_proj.bias.zero_()


def _out_transposed(m):
    m.out_proj.weight.copy_(m.out_proj.weight.T.clone())


def _qkv_transposed(m):
    for i in range(3):
        block = m.in_proj_weight[i * D:(i + 1) * D]
        block.copy_(block.T.clone())


def _out_heads_reversed(m):
    """y_reversed @ W.T == y @ W'.T where W' holds W's column blocks (one per head) in reverse order."""
    blocks = m.out_proj.weight.clone().split(HS, dim=1)
    m.out_proj.weight.copy_(torch.cat(blocks[::-1], dim=1))


def _unscaled(m):
    m.in_proj_weight[:D] *= math.sqrt(HS)
    m.in_proj_bias[:D] *= math.sqrt(HS)


EDITS = {
    "no_qkv_bias": [_no_qkv_bias], "no_out_bias": [_no_out_bias], "no_biases": [_no_qkv_bias, _no_out_bias],
    "out_not_transposed": [_out_transposed], "qkv_not_transposed": [_qkv_transposed],
    "heads_reverse_order": [_out_heads_reversed], "no_scale": [_unscaled],
}


@pytest.mark.parametrize("causal", [False, True], ids=["full", "causal"])
@pytest.mark.parametrize("mistake", sorted(set(EDITS) - {"no_scale"}))
def test_weight_mistakes_agree_with_an_edited_module(mistake, causal):
    attn, x, weights = _setup(10)
    expected = _run(_edited(attn, *EDITS[mistake]), x, _causal(T) if causal else None)
    got = mistakes.mha_variant(x, *weights, H, causal, mistake)
    assert _err(got, expected) < 1e-10
    assert _err(got, _run(attn, x, _causal(T) if causal else None)) > 1e-3


@pytest.mark.parametrize("causal", [False, True], ids=["full", "causal"])
def test_batch_mixed_is_attention_over_the_flattened_batch(causal):
    attn, x, weights = _setup(11)
    flat = x.reshape(1, B * T, D)
    expected = _run(attn, flat, _causal(B * T) if causal else None).reshape(B, T, D)
    got = mistakes.mha_variant(x, *weights, H, causal, "batch_mixed")
    assert _err(got, expected) < 1e-10
    # the first sequence sees no other one under a causal mask: unchanged there
    right = _run(attn, x, _causal(T) if causal else None)
    assert (_err(got[0], right[0]) < 1e-10) == causal
    assert _err(got[1], right[1]) > 1e-3


def test_inverted_mask_blocks_the_past_and_the_token_itself():
    attn, x, weights = _setup(12)
    with np.errstate(all="ignore"):
        got = mistakes.mha_variant(x, *weights, H, True, "mask_inverted")
    expected = _run(attn, x, torch.tril(torch.ones(T, T, dtype=torch.bool)))  # True = blocked
    assert np.all(np.isnan(got[:, -1]))  # the last token sees nothing: NaN with -inf masking, as in NumPy
    assert _err(got[:, :-1], expected[:, :-1]) < 1e-10  # (torch returns b_out for a fully masked row)


@pytest.mark.parametrize("mistake, mask", [("mask_added", _causal(T).double()),
                                           ("mask_added_keep", torch.tril(torch.ones(T, T, dtype=torch.float64)))])
def test_a_float_mask_added_to_the_scores(mistake, mask):
    """PyTorch adds a float attn_mask to the scores (its docs): a 0/1 mask then blocks nothing."""
    attn, x, weights = _setup(13)
    got = mistakes.mha_variant(x, *weights, H, True, mistake)
    assert _err(got, _run(attn, x, mask)) < 1e-10
    assert _err(got, mistakes.mha_variant(x, *weights, H, True, "mask_ignored")) > 1e-3


def test_heads_without_transpose_attend_across_heads_within_each_token():
    _, x, (w_qkv, b_qkv, w_out, b_out) = _setup(14)
    qkv = x @ w_qkv.T + b_qkv
    y = np.empty((B, T, D))
    for b in range(B):
        for t in range(T):
            q, k, v = (qkv[b, t, j * D:(j + 1) * D].reshape(H, HS) for j in range(3))  # (H, HS): one row per head
            s = q @ k.T / math.sqrt(HS)  # (H, H)
            p = np.exp(s - s.max(axis=1, keepdims=True))
            y[b, t] = ((p / p.sum(axis=1, keepdims=True)) @ v).ravel()
    got = mistakes.mha_variant(x, w_qkv, b_qkv, w_out, b_out, H, False, "heads_no_transpose")
    assert _err(got, y @ w_out.T + b_out) < 1e-10
    with pytest.raises(RuntimeError):  # a (T, T) mask on (B, T, H, H) scores: NumPy fails the same way
        mistakes.mha_variant(x, w_qkv, b_qkv, w_out, b_out, H, True, "heads_no_transpose")


@pytest.mark.parametrize("pair", [("no_qkv_bias", "no_scale"), ("heads_reverse_order", "out_not_transposed"),
                                  ("qkv_not_transposed", "out_not_transposed"), ("no_out_bias", "no_scale")])
def test_a_pair_is_both_edits_at_once(pair):
    attn, x, weights = _setup(15)
    edits = [e for key in pair for e in EDITS[key]]
    if pair == ("heads_reverse_order", "out_not_transposed"):
        edits = [_out_transposed, _out_heads_reversed]  # the reversed heads meet the untransposed w_out
    expected = _run(_edited(attn, *edits), x, _causal(T))
    got = mistakes.mha_variant(x, *weights, H, True, pair)
    assert _err(got, expected) < 1e-10
    for one in pair:
        assert _err(mistakes.mha_variant(x, *weights, H, True, one), expected) > 1e-3


def test_batch_mixed_with_an_off_by_one_mask():
    attn, x, weights = _setup(16)
    expected = _run(attn, x.reshape(1, B * T, D), _causal(B * T, 2)).reshape(B, T, D)
    assert _err(mistakes.mha_variant(x, *weights, H, True, ("batch_mixed", "mask_leaks_future")), expected) < 1e-10


def test_pairs_take_one_way_of_each_step_and_no_precision_mistake():
    keys = list(mistakes.MHA_MISTAKES)
    pairs = mistakes.pairs(keys, mistakes.MHA_EXCLUSIVE, mistakes.MHA_PRECISION)
    flat = {frozenset(p) for p in pairs}
    for wanted in (("no_qkv_bias", "no_scale"), ("qkv_not_transposed", "out_not_transposed"),
                   ("batch_mixed", "mask_leaks_future"), ("heads_reverse_order", "out_not_transposed")):
        assert frozenset(wanted) in flat
    for same_step in (("heads_wrong_order", "heads_wrong_join"), ("no_scale", "scale_sqrt_d_model"),
                      ("mask_ignored", "mask_added"), ("no_qkv_bias", "no_biases"), ("no_out_proj", "no_out_bias")):
        assert frozenset(same_step) not in flat
    assert not any("float32" in p for p in pairs)
    assert len(set(pairs)) == len(pairs) and all(a != b for a, b in pairs)
    block = mistakes.pairs(list(mistakes.BLOCK_MISTAKES), mistakes.BLOCK_EXCLUSIVE)
    block = {frozenset(p) for p in block}
    assert {frozenset(("post_norm", "erf_gelu")), frozenset(("eps_1e-6", "mlp_weights_swapped"))} <= block
    for same_step in (("eps_1e-6", "ln_eps_outside_sqrt"), ("no_layer_norm", "post_norm"),
                      ("no_attn_residual", "no_mlp_residual"), ("relu", "erf_gelu")):
        assert frozenset(same_step) not in block
