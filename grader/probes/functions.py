"""Probes of exercise 3's small functions: ``softmax``, ``layer_norm`` and ``gelu`` (issue 10).

Each probe calls the student's own function on a designed input and checks a property that the contract
(exercises/exercise3/README.md) implies, never a reference output:

- softmax: entries positive, summing to 1 along the requested axis; adding a constant changes nothing.
- layer_norm: with weight 1 and bias 0 the rows have mean 0 and the *biased* variance var / (var + eps)
  (the README's formula, as ``torch.nn.functional.layer_norm``); weight and bias act as a scale and a
  shift; the ``eps`` argument is the one used.
- gelu: finite, 0 at 0, increasing for x > 0, close to x for large x and to 0 for very negative x; exactly
  ReLU or exactly the identity is recognised. Which GELU formula was used (tanh, exact erf, x·sigmoid(1.702x))
  is not a probe's question: they differ by ~1e-3 and share every such property, so only computing the
  variants tells them apart, which is the judge's job (exercises/exercise3/tests/hidden/mistakes.py).

The layer-norm helpers here (:func:`layer_norm_verdict`, :func:`affine_verdict`) also serve
:mod:`grader.probes.block`, which reads the block's own layer norms through designed weights.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable

import numpy as np

from . import Finding
from .memo import Memo

SEED = 20_240_610

#: The contract's layer-norm eps (exercises/exercise3/README.md).
EPS = 1e-5

#: Variances of the designed layer-norm rows: one ordinary row, then rows so small that eps matters.
LN_VARIANCES = (4.0, 1e-4, 1e-6, 1e-8)
_LN_MEANS = (1.0, 0.5, -0.3, 0.2)


def _designs() -> dict[str, np.ndarray]:
    rng = np.random.default_rng(SEED)
    z = rng.standard_normal((len(LN_VARIANCES), 8))
    z = (z - z.mean(-1, keepdims=True)) / z.std(-1, keepdims=True)  # mean 0, biased variance 1 per row
    rows = np.sqrt(np.array(LN_VARIANCES))[:, None] * z + np.array(_LN_MEANS)[:, None]  # (4, 8)
    return {
        "softmax_x": rng.uniform(-3.0, 3.0, (2, 3, 4)),
        "ln_rows": rows,
        "ln_weight": rng.uniform(0.5, 2.0, 8),
        "ln_bias": rng.uniform(-1.0, 1.0, 8),
        "gelu_u": np.array([[-10.0, -6.0, -3.0, -1.0, -0.5, 0.0], [0.5, 1.0, 2.0, 3.0, 6.0, 10.0]]),
    }


#: The designed inputs (fixed seed). Copied before every call, so a function that writes into its input
#: cannot change them.
DESIGNS = _designs()


# ------------------------------------------------------------------------------------------- softmax

def probe_softmax_normalisation(softmax: Callable, *, memo: Memo | None = None) -> Finding | None:
    """softmax(x, axis) on a (2, 3, 4) input in [-3, 3] for axis = -1, 0 and 1 (3 calls).

    A correct softmax returns positive entries that sum to 1 along ``axis`` (to round-off; 1e-9 allowed).
    Findings, component ``"softmax"``: entries <= 0; "softmax(x, axis=0) sums to 1 along axis 2 instead"
    (and, when axis 0 and 1 both normalise the last axis, "the axis argument is ignored"); sums that are
    off along the right axis, with the numbers ("sum to 0.999999 along axis 2 instead of 1").
    """
    memo = memo or Memo()
    x = DESIGNS["softmax_x"]
    outs = {a: memo.get(("softmax", a), softmax, x, axis=a, shape=x.shape) for a in (-1, 0, 1)}
    if any(o is None for o in outs.values()):
        return None
    worst = min(outs, key=lambda a: outs[a].min())
    if outs[worst].min() <= 0:
        return Finding("softmax_normalisation", "softmax",
                       f"softmax(x, axis={worst}) returned an entry {outs[worst].min():.4g}: softmax entries "
                       "are exp(x) / sum(exp(x)), always positive")
    last = {a: _max_dev(outs[a].sum(axis=-1)) <= 1e-9 for a in (0, 1)}
    if last[0] and last[1]:
        return Finding("softmax_normalisation", "softmax (axis)",
                       "softmax(x, axis=0) and softmax(x, axis=1) both sum to 1 along the last axis, not "
                       "along the axis asked for: the axis argument is ignored")
    for a, out in outs.items():
        dev = _max_dev(out.sum(axis=a))
        if dev <= 1e-9:
            continue
        other = [b for b in (0, 1, 2) if b != a % 3 and _max_dev(out.sum(axis=b)) <= 1e-9]
        if other:
            return Finding("softmax_normalisation", "softmax (axis)",
                           f"softmax(x, axis={a}) sums to 1 along axis {other[0]} instead of axis {a % 3}")
        sums = out.sum(axis=a)
        return Finding("softmax_normalisation", "softmax",
                       f"softmax(x, axis={a}) entries sum to {sums.min():.9g} .. {sums.max():.9g} along axis "
                       f"{a % 3} instead of 1 (off by up to {dev:.2g})")
    return None


def probe_softmax_shift(softmax: Callable, *, memo: Memo | None = None) -> Finding | None:
    """softmax(x + 1000, axis=-1) against softmax(x, axis=-1) (2 calls, one shared with the normalisation probe).

    softmax is unchanged by adding a constant along the axis (it cancels in exp(x - c) / sum(exp(x - c))),
    so a correct one returns the same array; exp(1000) overflows float64 unless the maximum is subtracted
    first (README). Findings, component ``"softmax (stability)"``: NaN/inf at x + 1000 while x gives finite
    values; or a finite result that differs, with the largest difference.
    """
    memo = memo or Memo()
    x = DESIGNS["softmax_x"]
    base = memo.get(("softmax", -1), softmax, x, axis=-1, shape=x.shape)
    shifted = memo.get(("softmax", "+1000"), softmax, x + 1000.0, axis=-1, shape=x.shape, raw=True)
    if base is None or shifted is None:
        return None
    if not np.isfinite(shifted).all():
        return Finding("softmax_shift", "softmax (stability)",
                       f"softmax(x + 1000) has {np.size(shifted) - np.isfinite(shifted).sum()} NaN/inf entries "
                       "where softmax(x) is finite: adding a constant must not change a softmax, and exp(1000) "
                       "overflows unless the maximum along the axis is subtracted first")
    diff = np.abs(shifted - base).max()
    if diff > 1e-9:
        return Finding("softmax_shift", "softmax (stability)",
                       f"softmax(x + 1000) differs from softmax(x) by up to {diff:.3g}: adding a constant to "
                       "every entry must not change a softmax")
    return None


def _max_dev(sums: np.ndarray) -> float:
    return float(np.abs(sums - 1.0).max())


# ---------------------------------------------------------------------------------------- layer norm

@dataclass(frozen=True)
class Verdict:
    """What a layer norm did wrong, in words: ``kind`` is one of ``"mean"``, ``"variance"``,
    ``"unbiased"``, ``"eps"``, ``"eps_outside"``, ``"unexplained"`` (statistics) or ``"affine"``."""

    kind: str
    text: str


def layer_norm_verdict(rows: np.ndarray, out: np.ndarray, eps: float = EPS) -> Verdict | None:
    """Judge ``out``, a layer norm (weight 1, bias 0) of :data:`DESIGNS` ``["ln_rows"]``, by its row statistics.

    ``rows`` (n, d) has the variances :data:`LN_VARIANCES`; ``out`` is its normalised version, same shape.
    A correct layer norm (README: ``(x - mean) / sqrt(var + eps)``, biased var) gives rows of mean 0 and
    variance ``var / (var + eps)``. From the small-variance rows the eps is inferred both ways:
    ``var / q - var`` (inside the square root) and ``sqrt(var / q) - sqrt(var)`` (outside), q the output
    variance; a value counts when it is the same (within 5 %) on every small row. Returns None when the rows
    are as the contract says (eps within 5 % of ``eps``), else the first thing that is not.
    """
    d = rows.shape[-1]
    v, q = rows.var(axis=-1), out.var(axis=-1)
    mean = np.abs(out.mean(axis=-1)).max()
    if mean > 1e-6 * max(1.0, float(np.sqrt(q.max()))):
        return Verdict("mean", f"rows came out with mean up to {mean:.3g} instead of 0")
    biased, unbiased = v[0] / (v[0] + eps), v[0] / (v[0] * d / (d - 1) + eps)
    if abs(q[0] - unbiased) <= 1e-3 < abs(q[0] - biased):
        return Verdict("unbiased", f"a row of variance {v[0]:.3g} came out with variance {q[0]:.4f} = (d-1)/d "
                                   f"for d = {d}: the variance divides by d - 1, not by d (biased, as torch)")
    if abs(q[0] - biased) > 1e-3:
        return Verdict("variance", f"a row of variance {v[0]:.3g} came out with variance {q[0]:.4g} "
                                   f"instead of {biased:.4g} = var / (var + eps)")
    small = v <= 1e-3
    inside, outside = v[small] / q[small] - v[small], np.sqrt(v[small] / q[small]) - np.sqrt(v[small])
    if np.all(np.abs(inside - eps) <= 0.05 * eps):
        return None
    where = f"rows of variance {v[small].max():.0e} to {v[small].min():.0e}"
    if _same(inside):
        return Verdict("eps", f"{where} came out normalised as with eps = {np.median(inside):.2g} inside the "
                              f"square root, not eps = {eps:g}")
    if _same(outside):
        return Verdict("eps_outside", f"{where} came out divided by sqrt(var) + {np.median(outside):.2g}: eps is "
                                      f"added outside the square root, not inside, sqrt(var + eps)")
    i = int(np.flatnonzero(small)[-1])
    return Verdict("unexplained", f"a row of variance {v[i]:.0e} came out with variance {q[i]:.4g} instead of "
                                  f"{v[i] / (v[i] + eps):.4g} = var / (var + eps)")


def _same(values: np.ndarray) -> bool:
    """One value explains every row: all within 5 % of each other, or all ~0 (eps = 0)."""
    if np.all(np.abs(values) <= 1e-12):
        return True
    return bool(np.all(values > 0) and values.max() <= 1.05 * values.min())


def affine_verdict(plain: np.ndarray, scaled: np.ndarray, weight: np.ndarray, bias: np.ndarray,
                   subject: str = "layer_norm(x, weight, bias)", rtol: float = 1e-9) -> Verdict | None:
    """Judge a layer norm's ``scaled`` output (given ``weight``, ``bias``) against its ``plain`` one (1, 0).

    The contract's ``... * weight + bias`` makes ``scaled == weight * plain + bias`` (to ``rtol`` of the
    scale: round-off for a direct call, 1e-6 for outputs read through a block). Returns None when it is,
    else which of weight and bias was left out (or that neither explains it, with the largest
    difference); ``subject`` starts the sentence.
    """
    tol = rtol * max(1.0, float(np.abs(scaled).max()))
    err = float(np.abs(scaled - (weight * plain + bias)).max())
    if err <= tol:
        return None
    for guess, returned, left_out in (
            (plain, "the same as with weight 1 and bias 0", "weight and bias are"),
            (weight * plain, "weight * (its output with weight 1, bias 0), without the bias", "bias is"),
            (plain + bias, "(its output with weight 1, bias 0) + bias, without the weight", "weight is")):
        if np.abs(scaled - guess).max() <= tol:
            return Verdict("affine", f"{subject} returned {returned}: the {left_out} not applied")
    return Verdict("affine", f"{subject} differs from weight * (its output with weight 1, bias 0) + bias by up "
                             f"to {err:.3g}")


def _ln_outputs(layer_norm: Callable, memo: Memo) -> tuple:
    rows = DESIGNS["ln_rows"].reshape(2, 2, -1)  # (2, 2, 8): normalised over the last axis only
    ones, zeros = np.ones(rows.shape[-1]), np.zeros(rows.shape[-1])
    plain = memo.get(("ln", "plain"), layer_norm, rows, ones, zeros, shape=rows.shape)
    return rows, plain


def probe_layer_norm_statistics(layer_norm: Callable, *, memo: Memo | None = None) -> Finding | None:
    """layer_norm(rows, 1, 0) on four (2, 2, 8) rows of variance 4, 1e-4, 1e-6, 1e-8 (1 call).

    A correct layer norm gives rows of mean 0 and biased variance var / (var + 1e-5): ~1 for variance 4,
    0.909, 0.0909 and 0.001 for the small rows. The finding (component ``"layer_norm"``) says what came out,
    from :func:`layer_norm_verdict`: mean not 0, variance (d-1)/d (unbiased variance), eps of another value,
    eps added outside the square root (``sqrt(var) + eps``), or the numbers.
    """
    memo = memo or Memo()
    rows, plain = _ln_outputs(layer_norm, memo)
    if plain is None:
        return None
    verdict = layer_norm_verdict(rows.reshape(4, -1), plain.reshape(4, -1))
    if verdict is None:
        return None
    return Finding("layer_norm_statistics", f"layer_norm ({verdict.kind})",
                   f"layer_norm with weight 1 and bias 0: {verdict.text}")


def probe_layer_norm_affine(layer_norm: Callable, *, memo: Memo | None = None) -> Finding | None:
    """layer_norm(rows, weight, bias) with weight in [0.5, 2] and bias in [-1, 1], per feature (1 more call).

    The contract's ``... * weight + bias`` makes it weight * layer_norm(rows, 1, 0) + bias exactly; the
    finding (component ``"layer_norm (weight and bias)"``) says which was not applied (see
    :func:`affine_verdict`).
    """
    memo = memo or Memo()
    rows, plain = _ln_outputs(layer_norm, memo)
    w, b = DESIGNS["ln_weight"], DESIGNS["ln_bias"]
    scaled = memo.get(("ln", "affine"), layer_norm, rows, w, b, shape=rows.shape)
    if plain is None or scaled is None:
        return None
    verdict = affine_verdict(plain, scaled, w, b)
    return None if verdict is None else Finding("layer_norm_affine", "layer_norm (weight and bias)", verdict.text)


def probe_layer_norm_eps_argument(layer_norm: Callable, *, memo: Memo | None = None) -> Finding | None:
    """layer_norm(rows, 1, 0, eps=0.1) (1 more call); runs only when the default call is as the contract says.

    With eps = 0.1 the small rows must come out as with eps 0.1 (variance var / (var + 0.1)). The finding
    (component ``"layer_norm (eps argument)"``): they come out as with the default 1e-5, so ``eps`` is not
    used; or as with another eps, with its value.
    """
    memo = memo or Memo()
    rows, plain = _ln_outputs(layer_norm, memo)
    if plain is None or layer_norm_verdict(rows.reshape(4, -1), plain.reshape(4, -1)) is not None:
        return None
    ones, zeros = np.ones(rows.shape[-1]), np.zeros(rows.shape[-1])
    big = memo.get(("ln", "eps=0.1"), layer_norm, rows, ones, zeros, eps=0.1, shape=rows.shape)
    if big is None or layer_norm_verdict(rows.reshape(4, -1), big.reshape(4, -1), eps=0.1) is None:
        return None
    if layer_norm_verdict(rows.reshape(4, -1), big.reshape(4, -1), eps=EPS) is None:
        return Finding("layer_norm_eps_argument", "layer_norm (eps argument)",
                       "layer_norm(x, 1, 0, eps=0.1) normalises rows of small variance exactly as with the "
                       "default eps = 1e-05: the eps argument is not used")
    return Finding("layer_norm_eps_argument", "layer_norm (eps argument)",
                   "layer_norm(x, 1, 0, eps=0.1): " + layer_norm_verdict(
                       rows.reshape(4, -1), big.reshape(4, -1), eps=0.1).text)


# ---------------------------------------------------------------------------------------------- gelu

def activation_kind(u: np.ndarray, g: np.ndarray) -> str | None:
    """``"ReLU"`` when ``g`` is exactly max(u, 0), ``"identity"`` when exactly u, else None (to 1e-12)."""
    if np.abs(g - np.maximum(u, 0.0)).max() <= 1e-12:
        return "ReLU"
    if np.abs(g - u).max() <= 1e-12:
        return "identity"
    return None


def probe_gelu(gelu: Callable, *, memo: Memo | None = None) -> Finding | None:
    """gelu on a (2, 6) grid u = -10, -6, -3, -1, -0.5, 0, 0.5, 1, 2, 3, 6, 10 (1 call).

    Every GELU (x·Phi(x) and its tanh and sigmoid approximations) is 0 at 0, increasing for x > 0, within
    1e-3 of x at x >= 6 and of 0 at x = -10, and is neither ReLU (GELU(-0.5) < 0) nor the identity; and
    gelu(0.5) + gelu(-0.5) = 0.5 (Phi(0.5) - Phi(-0.5)) = 0.1915 (x·Phi(x), Hendrycks & Gimpel 2016; the tanh
    approximation gives 0.19144, the sigmoid one 0.2008), checked to 10 %: a wrong constant inside the tanh
    (sqrt(2·pi) for sqrt(2/pi)) or x·sigmoid(x) misses it by far. A gelu of the README's tanh form with other
    constants (0.0447 for 0.044715) has them read back (:func:`_tanh_constants`). The finding (component ``"gelu"``) names
    exactly ReLU or exactly the identity, else the first property that fails with its numbers. It cannot
    tell tanh GELU from the exact erf GELU or the sigmoid approximation (a variant's job: see the module
    docstring).
    """
    memo = memo or Memo()
    u = DESIGNS["gelu_u"]
    g = memo.get("gelu", gelu, u, shape=u.shape)
    if g is None:
        return None
    u, g = u.ravel(), g.ravel()
    kind = activation_kind(u, g)
    if kind == "ReLU":
        return Finding("gelu", "gelu", f"gelu is exactly ReLU: gelu(-0.5) = {g[4]:g} and gelu(0.5) = {g[6]:g}; "
                                       "GELU is x·Phi(x), slightly negative for x < 0")
    if kind == "identity":
        return Finding("gelu", "gelu", "gelu returns its input unchanged (gelu(-3) = -3): no activation")
    zero, pos = g[u == 0.0][0], u > 0
    if abs(zero) > 1e-12:
        return Finding("gelu", "gelu", f"gelu(0) = {zero:.4g}: every GELU is 0 at 0")
    if np.any(np.diff(g[pos]) <= 0):
        return Finding("gelu", "gelu", f"gelu is not increasing for x > 0: at x = {u[pos].tolist()} it gives "
                                       f"{np.round(g[pos], 4).tolist()}")
    far = (u >= 6.0) | (u <= -10.0)
    off = np.abs(g[far] - np.maximum(u[far], 0.0))
    if off.max() > 1e-3:
        i = int(np.argmax(off))
        return Finding("gelu", "gelu", f"gelu({u[far][i]:g}) = {g[far][i]:.6g}: far from 0 a GELU is within "
                                       "1e-3 of max(x, 0)")
    read = _tanh_constants(u, g)
    if read is not None:
        c, a = read
        return Finding("gelu", "gelu", f"your gelu is 0.5 x (1 + tanh(c (x + a x^3))) with c = {c:.7g} and a = {a:.7g} "
                                       "(read back from gelu(0.5), gelu(1), gelu(2), gelu(3)); GPT-2's tanh "
                                       f"approximation has c = sqrt(2/pi) = {_TANH_C:.7g} and a = {_TANH_A:g}")
    even = float(g[u == 0.5][0] + g[u == -0.5][0])
    if abs(even - _GELU_EVEN_HALF) > 0.1 * _GELU_EVEN_HALF:
        return Finding("gelu", "gelu", f"gelu(0.5) + gelu(-0.5) = {even:.4g}, where GELU = x·Phi(x) gives "
                                       f"0.5·(Phi(0.5) - Phi(-0.5)) = {_GELU_EVEN_HALF:.4g} (its approximations within "
                                       "5 %): gelu's curve near 0 is wrong")
    return None


#: 0.5 * (Phi(0.5) - Phi(-0.5)) = 0.5 * erf(0.5 / sqrt(2)): gelu(0.5) + gelu(-0.5) for GELU = x·Phi(x).
_GELU_EVEN_HALF = 0.5 * math.erf(0.5 / math.sqrt(2.0))
#: The constants of the tanh approximation in the README's formula (Hendrycks & Gimpel 2016; GPT-2).
_TANH_C, _TANH_A = math.sqrt(2.0 / math.pi), 0.044715


def _tanh_constants(u, g) -> tuple[float, float] | None:
    """(c, a) when ``g`` is exactly 0.5 u (1 + tanh(c (u + a u^3))) at u = 0.5, 1, 2, 3 with other constants
    than the README's by more than 1e-6 relative (and a != 0: x·sigmoid(k x) forms, a = 0, are the variants'
    to tell apart), else None.

    artanh(2 g / u - 1) / u = c + c a u^2 is linear in u^2: fitted on the four points, it must hold to 1e-9
    (a function of another form, such as the erf GELU, misses by far more), and then c and a are read off.
    """
    at = np.isin(u, (0.5, 1.0, 2.0, 3.0))
    y = 2.0 * g[at] / u[at] - 1.0
    if not np.all(np.abs(y) < 1.0):
        return None
    r, u2 = np.arctanh(y) / u[at], u[at] ** 2
    slope, c = np.polyfit(u2, r, 1)
    if np.abs(c + slope * u2 - r).max() > 1e-9 * abs(c) or c <= 0:
        return None
    a = slope / c
    if abs(a) <= 1e-9 or (abs(c - _TANH_C) <= 1e-6 * _TANH_C and abs(a - _TANH_A) <= 1e-6 * _TANH_A):
        return None  # within 1e-6 of the constants gelu moves by at most ~3e-7 (sqrt(2/pi) typed as 0.7978845)
    return float(c), float(a)


def run_functions(softmax: Callable | None = None, layer_norm: Callable | None = None,
                  gelu: Callable | None = None) -> list[Finding]:
    """Every probe of the functions given (at most 8 calls: softmax 4, layer_norm 3, gelu 1); findings in order."""
    memo = Memo()
    probes = []
    if softmax is not None:
        probes += [(probe_softmax_normalisation, softmax), (probe_softmax_shift, softmax)]
    if layer_norm is not None:
        probes += [(probe_layer_norm_statistics, layer_norm), (probe_layer_norm_affine, layer_norm),
                   (probe_layer_norm_eps_argument, layer_norm)]
    if gelu is not None:
        probes.append((probe_gelu, gelu))
    return [f for f in (probe(fn, memo=memo) for probe, fn in probes) if f is not None]


__all__ = ["Memo", "Verdict", "layer_norm_verdict", "affine_verdict", "activation_kind",
           "probe_softmax_normalisation", "probe_softmax_shift", "probe_layer_norm_statistics",
           "probe_layer_norm_affine", "probe_layer_norm_eps_argument", "probe_gelu", "run_functions"]
