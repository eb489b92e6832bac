"""Transformer blocks with known mistakes (not in the corpus), shared by the block probes' tests.

Each block is the reference solution's (``solutions/exercise3/attention.py``, loaded here as :data:`S`)
with one mistake, or two, written in; its name says which. ``x`` is (B, T, d_model), ``p`` the block's
parameters by their state_dict names (``ln1.weight``, ``attn.in_proj_weight``, ``mlp.fc.weight``, ...).
``tests/test_probes_block.py`` lists the finding each must get; ``tests/test_probes_block_findings.py``
reads the sentences of some of them.
"""
from __future__ import annotations

import importlib.util

import numpy as np
from conftest import ROOT


def load(path, name):
    """Import a module from a file path (the solution and corpus folders are not packages)."""
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


#: the reference solution: layer_norm, gelu, multi_head_attention, transformer_block
S = load(ROOT / "solutions" / "exercise3" / "attention.py", "probe_block_solution")


def ln(x, p, name, eps=1e-5):
    """The solution's layer_norm with the block's ``name`` ("ln1" or "ln2") weight and bias."""
    return S.layer_norm(x, p[name + ".weight"], p[name + ".bias"], eps=eps)


def attn(h, p, n_heads, causal, mha=None):
    """The attention sub-layer: ``mha`` (default the solution's multi_head_attention) with the block's weights."""
    return (mha or S.multi_head_attention)(h, p["attn.in_proj_weight"], p["attn.in_proj_bias"],
                                           p["attn.out_proj.weight"], p["attn.out_proj.bias"], n_heads, causal=causal)


def mlp(h, p, act=None):
    """The MLP sub-layer: fc, ``act`` (default the solution's gelu), proj."""
    return (act or S.gelu)(h @ p["mlp.fc.weight"].T + p["mlp.fc.bias"]) @ p["mlp.proj.weight"].T + p["mlp.proj.bias"]


def residual_twice(x, p, n_heads, causal=True):
    x = x + (x + attn(ln(x, p, "ln1"), p, n_heads, causal))  # x + x + attention
    return x + mlp(ln(x, p, "ln2"), p)


def residual_from_ln(x, p, n_heads, causal=True):
    x = ln(x, p, "ln1")  # the residual stream now carries ln1(x)
    x = x + attn(x, p, n_heads, causal)
    return x + mlp(ln(x, p, "ln2"), p)


def ln_of_sublayer(x, p, n_heads, causal=True):
    x = x + ln(attn(x, p, n_heads, causal), p, "ln1")  # x + LN(f(x))
    return x + ln(mlp(x, p), p, "ln2")


def eps_1e6(x, p, n_heads, causal=True):
    x = x + attn(ln(x, p, "ln1", eps=1e-6), p, n_heads, causal)
    return x + mlp(ln(x, p, "ln2", eps=1e-6), p)


def _inline_ln_eps_outside(x, w, b):
    return (x - x.mean(-1, keepdims=True)) / (np.sqrt(x.var(-1, keepdims=True)) + 1e-5) * w + b


def eps_outside_inline(x, p, n_heads, causal=True):
    x = x + attn(_inline_ln_eps_outside(x, p["ln1.weight"], p["ln1.bias"]), p, n_heads, causal)
    return x + mlp(_inline_ln_eps_outside(x, p["ln2.weight"], p["ln2.bias"]), p)


def _swapped_mlp(h, p):
    h = S.gelu(h @ p["mlp.proj.weight"] + p["mlp.fc.bias"])  # (B, T, 4C): runs, as proj.weight is (C, 4C)
    return h @ p["mlp.fc.weight"] + p["mlp.proj.bias"]


def mlp_swapped(x, p, n_heads, causal=True):
    x = x + attn(ln(x, p, "ln1"), p, n_heads, causal)
    return x + _swapped_mlp(ln(x, p, "ln2"), p)


def fc_bias_dropped(x, p, n_heads, causal=True):
    x = x + attn(ln(x, p, "ln1"), p, n_heads, causal)
    return x + S.gelu(ln(x, p, "ln2") @ p["mlp.fc.weight"].T) @ p["mlp.proj.weight"].T + p["mlp.proj.bias"]


def proj_bias_dropped(x, p, n_heads, causal=True):
    x = x + attn(ln(x, p, "ln1"), p, n_heads, causal)
    return x + S.gelu(ln(x, p, "ln2") @ p["mlp.fc.weight"].T + p["mlp.fc.bias"]) @ p["mlp.proj.weight"].T


def relu_inline(x, p, n_heads, causal=True):
    x = x + attn(ln(x, p, "ln1"), p, n_heads, causal)
    return x + mlp(ln(x, p, "ln2"), p, act=lambda u: np.maximum(u, 0.0))


def causal_always_true(x, p, n_heads, causal=True):
    x = x + attn(ln(x, p, "ln1"), p, n_heads, True)
    return x + mlp(ln(x, p, "ln2"), p)


def _mha_out_proj_untransposed(x, w_qkv, b_qkv, w_out, b_out, n_heads, causal=False):
    return S.multi_head_attention(x, w_qkv, b_qkv, np.eye(len(w_out)), np.zeros(len(w_out)), n_heads,
                                  causal=causal) @ w_out + b_out  # y @ W_O, not y @ W_O.T


def out_proj_untransposed(x, p, n_heads, causal=True):
    x = x + attn(ln(x, p, "ln1"), p, n_heads, causal, mha=_mha_out_proj_untransposed)
    return x + mlp(ln(x, p, "ln2"), p)


def batch_mixed(x, p, n_heads, causal=True):
    B, T, C = x.shape
    flat = ln(x, p, "ln1").reshape(1, B * T, C)  # one sequence of B*T tokens: the mask spans the batch
    x = x + attn(flat, p, n_heads, causal).reshape(B, T, C)
    return x + mlp(ln(x, p, "ln2"), p)


def mha_heads_reversed(x, w_qkv, b_qkv, w_out, b_out, n_heads, causal=False):
    d = x.shape[-1]
    hs = d // n_heads
    joined = S.multi_head_attention(x, w_qkv, b_qkv, np.eye(d), np.zeros(d), n_heads, causal=causal)  # (B, T, d)
    reverse = np.concatenate([np.arange(g * hs, (g + 1) * hs) for g in reversed(range(n_heads))])
    return joined[..., reverse] @ w_out.T + b_out  # head n_heads - 1 first


def heads_reversed(x, p, n_heads, causal=True):
    x = x + attn(ln(x, p, "ln1"), p, n_heads, causal, mha=mha_heads_reversed)
    return x + mlp(ln(x, p, "ln2"), p)


def mha_batch_flattened(x, w_qkv, b_qkv, w_out, b_out, n_heads, causal=False):
    B, T, C = x.shape  # one sequence of B*T tokens: the mask spans the batch
    return S.multi_head_attention(x.reshape(1, B * T, C), w_qkv, b_qkv, w_out, b_out, n_heads,
                                  causal=causal).reshape(B, T, C)


def fc_bias_after_gelu(x, p, n_heads, causal=True):
    x = x + attn(ln(x, p, "ln1"), p, n_heads, causal)
    h = S.gelu(ln(x, p, "ln2") @ p["mlp.fc.weight"].T) + p["mlp.fc.bias"]  # the bias after the activation
    return x + h @ p["mlp.proj.weight"].T + p["mlp.proj.bias"]


def no_activation(x, p, n_heads, causal=True):
    x = x + attn(ln(x, p, "ln1"), p, n_heads, causal)
    return x + mlp(ln(x, p, "ln2"), p, act=lambda u: u)


def with_dropout(x, p, n_heads, causal=True):
    out = S.transformer_block(x, p, n_heads, causal)
    return out * (np.random.default_rng().random(out.shape) > 0.1) / 0.9


def _ln_over_batch(x, w, b):
    return (x - x.mean(0, keepdims=True)) / np.sqrt(x.var(0, keepdims=True) + 1e-5) * w + b


def ln_over_batch(x, p, n_heads, causal=True):
    x = x + attn(_ln_over_batch(x, p["ln1.weight"], p["ln1.bias"]), p, n_heads, causal)
    return x + mlp(_ln_over_batch(x, p["ln2.weight"], p["ln2.bias"]), p)


def parallel(x, p, n_heads, causal=True):  # GPT-J's parallel block: both sub-layers read the block's input
    return x + attn(ln(x, p, "ln1"), p, n_heads, causal) + mlp(ln(x, p, "ln2"), p)


def off_by_1e5(x, p, n_heads, causal=True):
    return S.transformer_block(x, p, n_heads, causal) + 1e-5


def eps_1e6_and_causal_ignored(x, p, n_heads, causal=True):
    return eps_1e6(x, p, n_heads, causal=False)


def mlp_swapped_and_no_ln1(x, p, n_heads, causal=True):
    x = x + attn(x, p, n_heads, causal)
    return x + _swapped_mlp(ln(x, p, "ln2"), p)
