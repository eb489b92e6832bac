"""Grade one submission: start its sandbox, run the exercise's tests under pytest, collect.

The judge is the trusted process: it imports torch (inside the tests) and computes every
expected value itself. The student's code only runs in the :class:`~grader.sandbox.Sandbox`.
"""
from __future__ import annotations

import contextlib
import io
import secrets
import sys
import time
from pathlib import Path

import click
import pytest

from .exercises import Exercise, course_root
from .plugin import GradingPlugin
from .results import CheckResult, SubmissionResult
from .sandbox import Sandbox


def new_seed() -> int:
    """A fresh seed for a grading run (31 bits, so it is easy to type back with ``--seed``)."""
    return secrets.randbelow(2**31)


def grade(exercise: Exercise, submission: Path, *, seed: int | None = None, uid: int = 61000,
          use_bubblewrap: bool | None = None, budget: float | None = None,
          quick: bool = False) -> SubmissionResult:
    """Grade ``submission`` (a folder) on ``exercise``.

    Args:
        exercise: the exercise spec.
        submission: the student's folder holding the exercise's files.
        seed: seed for every randomised check; a fresh one when None (recorded either way).
        uid: unprivileged uid the sandbox runs as when the grader is root.
        use_bubblewrap: force (True) or forbid (False) bubblewrap; None uses it when it works.
        budget: wall seconds the submission's code may use in total (None: per-call limits only).
        quick: leave out the checks marked ``slow`` (e.g. exercise 4's re-training); the result
            says so in its notes.

    Returns:
        The result; never raises because of the submission. A failure of the grader
        itself shows up as a check with status ``error``.

    Raises:
        click.ClickException: ``submission`` is not a folder (a usage error).
    """
    submission = Path(submission)
    if not submission.is_dir():
        raise click.ClickException(
            f"submission folder {submission} does not exist; pass the folder that holds "
            f"{', '.join(exercise.files)}")
    seed = new_seed() if seed is None else int(seed)
    started = time.monotonic()
    result = SubmissionResult(exercise=exercise.name, submission=str(submission), seed=seed)
    if not exercise.has_hidden_tests:
        result.notes.append("Hidden tests are not available here: graded on the public checks only; "
                            "your final grade also includes hidden checks.")
    root = str(course_root())
    if root not in sys.path:
        sys.path.insert(0, root)  # tests import their helpers as exercises.<name>.tests.<module>
    with Sandbox(exercise, submission, uid=uid, use_bubblewrap=use_bubblewrap, budget=budget) as sandbox:
        sandbox.prestart()  # the worker starts while pytest collects the checks
        plugin = GradingPlugin(exercise, sandbox, submission, seed)
        args = [str(d) for d in exercise.test_dirs] + [
            # Plugins a grading run does not use; unraisableexception alone costs two gc.collect().
            "-p", "no:terminal", "-p", "no:cacheprovider", "-p", "no:randomly", "-p", "no:logging",
            "-p", "no:unraisableexception", "-p", "no:threadexception", "-p", "no:doctest",
            "-p", "no:junitxml", "-p", "no:pastebin", "-p", "no:stepwise", "-p", "no:legacypath",
            # Checks fail with CheckFailure, so pytest's assertion rewriting (a recompile of every
            # test module on every run) buys nothing here.
            "--assert=plain",
            "--import-mode=importlib", f"--rootdir={root}", "-o", "addopts=", "-o", "testpaths=",
            "-W", "ignore::DeprecationWarning",
        ]
        if quick:
            args += ["-m", "not slow"]
        sink = io.StringIO()
        with contextlib.redirect_stdout(sink), contextlib.redirect_stderr(sink):
            exit_code = pytest.main(args, plugins=[plugin])
        result.checks = plugin.checks
        if plugin.deselected:
            result.notes.append(f"Quick run: {plugin.deselected} slow check(s) were left out, so this is not "
                                "the full score.")
        for check in result.checks:  # a check may ask for a person to look (e.g. a borderline essay)
            reasons = check.details.get("needs_review")
            if reasons:
                result.needs_review.extend([reasons] if isinstance(reasons, str) else list(reasons))
        for error in plugin.collection_errors:
            result.checks.append(CheckResult(
                name="collection", description="the exercise's tests load", max_points=0, status="error",
                feedback="the grader could not load its own tests; this is not your fault, please tell "
                         "the course staff", details={"traceback": error}))
        if exit_code not in (0, 1) and not result.checks:
            result.checks.append(CheckResult(
                name="pytest", description="the grader runs", max_points=0, status="error",
                feedback=f"pytest ended with exit code {int(exit_code)}; please tell the course staff",
                details={"traceback": sink.getvalue()[-4000:]}))
        result.output = sandbox.output
        result.isolation = sandbox.isolation
    result.duration = round(time.monotonic() - started, 3)
    return result
