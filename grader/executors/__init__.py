"""Where a batch's gradings run: :mod:`.local` (``--jobs N`` processes on this machine, the default)
or :mod:`.cluster` (the workers of a Dask cluster, ``--scheduler ADDRESS``). Both run
:func:`.grading.grade` in long-lived worker processes and hand each :class:`.grading.Outcome` to the
batch process, which alone writes the outputs and the gradebook (:mod:`grader.batch`).
"""
from __future__ import annotations

import click

from ..errors import BELOW_FULL_MARKS


class ClusterLost(click.ClickException):
    """The cluster went away mid-batch (the scheduler, or every worker able to grade). The grades
    recorded so far are kept; ``--resume`` grades the rest. Exit status 1: the batch is incomplete."""

    exit_code = BELOW_FULL_MARKS
