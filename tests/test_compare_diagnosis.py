"""Diagnosis rules of grader/compare.py that the known-wrong corpus showed were needed.

- A variant that would itself pass the check names nothing (at x1000 a float32 answer was named
  "scores not scaled", a variant equal to the right answer there). The all-NaN variant case
  (T = 1 with a diagonal-blocking mask) is tested in test_compare.py.
- ``layout_diagnosis`` names a float32 result or a dropped size-1 axis for checks that look only at
  dtype and shape, and tells a dropped batch axis from another dropped axis (T = 1 after np.squeeze).
"""
import numpy as np
import pytest

from grader.compare import Mistake, diagnose, expect_array, layout_diagnosis
from grader.plugin import CheckFailure


def test_a_variant_that_would_pass_the_check_names_nothing():
    # At x1000 the softmax is one-hot, so "no 1/sqrt(d_head)" gives the right answer; a float32
    # answer 5e-5 off used to be named after it, as the tolerance is relative to the scale (~1e3).
    expected = np.array([1000.0, -3.0, 2.0])
    got = expected + np.array([5e-5, 0.0, 0.0])
    same_as_right = Mistake("no scale", lambda: expected + 1e-9)
    assert diagnose(got, expected, {"m": same_as_right}) == "no scale"  # without the check's atol
    assert diagnose(got, expected, {"m": same_as_right}, atol=1e-6) == ""
    with pytest.raises(CheckFailure) as info:
        expect_array(got, expected, what="f(x)", mistakes={"m": same_as_right})
    assert info.value.diagnosis == ""
    explains = Mistake("float32", lambda: got + 1e-5, rtol=1e-4)  # off the right answer by > atol
    assert diagnose(got, expected, {"m": same_as_right, "f": explains}, atol=1e-6) == "float32"


def test_layout_diagnosis_names_float32_and_dropped_axes():
    assert "float32" in layout_diagnosis(np.zeros((2, 5, 12), np.float32), (2, 5, 12))
    assert layout_diagnosis(np.zeros((2, 5, 12)), (2, 5, 12)) == ""
    assert "batch dimension was dropped" in layout_diagnosis(np.zeros((5, 12)), (1, 5, 12))
    t_dropped = layout_diagnosis(np.zeros((3, 16)), (3, 1, 16))  # np.squeeze with T = 1
    assert "dimension of size 1 was dropped" in t_dropped and "batch" not in t_dropped
    assert "wrong order" in layout_diagnosis(np.zeros((2, 12, 5)), (2, 5, 12))
    assert layout_diagnosis([[1.0]], (1, 1)) == ""
    assert layout_diagnosis(np.zeros((3, 3, 16)), (3, 1, 16)) == ""


def test_expect_array_uses_the_layout_diagnosis():
    with pytest.raises(CheckFailure) as info:
        expect_array(np.zeros((3, 16)), np.zeros((3, 1, 16)), what="f(x)")
    assert "returned shape (3, 16)" in info.value.feedback
    assert "dimension of size 1 was dropped" in info.value.diagnosis
