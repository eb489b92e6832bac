"""Exercise 4's explanation graded by its rubric (judge side: ``rubric.toml`` is never released).

The same engine as exercise 1 (:mod:`grader.rubric`) reads the ``## Explanation`` section of report.md:
one check per rubric line (``test_explains_<line id>``) and per misconception (``test_no_<id>``), generated
in ``test_model_hidden.py`` from the factories here; overrides and gradebooks use these names.
"""
from __future__ import annotations

import functools
from pathlib import Path

import pytest

from exercises.exercise4.tests import report_md
from exercises.exercise4.tests.checks import REPORT, read_report, record
from grader import rubric
from grader.exercises import course_root
from grader.plugin import CheckFailure

RUBRIC_PATH = Path(__file__).resolve().parents[2] / "rubric.toml"
RUBRIC = rubric.load(RUBRIC_PATH)


def assess(submission) -> rubric.Assessment:
    """The rubric's reading of the report's Explanation section (cached per text)."""
    text = read_report(submission).explanation
    # Compare with the sample report's explanation only: the table and the template's text are shared by all.
    sources = tuple(sorted((k, report_md.explanation_of(v) or v) for k, v in  # no Explanation: the whole text
                           rubric.copy_sources_for(RUBRIC, course_root(), Path(submission.path) / REPORT).items()))
    return _assess(text, sources)


@functools.lru_cache(maxsize=32)
def _assess(text: str, sources: tuple) -> rubric.Assessment:
    return rubric.evaluate(RUBRIC, text, copy_sources=dict(sources))


def quote(text: str, limit: int = 300) -> str:
    text = " ".join(text.split())
    return f'"{text if len(text) <= limit else text[:limit - 1] + "…"}"'


def concept_check(line: rubric.Line):
    """The check of one rubric line: passes when the line's evidence is found (and counted)."""

    def check(submission, request):
        a = assess(submission)
        r = a.lines[line.id]
        details = {"rubric_line": line.id, "evidence": r.quotes}
        found = " + ".join(quote(q) for q in r.quotes)
        if r.counted:
            record(request, f"Earned by: {found}", details)
            return
        if r.earned:
            raise CheckFailure(f"Found ({found}), but not counted: {a.copy_overlap:.0%} of its content words are "
                               f"in passages of {a.copy_source}, so its points count {a.copy_factor:.0%}.", details=details)
        if r.quotes:
            raise CheckFailure(f"Only part of it: {found}; missing: {', '.join(r.missing_parts)}.", details=details)
        raise CheckFailure("Not found in your explanation.", details=details)

    check.__name__ = check.__qualname__ = f"test_explains_{line.id}"
    check.__doc__ = line.concept
    return pytest.mark.check(points=line.points, hint=line.hint, depends=["test_report_file"])(check)


def misconception_check(m: rubric.Misconception):
    """Passes when a substantive explanation that earns a point on the question does not make the misconception."""

    def check(submission, request):
        a = assess(submission)
        r = a.misconceptions[m.id]
        if not a.substantive:
            raise CheckFailure("Not checked: " + "; ".join(a.problems) + ".")
        if not r.applies:
            pytest.skip(f"not checked: your explanation earns no point on {RUBRIC.questions.get(m.question, '')}")
        details = {"misconception": m.id, "evidence": [r.quote] if r.quote else []}
        if r.found:
            raise CheckFailure(f"Your explanation says: {quote(r.quote)}", diagnosis=f"misconception: {m.statement}",
                               details=details)
        if not r.counted:  # partly copied: these points scale down as the concept points do
            raise CheckFailure(f"Your explanation does not say this, but not counted: {a.copy_overlap:.0%} of its "
                               f"content words are in passages of {a.copy_source}, so its points count "
                               f"{a.copy_factor:.0%}.", details=details)
        record(request, "Your explanation does not say this.", details)

    check.__name__ = check.__qualname__ = f"test_no_{m.id}"
    check.__doc__ = f"No misconception: {m.statement}."
    return pytest.mark.check(points=m.points, hint=m.hint, depends=["test_report_file"])(check)
