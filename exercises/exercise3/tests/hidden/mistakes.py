"""Known wrong answers for exercise 3, computed on the judge side for diagnosis (trusted code).

When a submission fails a parity check, the judge calls the ``*_variant`` functions below with the same
inputs and names the mistake whose output the submission matches (``grader/compare.py`` states the rule).
Each ``*_MISTAKES`` dict maps a mistake key to the one sentence the student sees: what went wrong, in the
lesson's words, and the fix (the sentences live in ``mistakes.toml``, beside this file).

Every variant is written from torch primitives in float64 (NumPy in, NumPy float64 out); ``mistake=None``
gives the correct computation, which the grader's own tests check against ``torch.nn.MultiheadAttention``,
a reference torch block, ``torch.softmax``, ``F.layer_norm`` and ``F.gelu`` -- never against itself.
Variants reproduce what a NumPy student would get, including NaN/inf: a mask that blocks a whole row
gives NaN in that row, an unstable softmax overflows to inf/NaN on large inputs.

``mha_variant`` and ``block_variant`` also take a combination: a tuple of keys (``("no_qkv_bias",
"no_scale")``) applies every one of them. :func:`pairs` lists the two-key combinations worth trying: not
two keys of one group of :data:`MHA_EXCLUSIVE` / :data:`BLOCK_EXCLUSIVE` (two ways of doing the same step,
e.g. two different masks), never a precision mistake (float32).

The mask mistakes (``MHA_CAUSAL_ONLY``) and the block's ``causal_ignored`` (``BLOCK_CAUSAL_ONLY``) only
change the output when ``causal=True``; with ``causal=False`` they return the correct output.
Sources: the lesson; Vaswani et al. 2017, "Attention is all you need"; PyTorch docs (``nn.Linear`` is
``x @ W.T + b`` with ``W`` of shape (out, in); ``nn.LayerNorm``'s default eps is 1e-5).
"""
from __future__ import annotations

import itertools
import math
import tomllib
from pathlib import Path

import numpy as np
import torch

#: The sentences of ``mistakes.toml`` (next to this file): a table per function, key -> sentence.
SENTENCES: dict[str, dict[str, str]] = tomllib.loads(
    (Path(__file__).resolve().parent / "mistakes.toml").read_text(encoding="utf-8"))

MHA_MISTAKES: dict[str, str] = dict(SENTENCES["MHA"])
# The other 0/1 mask (1 = may attend) added to the scores: the same slip, the same sentence.
MHA_MISTAKES["mask_added_keep"] = MHA_MISTAKES["mask_added"]
BLOCK_MISTAKES: dict[str, str] = dict(SENTENCES["BLOCK"])
SOFTMAX_MISTAKES: dict[str, str] = dict(SENTENCES["SOFTMAX"])
LAYER_NORM_MISTAKES: dict[str, str] = dict(SENTENCES["LAYER_NORM"])
GELU_MISTAKES: dict[str, str] = dict(SENTENCES["GELU"])

MHA_CAUSAL_ONLY: frozenset[str] = frozenset(
    {"mask_leaks_future", "mask_blocks_diagonal", "mask_inverted", "mask_added", "mask_added_keep",
     "mask_after_softmax", "mask_ignored"})
"""MHA mistakes that change the output only when ``causal=True``."""

BLOCK_CAUSAL_ONLY: frozenset[str] = frozenset({"causal_ignored"})
"""Block mistakes that change the output only when ``causal=True``."""

#: MHA mistakes whose variant may be NaN where a NumPy student's is finite: a fully masked row is NaN with
#: -inf masking but uniform with -1e9 masking (``grader.compare.Mistake.nan_matches_any``).
MHA_FULLY_MASKED_ROW: frozenset[str] = frozenset({"mask_blocks_diagonal", "mask_inverted"})

#: Precision mistakes: named on float32 evidence (``grader.compare``), never combined with another.
MHA_PRECISION: frozenset[str] = frozenset({"float32"})

#: Groups of MHA mistakes that are different ways of doing one step: a combination takes at most one of each.
MHA_EXCLUSIVE: tuple[frozenset[str], ...] = (
    frozenset({"heads_wrong_order", "heads_wrong_join", "heads_no_transpose", "heads_reverse_order"}),
    frozenset({"no_scale", "scale_sqrt_d_model", "scale_d_head"}),
    frozenset(MHA_CAUSAL_ONLY),
    frozenset({"no_qkv_bias", "no_out_bias", "no_biases"}),
    frozenset({"no_out_proj", "out_not_transposed", "no_out_bias", "no_biases"}),
)

#: The same for the block: its residual wiring, its norms, its activation.
BLOCK_EXCLUSIVE: tuple[frozenset[str], ...] = (
    frozenset({"no_residual", "no_attn_residual", "no_mlp_residual", "residual_doubled", "residual_from_ln",
               "norm_after_sublayer", "post_norm"}),
    frozenset({"no_layer_norm", "eps_1e-6", "ln_eps_outside_sqrt", "ln_unbiased_variance", "ln_no_affine"}),
    frozenset({"no_layer_norm", "post_norm", "residual_from_ln", "norm_after_sublayer"}),
    frozenset({"erf_gelu", "relu", "sigmoid_gelu"}),
)


def pairs(keys, exclusive: tuple[frozenset[str], ...], precision: frozenset[str] = frozenset()):
    """The two-key combinations of ``keys`` worth trying (in ``keys``' order): not two of one group of
    ``exclusive``, and no key of ``precision``. Returns a list of ``(key_a, key_b)`` tuples."""
    keys = [k for k in keys if k not in precision]
    return [(a, b) for a, b in itertools.combinations(keys, 2)
            if not any(a in group and b in group for group in exclusive)]


# ---------------------------------------------------------------------------------------------- helpers

def _tensor(a, dtype: torch.dtype = torch.float64) -> torch.Tensor:
    """A NumPy array (or nested list) as a torch tensor of ``dtype`` (it may share the array's memory: the
    variants never write to their inputs)."""
    return torch.from_numpy(np.ascontiguousarray(a, dtype=np.float64)).to(dtype)


def _out(t: torch.Tensor) -> np.ndarray:
    """A torch result as a float64 NumPy array."""
    return t.detach().to(torch.float64).numpy().copy()


def _keys(mistake, known: dict[str, str], what: str) -> frozenset[str]:
    """``mistake`` (None, a key, or a tuple of keys) as a set of keys of ``known``.

    Raises:
        ValueError: naming the known keys when one is not among them.
    """
    keys = () if mistake is None else (mistake,) if isinstance(mistake, str) else tuple(mistake)
    for key in keys:
        if key not in known:
            raise ValueError(f"unknown {what} mistake {key!r}; known: {', '.join(sorted(known))}")
    return frozenset(keys)


def _softmax(x: torch.Tensor, dim: int, stable: bool = True) -> torch.Tensor:
    """exp(x - max) / sum (torch.softmax computes exactly that); unstable: without the max, written out.
    A row of only -inf gives NaN, as in NumPy."""
    if stable:
        return torch.softmax(x, dim=dim)
    e = torch.exp(x)
    return e / e.sum(dim=dim, keepdim=True)


def _layer_norm(x: torch.Tensor, weight, bias, eps: float, mistake: str | None = None) -> torch.Tensor:
    """Layer norm over the last axis, biased variance, unless ``mistake`` (a LAYER_NORM key) says otherwise."""
    if mistake is None:  # F.layer_norm: (x - mean) / sqrt(biased var + eps) * weight + bias, in one op
        return torch.nn.functional.layer_norm(x, x.shape[-1:], weight, bias, eps)
    mean = x.mean(dim=-1, keepdim=True)
    var = x.var(dim=-1, keepdim=True, correction=1 if mistake == "unbiased_variance" else 0)
    if mistake == "eps_outside_sqrt":
        xhat = (x - mean) / (torch.sqrt(var) + eps)
    else:
        xhat = (x - mean) / torch.sqrt(var + eps)
    if mistake == "no_affine":
        return xhat
    return xhat * weight + bias


def _gelu(x: torch.Tensor, mistake: str | None = None) -> torch.Tensor:
    """GELU with the tanh approximation, or the wrong activation ``mistake`` names."""
    if mistake == "erf":
        return 0.5 * x * (1.0 + torch.erf(x / math.sqrt(2.0)))
    if mistake == "relu":
        return torch.clamp(x, min=0.0)
    if mistake == "sigmoid_approx":
        return x * torch.sigmoid(1.702 * x)
    return torch.nn.functional.gelu(x, approximate="tanh")  # 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))


def _project(x, w, b, transposed: bool, with_bias: bool):
    """``x @ w.T + b`` (a linear layer), or ``x @ w`` and/or no bias as a mistake has it."""
    return torch.nn.functional.linear(x, w.T if not transposed else w, b if with_bias else None)


def _mha(x, w_qkv, b_qkv, w_out, b_out, n_heads: int, causal: bool, m: frozenset[str] = frozenset()):
    """Multi-head attention on tensors of one dtype, with the mistakes ``m`` (MHA keys) applied."""
    shape = B, T, C = x.shape
    if "batch_mixed" in m:
        x = x.reshape(1, B * T, C)  # one long sequence of B * T tokens
        B, T = 1, B * T
    hs = C // n_heads
    qkv_bias = not m & {"no_qkv_bias", "no_biases"}
    if "qkv_not_transposed" in m:
        q, k, v = (_project(x, w, b, False, qkv_bias) for w, b in zip(w_qkv.split(C), b_qkv.split(C)))
    else:
        q, k, v = _project(x, w_qkv, b_qkv, True, qkv_bias).split(C, dim=-1)  # each (B, T, C)
    if "heads_wrong_order" in m:
        q, k, v = (t.reshape(B, n_heads, T, hs) for t in (q, k, v))  # (B, nh, T, hs) -- tokens mixed in
    elif "heads_no_transpose" in m:
        q, k, v = (t.reshape(B, T, n_heads, hs) for t in (q, k, v))  # (B, T, nh, hs): heads attend to heads
    else:
        q, k, v = (t.reshape(B, T, n_heads, hs).transpose(1, 2) for t in (q, k, v))  # (B, nh, T, hs)

    scale = 1.0 if "no_scale" in m else 1.0 / hs if "scale_d_head" in m else \
        1.0 / math.sqrt(C if "scale_sqrt_d_model" in m else hs)
    att = (q @ k.transpose(-2, -1)) * scale  # (B, nh, T, T); (B, T, nh, nh) without the transpose

    blocked = None
    if causal and "mask_ignored" not in m:
        ones = torch.ones(T, T, dtype=torch.bool)
        if "mask_inverted" in m:
            blocked = torch.tril(ones)  # (T, T): the past and the token itself
        else:
            blocked = torch.triu(ones, diagonal=2 if "mask_leaks_future" in m else 0 if "mask_blocks_diagonal" in m
                                 else 1)  # (T, T)
        if m & {"mask_added", "mask_added_keep"}:
            att = att + (blocked if "mask_added" in m else ~blocked).to(att.dtype)  # NumPy broadcasting
            blocked = None
        elif "mask_after_softmax" not in m:
            att = torch.where(blocked, -math.inf, att)  # broadcasts (or fails) as np.where does
    att = _softmax(att, dim=-2 if "softmax_wrong_axis" in m else -1, stable="unstable_softmax" not in m)
    if blocked is not None and "mask_after_softmax" in m:
        att = att.masked_fill(blocked, 0.0)  # not renormalised
    y = att @ v  # (B, nh, T, hs)

    if m & {"heads_wrong_order", "heads_wrong_join", "heads_no_transpose"}:
        y = y.reshape(B, T, C)  # a plain reshape of what the split produced
    elif "heads_reverse_order" in m:
        y = y.flip(1).transpose(1, 2).reshape(B, T, C)  # head nh-1 first
    else:
        y = y.transpose(1, 2).reshape(B, T, C)  # (B, T, nh, hs) -> (B, T, C)
    if "no_out_proj" not in m:
        y = _project(y, w_out, b_out, "out_not_transposed" not in m, not m & {"no_out_bias", "no_biases"})
    return y.reshape(shape)  # (B, T, C), also after a flattened batch


# ------------------------------------------------------------------------------------------- variants

def mha_variant(x, w_qkv, b_qkv, w_out, b_out, n_heads, causal, mistake=None) -> np.ndarray:
    """What ``multi_head_attention`` returns with ``mistake``: a key of ``MHA_MISTAKES``, or a tuple of keys
    applied together.

    Args: as the student's function: x (B, T, d), w_qkv (3d, d) rows [q; k; v], b_qkv (3d,), w_out (d, d),
    b_out (d,), all float64 NumPy; ``mistake=None`` is the correct computation.
    Returns: float64 (B, T, d) (may hold inf/NaN where the mistake produces them).
    Raises: ValueError for an unknown key; RuntimeError where the mistake cannot run on these shapes (as the
    student's NumPy code would fail: a (T, T) mask on the (B, T, nh, nh) scores of an untransposed split).
    """
    m = _keys(mistake, MHA_MISTAKES, "multi-head attention")
    dtype = torch.float32 if "float32" in m else torch.float64
    args = [_tensor(a, dtype) for a in (x, w_qkv, b_qkv, w_out, b_out)]
    with torch.no_grad():
        return _out(_mha(*args, n_heads=int(n_heads), causal=bool(causal), m=m))


def block_variant(x, params, n_heads, causal, mistake=None) -> np.ndarray:
    """What ``transformer_block`` returns with ``mistake``: a key of ``BLOCK_MISTAKES``, or a tuple of keys
    applied together.

    Args: x (B, T, d) float64; ``params`` maps the reference block's state_dict names (``ln1.weight``,
    ``attn.in_proj_weight``, ``mlp.fc.weight``, ...) to float64 arrays; ``mistake=None`` is correct.
    Returns: float64 (B, T, d).
    Raises: ValueError for an unknown key.
    """
    m = _keys(mistake, BLOCK_MISTAKES, "transformer block")
    p = {name: _tensor(a) for name, a in params.items()}
    eps = 1e-6 if "eps_1e-6" in m else 1e-5
    ln_mistake = next((k[3:] for k in ("ln_eps_outside_sqrt", "ln_unbiased_variance", "ln_no_affine") if k in m),
                      None)
    activation = {"erf_gelu": "erf", "relu": "relu", "sigmoid_gelu": "sigmoid_approx"}
    activation = next((activation[k] for k in activation if k in m), None)

    def ln(i, t):
        if "no_layer_norm" in m:
            return t
        return _layer_norm(t, p[f"ln{i}.weight"], p[f"ln{i}.bias"], eps, ln_mistake)

    def attn(t):
        return _mha(t, p["attn.in_proj_weight"], p["attn.in_proj_bias"], p["attn.out_proj.weight"],
                    p["attn.out_proj.bias"], int(n_heads), bool(causal) and "causal_ignored" not in m)

    def mlp(t):
        w1, w2 = p["mlp.fc.weight"], p["mlp.proj.weight"]  # (4C, C), (C, 4C): t @ w1.T, then @ w2.T
        if "mlp_weights_swapped" in m:
            w1, w2 = w2.T, w1.T  # t @ proj.weight (C, 4C), then @ fc.weight (4C, C): the shapes fit
        h = _gelu(torch.nn.functional.linear(t, w1, p["mlp.fc.bias"]), activation)  # (B, T, 4C)
        return torch.nn.functional.linear(h, w2, p["mlp.proj.bias"])  # (B, T, C)

    def sublayer(i, f, t, residual: bool):
        """One half of the block: f (attention or MLP) with norm ln{i}, wired as the mistakes say."""
        if "post_norm" in m:
            return ln(i, t + f(t))
        if "norm_after_sublayer" in m:
            return t + ln(i, f(t))
        if "residual_from_ln" in m:
            t = ln(i, t)
            return t + f(t)
        out = f(ln(i, t))
        if "residual_doubled" in m:
            return out + out
        return t + out if residual else out

    with torch.no_grad():
        t = _tensor(x)
        t = sublayer(1, attn, t, not m & {"no_residual", "no_attn_residual"})
        t = sublayer(2, mlp, t, not m & {"no_residual", "no_mlp_residual"})
        return _out(t)


def softmax_variant(x, axis, mistake=None) -> np.ndarray:
    """What ``softmax(x, axis)`` returns with ``mistake`` (a key of ``SOFTMAX_MISTAKES``); float64, shape of x.

    ``wrong_axis`` normalises over axis 0 whatever ``axis`` is (so it only differs when ``axis`` is not 0);
    ``axis_ignored`` over the last axis whatever ``axis`` is (the usual slip: attention only needs -1);
    ``unstable`` skips the max subtraction and overflows to inf/NaN on large inputs.
    """
    _keys(mistake, SOFTMAX_MISTAKES, "softmax")
    t = _tensor(x)
    dim = {"wrong_axis": 0, "axis_ignored": -1}.get(mistake, int(axis))
    with torch.no_grad():
        return _out(_softmax(t, dim=dim, stable=mistake != "unstable"))


def layer_norm_variant(x, weight, bias, eps, mistake=None) -> np.ndarray:
    """What ``layer_norm(x, weight, bias, eps)`` returns with ``mistake`` (a key of ``LAYER_NORM_MISTAKES``).

    x (..., d), weight and bias (d,), float64; returns float64 of the shape of x. ``eps_outside_sqrt``
    is only clearly visible on rows with a small variance (std around 1e-2 or less).
    """
    _keys(mistake, LAYER_NORM_MISTAKES, "layer norm")
    with torch.no_grad():
        return _out(_layer_norm(_tensor(x), _tensor(weight), _tensor(bias), float(eps), mistake))


def gelu_variant(x, mistake=None) -> np.ndarray:
    """What ``gelu(x)`` returns with ``mistake`` (a key of ``GELU_MISTAKES``); float64, shape of x."""
    _keys(mistake, GELU_MISTAKES, "GELU")
    with torch.no_grad():
        return _out(_gelu(_tensor(x), mistake))
