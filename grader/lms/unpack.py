"""Unpack a student's zip safely and find the folder that holds the exercise's files.

LMS and Gradescope exports nest the files in extra folders and add ``__MACOSX`` junk:
:func:`locate` finds the folder that actually holds the exercise's files.

Zips are checked before anything is written: no absolute paths, no ``..``, no symlinks,
and size limits against zip bombs. A refused zip is that student's problem only
(:class:`RefusedSubmission`), never the batch's.
"""
from __future__ import annotations

import re
import stat
import zipfile
import zlib
from pathlib import Path, PurePosixPath

#: Limits for one student's zip (uncompressed bytes, members, compression ratio).
MAX_UNZIPPED_BYTES = 50 * 1024 * 1024
MAX_MEMBERS = 2000
MAX_RATIO = 200
JUNK = re.compile(r"(^|/)(__MACOSX|\.DS_Store|\._[^/]*|Thumbs\.db|desktop\.ini)(/|$)")


class RefusedSubmission(Exception):
    """A submission that cannot be graded as given; the message says why, for the student."""


def safe_extract(archive: Path, dest: Path, *, max_bytes: int = MAX_UNZIPPED_BYTES,
                 max_members: int = MAX_MEMBERS) -> None:
    """Extract ``archive`` into ``dest`` after checking every member.

    The limits default to one student's (:data:`MAX_UNZIPPED_BYTES`, :data:`MAX_MEMBERS`); a whole
    class's export passes its own.

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
        if len(members) > max_members:
            raise RefusedSubmission(f"{archive.name} has {len(members)} files; at most {max_members} are accepted.")
        total = sum(m.file_size for m in members)
        packed = max(sum(m.compress_size for m in members), 1)
        if total > max_bytes or total / packed > MAX_RATIO and total > 1024 * 1024:
            raise RefusedSubmission(
                f"{archive.name} unpacks to {total:,} bytes (limit {max_bytes:,}, ratio "
                f"{total / packed:.0f}:1): refused as a possible zip bomb.")
        for m in members:
            m.filename = member_name(m)  # what is checked below is what _extract writes
            name = m.filename.replace("\\", "/")
            path = PurePosixPath(name)
            if name.startswith("/") or re.match(r"^[A-Za-z]:", name) or ".." in path.parts:
                raise RefusedSubmission(f"{archive.name} contains the unsafe path {m.filename!r}; refused.")
            if stat.S_ISLNK(m.external_attr >> 16):
                raise RefusedSubmission(f"{archive.name} contains a symbolic link ({m.filename}); refused.")
        try:
            _extract(zf, archive, dest, max_bytes)
        except (zipfile.BadZipFile, NotImplementedError, RuntimeError, OSError, EOFError, zlib.error) as exc:
            raise RefusedSubmission(f"{archive.name} is damaged, encrypted or uses an unsupported "
                                    f"compression ({type(exc).__name__}: {exc}).") from exc


def member_name(member: zipfile.ZipInfo) -> str:
    """``member``'s name. Without the UTF-8 flag (bit 11) the zip standard says cp437, as Python
    reads it, but Info-ZIP's ``zip``, rubyzip (Canvas's "Download Submissions" before it set
    ``unicode_names``) and others store UTF-8 there: a name whose bytes are valid UTF-8 is read as
    UTF-8 (``müllerzoë``, not ``m├╝llerzo├½``), any other stays cp437."""
    if member.flag_bits & 0x800:
        return member.filename
    try:
        return member.filename.encode("cp437").decode("utf-8")
    except UnicodeError:
        return member.filename


def _extract(zf: zipfile.ZipFile, archive: Path, dest: Path, max_bytes: int) -> None:
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
                if written > max_bytes:  # sizes in the header can lie
                    raise RefusedSubmission(f"{archive.name} unpacks to more than "
                                            f"{max_bytes:,} bytes: refused as a possible zip bomb.")
                out.write(chunk)


def locate(root: Path, required: tuple[str, ...], exercise: str = "", skeleton: Path | None = None) -> Path:
    """The folder under ``root`` that holds the exercise's files (``root`` itself or nested).

    When several folders hold them and exactly one is named ``exercise``, that one: a student
    repository made from the student bundle (GitHub Classroom) holds the work in ``exercise3/`` and
    the untouched skeleton in ``exercises/exercise3/skeleton/``. That copy, while its files are those
    of ``skeleton`` (the exercise's own), is never the work: a repository whose ``exercise3/`` was
    deleted or renamed is refused, not graded on the skeleton.

    Raises:
        RefusedSubmission: the files are nowhere (or only in the bundle's untouched skeleton copy),
            or in several folders.
    """
    first = required[0]
    if (root / first).is_file():
        return root
    hits = [p.parent for p in root.rglob(first) if p.is_file() and not JUNK.search(p.relative_to(root).as_posix())]
    copies = [h for h in hits if _bundle_skeleton(h, root, exercise, skeleton, required)]
    work = [h for h in hits if h not in copies]
    named = [h for h in work if exercise and h.name == exercise]
    if len(work) == 1 or len(named) == 1:
        return (named or work)[0]
    if not work and copies:
        raise RefusedSubmission(f"no {first} of the student's: the only one is the student bundle's untouched skeleton "
                                f"({copies[0].relative_to(root).as_posix()}/); the work belongs in {exercise}/{first} "
                                "(deleted or renamed?).")
    if not work:
        raise RefusedSubmission(f"no {first} found in the submission (looked in every folder).")
    rel = ", ".join(str(h.relative_to(root)) for h in work[:5])
    raise RefusedSubmission(f"{first} found in several folders ({rel}); submit only one.")


def _bundle_skeleton(folder: Path, root: Path, exercise: str, skeleton: Path | None, required: tuple[str, ...]) -> bool:
    """True when ``folder`` is the student bundle's copy ``exercises/EXERCISE/skeleton/`` with the files of
    ``skeleton`` unchanged."""
    if not exercise or skeleton is None or folder.relative_to(root).parts[-3:] != ("exercises", exercise, "skeleton"):
        return False
    return all((folder / name).is_file() and (folder / name).read_bytes() == (skeleton / name).read_bytes()
               for name in required if (skeleton / name).is_file())
