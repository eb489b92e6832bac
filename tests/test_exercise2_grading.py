"""Exercise 2 (derive the parameter count): the checks' readers, the solution and skeleton, and grading.

- ``exercises/exercise2/tests/checks.py``: ``as_count`` takes ints and NumPy integers and explains every other
  answer; ``as_share`` reads one number.
- The reference solution matches torch's counts and the lesson's numbers; the skeleton has its signatures and
  no answers; the two define exactly the contract. The checks never type in an expected number.
- Grading: the reference solution gets full marks (at least 20 hidden random configurations among its checks),
  the skeleton zero without grader errors, and every known-wrong corpus case loses the points and gets the
  diagnosis its ``expected.toml`` says, and no check names a mistake the case does not make (its ``named``
  list, written by hand from its derive.py).

torch's counts themselves and mistakes.py are tested in ``test_exercise2.py``.
"""
from __future__ import annotations

import importlib.util
import inspect
import re
import tomllib
from pathlib import Path

import numpy as np
import pytest
from conftest import ROOT
from exercise2_shapes import BLOCK_SHAPES, EX2, GPT_SHAPES  # first: it puts the project root on sys.path

from exercises.exercise2.tests import checks, reference
from exercises.exercise2.tests.hidden import mistakes
from grader import corpus
from grader.plugin import CheckFailure
from grader.sandbox.wire import Unsupported


def _load(path: Path, name: str):
    """Import a module from a file path (solution and skeleton folders are not packages)."""
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


solution = _load(ROOT / "solutions" / "exercise2" / "derive.py", "ex2_solution")
skeleton = _load(EX2 / "skeleton" / "derive.py", "ex2_skeleton")


# ---------------------------------------------------------------------------------- types

def test_as_count_accepts_ints_and_numpy_integers():
    assert checks.as_count(7, "x", 7) == 7
    assert checks.as_count(np.int64(7), "x", 7) == 7
    assert type(checks.as_count(np.uint32(7), "x", 7)) is int


@pytest.mark.parametrize("value, text", [
    (7.0, "is the float 7.0; its value is right, but"),
    (np.float64(8.0), "its value is wrong too (expected 7)"),
    (True, "is True, a bool"),
    ("7,077,888", "is the string '7,077,888'"),
    (None, "is None"),
    (np.zeros(3), "a NumPy array of shape (3,)"),
    (Unsupported("Fraction"), "is a Fraction object"),
    ([7], "is a list"),
])
def test_as_count_rejects_everything_else_with_a_clear_message(value, text):
    with pytest.raises(CheckFailure) as info:
        checks.as_count(value, "x", 7)
    assert text in info.value.feedback


def test_as_share_reads_numbers_and_rejects_the_rest():
    assert checks.as_share(2, "s") == 2.0 and checks.as_share(np.float32(0.5), "s") == 0.5
    for value in (None, "2/3", True, Unsupported("Fraction")):
        with pytest.raises(CheckFailure, match="expected one number between 0 and 1"):
            checks.as_share(value, "s")


# ------------------------------------------------------------------ solution and skeleton

@pytest.mark.parametrize("layer_norm", [False, True], ids=["noln", "ln"])
@pytest.mark.parametrize("bias", [False, True], ids=["nobias", "bias"])
@pytest.mark.parametrize("shape", BLOCK_SHAPES, ids=lambda s: "d{}h{}r{}".format(*s))
def test_solution_block_params_matches_torch(shape, bias, layer_norm):
    d, h, r = shape
    got = solution.block_params(d, h, r, bias, layer_norm)
    assert type(got) is int and got == reference.block_count(d, h, r, bias, layer_norm)


@pytest.mark.parametrize("tied", [True, False], ids=["tied", "untied"])
@pytest.mark.parametrize("shape", GPT_SHAPES, ids=lambda s: "V{}T{}d{}L{}h{}r{}".format(*s))
def test_solution_gpt_params_matches_torch(shape, tied):
    got = solution.gpt_params(*shape, tied=tied)
    assert type(got) is int and got == reference.gpt_count(*shape, tied)


def test_solution_constants_are_the_lessons_numbers():
    assert solution.BLOCK_PARAMS_NO_BIAS == 7_077_888
    assert solution.BLOCK_PARAMS_WITH_BIAS_AND_LN == 7_087_872
    assert solution.GPT2_SMALL_PARAMS == 124_439_808
    assert solution.MLP_SHARE == pytest.approx(2 / 3, abs=1e-15)
    assert all(type(getattr(solution, n)) is int for n in checks.CONSTANTS[:3])


def test_skeleton_has_the_solutions_signatures_and_no_answers():
    for name in checks.FUNCTIONS:
        sk, sol = getattr(skeleton, name), getattr(solution, name)
        assert inspect.signature(sk) == inspect.signature(sol)
        assert list(inspect.signature(sk).parameters) == checks.FUNCTIONS[name]
        assert sk.__doc__ and sol.__doc__
        with pytest.raises(NotImplementedError):
            sk(*[1] * len(checks.FUNCTIONS[name]))
    for name in checks.CONSTANTS:
        assert getattr(skeleton, name) is None and hasattr(solution, name)


def test_skeleton_and_solution_define_exactly_the_contract():
    for module in (skeleton, solution):
        public = {k for k, v in vars(module).items() if not k.startswith("_") and not inspect.ismodule(v)}
        assert public == set(checks.FUNCTIONS) | set(checks.CONSTANTS), module.__name__


def test_no_expected_number_is_typed_into_the_checks():
    """The judge's truth is torch's count: the published numbers appear in no check file."""
    numbers = ["7077888", "7087872", "124439808", "2359296", "4718592", "163037184"]
    for path in sorted((EX2 / "tests").rglob("*.py")):
        digits = re.sub(r"(?<=\d)[_,](?=\d)", "", path.read_text(encoding="utf-8"))
        for number in numbers:
            assert number not in digits, f"{path.relative_to(ROOT)} types in {number}"


# ------------------------------------------------------------------------------ grading

def test_reference_solution_gets_full_marks(grade2):
    result = grade2(ROOT / "solutions" / "exercise2")
    failed = [(c.name, c.status, c.feedback) for c in result.checks if c.status != "passed"]
    assert failed == []
    assert result.score == result.max_score == 23
    random_items = [c for c in result.checks if c.name.startswith(("test_block_params_random[",
                                                                  "test_gpt_params_random["))]
    assert len(random_items) >= 20 and all(c.hidden for c in random_items)


def test_skeleton_gets_zero_without_crashing(grade2):
    result = grade2(EX2 / "skeleton")
    assert result.score == 0
    assert result.grader_errors == []
    assert len([c for c in result.checks if "not implemented yet" in c.feedback]) >= 20
    assert len([c for c in result.checks if "replace the skeleton's None" in c.feedback]) == 3


CASES = corpus.cases("exercise2")


def test_the_corpus_has_a_case_for_every_named_mistake():
    diagnoses = [case.diagnosis.lower() for case in CASES if case.diagnosis]
    sentences = ([("block", k, m) for k, m in mistakes.BLOCK_MISTAKES.items()]
                 + [("gpt", k, m) for k, m in mistakes.GPT_MISTAKES.items()]
                 + [("share", k, m) for k, m in mistakes.SHARE_MISTAKES.items()]
                 + [("heads", "note", checks.HEADS_NOTE), ("fixed", "note", checks.FIXED_NOTE)])
    missing = [(kind, key) for kind, key, sentence in sentences
               if not any(d in sentence.lower() for d in diagnoses)]
    assert missing == []
    assert len(CASES) >= 30


def _expected(case: corpus.Case) -> dict:
    """The case's expected.toml: besides corpus.Case's fields, ``named`` (the mistakes it makes, keys of
    mistakes.py: a block key, ``block.KEY`` where gpt_params runs the faulty block_params, a GPT key,
    ``share.KEY``) and ``notes`` (the measured notes it may get: "heads", "fixed")."""
    return tomllib.loads((case.folder / "expected.toml").read_text(encoding="utf-8"))


def _sentence(key: str) -> str:
    """What the student is told for the mistake ``key`` (two keys with one sentence are one name)."""
    if key.startswith("share."):
        return mistakes.SHARE_MISTAKES[key.removeprefix("share.")]
    return mistakes.gpt_message(key) if key in mistakes.GPT_MISTAKES or "." in key else mistakes.BLOCK_MISTAKES[key]


def wrong_names(case: corpus.Case, result) -> list[str]:
    """Every diagnosis of ``result`` that names something the case does not do: a known mistake whose sentence
    is none of the case's ``named`` mistakes', a note the case does not allow, or a diagnosis the checks
    gave without saying what it names (details "mistakes" / "notes")."""
    expected = _expected(case)
    allowed = {_sentence(k) for k in expected.get("named", [])}
    notes = set(expected.get("notes", []))
    wrong = []
    for check in result.checks:
        if not check.diagnosis:
            continue
        keys, said = check.details.get("mistakes", []), check.details.get("notes", [])
        if not keys and not said:
            wrong.append(f"{check.name}: unaccounted diagnosis {check.diagnosis!r}")
        wrong += [f"{check.name}: names {k}" for k in keys if _sentence(k) not in allowed]
        wrong += [f"{check.name}: notes {n}" for n in said if n not in notes]
    return wrong


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_corpus_case(grade2, case):
    """The case loses the points its expected.toml says, gets its diagnosis, and no check names a mistake it
    does not make (a wrong name is worse than none)."""
    result = grade2(case.folder)
    assert corpus.verify(case, result) == []
    assert wrong_names(case, result) == []


def test_every_corpus_case_says_what_it_names():
    """Each case lists the mistakes it makes (by hand, from its derive.py); a case with a diagnosis names some."""
    for case in CASES:
        expected = _expected(case)
        assert "named" in expected, case.name
        for key in expected["named"]:
            _sentence(key)  # a known key
        assert set(expected.get("notes", [])) <= {"heads", "fixed"}, case.name
        if case.diagnosis:
            assert expected["named"] or expected.get("notes"), case.name
