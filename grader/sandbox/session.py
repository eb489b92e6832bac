"""One submission's sandbox: its worker process, the calls into it, and what comes back.

One :class:`Sandbox` serves one submission: it has the judge's template process
(:mod:`grader.sandbox.template`) fork a worker on a fresh copy of the submission (isolated as
:mod:`grader.sandbox.isolation` lists) and forwards calls. Every failure of the student's code
becomes a :class:`SubmissionError` with a message written for the student
(:mod:`grader.sandbox.messages`); nothing the process does can raise anything else in the judge.

The judge never waits on the worker without a deadline: requests are written to a
non-blocking pipe and replies read with ``select``, both against the call's deadline (a
worker that stops reading, or a grandchild that keeps the pipes open after the worker
died, costs at most the call's time limit). Replies are treated as hostile: student code
runs in the worker and can forge them. A reply larger than the exercise's ``reply_mb`` is
refused as soon as its header says so, before its bytes are buffered.
"""
from __future__ import annotations

import contextlib
import os
import shutil
import stat
import subprocess
import threading
import time
from pathlib import Path

from ..exercises import Exercise, Limits
from . import messages
from .isolation import bubblewrap_works, has_rlimits, others_can_run_python, unsupported_platform
from .template import JobProcess, TemplateLost, UidClaim, claim_uid, kill_uid, template_for
from .channel import Closed, OutputDrain, Timeout, receive, send
from .wire import FrameTooLarge, ProtocolError, decode, encode, frame_bytes

#: Seconds allowed for a forked worker to say it is ready (limits set, isolated), before any
#: student code runs. Importing the submission then counts as a call.
START_TIMEOUT = 20.0
#: Seconds a stopped job gets to end (with every process it started) before its template is ended.
STOP_TIMEOUT = 5.0
#: Seconds a worker whose protocol pipe closed gets to exit before it is killed.
EXIT_GRACE = 1.0
#: Calls to one function that may time out before the rest fail at once.
MAX_TIMEOUTS_PER_FUNCTION = 2


class SubmissionError(Exception):
    """Student code failed: raised, timed out, crashed or sent something unusable.

    Attributes:
        kind: ``exception``, ``timeout``, ``crash``, ``load``, ``missing``, ``protocol`` or
            ``stopped`` (the sandbox was closed, e.g. on Ctrl-C).
        message: one or two sentences for the student.
        traceback: the student's own frames, when there are any.
    """

    def __init__(self, kind: str, message: str, traceback: str = ""):
        super().__init__(message)
        self.kind = kind
        self.message = message
        self.traceback = traceback


def _not_copied(folder: str, names: list[str]) -> set[str]:
    """Names copytree skips: caches, .git, and anything not a file, folder or symlink (a FIFO
    would make the copy fail, a device would make it endless)."""
    skip = {"__pycache__", ".git"}
    for name in names:
        try:
            mode = os.lstat(os.path.join(folder, name)).st_mode
        except OSError:
            skip.add(name)
            continue
        if not (stat.S_ISREG(mode) or stat.S_ISDIR(mode) or stat.S_ISLNK(mode)):
            skip.add(name)
    return skip


class Sandbox:
    """A worker process serving calls into one submission's module.

    Use as a context manager. The worker starts lazily on the first call and restarts
    after a crash or timeout (from a fresh copy of the submission).

    Args:
        exercise: the exercise spec (module name, limits, forbidden imports).
        submission: the student's folder (read, never written).
        use_bubblewrap: None picks bubblewrap when it works.
        budget: wall seconds all calls together may take (None: per-call limits only);
            once spent, every further call fails at once with a timeout.
    """

    def __init__(self, exercise: Exercise, submission: Path, *, use_bubblewrap: bool | None = None,
                 budget: float | None = None):
        self.exercise = exercise
        self.limits: Limits = exercise.limits
        self.submission = Path(submission)
        self.bubblewrap = bubblewrap_works() if use_bubblewrap is None else use_bubblewrap
        self.claim: UidClaim | None = None  # this sandbox's own uid (as root under bubblewrap)
        self.proc: JobProcess | None = None
        self.drains: list[OutputDrain] = []
        self.outputs: list[str] = []
        self.output_left = self.limits.output_kb * 1024  # one cap for all of the submission's processes
        self.functions: list[str] | None = None
        self.load_error: SubmissionError | None = None
        self.start_error: RuntimeError | None = None  # the worker could not start: not retried
        self.timeouts: dict[str, int] = {}
        self.closed = False
        self._lifecycle = threading.RLock()  # close() against a worker starting in another thread
        self.calls = 0
        self.ready = self.loaded = False  # the worker said it is ready; the submission is imported
        self.budget = budget
        self.deadline = None if budget is None else time.monotonic() + budget

    # ------------------------------------------------------------------ lifecycle
    @property
    def isolation(self) -> str:
        """One line for the report saying how student code was isolated."""
        if self.bubblewrap:
            return ("bubblewrap: own PID, mount and network namespaces (no network), read-only system, "
                    "private writable copy of the submission and private /tmp, own unprivileged user, rlimits")
        how = "plain child process with rlimits (bubblewrap not available): no network or file-system isolation"
        if not has_rlimits():
            how = ("plain child process without rlimits (neither bubblewrap nor the resource module is available): "
                   "no network or file-system isolation, no CPU, memory or process limits; only the time limit per call")
        elif self._plain_uid():
            how = ("plain child process with rlimits as an unprivileged user of its own (bubblewrap not available): "
                   "no network isolation; what any user may read or write (/tmp) is in reach")
        elif os.name == "posix" and os.getuid() == 0:
            how += "; running as root, so the process limit does not bind"
        return how

    def _plain_uid(self) -> bool:
        """Without bubblewrap, as root: the job takes a uid of its own when other users can run this Python
        (and the system can switch all three uids, as Linux does; macOS cannot)."""
        return (not self.bubblewrap and hasattr(os, "setresuid") and os.getuid() == 0
                and others_can_run_python())

    def __enter__(self) -> "Sandbox":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def prestart(self) -> None:
        """Start the worker now without waiting, so its Python and NumPy start-up overlaps
        the judge's own work (pytest collecting the checks). Optional; calls wait for it."""
        if self.proc is None and not self.closed and self.exercise.module and self.load_error is None \
                and self.start_error is None \
                and (self.submission / f"{self.exercise.module}.py").is_file():
            with contextlib.suppress(RuntimeError):  # kept in start_error: the first call reports it
                self._spawn()

    def _spawn(self) -> None:
        """Start a worker on a fresh copy of the submission (see :meth:`_wait_ready`).

        Raises:
            SubmissionError: kind ``stopped``, the sandbox was closed (by another thread).
        """
        with self._lifecycle:
            if self.closed:
                raise SubmissionError("stopped", "not run: grading was stopped before this call.")
            try:
                self._spawn_unlocked()
            except RuntimeError as exc:  # no template, no uid free: the grader's problem, not retried
                self.start_error = RuntimeError(f"the sandbox did not start: {exc}")
                raise self.start_error from None

    @property
    def uid(self) -> int | None:
        """The unprivileged uid this sandbox's code runs as (None: the grader's own user)."""
        return self.claim.uid if self.claim is not None else None

    def _spawn_unlocked(self) -> None:
        self.ready = self.loaded = False
        unsupported = unsupported_platform()
        if unsupported:
            raise RuntimeError(unsupported)
        if (self.bubblewrap and os.getuid() == 0 or self._plain_uid()) and self.claim is None:
            self.claim = claim_uid()
        cfg = {
            "cpu": self.limits.cpu, "memory_mb": self.limits.memory_mb,
            "file_size_mb": self.limits.file_size_mb, "processes": self.limits.processes,
            "uid": self.uid, "module": self.exercise.module, "rlimits": has_rlimits(),
            "forbidden_imports": list(self.exercise.forbidden_imports),
            "preload": list(self.exercise.preload),
        }
        template = template_for(self.bubblewrap, tuple(self.exercise.forbidden_imports))
        self.proc = template.start(cfg, self.submission, self.exercise.harness_file, _not_copied)
        os.set_blocking(self.proc.stdin.fileno(), False)  # written with a deadline, see _send
        drain = OutputDrain(self.proc.stderr, max(self.output_left, 0))
        drain.start()
        self.drains.append(drain)

    def _wait_ready(self) -> None:
        """Wait for the worker's "ready" message.

        Raises:
            RuntimeError: the worker did not start (no student code has run yet, so this
                is the grader's problem, not the student's).
        """
        try:
            self._receive(time.monotonic() + START_TIMEOUT, 0)
        except (Timeout, Closed, ProtocolError) as exc:
            proc = self.proc
            if isinstance(exc, Timeout) and proc is not None:
                proc.template.close()  # it did not fork the job, or the job hung before student code: start afresh
            self._stop()
            why = {Timeout: f"not ready within {START_TIMEOUT:g} s",
                   Closed: f"exited with status {proc.returncode if proc else None}"}.get(type(exc), str(exc))
            self.start_error = RuntimeError(f"the sandbox did not start ({why}); its output: "
                                            f"{self.outputs[-1][-1000:] if self.outputs else ''}")
            raise self.start_error from None
        self.ready = True

    def _stop(self) -> None:
        proc, self.proc = self.proc, None
        if proc is not None:
            proc.kill()
            for stream in (proc.stdin, proc.stdout):  # stderr belongs to its drain thread
                with contextlib.suppress(OSError):
                    stream.close()
            try:
                with contextlib.suppress(TemplateLost):  # the template has ended, and the job with it
                    proc.wait(timeout=STOP_TIMEOUT)
            except subprocess.TimeoutExpired:  # the template did not end it: end the template, and every job with it
                proc.template.close()
        for drain in self.drains:
            drain.stopped.set()
        for drain in self.drains:
            drain.join(timeout=1 + drain.SWEEP)
            self.outputs.append(drain.text())
            self.output_left -= len(drain.kept)
        self.drains = []
        if proc is not None:
            shutil.rmtree(proc.folder, ignore_errors=True)

    def close(self) -> None:
        """Stop the worker and delete its temp folder, for good: a later call (e.g. from a check
        still running in another thread after Ctrl-C) fails at once instead of starting a worker."""
        with self._lifecycle:  # not while another thread is half-way through starting a worker
            self.closed = True
            self._stop()
            if self.claim is not None:
                if not self.bubblewrap:  # a plain job's processes may live on (setsid): end every one of its uid
                    kill_uid(self.claim.uid)
                self.claim.release()  # every process of the job has ended: the uid is free

    @property
    def output(self) -> str:
        """Everything the student's code printed (one cap for the whole submission)."""
        live = [d.text() for d in self.drains]
        return "".join(o for o in self.outputs + live if o)

    # ------------------------------------------------------------------ protocol
    def _receive(self, deadline: float, expected_id: int) -> tuple[dict, list[bytes]]:
        """One reply frame from the worker (see :func:`grader.sandbox.channel.receive`)."""
        return receive(self.proc.stdout.fileno(), deadline, expected_id, self.limits.reply_mb * 1024 * 1024,
                       lambda: self.proc.poll() is not None)

    def _request(self, message: dict, blobs: list[bytes], timeout: float, what: str):
        assert self.proc is not None
        if self.deadline is not None:
            left = self.deadline - time.monotonic()
            if left <= 0:
                raise SubmissionError("timeout", f"{what} was not run: the submission used up its grading "
                                                 f"time budget of {self.budget:g} s.")
            timeout = min(timeout, left)
        self.calls += 1
        data = frame_bytes(dict(message, id=self.calls), blobs)
        deadline = time.monotonic() + timeout
        try:
            send(self.proc.stdin.fileno(), data, deadline)
            return self._receive(deadline, self.calls)
        except Timeout:
            self._stop()
            raise SubmissionError(
                "timeout",
                f"{what} did not finish within {timeout:g} s and was stopped (an infinite loop, or far too slow).",
            ) from None
        except Closed:
            return self._died(what)
        except FrameTooLarge as exc:
            self._stop()
            raise SubmissionError("protocol", messages.too_large(what, str(exc), self.limits)) from None
        except ProtocolError as exc:
            self._stop()
            raise SubmissionError("protocol", f"{what} sent back something unreadable ({exc}).") from None

    def _died(self, what: str):
        """Raise the student's error for a worker that ended (or closed its pipe) during ``what``.

        Raises:
            SubmissionError: always, kind ``crash``.
            TemplateLost: the template ended (a grader error, not the student's).
        """
        proc = self.proc
        code = None
        try:
            if proc is not None:
                with contextlib.suppress(subprocess.TimeoutExpired):
                    code = proc.wait(timeout=EXIT_GRACE)
        finally:
            self._stop()
        raise SubmissionError("crash", messages.ended(what, code, signal_above_128=self.bubblewrap,
                                                      limits=self.limits))

    @staticmethod
    def _error_fields(reply: dict) -> dict:
        """The error of a failed reply, with every field of the expected type (replies can be forged).

        Raises:
            ProtocolError: the reply has no error object.
        """
        err = reply.get("error")
        if not isinstance(err, dict):
            raise ProtocolError("a failed reply without an error description")
        bases = err.get("bases")
        etype = str(err.get("type", "Exception"))[:200]
        errno = err.get("errno")
        return {
            "type": etype,
            "message": str(err.get("message", ""))[:2000],
            "traceback": str(err.get("traceback", ""))[-4000:],
            "bases": [str(b) for b in bases] if isinstance(bases, list) else [etype],
            "errno": errno if type(errno) is int else None,
        }

    def _ensure_loaded(self) -> None:
        if self.closed:
            raise SubmissionError("stopped", "not run: grading was stopped before this call.")
        if self.load_error is not None:
            raise self.load_error
        if self.start_error is not None:
            raise self.start_error
        if self.proc is not None and self.loaded:
            return
        source = f"{self.exercise.module}.py"  # other required files (e.g. a report) are the checks' business
        if not (self.submission / source).is_file():
            self.load_error = SubmissionError(
                "missing", f"the submission has no {source} (looked in {self.submission}).")
            raise self.load_error
        if self.proc is None:
            self._spawn()
        if not self.ready:
            self._wait_ready()
        module = self.exercise.module
        try:
            message, blobs = self._request({"op": "load"}, [], self.limits.call_timeout, f"importing {module}.py")
        except SubmissionError as exc:
            self.load_error = exc
            raise
        if not message.get("ok"):
            self._stop()
            try:
                err = self._error_fields(message)
            except ProtocolError as exc:
                self.load_error = SubmissionError("protocol", f"importing {module}.py sent back something "
                                                              f"unreadable ({exc}).")
                raise self.load_error from None
            self.load_error = SubmissionError("load", messages.import_failed(module, err), err["traceback"])
            raise self.load_error
        try:
            functions = decode(message.get("value"), blobs)
        except ProtocolError as exc:
            functions = exc
        if not isinstance(functions, list) or not all(isinstance(f, str) for f in functions):
            self._stop()
            self.load_error = SubmissionError(
                "protocol", f"importing {module}.py sent back something unreadable instead of its function names.")
            raise self.load_error
        self.functions = functions
        self.loaded = True

    def has_function(self, name: str) -> bool:
        """True when the student's module defines a public callable ``name``.

        Raises:
            SubmissionError: the module could not be loaded.
        """
        self._ensure_loaded()
        return name in (self.functions or [])

    def signature(self, name: str) -> list[tuple[str, str, bool]]:
        """Parameters of the student's function: (name, kind, has_default) each."""
        self._ensure_loaded()
        message, blobs = self._request({"op": "signature", "name": name}, [], self.limits.call_timeout,
                                       f"inspecting {name}")
        if not message.get("ok"):
            raise SubmissionError("missing", f"{name} is not a function in {self.exercise.module}.py.")
        try:
            params = decode(message.get("value"), blobs)
        except ProtocolError:
            params = None
        if not isinstance(params, list) or not all(
                isinstance(p, list) and len(p) == 3 and isinstance(p[0], str) and isinstance(p[1], str)
                and isinstance(p[2], bool) for p in params):
            raise SubmissionError("protocol", f"inspecting {name} sent back something unreadable.")
        return [tuple(p) for p in params]

    def value(self, name: str):
        """A public module-level value of the student's module (e.g. a constant), decoded.

        Raises:
            SubmissionError: the module does not load, does not define ``name``, or the value
                cannot be sent back.
        """
        self._ensure_loaded()
        module = self.exercise.module
        reply, blobs = self._request({"op": "value", "name": name}, [], self.limits.call_timeout,
                                     f"reading {name}")
        if not reply.get("ok"):
            raise SubmissionError("missing", f"{module}.py defines no {name}.")
        try:
            return decode(reply.get("value"), blobs)
        except ProtocolError as exc:
            raise SubmissionError("protocol", f"{name} in {module}.py could not be read ({exc}).") from None

    def call(self, name: str, *args, **kwargs):
        """Call ``name(*args, **kwargs)`` in the sandbox and return the decoded result.

        Arguments may be NumPy arrays, numbers, strings, None and lists/tuples/dicts of
        these. Arrays come back as NumPy arrays (read with ``allow_pickle=False``).

        Raises:
            SubmissionError: the function is missing, raised, timed out, crashed the
                process, or returned something that cannot be sent back.
        """
        self._ensure_loaded()
        if name not in (self.functions or []):
            raise SubmissionError("missing", f"{self.exercise.module}.py has no function {name}().")
        if self.timeouts.get(name, 0) >= MAX_TIMEOUTS_PER_FUNCTION:
            raise SubmissionError(
                "timeout", f"{name}() was not run again: it already timed out {self.timeouts[name]} times.")
        blobs: list[bytes] = []
        message = {
            "op": "call", "name": name,
            "args": encode(list(args), blobs)["__list__"],
            "kwargs": encode(dict(kwargs), blobs)["__dict__"],
        }
        try:
            reply, reply_blobs = self._request(message, blobs, self.limits.call_timeout, f"{name}()")
        except SubmissionError as exc:
            if exc.kind == "timeout":
                self.timeouts[name] = self.timeouts.get(name, 0) + 1
            raise
        if not reply.get("ok"):
            try:
                err = self._error_fields(reply)
            except ProtocolError as exc:
                raise SubmissionError("protocol", f"{name}() sent back something unreadable ({exc}).") from None
            raise SubmissionError("exception", messages.raised(name, err, self.limits), err["traceback"])
        try:
            return decode(reply.get("value"), reply_blobs)
        except ProtocolError as exc:
            raise SubmissionError("protocol", f"{name}() returned something unreadable ({exc}).") from None
