"""Known wrong versions of exercise 4's block, for the diagnosis (judge side, trusted).

Each variant is computed with the reference block's own modules (same weights as the student's), so a
submission that makes exactly one of these slips returns exactly that variant's output, and the failed
check names it. The set: the slips of the lesson's "common mistakes" for this exercise (residual added
from the normalised x, norm on the wrong side, residual removed in one sub-layer only) and switches that
are not wired in.
"""
from __future__ import annotations

from typing import Callable

import numpy as np
import torch

from exercises.exercise4.tests.reference import ReferenceBlock, run, with_mode
from grader.compare import Mistake

MESSAGES = {
    "residual_from_normalised": (
        "The residual was added to the normalised x, x = ln1(x) + attn(ln1(x)): pre-norm adds the sub-layer's "
        "output to the un-normalised stream, x = x + attn(ln1(x)), so the stream itself is never normalised."),
    "norm_wrong_side": (
        "Post-norm was done as x + LN(attn(x)), with the norm inside the residual branch: post-norm normalises "
        "after the addition, x = LN(x + attn(x))."),
    "attn_residual_only": (
        "The residual was removed from the MLP sub-layer only: with residual=False the attention sub-layer still "
        "adds its input back."),
    "mlp_residual_only": (
        "The residual was removed from the attention sub-layer only: with residual=False the MLP sub-layer still "
        "adds its input back."),
    "residual_switch_ignored": (
        "The residual switch is ignored: with residual=False the block still adds each sub-layer's input "
        "(its output is the residual=True one)."),
    "prenorm_switch_ignored": (
        "The prenorm switch is ignored: with prenorm=False the block still normalises before each sub-layer "
        "(its output is the prenorm=True one)."),
    "both_switches_ignored": (
        "Both switches are ignored: the block is always the pre-norm block with residuals."),
    "postnorm_without_norm": (
        "With prenorm=False the layer norms were dropped instead of moved: post-norm is LN(x + attn(x)), "
        "not x + attn(x)."),
    "norms_swapped": (
        "ln1 and ln2 are swapped: ln1 goes with the attention sub-layer and ln2 with the MLP."),
}


def _sublayers(block: ReferenceBlock):
    return [(block.attend, block.ln1), (block.mlp, block.ln2)]


def _compose(block: ReferenceBlock, x: np.ndarray, step: Callable) -> np.ndarray:
    """Run ``x`` through both sub-layers with ``step(i, x, f, ln) -> x`` (i = 0 attention, 1 MLP)."""
    with torch.no_grad():
        t = torch.as_tensor(np.asarray(x, dtype=np.float64))
        for i, (f, ln) in enumerate(_sublayers(block)):
            t = step(i, t, f, ln)
        return t.numpy().copy()


def variant(block: ReferenceBlock, x: np.ndarray, key: str) -> np.ndarray | None:
    """What the wrong block ``key`` returns for ``x`` in ``block``'s mode; None where it does not apply."""
    residual, prenorm = block.residual, block.prenorm
    if key == "residual_from_normalised" and residual and prenorm:
        return _compose(block, x, lambda i, t, f, ln: ln(t) + f(ln(t)))
    if key == "norm_wrong_side" and residual and not prenorm:
        return _compose(block, x, lambda i, t, f, ln: t + ln(f(t)))
    if key in ("attn_residual_only", "mlp_residual_only") and not residual:
        keep = 0 if key == "attn_residual_only" else 1

        def step(i, t, f, ln):
            if prenorm:
                out = f(ln(t))
                return t + out if i == keep else out
            out = f(t)
            return ln(t + out if i == keep else out)

        return _compose(block, x, step)
    if key == "residual_switch_ignored" and not residual:
        return run(with_mode(block, True, prenorm), x)
    if key == "prenorm_switch_ignored" and not prenorm:
        return run(with_mode(block, residual, True), x)
    if key == "both_switches_ignored" and not residual and not prenorm:
        return run(with_mode(block, True, True), x)
    if key == "postnorm_without_norm" and not prenorm:
        return _compose(block, x, lambda i, t, f, ln: t + f(t) if residual else f(t))
    if key == "norms_swapped":
        swapped = with_mode(block, residual, prenorm)
        swapped.ln1, swapped.ln2 = swapped.ln2, swapped.ln1
        return run(swapped, x)
    return None


def block_mistakes(block: ReferenceBlock, x: np.ndarray) -> dict[str, Mistake]:
    """The known mistakes that apply to ``block``'s mode, for ``expect_array``."""
    out = {}
    for key, message in MESSAGES.items():
        if variant(block, x, key) is None:
            continue
        out[key] = Mistake(message, lambda key=key: variant(block, x, key))
    return out
