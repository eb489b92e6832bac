"""Exercise 2, public checks: the ones you can read. The hidden checks work the same way on the four
constants and on more than twenty random configurations (d_model up to 192, 2 to 8 heads, MLP ratios
3, 5, 6 and 8, with and without biases and layer norms, tied and untied embeddings).

Every expected count is ``sum(p.numel() for p in module.parameters())`` of a real PyTorch module built with
that configuration, never a number typed into a test: here, torch's counts for a few small configurations
(none of them the lesson's), stored in ``stored_counts.toml`` by the grader's own tests. A wrong count
also gets what your function does when one argument changes, where that breaks a property of every
correct count (``properties.py``).
"""
import pytest

import numpy as np

from exercises.exercise2.tests.checks import (CONSTANTS, FUNCTIONS, GATES, as_count, call_text,
                                              expect_function_count, own_counts, read_constant, stored_count)
from grader.plugin import CheckFailure
from grader.static import forbidden_imports, parse

#: Small blocks you could also count by hand (the first is called positionally, as block_params(40, 5)).
SMALL_BLOCKS = [dict(d_model=40, n_heads=5), dict(d_model=42, n_heads=7, mlp_ratio=3)]
#: A small GPT: vocab 100, 16 positions, d_model 24, 3 layers, 4 heads.
SMALL_GPT = dict(vocab_size=100, n_ctx=16, d_model=24, n_layer=3, n_heads=4, mlp_ratio=4)
#: The lesson's configuration of each count constant (README, the task).
LESSON_CALLS = {
    "BLOCK_PARAMS_NO_BIAS": ("block_params", dict(d_model=768, n_heads=12)),
    "BLOCK_PARAMS_WITH_BIAS_AND_LN": ("block_params", dict(d_model=768, n_heads=12, mlp_ratio=4, bias=True,
                                                           layer_norm=True)),
    "GPT2_SMALL_PARAMS": ("gpt_params", dict(vocab_size=50257, n_ctx=1024, d_model=768, n_layer=12, n_heads=12)),
}


@pytest.mark.check(points=0, hint="Run `python derive.py` yourself to see the error.")
def test_module_loads(submission, exercise):
    """derive.py parses and imports without error."""
    path = submission.path / "derive.py"
    if path.is_file():
        try:
            parse(path)
        except SyntaxError as exc:
            raise CheckFailure(f"derive.py has a syntax error on line {exc.lineno}: {exc.msg}.")
    submission.has("block_params")  # raises SubmissionError with the import error, if any


@pytest.mark.check(points=0, hint="Derive the count with arithmetic: the point is to know where every parameter is.")
def test_uses_no_ml_library(submission, exercise):
    """The submission imports no ML library (torch, tensorflow, jax, ...): the counts are derived, not counted."""
    found = forbidden_imports(submission.path, exercise.forbidden_imports)
    if found:
        raise CheckFailure("Exercise 2 asks you to derive the counts, not to count a library's module, so every "
                           "check is skipped: " + "; ".join(found) + ".")


@pytest.mark.check(points=0, depends=["test_module_loads"],
                   hint="Keep the names and parameters of the skeleton (see README.md).")
def test_contract_names(submission):
    """The four constants and the two functions exist, with the parameters of the contract."""
    problems = []
    for name, params in FUNCTIONS.items():
        if not submission.has(name):
            problems.append(f"{name}() is missing")
            continue
        got = [p[0] for p in submission.signature(name)]
        if got[: len(params)] != params:
            problems.append(f"{name}({', '.join(got)}) should be {name}({', '.join(params)})")
    for name in CONSTANTS:
        try:
            read_constant(submission, name)
        except CheckFailure:
            problems.append(f"the constant {name} is missing")
    if problems:
        raise CheckFailure("; ".join(problems) + ".")


@pytest.mark.check(points=1, depends=GATES,
                   hint="Attention: W_Q, W_K, W_V, W_O, each d x d. MLP: d -> r·d -> d, two matrices.")
def test_block_params_small(submission):
    """block_params counts two small blocks (no biases, no layer norm) as PyTorch does: block_params(40, 5)
    and block_params(d_model=42, n_heads=7, mlp_ratio=3)."""
    for i, config in enumerate(SMALL_BLOCKS):
        expect_function_count(submission, "block_params", config, stored_count("block_params", config),
                              positional=i == 0)


@pytest.mark.check(points=1, depends=GATES,
                   hint="Each linear layer has one bias per output; each layer norm a weight and a bias of d_model.")
def test_block_params_small_with_bias_and_ln(submission):
    """block_params counts the same two blocks with biases and both layer norms as PyTorch does."""
    for small in SMALL_BLOCKS:
        config = dict(small, mlp_ratio=small.get("mlp_ratio", 4), bias=True, layer_norm=True)
        expect_function_count(submission, "block_params", config, stored_count("block_params", config))


@pytest.mark.check(points=0.5, depends=GATES,
                   hint="Token and position embeddings, n_layer blocks with biases and two norms, a final "
                        "norm, and an LM head that is free when tied.")
@pytest.mark.parametrize("tied", [True, False], ids=["tied", "untied"])
def test_gpt_params_small(submission, tied):
    """gpt_params counts a small GPT as PyTorch does (vocab 100, n_ctx 16, d_model 24, 3 layers, 4 heads)."""
    config = dict(SMALL_GPT, tied=tied)
    expect_function_count(submission, "gpt_params", config, stored_count("gpt_params", config))


@pytest.mark.check(points=0, depends=GATES,
                   hint="Compute each constant with your own function, e.g. BLOCK_PARAMS_NO_BIAS = block_params(768, 12).")
def test_constants_agree_with_your_functions(submission):
    """The three count constants are what your own functions return for the lesson's configurations.

    Whether those numbers are right is checked when your work is graded (the lesson's counts are hidden).
    """
    disagree, compared = [], 0
    for name, (function, config) in LESSON_CALLS.items():
        own = own_counts(submission, function)(config)
        if own is None:
            continue  # the function's own checks say why
        compared += 1
        value = read_constant(submission, name)
        if isinstance(value, (float, np.floating)):
            disagree.append(f"{name} is the float {value!r}: a count is a whole number (an int)")
            continue
        got = as_count(value, name, own, constant=True)
        if got != own:
            disagree.append(f"{name} = {got:,}, but your {function}({call_text(config)}) returns {own:,}")
    if not compared:
        pytest.skip("not checked: your functions return no count for the lesson's configurations")
    if disagree:
        raise CheckFailure("; ".join(disagree) + ". One of each is wrong; both are checked when your work is graded.")
