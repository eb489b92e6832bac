"""The pytest plugin that turns an exercise's test files into graded checks.

Tests are ordinary pytest functions run in the trusted judge. They declare their weight
with a marker and talk to the student's code through the ``submission`` fixture, whose
calls go to the sandbox::

    @pytest.mark.check(points=2, hint="Split d_model into heads", depends=["test_mha_shape"])
    def test_mha_parity(submission, rng):
        '''multi_head_attention matches torch.nn.MultiheadAttention.'''  # what the student sees
        ...

Following pytest-json-report, a ``pytest_runtest_makereport`` hookwrapper builds one
:class:`~grader.results.CheckResult` per test. A check whose dependency did not pass is
*skipped*, not failed (check50's habit). Failures carry structure through
:class:`CheckFailure`; any other exception raised by the test code itself is a grader
error, never the student's fault.

One pytest session can grade many submissions (see :class:`grader.judge.Judge`): the plugin's
``pytest_runtestloop`` takes :class:`Job` after :class:`Job` and runs every collected check
against each, so pytest configures and collects once per process, not once per submission.
"""
from __future__ import annotations

import dataclasses
import sys
import threading
import traceback
import zlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pytest

from .exercises import Exercise
from .results import CheckResult
from .sandbox import Sandbox, SubmissionError


class CheckFailure(AssertionError):
    """A check failed because of the submission; carries what the report shows.

    Args:
        feedback: what was wrong, with numbers.
        diagnosis: the named known mistake the output matches ("" when none does).
        details: JSON-able extras, e.g. ``{"error_map": [[...]], "error_map_axes": [..]}``.
    """

    def __init__(self, feedback: str, diagnosis: str = "", details: dict | None = None):
        super().__init__(feedback)
        self.feedback = feedback
        self.diagnosis = diagnosis
        self.details = details or {}


def record(request, feedback: str = "", details: dict | None = None) -> None:
    """Attach feedback and details to a *passing* check: pytest user properties of the test item, which
    :class:`GradingPlugin` puts into its :class:`~grader.results.CheckResult` (a failure carries them in
    :class:`CheckFailure`)."""
    if feedback:
        request.node.user_properties.append(("feedback", feedback))
    if details:
        request.node.user_properties.append(("details", details))


def quote(text: str, limit: int = 300) -> str:
    """A student's words in double quotes for feedback: whitespace runs made one space, at most ``limit``
    characters (cut with an ellipsis)."""
    text = " ".join(text.split())
    return f'"{text if len(text) <= limit else text[:limit - 1] + "…"}"'


class SubmissionProxy:
    """What tests see as ``submission``: ``submission.f(*args)`` runs ``f`` in the sandbox.

    Also offers :meth:`has` and :meth:`signature`; the folder is :attr:`path`.
    """

    def __init__(self, sandbox: Sandbox, path: Path):
        self._sandbox = sandbox
        self.path = path

    def has(self, name: str) -> bool:
        return self._sandbox.has_function(name)

    def signature(self, name: str) -> list[tuple[str, str, bool]]:
        return self._sandbox.signature(name)

    def value(self, name: str):
        """A module-level value of the student's module (e.g. a constant), read in the sandbox."""
        return self._sandbox.value(name)

    def grader_sandbox(self, folder: Path, module: str, preload: tuple[str, ...] = ()) -> Sandbox:
        """A second sandbox, for grader code that must not share a process with the student's code
        (exercise 4 trains the exported model in one): it imports ``module`` from ``folder`` and never
        the submission; same limits and isolation as the submission's, a uid of its own. The caller
        closes it."""
        own = self._sandbox
        spec = dataclasses.replace(own.exercise, module=module, harness="", forbidden_imports=(), preload=preload)
        return Sandbox(spec, folder, use_bubblewrap=own.bubblewrap, budget=own.budget)

    def __getattr__(self, name: str):
        if name.startswith("_"):
            raise AttributeError(name)
        return lambda *args, **kwargs: self._sandbox.call(name, *args, **kwargs)


def with_dependencies(items: list, names: Sequence[str]) -> list:
    """The test items named in ``names`` (an item's name or its test function's) and, transitively, every
    item of the test functions their ``check`` markers depend on; in collection order."""
    by_function: dict[str, list] = {}
    for item in items:
        by_function.setdefault(item.originalname, []).append(item)
    todo = [item for item in items if item.name in names or item.originalname in names]
    kept: set[str] = set()
    while todo:
        item = todo.pop()
        if item.nodeid in kept:
            continue
        kept.add(item.nodeid)
        marker = item.get_closest_marker("check")
        for function in marker.kwargs.get("depends", ()) if marker else ():
            todo.extend(by_function.get(function, []))
    return [item for item in items if item.nodeid in kept]


def _first_paragraph(doc: str | None) -> str:
    return " ".join((doc or "").strip().split("\n\n")[0].split())


def _describe(item) -> str:
    """The check's docstring sentence, with the parameter id of a parametrized check."""
    text = _first_paragraph(getattr(item.function, "__doc__", None)) or item.originalname
    callspec = getattr(item, "callspec", None)
    return f"{text.rstrip('.')} ({callspec.id})." if callspec is not None else text


@dataclass
class Job:
    """One submission for a grading session: its sandbox, folder and seed.

    The session fills in :attr:`checks` and sets :attr:`done` when it is finished with the job:
    every check ran, or :attr:`cancelled` was set (the checks not yet run are skipped), or the
    session failed, with the traceback in :attr:`error`.
    """

    sandbox: Sandbox
    submission: Path
    seed: int
    checks: list[CheckResult] = field(default_factory=list)
    done: threading.Event = field(default_factory=threading.Event)
    cancelled: threading.Event = field(default_factory=threading.Event)
    error: str = ""


class GradingPlugin:
    """Runs the collected checks against each :class:`Job` in turn; one :class:`CheckResult` per
    test item and job.

    Args:
        exercise: the exercise being graded.
        jobs: the submissions to grade, in order: a list, or an iterator that blocks until the
            next one arrives (:class:`grader.judge.Judge`). Each check draws its random inputs
            from ``(job.seed, check name)``.
        only: run only these checks (a check's name, e.g. ``test_gpt_params_small[tied]``, or its
            test function's, for all its items) and those they depend on; empty: every check.
            Names that match no check are listed in :attr:`unknown`.
    """

    def __init__(self, exercise: Exercise, jobs: Iterable[Job], only: Sequence[str] = ()):
        # Underscored: pytest scans a plugin's attributes for fixtures of the same names.
        self._exercise = exercise
        self._jobs = jobs
        self._only = tuple(only)
        self._job: Job | None = None
        self.collection_errors: list[str] = []
        self.deselected = 0
        self.unknown: list[str] = []  # names in `only` that no collected check has
        self.functions: list[str] = []  # every collected check's test function, once each (for messages)
        self.left_out = 0  # checks that `only` did not select
        self.serving = False  # True once collection is over and jobs are being taken
        self._by_function: dict[str, list[str]] = {}
        self._titles: dict[str, str] = {}  # test function -> its sentence, for skip reasons

    @property
    def checks(self) -> list[CheckResult]:
        """The checks of the job being graded, or of the last one."""
        return self._job.checks if self._job is not None else []

    # ------------------------------------------------------------------ pytest hooks
    def pytest_configure(self, config):
        config.addinivalue_line(
            "markers",
            "check(points=1, hint='', depends=()): a graded check worth POINTS; HINT is shown when it "
            "fails; it is skipped unless every test function named in DEPENDS passed.",
        )
        config.addinivalue_line("markers", "slow: a long check (e.g. re-training) that --quick leaves out.")

    @pytest.fixture
    def submission(self) -> SubmissionProxy:
        return SubmissionProxy(self._job.sandbox, self._job.submission)

    @pytest.fixture
    def exercise(self) -> Exercise:
        return self._exercise

    @pytest.fixture
    def rng(self, request) -> np.random.Generator:
        """A NumPy generator seeded by the run's seed and the check's name (order-independent)."""
        return np.random.default_rng([self._job.seed, zlib.crc32(request.node.name.encode())])

    def pytest_collection_finish(self, session):
        # The judge's tensors are tiny: one thread is 3-4x faster than several on a busy machine.
        torch = sys.modules.get("torch")
        if torch is not None:
            torch.set_num_threads(1)

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtestloop(self, session):
        """Grade each job with every collected check; replaces pytest's own loop (which runs the
        items once). Teardown after each job's last item (``nextitem=None``) ends every fixture,
        module-scoped ones included, so nothing carries over from one submission to the next.
        Collection errors do not stop the loop: the checks that did load still run."""
        items = session.items
        self.serving = True
        for job in self._jobs:
            self._job = job
            self._by_function, self._titles = {}, {}
            try:
                for i, item in enumerate(items):
                    item.user_properties = []  # filled by the check; a fresh list for each job
                    nextitem = items[i + 1] if i + 1 < len(items) else None
                    item.config.hook.pytest_runtest_protocol(item=item, nextitem=nextitem)
            except BaseException:
                # Fixtures are now in an unknown state: this session ends (pytest reports an
                # internal error) and the judge starts a new one for the next submission.
                job.error = traceback.format_exc()[-4000:]
                raise
            finally:
                job.done.set()
        return True

    @pytest.hookimpl(tryfirst=True)  # before -m "not slow" (--quick): a slow check named here is still known
    def pytest_collection_modifyitems(self, items):
        if not self._only:
            return
        self.functions = list(dict.fromkeys(item.originalname for item in items))
        known = {item.name for item in items} | set(self.functions)
        self.unknown = [name for name in self._only if name not in known]
        kept = with_dependencies(items, self._only)
        self.left_out = len(items) - len(kept)
        items[:] = kept

    def pytest_deselected(self, items):
        self.deselected += len(items)

    def pytest_collectreport(self, report):
        if report.failed:
            self.collection_errors.append(f"{report.nodeid}: {report.longreprtext[-2000:]}")

    def pytest_runtest_setup(self, item):
        if self._job.cancelled.is_set():  # still run through the protocol, so fixtures end as usual
            pytest.skip("not checked: grading was stopped")
        marker = item.get_closest_marker("check")
        depends = marker.kwargs.get("depends", ()) if marker else ()
        for name in depends:
            statuses = self._by_function.get(name)
            if statuses is None or any(s != "passed" for s in statuses):
                needed = self._titles.get(name, name)
                pytest.skip(f"not checked: it needs \"{needed}\" to pass first")

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_makereport(self, item, call):
        """A cheap report for the submission's own failures.

        pytest would format a full traceback with source for each; that took more than half
        of a wrong submission's grading time, and the report shows our feedback instead.
        Other exceptions (grader errors) keep pytest's full report.
        """
        exc = call.excinfo.value if call.excinfo is not None else None
        if call.when != "call" or not isinstance(exc, (CheckFailure, SubmissionError)):
            return None
        return pytest.TestReport(
            item.nodeid, item.location, {k: 1 for k in item.keywords}, "failed", str(exc)[:2000], call.when,
            duration=call.duration, start=call.start, stop=call.stop, user_properties=item.user_properties)

    @pytest.hookimpl(hookwrapper=True, specname="pytest_runtest_makereport")
    def pytest_runtest_makereport_collect(self, item, call):
        outcome = yield
        report = outcome.get_result()
        if report.when == "call" or (report.when == "setup" and not report.passed):
            self._record(item, call, report)

    # ------------------------------------------------------------------ results
    def _record(self, item, call, report) -> None:
        marker = item.get_closest_marker("check")
        kwargs = marker.kwargs if marker else {}
        check = CheckResult(
            name=item.name,
            description=_describe(item),
            max_points=float(kwargs.get("points", 1)),
            status="passed",
            hint=kwargs.get("hint", ""),
            hidden=Path(str(item.path)).is_relative_to(self._exercise.root / "tests" / "hidden"),
            duration=round(report.duration, 4),
        )
        exc = call.excinfo.value if call.excinfo is not None else None
        # A passing check may still explain itself (e.g. the sentence that earned a rubric line):
        # tests put ("feedback", text) and ("details", dict) into request.node.user_properties.
        props = dict(report.user_properties)
        if report.passed:
            check.feedback = str(props.get("feedback", ""))
            check.details.update(props.get("details") or {})
        if report.skipped:
            check.status = "skipped"
            check.feedback = str(getattr(exc, "msg", exc) or "skipped")
        elif report.failed and isinstance(exc, CheckFailure):
            check.status, check.feedback = "failed", exc.feedback
            check.diagnosis, check.details = exc.diagnosis, exc.details
        elif report.failed and isinstance(exc, SubmissionError):
            check.status, check.feedback = "failed", exc.message
            if exc.traceback:
                check.details["traceback"] = exc.traceback
        elif report.failed and isinstance(exc, AssertionError):
            check.status = "failed"
            check.feedback = str(exc).split("\nassert ")[0].strip() or "the check's assertion failed"
        elif report.failed:
            check.status = "error"
            check.feedback = (f"the grader itself failed on this check ({type(exc).__name__}: {exc}); "
                              "this is not your fault, please tell the course staff")
            check.details["traceback"] = report.longreprtext[-4000:]
        self._job.checks.append(check)
        self._by_function.setdefault(item.originalname, []).append(check.status)
        self._titles.setdefault(item.originalname, _first_paragraph(getattr(item.function, "__doc__", None))
                                or item.originalname)
