"""The checks a rubric grades with (judge side), shared by every exercise with a written part.

An exercise's hidden tests generate, from its ``rubric.toml``, one check per rubric line (its docstring is the
concept), one per misconception (``test_no_<id>``) and one that says whether a person should also read the text
(:func:`clear_cut_check`). Every check reads the same :class:`~.judge.Assessment`, computed once per text by the
exercise's ``assess(submission)``. What differs between exercises is a :class:`Style`: what the text is called,
the check names, and the checks they depend on. Overrides and gradebooks use the check names, so they are stable.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import pytest

from ..plugin import CheckFailure, quote, record
from .judge import Assessment
from .spec import Line, Misconception, Rubric


@dataclass(frozen=True)
class Style:
    """How one exercise's rubric checks read and are named.

    ``noun``: what the student wrote ("answer", "explanation"); ``line_prefix``: a line's check is
    ``<line_prefix><line id>``; ``gate``: the check every rubric check needs (the file is there);
    ``substantive_gate``: the check the misconception checks need as well ("" when the exercise has none: then
    a misconception check of a text that is not substantive fails and says why); ``clear_cut``: the name of
    :func:`clear_cut_check`.
    """
    rubric: Rubric
    assess: Callable[[object], Assessment]
    noun: str
    line_prefix: str
    gate: str
    clear_cut: str
    substantive_gate: str = ""


def concept_check(style: Style, line: Line):
    """The check of one rubric line: passes when the line's evidence is found and counted; fails saying what was
    found, what is missing, or why it is not counted (a cap, copying, or a named error that contradicts it)."""
    noun = style.noun

    def check(submission, request):
        a = style.assess(submission)
        r = a.lines[line.id]
        details = {"rubric_line": line.id, "question": line.question, "evidence": r.quotes}
        found = " + ".join(quote(q) for q in r.quotes)
        if r.counted:
            record(request, f"Earned by: {found}", details)
            return
        if r.contradicted_by:  # a confident error elsewhere in the text loses this line
            said = a.misconceptions[r.contradicted_by].quote
            raise CheckFailure(f"Not counted: your {noun} also says {quote(said)}, which contradicts this point "
                               "(see the named error below).", details=details)
        if r.earned:
            raise CheckFailure(f"Found ({found}), but not counted: {a.cap_reason}, so at most {a.cap_points:g} of "
                               f"{style.rubric.max_total:g} points are given.", details=details)
        if r.quotes:
            raise CheckFailure(f"Only part of it: {found}; missing: {', '.join(r.missing_parts)}.", details=details)
        if r.reported_only:
            raise CheckFailure(f"Found only in someone else's words that your {noun} reports "
                               f"({quote(r.reported_only)}): explain it in your own words.", details=details)
        raise CheckFailure(f"Not found in your {noun}.", details=details)

    check.__name__ = check.__qualname__ = f"{style.line_prefix}{line.id}"
    check.__doc__ = line.concept
    return pytest.mark.check(points=line.points, hint=line.hint, depends=[style.gate])(check)


def misconception_check(style: Style, m: Misconception):
    """Passes when a substantive text that earns a point on the misconception's question does not make it; a
    0-point misconception (a named error whose cost is the line it contradicts) is named whenever it is found."""
    noun = style.noun
    title = style.rubric.questions.get(m.question, "")

    def check(submission, request):
        a = style.assess(submission)
        r = a.misconceptions[m.id]
        if not a.substantive and not style.substantive_gate:
            raise CheckFailure("Not checked: " + "; ".join(a.problems) + ".")
        if not r.applies and not (r.found and m.points == 0):
            pytest.skip(f"not checked: your {noun} earns no point on question {m.question} ({title}), "
                        "so there is nothing to check")
        details = {"misconception": m.id, "question": m.question, "evidence": [r.quote] if r.quote else []}
        if r.found:
            raise CheckFailure(f"Your {noun} says: {quote(r.quote)}", diagnosis=f"misconception: {m.statement}",
                               details=details)
        if not r.counted:  # partly copied: these points scale down as the concept points do
            raise CheckFailure(f"Your {noun} does not say this, but not counted: {a.copy_overlap:.0%} of its "
                               f"content words are in passages of {a.copy_source}, so its points count "
                               f"{a.copy_factor:.0%}.", details=details)
        record(request, f"Your {noun} does not say this.", details)

    check.__name__ = check.__qualname__ = f"test_no_{m.id}"
    check.__doc__ = (f"No misconception: {m.statement}." if m.points else
                     f"No named error: {m.statement} (0 points: the concept it contradicts is not counted).")
    depends = [style.substantive_gate or style.gate]
    return pytest.mark.check(points=m.points, hint=m.hint, depends=depends)(check)


def clear_cut_check(style: Style):
    """0 points: fails when a person should also read the text, with ``details["needs_review"]`` (the reasons,
    which the judge lifts into ``SubmissionResult.needs_review``) and ``details["confidence"]`` (0-1, see
    :mod:`.review`)."""

    def check(submission, request):
        a = style.assess(submission)
        details = {"needs_review": list(a.needs_review), "total": a.total, "confidence": round(a.confidence, 3)}
        if a.needs_review:
            raise CheckFailure(f"A person will also read your {style.noun} (confidence of the automatic grade "
                               f"{a.confidence:.2f}): " + "; ".join(a.needs_review) + ".", details=details)
        record(request, f"Automatic total {a.total:g}/{a.max_total:g}, confidence {a.confidence:.2f}.", details)

    check.__name__ = check.__qualname__ = style.clear_cut
    check.__doc__ = f"The automatic grade of the {style.noun} is clear-cut (no person needs to read it)."
    return pytest.mark.check(points=0, depends=[style.gate],
                             hint="Nothing to fix here: it only means that a person checks the automatic grade.")(check)


def all_checks(style: Style) -> dict:
    """Every rubric check of ``style`` by name, to put into a test module's ``globals()``."""
    made = [concept_check(style, line) for line in style.rubric.lines]
    made += [misconception_check(style, m) for m in style.rubric.misconceptions]
    made.append(clear_cut_check(style))
    return {c.__name__: c for c in made}
