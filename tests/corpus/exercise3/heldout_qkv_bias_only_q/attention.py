"""Exercise 3: multi-head attention and a pre-norm transformer block in NumPy.

Shapes: B batch, T tokens, C = d_model, nh heads, hs = C // nh head size.
"""
import numpy as np


def softmax(x, axis=-1):
    """Numerically stable softmax of ``x`` along ``axis``; same shape as ``x``, float64.

    The row maximum is subtracted before ``exp`` so large scores cannot overflow.
    """
    x = np.asarray(x, dtype=np.float64)
    e = np.exp(x - np.max(x, axis=axis, keepdims=True))
    return e / np.sum(e, axis=axis, keepdims=True)


def layer_norm(x, weight, bias, eps=1e-5):
    """Layer norm over the last axis with the biased variance, as ``torch.nn.functional.layer_norm``.

    x: (..., C); weight, bias: (C,). Returns float64 of the shape of ``x``.
    """
    x = np.asarray(x, dtype=np.float64)
    mean = x.mean(axis=-1, keepdims=True)
    var = x.var(axis=-1, keepdims=True)  # biased: divides by C, not C - 1
    return (x - mean) / np.sqrt(var + eps) * weight + bias


def gelu(x):
    """GELU, tanh approximation (GPT-2; ``torch.nn.GELU(approximate='tanh')``); float64, shape of ``x``."""
    x = np.asarray(x, dtype=np.float64)
    return 0.5 * x * (1.0 + np.tanh(np.sqrt(2.0 / np.pi) * (x + 0.044715 * x**3)))


def multi_head_attention(x, w_qkv, b_qkv, w_out, b_out, n_heads, causal=False):
    """Multi-head scaled dot-product attention (Vaswani et al. 2017), as ``torch.nn.MultiheadAttention``.

    x: (B, T, C); w_qkv: (3C, C) with rows [W_q; W_k; W_v]; b_qkv: (3C,); w_out: (C, C); b_out: (C,).
    Head i uses features [i*hs:(i+1)*hs] of q, k and v. With ``causal`` token t attends to tokens <= t.
    Returns (B, T, C) float64.
    """
    x = np.asarray(x, dtype=np.float64)
    B, T, C = x.shape
    hs = C // n_heads

    qkv = x @ np.asarray(w_qkv, dtype=np.float64).T  # (B, T, 3C)
    q, k, v = np.split(qkv, 3, axis=-1)  # each (B, T, C)
    q = q + b_qkv[:C]
    q = q.reshape(B, T, n_heads, hs).transpose(0, 2, 1, 3)  # (B, nh, T, hs)
    k = k.reshape(B, T, n_heads, hs).transpose(0, 2, 1, 3)  # (B, nh, T, hs)
    v = v.reshape(B, T, n_heads, hs).transpose(0, 2, 1, 3)  # (B, nh, T, hs)

    att = q @ k.transpose(0, 1, 3, 2) / np.sqrt(hs)  # (B, nh, T, T)
    if causal:
        future = np.triu(np.ones((T, T), dtype=bool), k=1)  # (T, T), True above the diagonal
        att = np.where(future, -np.inf, att)  # blocked before the softmax
    att = softmax(att, axis=-1)  # each query's weights over the keys sum to 1
    y = att @ v  # (B, nh, T, hs)

    y = y.transpose(0, 2, 1, 3).reshape(B, T, C)  # (B, T, nh, hs) -> (B, T, C)
    return y @ np.asarray(w_out, dtype=np.float64).T + b_out  # (B, T, C)


def transformer_block(x, params, n_heads, causal=True):
    """Pre-norm transformer block: x + attn(ln1(x)), then + mlp(ln2(x)) with mlp = fc -> GELU -> proj.

    x: (B, T, C); params maps the reference torch block's state_dict names (``ln1.weight``,
    ``attn.in_proj_weight``, ``mlp.fc.weight`` (4C, C), ...) to float64 arrays. Returns (B, T, C) float64.
    """
    p = params
    x = np.asarray(x, dtype=np.float64)
    h = layer_norm(x, p["ln1.weight"], p["ln1.bias"])  # (B, T, C)
    x = x + multi_head_attention(
        h, p["attn.in_proj_weight"], p["attn.in_proj_bias"],
        p["attn.out_proj.weight"], p["attn.out_proj.bias"], n_heads, causal=causal,
    )
    h = layer_norm(x, p["ln2.weight"], p["ln2.bias"])  # (B, T, C)
    h = gelu(h @ p["mlp.fc.weight"].T + p["mlp.fc.bias"])  # (B, T, 4C)
    x = x + h @ p["mlp.proj.weight"].T + p["mlp.proj.bias"]  # (B, T, C)
    return x
