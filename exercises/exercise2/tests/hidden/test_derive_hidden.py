"""Exercise 2, hidden checks: the four constants and the two functions on random configurations.

Truth: ``sum(p.numel() for p in module.parameters())`` of the torch reference modules (``reference.py``,
built on the meta device) for the configuration asked, never a typed-in number. The configurations are
drawn from the run's seed and avoid the coincidences that hide mistakes: n_heads >= 2 and an MLP ratio
other than 1, 2 or 4 (the lesson's ratio 4 is checked by the constants and the public checks).
"""
import pytest

from exercises.exercise2.tests import reference
from exercises.exercise2.tests.checks import (GATES, SHARE_ATOL, as_count, as_share, draw_block_config,
                                              draw_gpt_config, expect_constant_count, expect_function_count,
                                              explain, read_constant)
from exercises.exercise2.tests.hidden import mistakes, naming
from grader.plugin import CheckFailure

LESSON = reference.LESSON_BLOCK
LESSON_WITH = dict(LESSON, bias=True, layer_norm=True)
GPT2 = reference.GPT2_SMALL


@pytest.mark.check(points=2, depends=GATES,
                   hint="Attention 4·d² (W_Q, W_K, W_V, W_O) plus MLP 2·4·d² (d -> 4d -> d), with d = 768.")
def test_block_no_bias_constant(submission):
    """BLOCK_PARAMS_NO_BIAS is the count of the lesson's block without biases or layer norm."""
    expect_constant_count(submission, "BLOCK_PARAMS_NO_BIAS", reference.block_count(**LESSON),
                          "the lesson's block (d_model 768, 12 heads, MLP ratio 4, no biases, no layer norm)",
                          "block_params", LESSON)


@pytest.mark.check(points=2, depends=GATES,
                   hint="Add one bias per output of every linear layer, and a weight and a bias of d for each "
                        "of the two layer norms.")
def test_block_with_bias_and_ln_constant(submission):
    """BLOCK_PARAMS_WITH_BIAS_AND_LN is the count of the lesson's block with biases and its two layer norms."""
    expect_constant_count(submission, "BLOCK_PARAMS_WITH_BIAS_AND_LN", reference.block_count(**LESSON_WITH),
                          "the lesson's block with biases and two layer norms", "block_params", LESSON_WITH)


@pytest.mark.check(points=2, depends=GATES,
                   hint="Token embedding 50257·768, position embedding 1024·768, 12 blocks with biases and "
                        "norms, a final layer norm; the tied LM head adds nothing.")
def test_gpt2_small_constant(submission):
    """GPT2_SMALL_PARAMS is the count of GPT-2 small with tied embeddings."""
    expect_constant_count(submission, "GPT2_SMALL_PARAMS", reference.gpt_count(**GPT2),
                          "GPT-2 small (vocab 50257, n_ctx 1024, d_model 768, 12 layers, 12 heads, tied "
                          "embeddings)", "gpt_params", GPT2)


@pytest.mark.check(points=1, depends=GATES, hint="MLP / (attention + MLP) in the bare block: 8·d² / 12·d².")
def test_mlp_share_constant(submission):
    """MLP_SHARE is the MLP's share of the bare block's parameters, as a fraction."""
    expected = reference.mlp_share(**LESSON)
    got = as_share(read_constant(submission, "MLP_SHARE"), "MLP_SHARE")
    if abs(got - expected) <= SHARE_ATOL:
        return
    key = naming.name_share(got, LESSON, SHARE_ATOL)
    diagnosis, details = (mistakes.SHARE_MISTAKES[key], {"mistakes": ["share." + key]}) if key else ("", {})
    raise CheckFailure(f"MLP_SHARE = {got!r}; torch's MLP / block for the lesson's bare block is {expected!r}.",
                       diagnosis, details)


def _block_case_id(case):
    bias, layer_norm, i = case
    return ("bias" if bias else "nobias") + ("_ln" if layer_norm else "_noln") + f"_{i}"


BLOCK_CASES = [(bias, ln, i) for bias in (False, True) for ln in (False, True) for i in range(3)]


@pytest.mark.check(points=0.5, depends=GATES,
                   hint="Write the count with d_model, mlp_ratio, bias and layer_norm: attention 4·d², MLP "
                        "2·r·d², biases and norms only when asked.")
@pytest.mark.parametrize("case", BLOCK_CASES, ids=_block_case_id)
def test_block_params_random(submission, rng, case):
    """block_params matches PyTorch's count on a random block configuration."""
    bias, layer_norm, _ = case
    config = draw_block_config(rng, bias, layer_norm)
    expect_function_count(submission, "block_params", config, reference.block_count(**config))


@pytest.mark.check(points=1, depends=GATES,
                   hint="The heads split d_model into slices: W_Q, W_K, W_V, W_O stay d x d in total.")
def test_block_params_heads_do_not_matter(submission):
    """block_params(96, n_heads) matches PyTorch for every n_heads that divides 96 (1 to 96): heads cost nothing."""
    d, counts = 96, {}
    expected = reference.block_count(d, 1, 4, bias=True, layer_norm=True)
    for n_heads in (1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 96):
        config = dict(d_model=d, n_heads=n_heads, mlp_ratio=4, bias=True, layer_norm=True)
        assert reference.block_count(**config) == expected
        what = f"block_params(d_model={d}, n_heads={n_heads}, mlp_ratio=4, bias=True, layer_norm=True)"
        counts[n_heads] = as_count(submission.block_params(**config), what, expected)
    wrong = [h for h, got in counts.items() if got != expected]
    if not wrong:
        return
    h = wrong[0]
    config = dict(d_model=d, n_heads=h, mlp_ratio=4, bias=True, layer_norm=True)
    findings, diagnosis, details = explain(submission, "block_params", config, counts[h])
    if len(set(counts.values())) > 1:
        measured = ", ".join(f"{got:,} with n_heads={n}" for n, got in list(counts.items())[:4])
        said = f" Your counts change with n_heads: {measured}, ..."
    else:
        said = f" Your count is the same for every n_heads, {counts[h]:,}, as it should be, but it is not torch's."
    raise CheckFailure(f"block_params(d_model={d}, n_heads={h}, mlp_ratio=4, bias=True, layer_norm=True) returned "
                       f"{counts[h]:,}; torch counts {expected:,} (the same for every number of heads).{said}"
                       + (f" {findings}" if findings else ""),
                       diagnosis, {"expected": expected, "got": counts[h], **details})


def _gpt_case_id(case):
    tied, i = case
    return ("tied" if tied else "untied") + f"_{i}"


GPT_CASES = [(tied, i) for tied in (True, False) for i in range(5)]


@pytest.mark.check(points=0.5, depends=GATES,
                   hint="V·d + n_ctx·d + n_layer blocks (biases, two norms) + final norm 2·d + LM head "
                        "(V·d only when untied, no bias).")
@pytest.mark.parametrize("case", GPT_CASES, ids=_gpt_case_id)
def test_gpt_params_random(submission, rng, case):
    """gpt_params matches PyTorch's count on a random GPT configuration."""
    tied, _ = case
    config = draw_gpt_config(rng, tied)
    expect_function_count(submission, "gpt_params", config, reference.gpt_count(**config))


@pytest.mark.check(points=1, depends=GATES,
                   hint="gpt_params(50257, 1024, 768, 12, 12) is GPT-2 small; untied, the LM head adds 50257·768.")
def test_gpt_params_gpt2_small(submission):
    """gpt_params counts GPT-2 small as PyTorch does, with tied and with untied embeddings."""
    for tied in (True, False):
        config = dict(GPT2, tied=tied)
        expect_function_count(submission, "gpt_params", config, reference.gpt_count(**config))
