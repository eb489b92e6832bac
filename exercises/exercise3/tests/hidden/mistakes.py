"""Known wrong answers for exercise 3, computed on the judge side for diagnosis (trusted code).

When a submission fails a parity check, the judge calls the ``*_variant`` functions below with the same
inputs and names the mistake whose output the submission matches (``grader/compare.py`` states the rule).
Each ``*_MISTAKES`` dict maps a mistake key to the one sentence the student sees: what went wrong, in the
lesson's words, and the fix.

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
    "heads_no_transpose": (
        "the heads were split without swapping the T and n_heads axes: on (B, T, n_heads, d_head) arrays "
        "q @ k^T compares the heads of one token with each other instead of the tokens; transpose to "
        "(B, n_heads, T, d_head) before the scores, and back before joining the heads"
    ),
    "heads_reverse_order": (
        "the heads were joined in reverse order: head i's output belongs in features "
        "[i * d_head:(i + 1) * d_head] of the joined output, the order in which q, k and v were split"
    ),
    "no_out_proj": (
        "the output projection W_O was forgotten: after joining the heads, apply y @ w_out.T + b_out"
    ),
    "out_not_transposed": (
        "the output projection computed y @ w_out instead of y @ w_out.T: weights follow PyTorch's layout "
        "(out, in), so a linear layer is y @ W.T + b"
    ),
    "qkv_not_transposed": (
        "the query, key and value projections computed x @ W instead of x @ W.T (W the d_model x d_model "
        "slices of w_qkv): weights follow PyTorch's layout (out, in), so q = x @ W_q.T + b_q"
    ),
    "no_qkv_bias": (
        "the input-projection bias b_qkv was left out: q, k, v come from x @ w_qkv.T + b_qkv"
    ),
    "no_out_bias": (
        "the output bias b_out was left out: the output projection is y @ w_out.T + b_out"
    ),
    "no_biases": (
        "both attention biases were left out: q, k, v come from x @ w_qkv.T + b_qkv, and the output "
        "projection is y @ w_out.T + b_out"
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
    "batch_mixed": (
        "the batch was flattened into one sequence of B * T tokens, so attention (and a causal mask built "
        "over B * T positions) mixes different batch elements: keep the batch axis and attend within each "
        "sequence, with a (T, T) mask"
    ),
    "mask_leaks_future": (
        "the causal mask is off by one and lets each token see the next one: block the positions with "
        "key index > query index (np.triu(..., k=1)), not only those > query index + 1"
    ),
    "mask_blocks_diagonal": (
        "the causal mask also blocks the diagonal, so a token cannot attend to itself (and the first "
        "token sees nothing): block only key index > query index (np.triu(..., k=1))"
    ),
    "mask_inverted": (
        "the causal mask has the opposite meaning: it blocks the past and the token itself (key index <= "
        "query index) and keeps the future; block key index > query index (np.triu(..., k=1)) instead"
    ),
    "mask_added": (
        "the 0/1 mask was added to the scores, which blocks nothing (it only shifts some scores by 1): set "
        "the blocked scores (key index > query index) to -inf before the softmax, e.g. "
        "np.where(mask, -np.inf, scores)"
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
# The other 0/1 mask (1 = may attend) added to the scores: the same slip, the same sentence.
MHA_MISTAKES["mask_added_keep"] = MHA_MISTAKES["mask_added"]

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
    "residual_doubled": (
        "each residual adds the sub-layer's output to itself (x = attn(ln1(x)); x = x + x gives "
        "2 attn(ln1(x))): keep the block's input, x = x + attn(ln1(x)), and the same around the MLP"
    ),
    "residual_from_ln": (
        "the residual was taken from the normalised x (x = ln1(x); x = x + attn(x)): pre-norm adds the "
        "sub-layer's output to the un-normalised input, x = x + attn(ln1(x)), and the same around the MLP"
    ),
    "norm_after_sublayer": (
        "the layer norms were applied to the sub-layers' outputs, x + ln1(attn(x)): pre-norm normalises "
        "each sub-layer's input, x = x + attn(ln1(x)) and x = x + mlp(ln2(x))"
    ),
    "no_layer_norm": (
        "the layer norms were left out: normalise before each sublayer, attn(ln1(x)) and mlp(ln2(x))"
    ),
    "post_norm": (
        "this is a post-norm block (norm after the residual add); the exercise asks for pre-norm: "
        "x = x + attn(ln1(x)), then x = x + mlp(ln2(x))"
    ),
    "eps_1e-6": (
        "the block's layer norms use eps = 1e-6; the reference block's (torch.nn.LayerNorm's default) "
        "use eps = 1e-5, inside the square root"
    ),
    "ln_eps_outside_sqrt": (
        "in the block's layer norms eps was added outside the square root: divide by sqrt(var + eps), "
        "not sqrt(var) + eps"
    ),
    "ln_unbiased_variance": (
        "the block's layer norms use the unbiased variance (divided by d - 1); layer norm uses the biased "
        "variance, divided by d"
    ),
    "ln_no_affine": (
        "in the block's layer norms the learned scale and shift were ignored: multiply by ln.weight, then "
        "add ln.bias"
    ),
    "erf_gelu": (
        "the MLP uses the exact (erf) GELU; the block uses GPT-2's tanh approximation "
        "0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))"
    ),
    "relu": (
        "the MLP uses ReLU; the block uses GELU with the tanh approximation, as GPT-2"
    ),
    "sigmoid_gelu": (
        "the MLP uses the sigmoid approximation x * sigmoid(1.702 x); the block uses GPT-2's tanh "
        "approximation 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))"
    ),
    "mlp_weights_swapped": (
        "the MLP's weight matrices are swapped (h @ mlp.proj.weight, then @ mlp.fc.weight: the shapes "
        "fit, the numbers do not): use gelu(h @ mlp.fc.weight.T + mlp.fc.bias) @ mlp.proj.weight.T + "
        "mlp.proj.bias"
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
    frozenset({"no_scale", "scale_sqrt_d_model"}),
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

    scale = 1.0 if "no_scale" in m else 1.0 / math.sqrt(C if "scale_sqrt_d_model" in m else hs)
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
