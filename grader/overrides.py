"""Instructor overrides: a person's decision on one check of one student, with the reason.

An overrides file is CSV (it opens in any spreadsheet), one row per student and check::

    # exercise 1, reviewed by the course staff   <- lines starting with # are ignored
    student,check,points,comment
    ada,concat_w_o,1,"'glued together and blended by one more linear layer' is concat + W_O"
    bob,test_no_heads_split_tokens,0,"says each head reads 'its share of the sentence'"

- ``student``: the submission folder's name (``submissions/ada`` -> ``ada``);
- ``check``: the check's name as in the report (``test_concat_w_o``), or a rubric line's id
  (``concat_w_o``, the same check without ``test_``);
- ``points``: what the check is worth for this student, from 0 to the check's maximum;
- ``comment``: why; required, and shown next to the points.

:func:`load_overrides` reads a file (every mistake is reported with the file and the line);
:func:`apply_overrides` sets :attr:`CheckResult.override <grader.results.CheckResult.override>`,
which replaces the automatic points in the score, the gradebook and the report.
"""
from __future__ import annotations

import csv
import dataclasses
import io
from dataclasses import dataclass
from pathlib import Path

from .errors import InputError
from .results import CheckResult, SubmissionResult

COLUMNS = ("student", "check", "points", "comment")


class OverrideError(InputError):
    """A row of an overrides file is wrong; the message names the file and the line (exit status 2)."""


@dataclass(frozen=True)
class Override:
    """One row: ``points`` for ``check`` of ``student``, because ``comment``."""

    student: str
    check: str
    points: float
    comment: str
    source: str = ""  # the file
    line: int = 0  # its line number (1-based)

    @property
    def where(self) -> str:
        return f"{self.source} line {self.line}" if self.source else "override"


def load_overrides(path: Path) -> dict[str, list[Override]]:
    """Read an overrides CSV file: student name -> that student's overrides, in file order.

    Raises:
        OverrideError: unreadable file, missing columns, an empty student or check, points that are
            not a number or negative, an empty comment, or the same student and check twice.
    """
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as exc:
        raise OverrideError(f"cannot read overrides file {path}: {exc}") from exc
    # Comment lines become empty lines, so the csv module's line numbers stay those of the file.
    cleaned = "\n".join("" if line.lstrip().startswith("#") else line for line in text.splitlines())
    reader = csv.reader(io.StringIO(cleaned))
    header: list[str] | None = None
    out: dict[str, list[Override]] = {}
    seen: dict[tuple[str, str], int] = {}
    for row in reader:
        line = reader.line_num
        if not any(cell.strip() for cell in row):
            continue
        if header is None:
            header = [cell.strip().lower() for cell in row]
            missing = [c for c in COLUMNS if c not in header]
            if missing:
                raise OverrideError(f"{path} line {line}: the header must name the columns "
                                    f"{', '.join(COLUMNS)}; missing: {', '.join(missing)}")
            continue
        cells = dict(zip(header, (cell.strip() for cell in row)))
        where = f"{path} line {line}"
        student, check = cells.get("student", ""), cells.get("check", "")
        if not student or not check:
            raise OverrideError(f"{where}: every row needs a student and a check")
        try:
            points = float(cells.get("points", ""))
        except ValueError:
            raise OverrideError(f"{where}: points {cells.get('points', '')!r} is not a number") from None
        if not points >= 0:
            raise OverrideError(f"{where}: points must be 0 or more, got {cells.get('points')}")
        comment = cells.get("comment", "")
        if not comment:
            raise OverrideError(f"{where}: a comment is required (say why the points were changed)")
        key = (student, _function(check))
        if key in seen:
            raise OverrideError(f"{where}: {student} / {check} is overridden twice (also on line {seen[key]})")
        seen[key] = line
        out.setdefault(student, []).append(
            Override(student, check, points, comment, source=str(path), line=line))
    if header is None:
        raise OverrideError(f"{path}: empty; the first row must be the header {','.join(COLUMNS)}")
    return out


def _function(name: str) -> str:
    """``concat_w_o``, ``test_concat_w_o`` and ``test_concat_w_o[...]`` all name one check function."""
    name = name.split("[")[0]
    return name if name.startswith("test_") else f"test_{name}"


def find_check(result: SubmissionResult, name: str) -> CheckResult | None:
    """The check of ``result`` that ``name`` refers to (exact name first, then rubric id), or None.

    Raises:
        OverrideError: ``name`` is a parametrized check's function and matches several cases.
    """
    exact = [c for c in result.checks if c.name in (name, f"test_{name}")]
    if exact:
        return exact[0]
    by_function = [c for c in result.checks if _function(c.name) == _function(name)]
    if len(by_function) > 1:
        raise OverrideError(f"{name!r} matches {len(by_function)} checks; name one: "
                            + ", ".join(c.name for c in by_function[:5]))
    return by_function[0] if by_function else None


def apply_overrides(result: SubmissionResult, overrides_for_student: list[Override]) -> SubmissionResult:
    """Set ``override`` on the checks named by ``overrides_for_student`` (one student's rows).

    Returns:
        ``result`` itself, changed in place (its score now counts the overridden points).

    Raises:
        OverrideError: a row names a check this result does not have, or gives more points than the
            check is worth; the message names the file and the line. Nothing is changed then.
    """
    planned = []
    for o in overrides_for_student:
        try:
            check = find_check(result, o.check)
        except OverrideError as exc:
            raise OverrideError(f"{o.where}: {exc.message}") from None
        if check is None:
            known = ", ".join(c.name for c in result.checks) or "none"
            raise OverrideError(f"{o.where}: {result.exercise} has no check named {o.check!r} "
                                f"(student {o.student}); known checks: {known}")
        if o.points > check.max_points:
            raise OverrideError(f"{o.where}: {o.points:g} points for {check.name}, which is worth "
                                f"{check.max_points:g}")
        planned.append((check, o))
    for check, o in planned:
        check.override = {"points": o.points, "comment": o.comment}
    return result


def check_before_grading(decisions: dict[str, list[Override]], exercise: str, checks: list[CheckResult]) -> None:
    """Refuse ``decisions`` (:func:`load_overrides`) before anything is graded when a row names a check
    that ``checks`` (the exercise's, from :func:`grader.judge.collected_checks`) does not have, matches
    several of them, or gives more points than the check is worth: each student's rows are applied to
    a copy of ``checks`` as :func:`apply_overrides` would apply them to the student's result.

    Raises:
        OverrideError: as :func:`apply_overrides`, naming the file and the line.
    """
    for rows in decisions.values():
        blank = SubmissionResult(exercise=exercise, submission="", seed=0,
                                 checks=[dataclasses.replace(c) for c in checks])
        apply_overrides(blank, rows)


def student_of(result: SubmissionResult) -> str:
    """The student name of a result in an overrides file: its submission folder's name."""
    return Path(result.submission).name


def apply_overrides_file(result: SubmissionResult, path: Path, student: str | None = None) -> SubmissionResult:
    """Load ``path`` and apply the rows of ``student`` (default: :func:`student_of` ``result``)."""
    rows = load_overrides(path).get(student or student_of(result), [])
    return apply_overrides(result, rows)
