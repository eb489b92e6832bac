"""Fixtures shared by exercise 4's public and hidden checks (judge side).

Each lives for one grading: the plugin ends every fixture between submissions.
"""
import pytest

from exercises.exercise4.tests.runs import Runs
from exercises.exercise4.tests.structure import CleanProcess


@pytest.fixture(scope="session")
def clean():
    """The clean process of this grading (started on first use): runs and trains the exported model."""
    process = CleanProcess()
    yield process
    process.close()


@pytest.fixture(scope="session")
def exports():
    """The student's model exported in each mode, made once per grading: (kind, mode) -> export or failure."""
    return {}


@pytest.fixture(scope="session")
def runs(clean):
    """The re-training runs of this grading, made once (two at a time, one lane in ``clean``) and shared by the
    checks that need them."""
    process = Runs(clean)
    yield process
    process.close()
