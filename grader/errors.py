"""Errors a user can cause, and the exit status of a grading.

Exit statuses, the same for ``grade`` and ``grader grade`` (and, where they apply, every command):

- 0: graded, full marks (or, for commands that grade nothing, success);
- 1: graded below full marks, also when some check hit an error of the grader itself: a grade was
  produced but it is incomplete, and a line on stderr says so (``check-solutions``: a problem found;
  ``grader batch``: the batch stopped before every student was graded, e.g. its Dask scheduler went
  away, and ``--resume`` goes on);
- 2: a usage or input error, nothing was graded: an unknown exercise, a missing folder, a folder
  without the exercise's files, a file given for a folder, a platform the sandbox cannot run on
  (click's own usage errors, e.g. an unknown option, exit 2 as well).
"""
from __future__ import annotations

import click

#: Exit statuses (see the module docstring).
FULL_MARKS, BELOW_FULL_MARKS, INPUT_ERROR = 0, 1, 2


class InputError(click.ClickException):
    """Bad input (a missing folder, an export that holds no submission, a bad file): exit status 2.

    The message says what was wrong and what to do; click prints it as ``Error: ...``.
    """

    exit_code = INPUT_ERROR


def graded_status(result) -> int:
    """The exit status of a finished grading (a :class:`grader.results.SubmissionResult`):
    :data:`FULL_MARKS` when every point was earned and no check hit a grader error, else
    :data:`BELOW_FULL_MARKS`."""
    full = result.score >= result.max_score and not result.grader_errors
    return FULL_MARKS if full else BELOW_FULL_MARKS
