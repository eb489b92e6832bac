"""Exercise specs: loading exercise.toml, and a bad spec named with the file it came from."""
import tomllib

import pytest
from conftest import ROOT

from grader import exercises
from grader.exercises import Limits, SpecError


def test_exercise3_spec_matches_its_toml(exercise3):
    raw = tomllib.loads((ROOT / "exercises" / "exercise3" / "exercise.toml").read_text())
    assert exercise3.name == "exercise3"
    assert exercise3.title == raw["title"]
    assert exercise3.files == tuple(raw["files"])
    assert exercise3.module == raw["module"]
    assert exercise3.forbidden_imports == tuple(raw["forbidden_imports"])
    assert exercise3.limits.call_timeout == raw["limits"]["call_timeout"]
    assert exercise3.limits.memory_mb == raw["limits"]["memory_mb"]
    assert exercise3.root == ROOT / "exercises" / "exercise3"
    assert exercise3.skeleton == exercise3.root / "skeleton"
    assert exercise3.solution() == ROOT / "solutions" / "exercise3"
    assert exercise3.test_dirs == [exercise3.root / "tests" / "public", exercise3.root / "tests" / "hidden"]
    assert exercise3.has_hidden_tests


def test_available_lists_exercise3():
    names = exercises.available()
    assert "exercise3" in names and names == sorted(names)


def test_unknown_exercise_lists_the_known_ones():
    with pytest.raises(SpecError, match=r"unknown exercise 'nosuch'; known exercises: .*exercise3"):
        exercises.load("nosuch")


# ---------------------------------------------------------------- a course of our own
@pytest.fixture
def course(tmp_path, monkeypatch):
    """write(toml) -> the exercise 'ex' loaded from a course folder holding only that spec."""
    monkeypatch.setenv("GRADER_COURSE_ROOT", str(tmp_path))
    folder = tmp_path / "exercises" / "ex"
    folder.mkdir(parents=True)

    def write(text):
        (folder / "exercise.toml").write_text(text)
        return exercises.load("ex")

    return write


GOOD = 'title = "T"\nfiles = ["a.py"]\nmodule = "a"\n'


def test_minimal_spec_gets_the_default_limits(course):
    ex = course(GOOD)
    assert (ex.files, ex.module, ex.forbidden_imports, ex.limits) == (("a.py",), "a", (), Limits())
    assert ex.test_dirs == [] and not ex.has_hidden_tests


def test_module_is_optional(course):
    assert course('title = "Prose"\nfiles = ["answer.md"]\n').module == ""


def test_float_call_timeout_is_fine(course):
    assert course(GOOD + "[limits]\ncall_timeout = 2.5\ncpu = 30\n").limits == Limits(call_timeout=2.5, cpu=30)


@pytest.mark.parametrize("text, words", [
    # A string where a list is meant: tuple("torch") would ban "t", "o", ... and not torch.
    (GOOD + 'forbidden_imports = "torch"\n', "invalid forbidden_imports 'torch'"),
    ('title = "T"\nfiles = "a.py"\nmodule = "a"\n', "invalid files 'a.py'"),
    (GOOD + "forbidden_imports = [1]\n", "invalid forbidden_imports [1]"),
    (GOOD + '[limits]\ncpu = "x"\n', "invalid limits.cpu 'x'"),
    (GOOD + "[limits]\ncpu = 1.5\n", "invalid limits.cpu 1.5"),        # setrlimit needs a whole number
    (GOOD + "[limits]\nmemory_mb = 0\n", "invalid limits.memory_mb 0"),
    (GOOD + "[limits]\ncall_timeout = -1\n", "invalid limits.call_timeout -1"),
    (GOOD + "[limits]\nprocesses = true\n", "invalid limits.processes True"),
    (GOOD + "[limits]\ncpus = 10\n", "cpus"),                         # a misspelt limit
    ('files = ["a.py"]\n', "title"),                                     # a missing key
    ('title = "T\n', "invalid"),                                         # not TOML
])
def test_bad_spec_is_named_with_its_file(course, text, words):
    with pytest.raises(SpecError) as info:
        course(text)
    message = info.value.message
    assert words in message
    assert "exercise.toml" in message


def test_course_root_without_exercises_folder(tmp_path, monkeypatch):
    monkeypatch.setenv("GRADER_COURSE_ROOT", str(tmp_path))
    with pytest.raises(SpecError, match="no exercises/ folder under"):
        exercises.course_root()
