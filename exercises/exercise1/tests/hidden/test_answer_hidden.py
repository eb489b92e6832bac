"""Exercise 1, hidden checks: what the answer says, graded by the rubric (rubric.toml, judge-only).

One check per rubric line (``test_<line id>``, its evidence quoted) and per misconception (``test_no_<id>``),
the gate of the misconception points (``test_answer_is_substantive``: not empty, not far too short, not a
keyword list, not copied), and whether a person should read the answer too (``test_grade_is_clear_cut``:
fails with 0 points and ``details["needs_review"]``, the reasons, and ``details["confidence"]``; the judge
lifts the reasons into ``SubmissionResult.needs_review``; grader/rubric/review.py says how confidence is
computed).
"""
import pytest

from exercises.exercise1.tests.checks import FILE_GATE
from exercises.exercise1.tests.hidden.rubric_checks import RUBRIC, STYLE, assess
from grader.plugin import CheckFailure, record
from grader.rubric.checks import all_checks


@pytest.mark.check(points=0, depends=[FILE_GATE],
                   hint=f"Write about {RUBRIC.suggested[0]}-{RUBRIC.suggested[1]} words of your own sentences "
                        "under the three headings.")
def test_answer_is_substantive(submission, request):
    """answer.md is an explanation in your own sentences: not empty, not far too short, not a list of keywords, not copied."""
    a = assess(submission)
    details = {"words": a.words, "prose_share": round(a.prose_share, 3), "copy_overlap": round(a.copy_overlap, 3),
               "copy_source": a.copy_source}
    if a.problems:
        text = "; ".join(a.problems + a.notes)
        consequence = ("So the 'no misconception' points are not given" +
                       (f", and at most {a.cap_points:g} of {RUBRIC.max_total:g} points are counted"
                        if a.cap_reason else ""))
        raise CheckFailure(f"{text[0].upper()}{text[1:]}. {consequence}.", details=details)
    record(request, f"{a.words} words" + "".join(f"; {n}" for n in a.notes) + ".", details)


globals().update(all_checks(STYLE))
