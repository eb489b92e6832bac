"""corpus.verify on 0-point checks: listing a gate in ``fails`` must check something.

(The rest of corpus.verify is tested in test_corpus.py.)
"""
from pathlib import Path

from grader import corpus
from grader.results import CheckResult, SubmissionResult


def _result(*checks):
    return SubmissionResult(exercise="exercise3", submission="x", seed=1, checks=[
        CheckResult(name=name, description=name, max_points=points, status=status)
        for name, points, status in checks])


CASE = corpus.Case(name="imports_torch", folder=Path("."), mistake="imports torch",
                   fails=("test_uses_only_numpy", "test_softmax_small"))


def test_a_zero_point_gate_that_should_fail_but_passed_is_reported():
    result = _result(("test_uses_only_numpy", 0, "passed"), ("test_softmax_small", 1, "failed"))
    assert corpus.verify(CASE, result) == ["test_uses_only_numpy should fail but passed on test_uses_only_numpy"]


def test_a_zero_point_gate_that_failed_is_accepted():
    result = _result(("test_uses_only_numpy", 0, "failed"), ("test_softmax_small", 1, "skipped"))
    assert corpus.verify(CASE, result) == []


def test_zero_point_items_of_a_function_worth_points_are_not_judged():
    # Only items worth points must lose them; a 0-point item of the same function may pass.
    case = corpus.Case(name="c", folder=Path("."), mistake="m", fails=("test_p",))
    result = _result(("test_p[warmup]", 0, "passed"), ("test_p[real]", 2, "failed"))
    assert corpus.verify(case, result) == []


def test_a_zero_point_gate_that_was_not_run_counts_as_lost():
    # A gate skipped because the gate before it failed (exercise 4: no export, so no GPT check) did not pass.
    case = corpus.Case(name="c", folder=Path("."), mistake="m", fails=("test_export", "test_gpt_prenorm"))
    result = _result(("test_export", 0, "failed"), ("test_gpt_prenorm", 0, "skipped"), ("test_block", 2, "failed"))
    assert corpus.verify(case, result) == []
