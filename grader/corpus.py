"""The known-wrong corpus: submissions with known mistakes (one, two, or a small deviation), and what must happen.

Layout: ``tests/corpus/EXERCISE/CASE/`` holds the submission's files and an
``expected.toml`` written by hand::

    mistake = "output projection W_O forgotten"   # what the case is, for people
    diagnosis = "W_O"          # a substring the diagnosis of some failed check must contain, or a
                               # list of substrings one failed check's diagnosis must all contain
    fails = ["test_mha_parity"]          # test functions that must lose points (all items failed)
    passes = ["test_softmax_matches_torch"]  # test functions that must keep full points
    message = "timed out"      # optional: a substring some failed check's feedback must contain
    unnamed = true             # optional: no check names a mistake (findings, marked by
                               # grader/compare.py with details["diagnosis_from"] = "findings", may show)
    full_marks = true          # optional: the case loses no points (e.g. right to 1e-8)

``grader check-solutions`` and the grader's own tests both use :func:`verify`.
"""
from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from .exercises import course_root
from .results import SubmissionResult


@dataclass(frozen=True)
class Case:
    """One corpus entry and its hand-written expectations (``diagnoses``: every substring of ``diagnosis``;
    ``diagnosis`` is the first, for callers that quote one)."""

    name: str
    folder: Path
    mistake: str
    fails: tuple[str, ...] = ()
    passes: tuple[str, ...] = ()
    diagnosis: str = ""
    message: str = ""
    extra: dict = field(default_factory=dict)
    diagnoses: tuple[str, ...] = ()
    unnamed: bool = False
    full_marks: bool = False

    def __post_init__(self):
        if self.diagnosis and not self.diagnoses:
            object.__setattr__(self, "diagnoses", (self.diagnosis,))


def cases(exercise: str, kind: str = "corpus") -> list[Case]:
    """All cases of ``tests/KIND/EXERCISE/*/expected.toml``, sorted by name ([] if none)."""
    base = course_root() / "tests" / kind / exercise
    out = []
    for spec in sorted(base.glob("*/expected.toml")):
        data = tomllib.loads(spec.read_text(encoding="utf-8"))
        diagnoses = data.get("diagnosis", "")
        diagnoses = tuple(diagnoses) if isinstance(diagnoses, list) else (diagnoses,) if diagnoses else ()
        out.append(Case(
            name=spec.parent.name, folder=spec.parent, mistake=data.get("mistake", ""),
            fails=tuple(data.get("fails", ())), passes=tuple(data.get("passes", ())),
            diagnosis=diagnoses[0] if diagnoses else "", message=data.get("message", ""),
            diagnoses=diagnoses, unnamed=bool(data.get("unnamed", False)),
            full_marks=bool(data.get("full_marks", False)),
        ))
    return out


def names_a_mistake(check) -> bool:
    """Whether ``check``'s diagnosis names a mistake (a variant or a layout slip), rather than being empty or
    the behavioural probes' findings (which ``grader.compare.expect_array`` marks)."""
    return bool(check.diagnosis) and check.details.get("diagnosis_from") != "findings"


def _function(check_name: str) -> str:
    return check_name.split("[")[0]


def verify(case: Case, result: SubmissionResult, names=names_a_mistake) -> list[str]:
    """Everything about ``result`` that contradicts ``case``'s expectations ([] when all hold).

    ``names(check)`` says whether a check's diagnosis names a mistake (for ``unnamed`` cases); the default
    counts every diagnosis not marked as findings.
    """
    problems = []
    if result.grader_errors:
        problems.append("grader error on " + ", ".join(c.name for c in result.grader_errors))
    if case.full_marks and result.score < result.max_score:
        problems.append(f"lost points ({result.score:g}/{result.max_score:g}) but should get full marks")
    if not case.full_marks and result.score >= result.max_score:
        problems.append(f"got full marks ({result.score:g}/{result.max_score:g})")
    by_function: dict[str, list] = {}
    for check in result.checks:
        by_function.setdefault(_function(check.name), []).append(check)
    for name in case.fails:
        checks = by_function.get(name)
        if not checks:
            problems.append(f"no check named {name}")
            continue
        # Items worth points must not pass; a function worth 0 points (a gate such as
        # test_uses_only_numpy) is judged on its status, or listing it would check nothing.
        judged = [c for c in checks if c.max_points > 0] or checks
        if any(c.status == "passed" for c in judged):
            problems.append(f"{name} should fail but passed on "
                            + ", ".join(c.name for c in judged if c.status == "passed"))
    for name in case.passes:
        checks = by_function.get(name)
        if not checks:
            problems.append(f"no check named {name}")
        elif any(c.status != "passed" for c in checks):
            bad = next(c for c in checks if c.status != "passed")
            problems.append(f"{name} should pass but {bad.name} {bad.status}: {bad.feedback}")
    failed = [c for c in result.checks if c.status != "passed"]
    if case.diagnoses and not any(all(d.lower() in c.diagnosis.lower() for d in case.diagnoses) for c in failed):
        named = sorted({c.diagnosis for c in failed if c.diagnosis}) or ["nothing"]
        wanted = " and ".join(repr(d) for d in case.diagnoses)
        problems.append(f"diagnosis should mention {wanted}; named: {' | '.join(named)}")
    if case.unnamed:
        problems += [f"{c.name} names a mistake: {c.diagnosis!r}" for c in failed if names(c)]
    if case.message and not any(case.message.lower() in c.feedback.lower() for c in failed):
        problems.append(f"no failed check's feedback mentions {case.message!r}")
    return problems
