"""expect_array and diagnose: type, dtype, shape and finiteness before values; naming the mistake.

Expected arrays are written by hand here; where np.allclose would have been fooled the test
shows it, so the reason for each check stays visible.
"""
import math
import re

import numpy as np
import pytest
import torch

from grader.compare import Mistake, diagnose, expect_array
from grader.plugin import CheckFailure

E = np.array([[1.0, 2.0], [3.0, 4.0]])


def failure(got, expected, **kw) -> CheckFailure:
    with pytest.raises(CheckFailure) as info:
        expect_array(got, expected, what="f(x)", **kw)
    return info.value


# ---------------------------------------------------------------- values
def test_passes_within_atol():
    got = E + np.array([[4e-7, -9e-7], [0.0, 5e-7]])
    assert expect_array(got, E, what="f(x)") is None
    assert expect_array(E.copy(), E, what="f(x)", atol=0) is None
    assert expect_array(np.zeros((0, 5)), np.zeros((0, 5)), what="f(x)") is None


def test_fails_beyond_atol_with_the_numbers():
    got = E.copy()
    got[1, 0] += 3e-6   # the worst entry
    got[0, 1] -= 2e-6
    fb = failure(got, E).feedback
    assert "max abs error 3e-06" in fb
    assert "(allowed 1e-06)" in fb
    assert "at index (1, 0)" in fb
    assert "expected 3, got 3.000003" in fb
    assert "2 of 4 values are off" in fb
    # A looser atol lets the same answer through.
    assert expect_array(got, E, what="f(x)", atol=1e-5) is None


def test_atol_is_absolute_at_large_magnitude():
    # 1e6 * (1 + 1e-9) differs by 1e-3 in absolute terms: fails at atol 1e-6 although rtol-style
    # comparisons (np.allclose's default rtol=1e-5) call it equal.
    expected = np.array([1e6, -2e6])
    got = expected * (1 + 1e-9)
    assert np.allclose(got, expected)
    assert "max abs error 0.002" in failure(got, expected).feedback


def test_the_values_shown_differ_when_the_numbers_do():
    # 8 significant digits printed "expected 2900.2102, got 2900.2102" for a 2e-6 error.
    expected = np.array([2900.2102, 1.0])
    got = expected + np.array([2e-6, 0.0])
    shown_e, shown_g = re.search(r"expected (\S+), got (\S+);", failure(got, expected).feedback).groups()
    assert shown_e != shown_g
    assert float(shown_g) - float(shown_e) == pytest.approx(2e-6, rel=1e-2)


def test_an_error_just_above_the_tolerance_reads_as_above_it():
    # "max abs error 1e-06 (allowed 1e-06)" read as a failure for passing code.
    got = E + np.array([[1.0000004e-6, 0.0], [0.0, 0.0]])
    fb = failure(got, E).feedback
    assert "(allowed 1e-06)" in fb
    assert float(re.search(r"max abs error (\S+) ", fb).group(1)) > 1e-6


def test_the_large_input_note_only_where_the_inputs_are_large():
    # A fully masked row is NaN at any scale: no word about large inputs there.
    got = E.copy()
    got[0] = np.nan
    assert "large" not in failure(got, E).feedback
    big = 1000.0 * E
    assert "the inputs here are large, about 4e+03 in magnitude" in failure(1000.0 * got, big).feedback
    assert "about 1e+03" in failure(got, E, input_scale=1000.0).feedback  # softmax(1000 x): outputs <= 1
    assert "large" not in failure(1000.0 * got, big, input_scale=2.0).feedback


def test_findings_become_the_diagnosis_when_no_mistake_is_named():
    calls = []

    def findings():
        calls.append(1)
        return ["changing token 5 moved your output at token 3", "b_out is not used"]

    expect_array(E.copy(), E, what="f(x)", findings=findings)
    assert calls == []  # computed only when the values fail
    assert failure(E + 0.5, E, findings=findings).diagnosis == (
        "changing token 5 moved your output at token 3; b_out is not used")
    nan = E.copy()
    nan[1, 1] = np.nan
    assert failure(nan, E, findings=findings).diagnosis.startswith("changing token 5")
    named = failure(WRONG_AXIS.copy(), RIGHT, mistakes=SOFTMAX_MISTAKES, findings=findings)
    assert named.diagnosis == "softmax over the wrong axis" and len(calls) == 2
    assert failure(E.astype(np.float32), E, findings=findings).diagnosis.startswith("float32 cast")
    assert failure(E + 0.5, E, findings=lambda: []).diagnosis == ""
    assert len(calls) == 2


# ---------------------------------------------------------------- type, dtype, shape
@pytest.mark.parametrize("got, word", [
    (E.tolist(), "list"),
    (tuple(E.tolist()), "tuple"),
    (None, "NoneType"),
    (3.5, "float"),
])
def test_not_an_array(got, word):
    fb = failure(got, E).feedback
    assert word in fb
    assert "expected a NumPy array of shape (2, 2) and dtype float64" in fb


def test_float32_is_caught_although_allclose_passes_it():
    got = E.astype(np.float32) / 3
    expected = E / 3
    assert np.allclose(got, expected)  # at unit scale float32 is "close"
    err = failure(got, expected)
    assert "dtype float32" in err.feedback
    assert "float32" in err.diagnosis


def test_other_dtypes_get_no_float32_diagnosis():
    err = failure(E.astype(np.int64), E)
    assert "dtype int64" in err.feedback
    assert err.diagnosis == ""


def test_dropped_batch_dimension_is_caught_although_allclose_passes_it():
    expected = np.array([[[0.5, -1.0], [2.0, 0.25], [1.5, 3.0]]])   # (B=1, T=3, d=2)
    got = expected[0]                                                # (T=3, d=2)
    assert np.allclose(got, expected)  # broadcasting hides the missing axis
    err = failure(got, expected)
    assert "shape (3, 2)" in err.feedback and "(1, 3, 2)" in err.feedback
    assert "batch dimension" in err.diagnosis


def test_swapped_axes_are_named():
    expected = np.arange(6.0).reshape(1, 3, 2)
    err = failure(expected.transpose(0, 2, 1).copy(), expected)
    assert "shape (1, 2, 3)" in err.feedback
    assert "wrong order" in err.diagnosis


def test_other_shape_mismatch_has_no_diagnosis():
    err = failure(np.zeros((2, 3)), E)
    assert "shape (2, 3)" in err.feedback and err.diagnosis == ""


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_nan_or_inf_fails_although_a_hand_written_tolerance_test_passes(bad):
    got = E.copy()
    got[0, 1] = bad
    err_max = np.max(np.abs(got - E))
    if np.isnan(bad):
        assert not err_max > 1e-6  # the classic `assert not err > tol` lets NaN through
    err = failure(got, E)
    assert "NaN" in err.feedback
    assert "1 NaN or infinite value(s) out of 4" in err.feedback
    grid = err.details["error_map"]
    assert math.isnan(grid[0][1])       # the bad entry shows as NaN in the heat map
    assert grid[1][1] == 0.0


# ---------------------------------------------------------------- the heat map
def test_error_map_is_the_token_by_feature_grid_of_the_worst_batch_element():
    expected = np.arange(24.0).reshape(2, 3, 4)   # (B=2, T=3, d=4)
    got = expected.copy()
    got[0, 1, 2] += 0.25                          # batch 0: the smaller error, not in the map
    got[1, 0, 3] += 0.5                           # batch 1 holds the worst error, as the message says
    details = failure(got, expected).details
    grid = np.array(details["error_map"])
    assert grid.shape == (3, 4)
    want = np.zeros((3, 4))
    want[0, 3] = 0.5
    np.testing.assert_allclose(grid, want, atol=1e-12)
    assert details["error_map_axes"] == ["token (batch 1)", "feature"]


def test_error_map_of_a_vector_is_one_row():
    details = failure(np.array([1.0, 2.5, 3.0]), np.array([1.0, 2.0, 3.0])).details
    assert details["error_map"] == [[0.0, 0.5, 0.0]]


def test_error_map_of_a_scalar_is_one_cell():
    # A scalar result (e.g. a parameter count as a 0-d array) must fail cleanly, not crash.
    err = failure(np.array(7077889.0), np.array(7077888.0))
    assert "max abs error 1" in err.feedback
    assert err.details["error_map"] == [[1.0]]


def test_error_map_is_capped_for_the_report():
    expected = np.zeros((1, 100, 200))
    details = failure(expected + 1.0, expected).details
    grid = details["error_map"]
    assert (len(grid), len(grid[0])) == (64, 96)


# ---------------------------------------------------------------- diagnosis
# Softmax of [[ln 1, ln 2, ln 3], [ln 3, ln 2, ln 1]], by hand. Over the last axis each row is
# k / (1 + 2 + 3); over axis 0 each column is (a, b) / (a + b): (1, 3) -> 1/4, 3/4;
# (2, 2) -> 1/2, 1/2; (3, 1) -> 3/4, 1/4.
X = np.log(np.array([[1.0, 2.0, 3.0], [3.0, 2.0, 1.0]]))
RIGHT = np.array([[1 / 6, 2 / 6, 3 / 6], [3 / 6, 2 / 6, 1 / 6]])
WRONG_AXIS = np.array([[1 / 4, 1 / 2, 3 / 4], [3 / 4, 1 / 2, 1 / 4]])


def test_hand_values_agree_with_torch():
    np.testing.assert_allclose(torch.softmax(torch.from_numpy(X), dim=-1).numpy(), RIGHT, atol=1e-15)
    np.testing.assert_allclose(torch.softmax(torch.from_numpy(X), dim=0).numpy(), WRONG_AXIS, atol=1e-15)


SOFTMAX_MISTAKES = {
    "no_exp": Mistake("forgot the exp", lambda: X / X.sum(axis=-1, keepdims=True)),
    "wrong_axis": Mistake("softmax over the wrong axis", lambda: WRONG_AXIS),
    "crashes": Mistake("a variant that cannot be computed", lambda: 1 / 0),
}


def test_expect_array_names_the_mistake_the_answer_matches():
    err = failure(WRONG_AXIS.copy(), RIGHT, mistakes=SOFTMAX_MISTAKES)
    assert err.diagnosis == "softmax over the wrong axis"
    assert "max abs error 0.25" in err.feedback  # |1/4 - 1/6| = 1/12, |3/4 - 1/2| = 1/4


def test_a_table_of_mistakes_given_as_a_function_is_built_only_for_a_failing_check():
    built = []

    def table():
        built.append(1)
        return SOFTMAX_MISTAKES

    expect_array(RIGHT.copy(), RIGHT, what="f(x)", mistakes=table)
    assert built == []  # passed: nothing to name, nothing built
    err = failure(WRONG_AXIS.copy(), RIGHT, mistakes=table)
    assert err.diagnosis == "softmax over the wrong axis" and built == [1]


def test_an_unknown_mistake_names_nothing():
    err = failure(RIGHT + 0.01, RIGHT, mistakes=SOFTMAX_MISTAKES)
    assert err.diagnosis == ""


def test_diagnose_names_the_variant_that_reproduces_the_output_whatever_the_order():
    expected = np.array([[0.5, 0.5], [0.5, 0.5]])
    got = np.array([[0.2, 0.3], [0.4, 0.1]])                # deviation 0.4
    exact = Mistake("exact", lambda: got.copy())
    near = Mistake("near", lambda: got + 5e-8)              # 5e-8 off: above float64 round-off (1e-9)
    far = Mistake("far", lambda: got + 1.0)
    assert diagnose(got, expected, {"near": near, "exact": exact, "far": far}) == "exact"
    assert diagnose(got, expected, {"exact": exact, "near": near}) == "exact"
    assert diagnose(got, expected, {"near": near, "far": far}) == ""
    assert diagnose(got, expected, {"far": far}) == ""
    assert diagnose(got, expected, {}) == ""
    assert diagnose(got, got, {"exact": exact}) == ""  # no deviation, nothing to explain


def test_diagnose_ignores_variants_that_raise_or_have_another_shape():
    got = np.array([1.0, 2.0])
    mistakes = {
        "raises": Mistake("raises", lambda: np.linalg.inv(np.zeros((2, 2)))),
        "shape": Mistake("shape", lambda: np.array([[1.0, 2.0]])),
        "match": Mistake("match", lambda: [1.0, 2.0]),  # a list is fine: it is turned into float64
    }
    assert diagnose(got, np.array([1.0, 3.0]), mistakes) == "match"


def test_diagnose_round_off_bound_scales_with_the_expected_magnitude():
    # rtol 1e-9 of max(|expected|, 1): 1e-6 at magnitude 1000, 1e-9 at unit scale.
    got = np.array([1000.0, -3.0])                          # 4 off the right answer at index 1
    variant = Mistake("v", lambda: got + 5e-7)
    assert diagnose(got, np.array([1000.0, 1.0]), {"v": variant}) == "v"
    assert diagnose(got / 1000, np.array([1.0, 1e-3]), {"v": Mistake("v", lambda: got / 1000 + 5e-7)}) == ""
    loose = Mistake("loose", lambda: got / 1000 + 5e-7, rtol=1e-6)
    assert diagnose(got / 1000, np.array([1.0, 1e-3]), {"loose": loose}) == "loose"


def test_diagnose_counts_nan_in_the_same_place_as_a_match():
    got = np.array([[np.nan, 0.5], [0.25, 0.25]])
    same_place = Mistake("nan row", lambda: np.array([[np.nan, 0.5], [0.25, 0.25]]))
    other_place = Mistake("nan elsewhere", lambda: np.array([[0.5, np.nan], [0.25, 0.25]]))
    assert diagnose(got, np.ones((2, 2)), {"a": same_place}) == "nan row"
    assert diagnose(got, np.ones((2, 2)), {"b": other_place}) == ""


def test_nan_matches_any_accepts_any_value_where_the_variant_is_nan():
    # A fully masked first row: NaN with -inf masking, but finite (uniform) with -1e9 masking.
    variant = np.array([[np.nan, np.nan], [0.7, 0.3]])
    finite_student = np.array([[0.5, 0.5], [0.7, 0.3]])
    strict = Mistake("blocks the diagonal", lambda: variant)
    lenient = Mistake("blocks the diagonal", lambda: variant, nan_matches_any=True)
    assert diagnose(finite_student, np.ones((2, 2)), {"m": strict}) == ""
    assert diagnose(finite_student, np.ones((2, 2)), {"m": lenient}) == "blocks the diagonal"
    # ... but elsewhere the values must still match, and NaN where the variant is finite is no match.
    assert diagnose(np.array([[0.5, 0.5], [0.6, 0.4]]), np.ones((2, 2)), {"m": lenient}) == ""
    assert diagnose(np.array([[0.5, 0.5], [np.nan, 0.3]]), np.ones((2, 2)), {"m": lenient}) == ""


def test_nan_answer_still_gets_a_diagnosis():
    # An unstable softmax overflows to NaN on large inputs: the variant reproduces the NaN.
    got = np.array([[np.nan, np.nan], [0.5, 0.5]])
    unstable = Mistake("unstable softmax", lambda: np.array([[np.nan, np.nan], [0.5, 0.5]]))
    err = failure(got, np.array([[0.0, 1.0], [0.5, 0.5]]), mistakes={"u": unstable})
    assert "2 NaN or infinite value(s) out of 4" in err.feedback
    assert err.diagnosis == "unstable softmax"


def test_an_all_wildcard_variant_does_not_match_every_finite_answer():
    # With T = 1 a diagonal-blocking mask leaves nothing to attend to: the variant is all NaN.
    # Accepting "any value" there would name that mistake for every wrong finite answer.
    variant = Mistake("blocks the diagonal", lambda: np.full((1, 1, 2), np.nan), nan_matches_any=True)
    assert diagnose(np.array([[[0.3, -0.2]]]), np.ones((1, 1, 2)), {"m": variant}) == ""
    # An output NaN everywhere names nothing either: an inverted mask, 0 * -inf in a mask or float16 scores
    # make the same all-NaN output (grader/compare.py's docstring); one NaN row among finite ones is named.
    assert diagnose(np.array([[[np.nan, np.nan]]]), np.ones((1, 1, 2)), {"m": variant}) == ""
    row = Mistake("blocks the diagonal", lambda: np.array([[[np.nan, np.nan], [1.0, 2.0]]]), nan_matches_any=True)
    assert diagnose(np.array([[[np.nan, np.nan], [1.0, 2.0]]]), np.ones((1, 2, 2)), {"m": row}) == "blocks the diagonal"
