"""The pytest plugin, tested the way pytest plugins are tested: with pytester.

Each test writes a small check file, runs pytest in-process with a GradingPlugin whose sandbox
is a stand-in (the "student" functions run here), and reads the CheckResults it collected.
One test at the end goes through grader.judge on a fake exercise folder with a real sandbox.
"""
import json
import sys
import textwrap

import pytest

from grader import exercises, judge
from grader.exercises import Exercise
from grader.plugin import GradingPlugin, Job
from grader.sandbox import SubmissionError

pytest_plugins = ["pytester"]


class FakeSandbox:
    """Stands in for grader.sandbox.Sandbox: runs the given functions in this process."""

    def __init__(self, **functions):
        self.functions = functions

    def has_function(self, name):
        return name in self.functions

    def signature(self, name):
        return [("x", "POSITIONAL_OR_KEYWORD", False)]

    def call(self, name, *args, **kwargs):
        if name not in self.functions:
            raise SubmissionError("missing", f"student.py has no function {name}().")
        try:
            return self.functions[name](*args, **kwargs)
        except Exception as exc:
            raise SubmissionError("exception", f"{name}() raised {type(exc).__name__}: {exc}",
                                  '  File "student.py", line 3, in boom\n') from None


def _boom():
    raise ValueError("oops")


def run(pytester, source, *args, seed=1, sandbox=None, files=None):
    """Write `source` as a check file, run pytest with a fresh plugin; (plugin, run result)."""
    if files is None:
        pytester.makepyfile(test_checks=textwrap.dedent(source))
    exercise = Exercise(name="fake", root=pytester.path, title="Fake", files=("student.py",), module="student")
    sandbox = sandbox or FakeSandbox(double=lambda x: 2 * x, boom=_boom)
    plugin = GradingPlugin(exercise, [Job(sandbox, pytester.path, seed)])
    outcome = pytester.runpytest("-p", "no:cacheprovider", *args, plugins=[plugin])
    return plugin, outcome


def by_name(plugin):
    return {c.name: c for c in plugin.checks}


# ---------------------------------------------------------------- points and descriptions
def test_points_hint_and_description_come_from_marker_and_docstring(pytester):
    plugin, outcome = run(pytester, '''
        import pytest

        @pytest.mark.check(points=2.5, hint="look at the axis")
        def test_weighted():
            """softmax rows sum to one.

            This second paragraph is for the course staff, not shown."""

        @pytest.mark.check(points=0.5)
        @pytest.mark.parametrize("n", [1, 3], ids=["one", "three"])
        def test_param(n):
            """Works for
            several   sizes."""

        def test_unmarked():
            pass
    ''')
    outcome.assert_outcomes(passed=4)
    checks = by_name(plugin)
    assert list(checks) == ["test_weighted", "test_param[one]", "test_param[three]", "test_unmarked"]
    w = checks["test_weighted"]
    assert (w.max_points, w.points, w.status, w.hint) == (2.5, 2.5, "passed", "look at the axis")
    assert w.description == "softmax rows sum to one."
    assert checks["test_param[one]"].description == "Works for several sizes (one)."
    assert checks["test_param[three]"].max_points == 0.5
    # No marker: worth 1 point (the marker's documented default), described by its name.
    assert (checks["test_unmarked"].max_points, checks["test_unmarked"].description) == (1.0, "test_unmarked")
    assert all(c.duration >= 0 and c.hidden is False for c in plugin.checks)


def test_check_marker_is_registered(pytester):
    pytester.makepyfile(test_checks="")
    _, outcome = run(pytester, "", "--markers", files=[])
    outcome.stdout.fnmatch_lines(["@pytest.mark.check(points=1, hint='', depends=()):*"])
    _, outcome = run(pytester, '''
        import pytest

        @pytest.mark.check(points=1)
        def test_ok():
            pass
    ''', "--strict-markers")
    outcome.assert_outcomes(passed=1)


# ---------------------------------------------------------------- dependencies
def test_depends_skips_with_a_reason_instead_of_failing(pytester):
    plugin, outcome = run(pytester, '''
        import pytest

        @pytest.mark.check(points=1)
        def test_a():
            assert False, "a is wrong"

        @pytest.mark.check(points=3, depends=["test_a"])
        def test_b():
            open("b_ran", "w").close()

        @pytest.mark.check(points=1)
        def test_c():
            pass

        @pytest.mark.check(points=2, depends=["test_c"])
        def test_d():
            pass

        @pytest.mark.check(points=1)
        @pytest.mark.parametrize("k", [1, 2])
        def test_e(k):
            assert k == 1

        @pytest.mark.check(points=1, depends=["test_e"])
        def test_f():
            pass

        @pytest.mark.check(points=1, depends=["test_later"])
        def test_g():
            pass

        def test_later():
            pass
    ''')
    checks = by_name(plugin)
    b = checks["test_b"]
    assert (b.status, b.points, b.max_points) == ("skipped", 0.0, 3.0)
    assert "test_a" in b.feedback
    assert not (pytester.path / "b_ran").exists()  # a skipped check's body never runs
    assert checks["test_d"].status == "passed"
    assert checks["test_f"].status == "skipped"     # one item of test_e failed
    assert checks["test_g"].status == "skipped"     # test_later had not run yet
    assert "test_later" in checks["test_g"].feedback
    # earned: c 1 + d 2 + e[1] 1 + later 1 = 5 of a 1 + 3 + 1 + 2 + 1 + 1 + 1 + 1 + 1 = 12
    assert sum(c.points for c in plugin.checks) == 5
    assert sum(c.max_points for c in plugin.checks) == 12
    outcome.assert_outcomes(passed=4, failed=2, skipped=3)


# ---------------------------------------------------------------- one session, many submissions
def test_one_session_grades_each_job_afresh(pytester):
    """Dependencies, user properties and module fixtures start over for every job."""
    pytester.makepyfile(test_checks=textwrap.dedent('''
        import pytest

        SETUPS = []

        @pytest.fixture(scope="module")
        def shared():
            SETUPS.append(1)
            return len(SETUPS)

        @pytest.mark.check(points=1)
        def test_double(submission, shared, request):
            """double works."""
            request.node.user_properties.append(("feedback", f"module fixture made {shared} time(s)"))
            assert submission.double(3) == 6, "double(3) is not 6"

        @pytest.mark.check(points=2, depends=["test_double"])
        def test_after(submission):
            """runs after double."""
            assert submission.double(0) == 0
    '''))
    exercise = Exercise(name="fake", root=pytester.path, title="Fake", files=("student.py",), module="student")
    jobs = [Job(FakeSandbox(double=lambda x: 2 * x), pytester.path, 1),
            Job(FakeSandbox(double=lambda x: x + 1), pytester.path, 2),
            Job(FakeSandbox(double=lambda x: 2 * x), pytester.path, 3)]
    plugin = GradingPlugin(exercise, jobs)
    pytester.runpytest("-p", "no:cacheprovider", plugins=[plugin])
    statuses = [[(c.name, c.status) for c in job.checks] for job in jobs]
    assert statuses[0] == [("test_double", "passed"), ("test_after", "passed")]
    assert statuses[1] == [("test_double", "failed"), ("test_after", "skipped")]
    assert statuses[2] == statuses[0]  # the failure of job 2 does not carry over
    assert [job.checks[0].feedback for job in (jobs[0], jobs[2])] == [
        "module fixture made 1 time(s)", "module fixture made 3 time(s)"]
    assert all(job.done.is_set() for job in jobs)


def test_judge_session_grades_like_separate_runs(fake_course, tmp_path):
    exercise = exercises.load("fake")
    wrong = tmp_path / "bob"
    wrong.mkdir()
    (wrong / "student.py").write_text("def double(x):\n    return x + 1\n\ndef broken():\n    return 1\n")
    with judge.Judge(exercise) as session:
        together = [session.grade(folder, seed=5) for folder in (fake_course, wrong, fake_course)]
    alone = [judge.grade(exercise, folder, seed=5) for folder in (fake_course, wrong)]
    views = [[(c.name, c.status, c.feedback) for c in r.checks] for r in together + alone]
    assert views[0] == views[2] == views[3]
    assert views[1] == views[4]
    # alice: double passes (2), broken fails, the hidden check is skipped; bob the other way round.
    assert [[c.status for c in r.checks] for r in together[:2]] == [
        ["passed", "failed", "skipped"], ["failed", "passed", "passed"]]


# ---------------------------------------------------------------- failures and errors
def test_check_failure_carries_feedback_diagnosis_and_details(pytester):
    plugin, _ = run(pytester, '''
        import pytest
        from grader.plugin import CheckFailure

        @pytest.mark.check(points=2, hint="apply w_out")
        def test_cf():
            raise CheckFailure("max abs error 0.5 at index (0, 1)", "W_O forgotten",
                               {"error_map": [[0.0, 0.5]], "error_map_axes": ["token", "feature"]})
    ''')
    (c,) = plugin.checks
    assert (c.status, c.points, c.max_points) == ("failed", 0.0, 2.0)
    assert c.feedback == "max abs error 0.5 at index (0, 1)"
    assert c.diagnosis == "W_O forgotten"
    assert c.details == {"error_map": [[0.0, 0.5]], "error_map_axes": ["token", "feature"]}
    assert c.hint == "apply w_out"


def test_plain_assertion_error_is_a_failure(pytester):
    plugin, _ = run(pytester, '''
        def test_with_message():
            assert 1 + 1 == 3, "the sum is wrong"

        def test_bare():
            assert [1] == [2]

        def test_raised():
            raise AssertionError("said by hand")
    ''')
    checks = by_name(plugin)
    assert {c.status for c in plugin.checks} == {"failed"}
    assert checks["test_with_message"].feedback == "the sum is wrong"
    assert checks["test_raised"].feedback == "said by hand"
    assert checks["test_bare"].feedback  # something to show, never empty


def test_a_bug_in_the_test_code_is_a_grader_error_not_a_failure(pytester):
    plugin, _ = run(pytester, '''
        import pytest

        @pytest.mark.check(points=2)
        def test_buggy():
            return {}["missing"]

        @pytest.mark.check(points=1)
        def test_missing_fixture(no_such_fixture):
            pass
    ''')
    checks = by_name(plugin)
    buggy = checks["test_buggy"]
    assert (buggy.status, buggy.points, buggy.max_points) == ("error", 0.0, 2.0)
    assert "not your fault" in buggy.feedback and "KeyError" in buggy.feedback
    assert "KeyError" in buggy.details["traceback"]
    assert checks["test_missing_fixture"].status == "error"  # fails in setup: still the grader's fault


def test_skip_in_the_body_is_recorded_with_its_reason(pytester):
    plugin, _ = run(pytester, '''
        import pytest

        def test_s():
            pytest.skip("needs the hidden data")
    ''')
    (c,) = plugin.checks
    assert (c.status, c.feedback) == ("skipped", "needs the hidden data")


def test_submission_errors_are_the_students_failures(pytester):
    plugin, _ = run(pytester, '''
        import numpy as np

        def test_works(submission):
            assert submission.has("double") and not submission.has("triple")
            out = submission.double(np.array([1.0, 2.5]))
            assert out.tolist() == [2.0, 5.0]

        def test_missing(submission):
            submission.triple(1)

        def test_raises(submission):
            submission.boom()

        def test_path(submission, exercise):
            import pathlib
            assert submission.path == pathlib.Path.cwd()  # the folder given to the plugin
            assert exercise.name == "fake"
    ''')
    checks = by_name(plugin)
    assert checks["test_works"].status == "passed"
    assert checks["test_path"].status == "passed"
    missing, raises = checks["test_missing"], checks["test_raises"]
    assert (missing.status, missing.feedback) == ("failed", "student.py has no function triple().")
    assert (raises.status, raises.feedback) == ("failed", "boom() raised ValueError: oops")
    assert "line 3" in raises.details["traceback"]


def test_collection_errors_are_collected(pytester):
    pytester.makepyfile(test_broken="def test_x(:\n    pass\n")
    plugin, _ = run(pytester, "", files=[])
    assert len(plugin.collection_errors) == 1
    assert "test_broken.py" in plugin.collection_errors[0]


def test_checks_in_the_exercise_hidden_tests_are_marked_hidden(pytester):
    """Hidden means under EXERCISE/tests/hidden, not any folder called hidden above the course."""
    for folder in ("tests/public", "tests/hidden", "hidden"):
        (pytester.path / folder).mkdir(parents=True)
        name = folder.replace("/", "_")
        (pytester.path / folder / f"test_{name}_checks.py").write_text(f"def test_{name}():\n    pass\n")
    plugin, _ = run(pytester, "", "tests/public", "tests/hidden", "hidden", files=[])
    assert sorted((c.name, c.hidden) for c in plugin.checks) == [
        ("test_hidden", False), ("test_tests_hidden", True), ("test_tests_public", False)]


# ---------------------------------------------------------------- the seeded rng
DRAWS = '''
    import json
    import pytest
    from grader.plugin import CheckFailure

    def test_draw_a(rng):
        raise CheckFailure(json.dumps(rng.random(3).tolist()))

    def test_draw_b(rng):
        raise CheckFailure(json.dumps(rng.standard_normal(3).tolist()))

    @pytest.mark.parametrize("p", [1, 2])
    def test_draw_p(rng, p):
        raise CheckFailure(json.dumps(rng.random(3).tolist()))
'''


def draws(pytester, seed, *args):
    plugin, _ = run(pytester, DRAWS, *args, seed=seed)
    return {c.name: json.loads(c.feedback) for c in plugin.checks}


def test_rng_is_reproducible_from_seed_and_check_name(pytester):
    first, again, other = draws(pytester, 7), draws(pytester, 7), draws(pytester, 8)
    assert list(first) == ["test_draw_a", "test_draw_b", "test_draw_p[1]", "test_draw_p[2]"]
    assert first == again                                    # same seed: same numbers
    assert all(first[name] != other[name] for name in first)  # another seed: other numbers
    values = [tuple(v) for v in first.values()]
    assert len(set(values)) == 4                             # every check draws its own stream
    assert all(0 <= x < 1 for x in first["test_draw_a"])
    # Order-independent: a check run alone draws what it drew in the full run.
    assert draws(pytester, 7, "-k", "test_draw_p and 2") == {"test_draw_p[2]": first["test_draw_p[2]"]}


def test_rng_is_a_numpy_generator(pytester):
    plugin, _ = run(pytester, '''
        import numpy as np

        def test_type(rng):
            assert isinstance(rng, np.random.Generator)
    ''')
    assert plugin.checks[0].status == "passed"


# ---------------------------------------------------------------- end to end through the judge
FAKE_TOML = '''\
title = "Fake exercise"
files = ["student.py"]
module = "student"
forbidden_imports = ["torch"]
[limits]
call_timeout = 5
'''
FAKE_PUBLIC = '''\
import numpy as np
import pytest
from grader.compare import expect_array


@pytest.mark.check(points=2, hint="multiply by two")
def test_double(submission, rng):
    """double(x) is 2x."""
    x = rng.standard_normal(4)
    expect_array(submission.double(x), 2 * x, what="double(x)")


@pytest.mark.check(points=1)
def test_broken(submission):
    """broken() returns."""
    submission.broken()
'''
FAKE_HIDDEN = '''\
import pytest


@pytest.mark.check(points=1, depends=["test_broken"])
def test_after_broken(submission):
    """Checked only once broken() works."""
'''
FAKE_SUBMISSION = '''\
def double(x):
    return 2 * x


def broken():
    raise ValueError("oops")
'''


@pytest.fixture
def fake_course(tmp_path, monkeypatch):
    root = tmp_path / "course"
    ex = root / "exercises" / "fake"
    (ex / "tests" / "public").mkdir(parents=True)
    (ex / "tests" / "hidden").mkdir()
    (ex / "exercise.toml").write_text(FAKE_TOML)
    (ex / "tests" / "public" / "test_fake_public.py").write_text(FAKE_PUBLIC)
    (ex / "tests" / "hidden" / "test_fake_hidden.py").write_text(FAKE_HIDDEN)
    sub = tmp_path / "alice"
    sub.mkdir()
    (sub / "student.py").write_text(FAKE_SUBMISSION)
    monkeypatch.setenv("GRADER_COURSE_ROOT", str(root))
    monkeypatch.setattr(sys, "path", list(sys.path))  # judge.grade adds the course root
    return sub


def test_judge_grades_a_fake_exercise_end_to_end(fake_course):
    exercise = exercises.load("fake")
    assert exercise.limits.call_timeout == 5
    result = judge.grade(exercise, fake_course, seed=11)
    checks = {c.name: c for c in result.checks}
    assert list(checks) == ["test_double", "test_broken", "test_after_broken"]
    assert (checks["test_double"].status, checks["test_double"].description) == ("passed", "double(x) is 2x.")
    broken = checks["test_broken"]
    assert broken.status == "failed"
    assert broken.feedback == "broken() raised ValueError: oops"
    assert "oops" in broken.details["traceback"]
    after = checks["test_after_broken"]
    assert (after.status, after.hidden) == ("skipped", True)
    assert not checks["test_double"].hidden
    assert (result.score, result.max_score, result.seed) == (2, 4, 11)
    assert result.grader_errors == [] and result.isolation
    # Same seed, same grade; the rng draws are the same, so the feedback is too.
    again = judge.grade(exercise, fake_course, seed=11)
    assert [(c.name, c.status, c.feedback) for c in again.checks] == [
        (c.name, c.status, c.feedback) for c in result.checks]


def test_a_session_that_cannot_start_is_a_grader_error_for_every_submission(fake_course, tmp_path):
    conftest = tmp_path / "course" / "exercises" / "fake" / "tests" / "public" / "conftest.py"
    conftest.write_text("raise RuntimeError('the course broke its conftest')\n")
    with judge.Judge(exercises.load("fake")) as session:
        results = [session.grade(fake_course, seed=1) for _ in range(2)]
    for result in results:
        (check,) = result.grader_errors
        assert check.name == "pytest" and "not your fault" in check.feedback
        assert result.score == 0


CRASHING_CHECK = '''\
import pytest


@pytest.mark.check(points=1)
def test_grader_bug_on_some_submissions(submission):
    """A check with a bug that ends pytest itself on submissions holding a file CRASH."""
    if (submission.path / "CRASH").exists():
        pytest.exit("a grader bug")
'''


def test_a_session_that_dies_mid_job_is_a_grader_error_and_the_next_submission_gets_a_new_one(
        fake_course, tmp_path):
    hidden = tmp_path / "course" / "exercises" / "fake" / "tests" / "hidden"
    (hidden / "test_zz_crash.py").write_text(CRASHING_CHECK)
    crashing = tmp_path / "crashing"
    crashing.mkdir()
    (crashing / "student.py").write_text(FAKE_SUBMISSION)
    (crashing / "CRASH").write_text("")
    with judge.Judge(exercises.load("fake")) as session:
        broken, fine = session.grade(crashing, seed=1), session.grade(fake_course, seed=1)
    (error,) = broken.grader_errors
    assert error.name == "pytest" and "not your fault" in error.feedback
    assert "a grader bug" in error.details["traceback"]
    assert fine.grader_errors == [] and (fine.score, fine.max_score) == (3, 5)


def test_a_closed_judge_says_so(fake_course):
    session = judge.Judge(exercises.load("fake"))
    session.close()
    with pytest.raises(RuntimeError, match="closed"):
        session.grade(fake_course)


def test_a_cancelled_job_skips_the_checks_left(pytester):
    """What Ctrl-C does in Judge.grade: the job is cancelled and the remaining checks are skipped."""
    pytester.makepyfile(test_checks=textwrap.dedent('''
        def test_first(submission):
            submission.cancel_now()

        def test_second(submission):
            assert submission.double(1) == 2
    '''))
    exercise = Exercise(name="fake", root=pytester.path, title="Fake", files=("student.py",), module="student")
    job = Job(FakeSandbox(cancel_now=lambda: job.cancelled.set(), double=lambda x: 2 * x), pytester.path, 1)
    pytester.runpytest("-p", "no:cacheprovider", plugins=[GradingPlugin(exercise, [job])])
    assert [(c.name, c.status) for c in job.checks] == [("test_first", "passed"), ("test_second", "skipped")]
    assert "grading was stopped" in job.checks[1].feedback and job.done.is_set()
