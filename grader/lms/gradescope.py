"""Gradescope: its "Export Submissions" download in (:func:`detect`, :func:`read`) and one autograder
upload's folder (:func:`upload_folder`); its ``results.json`` out is :mod:`grader.lms.gradescope_results`
(:func:`results_json` is also here, for callers of this module).

The export is a folder ``assignment_NNN_export/`` (or its zip, which :func:`grader.lms.opened`
unpacks) holding one folder ``submission_NNN/`` per submission, with the student's files as
uploaded (maybe nested: :func:`grader.lms.unpack.locate` finds them), and
``submission_metadata.yml``. Gradescope writes that file from Ruby, so its keys are Ruby
symbols (``:submitters:``, loaded by YAML as strings starting with a colon)::

    submission_111:
      :submitters:
      - :name: Zoë Müller
        :sid: '12345'
        :email: zoe@uni.example
      :created_at: 2026-11-02 21:53:23.371634000 -07:00
      :score: 18.5
      :history: []

(Gradescope documents no schema; this is the form that the public tools reading these exports
expect: one entry per submission folder, each with its list of submitters.) The file is read with
:class:`MetadataLoader`, PyYAML's safe loader that also reads Ruby's ``!ruby/...`` tags as plain
data, so nothing in it can build an object.
"""
from __future__ import annotations

import contextlib
import re
from collections import Counter
from datetime import datetime
from pathlib import Path

import yaml

from ..errors import InputError
from . import MAX_ID, Submission
from .gradescope_results import HIDDEN_VISIBILITY, VISIBILITIES, results_json  # noqa: F401 - re-exported
from .unpack import JUNK, RefusedSubmission, locate

#: The export's metadata file, beside the ``submission_NNN/`` folders.
METADATA = "submission_metadata.yml"
#: Largest ``submission_metadata.yml`` read (a class of thousands with their histories is a few MB).
MAX_METADATA_BYTES = 64 * 1024 * 1024
#: Longest name, email or SID kept from the metadata.
MAX_FIELD = 200


# ------------------------------------------------------------------------------ the export in
class MetadataLoader(getattr(yaml, "CSafeLoader", yaml.SafeLoader)):
    """PyYAML's safe loader (on libyaml's parser where PyYAML has it: a class of 1000 with their histories
    reads in under a second instead of 4) that also reads the tags of a Ruby YAML dump as plain data: a
    ``!ruby/object:BigDecimal 18:0.185e2`` score as the float 18.5, any other ``!ruby/...`` node as
    the string, list or mapping it holds. Like ``yaml.safe_load``, it never builds an object."""


def _ruby_node(loader: MetadataLoader, suffix: str, node: yaml.Node):
    if isinstance(node, yaml.ScalarNode):
        value = loader.construct_scalar(node)
        if suffix == "object:BigDecimal":  # Ruby's BigDecimal#_dump: "precision:digits"
            try:
                return float(value.rpartition(":")[2])
            except ValueError:
                return value
        return value
    if isinstance(node, yaml.SequenceNode):
        return loader.construct_sequence(node, deep=True)
    return loader.construct_mapping(node, deep=True)


MetadataLoader.add_multi_constructor("!ruby/", _ruby_node)


def export_root(folder: Path) -> Path | None:
    """The export folder: ``folder`` itself when it holds :data:`METADATA`, or the one folder it
    holds (``assignment_NNN_export/``) when that does; None otherwise."""
    folder = Path(folder)
    if (folder / METADATA).is_file():
        return folder
    entries = [e for e in folder.iterdir() if not e.name.startswith(".") and not JUNK.search(e.name)]
    if len(entries) == 1 and entries[0].is_dir() and (entries[0] / METADATA).is_file():
        return entries[0]
    return None


def detect(folder: Path) -> str:
    """Why ``folder`` is a Gradescope export (it, or its only sub-folder, holds :data:`METADATA`), or ``""``."""
    root = export_root(folder)
    if root is None:
        return ""
    return f"Gradescope export: {'' if root == Path(folder) else root.name + '/'}{METADATA}"


def load_metadata(path: Path) -> dict[str, dict]:
    """``submission_metadata.yml`` as ``{folder name: entry}``, the symbols' colons dropped from the keys
    of each entry and of each submitter (``:submitters:`` -> ``submitters``), so
    ``entry["submitters"][0]["sid"]``. Anchors and aliases are kept shared, never expanded (a "billion
    laughs" file costs what it weighs), and the file may hold at most :data:`MAX_METADATA_BYTES`.

    Raises:
        InputError: the file is too large, not YAML (or nested too deep to read), or not a mapping of
            submission folders; one line, with the line of the fault where YAML gives one.
    """
    again = "download the export again from Gradescope (Assignment > Review Grades > Export Submissions)"
    try:
        size = path.stat().st_size
        if size > MAX_METADATA_BYTES:
            raise InputError(f"{path.name} is {size:,} bytes, more than the {MAX_METADATA_BYTES:,} a Gradescope "
                             f"export's metadata can be; {again}")
        data = yaml.load(path.read_text(encoding="utf-8-sig"), Loader=MetadataLoader)  # noqa: S506 - safe loader
    except (OSError, UnicodeDecodeError, yaml.YAMLError, RecursionError) as exc:
        raise InputError(f"cannot read {path.name} of the Gradescope export ({_yaml_problem(exc)}); {again}") from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise InputError(f"{path.name} of the Gradescope export holds a {type(data).__name__}, not one entry per "
                         "submission folder; download the export again from Gradescope")
    return {str(folder): _plain(entry) for folder, entry in data.items() if isinstance(entry, dict)}


def _yaml_problem(exc: BaseException) -> str:
    """What went wrong reading the metadata, in one line (YAML's own messages span several)."""
    if isinstance(exc, RecursionError):
        return "nested too deep"
    if isinstance(exc, yaml.MarkedYAMLError) and exc.problem_mark is not None:
        return f"{exc.problem or exc.context} at line {exc.problem_mark.line + 1}"
    return " ".join(str(exc).split())


def _plain(entry: dict) -> dict:
    """``entry`` with a Ruby symbol's leading colon dropped from its keys and from its submitters' keys
    (two levels only: the rest is never read, and walking it could expand shared aliases)."""
    entry = {str(k).lstrip(":"): v for k, v in entry.items()}
    if isinstance(entry.get("submitters"), list):
        entry["submitters"] = [{str(k).lstrip(":"): v for k, v in p.items()} if isinstance(p, dict) else p
                               for p in entry["submitters"]]
    return entry


def _text(value) -> str:
    """A metadata field as text: a string or number as written, anything else (a list, a mapping, an
    alias to one) as unknown (``""``)."""
    if isinstance(value, bool) or not isinstance(value, (str, int, float)):
        return ""
    return str(value).strip()[:MAX_FIELD]


def read(folder: Path) -> list[Submission]:
    """Every ``submission_NNN/`` folder of the export in (or under) ``folder``, named by its first
    submitter (:func:`student_ids`); name, email and SIS id from the metadata (a group keeps every
    submitter's name, ``; ``-separated, and its first submitter's email and SIS id), ``user_id`` the
    Gradescope submission id, ``late`` when the entry says ``:late: true`` (the exports seen carry
    no due date, so usually never).

    What the id mapping (each submission's ``entries``) tells, beyond the folder:

    - a folder missing from the metadata keeps its folder name as its id;
    - an entry of the metadata whose folder is not in the export is a refused submission (its
      ``problem`` says so), so the student is not silently left out of the gradebook;
    - two entries of the same student (same SID and email): the newer one (``:created_at:``, then the
      higher submission id) is graded, the older one listed as not graded;
    - one SID on entries of different students (different emails): those are named by email instead.
    """
    folder = Path(folder)
    root = export_root(folder)
    if root is None:
        return []
    metadata = load_metadata(root / METADATA)
    prefix = "" if root == folder else root.name + "/"
    folders = sorted(e.name for e in root.iterdir()
                     if e.is_dir() and not e.name.startswith(".") and not JUNK.search(e.name))
    listed, older = _newest_per_student({name: entry for name, entry in metadata.items()
                                         if name in folders or _SUBMISSION.fullmatch(name)})
    ids = student_ids(listed)
    found = [Submission(name, root / name, user_id=name.removeprefix("submission_"), layout="gradescope",
                        entries=(f"{prefix}{name}/ (not in {METADATA})",))
             for name in folders if name not in metadata]
    for name, entry in listed.items():
        people = _submitters(entry)
        first = people[0] if people else {}
        notes = [f"{prefix}{name}/" + ("" if name in folders else " (listed in the metadata, missing from the export)")]
        if ids[name] != (sid := _file_name(_text(first.get("sid")))) and sid:
            notes[0] += f" (SID {sid} is on submissions of other students too: named by email)"
        notes += [f"{prefix}{old}/ (an older submission of the same student: not graded)" for old in older.get(name, ())]
        problem = "" if name in folders else (
            f"the export's {METADATA} lists {name}, but the export has no {name}/ folder; download the export "
            "again from Gradescope (Assignment > Review Grades > Export Submissions)")
        found.append(Submission(
            ids[name], root / name, problem=problem,
            name="; ".join(filter(None, (_text(p.get("name")) for p in people))),
            email=_text(first.get("email")), sis_id=_text(first.get("sid")), user_id=name.removeprefix("submission_"),
            late=entry.get("late") is True, layout="gradescope", entries=tuple(notes)))
    return found


_SUBMISSION = re.compile(r"submission_\d+")


def _submitters(entry: dict) -> list[dict]:
    people = entry.get("submitters")
    return [p for p in people if isinstance(p, dict)] if isinstance(people, list) else []


def _person(entry: dict) -> tuple[str, str]:
    """Who submitted ``entry``: its first submitter's (SID, email lower-cased); ``("", "")`` unknown."""
    first = (_submitters(entry) or [{}])[0]
    return _text(first.get("sid")), _text(first.get("email")).casefold()


def _newest_per_student(listed: dict[str, dict]) -> tuple[dict[str, dict], dict[str, list[str]]]:
    """``listed`` with one entry per known student (same SID and email): the newest, by ``:created_at:``
    and then by submission id; and ``{kept folder: [the older folders]}``."""
    def age(name: str) -> tuple[float, int]:
        created = listed[name].get("created_at")
        if isinstance(created, str):
            with contextlib.suppress(ValueError):
                created = datetime.fromisoformat(created.strip())
        stamp = created.timestamp() if isinstance(created, datetime) else 0.0
        return stamp, int(name.removeprefix("submission_")) if _SUBMISSION.fullmatch(name) else 0

    by_person: dict[tuple[str, str], list[str]] = {}
    for name, entry in listed.items():
        by_person.setdefault(_person(entry) if any(_person(entry)) else ("", name), []).append(name)
    kept, older = {}, {}
    for names in by_person.values():
        newest, *rest = sorted(names, key=age, reverse=True)
        kept[newest] = listed[newest]
        if rest:
            older[newest] = sorted(rest)
    return dict(sorted(kept.items())), older


def _file_name(text) -> str:
    """``text`` as a file name: runs of characters other than letters, digits, ``.@+-`` become ``_``; none
    starts with ``-``, ``+`` or ``@`` (an option to a shell command, a formula to a spreadsheet)."""
    return re.sub(r"[^\w.@+-]+", "_", str(text or "").strip()).strip("._").lstrip("-+@._")[:MAX_ID]


def student_ids(listed: dict[str, dict]) -> dict[str, str]:
    """``{folder: student id}`` for the metadata entries ``listed`` (one per student), from each first
    submitter: the SID when there is one that no other student's entry has (readable, stable across
    resubmissions, what a gradebook is keyed by), else the local part of the email, else the whole
    email when two students share that local part, else the folder name. Each made a file name
    (:func:`_file_name`)."""
    parts = {}
    for folder, entry in listed.items():
        sid, email = (_text((_submitters(entry) or [{}])[0].get(key)) for key in ("sid", "email"))
        parts[folder] = [_file_name(sid), _file_name(email.partition("@")[0]), _file_name(email)]
    sids = Counter(sid.casefold() for sid, _, _ in parts.values() if sid)
    for part in parts.values():
        if part[0] and sids[part[0].casefold()] > 1:  # one SID, several students: a typing error somewhere
            part[0] = ""
    shared = Counter(local.casefold() for sid, local, _ in parts.values() if not sid and local)
    return {folder: sid or (local if shared[local.casefold()] == 1 else email) or folder
            for folder, (sid, local, email) in parts.items()}


def upload_folder(folder: Path, files: tuple[str, ...]) -> tuple[Path, str]:
    """Where an exercise's ``files`` are in one Gradescope upload (``/autograder/submission`` keeps an
    uploaded folder's nesting: :func:`grader.lms.unpack.locate`), and a note for the student when they
    are not there exactly once (``""`` when they are): ``folder`` itself is then graded, and its checks
    fail for the missing file, so the note says what the upload holds instead."""
    folder = Path(folder)
    try:
        return locate(folder, files), ""
    except RefusedSubmission:
        return folder, _upload_note(folder, files)


def _upload_note(folder: Path, files: tuple[str, ...]) -> str:
    """What an upload without exactly one ``files[0]`` holds instead, for the student."""
    uploaded = sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*")
                      if p.is_file() and not JUNK.search(p.relative_to(folder).as_posix()))
    places = [name.rpartition("/")[0] + "/" for name in uploaded if name.rpartition("/")[2] == files[0]]
    if len(places) > 1:
        return (f"Your upload holds {files[0]} in {len(places)} folders ({', '.join(places[:5])}), so none "
                        f"was graded: upload only one.")
    if not uploaded:
        return f"Your upload is empty: upload {', '.join(files)}."
    shown = ", ".join(uploaded[:5]) + (f" and {len(uploaded) - 5} more" if len(uploaded) > 5 else "")
    return (f"Your upload holds no {files[0]} (it holds {shown}): name your file {files[0]} and upload "
                    "it again.")
