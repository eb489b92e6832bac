"""Temp folders that hold copies of student work, claimed with a lock for as long as they are used.

A batch killed with SIGKILL cannot clean up: its workers' scratch folders (``grader-worker-*``)
and an unpacked export (``grader-export-*``) stay in the temp folder with copies of submissions.
Each such folder is created under a neutral name, locked (``flock`` on its :data:`LOCK` file,
held by the process that uses it for its whole life, in whatever PID namespace it runs), and
only then renamed to its kind's name; :func:`remove_stale` removes every folder of those names
whose lock can be taken. Without ``fcntl`` (Windows) nothing is locked and nothing is removed.
"""
from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

try:
    import fcntl
except ImportError:  # Windows: no flock
    fcntl = None

#: Name of the lock file inside a claimed folder.
LOCK = ".alive"
#: The kinds of claimed folders (their names are ``grader-KIND-*``).
KINDS = ("worker", "export")


def claim(kind: str) -> tuple[Path, int]:
    """A new temp folder ``grader-KIND-*``, locked. Returns the folder and the lock's descriptor:
    the lock holds until that descriptor is closed or the process ends.

    Raises:
        ValueError: ``kind`` is not one of :data:`KINDS`.
        OSError: the temp folder cannot be written.
    """
    if kind not in KINDS:
        raise ValueError(f"unknown scratch kind {kind!r}; expected one of {KINDS}")
    starting = tempfile.mkdtemp(prefix="grader-starting-")
    fd = os.open(os.path.join(starting, LOCK), os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    if fcntl is not None:
        fcntl.flock(fd, fcntl.LOCK_EX)
    folder = starting.replace("grader-starting-", f"grader-{kind}-")
    os.rename(starting, folder)  # only ever seen under this name with its lock held
    return Path(folder), fd


def remove_stale() -> None:
    """Remove every claimed folder (:data:`KINDS`) in the temp folder whose lock is free: its process
    is gone."""
    if fcntl is None:
        return
    for kind in KINDS:
        for folder in Path(tempfile.gettempdir()).glob(f"grader-{kind}-*"):
            try:
                fd = os.open(folder / LOCK, os.O_RDWR | os.O_CLOEXEC)
            except OSError:
                continue
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                continue  # its process is alive
            finally:
                os.close(fd)
            shutil.rmtree(folder, ignore_errors=True)
