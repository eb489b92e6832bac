"""The template process's own program: it forks a sandbox job per request and isolates each one.
Standard library and NumPy only; copied into the template's folder with ``worker.py`` and
``wire.py``, and run as ``python -I -S forking.py CONFIG_JSON`` by
:class:`grader.sandbox.template.Template` (under bubblewrap when available).

**Template** (:func:`template_main`). It imports NumPy once, then waits on its control socket
(fd 0, ``SOCK_SEQPACKET``, or ``SOCK_DGRAM`` on macOS) for requests::

    {"op": "fork", "job": N, "cfg": {...}}   + 3 fds (requests in, replies out, output)
    {"op": "kill", "job": N}

and answers ``{"ready": true}`` once, then ``{"job": N, "pid": P}`` and ``{"job": N, "exit": CODE}``
(``CODE``: the exit status, or minus the signal number, as ``subprocess`` reports it). It never
runs student code: each job is a fresh fork, so no state passes from one student to the next,
and starting a sandbox costs a fork instead of a Python start and a NumPy import.

**Job** (:func:`_run_job`). A forked job closes every descriptor but its three pipes. Under
bubblewrap it then gives itself, before any student code runs, what a bubblewrap of its own would
give (:func:`_isolate_job`; the rules are listed in :mod:`grader.sandbox.isolation`), and becomes
the worker (:func:`grader.sandbox.worker.serve`). Without bubblewrap (the fallback) the job is a
plain child in a session of its own, with the rlimits.
"""
from __future__ import annotations

import contextlib
import json
import os
import sys

try:
    from . import worker
except ImportError:  # run as the template's script: worker.py lies beside this file
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    try:
        import worker
    finally:
        del sys.path[0]
    sys.modules["grader_sandbox_worker"] = sys.modules.pop("worker")  # a submission's worker.py stays its own


MS_RDONLY, MS_NOSUID, MS_NODEV, MS_REMOUNT, MS_BIND, MS_REC, MS_PRIVATE = 1, 2, 4, 32, 4096, 1 << 14, 1 << 18
PR_SET_PDEATHSIG = 1


def _mount(libc, source, target: str, fstype, flags: int, data: str | None = None) -> None:
    worker._check(libc.mount(source and source.encode(), target.encode(), fstype and fstype.encode(), flags,
                      data and data.encode()), f"mount {target}")


def _exit_code(status: int) -> int:
    """A wait status as an exit status a parent can pass on: the code, or 128 + the signal (as bwrap)."""
    return os.WEXITSTATUS(status) if os.WIFEXITED(status) else 128 + os.WTERMSIG(status)


def _isolate_job(cfg: dict, job_dir: str) -> None:
    """Give this forked job the namespaces and file system of a fresh bubblewrap (see the module
    docstring), ending in the process that serves (PID 2 of a new PID namespace). Runs as the
    template's user, before any student code. Parents along the way only wait and pass on the
    worker's exit status; they never return."""
    import shutil
    import signal

    libc = worker._libc()
    namespaces = worker.CLONE_NEWNS | worker.CLONE_NEWPID | worker.CLONE_NEWNET | worker.CLONE_NEWIPC | worker.CLONE_NEWUTS
    if libc.unshare(namespaces) != 0:  # not root (bubblewrap started by a user): a user namespace of its own
        uid, gid = os.getuid(), os.getgid()
        worker._check(libc.unshare(namespaces | worker.CLONE_NEWUSER), "unshare")
        for name, text in (("setgroups", "deny"), ("uid_map", f"{uid} {uid} 1"), ("gid_map", f"{gid} {gid} 1")):
            with open(f"/proc/self/{name}", "w") as f:
                f.write(text)
    _mount(libc, None, "/", None, MS_REC | MS_PRIVATE)
    # A private /tmp hides what the template showed under /tmp: Python itself when its environment
    # lives there (a venv in /tmp). Those folders are held open and shown again, read-only.
    held = [(root, os.open(root, os.O_PATH | os.O_DIRECTORY)) for root in cfg.get("python_roots", [])
            if root == "/tmp" or root.startswith("/tmp/")]
    _mount(libc, "tmpfs", "/tmp", "tmpfs", MS_NOSUID | MS_NODEV, "size=64m,mode=1777")
    for root, fd in held:
        os.makedirs(root, mode=0o755, exist_ok=True)
        _mount(libc, f"/proc/self/fd/{fd}", root, None, MS_BIND | MS_REC)
        _mount(libc, None, root, None, MS_BIND | MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV)
        os.close(fd)
    copy = os.path.join(job_dir, "sandbox")
    size = sum(os.lstat(os.path.join(d, f)).st_size for d, _, fs in os.walk(copy) for f in fs)
    room = size + cfg["file_size_mb"] * 1024 * 1024 + (1 << 20)
    _mount(libc, "tmpfs", "/sandbox", "tmpfs", MS_NOSUID | MS_NODEV, f"size={room},mode=0755")
    for name in os.listdir(copy):
        src, dst = os.path.join(copy, name), os.path.join("/sandbox", name)
        if os.path.isdir(src) and not os.path.islink(src):
            shutil.copytree(src, dst, symlinks=True)
        else:
            shutil.copy2(src, dst, follow_symlinks=False)
    uid = cfg.get("uid")
    if uid is not None and os.getuid() == 0:  # the submission's folder is the job's own to write in
        for d, dirs, files in os.walk("/sandbox/submission"):
            for name in [d, *(os.path.join(d, n) for n in dirs + files)]:
                os.lchown(name, uid, uid)
    _mount(libc, "tmpfs", cfg["template_dir"], "tmpfs", MS_RDONLY | MS_NOSUID | MS_NODEV, "size=4k,mode=0755")
    # The template stops a job with SIGTERM to this process, which kills the reaper and waits for it:
    # a PID namespace's first process is reaped only after every process in it has gone, so when
    # this process ends, nothing of the job runs any more (and its uid can go to the next sandbox).
    reaper = {"pid": 0, "stop": False}

    def stop(*_):
        reaper["stop"] = True
        if reaper["pid"]:
            os.kill(reaper["pid"], signal.SIGKILL)

    signal.signal(signal.SIGTERM, stop)
    reaper["pid"] = os.fork()  # PID 1 of the new PID namespace: when it ends, every process of the job ends
    if reaper["pid"]:
        if reaper["stop"]:  # asked to stop before the reaper's pid was known
            os.kill(reaper["pid"], signal.SIGKILL)
        _, status = os.waitpid(reaper["pid"], 0)
        os._exit(_exit_code(status))
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)  # should its parent die anyway
    _mount(libc, "proc", "/proc", "proc", MS_NOSUID | MS_NODEV)
    served = os.fork()
    if served:
        stopped_by = 0
        while True:  # reap orphans; end with the worker
            pid, status = os.waitpid(-1, os.WUNTRACED)
            if pid == served and os.WIFSTOPPED(status):
                # A stopped worker can never answer: end it now rather than let the call time out.
                stopped_by = os.WSTOPSIG(status)
                os.kill(served, signal.SIGKILL)
            elif pid == served:
                os._exit(128 + stopped_by if stopped_by else _exit_code(status))
    os.setsid()


def _close_all_but(keep: list[int]) -> None:
    """Close every file descriptor of this process except ``keep`` (0, 1 and 2 included: the worker
    sets them up again)."""
    top = os.sysconf("SC_OPEN_MAX") if hasattr(os, "sysconf") else 65536
    low = 0
    for fd in sorted(keep):
        os.closerange(low, fd)
        low = fd + 1
    os.closerange(low, max(top, low))


def _run_job(request: dict, fds: list[int]) -> None:
    """In the forked child: isolate (under bubblewrap), then serve; never returns."""
    import signal

    code = 1
    try:
        for sig in (signal.SIGCHLD, signal.SIGINT, signal.SIGTERM, signal.SIGPIPE):
            signal.signal(sig, signal.SIG_DFL)
        signal.set_wakeup_fd(-1)
        _close_all_but(fds)  # nothing of the template's (its epoll, control socket, log) stays reachable
        os.setsid()  # a group of its own: the template kills the job with its group
        cfg = request["cfg"]
        if cfg.get("isolate"):
            _isolate_job(cfg, os.path.join(cfg["template_dir"], "jobs", str(request["job"])))
        code = worker.serve(cfg, *fds)
    except BaseException as exc:  # noqa: BLE001 - no student code has run yet: the grader's problem
        text = f"the sandbox could not start: {type(exc).__name__}: {exc}\n".encode()
        for fd in (fds[2], 2):  # the output pipe, or fd 2 once the worker has moved it there
            try:
                os.write(fd, text)
                break
            except OSError:
                continue
        code = 70
    finally:
        worker._flush_quietly()
        os._exit(code)


def template_main(cfg: dict) -> int:
    """Serve fork and kill requests on the control socket (fd 0) until it closes."""
    import selectors
    import signal
    import socket

    sys.path.extend(d for d in cfg.get("site_packages", []) if d not in sys.path)  # run with -S (no site)
    # Imported once here, so no job pays for them: NumPy, and what a job and the worker use.
    import collections  # noqa: F401
    import ctypes  # noqa: F401
    import faulthandler  # noqa: F401
    import importlib.util  # noqa: F401
    import inspect  # noqa: F401
    import shutil  # noqa: F401
    import traceback  # noqa: F401

    with contextlib.suppress(ImportError):  # no rlimits where it is missing (the judge says so)
        import resource  # noqa: F401

    import numpy  # noqa: F401

    control = socket.socket(fileno=0)
    parent = os.getppid()  # a datagram control socket (macOS) never reads as closed: the judge's exit is watched
    kill_group = getattr(os, "killpg", os.kill)
    wake_r, wake_w = os.pipe()
    os.set_blocking(wake_w, False)
    signal.set_wakeup_fd(wake_w)
    signal.signal(signal.SIGCHLD, lambda *_: None)
    jobs: dict[int, int] = {}  # pid -> job number
    isolated: set[int] = set()  # pids of jobs that isolated themselves (stopped with SIGTERM, see _isolate_job)

    def say(message: dict) -> None:
        with contextlib.suppress(OSError):
            control.send(json.dumps(message).encode())

    def end_jobs() -> int:  # the judge is gone: so are its jobs
        for pid in jobs:
            with contextlib.suppress(OSError):
                kill_group(pid, signal.SIGKILL)
        return 0

    say({"ready": True})
    with selectors.DefaultSelector() as sel:
        sel.register(control, selectors.EVENT_READ)
        sel.register(wake_r, selectors.EVENT_READ)
        while True:
            ready = sel.select(timeout=1.0)
            if not ready and os.getppid() != parent:
                return end_jobs()
            for key, _ in ready:
                if key.fileobj == wake_r:
                    with contextlib.suppress(BlockingIOError, InterruptedError):
                        os.read(wake_r, 4096)
                    while jobs:
                        pid, status = os.waitpid(-1, os.WNOHANG)
                        if pid == 0:
                            break
                        job = jobs.pop(pid, None)
                        isolated.discard(pid)
                        code = os.WEXITSTATUS(status) if os.WIFEXITED(status) else -os.WTERMSIG(status)
                        if job is not None:
                            say({"job": job, "exit": code})
                    continue
                try:
                    data, fds, _, _ = socket.recv_fds(control, 1 << 16, 3)
                except InterruptedError:
                    continue
                if not data:
                    return end_jobs()
                request = json.loads(data)
                if request.get("op") == "fork" and len(fds) == 3:
                    pid = os.fork()
                    if pid == 0:
                        _run_job(request, fds)
                    for fd in fds:
                        os.close(fd)
                    jobs[pid] = request["job"]
                    if request["cfg"].get("isolate"):
                        isolated.add(pid)
                    say({"job": request["job"], "pid": pid})
                elif request.get("op") == "kill":
                    for pid, job in jobs.items():
                        if job == request["job"] and pid in isolated:
                            with contextlib.suppress(OSError):
                                os.kill(pid, signal.SIGTERM)
                        elif job == request["job"]:
                            with contextlib.suppress(OSError):
                                kill_group(pid, signal.SIGKILL)
                else:
                    for fd in fds:
                        os.close(fd)


if __name__ == "__main__":
    sys.exit(template_main(json.loads(sys.argv[1])))
