"""The known-wrong corpus of exercise 3: every known mistake loses points and is named, and nothing else is.

Each case in ``tests/corpus/exercise3/CASE/`` is a realistic student ``attention.py`` (the
reference solution with one mistake, two (``pair_*``), or a small deviation no mistake explains)
and a hand-written ``expected.toml`` (format in ``grader/corpus.py``). The expectations come from
reasoning about the mistake and the check shapes, never from running the grader and copying what
it said. A name other than the case's own mistakes' (or their pair's) fails
``test_no_check_names_a_different_mistake``; the probes' findings are observations, not names.
"""
from __future__ import annotations

import importlib.util
import itertools
from pathlib import Path

import numpy as np
import pytest
import torch
from conftest import ROOT

from grader import corpus
from grader.compare import both, layout_diagnosis
from grader.results import CheckResult, SubmissionResult

SEED = 1234
CASES = corpus.cases("exercise3")


def _load(path: Path, name: str):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


mistakes = _load(ROOT / "exercises" / "exercise3" / "tests" / "hidden" / "mistakes.py", "ex3_mistakes_corpus")

#: case -> the mistakes it commits, as (table, key) pairs: one, or two for a pair case; several where one slip
#: shows under two names (a wrong layer_norm also makes the block's norms wrong). ``()`` for small deviations
#: (no name) and ``None`` for mistakes that are not value variants: a wrong dtype or shape (named by
#: grader/compare.py) or a forbidden import.
MISTAKE_OF_CASE: dict[str, tuple[tuple[str, str], ...] | None] = {
    "heads_wrong_order": (("MHA", "heads_wrong_order"),),
    "heads_wrong_join": (("MHA", "heads_wrong_join"),),
    "heads_no_transpose": (("MHA", "heads_no_transpose"),),
    "heads_reverse_order": (("MHA", "heads_reverse_order"),),
    "no_out_proj": (("MHA", "no_out_proj"),),
    "out_not_transposed": (("MHA", "out_not_transposed"),),
    "qkv_not_transposed": (("MHA", "qkv_not_transposed"),),
    "no_qkv_bias": (("MHA", "no_qkv_bias"),),
    "no_out_bias": (("MHA", "no_out_bias"),),
    "no_biases": (("MHA", "no_biases"),),
    "no_scale": (("MHA", "no_scale"),),
    "scale_sqrt_d_model": (("MHA", "scale_sqrt_d_model"),),
    "scale_d_head": (("MHA", "scale_d_head"),),
    "softmax_wrong_axis": (("MHA", "softmax_wrong_axis"),),
    "batch_mixed": (("MHA", "batch_mixed"),),
    "mask_leaks_future": (("MHA", "mask_leaks_future"),),
    "mask_blocks_diagonal": (("MHA", "mask_blocks_diagonal"),),
    "mask_inverted": (("MHA", "mask_inverted"),),
    "mask_added": (("MHA", "mask_added"),),
    "mask_after_softmax": (("MHA", "mask_after_softmax"),),
    "unstable_softmax": (("MHA", "unstable_softmax"), ("SOFTMAX", "unstable")),
    "float32": (("MHA", "float32"),),
    "mask_ignored": (("MHA", "mask_ignored"),),
    "no_residual": (("BLOCK", "no_residual"),),
    "no_attn_residual": (("BLOCK", "no_attn_residual"),),
    "no_mlp_residual": (("BLOCK", "no_mlp_residual"),),
    "residual_doubled": (("BLOCK", "residual_doubled"),),
    "residual_from_ln": (("BLOCK", "residual_from_ln"),),
    "norm_after_sublayer": (("BLOCK", "norm_after_sublayer"),),
    "no_layer_norm": (("BLOCK", "no_layer_norm"),),
    "post_norm": (("BLOCK", "post_norm"),),
    "block_eps_1e-6": (("BLOCK", "eps_1e-6"),),
    "block_inline_eps_outside_sqrt": (("BLOCK", "ln_eps_outside_sqrt"),),
    "mlp_weights_swapped": (("BLOCK", "mlp_weights_swapped"),),
    "erf_gelu": (("BLOCK", "erf_gelu"), ("GELU", "erf")),
    "relu_gelu": (("BLOCK", "relu"), ("GELU", "relu")),
    "block_causal_ignored": (("BLOCK", "causal_ignored"),),
    "sigmoid_gelu": (("GELU", "sigmoid_approx"), ("BLOCK", "sigmoid_gelu")),
    "layer_norm_unbiased_variance": (("LAYER_NORM", "unbiased_variance"), ("BLOCK", "ln_unbiased_variance")),
    "layer_norm_eps_outside_sqrt": (("LAYER_NORM", "eps_outside_sqrt"), ("BLOCK", "ln_eps_outside_sqrt")),
    "layer_norm_no_affine": (("LAYER_NORM", "no_affine"), ("BLOCK", "ln_no_affine")),
    "softmax_axis_ignored": (("SOFTMAX", "axis_ignored"),),
    "pair_no_qkv_bias_no_scale": (("MHA", "no_qkv_bias"), ("MHA", "no_scale")),
    "pair_weights_not_transposed": (("MHA", "qkv_not_transposed"), ("MHA", "out_not_transposed")),
    "pair_post_norm_erf_gelu": (("BLOCK", "post_norm"), ("BLOCK", "erf_gelu"), ("GELU", "erf")),
    "pair_no_mlp_residual_relu": (("BLOCK", "no_mlp_residual"), ("BLOCK", "relu")),
    "pair_batch_mixed_mask_leaks_future": (("MHA", "batch_mixed"), ("MHA", "mask_leaks_future")),
    "softmax_eps_in_denominator": (),
    "block_off_by_1e-5": (),
    "gelu_constant_rounded": (),
    "returns_float32": None,
    "drops_batch_dim": None,
    "imports_torch": None,
    # held-out cases (heldout_*), labels written from each case's code before grading: mistakes no variant
    # computes get no name (); a single or pair that is a variant gets its key(s)
    "heldout_mlp_bias_after_gelu": (),
    "heldout_mask_minus_1e4": (),
    "heldout_softmax_global_sum": (),
    "heldout_layer_norm_batch_axis": (),
    "heldout_layer_norm_std_squared": (),  # correct: full marks
    "heldout_scale_on_values": (),
    "heldout_heads_d_head_first": (),
    "heldout_block_ln1_twice": (),
    "heldout_gelu_constant_0447": (),
    "heldout_mask_tril_neg_inf": (("MHA", "mask_inverted"),),
    "heldout_dropout_left_on": (),
    "heldout_float16_scores": (),
    "heldout_pair_no_out_bias_mask_leaks_future": (("MHA", "no_out_bias"), ("MHA", "mask_leaks_future")),
    "heldout_pair_ln_eps_outside_relu": (("LAYER_NORM", "eps_outside_sqrt"), ("GELU", "relu"),
                                         ("BLOCK", "ln_eps_outside_sqrt"), ("BLOCK", "relu")),
    "heldout_mask_scores_zeroed": (),
    "heldout_mask_triu_times_inf": (),
    # revised after grading (first written ()): where Q's bias cannot show, the output is b_qkv left out
    "heldout_qkv_bias_only_q": (("MHA", "no_qkv_bias"),),
    "heldout_softmax_over_heads": (),
    "heldout_parallel_block": (),
    "heldout_gelu_sqrt_2pi": (),
}

#: MHA/BLOCK mistake keys with no corpus case, and why.
NOT_COVERED: dict[str, str] = {
    "mask_added_keep": "the other 0/1 mask added (same slip, same sentence as mask_added); its variant is "
                       "checked against torch's float attn_mask in test_exercise3_attention_variants.py",
}

#: Other diagnoses a case may legitimately get besides its own mistakes' sentences (substrings).
ALSO_NAMED: dict[str, tuple[str, ...]] = {
    # the block, called with causal=True, runs the student's unmasked attention
    "mask_ignored": ("the block was called with causal=True but its attention was not masked",),
    # with T = 1, np.squeeze drops the token axis rather than the batch
    "drops_batch_dim": ("A dimension of size 1 was dropped",),
}

TABLES = {"MHA": mistakes.MHA_MISTAKES, "BLOCK": mistakes.BLOCK_MISTAKES, "SOFTMAX": mistakes.SOFTMAX_MISTAKES,
          "LAYER_NORM": mistakes.LAYER_NORM_MISTAKES, "GELU": mistakes.GELU_MISTAKES}
#: What the layout checks name (grader/compare.py's layout_diagnosis), for telling names from findings.
LAYOUT_NAMES = tuple(layout_diagnosis(got, shape) for got, shape in (
    (np.zeros((1, 2, 3), np.float32), (1, 2, 3)), (np.zeros((2, 3)), (1, 2, 3)), (np.zeros((3, 4)), (3, 1, 4)),
    (np.zeros((1, 3, 2)), (1, 2, 3))))
KNOWN_NAMES = {m for table in TABLES.values() for m in table.values()} | set(LAYOUT_NAMES)


def is_name(diagnosis: str) -> bool:
    """Whether a diagnosis names a mistake: one of the tables' sentences, a pair of them, a layout slip. The
    behavioural probes' findings (also shown as a diagnosis) are observations, not names."""
    return diagnosis in KNOWN_NAMES or diagnosis.startswith(both("", "").split("(1)")[0])


def _allowed_names(case: corpus.Case) -> set[str]:
    """The names ``case`` may get: its mistakes' sentences and, for two of them, the pair's sentence."""
    own = [TABLES[table][key] for table, key in MISTAKE_OF_CASE.get(case.name) or ()]
    return set(own) | {both(a, b) for a in own for b in own if a != b}


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
    problems = corpus.verify(case, result, names=lambda check: is_name(check.diagnosis))
    assert problems == [], f"{case.name} ({case.mistake}):\n" + "\n".join(problems) + "\n" + _show(result)


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_no_check_names_a_different_mistake(case, corpus_result):
    """A diagnosis is only useful when it is right: every mistake named must be one this case makes."""
    allowed, also = _allowed_names(case), ALSO_NAMED.get(case.name, ())
    if MISTAKE_OF_CASE[case.name] is None:  # a layout slip: named by its phrase
        also = (*also, *case.diagnoses)
    wrong = sorted({c.diagnosis for c in corpus_result(case).checks
                    if is_name(c.diagnosis) and c.diagnosis not in allowed
                    and not any(a.lower() in c.diagnosis.lower() for a in also)})
    assert wrong == []


def test_imports_torch_scores_zero(corpus_result):
    result = corpus_result(next(c for c in CASES if c.name == "imports_torch"))
    assert result.score == 0 and result.grader_errors == []


def test_every_mha_and_block_mistake_has_a_case():
    assert set(MISTAKE_OF_CASE) == {c.name for c in CASES}, "keep MISTAKE_OF_CASE in step with the corpus"
    covered = {key for table, key in itertools.chain(*filter(None, MISTAKE_OF_CASE.values()))
               if table in ("MHA", "BLOCK")}
    wanted = set(mistakes.MHA_MISTAKES) | set(mistakes.BLOCK_MISTAKES)
    assert wanted - covered == set(NOT_COVERED)
    pairs = [c for c in CASES if len({k for t, k in MISTAKE_OF_CASE[c.name] or () if t in ("MHA", "BLOCK")}) == 2]
    assert len(pairs) >= 4
    assert len([c for c in CASES if c.unnamed and not c.full_marks]) >= 2


@pytest.mark.parametrize("case", [c for c in CASES if MISTAKE_OF_CASE.get(c.name)], ids=lambda c: c.name)
def test_case_diagnosis_quotes_its_mistakes_messages(case):
    """Each expected substring is a phrase of one of the case's mistakes' sentences (or of a pair's), so the
    two stay in step; a pair case expects both sentences' phrases."""
    sentences = [TABLES[table][key].lower() for table, key in MISTAKE_OF_CASE[case.name]]
    assert case.diagnoses and not case.unnamed
    for phrase in case.diagnoses:
        assert phrase.lower() in both("", "").lower() or any(phrase.lower() in s for s in sentences), phrase


def test_is_name_tells_names_from_findings():
    assert is_name(mistakes.MHA_MISTAKES["no_scale"]) and is_name(LAYOUT_NAMES[1])
    assert is_name(both(mistakes.MHA_MISTAKES["no_scale"], mistakes.MHA_MISTAKES["no_qkv_bias"]))
    assert not is_name("") and not is_name("in multi_head_attention: changing token 5 moved your output at token 3")
    assert len(set(LAYOUT_NAMES)) == 4 and "" not in LAYOUT_NAMES


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


def test_verify_wants_every_substring_of_a_list_in_one_check():
    pair = corpus.Case(name="p", folder=Path("."), mistake="two", diagnoses=("two mistakes", "W_O", "scaled"))
    split = _result(_check("a", "failed", "two mistakes together: W_O forgotten"), _check("b", "failed", "not scaled"))
    assert "diagnosis should mention 'two mistakes' and 'W_O' and 'scaled'" in corpus.verify(pair, split)[0]
    together = _result(_check("a", "failed", "two mistakes together: (1) W_O forgotten; (2) not scaled"))
    assert corpus.verify(pair, together) == []
    assert corpus.Case(name="c", folder=Path("."), mistake="m", diagnosis="W_O").diagnoses == ("W_O",)


def test_verify_unnamed_and_full_marks_cases():
    unnamed = corpus.Case(name="u", folder=Path("."), mistake="small", unnamed=True)
    findings = _check("b", "failed", "changing token 5 moved your output at token 3")
    findings.details["diagnosis_from"] = "findings"
    assert corpus.verify(unnamed, _result(_check("a", "failed"), findings)) == []
    assert corpus.verify(unnamed, _result(_check("a", "failed", "the scores were not scaled"))) == [
        "a names a mistake: 'the scores were not scaled'"]
    # a caller's own test of what a name is (the probes' findings in public checks are not marked)
    assert corpus.verify(unnamed, _result(_check("a", "failed", "the scores were not scaled")),
                         names=lambda c: False) == []
    full = corpus.Case(name="f", folder=Path("."), mistake="right to 1e-8", full_marks=True)
    assert corpus.verify(full, _result(RIGHT[0])) == []
    assert corpus.verify(full, _result(*RIGHT)) == ["lost points (1/3) but should get full marks"]


def test_cases_reads_lists_and_flags(tmp_path, monkeypatch):
    case = tmp_path / "tests" / "corpus" / "exercise9" / "two"
    case.mkdir(parents=True)
    (tmp_path / "exercises").mkdir()
    (case / "expected.toml").write_text('mistake = "m"\ndiagnosis = ["a", "b"]\nunnamed = true\n'
                                        'full_marks = true\nfails = ["test_x"]\n')
    monkeypatch.setenv("GRADER_COURSE_ROOT", str(tmp_path))
    [read] = corpus.cases("exercise9")
    assert (read.diagnosis, read.diagnoses, read.unnamed, read.full_marks, read.fails) == (
        "a", ("a", "b"), True, True, ("test_x",))


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
