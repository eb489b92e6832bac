"""Shared fixtures for the grader's own tests."""
from pathlib import Path

import pytest

from grader import exercises

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="session")
def exercise3():
    return exercises.load("exercise3")


@pytest.fixture(scope="session")
def grade3(exercise3):
    """Grade a folder on exercise 3 with a fixed seed, in this process (torch imported once)."""
    from grader import judge

    def run(folder, seed=1234):
        return judge.grade(exercise3, Path(folder), seed=seed)

    return run
