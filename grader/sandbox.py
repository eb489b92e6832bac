"""Run student code in a separate, limited process and talk to it without unpickling.

One :class:`Sandbox` serves one submission: it copies the submission to a private temp
folder, starts :mod:`grader.sandbox_worker` there (under bubblewrap when available) and
forwards calls. Every failure of the student's code becomes a :class:`SubmissionError`
with a message written for the student; nothing the process does can raise anything else
in the judge.

Isolation (see DESIGN.md, "Isolation"):

* bubblewrap: new PID, network, IPC and UTS namespaces; the file system is read-only and
  shows only the system folders, the Python installation and the submission's own copy;
  a 64 MiB ``/tmp``; the worker drops to an unprivileged uid so ``RLIMIT_NPROC`` binds.
* fallback (no bubblewrap, e.g. macOS): a plain child process with the same rlimits.

Either way: rlimits on CPU, address space, file size and processes; a wall-clock
deadline per call that ends in SIGKILL of the whole process group; a scrubbed
environment; stdout/stderr captured into a capped buffer.
"""
from __future__ import annotations

import functools
import os
import selectors
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from .exercises import Exercise, Limits
from .sandbox_worker import ProtocolError, decode, encode, parse_frame, write_frame

WORKER = Path(__file__).with_name("sandbox_worker.py")
#: Seconds allowed for the worker to start and import the submission.
START_TIMEOUT = 20.0
#: Calls to one function that may time out before the rest fail at once.
MAX_TIMEOUTS_PER_FUNCTION = 2


class SubmissionError(Exception):
    """Student code failed: raised, timed out, crashed or sent something unusable.

    Attributes:
        kind: ``exception``, ``timeout``, ``crash``, ``load``, ``missing`` or ``protocol``.
        message: one or two sentences for the student.
        traceback: the student's own frames, when there are any.
    """

    def __init__(self, kind: str, message: str, traceback: str = ""):
        super().__init__(message)
        self.kind = kind
        self.message = message
        self.traceback = traceback


@functools.lru_cache(maxsize=1)
def bubblewrap_works() -> bool:
    """True when ``bwrap`` exists and can create the namespaces we ask for."""
    bwrap = shutil.which("bwrap")
    if not bwrap or sys.platform != "linux":
        return False
    try:
        probe = subprocess.run(
            [bwrap, "--unshare-pid", "--unshare-net", "--die-with-parent", "--ro-bind", "/", "/", "true"],
            capture_output=True, timeout=10,
        )
    except (OSError, subprocess.TimeoutExpired):
        return False
    return probe.returncode == 0


def _python_roots() -> list[str]:
    """Folders the sandbox must see to run this Python with NumPy."""
    import numpy

    roots = {sys.prefix, sys.base_prefix, sys.exec_prefix, os.path.dirname(os.path.realpath(sys.executable)),
             str(Path(numpy.__file__).resolve().parent.parent)}
    resolved = sorted({os.path.realpath(r) for r in roots})
    # Drop folders already inside another one.
    return [r for r in resolved if not any(r != o and r.startswith(o.rstrip("/") + "/") for o in resolved)]


def _bwrap_command(workdir: Path, python: list[str]) -> list[str]:
    cmd = ["bwrap", "--unshare-pid", "--unshare-net", "--unshare-ipc", "--unshare-uts",
           "--unshare-cgroup-try", "--die-with-parent", "--new-session",
           "--size", str(64 * 1024 * 1024), "--tmpfs", "/tmp", "--proc", "/proc", "--dev", "/dev"]
    system = [p for p in ("/usr", "/bin", "/lib", "/lib64", "/lib32", "/etc/alternatives", "/etc/ld.so.cache")
              if os.path.exists(p)]
    made = {"/", "/tmp", "/proc", "/dev"}
    for src, dst in [(p, p) for p in system + _python_roots()] + [(str(workdir), "/sandbox")]:
        # Create each missing parent world-readable so the unprivileged uid can walk in.
        parts = Path(dst).parts
        for i in range(2, len(parts)):
            parent = str(Path(*parts[:i]))
            if parent not in made and not any(parent == s or parent.startswith(s + "/") for s in system):
                cmd += ["--perms", "0755", "--dir", parent]
                made.add(parent)
        cmd += ["--ro-bind", src, dst]
        made.add(dst)
    return cmd + ["--chdir", "/sandbox/submission", "--"] + python


def _scrubbed_env() -> dict[str, str]:
    env = {
        "PATH": "/usr/local/bin:/usr/bin:/bin",
        "LANG": "C.UTF-8",
        "HOME": "/tmp",
        "PYTHONDONTWRITEBYTECODE": "1",
        "PYTHONHASHSEED": "0",
        "OPENBLAS_NUM_THREADS": "1",
        "OMP_NUM_THREADS": "1",
        "MKL_NUM_THREADS": "1",
    }
    # Needed for correct results on some processors (see the machine notes); not secrets.
    for key in ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE"):
        if key in os.environ:
            env[key] = os.environ[key]
    return env


class _OutputDrain(threading.Thread):
    """Reads a pipe until EOF or stop, keeping the first ``cap`` bytes."""

    def __init__(self, fd: int, cap: int):
        super().__init__(daemon=True)
        self.fd, self.cap = fd, cap
        self.kept = bytearray()
        self.total = 0
        self.stopped = threading.Event()

    def run(self) -> None:
        sel = selectors.DefaultSelector()
        sel.register(self.fd, selectors.EVENT_READ)
        while not self.stopped.is_set():
            if not sel.select(timeout=0.1):
                continue
            try:
                chunk = os.read(self.fd, 1 << 16)
            except OSError:
                break
            if not chunk:
                break
            self.total += len(chunk)
            room = self.cap - len(self.kept)
            if room > 0:
                self.kept += chunk[:room]
        sel.close()

    def text(self) -> str:
        out = self.kept.decode("utf-8", errors="replace")
        if self.total > len(self.kept):
            out += f"\n[... {self.total - len(self.kept):,} more bytes of output not shown]"
        return out


class Sandbox:
    """A worker process serving calls into one submission's module.

    Use as a context manager. The worker starts lazily on the first call and restarts
    after a crash or timeout (from a fresh copy of the submission).

    Args:
        exercise: the exercise spec (module name, limits, forbidden imports).
        submission: the student's folder (read, never written).
        uid: unprivileged user id to run as when the grader runs as root.
        use_bubblewrap: None picks bubblewrap when it works.
        budget: wall seconds all calls together may take (None: per-call limits only);
            once spent, every further call fails at once with a timeout.
    """

    def __init__(self, exercise: Exercise, submission: Path, *, uid: int = 61000,
                 use_bubblewrap: bool | None = None, budget: float | None = None):
        self.exercise = exercise
        self.limits: Limits = exercise.limits
        self.submission = Path(submission)
        self.uid = uid
        self.bubblewrap = bubblewrap_works() if use_bubblewrap is None else use_bubblewrap
        self.proc: subprocess.Popen | None = None
        self.workdir: Path | None = None
        self.drains: list[_OutputDrain] = []
        self.outputs: list[str] = []
        self.functions: list[str] | None = None
        self.load_error: SubmissionError | None = None
        self.timeouts: dict[str, int] = {}
        self.calls = 0
        self.budget = budget
        self.deadline = None if budget is None else time.monotonic() + budget

    # ------------------------------------------------------------------ lifecycle
    @property
    def isolation(self) -> str:
        """One line for the report saying how student code was isolated."""
        if self.bubblewrap:
            return ("bubblewrap: own PID and network namespace (no network), read-only system, "
                    "private copy of the submission, unprivileged user, rlimits")
        how = "plain child process with rlimits (bubblewrap not available): no network or file-system isolation"
        if os.name == "posix" and os.getuid() == 0:
            how += "; running as root, so the process limit does not bind"
        return how

    def __enter__(self) -> "Sandbox":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def _start(self) -> None:
        self.workdir = Path(tempfile.mkdtemp(prefix="grader-sandbox-"))
        os.chmod(self.workdir, 0o755)
        shutil.copy2(WORKER, self.workdir / "worker.py")
        shutil.copytree(self.submission, self.workdir / "submission", symlinks=True,
                        ignore=shutil.ignore_patterns("__pycache__", ".git"))
        for path in [self.workdir / "submission", *(self.workdir / "submission").rglob("*")]:
            if not path.is_symlink():
                os.chmod(path, 0o755 if path.is_dir() else 0o644)
        inside = Path("/sandbox") if self.bubblewrap else self.workdir
        cfg = {
            "cpu": self.limits.cpu, "memory_mb": self.limits.memory_mb,
            "file_size_mb": self.limits.file_size_mb, "processes": self.limits.processes,
            "uid": self.uid if self.bubblewrap else None,
            "module": self.exercise.module,
            "forbidden_imports": list(self.exercise.forbidden_imports),
            "submission_dir": str(inside / "submission"),
        }
        import json

        python = [sys.executable, "-I", str(inside / "worker.py"), json.dumps(cfg)]
        cmd = _bwrap_command(self.workdir, python) if self.bubblewrap else python
        self.proc = subprocess.Popen(
            cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            cwd=str(self.workdir / "submission"), env=_scrubbed_env(), start_new_session=True,
        )
        drain = _OutputDrain(self.proc.stderr.fileno(), self.limits.output_kb * 1024)
        drain.start()
        self.drains.append(drain)

    def _stop(self) -> None:
        if self.proc is not None:
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
            self.proc.kill()
            try:
                self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                pass
            for stream in (self.proc.stdin, self.proc.stdout):
                try:
                    stream.close()
                except OSError:
                    pass
            self.proc = None
        for drain in self.drains:
            drain.stopped.set()
            drain.join(timeout=1)
            self.outputs.append(drain.text())
            try:
                os.close(drain.fd)
            except OSError:
                pass
        self.drains = []
        if self.workdir is not None:
            shutil.rmtree(self.workdir, ignore_errors=True)
            self.workdir = None

    def close(self) -> None:
        """Stop the worker and delete its temp folder."""
        self._stop()

    @property
    def output(self) -> str:
        """Everything the student's code printed (capped per worker process)."""
        live = [d.text() for d in self.drains]
        return "".join(o for o in self.outputs + live if o)

    # ------------------------------------------------------------------ protocol
    def _request(self, message: dict, blobs: list[bytes], timeout: float, what: str):
        assert self.proc is not None
        if self.deadline is not None:
            left = self.deadline - time.monotonic()
            if left <= 0:
                raise SubmissionError("timeout", f"{what} was not run: the submission used up its grading "
                                                 f"time budget of {self.budget:g} s.")
            timeout = min(timeout, left)
        self.calls += 1
        message = dict(message, id=self.calls)
        try:
            write_frame(self.proc.stdin, message, blobs)
        except (BrokenPipeError, OSError):
            return self._died(what)
        deadline = time.monotonic() + timeout
        raw = bytearray()
        fd = self.proc.stdout.fileno()
        with selectors.DefaultSelector() as sel:
            sel.register(fd, selectors.EVENT_READ)
            while True:
                try:
                    parsed = parse_frame(bytes(raw))
                except ProtocolError as exc:
                    self._stop()
                    raise SubmissionError("protocol", f"{what} sent back something unreadable ({exc}).")
                if parsed is not None:
                    if parsed[0].get("id") != self.calls:
                        self._stop()
                        raise SubmissionError("protocol", f"{what} sent back a reply out of turn.")
                    return parsed
                left = deadline - time.monotonic()
                if left <= 0:
                    self._stop()
                    raise SubmissionError(
                        "timeout",
                        f"{what} did not finish within {timeout:g} s and was stopped "
                        "(an infinite loop, or far too slow).",
                    )
                if not sel.select(timeout=min(left, 0.5)):
                    continue
                chunk = os.read(fd, 1 << 20)
                if not chunk:
                    return self._died(what)
                raw += chunk

    def _died(self, what: str):
        proc = self.proc
        code = proc.wait(timeout=5) if proc is not None else None
        self._stop()
        if code is not None and code < 0:
            sig = signal.Signals(-code).name
            reason = {
                "SIGXCPU": f"it used more than {self.limits.cpu} s of CPU time",
                "SIGXFSZ": f"it wrote a file larger than {self.limits.file_size_mb} MiB",
                "SIGSEGV": "segmentation fault (often very deep recursion)",
                "SIGKILL": "killed (usually out of memory)",
            }.get(sig, sig)
            raise SubmissionError("crash", f"{what} crashed the process: {reason}.")
        raise SubmissionError(
            "crash",
            f"{what} ended the Python process (exit status {code}) instead of returning "
            "(do not call exit() or os._exit() in your code).",
        )

    def _ensure_loaded(self) -> None:
        if self.load_error is not None:
            raise self.load_error
        if self.proc is not None:
            return
        missing = [f for f in self.exercise.files if not (self.submission / f).is_file()]
        if missing:
            self.load_error = SubmissionError(
                "missing", f"the submission has no {', '.join(missing)} (looked in {self.submission}).")
            raise self.load_error
        if not self.exercise.module:
            raise SubmissionError("missing", f"{self.exercise.name} has no code to run.")
        self._start()
        try:
            message, blobs = self._request({"op": "load"}, [], START_TIMEOUT, f"importing {self.exercise.module}.py")
        except SubmissionError as exc:
            self.load_error = exc
            raise
        if not message.get("ok"):
            err = message.get("error", {})
            self._stop()
            self.load_error = SubmissionError(
                "load", f"{self.exercise.module}.py could not be imported: {err.get('type')}: {err.get('message')}",
                err.get("traceback", ""))
            raise self.load_error
        value = message.get("value")
        self.functions = decode(value, blobs) if isinstance(value, dict) else []

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
        return [tuple(p) for p in decode(message.get("value"), blobs)]

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
            err = reply.get("error", {})
            etype, emsg = err.get("type", "Exception"), err.get("message", "")
            if etype == "NotImplementedError":
                text = f"{name}() is not implemented yet (it raises NotImplementedError)."
            elif etype == "MemoryError":
                text = f"{name}() ran out of memory (limit {self.limits.memory_mb} MiB): {emsg}"
            elif etype == "SystemExit":
                text = f"{name}() called exit() instead of returning."
            else:
                text = f"{name}() raised {etype}: {emsg}"
            raise SubmissionError("exception", text, err.get("traceback", ""))
        try:
            return decode(reply.get("value"), reply_blobs)
        except ProtocolError as exc:
            raise SubmissionError("protocol", f"{name}() returned something unreadable ({exc}).")
