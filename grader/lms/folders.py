"""The default layout: one sub-folder or ``.zip`` per student, named by the student's id.

``submissions/ada/attention.py``, ``submissions/bob.zip``: ids ``ada`` and ``bob``. Hidden entries
and ``__MACOSX`` are ignored; nested folders inside a submission are found later by
:func:`grader.lms.unpack.locate`.
"""
from __future__ import annotations

from pathlib import Path

from . import Submission
from .unpack import JUNK


def detect(folder: Path) -> str:
    """Why ``folder`` is one entry per student (any folder or zip in it), or ``""``; loose files,
    which are nobody's submission, are named."""
    if not read(folder):
        return ""
    loose = [e.name for e in sorted(Path(folder).iterdir()) if e.is_file() and e.suffix.lower() != ".zip"
             and not e.name.startswith(".") and not JUNK.search(e.name)]
    shown = ", ".join(loose[:3]) + (", ..." if len(loose) > 3 else "")
    return "one folder or .zip per student" + (
        f"; {len(loose)} loose file{'s' if len(loose) > 1 else ''} ignored ({shown}): a student's work must be in a "
        "folder or .zip of their own" if loose else "")


def read(folder: Path) -> list[Submission]:
    """Every sub-folder and ``.zip`` of ``folder``, id = its name (a zip's without ``.zip``)."""
    found = []
    for entry in sorted(Path(folder).iterdir()):
        if entry.name.startswith(".") or JUNK.search(entry.name):
            continue
        if entry.is_dir():
            found.append(Submission(entry.name, entry, entries=(entry.name + "/",)))
        elif entry.suffix.lower() == ".zip":
            found.append(Submission(entry.stem, entry, entries=(entry.name,)))
    return found
