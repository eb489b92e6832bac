"""The processes on the sandbox's side: the template, and the worker that runs student code.

Standard library and NumPy only. This file and ``wire.py`` are copied into a folder the sandbox
sees; they must stay importable without the rest of the package.

**Template** (``python -I -S worker.py TEMPLATE_CONFIG_JSON``, started by
:class:`grader.sandbox.template.Template`, under bubblewrap when available). It imports NumPy
once, then waits on its control socket (fd 0, ``SOCK_SEQPACKET``) for requests::

    {"op": "fork", "job": N, "cfg": {...}}   + 3 fds (requests in, replies out, output)
    {"op": "kill", "job": N}

and answers ``{"ready": true}`` once, then ``{"job": N, "pid": P}`` and ``{"job": N, "exit": CODE}``
(``CODE``: the exit status, or minus the signal number, as ``subprocess`` reports it). It never
runs student code: each job is a fresh fork, so no state passes from one student to the next,
and starting a sandbox costs a fork instead of a Python start and a NumPy import.

**Job** (:func:`_run_job`). Under bubblewrap a forked job gives itself, before any student code
runs, what a bubblewrap of its own would give (see :mod:`grader.sandbox.isolation`): new mount,
PID, network, IPC and UTS namespaces; a private ``/tmp``; a private writable copy of the
submission on a tmpfs sized to the copy plus ``file_size_mb``; the template's folder hidden; a
reaper as PID 1 whose death ends every process of the job; then the worker drops to the job's own
unprivileged uid, sets the rlimits and serves. Without bubblewrap (the fallback) the job is a
plain child in a session of its own, with the rlimits.

**Worker** (:func:`serve`). Sends ``{"ready": true, "id": 0}``, then answers requests
``{"op": "load"}``, ``{"op": "signature", "name": F}``, ``{"op": "value", "name": V}``,
``{"op": "call", "name": F, "args": [...], "kwargs": {...}}``, each with an ``id`` that the reply
repeats. Replies: ``{"ok": true, "value": ...}`` or ``{"ok": false, "error": {"type", "message",
"traceback", "bases", "errno"}}`` (``bases``: the exception's class names, most derived first).
Student code runs in this process and can forge any reply; the judge treats every byte as hostile.
"""
from __future__ import annotations

import contextlib
import io
import json
import os
import sys


def _load_wire():
    """The wire format: the package's module in the judge, the copy next to this file in a sandbox."""
    try:
        from . import wire  # noqa: PLC0415
        return wire
    except ImportError:
        import importlib.util

        path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "wire.py")
        spec = importlib.util.spec_from_file_location("grader_sandbox_wire", path)
        module = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = module  # a submission's own wire.py must not be confused with it
        spec.loader.exec_module(module)
        return module


wire = _load_wire()


# --------------------------------------------------------------------------- worker


class _BlockImports:
    """A meta-path finder that refuses the exercise's forbidden packages (e.g. torch)."""

    def __init__(self, names):
        self.names = set(names)

    def find_spec(self, fullname, path=None, target=None):
        if fullname.split(".")[0] in self.names:
            raise ImportError(f"importing {fullname!r} is not allowed in this exercise")
        return None


#: Open files a sandbox process may hold (Python, NumPy and torch need a few dozen).
OPEN_FILES = 256


def _apply_limits(cfg: dict) -> None:
    """The rlimits of ``cfg``, then the job's own unprivileged uid (when running as root)."""
    import resource

    mib = 1024 * 1024
    limits = [
        (resource.RLIMIT_CPU, cfg["cpu"]),
        (resource.RLIMIT_AS, cfg["memory_mb"] * mib),
        (resource.RLIMIT_FSIZE, cfg["file_size_mb"] * mib),
        (resource.RLIMIT_NPROC, cfg["processes"]),
        (resource.RLIMIT_CORE, 0),
        # Open files: kernel memory held in socket and pipe buffers grows with them, outside RLIMIT_AS.
        (resource.RLIMIT_NOFILE, OPEN_FILES),
    ]
    for which, value in limits:
        with contextlib.suppress(ValueError, OSError):  # a limit the OS will not lower (e.g. RLIMIT_AS on macOS): reported by the judge
            resource.setrlimit(which, (value, value))
    uid = cfg.get("uid")
    if uid is not None and os.getuid() == 0:
        os.setgroups([])
        os.setresgid(uid, uid, uid)
        os.setresuid(uid, uid, uid)
    if cfg.get("isolate"):
        _fresh_keyrings()
        _filter_system_calls()


#: Per machine (``os.uname().machine``): the audit architecture seccomp reports, and the numbers of the
#: system calls :func:`_filter_system_calls` refuses (linux/audit.h, asm/unistd.h).
SYSCALLS = {
    "x86_64": (0xC000003E, {"add_key": 248, "request_key": 249, "keyctl": 250, "memfd_create": 319,
                            "unshare": 272, "clone": 56, "clone3": 435}),
    "aarch64": (0xC00000B7, {"add_key": 217, "request_key": 218, "keyctl": 219, "memfd_create": 279,
                             "unshare": 97, "clone": 220, "clone3": 435}),
}
CLONE_NEWUSER_FLAG = 0x10000000


def _filter_system_calls() -> None:
    """A seccomp filter on the worker and everything it starts (the student's code), refusing what a
    NumPy function never needs and what reaches past the job's namespaces and limits:

    - ``add_key``, ``request_key``, ``keyctl``: the kernel's keyrings belong to the uid, not to a
      namespace, and a student can lock its user keyring against clearing to leave a note for the
      next job of its uid;
    - ``memfd_create``: memory in a memfd that is not mapped escapes ``RLIMIT_AS`` (2 GiB held with a
      1 GiB limit);
    - a new user namespace (``unshare`` or ``clone`` with ``CLONE_NEWUSER``): inside one, a student
      could mount a tmpfs of any size, and it is a large surface of the kernel;
    - ``clone3`` answers ENOSYS (its flags cannot be inspected; glibc falls back to ``clone``), and
      any call through another architecture's entry (x32, i386) is refused.

    Refused calls fail with EPERM, so the student's code sees an ordinary error. The filter is built
    by hand (classic BPF, ``linux/filter.h`` and ``linux/seccomp.h``); on a machine not in
    :data:`SYSCALLS` nothing is filtered (the keyrings are still emptied, see :func:`_fresh_keyrings`).
    """
    import ctypes
    import errno

    machine = SYSCALLS.get(os.uname().machine)
    if machine is None:
        return
    arch, nr = machine
    load, jeq, jset, ret = 0x20, 0x15, 0x45, 0x06  # BPF_LD|W|ABS, BPF_JMP|JEQ|K, BPF_JMP|JSET|K, BPF_RET|K
    allow, deny, enosys = 0x7FFF0000, 0x00050000 | errno.EPERM, 0x00050000 | errno.ENOSYS
    refused = [nr["add_key"], nr["request_key"], nr["keyctl"], nr["memfd_create"]]
    # (code, jump if true, jump if false, k); jumps count the instructions skipped.
    program = [(load, 0, 0, 4),                          # 0: the architecture
               (jeq, 1, 0, arch),                        # 1: native: go on at 3
               (ret, 0, 0, deny),                        # 2: any other entry
               (load, 0, 0, 0),                          # 3: the call's number
               (jset, 0, 1, 0x40000000),                 # 4: x32 calls on x86_64
               (ret, 0, 0, deny)]                        # 5
    for number in refused:
        program += [(jeq, 0, 1, number), (ret, 0, 0, deny)]
    program += [(jeq, 0, 1, nr["clone3"]), (ret, 0, 0, enosys),
                (jeq, 1, 0, nr["unshare"]), (jeq, 0, 3, nr["clone"]),  # both: flags in the first argument
                (load, 0, 0, 16),                        # args[0], low 32 bits
                (jset, 0, 1, CLONE_NEWUSER_FLAG), (ret, 0, 0, deny),
                (ret, 0, 0, allow)]

    class Instruction(ctypes.Structure):
        _fields_ = [("code", ctypes.c_uint16), ("jt", ctypes.c_uint8), ("jf", ctypes.c_uint8), ("k", ctypes.c_uint32)]

    class Program(ctypes.Structure):
        _fields_ = [("len", ctypes.c_uint16), ("filter", ctypes.POINTER(Instruction))]

    instructions = (Instruction * len(program))(*[Instruction(*i) for i in program])
    fprog = Program(len(program), instructions)
    libc = _libc()
    PR_SET_NO_NEW_PRIVS, PR_SET_SECCOMP, SECCOMP_MODE_FILTER = 38, 22, 2
    _check(libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), "prctl(NO_NEW_PRIVS)")
    _check(libc.prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.byref(fprog), 0, 0), "prctl(SECCOMP)")


#: The keyctl system call's number, by machine (asm/unistd.h); keyutils' wrapper is not in libc.
KEYCTL = {"x86_64": 250, "aarch64": 219, "arm64": 219}
KEYCTL_JOIN_SESSION_KEYRING, KEYCTL_CLEAR, KEYCTL_GET_PERSISTENT = 1, 7, 22
KEY_SPEC_SESSION_KEYRING, KEY_SPEC_USER_KEYRING, KEY_SPEC_USER_SESSION_KEYRING = -3, -4, -5


def _fresh_keyrings() -> None:
    """Leave nothing in the kernel's keyrings for this job to find or to pass on: join a new, empty
    session keyring (not the grader's), and empty the uid's user, user-session and persistent
    keyrings, which belong to the uid, not to any namespace, and outlive every process (an earlier
    job of this uid could have left a note there). Best effort on a machine not listed in KEYCTL."""
    import ctypes

    number = KEYCTL.get(os.uname().machine)
    if number is None:
        return
    libc = _libc()
    libc.syscall.restype = ctypes.c_long
    keyctl = lambda *args: libc.syscall(number, *(ctypes.c_long(a) for a in args))  # noqa: E731
    keyctl(KEYCTL_JOIN_SESSION_KEYRING, 0)
    keyctl(KEYCTL_CLEAR, KEY_SPEC_USER_KEYRING)
    keyctl(KEYCTL_CLEAR, KEY_SPEC_USER_SESSION_KEYRING)
    persistent = keyctl(KEYCTL_GET_PERSISTENT, -1, KEY_SPEC_SESSION_KEYRING)
    if persistent > 0:
        keyctl(KEYCTL_CLEAR, persistent)


#: Student frames kept in an error's traceback (the last ones: where it failed).
TRACEBACK_FRAMES = 8


def _error(exc: BaseException, submission_dir: str) -> dict:
    """The error reply for ``exc``: type, message, the student's last frames, base classes.

    Never raises, and stays fast on a RecursionError a million frames deep (only the last
    few of the student's frames are formatted).
    """
    import collections
    import traceback

    try:
        message = str(exc)[:2000]
    except BaseException:  # noqa: BLE001 - a student's exception whose __str__ fails
        message = "(the exception's message could not be shown)"
    out = {"type": type(exc).__name__[:200], "message": message, "traceback": "",
           "bases": [c.__name__ for c in type(exc).__mro__][:12],
           "errno": exc.errno if isinstance(exc, OSError) and isinstance(exc.errno, int) else None}
    # A best effort: the type and message are what matter (a student's exception may break anything).
    with contextlib.suppress(BaseException):
        last = collections.deque(maxlen=TRACEBACK_FRAMES)
        total = 0
        for frame, lineno in traceback.walk_tb(exc.__traceback__):
            if frame.f_code.co_filename.startswith(submission_dir):
                last.append((frame, lineno))
                total += 1
        lines = []
        if total > len(last):
            lines.append(f"[... {total - len(last):,} earlier frames of your code not shown]\n")
        lines += traceback.StackSummary.extract(iter(last), limit=TRACEBACK_FRAMES).format()
        lines.append(f"{out['type']}: {message}\n")
        out["traceback"] = "".join(lines)[-4000:]
    return out


def _handle(message: dict, blobs: list[bytes], state: dict, cfg: dict) -> dict:
    """Run one request; returns the reply (without its id)."""
    import importlib
    import inspect

    op = message.get("op")
    if op == "load":
        state["student"] = state["module"] = importlib.import_module(cfg["module"])
        if cfg.get("harness"):  # the exercise's own code, in front of the student's module
            import importlib.util

            spec = importlib.util.spec_from_file_location("grader_harness", cfg["harness"])
            state["module"] = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(state["module"])
        return {"ok": True, "value": sorted(n for n, v in vars(state["module"]).items()
                                            if callable(v) and not n.startswith("_"))}
    if op == "value":
        name = str(message["name"])
        if name.startswith("_"):
            raise AttributeError(f"{name} is private")
        return {"ok": True, "value": getattr(state["student"], name)}
    fn = getattr(state["module"], message["name"])
    if op == "signature":
        return {"ok": True, "value": [[p.name, p.kind.name, p.default is not inspect.Parameter.empty]
                                      for p in inspect.signature(fn).parameters.values()]}
    if op == "call":
        args = wire.decode({"__list__": message["args"]}, blobs)
        kwargs = wire.decode({"__dict__": message["kwargs"]}, blobs)
        return {"ok": True, "value": fn(*args, **kwargs)}
    raise ValueError(f"unknown op {op!r}")


def serve(cfg: dict, proto_in_fd: int, proto_out_fd: int, output_fd: int) -> int:
    """The worker: set up the process for student code, say ready, answer requests until EOF.

    ``output_fd`` becomes fds 1 and 2 (the student's print() and any write to them go to the
    judge's capped output pipe); the protocol fds are private and closed in any child the
    student forks. Returns the exit status.
    """
    proto_in = os.fdopen(proto_in_fd, "rb", buffering=0)
    proto_out = os.fdopen(proto_out_fd, "wb")
    # A child the student forks must never speak the protocol (it would steal requests or send
    # stray replies); the fds are also closed on exec (os.pipe's fds are not inheritable).
    os.register_at_fork(after_in_child=lambda: (proto_in.close(), proto_out.close()))
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.dup2(output_fd, 1)
    os.dup2(output_fd, 2)
    if output_fd > 2:
        os.close(output_fd)
    sys.stdout = io.TextIOWrapper(os.fdopen(1, "wb", closefd=False), errors="replace", line_buffering=True)
    sys.stderr = io.TextIOWrapper(os.fdopen(2, "wb", closefd=False), errors="backslashreplace",
                                  line_buffering=True)
    _apply_limits(cfg)
    sys.dont_write_bytecode = True  # python -I ignores PYTHONDONTWRITEBYTECODE
    import faulthandler

    for name in cfg.get("preload", []):  # e.g. torch for exercise 4: not part of the student's import time
        __import__(name)

    faulthandler.enable(file=sys.stderr)  # a segfault (deep recursion) prints where it happened
    sys.meta_path.insert(0, _BlockImports(cfg.get("forbidden_imports", [])))
    submission_dir = cfg["submission_dir"]
    os.chdir(submission_dir)
    sys.path.append(submission_dir)  # appended: a submission's numpy.py cannot shadow numpy
    worker_pid = os.getpid()
    state: dict = {"module": None}
    wire.write_frame(proto_out, {"ready": True, "id": 0})  # the judge times the import from here
    while True:
        request = wire.read_frame(proto_in)
        if request is None:
            return 0
        message, blobs = request
        try:
            reply = _handle(message, blobs, state, cfg)
        except BaseException as exc:  # noqa: BLE001 - student code may raise anything, even SystemExit
            reply = {"ok": False, "error": _error(exc, submission_dir)}
        else:
            try:
                out_blobs: list[bytes] = []
                reply["value"] = wire.encode(reply["value"], out_blobs)
                data = wire.frame_bytes(dict(reply, id=message.get("id")), out_blobs)
            except BaseException as exc:  # noqa: BLE001 - e.g. an int of 10**5 digits, a list nested 10**4 deep
                err = _error(exc, submission_dir)
                reply = {"ok": False, "error": dict(err, type="UnsendableValue",
                                                    message=f"{err['type']}: {err['message']}"[:2000])}
        if not reply["ok"]:
            data = wire.frame_bytes(dict(reply, id=message.get("id")))
        if os.getpid() != worker_pid:
            # A child forked by the student's code got back here: it must not reply (its
            # protocol files are closed) nor read the next request. It just ends.
            _flush_quietly()
            os._exit(0 if reply.get("ok") else 1)
        _flush_quietly()
        proto_out.write(data)
        proto_out.flush()


def _flush_quietly() -> None:
    """Flush the student's stdout; a replaced or broken sys.stdout is the student's business."""
    with contextlib.suppress(BaseException):  # noqa: BLE001
        sys.stdout.flush()


# --------------------------------------------------------------------------- template

CLONE_NEWNS, CLONE_NEWUTS, CLONE_NEWIPC = 0x00020000, 0x04000000, 0x08000000
CLONE_NEWPID, CLONE_NEWNET, CLONE_NEWUSER = 0x20000000, 0x40000000, 0x10000000
MS_RDONLY, MS_NOSUID, MS_NODEV, MS_REMOUNT, MS_BIND, MS_REC, MS_PRIVATE = 1, 2, 4, 32, 4096, 1 << 14, 1 << 18
PR_SET_PDEATHSIG = 1


def _libc():
    import ctypes

    return ctypes.CDLL(None, use_errno=True)


def _check(result: int, what: str) -> None:
    if result != 0:
        import ctypes

        err = ctypes.get_errno()
        raise OSError(err, f"{what}: {os.strerror(err)}")


def _mount(libc, source, target: str, fstype, flags: int, data: str | None = None) -> None:
    _check(libc.mount(source and source.encode(), target.encode(), fstype and fstype.encode(), flags,
                      data and data.encode()), f"mount {target}")


def _exit_code(status: int) -> int:
    """A wait status as an exit status a parent can pass on: the code, or 128 + the signal (as bwrap)."""
    return os.WEXITSTATUS(status) if os.WIFEXITED(status) else 128 + os.WTERMSIG(status)


def _isolate_job(cfg: dict, job_dir: str) -> None:
    """Give this forked job the namespaces and file system of a fresh bubblewrap (see the module
    docstring), ending in the worker process (PID 2 of a new PID namespace). Runs as the
    template's user, before any student code. Parents along the way only wait and pass on the
    worker's exit status; they never return."""
    import shutil
    import signal

    libc = _libc()
    namespaces = CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWIPC | CLONE_NEWUTS
    if libc.unshare(namespaces) != 0:  # not root (bubblewrap started by a user): a user namespace of its own
        uid, gid = os.getuid(), os.getgid()
        _check(libc.unshare(namespaces | CLONE_NEWUSER), "unshare")
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
    worker = os.fork()
    if worker:
        stopped_by = 0
        while True:  # reap orphans; end with the worker
            pid, status = os.waitpid(-1, os.WUNTRACED)
            if pid == worker and os.WIFSTOPPED(status):
                # A stopped worker can never answer: end it now rather than let the call time out.
                stopped_by = os.WSTOPSIG(status)
                os.kill(worker, signal.SIGKILL)
            elif pid == worker:
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
        code = serve(cfg, *fds)
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
        _flush_quietly()
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
    import resource  # noqa: F401
    import shutil  # noqa: F401
    import traceback  # noqa: F401

    import numpy  # noqa: F401

    control = socket.socket(fileno=0)
    wake_r, wake_w = os.pipe()
    os.set_blocking(wake_w, False)
    signal.set_wakeup_fd(wake_w)
    signal.signal(signal.SIGCHLD, lambda *_: None)
    jobs: dict[int, int] = {}  # pid -> job number
    isolated: set[int] = set()  # pids of jobs that isolated themselves (stopped with SIGTERM, see _isolate_job)

    def say(message: dict) -> None:
        with contextlib.suppress(OSError):
            control.send(json.dumps(message).encode())

    say({"ready": True})
    with selectors.DefaultSelector() as sel:
        sel.register(control, selectors.EVENT_READ)
        sel.register(wake_r, selectors.EVENT_READ)
        while True:
            for key, _ in sel.select():
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
                if not data:  # the judge is gone: so are its jobs
                    for pid in jobs:
                        with contextlib.suppress(OSError):
                            os.killpg(pid, signal.SIGKILL)
                    return 0
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
                                os.killpg(pid, signal.SIGKILL)
                else:
                    for fd in fds:
                        os.close(fd)


if __name__ == "__main__":
    sys.exit(template_main(json.loads(sys.argv[1])))
