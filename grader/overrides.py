"""Instructor overrides: a person's decision on one check of one student (or of a group), with the reason.

An overrides file is CSV (it opens in any spreadsheet), one row per student and check::

    # exercise 1, reviewed by the course staff   <- lines starting with # are ignored
    student,check,points,comment
    ada,concat_w_o,1,"'glued together and blended by one more linear layer' is concat + W_O"
    bob,test_no_heads_split_tokens,0,"says each head reads 'its share of the sentence'"

- ``student``: the submission folder's name (``submissions/ada`` -> ``ada``); in a batch, also a list
  of students separated by ``;`` (``ada; bob; cy``: the same decision for each; an id that itself holds
  a ``;`` is taken whole when the batch has that student);
- ``check``: the check's name as in the report (``test_concat_w_o``), or a rubric line's id
  (``concat_w_o``, the same check without ``test_``);
- ``points``: what the check is worth for this student, from 0 to the check's maximum;
- ``comment``: why; required, and shown next to the points;
- ``group`` (optional column): a review group of the batch's class overview (``G-3f9a2c01``, see
  :mod:`grader.rubric.groups`) instead of a student: the decision applies to every member. A row names a
  student or a group, not both. A student's own row for the same check wins over its group's row.

:func:`load_overrides` reads a file (every mistake is reported with the file and the line);
:func:`resolve_targets` turns group and list rows into one row per student against the batch's groups;
:func:`apply_overrides` sets :attr:`CheckResult.override <grader.results.CheckResult.override>`,
which replaces the automatic points in the score, the gradebook and the report (a group's decision
also records ``"group"``, so both show where it came from).
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
#: Key of a group's rows in :func:`load_overrides`' result: a control character no student id holds.
GROUP_KEY = "\x1dgroup "


class OverrideError(InputError):
    """A row of an overrides file is wrong; the message names the file and the line (exit status 2)."""


@dataclass(frozen=True)
class Override:
    """One row: ``points`` for ``check`` of ``student``, because ``comment``; ``group``: the review group
    the row named (then ``student`` is empty until :func:`resolve_targets` gives one row per member)."""

    student: str
    check: str
    points: float
    comment: str
    source: str = ""  # the file
    line: int = 0  # its line number (1-based)
    group: str = ""

    @property
    def where(self) -> str:
        return f"{self.source} line {self.line}" if self.source else "override"


def load_overrides(path: Path) -> dict[str, list[Override]]:
    """Read an overrides CSV file: student name (or list, as written) -> its overrides, in file order;
    a group's rows under ``GROUP_KEY + group id``.

    Raises:
        OverrideError: unreadable file, missing columns, a row without a check or without a student
            or group (or with both), points that are not a number or negative, an empty comment, or the
            same student (group) and check twice.
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
        student, check, group = cells.get("student", ""), cells.get("check", ""), cells.get("group", "")
        if student and group:
            raise OverrideError(f"{where}: name a student or a group, not both (student {student!r}, "
                                f"group {group!r})")
        if not (student or group) or not check:
            raise OverrideError(f"{where}: every row needs a student (or a group) and a check")
        try:
            points = float(cells.get("points", ""))
        except ValueError:
            raise OverrideError(f"{where}: points {cells.get('points', '')!r} is not a number") from None
        if not points >= 0:
            raise OverrideError(f"{where}: points must be 0 or more, got {cells.get('points')}")
        comment = cells.get("comment", "")
        if not comment:
            raise OverrideError(f"{where}: a comment is required (say why the points were changed)")
        target = GROUP_KEY + group if group else student
        key = (target, _function(check))
        if key in seen:
            raise OverrideError(f"{where}: {'group ' + group if group else student} / {check} is overridden "
                                f"twice (also on line {seen[key]})")
        seen[key] = line
        out.setdefault(target, []).append(
            Override(student, check, points, comment, source=str(path), line=line, group=group))
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
        check.override = {"points": o.points, "comment": o.comment, **({"group": o.group} if o.group else {})}
    return result


def resolve_targets(decisions: dict[str, list[Override]], students: set[str],
                    groups: dict[str, list[str]]) -> dict[str, list[Override]]:
    """One entry per student: group rows given to each member of the group, list rows (``ada; bob``) to
    each student listed. A student's own row for a check wins over a group's or a list's row for it.

    Args:
        decisions: :func:`load_overrides`' result.
        students: the students of the batch (a key that is one of them is never split at ``;``).
        groups: group id -> members, the batch's review groups
            (:func:`grader.rubric.groups.members_by_id`).

    Returns:
        student -> rows (a group's rows carry ``group``); students not in the batch are kept (the
        caller reports them).

    Raises:
        OverrideError: a row names a group the batch does not have (the known groups are listed), or
            two group/list rows give the same student's check (both lines named).
    """
    own: dict[str, list[Override]] = {}
    shared: dict[str, list[Override]] = {}
    for target, rows in decisions.items():
        if target.startswith(GROUP_KEY):
            gid = target[len(GROUP_KEY):]
            if gid not in groups:
                known = ", ".join(sorted(groups)) or "none (this exercise has no review groups)"
                raise OverrideError(f"{rows[0].where}: no review group {gid!r} in this batch; "
                                    f"known groups: {known}")
            for member in groups[gid]:
                shared.setdefault(member, []).extend(dataclasses.replace(o, student=member) for o in rows)
        elif target not in students and ";" in target:
            for member in (s.strip() for s in target.split(";")):
                if member:
                    shared.setdefault(member, []).extend(dataclasses.replace(o, student=member) for o in rows)
        else:
            own.setdefault(target, []).extend(rows)
    out = {s: list(rows) for s, rows in own.items()}
    for student, rows in shared.items():
        taken = {_function(o.check) for o in own.get(student, [])}
        first: dict[str, Override] = {}
        for o in rows:
            check = _function(o.check)
            if check in first:
                raise OverrideError(f"{o.where}: {student} / {o.check} is also given on line "
                                    f"{first[check].line}; keep one of the two rows")
            first[check] = o
            if check not in taken:
                out.setdefault(student, []).append(o)
    return out


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
