"""What a user types to ``grade`` and ``grader grade``, checked before anything is graded.

Every mistake raises :class:`~grader.errors.InputError` (exit status 2) with one line saying what was
wrong and the command that would work: an unknown exercise gets the nearest name (difflib), a file
given for a folder gets the folder's command, ``grade exercise3`` run inside ``exercise3/`` gets
``grade .``, a folder without the exercise's files says where they are (a sub-folder, another
exercise's files). Also where the report goes: never into the submission, which every later grading
copies into its sandbox (and a student hands in).
"""
from __future__ import annotations

import difflib
import os
from collections.abc import Callable
from pathlib import Path

import click

from . import exercises
from .errors import InputError

#: How a command is typed again for an exercise and a folder, e.g. ``lambda e, f: f"grade {e} {f}"``.
Retype = Callable[[str, str], str]


def _nearest(name: str, known: list[str]) -> str:
    """``"; did you mean exercise3?"`` for a near miss of one of ``known``, else ``""``."""
    close = difflib.get_close_matches(name, known, n=1, cutoff=0.6)
    return f"; did you mean {close[0]}?" if close else ""


def exercise(name: str) -> exercises.Exercise:
    """The exercise ``name``.

    Raises:
        InputError: no such exercise (the message suggests the nearest name and lists them all).
    """
    known = exercises.available()
    if name not in known:
        raise InputError(f"no exercise {name}{_nearest(name, known)} (exercises: {', '.join(known) or 'none'})")
    return exercises.load(name)


def exercise_list() -> str:
    """One line per exercise, ``  exercise3  <title>``, for the message of ``grade`` without an argument."""
    return "\n".join(f"  {name}  {exercises.load(name).title}" for name in exercises.available())


def _holds(folder: Path, ex: exercises.Exercise) -> bool:
    return all((folder / f).is_file() for f in ex.files)


def _others_holding(folder: Path, but: str) -> list[str]:
    """The exercises other than ``but`` whose files are all in ``folder``."""
    return [n for n in exercises.available() if n != but and _holds(folder, exercises.load(n))]


def _shown(path: Path) -> str:
    """``path`` as the user would type it: relative to the working folder when inside it, else absolute."""
    path, here = path.resolve(), Path.cwd().resolve()
    return str(path.relative_to(here)) if path.is_relative_to(here) else str(path)


def shortcut_target(argument: str | None, folder: Path | None) -> tuple[str, Path]:
    """The exercise and folder of ``grade ARGUMENT [FOLDER]``.

    ``grade exercise3`` grades ``./exercise3``; ``grade path/to/exercise3`` and ``grade .`` grade that
    folder, whose name is the exercise; ``grade exercise3 FOLDER`` grades FOLDER.

    Raises:
        click.UsageError: no argument (the message lists the exercises; exit status 2).
        InputError: a file instead of a folder, an unknown exercise, a missing folder, a folder that is
            not named after an exercise (each message gives the command that would work).
    """
    here = Path.cwd()
    if argument is None:
        inside = f"You are inside {here.name}/: run `grade .`\n" if here.name in exercises.available() else ""
        raise click.UsageError(f"say which exercise to grade: `grade EXERCISE` next to your EXERCISE/ folder, or "
                               f"`grade path/to/EXERCISE`.\n{inside}Exercises:\n{exercise_list()}")
    given = Path(argument)
    if folder is None and given.is_file():
        parent = given.resolve().parent
        name = parent.name if parent.name in exercises.available() else "EXERCISE"
        where = "." if parent == here.resolve() else _shown(parent)
        command = f"grade {where}" if name != "EXERCISE" else f"grade EXERCISE {where}"
        raise InputError(f"{argument} is a file; grade the folder that holds it: `{command}`")
    if folder is None and (given.name != argument or argument in (".", "..")):  # a path: its name is the exercise
        if not given.is_dir():
            near = difflib.get_close_matches(given.name, [p.name for p in given.parent.glob("*/")], n=1)
            raise InputError(f"no folder {argument}"
                             + (f"; did you mean {given.parent / near[0]}?" if near else ""))
        folder = given
        argument = given.resolve().name
        known = exercises.available()
        if argument not in known:
            close = difflib.get_close_matches(argument, known, n=1, cutoff=0.6)
            raise InputError(f"the folder {folder} is not named after an exercise; say which it is: "
                             f"`grade {close[0] if close else 'EXERCISE'} {folder}` (exercises: {', '.join(known)})")
    if argument not in exercises.available() and folder is None and given.is_dir():
        holds = _others_holding(given, "") or difflib.get_close_matches(argument, exercises.available(), n=1)
        name = holds[0] if len(holds) == 1 else "EXERCISE"
        raise InputError(f"no exercise {argument}; to grade the folder {argument}/, say which exercise it is: "
                         f"`grade {name} {argument}`")
    exercise(argument)
    folder = folder if folder is not None else Path(argument)
    if not folder.exists() and folder == Path(argument) and here.name == argument:
        raise InputError(f"no folder {argument}/ here: you are inside it already; run `grade .`")
    if not folder.exists():
        raise InputError(f"no folder {folder}/ here; run `grade {argument}` next to your {argument}/ folder "
                         f"or give its path: `grade {argument} path/to/{argument}`")
    return argument, folder


def submission_folder(ex: exercises.Exercise, folder: Path, retype: Retype) -> Path:
    """``folder`` when it is a folder holding at least one of ``ex``'s files.

    Raises:
        InputError: ``folder`` is missing, is a file (the folder that holds it is suggested), or holds
            none of the files (the message says where they are, when a sub-folder or another
            exercise's files explain it).
    """
    files = ", ".join(ex.files)
    if folder.is_file():
        parent = _shown(folder.resolve().parent)
        raise InputError(f"{folder} is a file; give the folder that holds it: `{retype(ex.name, parent)}`")
    if not folder.is_dir():
        raise InputError(f"submission folder {folder} does not exist; give the folder that holds {files}")
    if any((folder / f).is_file() for f in ex.files):
        return folder
    if _holds(folder / ex.name, ex):
        hint = f"its sub-folder {ex.name}/ does: `{retype(ex.name, _shown(folder / ex.name))}`"
    elif others := _others_holding(folder, ex.name):
        theirs = ", ".join(exercises.load(others[0]).files)
        hint = f"it holds {theirs}, the files of {others[0]}: did you mean `{retype(others[0], _shown(folder))}`?"
    else:
        hits = sorted(p.parent for pattern in ("*/", "*/*/") for p in folder.glob(pattern + ex.files[0]) if p.is_file())
        hint = (f"{ex.files[0]} is in {_shown(hits[0])}: `{retype(ex.name, _shown(hits[0]))}`" if len(hits) == 1 else
                f"put your {files} there (start from exercises/{ex.name}/skeleton/)")
    raise InputError(f"{folder} holds none of {ex.name}'s files ({files}); {hint}")


def report_path(given: Path | None, name: str, folder: Path) -> Path:
    """Where the HTML report goes: ``given``, else ``reports/NAME.html`` in the working folder, or beside
    the submission (``../reports/NAME.html`` for ``grade .``) when the working folder is inside it.

    Raises:
        InputError: ``given`` lies inside the submission folder.
    """
    inside = folder.resolve()
    if given is None:
        path = Path("reports") / f"{name}.html"
        if Path.cwd().resolve().is_relative_to(inside):  # `grade .`: ../reports/NAME.html
            path = Path(os.path.relpath(inside.parent / "reports" / f"{name}.html"))
        return path
    if given.resolve().is_relative_to(inside):
        raise InputError(f"--report {given} is inside the submission folder {folder}, and every later grading "
                         f"would copy it in with the submission; write it elsewhere, e.g. "
                         f"--report {os.path.relpath(inside.parent / 'reports' / f'{name}.html')}")
    return given
