"""The obvious alternative, for bench_batch.py: plain pytest imports the student's module.

Loaded with ``-p baseline_plugin`` (bench/ on PYTHONPATH), with the submission folder in
``$BASELINE_SUBMISSION``. It gives the exercise's own test files the fixtures they expect,
but the student's module is imported straight into the pytest process: no sandbox, and a
fresh process (with its own torch import) per submission.
"""
import importlib.util
import inspect
import os
import zlib
from pathlib import Path

import numpy as np
import pytest

from grader import exercises


class _Direct:
    def __init__(self, path: Path, module):
        self.path, self._module = path, module

    def has(self, name):
        return callable(getattr(self._module, name, None))

    def signature(self, name):
        return [(p.name, p.kind.name, p.default is not p.empty)
                for p in inspect.signature(getattr(self._module, name)).parameters.values()]

    def __getattr__(self, name):
        return getattr(self._module, name)


@pytest.fixture(scope="session")
def submission():
    path = Path(os.environ["BASELINE_SUBMISSION"])
    spec = importlib.util.spec_from_file_location("student_attention", path / "attention.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return _Direct(path, module)


@pytest.fixture
def exercise():
    return exercises.load("exercise3")


@pytest.fixture
def rng(request):
    return np.random.default_rng([0, zlib.crc32(request.node.name.encode())])


def pytest_configure(config):
    config.addinivalue_line("markers", "check: graded check")
