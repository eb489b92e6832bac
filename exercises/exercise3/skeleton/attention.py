"""Exercise 3: multi-head attention and a pre-norm transformer block, in NumPy only.

Fill in the five functions below. Read README.md for the full contract; in short:

- every array is a float64 NumPy array, and every function returns float64;
- NumPy is the only library you may import (importing torch, tensorflow, jax, ... scores zero);
- weights use PyTorch's layout: a linear layer computes ``x @ W.T + b`` with ``W`` of shape (out, in).

Shape letters: B batch size, T number of tokens, d = d_model, h = n_heads, d_head = d // h.
"""
import numpy as np


def softmax(x, axis=-1):
    """Softmax of ``x`` along ``axis``.

    Args:
        x: float64 array of any shape.
        axis: the axis whose entries must sum to 1 (default: the last one).

    Returns:
        float64 array of the same shape as ``x``. Subtract the maximum along ``axis`` before taking
        ``exp`` so that large inputs (say 1e4) do not overflow.
    """
    raise NotImplementedError("softmax: not written yet")


def layer_norm(x, weight, bias, eps=1e-5):
    """Layer normalisation over the last axis, as ``torch.nn.functional.layer_norm``.

    Args:
        x: float64 array of shape (..., d).
        weight: float64 array of shape (d,), the learned scale (gamma).
        bias: float64 array of shape (d,), the learned shift (beta).
        eps: added to the variance inside the square root.

    Returns:
        float64 array of the same shape as ``x``: (x - mean) / sqrt(var + eps) * weight + bias, where mean
        and var are taken over the last axis and var is the biased variance (divide by d, not d - 1).
    """
    raise NotImplementedError("layer_norm: not written yet")


def gelu(x):
    """GELU activation, tanh approximation (the one GPT-2 uses).

    Args:
        x: float64 array of any shape.

    Returns:
        float64 array of the same shape: 0.5 * x * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 * x**3))).
    """
    raise NotImplementedError("gelu: not written yet")


def multi_head_attention(x, w_qkv, b_qkv, w_out, b_out, n_heads, causal=False):
    """Multi-head scaled dot-product attention, as ``torch.nn.MultiheadAttention``.

    Args:
        x: float64 array (B, T, d), the token vectors.
        w_qkv: float64 array (3d, d), the fused projection; rows [0:d] give Q, [d:2d] give K, [2d:3d] give V.
        b_qkv: float64 array (3d,), the fused bias, in the same order.
        w_out: float64 array (d, d), the output projection W_O.
        b_out: float64 array (d,), its bias.
        n_heads: number of heads h; d is divisible by h and d_head = d // h.
        causal: if True, token t may attend only to tokens 0..t (itself and earlier ones).

    Returns:
        float64 array (B, T, d). Head i uses features [i * d_head:(i + 1) * d_head] of Q, K and V;
        the weights of head i are softmax(Q_i K_i^T / sqrt(d_head)) over the keys; the heads' outputs
        are joined back to (B, T, d) in head order and passed through W_O.
    """
    raise NotImplementedError("multi_head_attention: not written yet")


def transformer_block(x, params, n_heads, causal=True):
    """One pre-norm transformer block: x = x + attn(LN1(x)); x = x + MLP(LN2(x)).

    Args:
        x: float64 array (B, T, d).
        params: dict of float64 arrays, named as in the reference torch block's state_dict:
            "ln1.weight", "ln1.bias"                           (d,) each
            "attn.in_proj_weight" (3d, d), "attn.in_proj_bias" (3d,)
            "attn.out_proj.weight" (d, d), "attn.out_proj.bias" (d,)
            "ln2.weight", "ln2.bias"                           (d,) each
            "mlp.fc.weight" (4d, d), "mlp.fc.bias" (4d,)
            "mlp.proj.weight" (d, 4d), "mlp.proj.bias" (d,)
        n_heads: number of attention heads.
        causal: passed on to the attention.

    Returns:
        float64 array (B, T, d). MLP(z) = gelu(z @ fc.weight.T + fc.bias) @ proj.weight.T + proj.bias;
        both layer norms use eps = 1e-5.
    """
    raise NotImplementedError("transformer_block: not written yet")
