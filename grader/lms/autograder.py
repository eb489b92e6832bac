"""Gradescope's autograder zip for one exercise (``grader gradescope build OUT.zip EXERCISE``).

Layout (Gradescope autograder docs, "Autograder Specifications": ``setup.sh`` and ``run_autograder``
at the zip's root; the zip is unpacked into ``/autograder/source``)::

    setup.sh            installs Python 3.11+, the CPU build of torch and course/ (once, image build)
    run_autograder      grades /autograder/submission into /autograder/results/results.json
    course/             pyproject.toml, README.md, grader/ and exercises/EXERCISE/ with its hidden tests

The zip goes to Gradescope, not to students: it holds the exercise's hidden tests and judge-only
files, and nothing of other exercises or of ``solutions/``. ``run_autograder`` runs
``grader grade EXERCISE --gradescope ... --isolation container`` with the bundled grader.
"""
from __future__ import annotations

import re
import shlex
import shutil
import tomllib
import zipfile
from pathlib import Path

from .. import exercises
from ..errors import InputError
from .gradescope_results import HIDDEN_VISIBILITY, VISIBILITIES

_TEMPLATES = Path(__file__).resolve().parent.parent / "templates" / "gradescope"
#: Never shipped: caches, build leftovers, hidden files and folders (``.env``, ``.ipynb_checkpoints``), backups.
_IGNORE = re.compile(r"(^|/)(__pycache__|[^/]*\.egg-info|\.[^/]*)(/|$)|\.pyc$|~$|\.(orig|rej|swp|bak)$")
#: Of the course's ``grader/``, what its wheel ships too (pyproject.toml's packages and package-data).
_GRADER = re.compile(r"([^/]+/)*[^/]+\.py|templates/.+")
_ANY = re.compile(r".+")
#: Permission bits of the zip's members (``run_autograder`` must be executable).
_EXECUTABLE, _PLAIN = 0o100755 << 16, 0o100644 << 16


def torch_pin(pyproject: Path) -> str:
    """The version ``pyproject`` pins torch to (``torch==2.13.0`` -> ``"2.13.0"``).

    Raises:
        InputError: no ``torch==VERSION`` among its dependencies.
    """
    deps = tomllib.loads(pyproject.read_text(encoding="utf-8")).get("project", {}).get("dependencies", [])
    for dep in deps:
        match = re.fullmatch(r"torch\s*==\s*([\w.]+)", dep.strip())
        if match:
            return match.group(1)
    raise InputError(f"{pyproject} pins no torch version (torch==X.Y.Z); the autograder installs that CPU build")


def members(exercise: exercises.Exercise, hidden_visibility: str) -> dict[str, tuple[bytes | Path, bool]]:
    """The zip's members: ``{name: (text or file, executable)}``."""
    root = exercises.course_root()
    fill = {"@EXERCISE@": exercise.name, "@HIDDEN@": hidden_visibility, "@TORCH@": torch_pin(root / "pyproject.toml"),
            "@FORBIDDEN@": " ".join(shlex.quote(name) for name in exercise.forbidden_imports)}
    out: dict[str, tuple[bytes | Path, bool]] = {}
    for script in ("setup.sh", "run_autograder"):
        text = (_TEMPLATES / script).read_text(encoding="utf-8")
        for key, value in fill.items():
            text = text.replace(key, value)
        out[script] = (text.encode("utf-8"), True)
    for rel in ("pyproject.toml", "README.md"):
        out[f"course/{rel}"] = (root / rel, False)
    for base, prefix, kept in ((root / "grader", "course/grader", _GRADER),
                               (exercise.root, f"course/exercises/{exercise.name}", _ANY)):
        for path in sorted(base.rglob("*")):
            rel = path.relative_to(base).as_posix()
            if path.is_file() and not path.is_symlink() and not _IGNORE.search(rel) and kept.fullmatch(rel):
                out[f"{prefix}/{rel}"] = (path, False)
    return out


def build(out: Path, name: str, *, hidden_visibility: str = HIDDEN_VISIBILITY) -> list[str]:
    """Write the autograder zip for exercise ``name`` to ``out``; returns the member names.

    Raises:
        InputError: an unknown visibility, an exercise without hidden tests here (an autograder must
            grade on them: build it from the course folder, not from a student bundle), or ``out``
            not writable.
    """
    if hidden_visibility not in VISIBILITIES:
        raise InputError(f"unknown visibility {hidden_visibility!r}; choose one of {', '.join(VISIBILITIES)}")
    exercise = exercises.load(name)
    if not exercise.has_hidden_tests:
        raise InputError(f"{name} has no hidden tests here ({exercise.root / 'tests' / 'hidden'}); build the "
                         "autograder from the course folder, which has them")
    files = members(exercise, hidden_visibility)
    out = Path(out)
    tmp = out.with_name(f".{out.name}.tmp")
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        with zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED) as zf:
            for member, (content, executable) in files.items():
                info = zipfile.ZipInfo(member, date_time=(2020, 1, 1, 0, 0, 0))
                info.external_attr = _EXECUTABLE if executable else _PLAIN
                info.compress_type = zipfile.ZIP_DEFLATED
                zf.writestr(info, content if isinstance(content, bytes) else content.read_bytes())
        shutil.move(tmp, out)
    except OSError as exc:
        raise InputError(f"cannot write {out}: {exc}") from None
    finally:
        tmp.unlink(missing_ok=True)
    return list(files)
