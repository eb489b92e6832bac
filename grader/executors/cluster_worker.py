"""The worker side of grading on a Dask cluster (:mod:`grader.executors.cluster` is the client's):
the :class:`GraderPlugin` that checks and prepares each worker, what it compares
(:func:`fingerprint`), and the task function (:func:`_grade_on_worker`). This module is imported on
every worker (the plugin and the task function travel by name), never the client's loop.
"""
from __future__ import annotations

import asyncio
import functools
import hashlib
import json
import platform
import threading
import uuid
from importlib import metadata
from pathlib import Path

from distributed import Queue, WorkerPlugin, get_client, get_worker

from .. import scratch as scratch_folders
from ..exercises import course_root
from . import grading
from .grading import Outcome, Task
from .local import MAX_ATTEMPTS

#: What :func:`_verdict` says while a worker's set-up runs.
PENDING = "not set up yet"

_grading_lock = threading.Lock()  # one grading at a time in a worker process, whatever its --nthreads


@functools.cache
def fingerprint() -> dict[str, str]:
    """What must be the same on the client and on every worker for a grade to mean the same: the
    grader's version, Python's (major.minor), torch's and NumPy's versions, and a SHA-256 (hex) of
    each folder grading reads: the grader package, ``exercises/`` (specs, skeletons, public and
    hidden tests, data) and ``solutions/`` (exercises 1 and 4 compare answers with them for copying;
    "missing" when the course has none). Caches (``__pycache__``, ``*.pyc``) are left out.

    Computed once per process: a worker's is that of the code it loaded, so a worker started before
    the course was changed on disk is refused, not run with stale code (restart it).
    """
    root = course_root()
    return {"grader": _version("transformer-lesson-grader"), "python": platform.python_version().rsplit(".", 1)[0],
            "torch": _version("torch"), "numpy": _version("numpy"),
            "grader files": _folder_digest(Path(__file__).resolve().parent.parent),
            "exercises/": _folder_digest(root / "exercises"), "solutions/": _folder_digest(root / "solutions")}


def course_digest(print_: dict[str, str] | None = None) -> str:
    """SHA-256 (hex) of a :func:`fingerprint` (this process's by default)."""
    return hashlib.sha256(json.dumps(print_ or fingerprint(), sort_keys=True).encode()).hexdigest()


def _folder_digest(folder: Path) -> str:
    if not folder.is_dir():
        return "missing"
    sha = hashlib.sha256()
    for path in sorted(folder.rglob("*")):
        if "__pycache__" in path.parts or path.suffix == ".pyc" or not path.is_file():
            continue
        sha.update(f"\0{path.relative_to(folder).as_posix()}\0".encode())
        sha.update(path.read_bytes())
    return sha.hexdigest()


def _version(package: str) -> str:
    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return "not installed"


def _differences(theirs: dict[str, str], mine: dict[str, str]) -> str:
    """"torch 2.13.0 here, 2.14.1 on the client; solutions/ differs (missing here)"."""
    parts = []
    for key, value in theirs.items():
        here = mine.get(key, "missing")
        if here == value:
            continue
        if key.endswith("/") or key.endswith("files"):
            parts.append(f"{key} differs" + (" (missing here)" if here == "missing" else
                                             " (missing on the client)" if value == "missing" else ""))
        else:
            parts.append(f"{key} {here} here, {value} on the client")
    return "; ".join(parts)


def resource_name(digest: str, allow_unisolated: bool, batch: str) -> str:
    """The Dask resource (and plugin name) of one batch: a worker holds one unit once it passed that
    batch's checks, and every task of the batch asks for it. Named after the digest, the isolation
    asked for and the batch, so batches sharing a cluster never mix their workers' verdicts."""
    return f"grader-{digest[:12]}-{'any' if allow_unisolated else 'isolated'}-{batch}"


class GraderPlugin(WorkerPlugin):
    """Checks and prepares one Dask worker for one batch's grading (see the module docstring).

    Args:
        client_print: the client's :func:`fingerprint`.
        allow_unisolated: let a worker without bubblewrap grade (its student code runs as the
            worker's user, unisolated).

    Attributes (on the worker, after :meth:`setup`):
        ready: the worker passed and holds one unit of :attr:`resource`.
        verdict: one line saying why it may or may not grade.
    """

    def __init__(self, client_print: dict[str, str], allow_unisolated: bool):
        self.client_print = client_print
        self.allow_unisolated = allow_unisolated
        self.resource = resource_name(course_digest(client_print), allow_unisolated, uuid.uuid4().hex[:8])
        self.ready = False
        self.verdict = PENDING

    async def setup(self, worker) -> None:
        """Check this worker, prepare its process, and give it the batch's resource when it passed
        (the checks and torch's import run in a thread: the worker's event loop keeps answering)."""
        try:
            self.ready, self.verdict = await asyncio.get_running_loop().run_in_executor(
                None, self._check_and_prepare, worker)
        except Exception as exc:  # noqa: BLE001 - reported to the client as this worker's verdict
            self.ready, self.verdict = False, f"its set-up failed: {type(exc).__name__}: {exc}"
        if self.ready:
            _stop_profiling(worker)
            await worker.set_resources(**{self.resource: 1})

    def _check_and_prepare(self, worker) -> tuple[bool, str]:
        from ..sandbox.isolation import bubblewrap_works, unsupported_platform

        differences = _differences(self.client_print, fingerprint())
        if differences:
            return False, (f"it differs from the client: {differences}. Install the same grader, course and "
                           "versions on every worker, and restart workers after changing them")
        unsupported = unsupported_platform()
        if unsupported:
            return False, unsupported
        isolated = bubblewrap_works()
        self.nthreads = worker.state.nthreads if worker is not None else 1
        if not isolated and not self.allow_unisolated:
            return False, ("bubblewrap does not work here, so student code would run as the worker's user with its "
                           "files and network: install it (apt-get install bubblewrap) or pass --allow-unisolated")
        scratch_folders.remove_stale()  # what workers killed on this machine left
        grading.prepare_process()
        threads = (f"; it has {self.nthreads} threads but grades one submission at a time: start workers with "
                   "--nworkers N --nthreads 1" if self.nthreads > 1 else "")
        return True, "ready, " + ("isolated by bubblewrap" if isolated else "NOT isolated (no bubblewrap)") + threads


def _stop_profiling(worker) -> None:
    """Stop the worker's statistical profiler (``distributed.worker.profile``: it samples every thread's
    stack every 10 ms for the dashboard). A grading worker's time is the judge's and the sandbox's;
    on bench/bench_cluster.py, 2 workers on 2 cores, it cost about 10 ms a submission."""
    for name in ("profile", "profile-cycle"):
        callback = worker.periodic_callbacks.pop(name, None)
        if callback is not None:
            callback.stop()


def _verdict(resource: str, dask_worker=None) -> tuple[bool, str]:
    """Run on each worker by the client (``Client.run``): the plugin's verdict there."""
    plugin = next((p for p in dask_worker.plugins.values()
                   if isinstance(p, GraderPlugin) and p.resource == resource), None)
    return (False, PENDING) if plugin is None else (plugin.ready, plugin.verdict)


def _grade_on_worker(task: Task, resource: str) -> Outcome:
    """The task function: grade ``task`` on this worker with its open judge (one at a time).

    Each start is counted in a Dask queue named after the task, on the scheduler: a task started
    for the (MAX_ATTEMPTS + 1)-th time had a worker die under it MAX_ATTEMPTS times and is not graded
    again. (Dask's own count, ``allowed-failures``, blames every task a dying worker held, also those
    only queued there.)
    """
    worker = get_worker()
    ready, verdict = _verdict(resource, worker)
    if not ready:  # the resource keeps tasks off such a worker; this is the second lock on that door
        return Outcome(task.student, "grader_error", error=f"reached a worker that may not grade: {verdict}")
    starts = Queue(f"{resource}-{task.student}-starts", client=get_client())  # one per batch and student
    starts.put(1)
    try:
        if starts.qsize() > MAX_ATTEMPTS:
            return Outcome(task.student, "grader_error",
                           error=f"the Dask workers grading it died {MAX_ATTEMPTS} times (each while grading it)")
        with _grading_lock:  # never held across a call to the scheduler
            return grading.grade(task)
    finally:
        starts.close()  # not reached when the worker dies: the count survives it
