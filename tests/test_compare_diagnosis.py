"""The naming rule of grader/compare.py (its module docstring): a wrong name is worse than none.

- A variant is named only when it reproduces the output to float64 round-off *and* far better than the
  deviation itself; small deviations (1e-6 in a softmax's denominator, a block off by 1e-5) get no name.
- float32 only on float32 evidence: the output's values are float32 numbers and its deviation float32-sized.
- Two mistakes that both explain the output, or residuals within 10x: no name. Pairs only when no single
  mistake explains the output, named with both messages.
- A variant that would itself pass the check names nothing; a fully masked row's NaN may be any value.
- ``layout_diagnosis`` names a float32 result or a dropped size-1 axis for checks that look only at
  dtype and shape, and tells a dropped batch axis from another dropped axis (T = 1 after np.squeeze).

Every array here is written by hand; the float32 ones are rounded with NumPy's own cast.
"""
import numpy as np
import pytest

from grader.compare import KnownMistakes, Mistake, both, diagnose, expect_array, layout_diagnosis
from grader.plugin import CheckFailure

RNG = np.random.default_rng(7)
EXPECTED = 0.3 + 1.7 * RNG.standard_normal((2, 5, 8))   # a unit-scale answer, like attention's
BIG = 1000.0 * EXPECTED                                   # like the x1000 checks' (max about 5e3)


def _off(a, by):
    return Mistake(f"off by {by:g}", lambda: a + by)


def test_a_variant_that_would_pass_the_check_names_nothing():
    # The variant is 0.9999999e-6 off the right answer (it passes at atol 1e-6), the output 1.0000001e-6:
    # the variant reproduces the output to 2e-13, yet it cannot be told from the right answer here.
    expected = np.array([1000.0, -3.0, 2.0])
    got = expected + np.array([1.0000001e-6, 0.0, 0.0])
    same_as_right = Mistake("no scale", lambda: expected + np.array([0.9999999e-6, 0.0, 0.0]))
    assert diagnose(got, expected, {"m": same_as_right}) == "no scale"  # without the check's atol
    assert diagnose(got, expected, {"m": same_as_right}, atol=1e-6) == ""
    with pytest.raises(CheckFailure) as info:
        expect_array(got, expected, what="f(x)", mistakes={"m": same_as_right})
    assert info.value.diagnosis == ""


@pytest.mark.parametrize("expected", [EXPECTED, BIG], ids=["unit", "x1000"])
def test_small_deviations_get_no_name(expected):
    """A block off by a constant 1e-5 is no erf GELU (4.7e-4 away), whatever the scale; before the rule,
    the tolerance 1e-7 * 5e3 = 5e-4 let it match at x1000."""
    got = expected + 1e-5
    erf_like = Mistake("erf GELU", lambda: expected + 4.7e-4 * np.sign(expected))
    assert diagnose(got, expected, {"erf": erf_like, "exact": _off(expected, 1e-5)}, atol=1e-6) == "off by 1e-05"
    assert diagnose(got, expected, {"erf": erf_like}, atol=1e-6) == ""
    # a variant at round-off of the scale (5e-9 <= 1e-9 * 5e3) but not far better than the deviation (2e-6)
    tiny = expected + 2e-6
    assert diagnose(tiny, expected, {"v": _off(expected, 2e-6 + 5e-9)}, atol=1e-6) == ""
    assert diagnose(tiny, expected, {"v": _off(expected, 2e-6 + 1e-15)}, atol=1e-6) == "off by 2e-06"


def _float32_path(a):
    return a.astype(np.float32).astype(np.float64)


def test_float32_is_named_when_the_output_is_made_of_float32_numbers():
    expected = EXPECTED / 3
    student = _float32_path(expected * (1 + 3e-8))      # another float32 path: float32 numbers, ~1e-7 off
    torch32 = Mistake("float32", lambda: _float32_path(expected), precision="float32")
    assert np.abs(student - _float32_path(expected)).max() > 0  # it does not follow torch's rounding
    assert diagnose(student, expected, {"f": torch32}, atol=1e-8) == "float32"
    # 1e-6 in a softmax's denominator: about as far from the float32 variant as from the right answer,
    # and no float32 number: no name (before the rule: "ran in float32")
    eps_in_denominator = expected / (1 + 1e-6)
    assert diagnose(eps_in_denominator, expected, {"f": torch32}, atol=1e-8) == ""
    # float32 numbers, but far off: float32 on top of a bigger mistake is not "float32"
    assert diagnose(_float32_path(expected + 0.1), expected, {"f": torch32}, atol=1e-8) == ""
    # the general rule also holds for float32: reproduced far better than the deviation
    follows = _float32_path(expected) + 1e-13
    assert diagnose(follows, expected, {"f": torch32}, atol=1e-8) == "float32"


def test_float32_needs_expected_values_that_are_not_float32_numbers():
    expected = np.array([0.25, 0.75, 0.5, 0.125])          # float32 numbers themselves
    got = expected + np.array([2.0**-20, 0.0, 0.0, 0.0])    # a float32 number too: no evidence
    torch32 = Mistake("float32", lambda: expected + 2.0**-21, precision="float32")
    assert diagnose(got, expected, {"f": torch32}, atol=1e-7) == ""


def test_two_mistakes_that_both_explain_the_output_name_neither():
    got = EXPECTED + 0.5
    a, b = Mistake("A", lambda: got + 1e-15), Mistake("B", lambda: got - 2e-15)
    assert diagnose(got, EXPECTED, {"a": a, "b": b}) == ""
    same = Mistake("A", lambda: got + 3e-15)  # two ways to the same mistake (one message): named
    assert diagnose(got, EXPECTED, {"a": a, "same": same}) == "A"
    # another variant within 10x of the best one's residual does about as well, even unexplaining itself
    unit = EXPECTED / np.abs(EXPECTED).max()  # max 1: the round-off bound is 1e-9
    got = unit + 0.5
    close, near = Mistake("A", lambda: got + 2e-10), Mistake("C", lambda: got + 1.5e-9)
    assert diagnose(got, unit, {"a": close, "c": near}) == ""
    assert diagnose(got, unit, {"a": close, "c": Mistake("C", lambda: got + 3e-9)}) == "A"



def test_an_output_that_is_nan_everywhere_names_nothing():
    # At x1000 an unstable softmax, float16 scores that overflow and a triu(ones) * -inf mask all give an
    # attention that is NaN everywhere: a variant NaN everywhere too matches only where, not what.
    nan = np.full_like(EXPECTED, np.nan)
    unstable = Mistake("unstable softmax", lambda: np.full_like(EXPECTED, np.nan))
    assert diagnose(nan, EXPECTED, {"u": unstable}) == ""
    assert diagnose(np.full_like(EXPECTED, np.inf), EXPECTED, {"u": Mistake("U", lambda: np.full_like(EXPECTED, np.inf))}) == ""
    # NaN in some rows only is a pattern: the variant NaN in the same rows, and equal elsewhere, is named
    rows = EXPECTED.copy()
    rows[0, 2] = np.nan
    assert diagnose(rows, EXPECTED + 0.0, {"u": Mistake("U", lambda: rows.copy())}) == "U"


def _pairs_table(got, expected):
    """Two mistakes that each move half-way: alone neither explains ``got``, together they do."""
    half = (got - expected) / 2
    singles = {"a": Mistake("A", lambda: expected + half), "b": Mistake("B", lambda: expected + half * 1.5),
               "c": Mistake("C", lambda: expected - half), "f": Mistake("F", lambda: expected - 2 * half)}
    pairs = {("a", "b"): Mistake(both("A", "B"), lambda: got.copy()),
             ("c", "f"): Mistake(both("C", "F"), lambda: got + 1e-15)}
    return singles, pairs


def test_a_pair_is_tried_only_when_no_single_mistake_explains_the_output():
    got = EXPECTED + 0.4
    singles, pairs = _pairs_table(got, EXPECTED)
    assert both("A", "B") == "two mistakes together: (1) A; (2) B"
    # C and F both move away from the output (residuals above the deviation): the pair (c, f) is not tried
    assert diagnose(got, EXPECTED, KnownMistakes(singles, pairs)) == both("A", "B")
    assert diagnose(got, EXPECTED, singles) == ""  # a plain dict has no pairs
    explained = {**singles, "d": Mistake("D", lambda: got.copy())}
    assert diagnose(got, EXPECTED, KnownMistakes(explained, pairs)) == "D"
    ambiguous = {**explained, "e": Mistake("E", lambda: got.copy())}  # singles tie: no name, no pairs
    assert diagnose(got, EXPECTED, KnownMistakes(ambiguous, pairs)) == ""


def test_a_pair_of_mistakes_unrelated_to_the_output_is_not_tried():
    """Two small slips that each leave about the whole deviation (root sum of squares above 0.95 of it) open
    no pair, however well the pair's (here made-up) variant would match."""
    got = EXPECTED + 0.4
    wiggle = 1e-3 * np.cos(np.arange(EXPECTED.size)).reshape(EXPECTED.shape)
    singles = {"g": Mistake("G", lambda: EXPECTED + wiggle), "h": Mistake("H", lambda: EXPECTED - wiggle)}
    pairs = {("g", "h"): Mistake(both("G", "H"), lambda: got.copy())}
    assert diagnose(got, EXPECTED, KnownMistakes(singles, pairs)) == ""
    closer = {**singles, "h": Mistake("H", lambda: EXPECTED + 0.4 * 0.9)}  # leaves 0.1 of it: tried
    assert diagnose(got, EXPECTED, KnownMistakes(closer, pairs)) == both("G", "H")


def test_a_pair_with_a_part_that_raised_or_would_pass_is_not_tried():
    got = EXPECTED + 0.4
    singles, pairs = _pairs_table(got, EXPECTED)
    raised = {**singles, "a": Mistake("A", lambda: 1 / 0)}
    assert diagnose(got, EXPECTED, KnownMistakes(raised, pairs)) == ""
    passes = {**singles, "a": Mistake("A", lambda: EXPECTED + 1e-9)}  # a no-op here: (a, b) would be b
    assert diagnose(got, EXPECTED, KnownMistakes(passes, pairs), atol=1e-6) == ""
    two = {("a", "b"): pairs[("a", "b")], ("b", "a2"): Mistake(both("B", "A2"), lambda: got.copy())}
    assert diagnose(got, EXPECTED, KnownMistakes({**singles, "a2": singles["a"]}, two)) == ""  # pairs tie


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
