"""Compare a student's array with the expected one, and name the mistake it matches.

``np.allclose`` is not enough (DESIGN.md): it broadcasts a (T, d) result against
(B=1, T, d), treats NaN leniently in hand-written comparisons and cannot see a float32
result at unit scale. :func:`expect_array` checks type, dtype, shape and finiteness
before values, and on a value mismatch computes what each known wrong variant would
have produced (:class:`Mistake`) and names the one the output matches, by this rule.

**The naming rule** (DESIGN.md, "a wrong name is worse than none"). With ``D = max|got - expected|``
(the deviation; infinite where ``got`` is NaN or inf and ``expected`` is not), ``S = max(1,
max|expected|)`` and, for a variant, its residual ``r = max|got - variant|``:

1. A float64 variant *explains* the output when ``r <= rtol * S`` (:data:`FLOAT64_ROUNDOFF`, 1e-9: float64
   round-off of these computations; real NumPy reimplementations of the variants reach 1e-16 to 1e-15 of S,
   measured on the known-wrong corpus) **and** ``r <= FAR_BETTER * D`` (1e-3): the variant reproduces the
   output a thousand times better than the right answer does. A small deviation (1e-6 in a softmax's
   denominator, a block off by 1e-5) is explained by no variant: the scale bound alone, relative to a large S,
   let a variant 5e-4 away "match" such an output.
2. A variant that would itself pass the check (``max|variant - expected| <= atol``) explains nothing: on
   these inputs it cannot be told from the right answer (no 1/sqrt(d_head) when the softmax is one-hot at
   x1000).
3. **float32** (``Mistake.precision == "float32"``) is named on float32 evidence only. Decisive: every finite
   value of ``got`` is exactly a float32 number (``got == got.astype(float32)``) while most expected values
   are not -- a float64 result lands on a float32 number by chance with probability about 2^-29 per value,
   so this is proof that the result went through float32 -- **and** ``D`` is of the size of float32
   round-off here (at most :data:`FLOAT32_SPREAD` times the torch float32 variant's own deviation), so
   float32 is the whole story, not float32 on top of a bigger mistake. Or the general test (1) without the
   float64 scale bound: the float32 variant reproduces the output a thousand times better than the right
   answer. Reproduction alone is not decisive (two float32 paths differ from each other about as much as
   from float64: a residual near ``D`` says nothing), which is why 1e-6 added to a softmax's denominator,
   whose output is no float32 number, no longer reads as float32.
4. Unique: when two mistakes with different messages both explain the output, or another variant's residual
   is within :data:`ABOUT_AS_GOOD` (10x) of the best one's, these inputs cannot tell them apart: name neither.
5. Combinations: a :class:`KnownMistakes` may carry pairs of its mistakes. They are tried only when no single
   mistake explains the output (an ambiguous single names nothing and stops there), and only pairs of two
   mistakes that can each be computed here and would not pass alone, one of which already brings the variant
   clearly closer to the output than the right answer is: its root sum of squares of ``got - variant`` is at
   most :data:`PAIR_SCREEN` (0.95) times the deviation's. For two mistakes with independent effects the larger
   one alone leaves only the smaller one's, at most 0.71 of the deviation; a mistake unrelated to the output,
   however small, adds its own error and stays near 1. Two large mistakes that interact (x @ W for Q, K, V and
   for w_out) can leave about 1 on some inputs: the pair is then missed on that check, not misnamed; on the
   corpus it was named on 12 of the 13 checks that showed both mistakes (13 without a screen, 8 at 0.9). The
   screen keeps the search fast: without it diagnosis took 6.8 s over the 52 corpus cases, with it 3.6 s.
   The same rule then names a pair only when it alone explains the output, with a message that says both.

A variant that raises, or returns another shape, explains nothing. Where a variant is NaN or inf, the
output must be NaN or inf in the same places, unless ``Mistake.nan_matches_any`` (a fully masked row is NaN
with -inf masking but finite with -1e9 masking: the same mistake either way). An output with no finite value
at all names nothing: NaN spreads through every later step, so any mistake that makes one NaN early makes the
whole output NaN, known or not (at x1000 an unstable softmax, scores cast to float16 that overflow, and a mask
of ``triu(ones) * -inf``, whose 0 * -inf is NaN, all give an attention that is NaN everywhere).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from .plugin import CheckFailure

#: Largest error map (rows, columns) kept for the report's heat map.
MAX_MAP = (64, 96)
#: A float64 variant reproduces the output when its residual is at most this times max(1, max|expected|).
FLOAT64_ROUNDOFF = 1e-9
#: ... and at most this fraction of the deviation max|got - expected| (the variant explains it far better).
FAR_BETTER = 1e-3
#: Another variant within this factor of the best one's residual does about as well: name neither.
ABOUT_AS_GOOD = 10.0
#: A pair is tried only when one of its mistakes alone leaves at most this fraction of the deviation (rule 5).
PAIR_SCREEN = 0.95
#: A float32 output is named float32 when its deviation is at most this times torch's float32 deviation.
FLOAT32_SPREAD = 10.0
#: Inputs at least this large get "(the inputs here are large ...)" beside a NaN/inf failure.
LARGE_INPUT = 100.0


@dataclass(frozen=True)
class Mistake:
    """A known wrong variant of the computation.

    Attributes:
        message: the mistake in the lesson's words, shown to the student.
        compute: returns what the wrong variant produces for the check's inputs.
        rtol: the largest residual max|got - variant|, relative to max(1, max|expected|), that counts as
            reproducing the output (float64 round-off, :data:`FLOAT64_ROUNDOFF`); unused for float32.
        nan_matches_any: where the variant is NaN/inf, accept any value from the student
            (e.g. a row that is fully masked gives NaN with -inf masking but a finite
            value with -1e9 masking: the same mistake either way).
        precision: ``"float64"``, or ``"float32"`` for the variant that computes in float32 (named on
            float32 evidence: see the module's rule 3).
    """

    message: str
    compute: Callable[[], np.ndarray]
    rtol: float = FLOAT64_ROUNDOFF
    nan_matches_any: bool = False
    precision: str = "float64"


class KnownMistakes(dict):
    """Known single mistakes (key -> :class:`Mistake`), and pairs of them tried when no single one explains
    the output: ``pairs`` maps ``(key_a, key_b)`` (keys of this dict) to the Mistake doing both."""

    def __init__(self, singles: dict[str, Mistake] | None = None,
                 pairs: dict[tuple[str, str], Mistake] | None = None):
        super().__init__(singles or {})
        self.pairs = dict(pairs or {})


def both(first: str, second: str) -> str:
    """The message of a pair of mistakes: it says both."""
    return f"two mistakes together: (1) {first}; (2) {second}"


def _describe(value) -> str:
    if isinstance(value, np.ndarray):
        return f"a NumPy array of shape {value.shape} and dtype {value.dtype}"
    if isinstance(value, (list, tuple)):
        return f"a {type(value).__name__} of length {len(value)}"
    return f"{type(value).__name__} {value!r}"[:120]


def _difference(got: np.ndarray, variant: np.ndarray, nan_matches_any: bool = False) -> np.ndarray | None:
    """``got - variant`` where both are finite (flat), or None where their NaN/inf places disagree.

    With ``nan_matches_any`` the variant's NaN/inf places accept any value of ``got``; a variant that is
    NaN/inf everywhere ``got`` is finite (e.g. T = 1 with a diagonal-blocking mask) would accept anything,
    so it matches nothing (None).
    """
    got_bad, var_bad = ~np.isfinite(got), ~np.isfinite(variant)
    if nan_matches_any:
        ok = ~var_bad
        if got_bad[ok].any() or (not ok.any() and not (got_bad & var_bad).any()):
            return None
    else:
        if not np.array_equal(got_bad, var_bad):
            return None
        ok = ~got_bad
    return got[ok] - variant[ok]


def _residual(got: np.ndarray, variant: np.ndarray, nan_matches_any: bool = False) -> float:
    """max|got - variant| where both are finite; inf when their NaN/inf places disagree (see the rule)."""
    diff = _difference(got, variant, nan_matches_any)
    return np.inf if diff is None else float(np.max(np.abs(diff), initial=0.0))


def _rss(diff: np.ndarray | None) -> float:
    """The root sum of squares of a difference (inf for None): the screen of rule 5."""
    return np.inf if diff is None else float(np.sqrt(np.sum(diff * diff)))


def _is_float32(a: np.ndarray) -> np.ndarray:
    """Where ``a`` holds a number that float32 represents exactly (bool array of ``a``'s shape)."""
    with np.errstate(over="ignore"):
        return a.astype(np.float32).astype(np.float64) == a


@dataclass
class _Fit:
    """How one variant compares with the student's output."""

    message: str
    variant: np.ndarray | None  # None: it raised, had another shape, or would itself pass
    residual: float = np.inf
    rss: float = np.inf  # root sum of squares of got - variant
    explains: bool = False
    precision: str = "float64"


def _fit(mistake: Mistake, got, expected, deviation: float, scale: float, atol: float | None) -> _Fit:
    """Compute ``mistake``'s variant and apply the module's rules 1-3 to it."""
    fit = _Fit(mistake.message, None, precision=mistake.precision)
    try:
        variant = np.asarray(mistake.compute(), dtype=np.float64)
    except Exception:  # noqa: BLE001 - a variant that cannot be computed here names nothing
        return fit
    if variant.shape != got.shape:
        return fit
    own = _residual(expected, variant)  # the variant's own deviation from the right answer
    float32_bits = mistake.precision == "float32" and _float32_evidence(got, expected, own, deviation)
    if atol is not None and own <= atol and not float32_bits:
        return fit  # rule 2: it would pass, so it explains no failure
    fit.variant = variant
    diff = _difference(got, variant, mistake.nan_matches_any)
    fit.residual, fit.rss = (np.inf if diff is None else float(np.max(np.abs(diff), initial=0.0))), _rss(diff)
    far_better = deviation > 0 and np.isfinite(fit.residual) and fit.residual <= FAR_BETTER * deviation
    if mistake.precision == "float32":
        fit.explains = float32_bits or far_better
    else:
        fit.explains = far_better and fit.residual <= mistake.rtol * scale
    return fit


def _float32_evidence(got, expected, own: float, deviation: float) -> bool:
    """Rule 3's decisive test: ``got`` is made of float32 numbers (``expected`` mostly is not), and its
    deviation is float32-sized (at most FLOAT32_SPREAD times torch's float32 one, ``own``)."""
    finite = np.isfinite(got)
    if not finite.any() or not np.isfinite(deviation) or not 0.0 < own < np.inf:
        return False
    if not _is_float32(got[finite]).all() or _is_float32(expected).mean() > 0.5:
        return False
    return deviation <= FLOAT32_SPREAD * own


def _choose(fits: list[_Fit]) -> tuple[str, bool]:
    """Rule 4 over ``fits``: (the message to name or "", whether any fit explains the output)."""
    explaining = [f for f in fits if f.explains]
    if not explaining:
        return "", False
    if len({f.message for f in explaining}) > 1:
        return "", True
    best = min(explaining, key=lambda f: f.residual)
    if best.precision == "float64" and any(
            f.message != best.message and f.variant is not None and f.residual <= ABOUT_AS_GOOD * best.residual
            for f in fits):
        return "", True
    return best.message, True


def diagnose(got: np.ndarray, expected: np.ndarray, mistakes: dict[str, Mistake],
             atol: float | None = None) -> str:
    """The message of the known mistake that explains ``got``, else "" (the module's naming rule).

    A variant is named only when it reproduces the output far better than the deviation itself: its
    residual max|got - variant| is at most ``rtol * max(1, max|expected|)`` (float64 round-off, 1e-9) and at
    most 1e-3 of max|got - expected|; and only when no other mistake does about as well (another one that
    also explains the output, or a residual within 10x of the best: name neither). float32 is named on
    float32 evidence only (rule 3: the output's values are float32 numbers and its deviation float32-sized,
    or the float32 variant reproduces it 1e3 times better than the right answer). With ``atol`` (the check's
    tolerance), a variant that would itself pass is ignored: it cannot be told from the right answer here.
    Variants that raise are ignored, and an output that is NaN or inf everywhere names nothing. When
    ``mistakes`` is a :class:`KnownMistakes` with ``pairs`` and no single mistake explains the output, pairs
    are tried the same way (rule 5).

    Args:
        got: the student's float64 array (may hold NaN/inf); expected: the truth, finite, same shape.
        mistakes: key -> :class:`Mistake`.
        atol: the check's absolute tolerance, or None.
    Returns:
        The named mistake's message (a pair's says both), or "".
    """
    got = np.asarray(got, dtype=np.float64)
    expected = np.asarray(expected, dtype=np.float64)
    if got.size and not np.isfinite(got).any():
        return ""  # NaN everywhere: no signature of any one mistake (module docstring)
    scale = max(1.0, float(np.max(np.abs(expected[np.isfinite(expected)]), initial=0.0)))
    deviation = _residual(got, expected)
    fits = {key: _fit(m, got, expected, deviation, scale, atol) for key, m in mistakes.items()}
    name, explained = _choose(list(fits.values()))
    if explained:
        return name
    usable = {key for key, f in fits.items() if f.variant is not None}
    closer = {key for key in usable if fits[key].rss <= PAIR_SCREEN * _rss(_difference(got, expected))}
    pairs = {key: m for key, m in getattr(mistakes, "pairs", {}).items()
             if set(key) <= usable and set(key) & closer}
    return _choose([_fit(m, got, expected, deviation, scale, atol) for m in pairs.values()])[0]


def _error_map(err: np.ndarray, what: str) -> dict:
    """2-D |error| for the heat map: (token, feature) of the batch element with the worst error.

    ``error_map_of`` names the student's function (from ``what``, e.g. ``"softmax(x)"``): the
    report draws one map per function, as the checks of one function show the same mistake.
    """
    grid = err
    axes = ["token", "feature"]
    if grid.ndim == 0:  # a scalar result (e.g. a parameter count): a 1 x 1 map
        grid, axes = grid.reshape(1, 1), ["", ""]
    elif grid.ndim == 1:
        grid, axes = grid[None, :], ["", "index"]
    while grid.ndim > 2:
        worst = np.nan_to_num(grid, nan=np.inf).reshape(grid.shape[0], -1).max(axis=1)
        b = int(np.argmax(worst))
        if grid.ndim == 3:
            axes = [f"token (batch {b})", "feature"]
        grid = grid[b]
    grid = grid[: MAX_MAP[0], : MAX_MAP[1]]
    return {"error_map": np.where(np.isfinite(grid), grid, np.nan).tolist(), "error_map_axes": axes,
            "error_map_of": what.split("(")[0].strip()}


def layout_diagnosis(got, shape: tuple[int, ...]) -> str:
    """The known mistake behind a result of the wrong dtype or shape ("" when none fits).

    For checks that look only at the layout (``expect_array`` uses it too): a float32 result,
    a dropped size-1 dimension (the batch, or e.g. T = 1 after ``np.squeeze``), swapped axes.
    """
    if not isinstance(got, np.ndarray):
        return ""
    shape = tuple(shape)
    if got.dtype == np.float32:
        return ("float32 cast: the result was computed or returned in float32, which keeps only "
                "about 7 significant digits; keep every array float64.")
    if got.shape == shape:
        return ""
    if shape and shape[0] == 1 and got.shape == shape[1:]:
        return "The batch dimension was dropped: keep the (B, T, d_model) layout even when B = 1."
    if len(got.shape) < len(shape) and got.shape == tuple(s for s in shape if s != 1):
        return ("A dimension of size 1 was dropped (np.squeeze or indexing with [0]?): keep the "
                "(B, T, d_model) layout even when B = 1 or T = 1.")
    if sorted(got.shape) == sorted(shape):
        return "The axes are in the wrong order (a transpose is missing or extra)."
    return ""


def _digits_apart(a: float, b: float, start: int = 8) -> int:
    """The fewest significant digits (at least ``start``, at most 17) at which ``a`` and ``b`` print
    differently, so "expected 2900.2102, got 2900.2102" cannot happen (``start`` when they are equal)."""
    p = start
    while p < 17 and a != b and f"{a:.{p}g}" == f"{b:.{p}g}":
        p += 1
    return p


def _above(err: float, atol: float) -> str:
    """``err`` with enough digits (3 to 17) that it reads as more than ``atol`` when it is:
    never "max abs error 1e-06 (allowed 1e-06)"."""
    p = 3
    while p < 17 and err > atol and float(f"{err:.{p}g}") <= atol:
        p += 1
    return f"{err:.{p}g}"


def _fail(feedback: str, diagnosis: str, findings, details: dict) -> CheckFailure:
    """The CheckFailure of a value mismatch: the probes' findings stand in when no mistake is named."""
    if not diagnosis and findings is not None:
        diagnosis = "; ".join(findings())
        if diagnosis:
            details["diagnosis_from"] = "findings"  # not a named mistake (grader/corpus.py tells them apart)
    return CheckFailure(feedback, diagnosis, details)


def expect_array(got, expected: np.ndarray, *, what: str, atol: float = 1e-6,
                 mistakes: dict[str, Mistake] | Callable[[], dict[str, Mistake]] | None = None,
                 findings: Callable[[], list[str]] | None = None,
                 input_scale: float | None = None) -> None:
    """Fail the check unless ``got`` is a float64 array equal to ``expected`` within ``atol``.

    Args:
        got: what the submission returned (already decoded from the sandbox).
        expected: float64 truth, computed by PyTorch in the test.
        what: the call in words, e.g. ``"multi_head_attention(x, ..., n_heads=6)"``.
        atol: largest allowed absolute error (DESIGN.md: 1e-6 on float64).
        mistakes: known wrong variants to try when the values differ (a :class:`KnownMistakes` may
            carry pairs); named by :func:`diagnose`'s rule. A function returning them is called only
            then (a table with its pairs costs a few milliseconds to build; most checks pass).
        findings: called only when the values fail and no mistake is named: sentences (e.g. the
            behavioural probes' findings) that become the diagnosis, joined with "; ".
        input_scale: the largest input magnitude of the call, when the caller knows it; a NaN/inf
            failure says the inputs were large when it is at least :data:`LARGE_INPUT` (without it, when
            the expected values are that large: they come from large inputs).

    Raises:
        CheckFailure: with feedback (max abs error, worst index, expected vs got), the
            diagnosis, and an ``error_map`` for the report's heat map.
    """
    def known() -> dict[str, Mistake]:
        return (mistakes() if callable(mistakes) else mistakes) or {}

    expected = np.asarray(expected, dtype=np.float64)
    if not isinstance(got, np.ndarray):
        raise CheckFailure(f"{what} returned {_describe(got)}; expected a NumPy array of shape "
                           f"{expected.shape} and dtype float64.")
    if got.dtype != np.float64:
        raise CheckFailure(f"{what} returned dtype {got.dtype}; expected float64.",
                           layout_diagnosis(got, expected.shape))
    if got.shape != expected.shape:
        raise CheckFailure(f"{what} returned shape {got.shape}; expected {expected.shape}.",
                           layout_diagnosis(got, expected.shape))
    finite = np.isfinite(got)
    err = np.abs(got - expected)
    if not finite.all():
        bad = int((~finite).sum())
        if input_scale is None:
            input_scale = float(np.max(np.abs(expected), initial=0.0))
        large = f" (the inputs here are large, about {input_scale:.3g} in magnitude)" \
            if input_scale >= LARGE_INPUT else ""
        raise _fail(
            f"{what} returned {bad} NaN or infinite value(s) out of {got.size} where the expected "
            f"values are all finite{large}.",
            diagnose(got, expected, known(), atol), findings, _error_map(np.where(finite, err, np.inf), what),
        )
    max_err = float(err.max()) if err.size else 0.0
    if max_err <= atol:
        return
    worst = np.unravel_index(int(np.argmax(err)), err.shape)
    e, g = float(expected[worst]), float(got[worst])
    p = _digits_apart(e, g)
    raise _fail(
        f"{what}: max abs error {_above(max_err, atol)} (allowed {atol:g}) at index "
        f"{tuple(int(i) for i in worst)}: expected {e:.{p}g}, got {g:.{p}g}; "
        f"{int((err > atol).sum())} of {err.size} values are off.",
        diagnose(got, expected, known(), atol), findings, _error_map(err, what),
    )
