"""``--isolation container``: the machine itself is a throwaway container for one submission.

Gradescope grades each submission in a container of its own, made from the autograder's image
and discarded afterwards, and bubblewrap usually cannot create namespaces there. In that setting
the plain child process with rlimits (what the grader falls back to without bubblewrap) is
acceptable: there is no other student's work, no gradebook and no instructor's files in reach.
Elsewhere it is not, so the mode is only taken when asked for, and refused where nothing says this
machine is a container (:func:`container_evidence`) unless forced.

Bubblewrap is still used when it works; the result's ``isolation`` then starts with
:data:`CONTAINER` and goes on to say what the sandbox itself was.
"""
from __future__ import annotations

import os
import re
from pathlib import Path

from ..errors import InputError

#: How a result's ``isolation`` starts in this mode.
CONTAINER = "container: each submission runs in its own throwaway container"
#: The file system looked at for signs of a container (tests point it at a fake root).
HOST_ROOT = Path("/")
#: Names of container runtimes in a cgroup path (``/proc/1/cgroup``).
_RUNTIMES = re.compile(r"docker|containerd|kubepods|libpod|lxc|crio|garden")


def container_evidence(root: Path | None = None) -> str:
    """What says this machine is a container, or ``""`` when nothing does.

    Looked at, in order: ``/.dockerenv`` (Docker), ``/run/.containerenv`` (Podman), the ``container``
    environment variable (systemd-nspawn, Podman, LXC), a container runtime in ``/proc/1/cgroup``
    (cgroup v1 paths), and Gradescope's autograder layout (``/autograder`` holding ``source/`` and
    ``submission/``, or ``$AUTOGRADER_ROOT`` where ``run_autograder`` moved it). ``root`` replaces
    ``/`` (default :data:`HOST_ROOT`).
    """
    root = HOST_ROOT if root is None else Path(root)
    if (root / ".dockerenv").exists():
        return "Docker's /.dockerenv"
    if (root / "run" / ".containerenv").exists():
        return "Podman's /run/.containerenv"
    if os.environ.get("container"):
        return f"container={os.environ['container']} in the environment"
    try:
        cgroup = (root / "proc" / "1" / "cgroup").read_text(errors="replace")
    except OSError:
        cgroup = ""
    if _RUNTIMES.search(cgroup):
        return "a container runtime in /proc/1/cgroup"
    for autograder in filter(None, (os.environ.get("AUTOGRADER_ROOT"), root / "autograder")):
        if (Path(autograder) / "source").is_dir() and (Path(autograder) / "submission").is_dir():
            return f"Gradescope's autograder layout at {autograder}"
    return ""


def container_isolation(force: bool = False, root: Path | None = None) -> str:
    """The start of a result's ``isolation`` for ``--isolation container`` (:data:`CONTAINER` and why
    the machine was taken for a container).

    Raises:
        InputError: nothing says this machine is a container and ``force`` is off.
    """
    why = container_evidence(root)
    if not why and not force:
        raise InputError(
            "--isolation container: this machine does not look like a container (no /.dockerenv, "
            "/run/.containerenv, container runtime in /proc/1/cgroup or Gradescope /autograder), so graded "
            "code would run as you with your files and network. Leave out --isolation here, or add "
            "--force-container if each submission really gets a throwaway machine of its own.")
    return (f"{CONTAINER} (seen: {why or 'nothing, forced with --force-container'}), so the plain child process "
            "with rlimits is acceptable")
