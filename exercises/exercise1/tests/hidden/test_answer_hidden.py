"""Exercise 1, hidden checks: whether a person should read the answer too.

Fails (0 points) with ``details["needs_review"]``, a list of reasons, when the total is within
``review_band`` of the pass mark, or the answer is copied, mostly keywords, or not in English
(grader/rubric/judge.py). The judge lifts these reasons into ``SubmissionResult.needs_review``.
"""
import pytest

from exercises.exercise1.tests.checks import FILE_GATE, assess, record
from grader.plugin import CheckFailure


@pytest.mark.check(points=0, depends=[FILE_GATE],
                   hint="Nothing to fix here: it only means that a person checks the automatic grade.")
def test_grade_is_clear_cut(submission, request):
    """The automatic grade is clear-cut (no person needs to read this answer)."""
    a = assess(submission)
    if a.needs_review:
        raise CheckFailure("A person will also read your answer: " + "; ".join(a.needs_review) + ".",
                           details={"needs_review": list(a.needs_review), "total": a.total})
    record(request, f"Automatic total {a.total:g}/{a.max_total:g}, away from the pass mark.")
