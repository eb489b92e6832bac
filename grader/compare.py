"""Compare a student's array with the expected one, and name the mistake it matches.

``np.allclose`` is not enough (DESIGN.md): it broadcasts a (T, d) result against
(B=1, T, d), treats NaN leniently in hand-written comparisons and cannot see a float32
result at unit scale. :func:`expect_array` checks type, dtype, shape and finiteness
before values, and on a value mismatch computes what each known wrong variant would
have produced (:class:`Mistake`) and names the closest one that matches.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from .plugin import CheckFailure

#: Largest error map (rows, columns) kept for the report's heat map.
MAX_MAP = (64, 96)


@dataclass(frozen=True)
class Mistake:
    """A known wrong variant of the computation.

    Attributes:
        message: the mistake in the lesson's words, shown to the student.
        compute: returns what the wrong variant produces for the check's inputs.
        rtol: how close (relative to the largest expected magnitude) the submission must
            be to the variant to be named; loose only for precision mistakes (float32).
        nan_matches_any: where the variant is NaN/inf, accept any value from the student
            (e.g. a row that is fully masked gives NaN with -inf masking but a finite
            value with -1e9 masking: the same mistake either way).
    """

    message: str
    compute: Callable[[], np.ndarray]
    rtol: float = 1e-7
    nan_matches_any: bool = False


def _describe(value) -> str:
    if isinstance(value, np.ndarray):
        return f"a NumPy array of shape {value.shape} and dtype {value.dtype}"
    if isinstance(value, (list, tuple)):
        return f"a {type(value).__name__} of length {len(value)}"
    return f"{type(value).__name__} {value!r}"[:120]


def _same(got: np.ndarray, variant: np.ndarray, tol: float, nan_matches_any: bool = False) -> bool:
    """True when ``got`` equals ``variant`` within ``tol``, NaN/inf counted as equal in place."""
    if variant.shape != got.shape:
        return False
    got_bad, var_bad = ~np.isfinite(got), ~np.isfinite(variant)
    if nan_matches_any:
        ok = ~var_bad
        if got_bad[ok].any():
            return False
        if not ok.any() and not (got_bad & var_bad).any():
            return False  # the variant is all wildcard (e.g. T = 1): it would "match" anything
        return bool(np.all(np.abs(got[ok] - variant[ok]) <= tol))
    if not np.array_equal(got_bad, var_bad):
        return False
    ok = ~got_bad
    return bool(np.all(np.abs(got[ok] - variant[ok]) <= tol))


def diagnose(got: np.ndarray, expected: np.ndarray, mistakes: dict[str, Mistake],
             atol: float | None = None) -> str:
    """The message of the known mistake whose output ``got`` matches, else "".

    When several match, the closest wins. Variants that raise are ignored. With ``atol`` (the
    check's tolerance), a variant that would itself pass is ignored too: on these inputs it cannot
    be told from the right answer (no 1/sqrt(d_head) when the softmax is one-hot at x1000), so it
    explains no failure, yet the tolerance relative to a large scale would let it "match".
    """
    scale = float(np.max(np.abs(expected))) if expected.size else 1.0
    scale = max(scale, 1.0)
    best, best_err = "", np.inf
    for mistake in mistakes.values():
        try:
            variant = np.asarray(mistake.compute(), dtype=np.float64)
        except Exception:  # noqa: BLE001 - a variant that cannot be computed here names nothing
            continue
        if atol is not None and _same(expected, variant, atol):
            continue
        if not _same(got, variant, max(mistake.rtol * scale, 1e-12), mistake.nan_matches_any):
            continue
        finite = np.isfinite(got) & np.isfinite(variant)
        err = float(np.max(np.abs(got[finite] - variant[finite]), initial=0.0))
        if err < best_err:
            best, best_err = mistake.message, err
    return best


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


def expect_array(got, expected: np.ndarray, *, what: str, atol: float = 1e-6,
                 mistakes: dict[str, Mistake] | None = None) -> None:
    """Fail the check unless ``got`` is a float64 array equal to ``expected`` within ``atol``.

    Args:
        got: what the submission returned (already decoded from the sandbox).
        expected: float64 truth, computed by PyTorch in the test.
        what: the call in words, e.g. ``"multi_head_attention(x, ..., n_heads=6)"``.
        atol: largest allowed absolute error (DESIGN.md: 1e-6 on float64).
        mistakes: known wrong variants to try when the values differ.

    Raises:
        CheckFailure: with feedback (max abs error, worst index, expected vs got), the
            diagnosis, and an ``error_map`` for the report's heat map.
    """
    mistakes = mistakes or {}
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
        raise CheckFailure(
            f"{what} returned {bad} NaN or infinite value(s) out of {got.size} where the expected "
            f"values are all finite (largest input magnitude matters here).",
            diagnose(got, expected, mistakes, atol), _error_map(np.where(finite, err, np.inf), what),
        )
    max_err = float(err.max()) if err.size else 0.0
    if max_err <= atol:
        return
    worst = np.unravel_index(int(np.argmax(err)), err.shape)
    raise CheckFailure(
        f"{what}: max abs error {max_err:.3g} (allowed {atol:g}) at index {tuple(int(i) for i in worst)}: "
        f"expected {expected[worst]:.8g}, got {got[worst]:.8g}; "
        f"{int((err > atol).sum())} of {err.size} values are off.",
        diagnose(got, expected, mistakes, atol), _error_map(err, what),
    )
