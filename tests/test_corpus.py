"""The known-wrong corpus of exercise 3: every known mistake loses points and is named.

Each case in ``tests/corpus/exercise3/CASE/`` is a realistic student ``attention.py`` (the
reference solution with exactly one mistake) and a hand-written ``expected.toml`` (format in
``grader/corpus.py``). The expectations come from reasoning about the mistake and the check
shapes, never from running the grader and copying what it said.
"""
from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest
import torch
from conftest import ROOT

from grader import corpus
from grader.results import CheckResult, SubmissionResult

SEED = 1234
CASES = corpus.cases("exercise3")


def _load(path: Path, name: str):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


mistakes = _load(ROOT / "exercises" / "exercise3" / "tests" / "hidden" / "mistakes.py", "ex3_mistakes_corpus")

#: case -> the key of the mistake it commits, as (table, key). ``None`` for mistakes that are not
#: value variants: a wrong dtype or shape (named by grader/compare.py) or a forbidden import.
MISTAKE_OF_CASE: dict[str, tuple[str, str] | None] = {
    "heads_wrong_order": ("MHA", "heads_wrong_order"),
    "heads_wrong_join": ("MHA", "heads_wrong_join"),
    "no_out_proj": ("MHA", "no_out_proj"),
    "no_scale": ("MHA", "no_scale"),
    "scale_sqrt_d_model": ("MHA", "scale_sqrt_d_model"),
    "softmax_wrong_axis": ("MHA", "softmax_wrong_axis"),
    "mask_leaks_future": ("MHA", "mask_leaks_future"),
    "mask_blocks_diagonal": ("MHA", "mask_blocks_diagonal"),
    "mask_after_softmax": ("MHA", "mask_after_softmax"),
    "unstable_softmax": ("MHA", "unstable_softmax"),
    "float32": ("MHA", "float32"),
    "mask_ignored": ("MHA", "mask_ignored"),
    "no_residual": ("BLOCK", "no_residual"),
    "no_attn_residual": ("BLOCK", "no_attn_residual"),
    "no_mlp_residual": ("BLOCK", "no_mlp_residual"),
    "no_layer_norm": ("BLOCK", "no_layer_norm"),
    "post_norm": ("BLOCK", "post_norm"),
    "erf_gelu": ("BLOCK", "erf_gelu"),
    "relu_gelu": ("BLOCK", "relu"),
    "block_causal_ignored": ("BLOCK", "causal_ignored"),
    "sigmoid_gelu": ("GELU", "sigmoid_approx"),
    "layer_norm_unbiased_variance": ("LAYER_NORM", "unbiased_variance"),
    "layer_norm_eps_outside_sqrt": ("LAYER_NORM", "eps_outside_sqrt"),
    "layer_norm_no_affine": ("LAYER_NORM", "no_affine"),
    "softmax_axis_ignored": ("SOFTMAX", "axis_ignored"),
    "returns_float32": None,
    "drops_batch_dim": None,
    "imports_torch": None,
}

#: MHA/BLOCK mistake keys with no corpus case, and why. (Empty: every one has a case.)
NOT_COVERED: dict[str, str] = {}

#: Other diagnoses a case may legitimately get besides its own ``diagnosis`` substring.
ALSO_NAMED: dict[str, tuple[str, ...]] = {
    # the block, called with causal=True, runs the student's unmasked attention
    "mask_ignored": ("the block was called with causal=True but its attention was not masked",),
    # with T = 1, np.squeeze drops the token axis rather than the batch
    "drops_batch_dim": ("A dimension of size 1 was dropped",),
}

TABLES = {"MHA": mistakes.MHA_MISTAKES, "BLOCK": mistakes.BLOCK_MISTAKES, "SOFTMAX": mistakes.SOFTMAX_MISTAKES,
          "LAYER_NORM": mistakes.LAYER_NORM_MISTAKES, "GELU": mistakes.GELU_MISTAKES}


@pytest.fixture(scope="session")
def corpus_result(grade3):
    """Grade a corpus case once per session (fixed seed), whichever test asks first."""
    results: dict[str, SubmissionResult] = {}

    def get(case: corpus.Case) -> SubmissionResult:
        if case.name not in results:
            # The judge's tensors are tiny: torch's intra-op threads only add latency (3-4x slower
            # on a busy 2-CPU machine), so grade on one thread and restore the setting afterwards.
            threads = torch.get_num_threads()
            torch.set_num_threads(1)
            try:
                results[case.name] = grade3(case.folder, seed=SEED)
            finally:
                torch.set_num_threads(threads)
        return results[case.name]

    return get


def _show(result: SubmissionResult) -> str:
    return "\n".join(f"  {c.status:7} {c.name}: {c.diagnosis[:60]!r} | {c.feedback[:100]}"
                     for c in result.checks if c.status != "passed")


# ------------------------------------------------------------------------------ the corpus itself

@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_known_mistake_is_caught_and_named(case, corpus_result):
    result = corpus_result(case)
    problems = corpus.verify(case, result)
    assert problems == [], f"{case.name} ({case.mistake}):\n" + "\n".join(problems) + "\n" + _show(result)


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_no_check_names_a_different_mistake(case, corpus_result):
    """A diagnosis is only useful when it is right: every mistake named must be this case's one."""
    allowed = (case.diagnosis, *ALSO_NAMED.get(case.name, ()))
    wrong = sorted({c.diagnosis for c in corpus_result(case).checks
                    if c.diagnosis and not any(a.lower() in c.diagnosis.lower() for a in allowed if a)})
    assert wrong == []


def test_imports_torch_scores_zero(corpus_result):
    result = corpus_result(next(c for c in CASES if c.name == "imports_torch"))
    assert result.score == 0 and result.grader_errors == []


def test_every_mha_and_block_mistake_has_a_case():
    assert set(MISTAKE_OF_CASE) == {c.name for c in CASES}, "keep MISTAKE_OF_CASE in step with the corpus"
    covered = {key for table, key in filter(None, MISTAKE_OF_CASE.values()) if table in ("MHA", "BLOCK")}
    wanted = {("MHA", k) for k in mistakes.MHA_MISTAKES} | {("BLOCK", k) for k in mistakes.BLOCK_MISTAKES}
    missing = {key for table, key in wanted if key not in covered and key not in NOT_COVERED}
    assert missing == set()


@pytest.mark.parametrize("case", [c for c in CASES if MISTAKE_OF_CASE.get(c.name)], ids=lambda c: c.name)
def test_case_diagnosis_quotes_its_mistake_message(case):
    """The expected diagnosis is a phrase of the mapped mistake's message, so the two stay in step."""
    table, key = MISTAKE_OF_CASE[case.name]
    assert key in TABLES[table]
    assert case.diagnosis and case.diagnosis.lower() in TABLES[table][key].lower()


# --------------------------------------------------------------------------- corpus.verify itself

def _check(name, status, diagnosis="", points=1.0, feedback=""):
    return CheckResult(name=name, description=name, max_points=points, status=status,
                       diagnosis=diagnosis, feedback=feedback)


def _result(*checks):
    return SubmissionResult(exercise="exercise3", submission="x", seed=1, checks=list(checks))


CASE = corpus.Case(name="no_out_proj", folder=Path("."), mistake="W_O forgotten",
                   fails=("test_mha_parity",), passes=("test_softmax_small",), diagnosis="W_O")
RIGHT = [
    _check("test_softmax_small", "passed"),
    _check("test_mha_parity[a]", "failed", "the output projection W_O was forgotten"),
    _check("test_mha_parity[b]", "failed"),
]


def test_verify_accepts_a_result_that_meets_every_expectation():
    assert corpus.verify(CASE, _result(*RIGHT)) == []


def test_verify_reports_a_check_that_passes_but_should_fail():
    problems = corpus.verify(CASE, _result(*RIGHT[:2], _check("test_mha_parity[b]", "passed")))
    assert problems == ["test_mha_parity should fail but passed on test_mha_parity[b]"]


def test_verify_reports_the_wrong_diagnosis():
    wrong = _check("test_mha_parity[a]", "failed", "the scores were not scaled")
    problems = corpus.verify(CASE, _result(RIGHT[0], wrong, RIGHT[2]))
    assert len(problems) == 1 and "diagnosis should mention 'W_O'" in problems[0]
    assert "the scores were not scaled" in problems[0]


def test_verify_reports_a_check_that_should_pass_full_marks_and_grader_errors():
    lost = corpus.verify(CASE, _result(_check("test_softmax_small", "failed", feedback="off by 0.5"), *RIGHT[1:]))
    assert lost == ["test_softmax_small should pass but test_softmax_small failed: off by 0.5"]
    full = corpus.verify(corpus.Case(name="c", folder=Path("."), mistake="m"), _result(RIGHT[0]))
    assert full == ["got full marks (1/1)"]
    crashed = corpus.verify(CASE, _result(*RIGHT, _check("collection", "error", points=0)))
    assert crashed == ["grader error on collection"]
    absent = corpus.verify(corpus.Case(name="c", folder=Path("."), mistake="m", fails=("test_nope",)),
                           _result(*RIGHT))
    assert absent == ["no check named test_nope"]


# --------------------------------------------------------------------------- exercise 4's expectations
# Exercise 4's corpus is graded in tests/test_exercise4.py (quick mode, and in full the cases that need the
# re-training checks). Here, without grading: the expectations name real checks, and the diagnoses they
# expect quote the mistake messages, so a renamed check or reworded message shows at once.

EX4_CASES = corpus.cases("exercise4")

#: exercise-4 case -> the key of exercises/exercise4/tests/hidden/mistakes.py's MESSAGES its diagnosis quotes
#: (the partial skip's message is a template: quoted with the case's weight, 0.3).
EX4_MISTAKE_OF_CASE = {
    "residual_from_normalised": "residual_from_normalised",
    "postnorm_inside_branch": "norm_wrong_side",
    "harness_replaced": "residual_switch_ignored",
    "adamw_patched": "prenorm_switch_ignored",
    "postnorm_also_prenorm": "postnorm_also_prenorm",
    "partial_skip": "partial_skip",
}


def _ex4_checks() -> dict[str, bool]:
    """Exercise 4's check functions: name -> whether it is marked slow (a re-training check)."""
    import sys
    import warnings

    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    with warnings.catch_warnings():  # their marks (check, slow) are the grading plugin's, unknown here
        warnings.simplefilter("ignore", pytest.PytestUnknownMarkWarning)
        from exercises.exercise4.tests.hidden import test_model_hidden
        from exercises.exercise4.tests.public import test_model_public

    out = {}
    for module in (test_model_public, test_model_hidden):
        for name, fn in vars(module).items():
            marks = {m.name for m in getattr(fn, "pytestmark", [])}
            if name.startswith("test_") and "check" in marks:
                out[name] = "slow" in marks
    return out


@pytest.mark.parametrize("case", EX4_CASES, ids=lambda c: c.name)
def test_exercise4_expectations_name_its_checks(case):
    checks = _ex4_checks()
    assert [n for n in (*case.fails, *case.passes) if n not in checks] == []
    assert not set(case.fails) & set(case.passes)


@pytest.mark.parametrize("name", sorted(EX4_MISTAKE_OF_CASE))
def test_exercise4_case_diagnosis_quotes_its_mistake_message(name):
    from exercises.exercise4.tests.hidden import mistakes as ex4_mistakes

    case = next(c for c in EX4_CASES if c.name == name)
    message = ex4_mistakes.MESSAGES[EX4_MISTAKE_OF_CASE[name]].format(wrong="", right="", a=0.3)
    assert case.diagnosis and case.diagnosis.lower() in message.lower()
