"""Errors a user can cause, with the exit status each command documents.

Exit statuses (the same for ``grade`` and ``grader``): 0 full marks or success, 1 graded below
full marks (or ``check-solutions`` found a problem), 2 a usage or input error: nothing was graded.
"""
from __future__ import annotations

import click


class InputError(click.ClickException):
    """Bad input (a missing folder, an export that holds no submission, a bad file): exit status 2.

    The message says what was wrong and what to do; click prints it as ``Error: ...``.
    """

    exit_code = 2
