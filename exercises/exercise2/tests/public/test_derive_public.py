"""Exercise 2, public checks: the ones you can read. The hidden checks work the same way on the four
constants and on more than twenty random configurations (d_model up to 192, 2 to 8 heads, MLP ratios
3, 5, 6 and 8, with and without biases and layer norms, tied and untied embeddings).

Every expected count is ``sum(p.numel() for p in module.parameters())`` of a real PyTorch module built with
that configuration (``reference.py``), never a number typed into a test.
"""
import pytest

from exercises.exercise2.tests.checks import (CONSTANTS, FUNCTIONS, GATES, expect_function_count,
                                              read_constant, reference)
from grader.plugin import CheckFailure
from grader.static import forbidden_imports, parse

# A small GPT you could also count by hand: vocab 100, 16 positions, d_model 24, 3 layers, 4 heads.
SMALL_GPT = dict(vocab_size=100, n_ctx=16, d_model=24, n_layer=3, n_heads=4, mlp_ratio=4)


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
                   hint="Attention: W_Q, W_K, W_V, W_O, each d x d. MLP: d -> 4d -> d, two matrices.")
def test_block_params_lesson(submission):
    """block_params(768, 12) counts the lesson's block (no biases, no layer norm) as PyTorch does."""
    config = dict(d_model=768, n_heads=12)
    expect_function_count(submission, "block_params", config, reference.block_count(**config), positional=True)


@pytest.mark.check(points=1, depends=GATES,
                   hint="Each linear layer has one bias per output; each layer norm a weight and a bias of d_model.")
def test_block_params_lesson_with_bias_and_ln(submission):
    """block_params(768, 12, bias=True, layer_norm=True) counts the lesson's block with biases and both norms."""
    config = dict(d_model=768, n_heads=12, mlp_ratio=4, bias=True, layer_norm=True)
    expect_function_count(submission, "block_params", config, reference.block_count(**config))


@pytest.mark.check(points=0.5, depends=GATES,
                   hint="Token and position embeddings, n_layer blocks with biases and two norms, a final "
                        "norm, and an LM head that is free when tied.")
@pytest.mark.parametrize("tied", [True, False], ids=["tied", "untied"])
def test_gpt_params_small(submission, tied):
    """gpt_params counts a small GPT as PyTorch does (vocab 100, n_ctx 16, d_model 24, 3 layers, 4 heads)."""
    config = dict(SMALL_GPT, tied=tied)
    expect_function_count(submission, "gpt_params", config, reference.gpt_count(**config))
