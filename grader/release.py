"""Build the student bundle: what students get, and nothing they must not see.

The bundle holds the grader package, ``pyproject.toml``, and for each exercise its README,
``exercise.toml``, data, skeleton and public tests (everything in the exercise folder except
``tests/hidden`` and the exercise's :data:`JUDGE_ONLY` files), plus a working copy ``EXERCISE/`` of
the skeleton at the top so ``grade EXERCISE`` works at once. ``solutions/``, hidden tests, the
grader's own tests and corpora are never copied.

Nothing in the bundle may implement the answer or reveal a hidden value (DESIGN.md, "Layout"):
the torch references of exercises 2, 3 and 4 implement the answer, and exercise 4's calibration
holds the numbers the grader's re-run gives, so they stay with the judge, as do the rubrics of the written
answers (``rubric.toml`` of exercises 1 and 4: their patterns would say which words earn a point; the public
checks look at an answer's form only, with the numbers of ``exercise.toml``'s ``[answer]``); in the bundle the
public checks compare with stored cases instead (``exercises/exercise3/tests/cases.py``,
``exercises/exercise4/tests/cases.py``, exercise 2's stored counts). ``tests/test_release.py`` and
``tests/test_bundle_diagnosis.py`` check this on a built bundle.
"""
from __future__ import annotations

import shutil
from pathlib import Path

import click

from . import exercises

STUDENT_README = """# {title}

Your exercises for the lesson on multi-head attention and the transformer block.

Set up once (Python 3.11+; on Linux the first `pip install` takes the CPU build of PyTorch, not
the multi-GB CUDA one; on macOS leave it out):

    python3 -m venv .venv
    .venv/bin/pip install --no-deps torch==2.13.0 --index-url https://download.pytorch.org/whl/cpu
    .venv/bin/pip install -e .

Each exercise has a folder here with the file(s) you edit ({folders}); the task and its exact
contract are in `exercises/NAME/README.md`. Grade your work at any time:

    .venv/bin/grade exercise3

You get a score, every check with a hint and what was wrong in numbers, and a report in `reports/`.
Exercise 3 also gives the known mistake your output matches or what the behavioural probes found;
exercise 2 gives what your own functions do when one argument changes (its mistakes are named only
when your work is graded). The written answers (exercise 1, and exercise 4's explanation) are checked
here for their form only (each question answered, length, sentences, English); what they say is graded
by a rubric when your work is graded, which shows each concept with the sentence of yours that earned it.
These are the public checks; hidden checks run when your work is graded.
"""

#: What a student repository made from the bundle (GitHub Classroom) must not commit: reports and
#: ``grade --json`` output (a report handed in is not the work), the venv and Python's caches.
GITIGNORE = """reports/
grade.json
.venv/
__pycache__/
*.pyc
*.egg-info/
.pytest_cache/
"""

_IGNORE = shutil.ignore_patterns("__pycache__", "*.pyc", ".pytest_cache", "*.egg-info")

#: Paths inside an exercise's folder that stay with the judge besides ``tests/hidden`` (every
#: exercise's): code that implements the answer, and measurements that hold the re-run's values.
JUDGE_ONLY = {
    "exercise1": (
        "rubric.toml",         # the rubric's patterns: the bundle has the README's prose and the form checks
        "copy_sources",        # the texts a copy would come from (the lesson's sample answer)
        "error_model.json",    # the learned model that routes sentences like known mistakes (its weights say which)
    ),
    "exercise2": (
        "tests/reference.py",  # torch's counts, hidden constants too: public checks use stored_counts.toml
    ),
    "exercise3": (
        "tests/reference.py",  # the torch reference: public checks compare with tests/cases/ instead
    ),
    "exercise4": (
        "tests/reference.py",  # the reference block: every mode of Block.forward
        "CALIBRATION.md",      # the re-run's validation losses, which the report check compares with
        "calibrate.py",        # measures them (on the reference solution by default)
        "calibration",         # the measurements themselves (JSON)
        "rubric.toml",         # the explanation's rubric (patterns): public checks see its form only
        "copy_sources",        # the texts a copy would come from (the lesson's sample explanation)
        "error_model.json",    # a learned model of its known mistakes, when one is trained (bench/train_error_model.py)
    ),
}


def judge_only(name: str, root: Path) -> set[Path]:
    """The resolved paths of exercise ``name`` (folder ``root``) that are not released."""
    return {(root / rel).resolve() for rel in ("tests/hidden", *JUDGE_ONLY.get(name, ()))}


def build(out: Path, names: list[str] | None = None) -> list[str]:
    """Write the student bundle to ``out`` (which must not exist or be empty).

    Returns:
        The exercises included.

    Raises:
        click.ClickException: ``out`` exists and is not empty.
    """
    out = Path(out)
    if out.exists() and any(out.iterdir()):
        raise click.ClickException(f"{out} is not empty; give a new folder for the release")
    root = exercises.course_root()
    names = names or exercises.available()
    out.mkdir(parents=True, exist_ok=True)
    shutil.copytree(root / "grader", out / "grader", ignore=_IGNORE)
    shutil.copy2(root / "pyproject.toml", out / "pyproject.toml")
    for name in names:
        ex = exercises.load(name)
        kept_back = judge_only(name, ex.root)

        def ignore(folder, entries, kept_back=kept_back):
            skip = set(_IGNORE(folder, entries))
            return skip | {e for e in entries if (Path(folder) / e).resolve() in kept_back}

        shutil.copytree(ex.root, out / "exercises" / name, ignore=ignore)
        shutil.copytree(ex.skeleton, out / name, ignore=_IGNORE)
    (out / "reports").mkdir(exist_ok=True)
    (out / ".gitignore").write_text(GITIGNORE, encoding="utf-8")
    (out / "README.md").write_text(STUDENT_README.format(
        title="Transformer lesson: exercises", folders=", ".join(f"`{n}/`" for n in names)), encoding="utf-8")
    return names
