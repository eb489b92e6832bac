"""Canvas: "Download Submissions" in, the Gradebook import CSV out.

**Download Submissions** (an assignment's page, or its zip; the names are made by Canvas's
``ContentZipper``, ``lib/content_zipper.rb`` in instructure/canvas-lms) is one flat file per
uploaded file::

    {name}[_LATE]_{user_id}_{attachment_id}_{file name}   an uploaded file
    {name}[_LATE]_{user_id}_text.html                     a text entry
    {name}[_LATE]_{user_id}_link.html                     a website URL

- ``name`` is the student's sortable name ("Müller, Zoë") lowercased with every character that is
  not a letter, digit or ``_`` removed (``müllerzoë``); Canvas also turns any ``_digits_`` in it
  into ``digits``, so the first ``_digits_`` field is the user id (Canvas's own feedback re-upload
  reads the names so; a name *ending* in ``_digits`` still misleads both). For a group assignment
  ``name`` is the group's and ``user_id`` one member's (the export grades that member only); with
  anonymous grading there is no name and the id is ``anon_{anonymous id}``.
- ``LATE`` marks a submission Canvas counts as late.
- ``file name`` is the file's name in the student's files, with Canvas's ``-1``, ``-2`` suffix before
  the extension when the student had uploaded a file of that name before (``attention-1.py``; from
  the 8th time a random UUID, ``attention-0b5e4c8a-....py``); the characters ``/\\:*?"<>|``
  become ``_``.

Each user id is one :class:`~grader.lms.Submission` whose files are named as the student named them
(suffix removed; of two files that become one name, the newer upload is kept: the higher suffix,
then the higher attachment id; the other is listed in ``entries`` as not graded; files of one user
id under two names are refused, as Canvas never writes them). A single uploaded
``.zip`` is the whole submission (unpacked by the batch). Student id: the folded name and the user id
(``mullerzoe_12345``, see :func:`grader.lms.names.student_id`).

**Gradebook import** (Canvas guide "How do I import grades in the Gradebook?"; the importer is
``app/models/gradebook_importer.rb``): see :func:`write_gradebook`.
"""
from __future__ import annotations

import csv
import io
import re
from dataclasses import dataclass
from pathlib import Path

from ..gradebook import _cell
from ..report import write_atomic
from . import Submission
from .names import layout_reason, name_conflict, split_entries, student_id

_DIGITS = re.compile(r"[0-9]+")
#: Canvas's re-upload suffix: ``base-N`` before an extension as Canvas finds it (Attachment.make_unique_filename).
_SUFFIX = re.compile(r"^(?P<base>.+?)-(?P<n>[0-9]+|[0-9a-f]{8}(?:-[0-9a-f]{4}){3}-[0-9a-f]{12})"
                     r"(?P<ext>(?:\.[A-Za-z][A-Za-z0-9]*)*\.[A-Za-z0-9]*)?$")
#: Canvas's suffix for the 8th and later upload of one name is a random UUID (Attachment.make_unique_filename).
_UUID_UPLOAD = 8
#: What Canvas names the page of a text entry and of a website URL.
_ENTRY_PAGES = ("text.html", "link.html")


@dataclass(frozen=True)
class CanvasFile:
    """One file of a Canvas download, as its name reads (see the module's docstring)."""

    path: Path
    name: str  # Canvas's lowercased name ("" with anonymous grading)
    late: bool
    user_id: str  # digits, or anon_XXXXX
    attachment_id: int  # 0 for a text entry or a URL
    original: str  # the file's name in the student's files (Canvas's -N kept)

    @property
    def upload(self) -> tuple[str, int]:
        """``(name as submitted, re-upload number)``: ``attention-1.py`` -> ``("attention.py", 1)``."""
        match = _SUFFIX.match(self.original) if self.attachment_id else None
        if not match:
            return self.original, 0
        n = match["n"]
        return match["base"] + (match["ext"] or ""), int(n) if n.isdigit() else _UUID_UPLOAD


def parse(path: Path) -> CanvasFile | None:
    """``path``'s name read as Canvas names downloaded files, or None when it is not one."""
    parts = path.name.split("_")
    for i, part in enumerate(parts):
        if part == "anon" and i + 1 < len(parts) and parts[:i] in ([], ["LATE"]):
            user, after = "anon_" + parts[i + 1], i + 2
        elif i >= 1 and _DIGITS.fullmatch(part):
            user, after = part, i + 1
        else:
            continue
        late = i >= 1 and parts[i - 1] == "LATE"
        name = "_".join(parts[:i - late])
        rest = parts[after:]
        if len(rest) == 1 and rest[0] in _ENTRY_PAGES:
            return CanvasFile(path, name, late, user, 0, rest[0])
        if len(rest) >= 2 and _DIGITS.fullmatch(rest[0]) and "_".join(rest[1:]) not in ("", ".", ".."):
            return CanvasFile(path, name, late, user, int(rest[0]), "_".join(rest[1:]))
        return None  # the first id field decides, as in Canvas's own reader
    return None


def _files(folder: Path) -> tuple[list[CanvasFile], list[str]]:
    """The Canvas files of ``folder`` and the names of its other (non-junk) entries."""
    return split_entries(folder, lambda entry: parse(entry) if entry.is_file() else None)


def detect(folder: Path) -> str:
    """Why ``folder`` is a Canvas download (most entries are files named as Canvas names them), or ``""``."""
    found, other = _files(folder)
    return layout_reason("Canvas download, named name[_LATE]_userid_attachmentid_file", len(found), other)


def read(folder: Path) -> list[Submission]:
    """One :class:`~grader.lms.Submission` per Canvas user id in ``folder`` (see the module's docstring)."""
    found, _ = _files(folder)
    by_user: dict[str, list[CanvasFile]] = {}
    for f in found:
        by_user.setdefault(f.user_id, []).append(f)
    return [_submission(Path(folder), user, files) for user, files in by_user.items()]


def _submission(folder: Path, user: str, files: list[CanvasFile]) -> Submission:
    newest: dict[str, CanvasFile] = {}
    for f in sorted(files, key=lambda f: (f.upload[1], f.attachment_id)):
        newest[f.upload[0]] = f  # a later upload of the same name replaces the earlier one
    kept = sorted(newest.values(), key=lambda f: f.path.name)
    replaced = [f for f in files if f not in kept]
    entries = [f.path.name + (f" (as {f.upload[0]})" if f.upload[0] != f.original else "") for f in kept]
    entries += [f"{f.path.name} (not graded: replaced by a newer upload of {f.upload[0]})" for f in replaced]
    first = files[0]
    problem = name_conflict(f"the files of Canvas user {user}", {f.name for f in files}, "Canvas")
    return Submission(student_id(first.name, user), folder, problem, name=first.name, user_id=user,
                      late=any(f.late for f in files), layout="canvas", entries=tuple(entries),
                      files=tuple((name, str(f.path)) for name, f in sorted(newest.items())))


#: The columns before the assignment's that Canvas reads to find the student (gradebook_importer.rb).
GRADEBOOK_COLUMNS = ("Student", "ID", "SIS User ID", "SIS Login ID", "Section")
_ASSIGNMENT = re.compile(r".*\S \([0-9]+\)$")


def write_gradebook(rows: list, out: Path, assignment: str) -> tuple[Path | None, list[str]]:
    """Write ``rows`` (:class:`grader.lms.export.GradeRow`) as a Canvas Gradebook import CSV.

    Columns, as Canvas's own export writes them and its importer reads them: ``Student, ID, SIS User ID,
    SIS Login ID, Section`` and one assignment column headed ``assignment`` ("Exercise 3 (12345)":
    Canvas finds the assignment by the id in parentheses; without one, by its title, or it creates a
    new assignment). A second row ``Points Possible`` gives full marks. Canvas finds a student by ID
    (the Canvas user id), then SIS User ID, then SIS Login ID, then by name (``Student``: the name, or
    the grader's student id when none is known). A blank grade is no grade.

    Canvas would read any other column as one more assignment, so the notes (why a student has no
    grade, what needs review) go to a file beside ``out``: ``{stem}-notes.csv`` (student, Student, ID,
    status, note), written only when there is a note (an old one is removed).

    Returns:
        The notes file (or None) and the warnings to show (an assignment header without an id, rows
        Canvas can match only by name).
    """
    warnings = []
    if not _ASSIGNMENT.match(assignment):
        warnings.append(f"--assignment {assignment!r} has no Canvas assignment id in parentheses: Canvas will match "
                        "it by title or create a new assignment (copy the header from Canvas's gradebook export)")
    fh = io.StringIO(newline="")
    writer = csv.writer(fh)
    writer.writerow([*GRADEBOOK_COLUMNS, assignment])
    writer.writerow(["Points Possible", "", "", "", "", rows[0].full_marks])
    by_name = []
    for r in rows:
        canvas_id = r.user_id if _DIGITS.fullmatch(r.user_id) else ""
        if not (canvas_id or r.sis_id or r.login_id):
            by_name.append(r.student)
        writer.writerow([_cell(x) for x in (r.name or r.student, canvas_id, r.sis_id, r.login_id, r.section)]
                        + [r.grade])
    write_atomic(out, fh.getvalue())
    if by_name:
        warnings.append(f"{len(by_name)} row(s) have no Canvas ID, SIS User ID or SIS Login ID, so Canvas can match "
                        f"them only by name (give a --roster): {', '.join(by_name[:10])}")
    notes = out.with_name(out.stem + "-notes.csv")
    noted = [r for r in rows if r.note]
    if not noted:
        notes.unlink(missing_ok=True)
        return None, warnings
    fh = io.StringIO(newline="")
    writer = csv.writer(fh)
    writer.writerow(["student", "Student", "ID", "status", "note"])
    for r in noted:
        writer.writerow([_cell(x) for x in (r.student, r.name, r.user_id, r.status, r.note)])
    return write_atomic(notes, fh.getvalue()), warnings

