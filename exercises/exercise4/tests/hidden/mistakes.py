"""Known wrong versions of exercise 4's block, for the diagnosis (judge side, trusted).

Each variant is computed with the reference block's own modules (same weights as the student's), so a
submission that makes exactly one of these slips returns exactly that variant's output, and the failed
check names it. The set: the slips of the lesson's "common mistakes" for this exercise (residual added
from the normalised x, norm on the wrong side, residual removed in one sub-layer only) and switches that
are not wired in.

One variant has a free parameter: the partial skip ``f(LN(x)) + a*x`` without residuals. Its ``a`` is fitted
to the student's output (:func:`fit_partial_skip`), and it is offered only when that output is given; as
the fitted variant can explain more than a fixed one, it is named only when it reproduces the output to
float64 round-off (:data:`ROUNDOFF`), never near a = 0 (the right block) or a = 1 (the ignored switch, named
by its own message).
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
    "postnorm_also_prenorm": (
        "Post-norm also normalises before the sub-layer, x = LN(x + attn(LN(x))) (LN(attn(LN(x))) without "
        "residuals): post-norm gives the sub-layer the un-normalised x and normalises only after it, "
        "x = LN(x + attn(x))."),
    "partial_skip": (
        "A partial skip connection: with residual=False each sub-layer still adds a fraction of its input, "
        "x = {wrong} with a = {a:.4g} (the value that reproduces your output to float64 round-off); without "
        "residuals the sub-layer's output replaces x, x = {right}."),
}

#: How close (relative to the expected output's scale) the fitted partial skip must come to the student's
#: output to be named: float64 round-off, far tighter than the fixed variants' 1e-7.
ROUNDOFF = 1e-10
#: Fitted values of a this close to 0 (the right block) or 1 (the residual switch ignored) are not a partial skip.
A_DISTINCT = 1e-6
#: Where the fit of a starts: the best of these (both signs, a few per decade), then Gauss-Newton steps (at
#: most FIT_STEPS) with the central difference of step FIT_H for d variant / d a.
FIT_GRID = (0.0, 0.01, -0.01, 0.03, -0.03, 0.1, -0.1, 0.3, -0.3, 0.6, -0.6, 1.5, -1.5, 3.0, -3.0)
FIT_STEPS, FIT_H = 30, 1e-4


def _sublayers(block: ReferenceBlock):
    return [(block.attend, block.ln1), (block.mlp, block.ln2)]


def _compose(block: ReferenceBlock, x: np.ndarray, step: Callable) -> np.ndarray:
    """Run ``x`` through both sub-layers with ``step(i, x, f, ln) -> x`` (i = 0 attention, 1 MLP)."""
    with torch.no_grad():
        t = torch.as_tensor(np.asarray(x, dtype=np.float64))
        for i, (f, ln) in enumerate(_sublayers(block)):
            t = step(i, t, f, ln)
        return t.numpy().copy()


def variant(block: ReferenceBlock, x: np.ndarray, key: str, a: float | None = None) -> np.ndarray | None:
    """What the wrong block ``key`` returns for ``x`` in ``block``'s mode; None where it does not apply.

    ``a`` is the weight of the partial skip (``key == "partial_skip"``, which does not apply without it).
    """
    residual, prenorm = block.residual, block.prenorm
    if key == "partial_skip":
        if residual or a is None:
            return None
        return _compose(block, x, lambda i, t, f, ln: f(ln(t)) + a * t if prenorm else ln(f(t) + a * t))
    if key == "postnorm_also_prenorm" and not prenorm:
        return _compose(block, x, lambda i, t, f, ln: ln(t + f(ln(t))) if residual else ln(f(ln(t))))
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


def fit_partial_skip(block: ReferenceBlock, x: np.ndarray, got) -> float | None:
    """The ``a`` of the partial skip (``variant(block, x, "partial_skip", a)``) closest to ``got`` by least
    squares: the best of a coarse grid (:data:`FIT_GRID`; the fit is not convex: with a large input the sign
    of ``a`` flips what the layer norms see), then Gauss-Newton from there, the derivative by central
    differences. None where the variant does not apply (a block with residuals), ``got`` is not a finite array
    of the output's shape or equals the right block's output (nothing to explain), or the fit fails.

    The fit only proposes an ``a``: whether the variant then reproduces ``got`` is for the comparison to say.
    """
    x = np.asarray(x, dtype=np.float64)
    if block.residual or not isinstance(got, np.ndarray) or got.shape != x.shape or not np.isfinite(got).all():
        return None
    got = got.astype(np.float64)
    truth = run(block, x)
    if np.abs(got - truth).max() <= 1e-6 * max(1.0, float(np.abs(truth).max())):
        return None

    def at(a: float) -> tuple[np.ndarray, float]:
        v = variant(block, x, "partial_skip", a)
        return v, float(np.sum((v - got) ** 2))

    best = min(FIT_GRID, key=lambda a: at(a)[1])
    a, (v, best_misfit), stalled = best, at(best), 0
    for _ in range(FIT_STEPS):
        up, down = variant(block, x, "partial_skip", a + FIT_H), variant(block, x, "partial_skip", a - FIT_H)
        slope = (up - down) / (2 * FIT_H)
        norm = float(np.sum(slope * slope))
        if not (np.isfinite(norm) and norm > 0.0):
            break
        step = float(np.sum(slope * (got - v))) / norm
        if not np.isfinite(step):
            break
        a += step
        v, now = at(a)
        if now < best_misfit:
            best, best_misfit, stalled = a, now, 0
        else:
            stalled += 1
        if abs(step) <= 1e-14 * max(1.0, abs(a)) or stalled >= 3:  # converged, or at round-off
            break
    return best if np.isfinite(best) else None


def _partial_skip_mistake(block: ReferenceBlock, x: np.ndarray, got) -> Mistake | None:
    """The partial skip with ``a`` fitted to ``got`` (None where it does not apply or a is 0 or 1)."""
    a = fit_partial_skip(block, x, got)
    if a is None or abs(a) < A_DISTINCT or abs(a - 1.0) < A_DISTINCT:
        return None
    wrong, right = ("f(LN(x)) + a·x", "f(LN(x))") if block.prenorm else ("LN(f(x) + a·x)", "LN(f(x))")
    message = MESSAGES["partial_skip"].format(wrong=wrong, right=right, a=a)
    return Mistake(message, lambda: variant(block, x, "partial_skip", a), rtol=ROUNDOFF)


def block_mistakes(block: ReferenceBlock, x: np.ndarray, got=None) -> dict[str, Mistake]:
    """The known mistakes that apply to ``block``'s mode, for ``expect_array``.

    With the student's output ``got``, also the variants fitted to it (the partial skip); without it, only the
    fixed ones.
    """
    out = {}
    for key, message in MESSAGES.items():
        if variant(block, x, key) is None:
            continue
        out[key] = Mistake(message, lambda key=key: variant(block, x, key))
    if got is not None:
        fitted = _partial_skip_mistake(block, x, got)
        if fitted is not None:
            out["partial_skip"] = fitted
    return out
