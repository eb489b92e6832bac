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


@pytest.fixture(scope="session")
def exercise2():
    return exercises.load("exercise2")


@pytest.fixture(scope="session")
def grade2(exercise2):
    """Grade a folder on exercise 2 with a fixed seed, in this process (torch imported once)."""
    from grader import judge

    def run(folder, seed=1234):
        return judge.grade(exercise2, Path(folder), seed=seed)

    return run


@pytest.fixture(scope="session")
def exercise1():
    return exercises.load("exercise1")


@pytest.fixture(scope="session")
def grade1(exercise1):
    """Grade a folder on exercise 1 with a fixed seed, in this process (no sandbox: nothing runs)."""
    from grader import judge

    def run(folder, seed=1234):
        return judge.grade(exercise1, Path(folder), seed=seed)

    return run
