"""Starting and stopping sandbox processes: a template process per judge, a uid per sandbox.

Starting Python and importing NumPy took more than half of the machine's time per graded
submission. So each judge process keeps one *template* process (per isolation setting) that has
done both once, never runs student code, and forks a fresh job per sandbox; the job isolates
itself before the student's code runs (:func:`grader.sandbox.forking._isolate_job`; the rules are
listed in :mod:`grader.sandbox.isolation`). A :class:`JobProcess` stands for one job with the
parts of ``subprocess.Popen`` the sandbox uses.

Each sandbox that runs as root gets a uid of its own (:func:`claim_uid`): ``RLIMIT_NPROC`` counts
per uid, so two sandboxes sharing one would share one process limit (a thread pool in one made
a correct submission in the other fail). A uid is claimed with an exclusive ``flock`` on a file
in :data:`UID_LOCKS`, held while the sandbox runs and released when it is closed or its process
ends, so concurrent graders on one machine (any PID namespace) never share one.
"""
from __future__ import annotations

import atexit
import contextlib
import json
import os
import select
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

try:
    import fcntl
except ImportError:  # Windows: no sandbox can start there (isolation.unsupported_platform), but the grader imports
    fcntl = None

from .isolation import package_dirs, python_roots, scrubbed_env, site_packages, template_command

HERE = Path(__file__).resolve().parent
#: Seconds allowed for the template to start (Python and NumPy imported).
START_TIMEOUT = 30.0
#: Where uid claims are kept (one lock file per uid); shared by every grader on the machine.
UID_LOCKS = Path("/tmp/grader-uids")
#: The uids sandboxes run as when the grader is root: UID_BASE .. UID_BASE + UID_COUNT - 1.
UID_BASE, UID_COUNT = 61000, 1000
#: Kills a process group; where there is none (``os.killpg`` missing), just the process (a job leads its group).
_kill_group = getattr(os, "killpg", os.kill)


class UidClaim:
    """An unprivileged uid held by one sandbox; :meth:`release` gives it back (so does process exit)."""

    def __init__(self, uid: int, fd: int):
        self.uid, self._fd = uid, fd

    def release(self) -> None:
        if self._fd is not None:
            os.close(self._fd)  # closing the file drops the flock
            self._fd = None


def _uids_running() -> set[int]:
    """The uids of the processes visible here (the owner of ``/proc/PID`` is the process's uid)."""
    uids = set()
    with contextlib.suppress(OSError):
        for entry in os.scandir("/proc"):
            if entry.name.isdigit():
                with contextlib.suppress(OSError):
                    uids.add(entry.stat().st_uid)
    return uids


def _give(folder: Path, uid: int) -> None:
    """Make ``folder`` and everything in it belong to ``uid`` (``folder`` itself: mode 0700)."""
    for parent, dirs, files in os.walk(folder):
        for name in [parent, *(os.path.join(parent, n) for n in dirs + files)]:
            os.lchown(name, uid, uid)
    os.chmod(folder, 0o700)


def kill_uid(uid: int) -> None:
    """Kill every process running as ``uid`` (a sandbox's own, never the grader's): a child takes the uid and
    signals all it may (``kill(-1)`` spares the caller), until none is left or a fork loop outran 20 rounds."""
    if not hasattr(os, "fork") or os.getuid() != 0 or uid < UID_BASE:
        return
    pid = os.fork()
    if pid == 0:  # only system calls from here: this process may have threads
        code = 0
        try:
            os.setgroups([])
            os.setresgid(uid, uid, uid)
            os.setresuid(uid, uid, uid)
            for _ in range(20):
                os.kill(-1, signal.SIGKILL)
        except ProcessLookupError:  # nothing left of that uid
            pass
        except BaseException:  # noqa: BLE001 - never return into the grader's code in the child
            code = 1
        os._exit(code)
    os.waitpid(pid, 0)


def claim_uid() -> UidClaim:
    """The first uid in the range that no running sandbox on this machine holds and no visible
    process runs as (a grader that does not take these locks, e.g. an older version, may use one).

    Raises:
        RuntimeError: all :data:`UID_COUNT` uids are held.
    """
    UID_LOCKS.mkdir(mode=0o700, parents=True, exist_ok=True)
    busy = _uids_running()
    for uid in range(UID_BASE, UID_BASE + UID_COUNT):
        if uid in busy:
            continue
        fd = os.open(UID_LOCKS / f"{uid}.lock", os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            continue
        return UidClaim(uid, fd)
    raise RuntimeError(f"all {UID_COUNT} sandbox uids from {UID_BASE} are in use")


class TemplateLost(RuntimeError):
    """The template process ended (not the student's doing: it never runs student code)."""


class JobProcess:
    """One forked job, with the parts of ``subprocess.Popen`` a sandbox uses.

    ``stdin`` takes requests (non-blocking), ``stdout`` gives replies, ``stderr`` the student's
    output; :attr:`returncode` is the exit status or minus the signal number (under bubblewrap a
    signal shows as 128 + its number, as bwrap reports it). :attr:`folder` holds the job's copy.
    """

    def __init__(self, template: "Template", job: int, folder: Path, fds: tuple[int, int, int]):
        self.template, self.job, self.folder = template, job, folder
        self.stdin = open(fds[0], "wb", buffering=0)
        self.stdout = open(fds[1], "rb", buffering=0)
        self.stderr = open(fds[2], "rb", buffering=0)
        self.pid: int | None = None  # in the template's PID namespace
        self.returncode: int | None = None
        self.lost = False  # the template ended before telling how this job ended
        self.ended = threading.Event()

    def poll(self) -> int | None:
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        """The exit status once the job has ended.

        Raises:
            subprocess.TimeoutExpired: not ended within ``timeout`` seconds.
            TemplateLost: the template ended, so the status is unknown.
        """
        if not self.ended.wait(timeout):
            raise subprocess.TimeoutExpired("sandbox job", timeout)
        if self.lost:
            raise TemplateLost("the sandbox's template process ended")
        return self.returncode

    def kill(self) -> None:
        """End the job and every process it started (its PID namespace, or its process group)."""
        self.template.kill(self)


class Template:
    """A process that has imported NumPy and forks one job per sandbox (see the module docstring).

    Args:
        bubblewrap: start it under bubblewrap, and have each job isolate itself.
        hidden: installed package folders the jobs must not see (a forbidden import).

    Raises:
        RuntimeError: the template did not start (with its output).
    """

    def __init__(self, bubblewrap: bool, hidden: tuple[str, ...]):
        self.bubblewrap = bubblewrap
        self.dir = Path(tempfile.mkdtemp(prefix="grader-template-"))
        os.chmod(self.dir, 0o755)
        for name in ("forking.py", "worker.py", "wire.py"):
            shutil.copy2(HERE / name, self.dir / name)
        (self.dir / "jobs").mkdir(mode=0o700)
        if not bubblewrap:  # a plain job of its own uid walks in to its folder (never lists the others)
            os.chmod(self.dir / "jobs", 0o711)
        self.inside = "/grader" if bubblewrap else str(self.dir)
        cfg = {"site_packages": site_packages()}
        python = [sys.executable, "-I", "-S", f"{self.inside}/forking.py", json.dumps(cfg)]
        cmd = template_command(self.dir, python, hidden) if bubblewrap else python
        ours, theirs = _control_sockets()
        self._log = open(self.dir / "template.log", "wb+")
        self.proc = subprocess.Popen(cmd, stdin=theirs, stdout=self._log, stderr=self._log, env=scrubbed_env(),
                                     cwd=str(self.dir), start_new_session=True)
        theirs.close()
        self.sock = ours
        self._send_lock = threading.Lock()
        self._jobs: dict[int, JobProcess] = {}
        self._count = 0
        self.alive = True
        ours.settimeout(START_TIMEOUT)
        try:
            ready = ours.recv(1 << 16)
        except OSError:
            ready = b""
        if not ready:
            output = self._output()
            self.close()
            raise RuntimeError(f"the sandbox's template process did not start: {output}")
        ours.settimeout(None)
        threading.Thread(target=self._read, name="sandbox-template", daemon=True).start()

    def _output(self) -> str:
        with contextlib.suppress(OSError, ValueError):
            self._log.seek(0)
            return self._log.read()[-2000:].decode("utf-8", "replace")
        return ""

    def _read(self) -> None:
        """Route the template's messages (a job's pid, a job's end) until it ends (a datagram socket
        never reads as closed: the template's exit is checked every second too)."""
        while True:
            try:
                if not select.select([self.sock], [], [], 1.0)[0]:
                    if self.proc.poll() is None:
                        continue
                    break
                data = self.sock.recv(1 << 16)
            except (OSError, ValueError):  # ValueError: closed by close()
                data = b""
            if not data:
                break
            message = json.loads(data)
            job = self._jobs.get(message.get("job"))
            if job is None:
                continue
            if "pid" in message:
                job.pid = message["pid"]
            elif "exit" in message:
                job.returncode = message["exit"]
                self._jobs.pop(job.job, None)
                job.ended.set()
        self.alive = False
        for job in list(self._jobs.values()):
            job.lost = True
            job.ended.set()

    def start(self, cfg: dict, submission: Path, harness: Path | None, ignore) -> JobProcess:
        """Fork a job serving ``cfg`` (see :func:`grader.sandbox.worker.serve`) on a fresh copy of
        ``submission`` (``ignore``: as ``shutil.copytree``'s); ``harness`` is copied beside it.

        Raises:
            TemplateLost: the template has ended.
        """
        with self._send_lock:
            self._count += 1
            job = self._count
        folder = self.dir / "jobs" / str(job)
        copy = folder / "sandbox"
        copy.mkdir(parents=True)
        shutil.copytree(submission, copy / "submission", symlinks=True, ignore=ignore)
        if harness is not None:
            shutil.copy2(harness, copy / "harness.py")
        if not self.bubblewrap and cfg.get("uid") is not None:  # the job's folder is its own uid's, and only its
            _give(folder, cfg["uid"])
        inside = f"{self.inside}/jobs/{job}/sandbox" if not self.bubblewrap else "/sandbox"
        cfg = dict(cfg, isolate=self.bubblewrap, template_dir=self.inside, python_roots=list(python_roots()),
                   submission_dir=f"{inside}/submission",
                   harness=f"{inside}/harness.py" if harness is not None else "")
        requests, replies, output = os.pipe(), os.pipe(), os.pipe()
        if hasattr(fcntl, "F_SETPIPE_SZ"):  # Linux: 1 MiB of output per wake-up instead of 64 KiB (a flood costs less)
            with contextlib.suppress(OSError):
                fcntl.fcntl(output[0], fcntl.F_SETPIPE_SZ, 1 << 20)
        process = JobProcess(self, job, folder, (requests[1], replies[0], output[0]))
        self._jobs[job] = process
        message = json.dumps({"op": "fork", "job": job, "cfg": cfg}).encode()
        try:
            with self._send_lock:
                if not self.alive:
                    raise OSError("the template has ended")
                socket.send_fds(self.sock, [message], [requests[0], replies[1], output[1]])
        except OSError as exc:
            self._jobs.pop(job, None)
            for f in (process.stdin, process.stdout, process.stderr):
                f.close()
            raise TemplateLost(f"the sandbox's template process ended: {self._output()}") from exc
        finally:
            for fd in (requests[0], replies[1], output[1]):
                os.close(fd)
        return process

    def kill(self, job: JobProcess) -> None:
        """Kill ``job`` and everything it started."""
        if not self.bubblewrap and job.pid is not None and job.returncode is None:
            with contextlib.suppress(OSError):  # same PID namespace: no need to wait for the template
                _kill_group(job.pid, signal.SIGKILL)
        with contextlib.suppress(OSError), self._send_lock:
            self.sock.send(json.dumps({"op": "kill", "job": job.job}).encode())

    def close(self) -> None:
        """Stop the template (its jobs end with it) and remove its folder."""
        self.alive = False
        with contextlib.suppress(OSError):
            self.sock.close()
        with contextlib.suppress(ProcessLookupError, PermissionError):
            _kill_group(self.proc.pid, signal.SIGKILL)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.proc.wait(timeout=5)
        self._log.close()
        shutil.rmtree(self.dir, ignore_errors=True)


def _control_sockets() -> tuple[socket.socket, socket.socket]:
    """A connected pair of Unix sockets that keep message boundaries: ``SOCK_SEQPACKET``, or on macOS,
    which has none, ``SOCK_DGRAM`` (reliable between Unix sockets; its messages are limited to
    ``net.local.dgram.maxdgram``, 2 KiB by default, and a job's request is under 1 KiB)."""
    try:
        return socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    except (OSError, AttributeError):
        return socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM)


_templates: dict[tuple[bool, tuple[str, ...]], Template] = {}
_templates_lock = threading.Lock()


def template_for(bubblewrap: bool, forbidden_imports: tuple[str, ...]) -> Template:
    """This process's running template for the setting (started on first use, restarted if it ended).

    Raises:
        RuntimeError: it could not start.
    """
    key = (bubblewrap, package_dirs(tuple(forbidden_imports)) if bubblewrap else ())
    with _templates_lock:
        template = _templates.get(key)
        if template is None or not template.alive or template.proc.poll() is not None:
            if template is not None:
                template.close()
            template = _templates[key] = Template(*key)
        return template


@atexit.register
def close_templates() -> None:
    """Stop every template of this process (at exit; tests call it to start afresh)."""
    with _templates_lock:
        for template in _templates.values():
            template.close()
        _templates.clear()


__all__ = ["JobProcess", "Template", "TemplateLost", "UidClaim", "claim_uid", "template_for"]
