"""Exercise 1's rubric checks (judge side): the rubric, the assessment, and the check factories.

Every check reads the same :class:`grader.rubric.Assessment` of ``answer.md`` (computed once per answer and
cached). The checks are generated from ``rubric.toml`` (judge-only, like this folder) so that points,
concepts and hints live in one place: one check per rubric line (its docstring is the concept, its name
``test_<line id>``) and one per misconception (``test_no_<id>``); overrides and gradebooks use these names.
"""
from __future__ import annotations

import pytest

from exercises.exercise1.tests.checks import EXERCISE, FILE_GATE, answer_path, quote, record
from grader import rubric
from grader.exercises import course_root
from grader.plugin import CheckFailure

RUBRIC_PATH = EXERCISE / "rubric.toml"
RUBRIC = rubric.load(RUBRIC_PATH)
#: Gate of the misconception checks: an explanation in the student's own sentences.
SUBSTANTIVE_GATE = "test_answer_is_substantive"


def assess(submission) -> rubric.Assessment:
    """The rubric's reading of this submission's answer.md (cached per file content)."""
    return rubric.assess_file(RUBRIC_PATH, answer_path(submission), course_root())


def concept_check(line: rubric.Line):
    """The check of one rubric line: passes when the line's evidence is found (and counted)."""

    def check(submission, request):
        a = assess(submission)
        r = a.lines[line.id]
        details = {"rubric_line": line.id, "question": line.question, "evidence": r.quotes}
        found = " + ".join(quote(q) for q in r.quotes)
        if r.counted:
            record(request, f"Earned by: {found}", details)
            return
        if r.contradicted_by:  # a confident error elsewhere in the answer loses this line
            said = a.misconceptions[r.contradicted_by].quote
            raise CheckFailure(f"Not counted: your answer also says {quote(said)}, which contradicts this point "
                               "(see the named error below).", details=details)
        if r.earned:
            raise CheckFailure(
                f"Found ({found}), but not counted: {a.cap_reason}, so at most "
                f"{a.cap_points:g} of {RUBRIC.max_total:g} points are given.", details=details)
        if r.quotes:
            raise CheckFailure(f"Only part of it: {found}; missing: {', '.join(r.missing_parts)}.",
                               details=details)
        raise CheckFailure("Not found in your answer.", details=details)

    check.__name__ = check.__qualname__ = f"test_{line.id}"
    check.__doc__ = line.concept
    return pytest.mark.check(points=line.points, hint=line.hint, depends=[FILE_GATE])(check)


def misconception_check(m: rubric.Misconception):
    """Passes when a substantive answer that talks about the topic does not make the misconception."""

    def check(submission, request):
        a = assess(submission)
        r = a.misconceptions[m.id]
        if not r.applies and not (r.found and m.points == 0):  # a 0-point named error is always named
            pytest.skip(f"not checked: your answer earns no point on question {m.question} "
                        f"({RUBRIC.questions.get(m.question, '')}), so there is nothing to check")
        details = {"misconception": m.id, "question": m.question, "evidence": [r.quote] if r.quote else []}
        if r.found:
            raise CheckFailure(f"Your answer says: {quote(r.quote)}", diagnosis=f"misconception: {m.statement}",
                               details=details)
        if not r.counted:  # partly copied: these points scale down as the concept points do
            raise CheckFailure(f"Your answer does not say this, but not counted: {a.copy_overlap:.0%} of its "
                               f"content words are in passages of {a.copy_source}, so its points count "
                               f"{a.copy_factor:.0%}.", details=details)
        record(request, "Your answer does not say this.", details)

    check.__name__ = check.__qualname__ = f"test_no_{m.id}"
    check.__doc__ = (f"No misconception: {m.statement}." if m.points else
                     f"No named error: {m.statement} (0 points: the concept it contradicts is not counted).")
    return pytest.mark.check(points=m.points, hint=m.hint, depends=[SUBSTANTIVE_GATE])(check)
