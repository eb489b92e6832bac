"""Grade on a Dask cluster: ``grader batch EXERCISE SUBMISSIONS --scheduler tcp://host:8786``.

The batch process is a Dask client (``distributed``, https://distributed.dask.org). It registers a
worker plugin, :class:`~grader.executors.cluster_worker.GraderPlugin`, which the scheduler runs on every worker, present and future.
On each worker the plugin checks, once, that the worker may grade for this client:

- it runs what the client runs (:func:`~grader.executors.cluster_worker.fingerprint`: the grader's, Python's, torch's and NumPy's
  versions and a SHA-256 of the grader, ``exercises/`` and ``solutions/``);
- the sandbox can start there, with bubblewrap unless the batch allows unisolated workers;

and then prepares the worker process as a local pool's worker (a locked scratch folder, torch
imported; :func:`grading.prepare_process`) and gives it one unit of a Dask *resource* named after
the digest and the isolation asked for (:func:`~grader.executors.cluster_worker.resource_name`). Every task asks for one unit of it,
so a submission never reaches a worker that did not pass, and a worker grades one at a time with the
one :class:`~grader.judge.Judge` per exercise it keeps open (for the process's life, as its
templates: a later batch starts at once). The client prints each worker's verdict before grading
(and that of each worker that joins later), and refuses (exit 2) when none passed.

A submission travels as the bytes of its files (:func:`grading.pack`); the outcome comes back as
plain data (the result model's dict and the rendered outputs) and the client alone writes files
and the gradebook, so ``--resume`` and every output work as with the local pool. At most
:data:`IN_FLIGHT_PER_WORKER` tasks per ready worker are on the cluster at a time, so a large export
is not held in the scheduler's memory.

Faults: a worker that dies mid-submission (killed, out of memory) has the scheduler run the task
again on another worker; a submission whose workers died under it
:data:`~grader.executors.local.MAX_ATTEMPTS` (2) times, as with the local pool, is recorded as a
grader error (:func:`~grader.executors.cluster_worker._grade_on_worker` counts the starts). Dask's own limit,
``distributed.scheduler.allowed-failures`` (default 3), must stay at least that: it counts a death
against every task the worker held, and its ``KilledWorker`` is recorded as a grader error too.
The scheduler going away ends the batch with :class:`ClusterLost` (what was graded is in the
gradebook; ``--resume`` goes on), as does no worker able to grade for :data:`STALL_SECONDS`. When
the client stops (Ctrl-C, or killed), what waits is taken back, but a grading already running runs
to its end on its worker (Dask cannot interrupt a task); its outcome is dropped and ``--resume``
grades that student again.
"""
from __future__ import annotations

import contextlib
import queue
import threading
import time
import uuid
from collections.abc import Callable, Iterator

import click
from distributed import Client, KilledWorker

from ..errors import InputError
from ..lms.unpack import RefusedSubmission
from . import ClusterLost, grading
from .cluster_worker import PENDING, GraderPlugin, _grade_on_worker, _verdict, fingerprint
from .grading import Outcome, Task

#: Tasks on the cluster at a time per ready worker (one grading, one waiting in its queue).
IN_FLIGHT_PER_WORKER = 2
#: Seconds the client waits for the scheduler to answer, and for a first worker.
CONNECT_SECONDS = 20.0
#: Seconds with submissions left and no worker able to grade them before the batch stops.
STALL_SECONDS = 300.0
#: Seconds a worker may take to set up (the checks, torch's import) before it counts as not ready.
SETUP_SECONDS = 120.0


def _verdicts(client: Client, resource: str, workers: list[str] | None = None) -> dict[str, tuple[bool, str]]:
    """Each worker's (or each of ``workers``') :func:`_verdict`, asked now; a worker that cannot run
    the grader at all (not installed there) is refused with the error it gave."""
    answers = client.run(_verdict, resource, on_error="return", workers=workers)
    return {address: (False, f"cannot run the grader: {type(v).__name__}: {v}") if isinstance(v, BaseException)
            else (bool(v[0]), str(v[1])) for address, v in answers.items()}


def grade_all(tasks: list[Task], address: str, record: Callable[[Outcome], None], *,
              allow_unisolated: bool = False) -> Callable[[], None]:
    """Grade ``tasks`` on the Dask cluster whose scheduler is at ``address``, calling ``record`` with
    each outcome as it arrives (in this process). Returns the function that closes the client.

    Raises:
        InputError: no scheduler answers at ``address``, it has no worker, or no worker may grade
            (each worker's reason is printed).
        ClusterLost: the scheduler went away, or no worker could grade for :data:`STALL_SECONDS`.
    """
    client = _connect(address)
    plugin = GraderPlugin(fingerprint(), allow_unisolated)
    resource = plugin.resource
    try:
        announced = _prepare_workers(client, plugin)
        _grade_on(client, tasks, resource, record, announced)
    except BaseException:
        _close(client, resource)
        raise
    return lambda: _close(client, resource)


def _close(client: Client, resource: str, timeout: float = 10.0) -> None:
    """Unregister the batch's plugin (so workers that start later do not set it up), close the client;
    each bounded by ``timeout`` seconds (an unresponsive scheduler does not hold the batch)."""
    def unregister() -> None:
        with contextlib.suppress(Exception):
            if client.status == "running":
                client.unregister_worker_plugin(resource)

    thread = threading.Thread(target=unregister, name="unregister-plugin", daemon=True)
    thread.start()
    thread.join(timeout)
    with contextlib.suppress(Exception):
        client.close(timeout=timeout)


def _connect(address: str) -> Client:
    try:
        return Client(address, timeout=CONNECT_SECONDS, set_as_default=False)
    except (OSError, TimeoutError, ValueError) as exc:
        raise InputError(
            f"no Dask scheduler answered at {address} within {CONNECT_SECONDS:g} s ({type(exc).__name__}: {exc}). "
            f"Start one with `dask scheduler` and workers with `dask worker {address} --nworkers N --nthreads 1` "
            "(README: Grading on a cluster), or leave out --scheduler to grade on this machine.") from None


def _prepare_workers(client: Client, plugin: GraderPlugin) -> set[str]:
    """Register the plugin, wait until every worker's verdict is final, and print them.
    Returns the workers announced.

    Raises:
        InputError: no worker, or none passed.
    """
    try:
        client.wait_for_workers(1, timeout=CONNECT_SECONDS)
    except TimeoutError:
        raise InputError(f"the Dask scheduler at {client.scheduler.address} has no worker (waited "
                         f"{CONNECT_SECONDS:g} s): start some with `dask worker {client.scheduler.address} "
                         "--nworkers N --nthreads 1`.") from None
    try:
        client.register_plugin(plugin, name=plugin.resource)
    except Exception as exc:  # noqa: BLE001 - a worker that cannot even load the plugin: its verdict says so below
        click.echo(f"A worker could not load the grader's plugin ({type(exc).__name__}: {exc}); is the grader "
                   "installed there?", err=True)
    click.echo(f"Dask workers at {client.scheduler.address}:")
    verdicts = _final_verdicts(client, plugin.resource, SETUP_SECONDS)
    if not any(ready for ready, _ in verdicts.values()):
        raise InputError("no Dask worker may grade (the reasons are above); nothing was graded.")
    return set(verdicts)


def _final_verdicts(client: Client, resource: str, wait: float, workers: list[str] | None = None
                    ) -> dict[str, tuple[bool, str]]:
    """Each worker's (or each of ``workers``') verdict once its set-up has ended, or after ``wait``
    seconds; printed one per line. A worker that cannot run the grader at all is refused."""
    deadline = time.monotonic() + wait
    while True:
        verdicts = _verdicts(client, resource, workers)
        if time.monotonic() > deadline or all(v[1] != PENDING for v in verdicts.values()):
            break
        time.sleep(0.5)
    for address, (ready, verdict) in sorted(verdicts.items()):
        click.echo(f"  {address}: {'' if ready else 'refused: '}{verdict}")
    return verdicts


def _ready_workers(workers: dict, resource: str) -> int:
    """How many of ``workers`` (``Client.scheduler_info()["workers"]``) hold the batch's resource."""
    return sum(1 for w in workers.values() if w.get("resources", {}).get(resource))


class _OnCluster:
    """The client's loop: keep each ready worker supplied, record outcomes as they come, notice the
    scheduler going away, and submit again what Dask left stranded (see :meth:`_resubmit_stranded`)."""

    def __init__(self, client: Client, tasks: list[Task], resource: str, record: Callable[[Outcome], None],
                 announced: set[str]):
        self.client, self.resource, self.record, self.total = client, resource, record, len(tasks)
        self.announced = announced  # workers whose verdict was printed
        self.left: Iterator[Task] = iter(tasks)
        self.in_flight: dict = {}  # future -> its packed task
        self.unseen: dict = {}  # future -> consecutive checks it was on no worker
        self.finished: queue.SimpleQueue = queue.SimpleQueue()  # futures done, put by Dask's callbacks
        self.graded = 0
        self.workers = _ready_workers(client.scheduler_info()["workers"], resource)

    def run(self) -> None:
        checked, stalled_since = time.monotonic(), None
        self._submit_more()
        while self.in_flight:
            try:
                future = self.finished.get(timeout=2)
            except queue.Empty:
                future = None
            if future is not None and future in self.in_flight:  # not one taken back by _resubmit_stranded
                task = self.in_flight.pop(future)
                self.unseen.pop(future, None)
                if future.status == "cancelled":
                    raise ClusterLost(f"the Dask scheduler went away after {self.graded} of {self.total} submissions: "
                                      "the grades so far are kept; run the same command with --resume (on a "
                                      "cluster again, or without --scheduler) to grade the rest.")
                self.record(_outcome(future, task))
                self.graded += 1
                future.release()
            if self.client.status not in ("running", "connecting"):
                raise ClusterLost(f"the connection to the Dask scheduler closed after {self.graded} of {self.total} "
                                  "submissions: the grades so far are kept; --resume grades the rest.")
            if time.monotonic() - checked > 2:
                checked = time.monotonic()
                workers = self.client.scheduler_info()["workers"]  # one call to the scheduler per check
                self._announce_new_workers(set(workers))
                self.workers = _ready_workers(workers, self.resource)
                stalled_since = None if self.workers else (stalled_since or checked)
                if stalled_since and checked - stalled_since > STALL_SECONDS:
                    raise ClusterLost(f"no Dask worker could grade for {STALL_SECONDS:g} s (all left, or none passed): "
                                      f"{self.graded} of {self.total} graded and kept; --resume grades the rest.")
                if self.workers:
                    self._resubmit_stranded()
            self._submit_more()

    def _announce_new_workers(self, workers: set[str]) -> None:
        """Print the verdict of each of ``workers`` that joined since (once its set-up has ended)."""
        joined = workers - self.announced
        if not joined:
            return
        with contextlib.suppress(Exception):  # a worker that left again: nothing to say
            for address, (ready, verdict) in sorted(_verdicts(self.client, self.resource, sorted(joined)).items()):
                if verdict != PENDING:
                    self.announced.add(address)
                    click.echo(f"\nWorker joined: {address}: {'' if ready else 'refused: '}{verdict}")

    def _submit_more(self) -> None:
        while len(self.in_flight) < IN_FLIGHT_PER_WORKER * max(self.workers, 1):
            task = next(self.left, None)
            if task is None:
                return
            try:
                packed = grading.pack(task)
            except RefusedSubmission as exc:
                self.record(Outcome(task.student, "refused", error=str(exc)))
                continue
            except OSError as exc:
                self.record(Outcome(task.student, "grader_error", error=f"could not read the submission: {exc}"))
                continue
            self._submit(packed)

    def _submit(self, packed: Task) -> None:
        future = self.client.submit(_grade_on_worker, packed, self.resource, pure=False,
                                    key=f"grade-{packed.student}-{uuid.uuid4().hex[:8]}",
                                    resources={self.resource: 1})
        self.in_flight[future] = packed
        future.add_done_callback(self.finished.put)  # also when cancelled: the scheduler gone

    def _resubmit_stranded(self) -> None:
        """Submit again the tasks that are on no worker for two checks running although some worker
        may grade. Dask leaves a task "no-worker" when every worker that held the resource died, and
        does not look at it again when a restarted worker gains the resource (the plugin adds it
        after the worker has registered)."""
        processing = {key for keys in self.client.processing().values() for key in keys}
        for future in list(self.in_flight):
            if future.status != "pending" or future.key in processing:
                self.unseen.pop(future, None)
                continue
            self.unseen[future] = self.unseen.get(future, 0) + 1
            if self.unseen[future] >= 2:
                packed = self.in_flight.pop(future)
                del self.unseen[future]
                future.cancel()
                self._submit(packed)

    def take_back(self) -> None:
        """Cancel what has not come back (a task already running runs out on its worker)."""
        with contextlib.suppress(Exception):
            self.client.cancel(list(self.in_flight))


def _grade_on(client: Client, tasks: list[Task], resource: str, record: Callable[[Outcome], None],
              announced: set[str]) -> None:
    on_cluster = _OnCluster(client, tasks, resource, record, announced)
    try:
        on_cluster.run()
    except BaseException:  # Ctrl-C, the scheduler gone
        on_cluster.take_back()
        raise


def _outcome(future, task: Task) -> Outcome:
    """A finished future's outcome; a task that erred is the grader's error, never the student's zero."""
    if future.status == "finished":
        outcome = future.result()
        if isinstance(outcome, Outcome) and outcome.student == task.student:
            return outcome
        return Outcome(task.student, "grader_error", error=f"the worker sent back {type(outcome).__name__}, not "
                                                           "this submission's outcome")
    exc = future.exception()
    if isinstance(exc, KilledWorker):
        return Outcome(task.student, "grader_error",
                       error="the Dask worker grading it died each time it was tried (the scheduler's "
                             f"distributed.scheduler.allowed-failures): {exc}"[:500])
    return Outcome(task.student, "grader_error", error=f"{type(exc).__name__}: {exc}"[:500])
