"""One grading in a batch worker, the same on the local pool and on a Dask worker.

A worker process prepares itself once (:func:`prepare_process`: a locked scratch folder for every
temp folder of its gradings, torch imported and pinned to one thread), keeps one
:class:`~grader.judge.Judge` per exercise open, and grades :class:`Task` after :class:`Task` with
:func:`grade`: the submission is copied or unpacked into a private temp folder, graded in a sandbox,
and the outputs (result JSON, Gradescope JSON, HTML report) are rendered in the worker. The
:class:`Outcome` goes back to the batch process, which alone writes files and the gradebook.

A local worker reads the submission where it lies (``Task.source``/``Task.files``); a cluster
worker, on another machine, gets its files as bytes (:func:`pack`, ``Task.payload``).
"""
from __future__ import annotations

import atexit
import json
import os
import shutil
import tempfile
import traceback
from dataclasses import dataclass, field, replace
from pathlib import Path

from .. import exercises, judge, report
from .. import scratch as scratch_folders
from ..lms import gradescope
from ..lms.unpack import MAX_UNZIPPED_BYTES, RefusedSubmission, locate, safe_extract
from ..results import SubmissionResult
from ..sandbox.session import _not_copied


@dataclass(frozen=True)
class Task:
    """What a worker needs to grade one submission (picklable).

    ``source`` is the student's folder or zip, ``files`` a platform's loose files as
    ``(name in the submission, path)`` (Canvas, Moodle). On a cluster ``payload`` holds the bytes,
    as ``(name, bytes)`` of every file, ``kind`` saying whether they are a ``zip`` (one file), a
    ``folder``'s files or loose ``files`` (in the order of ``files``, whose paths then only name
    them; see :func:`pack`).
    """

    exercise: str
    student: str
    source: str
    seed: int
    budget: float | None
    files: tuple[tuple[str, str], ...] = ()
    payload: tuple[tuple[str, bytes], ...] | None = field(default=None, repr=False)
    kind: str = ""


@dataclass(frozen=True)
class Outcome:
    """What a worker sends back for one submission (picklable, plain data).

    Attributes:
        student: the submission's id.
        status: ``graded``, ``refused`` (bad zip, files missing) or ``grader_error``.
        result: :meth:`SubmissionResult.to_dict` of the result, or None when there is none.
        error: why it was refused or what went wrong ("" when graded).
        files: ``(path relative to the batch's output folder, text)`` of the rendered outputs.
    """

    student: str
    status: str
    result: dict | None = None
    error: str = ""
    files: tuple[tuple[str, str], ...] = ()


_scratch: list[Path] = []  # this process's scratch folder, once prepared


def prepare_process() -> Path:
    """Once per worker process (later calls return the same folder): a claimed scratch folder
    (:mod:`grader.scratch`; its lock is held for the process's life, and it is removed at exit)
    becomes the temp folder of every grading; torch is imported and pinned to one thread (one core
    per worker)."""
    if _scratch:
        return _scratch[0]
    # matplotlib's font cache stays in the shared temp folder (building it takes seconds).
    os.environ.setdefault("MPLCONFIGDIR", os.path.join(tempfile.gettempdir(), "grader-matplotlib"))
    folder, _lock = scratch_folders.claim("worker")  # the descriptor stays open: the lock holds
    tempfile.tempdir = str(folder)
    atexit.register(shutil.rmtree, str(folder), True)
    import torch

    torch.set_num_threads(1)
    _scratch.append(folder)
    return folder


def close_judges() -> None:
    """End this process's pytest sessions (a worker winding down)."""
    while _judges:
        _, open_judge = _judges.popitem()
        open_judge.close()


def output_files(student: str, result: SubmissionResult) -> tuple[tuple[str, str], ...]:
    """A student's outputs, rendered: ``results/STUDENT.json``, ``gradescope/STUDENT/results.json``
    and ``reports/STUDENT.html`` (paths relative to the batch's output folder)."""
    return ((f"results/{student}.json", result.to_json()),
            (f"gradescope/{student}/results.json", json.dumps(gradescope.results_json(result), indent=2)),
            (f"reports/{student}.html", report.render_html(result)))


def write_outputs(out: Path, files: tuple[tuple[str, str], ...]) -> None:
    """Write rendered outputs under ``out``, each atomically (see :func:`grader.report.write_atomic`)."""
    for relative, text in files:
        report.write_atomic(out / relative, text)


_judges: dict[str, judge.Judge] = {}  # this process's open pytest session per exercise


def grade(task: Task) -> Outcome:
    """Grade one submission in this process. A refused submission and a grader crash are outcomes,
    never exceptions (the traceback of a crash goes to this process's stderr)."""
    exercise = exercises.load(task.exercise)
    with tempfile.TemporaryDirectory(prefix="grader-batch-") as tmp:
        try:
            unpacked = _unpack(task, Path(tmp))
            folder = locate(unpacked, exercise.files, exercise.name, exercise.skeleton)
        except RefusedSubmission as exc:
            return Outcome(task.student, "refused", error=str(exc))
        try:
            if exercise.name not in _judges:
                _judges[exercise.name] = judge.Judge(exercise)
            result = _judges[exercise.name].grade(folder, seed=task.seed, budget=task.budget)
            result.submission = task.student
            files = output_files(task.student, result)  # rendered before anything is recorded
        except Exception as exc:  # noqa: BLE001 - a grader crash is recorded, never the student's zero
            traceback.print_exc()  # the whole traceback for the instructor's terminal; one line in the gradebook
            return Outcome(task.student, "grader_error", error=f"{type(exc).__name__}: {exc}"[:500])
    status = "grader_error" if result.grader_errors else "graded"
    error = "; ".join(f"{c.name}: {c.feedback}" for c in result.grader_errors)
    return Outcome(task.student, status, result.to_dict(), error, files)


def _unpack(task: Task, tmp: Path) -> Path:
    """The submission as a folder of its own under ``tmp``."""
    unpacked = tmp / "submission"
    if task.payload is not None:
        return _receive(task, tmp, unpacked)
    source = Path(task.source)
    if task.files:
        copy_files(task.files, unpacked)
    elif source.is_dir():
        copy_folder(source, unpacked)
    else:
        safe_extract(source, unpacked)
    return unpacked


def _receive(task: Task, tmp: Path, unpacked: Path) -> Path:
    """Write a cluster task's bytes back into files (their names were made by :func:`pack`)."""
    if task.kind == "zip":  # under its own name: refusals name the student's file
        (tmp / "received").mkdir()
        archive = tmp / "received" / Path(task.payload[0][0]).name
        archive.write_bytes(task.payload[0][1])
        safe_extract(archive, unpacked)
    elif task.kind == "folder":
        for name, data in task.payload:
            (unpacked / name).parent.mkdir(parents=True, exist_ok=True)
            (unpacked / name).write_bytes(data)
        unpacked.mkdir(exist_ok=True)
    elif task.kind == "files":
        received = tmp / "received"
        received.mkdir()
        paths = []
        for i, ((name, data), (_, original)) in enumerate(zip(task.payload, task.files)):
            (received / str(i)).mkdir()  # under the exported file's own name: refusals name it
            path = received / str(i) / Path(original).name
            path.write_bytes(data)
            paths.append((name, str(path)))
        copy_files(tuple(paths), unpacked)
    else:
        raise ValueError(f"unknown payload kind {task.kind!r}")
    return unpacked


def pack(task: Task) -> Task:
    """``task`` with its submission's files read into ``payload``, for a worker on another machine.

    A folder is read as :func:`copy_folder` would copy it (plain files only, ``.git`` and caches
    left out, size-capped); a zip or a platform's loose files are sent as they are.

    Raises:
        RefusedSubmission: a symbolic link, or more than :data:`MAX_UNZIPPED_BYTES` bytes.
    """
    source = Path(task.source)
    if task.files:
        return replace(task, kind="files",
                       payload=tuple((name, Path(path).read_bytes()) for name, path in _loose_files(task.files)))
    if source.is_dir():
        files = _folder_files(source)
        return replace(task, kind="folder", payload=tuple((name, (source / name).read_bytes()) for name in files))
    if source.stat().st_size > MAX_UNZIPPED_BYTES:
        raise RefusedSubmission(f"the zip holds {source.stat().st_size:,} bytes; at most {MAX_UNZIPPED_BYTES:,} "
                                "are accepted.")
    return replace(task, kind="zip", payload=((source.name, source.read_bytes()),))


def _folder_files(source: Path) -> list[str]:
    """The relative paths of a folder submission's files that are copied: plain files only (no links,
    FIFOs or devices), size-capped. What is not copied (a git repository's ``.git``, caches:
    :func:`_not_copied`) is not looked at or counted.

    Raises:
        RefusedSubmission: a symbolic link, or more than :data:`MAX_UNZIPPED_BYTES` bytes.
    """
    total, names = 0, []
    for folder, dirs, files in os.walk(source):
        skipped = _not_copied(folder, dirs + files)
        dirs[:] = [d for d in dirs if d not in skipped]
        for name in dirs + files:
            path = Path(folder, name)
            if name in skipped:
                continue
            if path.is_symlink():
                raise RefusedSubmission(f"the submission contains a symbolic link ({path.relative_to(source)}); "
                                        "submit plain files.")
            if path.is_file() and name in files:
                total += path.stat().st_size
                names.append(str(path.relative_to(source)))
    if total > MAX_UNZIPPED_BYTES:
        raise RefusedSubmission(f"the submission holds {total:,} bytes; at most {MAX_UNZIPPED_BYTES:,} are accepted "
                                "(leave out virtual environments and data).")
    return names


def copy_folder(source: Path, dest: Path) -> None:
    """Copy a folder submission (what :func:`_folder_files` lists) to ``dest``.

    Raises:
        RefusedSubmission: see :func:`_folder_files`.
    """
    _folder_files(source)
    shutil.copytree(source, dest, ignore=_not_copied)


def copy_files(files: tuple[tuple[str, str], ...], dest: Path) -> None:
    """Gather a platform's loose files (Canvas, Moodle) into one submission folder: each ``(name, path)``
    is copied as ``name`` (a relative path); a submission that is a single ``.zip`` is unpacked instead.

    Raises:
        RefusedSubmission: more than :data:`MAX_UNZIPPED_BYTES` bytes, or a file that is not plain.
    """
    if len(files) == 1 and files[0][0].lower().endswith(".zip"):
        safe_extract(Path(files[0][1]), dest)
        return
    dest.mkdir(parents=True)
    for name, path in _loose_files(files):
        (dest / name).parent.mkdir(parents=True, exist_ok=True)  # Moodle keeps a submission's sub-folders
        shutil.copyfile(path, dest / name)


def _loose_files(files: tuple[tuple[str, str], ...]):
    """Yield each ``(name, path)`` once it is known to be a plain file within the size cap.

    Raises:
        RefusedSubmission: more than :data:`MAX_UNZIPPED_BYTES` bytes in all, or a file that is not plain.
    """
    total = 0
    for name, path in files:
        total += os.lstat(path).st_size
        if total > MAX_UNZIPPED_BYTES:
            raise RefusedSubmission(f"the submission's files hold more than {MAX_UNZIPPED_BYTES:,} bytes.")
        if Path(path).is_symlink() or not Path(path).is_file():
            raise RefusedSubmission(f"{Path(path).name} is not a plain file; submit plain files.")
        yield name, path
