"""Shared fixtures for the grader's own tests.

``gradeN`` grades a folder on exercise N with a fixed seed through one :class:`grader.judge.Judge`
session per exercise (as ``grader batch`` does), so the corpus and hostile cases also test that
nothing carries over from one submission to the next.
"""
from pathlib import Path

import pytest

from grader import exercises

ROOT = Path(__file__).resolve().parent.parent

#: The three headings of exercise 1's skeleton (exercises/exercise1/skeleton/answer.md).
EX1_HEADINGS = ("## 1. Multi-head attention: a team reading one contract", "## 2. The transformer block around it",
                "## 3. Quick check: BERT vs GPT at the attention level")


def bench_module(name: str):
    """The module ``bench/<name>.py``, loaded once (bench/ is no package); registered in ``sys.modules`` under
    ``name``, as its dataclasses look their module up."""
    import importlib.util
    import sys
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, ROOT / "bench" / f"{name}.py")
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return sys.modules[name]


def ex1_answer(a: str, b: str, c: str) -> str:
    """An exercise-1 answer: the skeleton's three headings with ``a``, ``b``, ``c`` under them."""
    h1, h2, h3 = EX1_HEADINGS
    return f"{h1}\n\n{a}\n\n{h2}\n\n{b}\n\n{h3}\n\n{c}\n"


def _session_grader(name: str):
    from grader import judge

    session = judge.Judge(exercises.load(name))

    def run(folder, seed=1234):
        return session.grade(Path(folder), seed=seed)

    return session, run


@pytest.fixture(scope="session")
def exercise3():
    return exercises.load("exercise3")


@pytest.fixture(scope="session")
def grade3():
    """Grade a folder on exercise 3 (torch imported and the checks collected once)."""
    session, run = _session_grader("exercise3")
    yield run
    session.close()


@pytest.fixture(scope="session")
def exercise2():
    return exercises.load("exercise2")


@pytest.fixture(scope="session")
def grade2():
    """Grade a folder on exercise 2 (torch imported and the checks collected once)."""
    session, run = _session_grader("exercise2")
    yield run
    session.close()


@pytest.fixture(scope="session")
def exercise1():
    return exercises.load("exercise1")


@pytest.fixture(scope="session")
def grade1():
    """Grade a folder on exercise 1 (no sandbox: nothing of the student's runs)."""
    session, run = _session_grader("exercise1")
    yield run
    session.close()


#: Test files whose tests grade with re-training, a cluster or a whole bundle (tens of seconds each): run first, so that
#: the two worker processes of README's `pytest -n 2 --dist worksteal` share them and the quick tests fill the end. Without this the
#: last minutes of a run were one worker finishing exercise 4's gradings while the other waited.
SLOW_FIRST = ("test_exercise4.py", "test_cluster.py", "test_release.py", "test_batch.py", "test_lms_classroom.py",
              "test_bundle_diagnosis.py", "test_hostile.py")


def pytest_collection_modifyitems(config, items):
    """Put the files of :data:`SLOW_FIRST` first, in that order; the order inside each file is kept."""
    rank = {name: i for i, name in enumerate(SLOW_FIRST)}
    items.sort(key=lambda item: rank.get(Path(str(item.fspath)).name, len(SLOW_FIRST)))
