"""Grade submissions: start each one's sandbox, run the exercise's tests under pytest, collect.

The judge is the trusted process: it imports torch (inside the tests) and computes every
expected value itself. The student's code only runs in the :class:`~grader.sandbox.Sandbox`.

A :class:`Judge` keeps one pytest session per exercise open in a background thread, so
configuring pytest and collecting the checks (about 50 ms) happens once, however many
submissions it grades (``grader batch``, ``check-solutions``); :func:`grade` is the one-off form.
"""
from __future__ import annotations

import queue
import secrets
import sys
import threading
import time
from pathlib import Path

import click
import pytest

from .errors import InputError
from .exercises import Exercise, SpecError, course_root
from .plugin import GradingPlugin, Job
from .results import HIDDEN_NOT_AVAILABLE, CheckResult, SubmissionResult
from .sandbox import Sandbox


def new_seed() -> int:
    """A fresh seed for a grading run (31 bits, so it is easy to type back with ``--seed``)."""
    return secrets.randbelow(2**31)


def _pytest_args(exercise: Exercise, quick: bool = False, folders: list[Path] | None = None) -> list[str]:
    """pytest's command line for ``exercise``'s checks in ``folders`` (default: its public and hidden
    tests); the course root goes on ``sys.path``."""
    root = str(course_root())
    if root not in sys.path:
        sys.path.insert(0, root)  # tests import their helpers as exercises.<name>.tests.<module>
    return [str(d) for d in (exercise.test_dirs if folders is None else folders)] + [
        # Plugins a grading run does not use; unraisableexception alone costs two gc.collect().
        "-p", "no:terminal", "-p", "no:cacheprovider", "-p", "no:randomly", "-p", "no:logging",
        "-p", "no:unraisableexception", "-p", "no:threadexception", "-p", "no:doctest",
        "-p", "no:junitxml", "-p", "no:pastebin", "-p", "no:stepwise", "-p", "no:legacypath",
        # The session outlives any one check and shares the process with its caller: pytest
        # must not swap stdout/stderr or the warning filters process-wide (the checks print
        # nothing; the student's output is the sandbox's).
        "-p", "no:faulthandler", "-p", "no:warnings", "--capture=no",
        # Checks fail with CheckFailure, so pytest's assertion rewriting buys nothing here.
        "--assert=plain",
        "--import-mode=importlib", f"--rootdir={root}", "-o", "addopts=", "-o", "testpaths=",
    ] + (["-m", "not slow"] if quick else [])


class Judge:
    """A pytest session over one exercise's checks that grades submissions one after another.

    pytest runs in a background thread (its ``pytest_runtestloop`` is
    :meth:`GradingPlugin.pytest_runtestloop`, fed from a queue); :meth:`grade` hands it a
    submission and waits. Use as a context manager, or call :meth:`close`.

    Args:
        exercise: the exercise spec.
        quick: leave out the checks marked ``slow`` (e.g. exercise 4's re-training); each
            result says so in its notes.
        checks: run only these checks (names of checks or of their test functions) and the checks
            they depend on (``grade EXERCISE --check NAME``); each result says so in its notes.
    """

    def __init__(self, exercise: Exercise, *, quick: bool = False, checks: tuple[str, ...] = ()):
        self.exercise = exercise
        self._closed = False
        self._only = tuple(checks)
        self._args = _pytest_args(exercise, quick)
        self._start()

    def _start(self) -> None:
        """Start a pytest session in a background thread; it collects while the caller prepares
        the first submission, then waits for jobs on :attr:`_requests`."""
        self.exit_code: int | None = None
        self._crash = ""  # an exception that ended the session, if any
        self._requests: queue.Queue[Job | None] = queue.Queue()
        self._plugin = GradingPlugin(self.exercise, iter(self._requests.get, None), only=self._only)
        self._thread = threading.Thread(target=self._serve, name=f"judge-{self.exercise.name}", daemon=True)
        self._thread.start()
        threading.Thread(target=_prewarm_sandbox, args=(self.exercise,), name="sandbox-prewarm", daemon=True).start()

    def _serve(self) -> None:
        try:
            self.exit_code = int(pytest.main(self._args, plugins=[self._plugin]))
        except BaseException as exc:  # noqa: BLE001 - reported by grade() as a grader error
            self.exit_code = -1
            self._crash = f"{type(exc).__name__}: {exc}"

    def __enter__(self) -> "Judge":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        """End the pytest session (waits for a grading in progress)."""
        self._closed = True
        if self._thread.is_alive():
            self._requests.put(None)
            self._thread.join()

    def _wait_for(self, job: Job) -> None:
        """Until the session is done with ``job`` or has ended (then the job is not done).

        Polls, so Ctrl-C reaches the main thread within half a second."""
        done = job.done.wait(0.5)
        while not done and self._thread.is_alive():
            done = job.done.wait(0.5)

    def grade(self, submission: Path, *, seed: int | None = None, use_bubblewrap: bool | None = None,
              budget: float | None = None) -> SubmissionResult:
        """Grade ``submission`` (a folder).

        Args:
            submission: the student's folder holding the exercise's files.
            seed: seed for every randomised check; a fresh one when None (recorded either way).
            use_bubblewrap: force (True) or forbid (False) bubblewrap; None uses it when it works.
            budget: wall seconds the submission's code may use in total (None: per-call limits only).

        Returns:
            The result; never raises because of the submission. A failure of the grader
            itself shows up as a check with status ``error``.

        Raises:
            click.ClickException: ``submission`` is not a folder (a usage error).
            InputError: a check named in ``checks`` does not exist (the message lists the checks).
            RuntimeError: the judge was closed.
            KeyboardInterrupt: passed on after stopping the submission's code and the checks.
        """
        if self._closed:
            raise RuntimeError("this Judge is closed; make a new one to grade more submissions")
        exercise = self.exercise
        submission = Path(submission)
        if not submission.is_dir():
            raise click.ClickException(
                f"submission folder {submission} does not exist; pass the folder that holds "
                f"{', '.join(exercise.files)}")
        seed = new_seed() if seed is None else int(seed)
        started = time.monotonic()
        result = SubmissionResult(exercise=exercise.name, submission=str(submission), seed=seed)
        if not exercise.has_hidden_tests:
            result.notes.append(HIDDEN_NOT_AVAILABLE)
        if not self._thread.is_alive() and self._plugin.serving:
            # The session died in the middle of a job (an internal error): start a new one. A session
            # that never got as far as grading (e.g. a broken conftest) is not retried.
            self._start()
        with Sandbox(exercise, submission, use_bubblewrap=use_bubblewrap, budget=budget) as sandbox:
            sandbox.prestart()  # Python and NumPy start while the session takes the job
            job = Job(sandbox, submission, seed)
            self._requests.put(job)
            try:
                self._wait_for(job)
            except BaseException:  # Ctrl-C: stop the student's code, skip the remaining checks
                job.cancelled.set()
                sandbox.close()
                job.done.wait()
                raise
            result.checks = list(job.checks)
            result.output = sandbox.output
            result.isolation = sandbox.isolation
        if self._plugin.unknown:
            raise InputError(f"{exercise.name} has no check named {', '.join(self._plugin.unknown)}; its checks: "
                             f"{', '.join(self._plugin.functions)}")
        if self._only:
            result.notes.append(f"Only {', '.join(self._only)} ran, with the checks it depends on "
                                f"({self._plugin.left_out} left out): this is not the full score.")
        if self._plugin.deselected:
            result.notes.append(f"Quick run: {self._plugin.deselected} slow check(s) were left out, so this is "
                                "not the full score.")
        for check in result.checks:  # a check may ask for a person to look (e.g. a borderline essay)
            reasons = check.details.get("needs_review")
            if reasons:
                result.needs_review.extend([reasons] if isinstance(reasons, str) else list(reasons))
        for error in self._plugin.collection_errors:
            result.checks.append(CheckResult(
                name="collection", description="the exercise's tests load", max_points=0, status="error",
                feedback="the grader could not load its own tests; this is not your fault, please tell "
                         "the course staff", details={"traceback": error}))
        if job.error or not job.done.is_set():
            self._thread.join(timeout=10)  # pytest is ending the session: wait for its exit code
            result.checks.append(CheckResult(
                name="pytest", description="the grader runs", max_points=0, status="error",
                feedback=f"the grader's pytest session ended (exit code {self.exit_code}"
                         f"{': ' + self._crash if self._crash else '; its message is on the grader’s stderr'}); "
                         "this is not your fault, please tell the course staff",
                details={"traceback": job.error} if job.error else {}))
        result.duration = round(time.monotonic() - started, 3)
        return result


def _prewarm_sandbox(exercise: Exercise) -> None:
    """Start the bubblewrap sandbox's template process (bwrap, Python and NumPy: ~0.35 s here) while the
    session collects the checks (which imports torch), so the first grading finds it running. Only where
    bubblewrap works (the default of every grading); a failure here is left for the grading to report.

    This thread then stays (idle) for the life of the process: ``bwrap --die-with-parent`` ends the
    template when the *thread* that started it ends (PR_SET_PDEATHSIG is per thread).
    """
    from .sandbox.isolation import bubblewrap_works
    from .sandbox.template import template_for

    key = tuple(exercise.forbidden_imports)
    with _prewarm_lock:
        if key in _prewarmed:
            return
        _prewarmed.add(key)
    try:
        if bubblewrap_works():
            template_for(True, key)
    except Exception:  # noqa: BLE001 - the first grading starts it again and says what went wrong
        return
    threading.Event().wait()


#: The settings whose template a thread of this process started (one idle thread each, see above).
_prewarmed: set[tuple[str, ...]] = set()
_prewarm_lock = threading.Lock()


def grade(exercise: Exercise, submission: Path, *, seed: int | None = None, use_bubblewrap: bool | None = None,
          budget: float | None = None,
          quick: bool = False, checks: tuple[str, ...] = ()) -> SubmissionResult:
    """Grade one ``submission`` (a folder) on ``exercise`` in a session of its own.

    Same arguments, result and errors as :meth:`Judge` plus :meth:`Judge.grade`.
    """
    with Judge(exercise, quick=quick, checks=checks) as judge:
        return judge.grade(submission, seed=seed, use_bubblewrap=use_bubblewrap, budget=budget)


class _Collector:
    """A pytest plugin that keeps the collected test items and the collection errors."""

    def __init__(self):
        self.items: list = []
        self.errors: list[str] = []

    def pytest_collection_finish(self, session):
        self.items = list(session.items)

    def pytest_collectreport(self, report):
        if report.failed:
            self.errors.append(f"{report.nodeid}: {report.longreprtext[-1000:]}")


def collect_items(exercise: Exercise, folders: list[Path] | None = None) -> list[pytest.Item]:
    """The pytest items of ``exercise``'s checks in ``folders`` (default: its public and hidden tests),
    collected without running anything.

    Raises:
        SpecError: the tests do not load (the message holds the first collection error).
    """
    collector = _Collector()
    pytest.main(_pytest_args(exercise, folders=folders) + ["--collect-only"],
                plugins=[GradingPlugin(exercise, []), collector])
    if collector.errors:
        raise SpecError(f"the tests of {exercise.name} do not load: {collector.errors[0]}")
    return collector.items


def collected_checks(exercise: Exercise) -> list[CheckResult]:
    """Every check of ``exercise``, with its name and points, collected by pytest without grading
    anything (``grader batch --overrides`` checks the file against them before grading). Status
    ``passed`` and no feedback: only the names and ``max_points`` mean something.

    Raises:
        SpecError: the exercise's tests do not load, so its checks cannot be known.
    """
    checks = []
    for item in collect_items(exercise):
        marker = item.get_closest_marker("check")
        points = marker.kwargs.get("points", 1) if marker else 1
        checks.append(CheckResult(name=item.name, description="", max_points=float(points), status="passed"))
    return checks
