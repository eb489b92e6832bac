"""How student code is isolated: every rule in one place (DESIGN.md, "Isolation").

With bubblewrap (Debian's ``bubblewrap``, the sandbox Flatpak uses), in two layers:

1. The template process (:mod:`grader.sandbox.template`) runs under the bubblewrap command of
   :func:`template_command`: new PID, network, IPC, UTS and cgroup namespaces, no new privileges,
   a read-only view of the system folders and the Python installation only, forbidden packages
   (e.g. torch in exercise 3) covered by empty read-only folders, its own folder (the worker's
   code and the jobs' copies) read-only at ``/grader``; it dies with the judge.
2. Each job it forks (:func:`grader.sandbox.forking._isolate_job`), before any student code runs:
   every descriptor inherited from the template closed but its own three pipes; new mount, PID,
   network, IPC and UTS namespaces of its own (so nothing of one student's processes, sockets,
   shared memory or files is there for the next); a private 64 MiB ``/tmp``;
   a private, writable copy of the submission at ``/sandbox/submission`` on a tmpfs sized to the
   copy plus ``file_size_mb`` (so writes are capped in total); ``/grader`` covered; a reaper as PID 1
   whose end (the template kills it on a timeout) ends every process of the job; then the worker
   takes the job's own unprivileged uid (:func:`grader.sandbox.template.claim_uid`, so
   ``RLIMIT_NPROC`` binds per sandbox) and the rlimits of ``exercise.toml`` (CPU, address space,
   file size, processes, no core files); at most 256 open files; and a seccomp filter refusing the
   kernel's keyrings (they belong to the uid, not to a namespace, and outlive the job),
   ``memfd_create`` (memory outside ``RLIMIT_AS``), new user namespaces and other architectures'
   system-call entries (:func:`grader.sandbox.worker._filter_system_calls`). A job the template
   cannot end within ``STOP_TIMEOUT`` ends the template.

Without bubblewrap (e.g. macOS) a job is a plain child process in its own session with the same
rlimits and no file-system or network isolation, running as the grader's user; every report
says so, ``grade`` says so on the terminal and ``--require-isolation`` refuses to run. When that
user is root (Gradescope's container, where bubblewrap cannot make namespaces) and other users may
run this Python (:func:`others_can_run_python`), the job takes an unprivileged uid of its own
instead, its copy of the submission its own: it cannot write the judge's results, signal or trace
the judge, or read what root keeps to itself; whatever it leaves running is killed with its uid
when the sandbox closes (:func:`grader.sandbox.template.kill_uid`). Where a
facility is missing the rest still holds: no ``resource`` module, no rlimits (the report says so);
no ``os.killpg``, a stopped job's own process is killed instead of its group; no ``SOCK_SEQPACKET``
(macOS), the template's control socket is a datagram socket. Without ``os.fork`` or
``socket.send_fds`` (Windows) nothing can run: :func:`unsupported_platform` says why.

Either way: a scrubbed environment (:func:`scrubbed_env`), Python in isolated mode without
``site``, the submission's folder appended to ``sys.path`` (it cannot shadow NumPy), and a
wall-clock deadline per call that ends in SIGKILL of the job.
"""
from __future__ import annotations

import functools
import importlib.util
import os
import shutil
import socket
import stat
import subprocess
import sys
from pathlib import Path


def unsupported_platform() -> str:
    """Why no sandbox can start on this platform, in one line for the user ("" when one can).

    The template forks a process per submission and hands it its pipes over a Unix socket, so it
    needs ``os.fork``, ``socket.AF_UNIX`` and ``socket.send_fds`` (Linux, macOS; not Windows).
    """
    missing = [name for name, there in (("os.fork", hasattr(os, "fork")), ("socket.AF_UNIX", hasattr(socket, "AF_UNIX")),
                                        ("socket.send_fds", hasattr(socket, "send_fds"))) if not there]
    if not missing:
        return ""
    return (f"student code cannot be run here: this Python has no {', '.join(missing)} (the sandbox forks a process "
            "per submission, as on Linux and macOS; Windows cannot). On Windows use WSL, e.g. `wsl --install "
            "Ubuntu`, and run the grader inside it.")


def has_rlimits() -> bool:
    """True when this Python has the ``resource`` module (rlimits); the sandbox runs the same Python."""
    return importlib.util.find_spec("resource") is not None


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


@functools.lru_cache(maxsize=1)
def python_roots() -> tuple[str, ...]:
    """Folders the sandbox must see to run this Python with NumPy (looked up once per process)."""
    import numpy

    roots = {sys.prefix, sys.base_prefix, sys.exec_prefix, os.path.dirname(os.path.realpath(sys.executable)),
             str(Path(numpy.__file__).resolve().parent.parent)}
    resolved = sorted({os.path.realpath(r) for r in roots})
    # Drop folders already inside another one.
    return tuple(r for r in resolved if not any(r != o and r.startswith(o.rstrip("/") + "/") for o in resolved))


@functools.lru_cache(maxsize=1)
def others_can_run_python() -> bool:
    """True when a user other than this one can load this Python, its standard library and NumPy: each
    folder from ``/`` down to them lets others in (``/root/.pyenv``, under a ``/root`` of mode 0700,
    does not: an unprivileged uid would fail its first import there)."""
    import numpy

    needed = {os.path.dirname(os.__file__), os.path.dirname(os.path.realpath(sys.executable)),
              str(Path(numpy.__file__).resolve().parent)}
    for folder in needed:
        path = Path(os.path.realpath(folder))
        for part in (path, *path.parents):
            try:
                mode = part.stat().st_mode
            except OSError:
                return False
            if not mode & stat.S_IXOTH:
                return False
    return True


@functools.lru_cache(maxsize=1)
def site_packages() -> list[str]:
    """The site-packages folders this Python's ``site`` module would add (NumPy is in one)."""
    import site

    return [d for d in site.getsitepackages() if os.path.isdir(d)]


@functools.lru_cache(maxsize=8)
def package_dirs(names: tuple[str, ...]) -> tuple[str, ...]:
    """Installed folders of the packages ``names`` (found without importing them; once per process)."""
    import importlib.util

    found = []
    for name in names:
        try:
            spec = importlib.util.find_spec(name)
        except (ImportError, ValueError):
            continue
        for location in (spec.submodule_search_locations or []) if spec else []:
            if os.path.isdir(location):
                found.append(os.path.realpath(location))
    return tuple(found)


def template_command(folder: Path, python: list[str], hidden: tuple[str, ...] = ()) -> list[str]:
    """The bubblewrap command line of a template process (layer 1 in the module docstring):
    ``folder`` is shown read-only at ``/grader``, ``/sandbox`` is an empty mount point for each
    job's own tmpfs, and the ``hidden`` folders are covered by empty read-only folders, so even
    code that removes the import block cannot load a forbidden package."""
    cmd = ["bwrap", "--unshare-pid", "--unshare-net", "--unshare-ipc", "--unshare-uts",
           "--unshare-cgroup-try", "--die-with-parent", "--new-session",
           "--size", str(64 * 1024 * 1024), "--perms", "1777", "--tmpfs", "/tmp", "--proc", "/proc", "--dev", "/dev",
           "--perms", "0755", "--dir", "/sandbox"]
    system = [p for p in ("/usr", "/bin", "/lib", "/lib64", "/lib32", "/etc/alternatives", "/etc/ld.so.cache")
              if os.path.exists(p)]
    made = {"/", "/tmp", "/proc", "/dev", "/sandbox"}
    for src, dst in [(p, p) for p in [*system, *python_roots()]] + [(str(folder), "/grader")]:
        # Create each missing parent world-readable so the unprivileged uid can walk in.
        parts = Path(dst).parts
        for i in range(2, len(parts)):
            parent = str(Path(*parts[:i]))
            if parent not in made and not any(parent == s or parent.startswith(s + "/") for s in system):
                cmd += ["--perms", "0755", "--dir", parent]
                made.add(parent)
        cmd += ["--ro-bind", src, dst]
        made.add(dst)
    for hide in hidden:
        cmd += ["--tmpfs", hide, "--remount-ro", hide]
    return cmd + ["--chdir", "/grader", "--"] + python


def scrubbed_env() -> dict[str, str]:
    """The sandbox's whole environment: no secrets of the grader's, one BLAS thread."""
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
