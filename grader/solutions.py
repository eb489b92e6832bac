"""Course CI (``grader check-solutions``): every reference solution gets full marks, every skeleton
gets 0 without a grader error, and every known mistake of the corpus (:mod:`grader.corpus`) is
caught as its ``expected.toml`` says. One line is printed per folder graded; :func:`check` returns
an :class:`Outcome` for each, which says where a failure points (for GitHub annotations).
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import click

from . import corpus, exercises, judge


def check(names: list[str], seed: int) -> list["Outcome"]:
    """Check the exercises ``names`` at ``seed``, one pytest session per exercise.

    Raises:
        exercises.SpecError: an unknown exercise or a bad spec.
    """
    outcomes = []
    for name in names:
        ex = exercises.load(name)
        with judge.Judge(ex) as session:  # one pytest session grades all of this exercise's folders
            outcomes += check_exercise(ex, session, seed)
    return outcomes


@dataclass
class Outcome:
    """One line of check-solutions: what was graded, what did not hold (empty: ok), where to point."""

    label: str  # "exercise3 solution", "exercise3 known mistake no_layer_norm"
    problems: list[str]
    file: str  # relative to the course root: the solution's first file, or the case's expected.toml
    line: int | None = 1


def course_path(path: Path) -> str:
    """``path`` as an annotation's ``file``: relative to the repository CI checked out
    (``$GITHUB_WORKSPACE``, what GitHub's runner takes a relative ``file`` to be under; the course may
    be a sub-folder of it), else to the course root."""
    path = Path(path).resolve()
    workspace = os.environ.get("GITHUB_WORKSPACE")
    for root in ([Path(workspace).resolve()] if workspace else []) + [exercises.course_root()]:
        if path.is_relative_to(root):
            return path.relative_to(root).as_posix()
    return str(path)


def check_exercise(ex: exercises.Exercise, session: judge.Judge, seed: int) -> list[Outcome]:
    """Grade ``ex``'s solution, skeleton and known mistakes; print a line each (and what did not hold)."""
    name, outcomes = ex.name, []
    for kind, folder, want_full in (("solution", ex.solution(), True), ("skeleton", ex.skeleton, False)):
        label = f"{name} {kind}"
        if not folder.is_dir():
            outcomes.append(Outcome(label, [f"no {kind} folder at {folder}"], course_path(folder), None))
            click.echo(f"{click.style('FAIL', fg='red')} {label}: {outcomes[-1].problems[0]}")
            continue
        result = session.grade(folder, seed=seed)
        ok = (result.score == result.max_score > 0) if want_full else result.score == 0
        ok = ok and not result.grader_errors
        mark = click.style("ok  ", fg="green") if ok else click.style("FAIL", fg="red")
        click.echo(f"{mark} {label}: {result.score:g}/{result.max_score:g}")
        problems = []
        if not ok:
            bad = [c for c in result.checks if (c.status != "passed") == want_full or c.status == "error"]
            problems = [f"{result.score:g}/{result.max_score:g}, expected {'full marks' if want_full else '0'}"]
            problems += [f"{c.status}: {c.name}: {c.feedback}" for c in bad[:10]]
            for problem in problems[1:]:
                click.echo(f"       {problem}")
        first = folder / ex.files[0]
        outcomes.append(Outcome(label, problems, course_path(first if first.is_file() else folder),
                                 1 if first.is_file() else None))
    for case in corpus.cases(name):
        result = session.grade(case.folder, seed=seed)
        found = corpus.verify(case, result)
        label = f"{name} known mistake {case.name}"
        mark = click.style("ok  ", fg="green") if not found else click.style("FAIL", fg="red")
        click.echo(f"{mark} {label}: {result.score:g}/{result.max_score:g}")
        for problem in found:
            click.echo(f"       {problem}")
        outcomes.append(Outcome(label, found, course_path(case.folder / "expected.toml")))
    return outcomes
