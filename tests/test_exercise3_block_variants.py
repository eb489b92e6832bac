"""Exercise 3's block variants (single mistakes and pairs) against blocks built from stock torch modules.

Each variant of ``exercises/exercise3/tests/hidden/mistakes.py`` is compared with the torch ``ReferenceBlock``
whose modules were swapped or re-wired to make the same mistake (``nn.GELU()`` for erf, ``nn.Identity`` for no
norm, ``eps`` changed, a hand-written norm, the MLP's weights exchanged, the halves wired as the mistake has
them); a pair is both edits at once.
"""
from __future__ import annotations

import numpy as np
import pytest
import torch
from test_exercise3_mistakes import DIFF_SHAPE, _err, _gen, _x, mistakes, reference  # loaded once
from torch import nn


def _pre(t, f, ln):
    return t + f(ln(t))


#: How a wrong block wires each half (t the stream, f the sub-layer, ln its norm), written out with modules.
WIRING = {
    "post_norm": lambda t, f, ln: ln(t + f(t)),
    "norm_after_sublayer": lambda t, f, ln: t + ln(f(t)),
    "residual_from_ln": lambda t, f, ln: ln(t) + f(ln(t)),
    "residual_doubled": lambda t, f, ln: 2.0 * f(ln(t)),
    "no_residual": lambda t, f, ln: f(ln(t)),
}


class _Rewired(nn.Module):
    """A ReferenceBlock's modules with each half wired as ``wiring[i](t, f, ln)`` (0 attention, 1 MLP)."""

    def __init__(self, block, wiring):
        super().__init__()
        self.block, self.wiring = block, wiring

    def forward(self, x, causal):
        blk = self.block
        mask = torch.triu(torch.ones(x.shape[1], x.shape[1], dtype=torch.bool), 1) if causal else None

        def attn(t):
            return blk.attn(t, t, t, attn_mask=mask, need_weights=False)[0]

        x = self.wiring[0](x, attn, blk.ln1)
        return self.wiring[1](x, blk.mlp, blk.ln2)


class _HandNorm(nn.Module):
    """A layer norm with ``ln``'s weight and bias but eps outside the square root, or the unbiased variance."""

    def __init__(self, ln: nn.LayerNorm, kind: str):
        super().__init__()
        self.ln, self.kind = ln, kind

    def forward(self, x):
        centred = x - x.mean(-1, keepdim=True)
        if self.kind == "ln_eps_outside_sqrt":
            xhat = centred / (x.std(-1, unbiased=False, keepdim=True) + self.ln.eps)
        else:
            xhat = centred / torch.sqrt(x.var(-1, unbiased=True, keepdim=True) + self.ln.eps)
        return xhat * self.ln.weight + self.ln.bias


class _SigmoidGELU(nn.Module):
    def forward(self, x):
        return x * torch.sigmoid(1.702 * x)


def _edit_block(block, mistake: str) -> None:
    """Change ``block``'s modules in place so that it computes ``mistake`` (the parts modules can express)."""
    d = block.ln1.normalized_shape[0]
    if mistake in ("erf_gelu", "relu", "sigmoid_gelu"):
        block.mlp.gelu = {"erf_gelu": nn.GELU(), "relu": nn.ReLU(), "sigmoid_gelu": _SigmoidGELU()}[mistake]
    elif mistake == "no_layer_norm":
        block.ln1, block.ln2 = nn.Identity(), nn.Identity()
    elif mistake == "eps_1e-6":
        block.ln1.eps = block.ln2.eps = 1e-6
    elif mistake == "ln_no_affine":
        block.ln1, block.ln2 = (nn.LayerNorm(d, elementwise_affine=False, dtype=torch.float64) for _ in range(2))
    elif mistake in ("ln_eps_outside_sqrt", "ln_unbiased_variance"):
        block.ln1, block.ln2 = _HandNorm(block.ln1, mistake), _HandNorm(block.ln2, mistake)
    elif mistake == "mlp_weights_swapped":  # fc computes t @ proj.weight, proj computes h @ fc.weight
        fc_w, proj_w = block.mlp.fc.weight.detach().clone(), block.mlp.proj.weight.detach().clone()
        with torch.no_grad():
            block.mlp.fc.weight.copy_(proj_w.T)
            block.mlp.proj.weight.copy_(fc_w.T)


def _torch_built_block(block, x, mistakes_: tuple[str, ...]) -> np.ndarray:
    """What ``block`` edited for every mistake in ``mistakes_`` computes on ``x`` (causal)."""
    wiring = [_pre, _pre]
    for mk in mistakes_:
        _edit_block(block, mk)
        if mk in WIRING:
            wiring = [WIRING[mk], WIRING[mk]]
        elif mk in ("no_attn_residual", "no_mlp_residual"):
            wiring[0 if mk == "no_attn_residual" else 1] = WIRING["no_residual"]
    with torch.no_grad():
        return _Rewired(block, wiring)(torch.as_tensor(x), "causal_ignored" not in mistakes_).numpy()


@pytest.mark.parametrize("mistake", sorted(mistakes.BLOCK_MISTAKES))
def test_block_mistake_agrees_with_torch_built_equivalent(mistake):
    B, T, d, h = DIFF_SHAPE
    block = reference.random_block(d, h, _gen(90))
    params = reference.block_params(block)
    x = _x((B, T, d), 91)
    expected = _torch_built_block(block, x, (mistake,))
    assert _err(mistakes.block_variant(x, params, h, True, mistake), expected) < 1e-10


@pytest.mark.parametrize("pair", [("post_norm", "erf_gelu"), ("eps_1e-6", "mlp_weights_swapped"),
                                  ("no_attn_residual", "ln_no_affine"), ("residual_from_ln", "causal_ignored")])
def test_block_pair_agrees_with_torch_built_equivalent(pair):
    B, T, d, h = DIFF_SHAPE
    block = reference.random_block(d, h, _gen(92))
    params = reference.block_params(block)
    x = _x((B, T, d), 93)
    expected = _torch_built_block(block, x, pair)
    assert _err(mistakes.block_variant(x, params, h, True, pair), expected) < 1e-10
    for one in pair:  # both mistakes matter (an eps slip only by about 1e-5)
        assert _err(mistakes.block_variant(x, params, h, True, one), expected) > 2e-6
