"""Names in a platform's export: the student ids made from them (readable, stable, usable as file
names), the line that says a folder is named as that platform names its downloads, and the problem
of an id found under two names."""
from __future__ import annotations

import re
import unicodedata
from pathlib import Path

from .unpack import JUNK

#: Longest name part of an id (the platform's id follows it).
MAX_NAME = 60


def fold(text: str) -> str:
    """``text`` lowercased, accents removed, every run of other characters than letters and digits
    turned into one ``-``: ``"Zoë Müller"`` -> ``"zoe-muller"``, ``"王芳"`` stays ``"王芳"``."""
    plain = "".join(ch for ch in unicodedata.normalize("NFKD", text) if not unicodedata.combining(ch))
    return re.sub(r"[\W_]+", "-", plain.casefold()).strip("-")[:MAX_NAME].strip("-")


def student_id(name: str, platform_id: str) -> str:
    """The id of a student the platform knows as ``name`` with its own id ``platform_id``:
    ``student_id("müllerzoë", "12345") == "mullerzoe_12345"``; just ``platform_id`` without a name,
    just the name without a ``platform_id`` (Moodle's "Default group").

    Unique because ``platform_id`` is; stable as long as the platform's name and id are.
    """
    return "_".join(part for part in (fold(name), platform_id) if part)


def layout_reason(what: str, found: int, other: list[str]) -> str:
    """Why a folder is a platform's download (:func:`detect` of a layout module): ``found`` entries named
    as ``what`` says, ``other`` the names of the rest; ``""`` unless named entries are the majority."""
    if not found or found < len(other):
        return ""
    shown = ", ".join(other[:3]) + (", ..." if len(other) > 3 else "")
    return f"{what}: {found} entries" + (f"; {len(other)} other entries ignored ({shown})" if other else "")


def name_conflict(whose: str, names: set[str], platform: str) -> str:
    """The :attr:`~grader.lms.Submission.problem` of one platform id whose entries carry several
    ``names`` (``whose``: "the files of Canvas user 2024"); ``""`` for one name. A platform writes one
    name per id, so such a folder is not its download, and merging its entries would grade one
    student's files as another's."""
    if len(names) < 2:
        return ""
    return (f"{whose} carry different names ({', '.join(sorted(names))}), which {platform} never writes: if this "
            f"is not a {platform} download, grade it with --layout folders.")


def split_entries(folder, parse):
    """The entries of ``folder`` (hidden and ``__MACOSX``-style junk left out, sorted by name) that
    ``parse(entry)`` reads as a platform's (its non-None results), and the names of the others
    (folders with a trailing ``/``), for :func:`layout_reason`."""
    found, other = [], []
    for entry in sorted(Path(folder).iterdir()):
        if entry.name.startswith(".") or JUNK.search(entry.name):
            continue
        parsed = parse(entry)
        if parsed is not None:
            found.append(parsed)
        else:
            other.append(entry.name + ("/" if entry.is_dir() else ""))
    return found, other
