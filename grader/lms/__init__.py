"""Submissions in from the platforms courses use, and gradebooks out to them.

One module per layout of a SUBMISSIONS folder, each with ``detect(folder) -> str`` (why the
folder looks like this layout, or ``""``) and ``read(folder) -> list[Submission]``:

- :mod:`~grader.lms.gradescope`: a Gradescope export (``submission_NNN/`` folders and
  ``submission_metadata.yml``), as a folder or its zip;
- :mod:`~grader.lms.canvas`: Canvas's "Download Submissions" (flat files
  ``name[_LATE]_userid_submissionid_file``);
- :mod:`~grader.lms.moodle`: Moodle's "Download all submissions"
  (``Full Name_id_assignsubmission_file_/``);
- :mod:`~grader.lms.classroom`: GitHub Classroom clones (``assignment-username/``);
- :mod:`~grader.lms.folders`: one folder or ``.zip`` per student, named by its id (the default).

:func:`discover` detects the layout (or takes the one forced with ``--layout``) and returns
the students; :func:`check_ids` refuses ids that would collide or are not file names.
"""
from __future__ import annotations

import contextlib
import importlib
import os
import shutil
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Iterator

from .. import scratch
from ..errors import InputError
from .unpack import JUNK, RefusedSubmission, safe_extract

#: Layouts in the order they are tried: the most specific first, :mod:`folders` last.
LAYOUTS = ("gradescope", "canvas", "moodle", "classroom", "folders")
#: Longest student id accepted (it becomes a file name in the outputs).
MAX_ID = 100
#: Limits for a whole class's export zip (bytes once unpacked, members).
MAX_EXPORT_BYTES = 4 * 1024 ** 3
MAX_EXPORT_MEMBERS = 200_000


@dataclass(frozen=True)
class Submission:
    """One student's submission: an id, where its files are, and who the platform says it is.

    Attributes:
        student: the id: the gradebook's key, the outputs' file names, an override's ``student``.
        source: a folder or a ``.zip`` holding the submission (copied or unpacked whole), or the
            export folder that holds :attr:`files`.
        problem: set when the submission cannot be graded as found (e.g. two entries share the
            id); the batch records it as refused with this message.
        files: ``(name, path)`` pairs when the platform exports loose files (Canvas): each
            ``path`` is copied into the submission as ``name`` (a single ``.zip`` is unpacked).
            Empty: :attr:`source` is used whole.
        name, email, sis_id, user_id: the student as the platform knows them (``""`` unknown);
            ``user_id`` is the platform's own id (Canvas user id, Moodle participant id,
            Gradescope submission id, GitHub username).
        late: the platform marked the submission late.
        layout: the layout it was read from (one of :data:`LAYOUTS`).
        entries: the export entries it was read from (names relative to the SUBMISSIONS folder),
            for the id mapping printed before grading.
    """

    student: str
    source: Path
    problem: str = ""
    files: tuple[tuple[str, str], ...] = ()
    name: str = ""
    email: str = ""
    sis_id: str = ""
    user_id: str = ""
    late: bool = False
    layout: str = "folders"
    entries: tuple[str, ...] = field(default=())

    def identity(self) -> dict:
        """Who this is, as stored in the gradebook: ``{"name", "email", "sis_id", "user_id",
        "late", "layout", "entries"}`` (JSON-able)."""
        data = asdict(self)
        for key in ("student", "source", "problem", "files"):
            data.pop(key)
        data["entries"] = list(self.entries)
        return data


@dataclass
class Found:
    """What :func:`discover` found: the layout, why it was chosen, and the students."""

    layout: str
    reason: str
    submissions: list[Submission]


def layout_module(name: str):
    """The module reading layout ``name``.

    Raises:
        InputError: ``name`` is not one of :data:`LAYOUTS`.
    """
    if name not in LAYOUTS:
        raise InputError(f"unknown layout {name!r}; choose one of {', '.join(LAYOUTS)} (or leave out --layout)")
    return importlib.import_module(f"{__name__}.{name}")


@contextlib.contextmanager
def opened(path: Path) -> Iterator[Path]:
    """The SUBMISSIONS folder itself, or, for an export zip (Gradescope's "Export Submissions"),
    a temporary folder it is safely unpacked into for the duration of the ``with`` block.

    Raises:
        InputError: ``path`` does not exist, is neither a folder nor a zip, or the zip is refused.
    """
    path = Path(path)
    if path.is_dir():
        yield path
        return
    if not path.exists():
        raise InputError(f"{path} does not exist; give the folder (or export zip) that holds the submissions")
    if path.suffix.lower() != ".zip":
        raise InputError(f"{path} is a file, not a folder or an export .zip; give the folder that holds one "
                         "folder or .zip per student, or the platform's export")
    claimed, lock = scratch.claim("export")  # a SIGKILLed batch leaves it unlocked: the next batch removes it
    try:
        root = claimed / "export"
        try:
            safe_extract(path, root, max_bytes=MAX_EXPORT_BYTES, max_members=MAX_EXPORT_MEMBERS)
        except RefusedSubmission as exc:
            raise InputError(f"cannot open the export: {exc}") from exc
        root.mkdir(exist_ok=True)  # an empty zip
        entries = [e for e in root.iterdir() if not JUNK.search(e.name)]
        # A zip of one folder (assignment_123_export/...) is that folder.
        yield entries[0] if len(entries) == 1 and entries[0].is_dir() else root
    finally:
        shutil.rmtree(claimed, ignore_errors=True)
        os.close(lock)


def discover(folder: Path, layout: str = "auto") -> Found:
    """Every student in ``folder`` (already :func:`opened`), read with ``layout`` or the detected one.

    Raises:
        InputError: an unknown layout, or no submission found (the message says what was seen).
    """
    folder = Path(folder)
    reason = f"--layout {layout}"
    if layout == "auto":
        reason, layout = next(((why, name) for name in LAYOUTS if (why := layout_module(name).detect(folder))),
                              ("no layout detected", "folders"))
    found = check_ids(layout_module(layout).read(folder))
    if not found:
        raise InputError(f"no submission found in {folder} ({reason}): {seen(folder)}. Expected one folder or "
                         ".zip per student, or an export from Canvas, Moodle, Gradescope or GitHub Classroom "
                         "(force one with --layout).")
    return Found(layout, reason, found)


def seen(folder: Path, limit: int = 5) -> str:
    """A short description of what ``folder`` holds, for "nothing found" messages."""
    entries = sorted(e for e in folder.iterdir() if not JUNK.search(e.name))
    dirs = [e.name + "/" for e in entries if e.is_dir()]
    files = [e.name for e in entries if not e.is_dir()]
    if not entries:
        return "the folder is empty"
    parts = []
    for kind, names in (("folder", dirs), ("file", files)):
        if names:
            shown = ", ".join(names[:limit]) + (", ..." if len(names) > limit else "")
            parts.append(f"{len(names)} {kind}{'s' if len(names) != 1 else ''} ({shown})")
    return "saw " + " and ".join(parts)


def check_ids(found: list[Submission]) -> list[Submission]:
    """``found`` sorted by id, with a :attr:`~Submission.problem` for ids that collide (case-insensitively:
    outputs are files, and some file systems ignore case) or that are not usable as file names; of
    twins, the first entry keeps the row and speaks for both."""
    from dataclasses import replace

    found = sorted(found, key=lambda s: s.student)
    by_id: dict[str, list[Submission]] = {}
    for sub in found:
        by_id.setdefault(sub.student.casefold(), []).append(sub)
    out, kept = [], set()
    for sub in found:
        key = sub.student.casefold()
        if key in kept:
            continue
        kept.add(key)
        twins = by_id[key]
        if len(twins) > 1:
            names = " and ".join(t.source.name if not t.entries else t.entries[0] for t in twins)
            sub = replace(sub, problem=f"{names} have the same student id; keep only one.")
        elif (not sub.student or len(sub.student) > MAX_ID or sub.student in (".", "..")
              or any(ord(ch) < 32 or ch in "/\\" for ch in sub.student)):
            sub = replace(sub, problem=f"the student id must be 1 to {MAX_ID} printable characters without "
                                       "slashes; rename it.")
        out.append(sub)
    return out
