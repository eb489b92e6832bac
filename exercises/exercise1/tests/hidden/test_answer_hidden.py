"""Exercise 1, hidden checks: what the answer says, graded by the rubric (rubric.toml, judge-only).

One check per rubric line (``test_<line id>``, its evidence quoted) and per misconception (``test_no_<id>``),
the gate of the misconception points (``test_answer_is_substantive``: not empty, not far too short, not a
keyword list, not copied), and whether a person should read the answer too (``test_grade_is_clear_cut``:
fails with 0 points and ``details["needs_review"]``, the reasons, and ``details["confidence"]``; the judge
lifts the reasons into ``SubmissionResult.needs_review``; grader/rubric/review.py says how confidence is
computed).
"""
import pytest

from exercises.exercise1.tests.checks import FILE_GATE, record
from exercises.exercise1.tests.hidden.rubric_checks import RUBRIC, assess, concept_check, misconception_check
from grader.plugin import CheckFailure


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


for _line in RUBRIC.lines:
    globals()[f"test_{_line.id}"] = concept_check(_line)
for _m in RUBRIC.misconceptions:
    globals()[f"test_no_{_m.id}"] = misconception_check(_m)
del _line, _m


@pytest.mark.check(points=0, depends=[FILE_GATE],
                   hint="Nothing to fix here: it only means that a person checks the automatic grade.")
def test_grade_is_clear_cut(submission, request):
    """The automatic grade is clear-cut (no person needs to read this answer)."""
    a = assess(submission)
    details = {"needs_review": list(a.needs_review), "total": a.total, "confidence": round(a.confidence, 3)}
    if a.needs_review:
        raise CheckFailure(f"A person will also read your answer (confidence of the automatic grade "
                           f"{a.confidence:.2f}): " + "; ".join(a.needs_review) + ".", details=details)
    record(request, f"Automatic total {a.total:g}/{a.max_total:g}, confidence {a.confidence:.2f}.", details)
