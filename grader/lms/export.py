"""Gradebooks out (``grader export``): a batch's grades as the CSV a platform imports.

Formats (:data:`FORMATS`): ``canvas`` (:func:`grader.lms.canvas.write_gradebook`), ``moodle``
(:func:`grader.lms.moodle.write_gradebook`), ``csv`` (the batch's own ``grades.csv``, points per
check: :meth:`grader.gradebook.Gradebook.write_csv`). A refused submission or a grader error never
gets a grade (a blank cell, never 0), and the reason is written beside it.

Who a student is comes from the platform's export (stored in the gradebook by ``grader batch``) and,
where given, from a **roster CSV** (UTF-8, a header row, one row per student, ``,`` ``;`` or tab
between cells; :func:`load_roster`):

=========  ================================================================================
column     meaning
=========  ================================================================================
student    the grader's student id, as in the gradebook and ``students.csv`` (required)
name       the student's name (Canvas: "Student"; Moodle: "Full name")
email      e-mail address (Moodle: "Email address")
sis_id     Canvas: "SIS User ID"
login_id   Canvas: "SIS Login ID"
user_id    the platform's id: Canvas "ID" (user id), Moodle participant id ("Participant N")
section    Canvas: "Section"
=========  ================================================================================

Besides ``student``, at least one of the others; a cell the roster fills replaces what the export said.
"""
from __future__ import annotations

import csv
import io
import math
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

from ..errors import InputError
from ..gradebook import Gradebook
from . import canvas, moodle

FORMATS = ("canvas", "moodle", "csv")
#: What ``grader batch`` writes in its folder that an export must never replace (the gradebook, the id mapping).
BATCH_FILES = ("gradebook.sqlite", "gradebook.sqlite-wal", "gradebook.sqlite-shm", "students.csv", "index.html")
#: The identifiers each platform finds a student by (:class:`GradeRow` field, the platform's name for it).
IDENTIFIERS = {"canvas": (("user_id", "ID"), ("sis_id", "SIS User ID"), ("login_id", "SIS Login ID")),
               "moodle": (("user_id", "participant id"),)}
#: The roster's optional columns (the identifiers of :class:`GradeRow`).
ROSTER_COLUMNS = ("name", "email", "sis_id", "login_id", "user_id", "section")


@dataclass(frozen=True)
class GradeRow:
    """One student's line of an exported gradebook.

    Attributes:
        student: the grader's student id.
        status: the gradebook's status (``graded``, ``refused``, ``grader_error``).
        points: points earned on the platform's scale (rounded to 0.01), None when there is no grade.
        points_possible: full marks on the platform's scale.
        name, email, sis_id, login_id, user_id, section: who it is (``""`` unknown; see the roster).
        note: for the instructor: why there is no grade, or why a person should look at it.
        feedback: for the student: the score in one sentence, or why there is no grade (a refused
            submission's reason is written for the student; a grader error is said to be none of theirs).
    """

    student: str
    status: str
    points: float | None
    points_possible: float
    name: str = ""
    email: str = ""
    sis_id: str = ""
    login_id: str = ""
    user_id: str = ""
    section: str = ""
    note: str = ""
    feedback: str = ""

    @property
    def grade(self) -> str:
        """:attr:`points` as the platforms write points: up to two decimals, no exponent (``""`` none)."""
        return "" if self.points is None else _number(self.points)

    @property
    def full_marks(self) -> str:
        """:attr:`points_possible` written the same way."""
        return _number(self.points_possible)


def _number(x: float) -> str:
    return f"{x:.2f}".rstrip("0").rstrip(".")


@dataclass
class Exported:
    """What :func:`export` wrote: the file, a notes file beside it (Canvas) and what to tell the user."""

    out: Path
    rows: int
    notes: Path | None = None
    warnings: list[str] = field(default_factory=list)


def load_roster(path: Path) -> dict[str, dict[str, str]]:
    """The roster CSV at ``path`` (see the module's docstring): student id -> {column: value}, only
    the :data:`ROSTER_COLUMNS` it has, values stripped. Separated by commas, or by semicolons or tabs
    as Excel writes it in some locales (whichever the header holds most of); a BOM is skipped.

    Raises:
        InputError: unreadable or not UTF-8, no ``student`` column or none of the others, a row
            without a student id, or a student id twice.
    """
    try:
        text = Path(path).read_text(encoding="utf-8-sig")
        first = text.partition("\n")[0]
        reader = csv.DictReader(io.StringIO(text, newline=""), delimiter=max(",;\t", key=first.count))
        table = list(reader)
        header = [(h or "").strip() for h in reader.fieldnames or []]
    except UnicodeDecodeError as exc:
        raise InputError(f"the roster {path} is not UTF-8 (byte 0x{exc.object[exc.start]:02x} at position "
                         f"{exc.start}); save it as UTF-8 (Excel: Save As > CSV UTF-8)") from exc
    except (OSError, csv.Error) as exc:
        raise InputError(f"cannot read the roster {path} ({exc}); give a UTF-8 CSV file") from exc
    known = [c for c in ROSTER_COLUMNS if c in header]
    if "student" not in header or not known:
        raise InputError(f"the roster {path} has the columns {', '.join(header) or '(none)'}; it needs a 'student' "
                         f"column (the grader's student ids) and at least one of {', '.join(ROSTER_COLUMNS)}")
    roster: dict[str, dict[str, str]] = {}
    for line, row in enumerate(table, start=2):
        row = {(k or "").strip(): (v or "").strip() for k, v in row.items() if k is not None}
        student = row["student"]
        if not student:
            raise InputError(f"the roster {path}, line {line}: no student id; fill the 'student' column or remove "
                             "the line")
        if student in roster:
            raise InputError(f"the roster {path}, line {line}: the student {student!r} is there twice; keep one line")
        roster[student] = {c: row[c] for c in known}
    return roster


def grade_rows(rows: list[dict], platform: str, roster: dict[str, dict[str, str]] | None = None,
               points_possible: float | None = None) -> tuple[list[GradeRow], list[str]]:
    """The export lines of the gradebook ``rows`` (:meth:`Gradebook.rows`) and the warnings to show.

    Args:
        rows: the gradebook's rows.
        platform: the platform written for (``canvas``, ``moodle``): a ``user_id`` read from another
            platform's export (a Moodle participant id, a Gradescope submission id) is left out, as
            it would name another student there.
        roster: :func:`load_roster`'s result; its non-empty cells replace the stored identity.
        points_possible: full marks on the platform (scores are scaled to it); None: the exercise's.

    Raises:
        InputError: ``points_possible`` is None and no row has a result (full marks unknown).
    """
    full = max((r["max_score"] for r in rows if r["result"]), default=0.0)
    if not full and not points_possible:
        raise InputError("no student of this gradebook has been graded, so full marks are unknown; give "
                         "--points-possible (the assignment's points on the platform)")
    scale = points_possible or full
    out, foreign = [], {}
    for row in rows:
        identity = {k: str(row["identity"].get(k) or "") for k in ROSTER_COLUMNS}
        layout = row["identity"].get("layout") or "folders"
        if identity["user_id"] and layout != platform:
            identity["user_id"] = ""
            foreign.setdefault(layout, []).append(row["student"])
        identity.update({k: v for k, v in (roster or {}).get(row["student"], {}).items() if v})
        points, note, feedback = None, _note(row), _no_grade_feedback(row)
        if row["status"] == "graded" and full > 0:
            points = round(row["score"] * scale / full, 2)
            feedback = f"{_number(points)} of {_number(scale)} points."
        out.append(GradeRow(row["student"], row["status"], points, scale, note=note, feedback=feedback, **identity))
    warnings = []
    for layout, students in foreign.items():
        students = [s for s in students if not (roster or {}).get(s, {}).get("user_id")]
        _listed(warnings, students, f"were read from a {layout} export, whose ids are not {platform.capitalize()} "
                                    "ids (left out; give a --roster with user_id)")
    if roster is not None:
        graded = {r["student"] for r in rows}
        _listed(warnings, [r.student for r in out if r.student not in roster],
                "of the gradebook are not in the roster (identified from the platform's export only)")
        _listed(warnings, sorted(set(roster) - graded), "of the roster have no row in the gradebook (not exported)")
    return out, warnings


def _check_unique(lines: list[GradeRow], identifiers: tuple[tuple[str, str], ...]) -> None:
    """Refuse two students with one platform identifier: the platform would give both grades to one.

    Raises:
        InputError: naming the first two such students and the identifier.
    """
    for field_name, label in identifiers:
        seen: dict[str, str] = {}
        for line in lines:
            value = getattr(line, field_name)
            if value and value in seen:
                raise InputError(f"{seen[value]} and {line.student} both have the {label} {value}; give each "
                                 "student their own in the roster")
            seen.setdefault(value, line.student)


def _no_grade_feedback(row: dict) -> str:
    if row["status"] == "refused":
        return f"No grade: {row['error']}"
    if row["status"] == "grader_error":
        return "Not graded yet: the grader failed on this submission (not your fault); it will be graded again."
    return ""


def _note(row: dict) -> str:
    if row["status"] == "refused":
        return f"no grade: the submission was refused: {row['error']}"
    if row["status"] == "grader_error":
        return f"no grade: the grader failed (not the student's fault; grade again with --resume): {row['error']}"
    return f"needs review: {row['needs_review']}" if row["needs_review"] else ""


def _listed(warnings: list[str], students: list[str], what: str, limit: int = 10) -> None:
    if students:
        shown = ", ".join(students[:limit]) + (", ..." if len(students) > limit else "")
        warnings.append(f"{len(students)} student(s) {what}: {shown}")


def export(fmt: str, gradebook: Path, out: Path, *, roster: Path | None = None, assignment: str | None = None,
           points_possible: float | None = None, worksheet: Path | None = None) -> Exported:
    """Write the gradebook in folder ``gradebook`` (a batch's ``--out``) to ``out`` in format ``fmt``.

    Args:
        fmt: one of :data:`FORMATS`.
        gradebook: the folder holding ``gradebook.sqlite``.
        out: the CSV file to write (folders created).
        roster: a roster CSV (canvas and moodle only; see the module's docstring).
        assignment: canvas only, and required there: the assignment column's header as Canvas's own
            gradebook export writes it, ``"Exercise 3 (12345)"``.
        points_possible: canvas and moodle: full marks on the platform (scores are scaled).
        worksheet: moodle only: Moodle's own grading worksheet of the assignment, which confirms each
            row's participant and maps team folders onto their members
            (:func:`grader.lms.moodle.match_worksheet`); its Maximum Grade is the default
            ``points_possible``.

    Raises:
        InputError: an unknown format, no gradebook in ``gradebook``, a bad roster, an option that
            does not apply to ``fmt``, canvas without ``assignment``, a gradebook with no student, or
            two students with one of the platform's identifiers (:data:`IDENTIFIERS`), or ``out`` is one
            of the batch's own files (:data:`BATCH_FILES`), or ``points_possible`` is not a finite
            number above 0.
    """
    if fmt not in FORMATS:
        raise InputError(f"unknown export format {fmt!r}; choose one of {', '.join(FORMATS)}")
    if fmt != "moodle" and worksheet:
        raise InputError("--worksheet is Moodle's own grading worksheet; leave it out for " + fmt)
    if fmt != "canvas" and assignment:
        raise InputError("--assignment is the header of Canvas's assignment column; leave it out for " + fmt)
    if fmt == "csv" and (roster or points_possible):
        raise InputError("--roster and --points-possible apply to canvas and moodle; csv writes the gradebook "
                         "as it is (points per check)")
    if points_possible is not None and not (0 < points_possible < math.inf):
        raise InputError(f"--points-possible must be a number of points above 0, got {points_possible}")
    if fmt == "canvas" and not (assignment or "").strip():
        raise InputError("canvas needs --assignment \"NAME (ID)\": the header of the assignment's column in "
                         "Canvas's own gradebook export (Grades > Export), e.g. --assignment \"Exercise 3 (12345)\"")
    if Path(out).resolve() in {(Path(gradebook) / name).resolve() for name in BATCH_FILES}:
        raise InputError(f"--out {out} would overwrite what grader batch wrote in {gradebook}; write the export "
                         "elsewhere")
    people = load_roster(roster) if roster else None
    sheet = moodle.read_worksheet(worksheet) if worksheet else None
    if sheet and points_possible is None:
        points_possible = sheet.maximum  # the assignment's own scale
    with Gradebook.existing(gradebook) as book:
        if fmt == "csv":
            book.write_csv(out)
            return Exported(Path(out), len(book.students()))
        rows, exercise = book.rows(), book.exercise
    if not rows:
        raise InputError(f"the gradebook in {gradebook} holds no student yet; run grader batch first")
    lines, warnings = grade_rows(rows, fmt, people, points_possible)
    if sheet is not None:
        lines, more = moodle.match_worksheet(lines, sheet.participants)
        warnings += more
    elif fmt == "moodle" and any(r["identity"].get("layout") == "moodle" for r in rows):
        warnings.append("nothing checked each participant id against Moodle (a Moodle 4.1+ team folder carries its "
                        "group's id): give the assignment's Download grading worksheet as --worksheet")
    _check_unique(lines, IDENTIFIERS[fmt])
    if fmt == "canvas":
        notes, more = canvas.write_gradebook(lines, Path(out), assignment)
    else:
        notes, more = None, moodle.write_gradebook(lines, Path(out), datetime.now(timezone.utc))
    _listed(more, [r.student for r in lines if r.note.startswith("needs review")],
            f"need review before their grade is released (the reason is in {notes or 'the Grader note column'})")
    if points_possible is None:
        more.append(f"grades are out of {lines[0].full_marks} points ({exercise}'s full marks); if the assignment "
                    f"is worth other points in {fmt.capitalize()}, export again with --points-possible")
    return Exported(Path(out), len(lines), notes, warnings + more)
