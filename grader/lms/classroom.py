"""GitHub Classroom: the students' repositories in, the student repository's autograding workflow out.

**In.** ``gh classroom clone student-repos`` (GitHub's ``gh-classroom`` extension of the ``gh`` CLI,
archived since GitHub retired Classroom on 28 August 2026; the repositories remain and are cloned
the same way by hand) cloned every student's repository of an assignment into
``SLUG-submissions/``, one folder per repository, named as the repository (its source,
``cmd/gh-classroom/clone/student-repos``): GitHub Classroom names a student's repository
``SLUG-USERNAME`` (the assignment's slug, then the student's GitHub username; a group
assignment's, the team's name)::

    transformer-lab-submissions/
        transformer-lab-ada-l/.git, exercise3/attention.py, ...
        transformer-lab-bob/...

The student id is the username (``ada-l``, ``bob``), the rest of the folder name after the
assignment's prefix ``SLUG-``. That prefix is taken from the folder's name when it is
``SLUG-submissions`` (as ``gh classroom clone`` names it) and every repository starts with
``SLUG-``; otherwise it is the longest prefix ending in ``-`` that all repositories share (two
or more of them: one repository alone, in a folder named otherwise, has no telling prefix).
The layout is detected only when every folder in it (hidden ones and ``__MACOSX`` aside) is a git
repository (holds ``.git``) and such a prefix exists, so an ordinary folder per student
(``ada/``, ``bob/``) never reads as GitHub Classroom; files beside the repositories (a roster,
notes) are ignored, and named. A repository's ``.git`` is never copied
into the sandbox (:func:`grader.sandbox.session._not_copied`), and the student's files are found
inside it (``exercise3/attention.py``) by :func:`grader.lms.unpack.locate`.

**Out.** :func:`workflow` writes the student repository's ``.github/workflows/classroom.yml``
(the repository being a student bundle, ``grader release OUT --exercise EXERCISE``): install the
grader, run each public check as a step of GitHub Classroom's autograding
(``classroom-resources/autograding-command-grader@v1``, one per test function, with its points),
report them (``classroom-resources/autograding-grading-reporter@v1``), and keep the whole
``grade EXERCISE --json`` output and report as an artifact. Hidden checks never enter a student
repository: final grades come from ``grader batch`` over the clones.
"""
from __future__ import annotations

import os
import re
import shlex
import tomllib
from dataclasses import dataclass
from pathlib import Path

import yaml

from ..errors import InputError
from ..exercises import Exercise, SpecError
from . import Submission
from .unpack import JUNK

#: What ``gh classroom clone student-repos`` appends to the assignment's slug for its folder.
FOLDER_SUFFIX = "-submissions"


def _entries(folder: Path) -> list[Path]:
    return sorted(e for e in Path(folder).iterdir() if not e.name.startswith(".") and not JUNK.search(e.name))


def _folder_slug(folder: Path, names: list[str]) -> str:
    """``SLUG-`` from a folder named ``SLUG-submissions`` when every one of ``names`` starts with it
    (leaving a non-empty username), else ``""``."""
    name = Path(folder).resolve().name
    slug = name[: -len(FOLDER_SUFFIX)] + "-" if name.endswith(FOLDER_SUFFIX) and len(name) > len(FOLDER_SUFFIX) else ""
    return slug if slug and all(n.startswith(slug) and len(n) > len(slug) for n in names) else ""


def prefix(folder: Path, names: list[str]) -> str:
    """The assignment prefix ``SLUG-`` that every one of ``names`` (repository folder names) starts with,
    each leaving a non-empty username; ``""`` when there is none (rule in the module's docstring)."""
    if slug := _folder_slug(folder, names):
        return slug
    if len(names) < 2:
        return ""
    shared = os.path.commonprefix(names)
    return shared[: shared.rfind("-") + 1]


def detect(folder: Path) -> str:
    """Why ``folder`` holds GitHub Classroom clones (every folder in it a git repository, a shared
    ``SLUG-`` prefix), or ``""``. Files beside the repositories (notes, a roster) are named as ignored;
    a prefix not read from the folder's name is said to be a guess (usernames can share a start:
    ``lab-ada-l`` and ``lab-ada-m`` give ``lab-ada-``), with how to settle it."""
    entries = _entries(folder)
    repos = [e for e in entries if e.is_dir()]
    if not repos or not all((e / ".git").exists() for e in repos):
        return ""
    names = [e.name for e in repos]
    shared = prefix(folder, names)
    if not shared:
        return ""
    why = f"GitHub Classroom clones: {len(repos)} git repositories named {shared}USERNAME"
    if not _folder_slug(folder, names):
        why += (f" ({shared} is the start all their names share: if the assignment's slug is shorter, name the "
                f"folder SLUG{FOLDER_SUFFIX}; if they are not Classroom clones, --layout folders)")
    loose = [e.name for e in entries if not e.is_dir()]
    if loose:
        why += (f"; {len(loose)} file{'s' if len(loose) > 1 else ''} beside them ignored "
                f"({', '.join(loose[:3])}{', ...' if len(loose) > 3 else ''})")
    return why


def read(folder: Path) -> list[Submission]:
    """One :class:`~grader.lms.Submission` per repository folder of ``folder``: id and ``user_id`` the
    GitHub username (the folder's name after the assignment's prefix, or all of it when there is no
    prefix), the whole repository as its source. Files at the top of ``folder`` are ignored."""
    repos = [e for e in _entries(folder) if e.is_dir()]
    shared = prefix(folder, [e.name for e in repos])
    found = []
    for repo in repos:
        username = repo.name[len(shared):]
        found.append(Submission(username, repo, user_id=username, layout="classroom", entries=(repo.name + "/",)))
    return found


# ------------------------------------------------------------------------------ the workflow
@dataclass(frozen=True)
class PublicCheck:
    """A test function of the exercise's public tests, as one autograding step.

    Attributes:
        name: the test function (what ``grade EXERCISE --check NAME`` takes; all its items run).
        description: its docstring's first sentence, what the student sees.
        points: the points of all its items.
    """

    name: str
    description: str
    points: float


def public_checks(exercise: Exercise) -> list[PublicCheck]:
    """The checks in ``exercises/NAME/tests/public``, in collection order, one per test function,
    read from their ``check`` markers by collecting them with pytest (nothing is run).

    Raises:
        SpecError: the public tests do not load, or hold no check.
    """
    from ..judge import collect_items
    from ..plugin import _first_paragraph

    public = exercise.root / "tests" / "public"
    checks: dict[str, PublicCheck] = {}
    for item in collect_items(exercise, [public]):
        marker = item.get_closest_marker("check")
        points = float(marker.kwargs.get("points", 1)) if marker else 1.0
        name = item.originalname
        before = checks.get(name)
        checks[name] = PublicCheck(name, _first_paragraph(item.function.__doc__) or name,
                                   points + (before.points if before else 0.0))
    if not checks:
        raise SpecError(f"{exercise.name} has no public check in {public}")
    return list(checks.values())


def scale(checks: list[PublicCheck]) -> int:
    """The smallest whole factor (at most 100) that makes every check's points a whole number.

    Raises:
        SpecError: none does (points such as 1/3).
    """
    for factor in range(1, 101):
        if all(abs(c.points * factor - round(c.points * factor)) < 1e-9 for c in checks):
            return factor
    raise SpecError("the public checks' points cannot be made whole numbers (GitHub Classroom counts whole points); "
                    "give them points in halves, tenths or hundredths")


def step_id(check: str) -> str:
    """A workflow step id for ``check`` (letters, digits, ``_`` and ``-``; GitHub's rule for ids)."""
    return re.sub(r"[^A-Za-z0-9_-]", "-", check)


#: Where pip finds the CPU build of torch (as README's set-up installs it).
TORCH_CPU_INDEX = "https://download.pytorch.org/whl/cpu"


def bundle_torch(folder: Path, exercise: Exercise) -> str:
    """The torch requirement (``torch==2.13.0``) of the student bundle at ``folder``, from its
    ``pyproject.toml`` (what the workflow's ``pip install -e .`` reads); ``""`` when it needs no torch.

    Raises:
        InputError: ``folder`` is not a student bundle of ``exercise`` (no ``pyproject.toml``, no
            ``EXERCISE/`` work folder or ``exercises/EXERCISE/``), or holds ``solutions/`` or hidden
            tests (the course's own repository: a template made from it gives them to every student).
    """
    folder = Path(folder)
    name = exercise.name
    secret = [p for p in [folder / "solutions", *folder.glob("exercises/*/tests/hidden")] if p.exists()]
    if secret:
        raise InputError(f"{folder} holds {secret[0].relative_to(folder).as_posix()}/: it is the course's repository, "
                         "not a student bundle, and every student would get it; write the workflow into "
                         f"`grader release REPO --exercise {name}`'s REPO instead")
    missing = [p for p in ("pyproject.toml", f"{name}/", f"exercises/{name}/exercise.toml")
               if not (folder / p.rstrip("/")).exists()]
    if missing:
        raise InputError(f"{folder} is not a student bundle of {name} (no {', '.join(missing)}); make it with "
                         f"`grader release {folder} --exercise {name}`, then write the workflow into it")
    with open(folder / "pyproject.toml", "rb") as fh:
        requirements = tomllib.load(fh).get("project", {}).get("dependencies", [])
    return next((r.split(";")[0].replace(" ", "") for r in requirements
                 if re.match(r"torch(?![A-Za-z0-9_.-])", r.strip())), "")


class _Block(str):
    """A string written as a YAML literal block (``|``)."""


yaml.SafeDumper.add_representer(_Block, lambda dumper, text: dumper.represent_scalar(
    "tag:yaml.org,2002:str", str(text), style="|"))


def workflow(exercise: Exercise, checks: list[PublicCheck], *, timeout_minutes: float = 10,
             python: str = "3.11", torch: str = "") -> str:
    """The text of ``.github/workflows/classroom.yml`` for a student repository of ``exercise``.

    Follows the workflow GitHub Classroom itself writes (docs of ``classroom-resources/
    autograding-grading-reporter``): named ``Autograding Tests``, one job ``run-autograding-tests``;
    each check is an ``autograding-command-grader`` step (``command`` passes when it exits 0; its
    ``max-score`` is read as a whole number, so points are multiplied by :func:`scale` when some are
    fractions, and the header says so) whose ``result`` output the reporter reads from
    ``STEPID_RESULTS`` (upper case) in its env, listed in its ``runners``.

    Args:
        checks: the steps (:func:`public_checks`).
        timeout_minutes: each step's ``timeout`` (the command grader's unit).
        python: the Python version ``actions/setup-python`` installs.
        torch: the bundle's torch requirement (:func:`bundle_torch`), installed alone from PyTorch's
            CPU index before the grader, as README's set-up does (with ``--extra-index-url`` pip
            takes PyPI's CUDA build, several GB, whenever that index does not answer); ``""``: none.
    """
    name = exercise.name
    factor = scale(checks)
    graded = [{
        "name": check.description,
        "id": step_id(check.name),
        "uses": "classroom-resources/autograding-command-grader@v1",
        "with": {"test-name": check.description, "command": f"grade {name} --check {shlex.quote(check.name)}",
                 "timeout": int(timeout_minutes) if timeout_minutes == int(timeout_minutes) else timeout_minutes,
                 "max-score": round(check.points * factor)},
    } for check in checks]
    install = [f"python -m pip install --no-deps {shlex.quote(torch)} --index-url {TORCH_CPU_INDEX}"] if torch else []
    steps = [
        {"name": "Check out the repository", "uses": "actions/checkout@v7"},
        {"uses": "actions/setup-python@v7", "with": {"python-version": python}},
        {"name": "Install the grader (CPU build of torch)" if torch else "Install the grader",
         "run": _Block("\n".join([*install, "python -m pip install -e ."]) + "\n")},
        {"name": f"Grade {name} on every public check", "continue-on-error": True,
         "run": f"grade {name} --json > grade.json"},
        {"name": "Keep the grade and its report", "if": "always()", "uses": "actions/upload-artifact@v7",
         "with": {"name": f"grade-{name}", "path": _Block(f"grade.json\nreports/{name}.html\n")}},
        *graded,
        {"name": "Autograding Reporter", "uses": "classroom-resources/autograding-grading-reporter@v1",
         "env": {f"{step['id'].upper()}_RESULTS": f"${{{{steps.{step['id']}.outputs.result}}}}" for step in graded},
         "with": {"runners": ",".join(step["id"] for step in graded)}},
    ]
    document = {
        "name": "Autograding Tests",
        "on": ["push", "repository_dispatch"],
        "permissions": {"checks": "write", "actions": "read", "contents": "read"},
        "jobs": {"run-autograding-tests": {
            "runs-on": "ubuntu-latest",
            "if": "github.actor != 'github-classroom[bot]'",
            "steps": steps,
        }},
    }
    header = (f"# Written by `grader classroom workflow {name}`: GitHub Classroom's autograding on the public checks\n"
              f"# of {name} (points shown to the student). Final grades come from `grader batch` over the cloned\n"
              "# repositories, with the hidden checks, which never enter a student repository.\n")
    if factor > 1:
        header += f"# max-score is each check's points x {factor}: GitHub Classroom's graders count whole points.\n"
    return header + yaml.safe_dump(document, sort_keys=False, width=120, allow_unicode=True)
