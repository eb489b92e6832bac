"""The process that runs student code: it serves the judge's calls. Standard library and NumPy only.

This file and ``wire.py`` are copied into a folder the sandbox sees (with ``forking.py``, the
template that forks it); they must stay importable without the rest of the package.

:func:`serve` sends ``{"ready": true, "id": 0}``, then answers requests ``{"op": "load"}``,
``{"op": "signature", "name": F}``, ``{"op": "value", "name": V}``,
``{"op": "call", "name": F, "args": [...], "kwargs": {...}}``, each with an ``id`` that the reply
repeats. Replies: ``{"ok": true, "value": ...}`` or ``{"ok": false, "error": {"type", "message",
"traceback", "bases", "errno"}}`` (``bases``: the exception's class names, most derived first).
Before the first, it sets the limits of ``exercise.toml``, takes the job's own uid and (under
bubblewrap) a seccomp filter. Student code runs in this process and can forge any reply; the judge
treats every byte as hostile.
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
    """The rlimits of ``cfg`` (none where the judge found no ``resource`` module: ``cfg["rlimits"]``
    false, and the report says so), then the job's own unprivileged uid (when running as root)."""
    try:
        import resource
    except ImportError:
        resource = None
    mib = 1024 * 1024
    limits = [] if resource is None or not cfg.get("rlimits", True) else [
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
    # Where memory runs out for all (Gradescope's container: 768 MB for the judge and this), the kernel
    # kills this process first, never the judge, which then reports the crash.
    with contextlib.suppress(OSError), open("/proc/self/oom_score_adj", "w") as adj:
        adj.write("1000")
    uid = cfg.get("uid")
    if uid is not None and os.getuid() == 0:
        os.setgroups([])
        os.setresgid(uid, uid, uid)
        os.setresuid(uid, uid, uid)
    if cfg.get("isolate"):
        _filter_system_calls()


#: Per machine (``os.uname().machine``): the audit architecture seccomp reports, and the numbers of the
#: system calls :func:`_filter_system_calls` refuses (linux/audit.h, asm/unistd.h).
SYSCALLS = {
    "x86_64": (0xC000003E, {"add_key": 248, "request_key": 249, "keyctl": 250, "memfd_create": 319,
                            "unshare": 272, "clone": 56, "clone3": 435}),
    "aarch64": (0xC00000B7, {"add_key": 217, "request_key": 218, "keyctl": 219, "memfd_create": 279,
                             "unshare": 97, "clone": 220, "clone3": 435}),
}
#: Namespace flags of clone and unshare (linux/sched.h).
CLONE_NEWNS, CLONE_NEWUTS, CLONE_NEWIPC = 0x00020000, 0x04000000, 0x08000000
CLONE_NEWUSER, CLONE_NEWPID, CLONE_NEWNET = 0x10000000, 0x20000000, 0x40000000


def _filter_system_calls() -> None:
    """A seccomp filter on the worker and everything it starts (the student's code), refusing what a
    NumPy function never needs and what reaches past the job's namespaces and limits:

    - ``add_key``, ``request_key``, ``keyctl``: the kernel's keyrings belong to the uid, not to a
      namespace, and outlive the job: a student could leave a note for the next job of its uid (even
      in a keyring it locked against clearing), or reach the grader's session keyring;
    - ``memfd_create``: memory in a memfd that is not mapped escapes ``RLIMIT_AS`` (2 GiB held with a
      1 GiB limit);
    - a new user namespace (``unshare`` or ``clone`` with ``CLONE_NEWUSER``): inside one, a student
      could mount a tmpfs of any size, and it is a large surface of the kernel;
    - ``clone3`` answers ENOSYS (its flags cannot be inspected; glibc falls back to ``clone``), and
      any call through another architecture's entry (x32, i386) is refused.

    Refused calls fail with EPERM, so the student's code sees an ordinary error. The filter is built
    by hand (classic BPF, ``linux/filter.h`` and ``linux/seccomp.h``); on a machine not in
    :data:`SYSCALLS` nothing is filtered.
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
                (jset, 0, 1, CLONE_NEWUSER), (ret, 0, 0, deny),
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


def _libc():
    import ctypes

    return ctypes.CDLL(None, use_errno=True)


def _check(result: int, what: str) -> None:
    if result != 0:
        import ctypes

        err = ctypes.get_errno()
        raise OSError(err, f"{what}: {os.strerror(err)}")
