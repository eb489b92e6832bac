"""Known wrong answers for exercise 3, computed on the judge side for diagnosis (trusted code).

When a submission fails a parity check, the judge calls the ``*_variant`` functions below with the same
inputs and names the mistake whose output the submission matches. Each ``*_MISTAKES`` dict maps a
mistake key to the one sentence the student sees: what went wrong, in the lesson's words, and the fix.

Every variant is written from torch primitives in float64 (NumPy in, NumPy float64 out); ``mistake=None``
gives the correct computation, which the grader's own tests check against ``torch.nn.MultiheadAttention``,
a reference torch block, ``torch.softmax``, ``F.layer_norm`` and ``F.gelu`` -- never against itself.
Variants reproduce what a NumPy student would get, including NaN/inf: a mask that blocks a whole row
gives NaN in that row, an unstable softmax overflows to inf/NaN on large inputs.

The mask mistakes (``MHA_CAUSAL_ONLY``) and the block's ``causal_ignored`` (``BLOCK_CAUSAL_ONLY``) only
change the output when ``causal=True``; with ``causal=False`` they return the correct output.
Sources: the lesson; Vaswani et al. 2017, "Attention is all you need"; PyTorch docs.
"""
from __future__ import annotations

import math

import numpy as np
import torch

MHA_MISTAKES: dict[str, str] = {
    "heads_wrong_order": (
        "heads split in the wrong order: reshaping straight to (B, n_heads, T, d_head) mixes tokens with "
        "heads; reshape to (B, T, n_heads, d_head) and then swap the T and n_heads axes (and undo it the "
        "same way when joining the heads)"
    ),
    "heads_wrong_join": (
        "heads joined in the wrong order: the output (B, n_heads, T, d_head) was reshaped straight to "
        "(B, T, d_model); swap back to (B, T, n_heads, d_head) first, then reshape"
    ),
    "no_out_proj": (
        "the output projection W_O was forgotten: after joining the heads, apply y @ w_out.T + b_out"
    ),
    "no_scale": (
        "the scores were not scaled: divide Q K^T by sqrt(d_head) before the softmax"
    ),
    "scale_sqrt_d_model": (
        "the scores were divided by sqrt(d_model) instead of sqrt(d_head): each head's dot products are "
        "over d_head = d_model / n_heads features, so scale by 1/sqrt(d_head)"
    ),
    "softmax_wrong_axis": (
        "the softmax ran over the queries (axis -2) instead of the keys: each query's weights over the "
        "keys must sum to 1, so take the softmax over the last axis"
    ),
    "mask_leaks_future": (
        "the causal mask is off by one and lets each token see the next one: block the positions with "
        "key index > query index (np.triu(..., k=1)), not only those > query index + 1"
    ),
    "mask_blocks_diagonal": (
        "the causal mask also blocks the diagonal, so a token cannot attend to itself (and the first "
        "token sees nothing): block only key index > query index (np.triu(..., k=1))"
    ),
    "mask_after_softmax": (
        "the mask was applied after the softmax, so the remaining weights no longer sum to 1: set the "
        "blocked scores to -inf before the softmax"
    ),
    "unstable_softmax": (
        "the softmax is not numerically stable: exp overflows on large scores; subtract the maximum "
        "along the axis before taking exp"
    ),
    "float32": (
        "the computation ran in float32 and lost precision: keep every array float64 (watch for "
        "astype(np.float32) or dtype=np.float32)"
    ),
    "mask_ignored": (
        "causal=True was ignored: no mask was applied, so tokens see the future; set the scores above "
        "the diagonal to -inf before the softmax when causal is True"
    ),
}

BLOCK_MISTAKES: dict[str, str] = {
    "no_residual": (
        "both residual connections are missing: the block must add its input back, "
        "x = x + attn(ln1(x)) and then x = x + mlp(ln2(x))"
    ),
    "no_attn_residual": (
        "the residual connection around the attention is missing: use x = x + attn(ln1(x)), "
        "not x = attn(ln1(x))"
    ),
    "no_mlp_residual": (
        "the residual connection around the MLP is missing: use x = x + mlp(ln2(x)), not x = mlp(ln2(x))"
    ),
    "no_layer_norm": (
        "the layer norms were left out: normalise before each sublayer, attn(ln1(x)) and mlp(ln2(x))"
    ),
    "post_norm": (
        "this is a post-norm block (norm after the residual add); the exercise asks for pre-norm: "
        "x = x + attn(ln1(x)), then x = x + mlp(ln2(x))"
    ),
    "erf_gelu": (
        "the MLP uses the exact (erf) GELU; the block uses GPT-2's tanh approximation "
        "0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))"
    ),
    "relu": (
        "the MLP uses ReLU; the block uses GELU with the tanh approximation, as GPT-2"
    ),
    "causal_ignored": (
        "the block was called with causal=True but its attention was not masked: pass causal on to "
        "multi_head_attention"
    ),
}

SOFTMAX_MISTAKES: dict[str, str] = {
    "wrong_axis": (
        "the softmax was taken over axis 0 instead of the axis given: use the axis argument for the max, "
        "the exp sum, and keepdims=True"
    ),
    "axis_ignored": (
        "the axis argument was ignored: the softmax always ran over the last axis; use axis for the max "
        "and the exp sum (with keepdims=True)"
    ),
    "unstable": (
        "the softmax is not numerically stable: exp overflows for large inputs; subtract the maximum "
        "along the axis before taking exp"
    ),
}

LAYER_NORM_MISTAKES: dict[str, str] = {
    "unbiased_variance": (
        "the variance is the unbiased one (divided by d - 1); layer norm uses the biased variance, "
        "divided by d (np.var's default, ddof=0)"
    ),
    "no_affine": (
        "the learned scale and shift were ignored: multiply the normalised x by weight, then add bias"
    ),
    "eps_outside_sqrt": (
        "eps was added outside the square root: divide by sqrt(var + eps), not sqrt(var) + eps"
    ),
}

GELU_MISTAKES: dict[str, str] = {
    "erf": (
        "this is the exact (erf) GELU; the exercise asks for GPT-2's tanh approximation "
        "0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))"
    ),
    "relu": (
        "this is ReLU, not GELU: use 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))"
    ),
    "sigmoid_approx": (
        "this is the sigmoid approximation x * sigmoid(1.702 x); use the tanh approximation "
        "0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))"
    ),
}

MHA_CAUSAL_ONLY: frozenset[str] = frozenset(
    {"mask_leaks_future", "mask_blocks_diagonal", "mask_after_softmax", "mask_ignored"})
"""MHA mistakes that change the output only when ``causal=True``."""

BLOCK_CAUSAL_ONLY: frozenset[str] = frozenset({"causal_ignored"})
"""Block mistakes that change the output only when ``causal=True``."""


# ---------------------------------------------------------------------------------------------- helpers

def _tensor(a, dtype: torch.dtype = torch.float64) -> torch.Tensor:
    """A NumPy array (or nested list) as a fresh torch tensor of ``dtype``."""
    return torch.tensor(np.asarray(a, dtype=np.float64), dtype=dtype)


def _out(t: torch.Tensor) -> np.ndarray:
    """A torch result as a float64 NumPy array."""
    return t.detach().to(torch.float64).numpy().copy()


def _check(mistake: str | None, known: dict[str, str], what: str) -> None:
    """Raise ``ValueError`` naming the known keys when ``mistake`` is not ``None`` or one of them."""
    if mistake is not None and mistake not in known:
        raise ValueError(f"unknown {what} mistake {mistake!r}; known: {', '.join(sorted(known))}")


def _softmax(x: torch.Tensor, dim: int, stable: bool = True) -> torch.Tensor:
    """exp(x - max) / sum, written out; a row of only -inf gives NaN, as in NumPy."""
    if stable:
        x = x - x.amax(dim=dim, keepdim=True)
    e = torch.exp(x)
    return e / e.sum(dim=dim, keepdim=True)


def _layer_norm(x: torch.Tensor, weight, bias, eps: float, mistake: str | None = None) -> torch.Tensor:
    """Layer norm over the last axis, biased variance, unless ``mistake`` says otherwise."""
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
    return 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x**3)))


def _mha(x, w_qkv, b_qkv, w_out, b_out, n_heads: int, causal: bool, mistake: str | None) -> torch.Tensor:
    """Multi-head attention on tensors of one dtype, with at most one mistake."""
    B, T, C = x.shape
    hs = C // n_heads
    qkv = x @ w_qkv.T + b_qkv  # (B, T, 3C)
    q, k, v = qkv.split(C, dim=-1)  # each (B, T, C)
    if mistake == "heads_wrong_order":
        q, k, v = (t.reshape(B, n_heads, T, hs) for t in (q, k, v))  # (B, nh, T, hs) -- tokens mixed in
    else:
        q, k, v = (t.reshape(B, T, n_heads, hs).transpose(1, 2) for t in (q, k, v))  # (B, nh, T, hs)

    if mistake == "no_scale":
        scale = 1.0
    elif mistake == "scale_sqrt_d_model":
        scale = 1.0 / math.sqrt(C)
    else:
        scale = 1.0 / math.sqrt(hs)
    att = (q @ k.transpose(-2, -1)) * scale  # (B, nh, T, T)

    blocked = None
    if causal and mistake != "mask_ignored":
        diagonal = {"mask_leaks_future": 2, "mask_blocks_diagonal": 0}.get(mistake, 1)
        blocked = torch.triu(torch.ones(T, T, dtype=torch.bool), diagonal=diagonal)  # (T, T)
        if mistake != "mask_after_softmax":
            att = att.masked_fill(blocked, -math.inf)
    att = _softmax(att, dim=-2 if mistake == "softmax_wrong_axis" else -1,
                   stable=mistake != "unstable_softmax")
    if blocked is not None and mistake == "mask_after_softmax":
        att = att.masked_fill(blocked, 0.0)  # not renormalised
    y = att @ v  # (B, nh, T, hs)

    if mistake in ("heads_wrong_order", "heads_wrong_join"):
        y = y.reshape(B, T, C)  # plain reshape of (B, nh, T, hs): heads and tokens mixed
    else:
        y = y.transpose(1, 2).reshape(B, T, C)  # (B, T, nh, hs) -> (B, T, C)
    if mistake == "no_out_proj":
        return y
    return y @ w_out.T + b_out  # (B, T, C)


# ------------------------------------------------------------------------------------------- variants

def mha_variant(x, w_qkv, b_qkv, w_out, b_out, n_heads, causal, mistake=None) -> np.ndarray:
    """What ``multi_head_attention`` returns with the mistake ``mistake`` (a key of ``MHA_MISTAKES``).

    Args: as the student's function: x (B, T, d), w_qkv (3d, d) rows [q; k; v], b_qkv (3d,), w_out (d, d),
    b_out (d,), all float64 NumPy; ``mistake=None`` is the correct computation.
    Returns: float64 (B, T, d) (may hold inf/NaN where the mistake produces them).
    Raises: ValueError for an unknown key.
    """
    _check(mistake, MHA_MISTAKES, "multi-head attention")
    dtype = torch.float32 if mistake == "float32" else torch.float64
    args = [_tensor(a, dtype) for a in (x, w_qkv, b_qkv, w_out, b_out)]
    with torch.no_grad():
        return _out(_mha(*args, n_heads=int(n_heads), causal=bool(causal), mistake=mistake))


def block_variant(x, params, n_heads, causal, mistake=None) -> np.ndarray:
    """What ``transformer_block`` returns with the mistake ``mistake`` (a key of ``BLOCK_MISTAKES``).

    Args: x (B, T, d) float64; ``params`` maps the reference block's state_dict names (``ln1.weight``,
    ``attn.in_proj_weight``, ``mlp.fc.weight``, ...) to float64 arrays; ``mistake=None`` is correct.
    Returns: float64 (B, T, d).
    Raises: ValueError for an unknown key.
    """
    _check(mistake, BLOCK_MISTAKES, "transformer block")
    p = {name: _tensor(a) for name, a in params.items()}
    x = _tensor(x)
    eps = 1e-5

    def ln1(t):
        return t if mistake == "no_layer_norm" else _layer_norm(t, p["ln1.weight"], p["ln1.bias"], eps)

    def ln2(t):
        return t if mistake == "no_layer_norm" else _layer_norm(t, p["ln2.weight"], p["ln2.bias"], eps)

    def attn(t):
        return _mha(t, p["attn.in_proj_weight"], p["attn.in_proj_bias"], p["attn.out_proj.weight"],
                    p["attn.out_proj.bias"], int(n_heads), bool(causal) and mistake != "causal_ignored", None)

    def mlp(t):
        activation = {"erf_gelu": "erf", "relu": "relu"}.get(mistake)
        h = _gelu(t @ p["mlp.fc.weight"].T + p["mlp.fc.bias"], activation)  # (B, T, 4C)
        return h @ p["mlp.proj.weight"].T + p["mlp.proj.bias"]  # (B, T, C)

    with torch.no_grad():
        if mistake == "post_norm":
            x = _layer_norm(x + attn(x), p["ln1.weight"], p["ln1.bias"], eps)
            x = _layer_norm(x + mlp(x), p["ln2.weight"], p["ln2.bias"], eps)
            return _out(x)
        a = attn(ln1(x))
        x = a if mistake in ("no_residual", "no_attn_residual") else x + a
        m = mlp(ln2(x))
        x = m if mistake in ("no_residual", "no_mlp_residual") else x + m
        return _out(x)


def softmax_variant(x, axis, mistake=None) -> np.ndarray:
    """What ``softmax(x, axis)`` returns with ``mistake`` (a key of ``SOFTMAX_MISTAKES``); float64, shape of x.

    ``wrong_axis`` normalises over axis 0 whatever ``axis`` is (so it only differs when ``axis`` is not 0);
    ``axis_ignored`` over the last axis whatever ``axis`` is (the usual slip: attention only needs -1);
    ``unstable`` skips the max subtraction and overflows to inf/NaN on large inputs.
    """
    _check(mistake, SOFTMAX_MISTAKES, "softmax")
    t = _tensor(x)
    dim = {"wrong_axis": 0, "axis_ignored": -1}.get(mistake, int(axis))
    with torch.no_grad():
        return _out(_softmax(t, dim=dim, stable=mistake != "unstable"))


def layer_norm_variant(x, weight, bias, eps, mistake=None) -> np.ndarray:
    """What ``layer_norm(x, weight, bias, eps)`` returns with ``mistake`` (a key of ``LAYER_NORM_MISTAKES``).

    x (..., d), weight and bias (d,), float64; returns float64 of the shape of x. ``eps_outside_sqrt``
    is only clearly visible on rows with a small variance (std around 1e-2 or less).
    """
    _check(mistake, LAYER_NORM_MISTAKES, "layer norm")
    with torch.no_grad():
        return _out(_layer_norm(_tensor(x), _tensor(weight), _tensor(bias), float(eps), mistake))


def gelu_variant(x, mistake=None) -> np.ndarray:
    """What ``gelu(x)`` returns with ``mistake`` (a key of ``GELU_MISTAKES``); float64, shape of x."""
    _check(mistake, GELU_MISTAKES, "GELU")
    with torch.no_grad():
        return _out(_gelu(_tensor(x), mistake))
