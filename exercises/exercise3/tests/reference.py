"""Judge-side PyTorch references for exercise 3 (trusted code; never shipped into the sandbox).

``ReferenceBlock`` is the pre-norm transformer block of the lesson written with stock torch modules, so
its ``state_dict`` names are the names the student's ``transformer_block`` receives. ``random_block`` and
``random_attention`` draw float64 modules with random weights, non-zero random biases and non-trivial
layer-norm scales and shifts, so parity checks cannot pass by coincidence (zero biases, unit LN weights,
W_O = identity).
"""
from __future__ import annotations

from collections import OrderedDict

import numpy as np
import torch
from torch import nn


class ReferenceBlock(nn.Module):
    """Pre-norm transformer block (GPT-2 style): x = x + attn(ln1(x)); x = x + mlp(ln2(x)).

    Submodules (and so ``state_dict`` names): ``ln1``, ``attn`` (``nn.MultiheadAttention``,
    ``batch_first=True``), ``ln2``, ``mlp`` = ``Sequential(fc: Linear(d, 4d), gelu: GELU('tanh'),
    proj: Linear(4d, d))``. Input and output are (B, T, d) tensors. Dtype float64 by default.
    Sources: the lesson; PyTorch docs for ``LayerNorm``, ``MultiheadAttention``, ``GELU``.
    """

    def __init__(self, d_model: int, n_heads: int, dtype: torch.dtype = torch.float64):
        super().__init__()
        self.n_heads = n_heads
        self.ln1 = nn.LayerNorm(d_model, eps=1e-5, dtype=dtype)
        self.attn = nn.MultiheadAttention(d_model, n_heads, dropout=0.0, bias=True, batch_first=True, dtype=dtype)
        self.ln2 = nn.LayerNorm(d_model, eps=1e-5, dtype=dtype)
        self.mlp = nn.Sequential(OrderedDict(
            fc=nn.Linear(d_model, 4 * d_model, dtype=dtype),
            gelu=nn.GELU(approximate="tanh"),
            proj=nn.Linear(4 * d_model, d_model, dtype=dtype),
        ))

    def forward(self, x: torch.Tensor, causal: bool = True) -> torch.Tensor:
        """x: (B, T, d) -> (B, T, d). With ``causal`` token t attends only to tokens <= t."""
        h = self.ln1(x)
        x = x + self.attn(h, h, h, attn_mask=causal_mask(x.shape[1]) if causal else None,
                          need_weights=False)[0]
        x = x + self.mlp(self.ln2(x))
        return x


def causal_mask(T: int) -> torch.Tensor:
    """Bool (T, T) mask for ``nn.MultiheadAttention``: True = blocked, i.e. strictly above the diagonal.

    (``scaled_dot_product_attention`` uses the opposite convention, True = attend; a float mask is added.)
    """
    return torch.triu(torch.ones(T, T, dtype=torch.bool), diagonal=1)


def _randomise(module: nn.Module, generator: torch.Generator) -> None:
    """Overwrite every parameter in place: matrices ~ N(0, 1/fan_in), vectors ~ N(0, 0.5^2)."""
    with torch.no_grad():
        for name, p in module.named_parameters():
            if p.dim() == 2:
                p.copy_(torch.randn(p.shape, generator=generator, dtype=p.dtype) / p.shape[1] ** 0.5)
            else:
                p.copy_(0.5 * torch.randn(p.shape, generator=generator, dtype=p.dtype))
        for name, p in module.named_parameters():
            if name.endswith("weight") and p.dim() == 1:  # layer-norm scale: around 1, never trivial
                p.add_(1.0)


def random_attention(d_model: int, n_heads: int, generator: torch.Generator) -> nn.MultiheadAttention:
    """A float64 ``nn.MultiheadAttention(d_model, n_heads, batch_first=True)`` with random weights and biases.

    ``in_proj_weight`` (3d, d), ``in_proj_bias`` (3d,), ``out_proj.weight`` (d, d), ``out_proj.bias`` (d,)
    are all drawn from ``generator``; the biases are non-zero (torch would initialise them to zero).
    """
    attn = nn.MultiheadAttention(d_model, n_heads, dropout=0.0, bias=True, batch_first=True, dtype=torch.float64)
    _randomise(attn, generator)
    return attn.eval()


def random_block(d_model: int, n_heads: int, generator: torch.Generator) -> ReferenceBlock:
    """A float64 ``ReferenceBlock`` with every weight, bias and layer-norm parameter drawn from ``generator``.

    Linear weights ~ N(0, 1/fan_in); biases ~ N(0, 0.25) (non-zero); layer-norm weights ~ 1 + N(0, 0.25)
    and layer-norm biases ~ N(0, 0.25), so neither norm is the identity affine map.
    """
    block = ReferenceBlock(d_model, n_heads, dtype=torch.float64)
    _randomise(block, generator)
    return block.eval()


def block_params(block: ReferenceBlock) -> dict[str, np.ndarray]:
    """The block's ``state_dict`` as float64 NumPy arrays (copies), the ``params`` a student receives."""
    return {name: t.detach().to(torch.float64).numpy().copy() for name, t in block.state_dict().items()}


def attention_weights(attn: nn.MultiheadAttention) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """``(w_qkv, b_qkv, w_out, b_out)`` of ``attn`` as float64 NumPy arrays, in the student's argument order."""
    return tuple(t.detach().to(torch.float64).numpy().copy() for t in (
        attn.in_proj_weight, attn.in_proj_bias, attn.out_proj.weight, attn.out_proj.bias))


def run_attention(attn: nn.MultiheadAttention, x: np.ndarray, causal: bool) -> np.ndarray:
    """PyTorch's answer for ``multi_head_attention``: ``attn(x, x, x)`` on float64 ``x`` (B, T, d) -> (B, T, d)."""
    xt = torch.as_tensor(np.asarray(x, dtype=np.float64))
    mask = causal_mask(xt.shape[1]) if causal else None
    with torch.no_grad():
        return attn(xt, xt, xt, attn_mask=mask, need_weights=False)[0].numpy().copy()


def run_block(block: ReferenceBlock, x: np.ndarray, causal: bool) -> np.ndarray:
    """PyTorch's answer for ``transformer_block``: ``block(x, causal)`` on float64 ``x`` (B, T, d) -> (B, T, d)."""
    with torch.no_grad():
        return block(torch.as_tensor(np.asarray(x, dtype=np.float64)), causal=causal).numpy().copy()
