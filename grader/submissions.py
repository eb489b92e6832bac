"""Find the submissions in an instructor's folder and unpack zips safely.

A SUBMISSIONS folder holds one sub-folder or one ``.zip`` per student; the student id is
the folder name or the zip's stem. LMS and Gradescope exports nest the files in extra
folders and add ``__MACOSX`` junk: :func:`locate` finds the folder that actually holds the
exercise's files.

Zips are checked before anything is written: no absolute paths, no ``..``, no symlinks,
and size limits against zip bombs. A refused zip is that student's problem only
(:class:`RefusedSubmission`), never the batch's.
"""
from __future__ import annotations

import re
import stat
import zipfile
import zlib
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

#: Limits for one student's zip (uncompressed bytes, members, compression ratio).
MAX_UNZIPPED_BYTES = 50 * 1024 * 1024
MAX_MEMBERS = 2000
MAX_RATIO = 200
JUNK = re.compile(r"(^|/)(__MACOSX|\.DS_Store|\._[^/]*|Thumbs\.db|desktop\.ini)(/|$)")


class RefusedSubmission(Exception):
    """A submission that cannot be graded as given; the message says why, for the student."""


@dataclass(frozen=True)
class Submission:
    """One student's submission: an id and where it is (a folder or a zip).

    ``problem`` is set when the submission cannot be graded as found (e.g. two entries
    share the id); the batch then records it as refused with that message.
    """

    student: str
    source: Path
    problem: str = ""


#: Longest student id accepted (it becomes a file name in the outputs).
MAX_ID = 100


def discover(folder: Path) -> list[Submission]:
    """Every student in ``folder``: sub-folders and ``.zip`` files, sorted by student id.

    Hidden entries and ``__MACOSX`` are ignored.

    Raises:
        FileNotFoundError: ``folder`` is not a folder.
    """
    folder = Path(folder)
    if not folder.is_dir():
        raise FileNotFoundError(f"submissions folder {folder} does not exist")
    found = []
    for entry in sorted(folder.iterdir()):
        if entry.name.startswith(".") or JUNK.search(entry.name):
            continue
        if entry.is_dir():
            found.append(Submission(entry.name, entry))
        elif entry.suffix.lower() == ".zip":
            found.append(Submission(entry.stem, entry))
    by_id: dict[str, list[Submission]] = {}
    for sub in found:  # case-insensitive: outputs are files, and some file systems ignore case
        by_id.setdefault(sub.student.casefold(), []).append(sub)
    out = []
    for sub in found:
        twins = by_id[sub.student.casefold()]
        if len(twins) > 1:
            names = " and ".join(t.source.name for t in twins)
            out.append(Submission(sub.student, sub.source, f"{names} have the same student id; keep only one."))
        elif len(sub.student) > MAX_ID or any(ord(ch) < 32 or ch in "/\\" for ch in sub.student):
            out.append(Submission(sub.student, sub.source,
                                  f"the student id must be at most {MAX_ID} printable characters; rename it."))
        else:
            out.append(sub)
    # A twin keeps one row in the gradebook: the first entry speaks for both.
    seen: set[str] = set()
    return [s for s in out if not (s.student.casefold() in seen or seen.add(s.student.casefold()))]


def safe_extract(archive: Path, dest: Path) -> None:
    """Extract ``archive`` into ``dest`` after checking every member.

    Raises:
        RefusedSubmission: not a zip, an absolute or ``..`` path, a symlink, too many
            members, too large once unpacked, or a suspicious compression ratio.
    """
    try:
        zf = zipfile.ZipFile(archive)
    except (zipfile.BadZipFile, OSError) as exc:
        raise RefusedSubmission(f"{archive.name} is not a readable zip file ({exc}).") from exc
    with zf:
        members = zf.infolist()
        if len(members) > MAX_MEMBERS:
            raise RefusedSubmission(f"{archive.name} has {len(members)} files; at most {MAX_MEMBERS} are accepted.")
        total = sum(m.file_size for m in members)
        packed = max(sum(m.compress_size for m in members), 1)
        if total > MAX_UNZIPPED_BYTES or total / packed > MAX_RATIO and total > 1024 * 1024:
            raise RefusedSubmission(
                f"{archive.name} unpacks to {total:,} bytes (limit {MAX_UNZIPPED_BYTES:,}, ratio "
                f"{total / packed:.0f}:1): refused as a possible zip bomb.")
        for m in members:
            name = m.filename.replace("\\", "/")
            path = PurePosixPath(name)
            if name.startswith("/") or re.match(r"^[A-Za-z]:", name) or ".." in path.parts:
                raise RefusedSubmission(f"{archive.name} contains the unsafe path {m.filename!r}; refused.")
            if stat.S_ISLNK(m.external_attr >> 16):
                raise RefusedSubmission(f"{archive.name} contains a symbolic link ({m.filename}); refused.")
        try:
            _extract(zf, archive, dest)
        except (zipfile.BadZipFile, NotImplementedError, RuntimeError, OSError, EOFError, zlib.error) as exc:
            raise RefusedSubmission(f"{archive.name} is damaged, encrypted or uses an unsupported "
                                    f"compression ({type(exc).__name__}: {exc}).") from exc


def _extract(zf: zipfile.ZipFile, archive: Path, dest: Path) -> None:
    """Write the (already checked) members of ``zf`` under ``dest``, counting real bytes."""
    dest.mkdir(parents=True, exist_ok=True)
    written = 0
    for m in zf.infolist():
        if JUNK.search(m.filename) or m.is_dir():
            continue
        target = dest / m.filename
        target.parent.mkdir(parents=True, exist_ok=True)
        with zf.open(m) as src, open(target, "wb") as out:
            while chunk := src.read(1 << 16):
                written += len(chunk)
                if written > MAX_UNZIPPED_BYTES:  # sizes in the header can lie
                    raise RefusedSubmission(f"{archive.name} unpacks to more than "
                                            f"{MAX_UNZIPPED_BYTES:,} bytes: refused as a possible zip bomb.")
                out.write(chunk)


def locate(root: Path, required: tuple[str, ...]) -> Path:
    """The folder under ``root`` that holds the exercise's files (``root`` itself or nested).

    Raises:
        RefusedSubmission: the files are nowhere, or in several folders.
    """
    first = required[0]
    if (root / first).is_file():
        return root
    hits = [p.parent for p in root.rglob(first) if p.is_file() and not JUNK.search(p.relative_to(root).as_posix())]
    if len(hits) == 1:
        return hits[0]
    if not hits:
        raise RefusedSubmission(f"no {first} found in the submission (looked in every folder).")
    rel = ", ".join(str(h.relative_to(root)) for h in hits[:5])
    raise RefusedSubmission(f"{first} found in several folders ({rel}); submit only one.")
