"""The local pool: ``--jobs N`` judge processes on this machine (the default of ``grader batch``).

Each worker is a spawned process (:func:`_init_worker`: :func:`~grader.executors.grading.prepare_process`
and a watchdog that ends it when the batch process dies) that grades task after task with
:func:`~grader.executors.grading.grade`. A worker that dies (killed, out of memory) breaks its pool:
the submissions it left unfinished are graded again in a new pool, and one that was being graded
when a worker died :data:`MAX_ATTEMPTS` times is recorded as a grader error.
"""
from __future__ import annotations

import _thread
import contextlib
import multiprocessing
import os
import shutil
import signal
import threading
import time
from collections.abc import Callable
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool

from . import grading
from .grading import Outcome, Task

#: Times a submission is tried when the worker grading it dies.
MAX_ATTEMPTS = 2

_idle = threading.Event()  # set while this worker is not grading (see _exit_with_parent)
_idle.set()
_stopping = False  # the batch process is gone: take no further submission
_stop_lock = threading.Lock()  # _grade_one starting against the watchdog deciding to stop


def _init_worker(parent: int, started) -> None:
    """Runs once per worker: its core (:func:`pin_to_core`; ``started`` counts the pool's workers),
    its scratch folder and torch (:func:`grading.prepare_process`), and a watchdog that stops the
    worker when the batch process ``parent`` dies."""
    with started.get_lock():
        index = started.value
        started.value += 1
    pin_to_core(index)
    scratch = str(grading.prepare_process())
    signal.signal(signal.SIGINT, signal.default_int_handler)  # _thread.interrupt_main needs it
    threading.Thread(target=_exit_with_parent, args=(parent, scratch), name="parent-watchdog", daemon=True).start()


def pin_to_core(index: int) -> int | None:
    """Keep this worker, and every process it starts (its sandboxes' template, so each student's
    code), on one of the cores this process may use: the ``index``-th, round robin. Returns that
    core, or None where the machine cannot say (no ``os.sched_setaffinity``).

    A judge and its sandbox take turns (the judge waits for each call's reply), so they lose nothing
    by sharing a core, and each call's hand-over is then a switch on one core instead of a wake-up
    of another: on the 2-core machine of ``bench/bench_batch.py`` a correct exercise-3 submission
    grades about 20 % faster. With ``--jobs`` at most the number of cores, no two workers share one.
    Student code may move itself to another core (an unprivileged call); it then only competes with
    the other workers for time, as every submission did before.
    """
    if not hasattr(os, "sched_setaffinity"):
        return None
    cores = sorted(os.sched_getaffinity(0))
    core = cores[index % len(cores)]
    # sched_setaffinity sets one thread's mask: every thread of this process is set (later ones inherit).
    for thread in os.listdir("/proc/self/task"):
        with contextlib.suppress(OSError):  # a thread that has just ended
            os.sched_setaffinity(int(thread), {core})
    return core


def _exit_with_parent(parent: int, scratch: str, grace: float = 10.0) -> None:
    """Stop this worker once the batch process ``parent`` is gone (SIGTERM, SIGKILL, a crash).

    The pool's pipes stay open in the workers, so an orphaned worker would otherwise block
    forever. The submission being graded is interrupted first (Judge.grade stops its sandbox);
    once that is done, or after ``grace`` seconds, the worker's ``scratch`` folder is removed
    (the interrupt may have landed in the middle of a cleanup) and the worker exits.
    """
    global _stopping
    while os.getppid() == parent:
        time.sleep(0.5)
    with _stop_lock:
        _stopping = True
        busy = not _idle.is_set()
    if busy:
        _thread.interrupt_main()  # KeyboardInterrupt in _grade_one: Judge.grade cancels the job
        _idle.wait(grace)
    shutil.rmtree(scratch, ignore_errors=True)
    os._exit(1)


def _grade_one(task: Task) -> Outcome:
    """Grade one submission in this worker (see :func:`grading.grade`)."""
    with _stop_lock:
        if not _stopping:
            _idle.clear()
    if _stopping:  # the batch is gone and the watchdog is ending this process: start nothing
        threading.Event().wait()
    try:
        return grading.grade(task)
    finally:
        _idle.set()


def grade_all(tasks: list[Task], jobs: int, record: Callable[[Outcome], None]) -> Callable[[], None]:
    """Grade ``tasks`` in pools of ``jobs`` workers, calling ``record`` with each outcome as it arrives.

    Returns a function that waits for the workers to wind down (judges closed, sandboxes' templates
    stopped, scratch folders removed): they are already told to, so the caller can write the CSV and
    the overview meanwhile and then call it.
    """
    attempts: dict[str, int] = {}
    context = multiprocessing.get_context("spawn")
    pools: list[ProcessPoolExecutor] = []
    while tasks:
        retry: list[Task] = []
        pool = ProcessPoolExecutor(max_workers=min(jobs, len(tasks)), mp_context=context,
                                   initializer=_init_worker, initargs=(os.getpid(), context.Value("i", 0)))
        try:
            futures = {pool.submit(_grade_one, t): t for t in tasks}
            while futures:
                finished, _ = wait(futures, return_when=FIRST_COMPLETED)
                for future in finished:
                    task = futures.pop(future)
                    try:
                        outcome = future.result()
                    except BrokenProcessPool:
                        attempts[task.student] = attempts.get(task.student, 0) + 1
                        if attempts[task.student] < MAX_ATTEMPTS:
                            retry.append(task)
                            continue
                        outcome = Outcome(task.student, "grader_error",
                                          error=f"the grading worker died {MAX_ATTEMPTS} times on this submission")
                    except Exception as exc:  # noqa: BLE001 - recorded as a grader error
                        outcome = Outcome(task.student, "grader_error", error=repr(exc))
                    record(outcome)
        except BaseException:
            pool.shutdown(wait=True, cancel_futures=True)  # e.g. Ctrl-C: as a `with` block would
            raise
        pool.shutdown(wait=False)
        pools.append(pool)
        tasks = retry

    def wind_down() -> None:
        for pool in pools:
            pool.shutdown(wait=True)
    return wind_down
