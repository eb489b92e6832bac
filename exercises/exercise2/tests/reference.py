"""Judge-side PyTorch references for exercise 2 (trusted code; never shipped into the sandbox).

The truth of every count is ``sum(p.numel() for p in module.parameters())`` of a real torch module built
with the configuration asked for, never a number typed into a test and never our own formula.
Modules are built on the ``meta`` device: they have shapes but no memory, so even GPT-2 small builds in
milliseconds. ``parameters()`` yields a tied
weight once, so tying the LM head to the token embedding removes it from the count, as in GPT-2.
Sources: the lesson; Radford et al. 2019 (GPT-2); PyTorch docs for ``MultiheadAttention``, ``Linear``,
``LayerNorm``, ``Embedding``.
"""
from __future__ import annotations

from collections import OrderedDict

import torch
from torch import nn

#: The lesson's block and model (GPT-2 small).
LESSON_BLOCK = dict(d_model=768, n_heads=12, mlp_ratio=4)
GPT2_SMALL = dict(vocab_size=50257, n_ctx=1024, d_model=768, n_layer=12, n_heads=12, mlp_ratio=4, tied=True)


class ReferenceBlock(nn.Module):
    """One transformer block: ``ln1``, ``attn``, ``ln2``, ``mlp`` (GPT-2 names, as exercise 3's block).

    ``attn`` is ``nn.MultiheadAttention(d_model, n_heads, bias=bias)``: W_Q, W_K, W_V fused in
    ``in_proj_weight`` (3d, d), W_O in ``out_proj`` (d, d), with biases (3d,) and (d,) when ``bias``.
    ``mlp`` is ``Linear(d, r·d) -> GELU -> Linear(r·d, d)``, with biases when ``bias``. ``ln1`` and ``ln2``
    are ``LayerNorm(d)`` (weight and bias, d each) when ``layer_norm``, else ``Identity`` (no parameters).
    """

    def __init__(self, d_model: int, n_heads: int, mlp_ratio: int = 4, bias: bool = False,
                 layer_norm: bool = False):
        super().__init__()
        d, hidden = d_model, mlp_ratio * d_model
        self.ln1 = nn.LayerNorm(d) if layer_norm else nn.Identity()
        self.attn = nn.MultiheadAttention(d, n_heads, bias=bias, batch_first=True)
        self.ln2 = nn.LayerNorm(d) if layer_norm else nn.Identity()
        self.mlp = nn.Sequential(OrderedDict(
            fc=nn.Linear(d, hidden, bias=bias),     # (r·d, d)
            gelu=nn.GELU(approximate="tanh"),
            proj=nn.Linear(hidden, d, bias=bias),   # (d, r·d)
        ))


def _embedding(num: int, dim: int) -> nn.Embedding:
    """``nn.Embedding(num, dim)`` without the random init (on meta, ``normal_`` costs ~2 s the first time)."""
    return nn.Embedding.from_pretrained(torch.empty(num, dim), freeze=False)


class ReferenceGPT(nn.Module):
    """A GPT-2 style model: token and position embeddings, blocks, final layer norm, LM head.

    Every block has biases and two layer norms (as GPT-2). ``lm_head`` is ``Linear(d, vocab, bias=False)``;
    with ``tied`` its weight *is* the token embedding's, so ``parameters()`` counts it once.
    """

    def __init__(self, vocab_size: int, n_ctx: int, d_model: int, n_layer: int, n_heads: int,
                 mlp_ratio: int = 4, tied: bool = True):
        super().__init__()
        self.wte = _embedding(vocab_size, d_model)  # (vocab, d)
        self.wpe = _embedding(n_ctx, d_model)       # (n_ctx, d)
        self.h = nn.ModuleList(ReferenceBlock(d_model, n_heads, mlp_ratio, bias=True, layer_norm=True)
                               for _ in range(n_layer))
        self.ln_f = nn.LayerNorm(d_model)
        self.lm_head = nn.Linear(d_model, vocab_size, bias=False)  # (vocab, d)
        if tied:
            self.lm_head.weight = self.wte.weight


def count(module: nn.Module) -> int:
    """Number of parameters: ``sum(p.numel() for p in module.parameters())`` (a tied weight once)."""
    return int(sum(p.numel() for p in module.parameters()))


def build_block(d_model: int, n_heads: int, mlp_ratio: int = 4, bias: bool = False,
                layer_norm: bool = False) -> ReferenceBlock:
    """A :class:`ReferenceBlock` on the meta device (shapes only, no memory)."""
    with torch.device("meta"):
        return ReferenceBlock(d_model, n_heads, mlp_ratio, bias, layer_norm)


def build_gpt(vocab_size: int, n_ctx: int, d_model: int, n_layer: int, n_heads: int, mlp_ratio: int = 4,
              tied: bool = True) -> ReferenceGPT:
    """A :class:`ReferenceGPT` on the meta device (shapes only, no memory)."""
    with torch.device("meta"):
        return ReferenceGPT(vocab_size, n_ctx, d_model, n_layer, n_heads, mlp_ratio, tied)


def block_count(d_model: int, n_heads: int, mlp_ratio: int = 4, bias: bool = False,
                layer_norm: bool = False) -> int:
    """Torch's parameter count of one block with this configuration."""
    return count(build_block(d_model, n_heads, mlp_ratio, bias, layer_norm))


def gpt_count(vocab_size: int, n_ctx: int, d_model: int, n_layer: int, n_heads: int, mlp_ratio: int = 4,
              tied: bool = True) -> int:
    """Torch's parameter count of a GPT-2 style model with this configuration."""
    return count(build_gpt(vocab_size, n_ctx, d_model, n_layer, n_heads, mlp_ratio, tied))


def mlp_share(d_model: int = 768, n_heads: int = 12, mlp_ratio: int = 4) -> float:
    """Torch's MLP parameters over the whole block's, for a block without biases or layer norm."""
    block = build_block(d_model, n_heads, mlp_ratio)
    return count(block.mlp) / count(block)
