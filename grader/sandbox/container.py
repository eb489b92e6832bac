"""``--isolation container``: this machine is Gradescope's throwaway container for one submission.

Gradescope grades each submission in a container of its own, made from the autograder's image and
discarded afterwards, and bubblewrap usually cannot create namespaces there. In that setting the
plain child process with rlimits (what the grader falls back to without bubblewrap) is acceptable:
there is no other student's work, no gradebook and no instructor's files in reach. As the grader is
root there, that process runs as an unprivileged uid of its own and is killed with everything it
started when its sandbox closes (:mod:`grader.sandbox.isolation`), and ``run_autograder`` keeps the
hidden tests, Gradescope's metadata and the results folder from that uid.

Being *a* container is not enough: a developer's Docker or Podman container (this project's own
machines are some) is long-lived and holds the course, solutions included. So the mode is only taken
where bubblewrap does not work when the machine is Gradescope's autograder (:func:`container_evidence`),
or when forced; where bubblewrap works it is used as always, and the mode changes nothing.
"""
from __future__ import annotations

import os
from pathlib import Path

from ..errors import InputError
from .isolation import bubblewrap_works, package_dirs

#: How a result's ``isolation`` starts in this mode.
CONTAINER = "container: each submission runs in its own throwaway container"
#: The file system looked at for Gradescope's autograder (tests point it at a fake root).
HOST_ROOT = Path("/")
#: What Gradescope's harness lays out in ``/autograder`` before ``run_autograder`` runs (autograder docs,
#: "Autograder Specifications": the script copied there at image build, the zip in source/, the
#: student's files in submission/).
GRADESCOPE = ("autograder/run_autograder", "autograder/source", "autograder/submission")


def container_evidence(root: Path | None = None) -> str:
    """Where Gradescope's autograder layout (:data:`GRADESCOPE`) is, or ``""`` when it is not here.
    ``root`` replaces ``/`` (default :data:`HOST_ROOT`); no environment variable can stand in for it."""
    root = HOST_ROOT if root is None else Path(root)
    run, source, submission = (root / part for part in GRADESCOPE)
    if run.is_file() and source.is_dir() and submission.is_dir():
        return f"Gradescope's autograder at {root / 'autograder'}"
    return ""


def container_isolation(force: bool = False, root: Path | None = None, bubblewrap: bool | None = None) -> str:
    """The start of a result's ``isolation`` for ``--isolation container``: ``""`` where bubblewrap works
    (``bubblewrap``; None: :func:`~grader.sandbox.isolation.bubblewrap_works`), so nothing changes; else
    :data:`CONTAINER` and why the machine was taken for Gradescope's container.

    Raises:
        InputError: bubblewrap does not work, this is not Gradescope's autograder, and ``force`` is off.
    """
    if bubblewrap_works() if bubblewrap is None else bubblewrap:
        return ""
    why = container_evidence(root)
    if not why and not force:
        raise InputError(
            "--isolation container: bubblewrap does not work here and this is not Gradescope's autograder (no "
            "/autograder/run_autograder, source/ and submission/), so graded code would run with your files and "
            "network in reach (being in a Docker container is not enough). Install bubblewrap, leave out "
            "--isolation, or add --force-container if each submission really gets a throwaway machine of its own.")
    return (f"{CONTAINER} (seen: {why or 'nothing, forced with --force-container'}), so the plain child process "
            "with rlimits is acceptable")


def withhold_packages(names: tuple[str, ...]) -> list[str]:
    """Make the installed folders of the packages ``names`` (an exercise's forbidden imports) mode 0700,
    so a sandbox's unprivileged user cannot load them even past its import block, while the judge
    (root) still does. For Gradescope's image only (``setup.sh``): elsewhere it would change an install
    that others use. Returns the folders changed; a package not installed is skipped."""
    folders = list(package_dirs(tuple(names)))
    for folder in folders:
        os.chmod(folder, 0o700)
    return folders
