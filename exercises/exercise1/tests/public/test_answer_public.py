"""Exercise 1, public checks: the rubric of rubric.toml, one check per line and per misconception.

The answer is read, never run: nothing starts a sandbox (exercise.toml has ``module = ""``).
"""
import pytest

from exercises.exercise1.tests.checks import (ANSWER, FILE_GATE, RUBRIC, answer_path, assess,
                                              concept_check, misconception_check, record)
from grader.plugin import CheckFailure


@pytest.mark.check(points=0, hint="Write your answer in answer.md, next to nothing else (start from skeleton/answer.md).")
def test_answer_file(submission):
    """answer.md is there."""
    path = answer_path(submission)
    if path.is_symlink():
        raise CheckFailure(f"{ANSWER} is a link; hand in the file itself.")
    if not path.is_file():
        raise CheckFailure(f"There is no {ANSWER} in your folder.")


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
                       (f", and at most {RUBRIC.cap_points:g} of {RUBRIC.max_total:g} points are counted"
                        if a.cap_reason else ""))
        raise CheckFailure(f"{text[0].upper()}{text[1:]}. {consequence}.", details=details)
    record(request, f"{a.words} words" + "".join(f"; {n}" for n in a.notes) + ".", details)


for _line in RUBRIC.lines:
    globals()[f"test_{_line.id}"] = concept_check(_line)
for _m in RUBRIC.misconceptions:
    globals()[f"test_no_{_m.id}"] = misconception_check(_m)
del _line, _m
