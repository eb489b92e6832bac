"""Moodle: "Download all submissions" in, the offline grading worksheet out.

**Download all submissions** (an assignment's "View all submissions" page; the names are made by
``assign::download_submissions`` in ``mod/assign/locallib.php``): one folder per student and
submission plugin (the default since Moodle 3.1; Moodle 4.1 moved it to
``mod/assign/classes/downloader.php`` and dropped the folder's last ``_``)::

    {Full Name}_{participant id}_assignsubmission_file/attention.py        (4.1 and later)
    {Full Name}_{participant id}_assignsubmission_onlinetext/onlinetext.html
    {Full Name}_{participant id}_assignsubmission_file_/attention.py       (3.1 to 4.0)

or, with "Download submissions in folders" off (and before 3.1), one flat file per file::

    {Full Name}_{participant id}_assignsubmission_file_attention.py

``Full Name`` has its ``_`` replaced by spaces (so the first ``_digits_`` field is the participant
id); with anonymous submissions it is "Participant". Team submissions: up to 4.0 each member
has a folder, ``{group}-{Full Name}_{participant id}``; from 4.1 a team has one folder,
``{group}_{group id}``, whose id is the group's and not a participant's (the name cannot tell
them apart: only Moodle's own worksheet can, see :func:`match_worksheet`), and the students in no
group share ``Default group``, without an id. The participant
id is the one the grading worksheet's ``Identifier`` column holds ("Participant 123456"). Every
entry of one participant id is one :class:`~grader.lms.Submission` (a file folder and an online
text folder together, except that a single uploaded ``.zip`` is the whole submission; entries of
one id under two names are refused, as Moodle never writes them); student
id: the folded name and the participant id (``zoe-muller_123456``, see
:func:`grader.lms.names.student_id`). Moodle does not say which submissions are late.

**Offline grading worksheet** (feedback plugin "Offline grading worksheet",
``mod/assign/feedback/offline``): see :func:`write_gradebook`; Moodle's own worksheet, downloaded
beside it, confirms each row and maps a team's folder onto its members (:func:`match_worksheet`).
"""
from __future__ import annotations

import csv
import io
import re
import unicodedata
from dataclasses import dataclass, replace
from datetime import datetime
from pathlib import Path

from ..errors import InputError
from ..gradebook import _cell
from ..report import write_atomic
from . import Submission
from .names import layout_reason, name_conflict, split_entries, student_id
from .unpack import JUNK

#: Moodle 4.1+'s team of the students in no group, which has no id (English language pack).
DEFAULT_TEAM = "Default group"
_WHO = rf"^(?P<name>[^_]*?)(?:_(?P<id>[0-9]+)|(?<=^{DEFAULT_TEAM}))"
_FOLDER = re.compile(_WHO + r"_(?P<plugin>assignsubmission_[a-z0-9_]*[a-z0-9])_?$")
_FLAT = re.compile(_WHO + r"_(?P<plugin>assignsubmission_[a-z0-9]+)_(?P<file>.+)$")
#: What Moodle writes instead of a name for anonymous submissions (English language pack).
ANONYMOUS = "Participant"


def _entries(folder: Path) -> tuple[list[tuple[re.Match, Path]], list[str]]:
    """The entries of ``folder`` named as Moodle names them (match, path), and the other (non-junk) names."""
    def parse(entry: Path):
        match = (_FOLDER if entry.is_dir() else _FLAT).match(entry.name)
        if match and (entry.is_dir() or match["file"] not in (".", "..")):  # never copied as "..": the parent
            return match, entry
        return None

    return split_entries(folder, parse)


def detect(folder: Path) -> str:
    """Why ``folder`` is a Moodle download (most entries named ``Full Name_id_assignsubmission_...``), or ``""``."""
    found, other = _entries(folder)
    return layout_reason("Moodle download, named Full Name_participantid_assignsubmission_...", len(found), other)


def read(folder: Path) -> list[Submission]:
    """One :class:`~grader.lms.Submission` per participant id in ``folder`` (see the module's docstring)."""
    by_id: dict[str, list[tuple[re.Match, Path]]] = {}
    for match, path in _entries(folder)[0]:
        by_id.setdefault(match["id"] or "", []).append((match, path))
    found = []
    for participant, entries in by_id.items():
        name = entries[0][0]["name"].strip()
        name = "" if name == ANONYMOUS else name
        uploaded, other = [], []  # the file plugin's files, the other plugins' (online text)
        for match, path in entries:
            files = _files(path) if path.is_dir() else [(match["file"], str(path))]
            (uploaded if match["plugin"] == "assignsubmission_file" else other).extend(files)
        shown = [p.name + ("/" if p.is_dir() else "") for _, p in entries]
        if len(uploaded) == 1 and uploaded[0][0].lower().endswith(".zip") and other:
            shown += [f"{name} (not graded: the uploaded zip is the submission)" for name, _ in other]
            other = []
        files = tuple(uploaded + other)
        problem = (name_conflict(f"the entries of Moodle participant {participant}",
                                 {m["name"].strip() for m, _ in entries}, "Moodle")
                   or ("" if files else "the Moodle download holds no file for this student (an empty submission)."))
        found.append(Submission(student_id(name or "participant", participant), Path(folder), problem, name=name,
                                user_id=participant, layout="moodle", files=files, entries=tuple(shown)))
    return found


def _files(folder: Path) -> list[tuple[str, str]]:
    """``(name relative to folder, path)`` of every file under ``folder`` (junk left out)."""
    return [(p.relative_to(folder).as_posix(), str(p)) for p in sorted(folder.rglob("*"))
            if not p.is_dir() and not JUNK.search(p.relative_to(folder).as_posix())]


#: The worksheet's columns: Moodle's own download names them so, and its import reads Identifier,
#: Grade, Last modified (grade) and Feedback comments (and ignores the others: Grader note is ours).
WORKSHEET_COLUMNS = ("Identifier", "Full name", "Email address", "Grade", "Maximum grade",
                     "Last modified (grade)", "Feedback comments", "Grader note")


def write_gradebook(rows: list, out: Path, modified: datetime) -> list[str]:
    """Write ``rows`` (:class:`grader.lms.export.GradeRow`) as Moodle's offline grading worksheet, for
    the assignment's "Upload grading worksheet".

    Columns :data:`WORKSHEET_COLUMNS`. Moodle finds the student by ``Identifier`` ("Participant"
    and the participant id); ``Full name`` is the name, or the grader's student id when none is known.
    Moodle skips a blank grade, a grade above the assignment's maximum, and a grade changed in Moodle
    after ``Last modified (grade)`` (here ``modified``, ISO 8601 with its offset) unless "Allow
    updating records that have been modified more recently in Moodle" is ticked.
    ``Feedback comments`` (the score in one sentence, or why there is none) replaces the student's
    feedback, even on a row without a grade (``assignfeedback_offline``'s import sets every
    feedback cell that differs from Moodle's, blank included); ``Grader note`` (why there is no
    grade, what needs review) is for the instructor only.

    Returns:
        The warnings to show (rows without a participant id, which Moodle cannot import).
    """
    when = modified.isoformat(timespec="seconds")
    fh = io.StringIO(newline="")
    writer = csv.writer(fh)
    writer.writerow(WORKSHEET_COLUMNS)
    unknown = []
    for r in rows:
        participant = r.user_id if re.fullmatch("[0-9]+", r.user_id) else ""
        if not participant:
            unknown.append(r.student)
        writer.writerow([f"Participant {participant}" if participant else "", _cell(r.name or r.student),
                         _cell(r.email), r.grade, r.full_marks, when, _cell(r.feedback), _cell(r.note)])
    write_atomic(out, fh.getvalue())
    if unknown:
        return [f"{len(unknown)} row(s) have no Moodle participant id, so Moodle cannot import them (give a --roster "
                f"with user_id): {', '.join(unknown[:10])}"]
    return []


@dataclass(frozen=True)
class Participant:
    """One row of Moodle's own grading worksheet: participant id, full name, e-mail, team (``""`` none)."""

    user_id: str
    name: str
    email: str
    team: str


@dataclass(frozen=True)
class Worksheet:
    """Moodle's own grading worksheet: its participants and the assignment's maximum grade (None unknown)."""

    participants: list[Participant]
    maximum: float | None


def read_worksheet(path: Path) -> Worksheet:
    """The worksheet Moodle downloads ("Download grading worksheet"; the columns of
    ``mod/assign/gradingtable.php``: ``Identifier`` "Participant N", ``Full name``, ``Email address``,
    ``Team`` in a team assignment, ``Maximum Grade``).

    Raises:
        InputError: unreadable, not UTF-8, or without an ``Identifier`` column.
    """
    try:
        with open(path, newline="", encoding="utf-8-sig") as fh:
            reader = csv.DictReader(fh)
            table = list(reader)
    except (OSError, UnicodeDecodeError, csv.Error) as exc:
        raise InputError(f"cannot read Moodle's worksheet {path} ({exc}); give the CSV of the assignment's "
                         "Download grading worksheet") from exc
    if "Identifier" not in (reader.fieldnames or []):
        raise InputError(f"{path} has no Identifier column, so it is not Moodle's grading worksheet; give the CSV of "
                         "the assignment's Download grading worksheet")
    out, maxima = [], set()
    column = next((c for c in reader.fieldnames if (c or "").strip().lower() == "maximum grade"), None)
    for row in table:
        found = re.search(r"([0-9]+)\s*$", row["Identifier"] or "")
        if found:
            out.append(Participant(found[1], *((row.get(k) or "").strip() for k in ("Full name", "Email address",
                                                                                   "Team"))))
        if column and re.fullmatch(r"[0-9]+([.,][0-9]+)?", cell := (row[column] or "").strip()):
            maxima.add(float(cell.replace(",", ".")))
    return Worksheet(out, maxima.pop() if len(maxima) == 1 else None)


def _letters(text: str) -> str:
    """``text``'s letters and digits, lowercased, without accents: names compared across Moodle's folder
    names (``_`` made spaces, quotes removed) and its worksheet."""
    plain = unicodedata.normalize("NFKD", text)
    return "".join(ch for ch in plain.casefold() if ch.isalnum() and not unicodedata.combining(ch))


def match_worksheet(rows: list, participants: list[Participant]) -> tuple[list, list[str]]:
    """``rows`` (:class:`grader.lms.export.GradeRow`) checked against Moodle's own worksheet, and the
    warnings to show.

    A row keeps its participant id when the worksheet has that participant under the row's name (or
    ``{team}-{name}``, Moodle 3.x's team folders; or any name when either side has none). A row whose
    name is a team of the worksheet's ``Team`` column (Moodle 4.1+ names a team's folder by the group's
    id, which may be another student's participant id; or ``Default group``, which has none) becomes
    one row per member. Any other row with a participant id loses it, so Moodle cannot import it, and
    says why in its note.
    """
    by_id = {p.user_id: p for p in participants}
    out, covered, unconfirmed = [], set(), []
    for r in rows:
        p = by_id.get(r.user_id) if r.user_id else None
        members = [q for q in participants if q.team and r.name and _letters(q.team) == _letters(r.name)]
        if p and (not r.name or not p.name or _letters(r.name) in (_letters(p.name), _letters(p.team + p.name))):
            out.append(replace(r, email=r.email or p.email))
            covered.add(p.user_id)
        elif members:
            out += [replace(r, user_id=q.user_id, name=q.name, email=q.email) for q in members]
            covered.update(q.user_id for q in members)
        elif not r.user_id:
            out.append(r)
        else:
            why = (f"participant {r.user_id} is {p.name} in Moodle's worksheet, not {r.name}" if p
                   else f"Moodle's worksheet has no participant {r.user_id}")
            out.append(replace(r, user_id="", note="; ".join(x for x in (f"not uploaded: {why}", r.note) if x)))
            unconfirmed.append(r.student)
    warnings = []
    if unconfirmed:
        warnings.append(f"{len(unconfirmed)} row(s) are not confirmed by Moodle's worksheet and have no Identifier "
                        f"(why is in the Grader note): {', '.join(unconfirmed[:10])}")
    missing = [f"{p.name or 'Participant'} (Participant {p.user_id})" for p in participants if p.user_id not in covered]
    if missing:
        warnings.append(f"{len(missing)} participant(s) of the worksheet have no row here (no submission read): "
                        f"{', '.join(missing[:10])}{', ...' if len(missing) > 10 else ''}")
    return out, warnings
