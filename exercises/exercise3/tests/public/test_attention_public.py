"""Exercise 3, public checks: the ones you can read. The hidden checks work the same way on
many more shapes (n_heads = 1, n_heads = d_model, T = 1, d_model = 48, causal and not,
inputs scaled x1000).

Every expected value comes from PyTorch or from a hand derivation written here.
"""
import math

import numpy as np
import pytest

from exercises.exercise3.tests.checks import ATOL, GATES, draw_x, mha_mistakes, reference, torch_seed
from grader.compare import expect_array, layout_diagnosis
from grader.plugin import CheckFailure
from grader.static import forbidden_imports, parse

FUNCTIONS = {
    "softmax": ["x", "axis"],
    "layer_norm": ["x", "weight", "bias", "eps"],
    "gelu": ["x"],
    "multi_head_attention": ["x", "w_qkv", "b_qkv", "w_out", "b_out", "n_heads", "causal"],
    "transformer_block": ["x", "params", "n_heads", "causal"],
}


@pytest.mark.check(points=0, hint="Run `python attention.py` yourself to see the error.")
def test_module_loads(submission, exercise):
    """attention.py parses and imports without error."""
    path = submission.path / "attention.py"
    if path.is_file():
        try:
            parse(path)
        except SyntaxError as exc:
            raise CheckFailure(f"attention.py has a syntax error on line {exc.lineno}: {exc.msg}.")
    submission.has("softmax")  # raises SubmissionError with the import error, if any


@pytest.mark.check(points=0, hint="Use only NumPy: the point is to build attention yourself.")
def test_uses_only_numpy(submission, exercise):
    """The submission imports no ML library (torch, tensorflow, jax, ...)."""
    found = forbidden_imports(submission.path, exercise.forbidden_imports)
    if found:
        raise CheckFailure("Exercise 3 is NumPy only, so every check is skipped: " + "; ".join(found) + ".")


@pytest.mark.check(points=0, depends=["test_module_loads"],
                   hint="Keep the function names and parameters of the skeleton (see README.md).")
def test_contract_signatures(submission):
    """All five functions exist with the parameters of the contract."""
    problems = []
    for name, params in FUNCTIONS.items():
        if not submission.has(name):
            problems.append(f"{name}() is missing")
            continue
        got = [p[0] for p in submission.signature(name)]
        if got[: len(params)] != params:
            problems.append(f"{name}({', '.join(got)}) should be {name}({', '.join(params)})")
    if problems:
        raise CheckFailure("; ".join(problems) + ".")


@pytest.mark.check(points=1, depends=GATES, hint="exp(x - max) / sum(exp(x - max)) along the given axis.")
def test_softmax_small(submission):
    """softmax(ln [1, 2, 3]) is [1/6, 2/6, 3/6] and softmax([7, 7, 7]) is [1/3, 1/3, 1/3] (by hand)."""
    # exp(ln k) = k, so each entry is k / (1 + 2 + 3); equal entries share the mass equally.
    x = np.array([[math.log(1), math.log(2), math.log(3)], [7.0, 7.0, 7.0]])
    expected = np.array([[1 / 6, 2 / 6, 3 / 6], [1 / 3, 1 / 3, 1 / 3]])
    expect_array(submission.softmax(x), expected, what="softmax([[ln 1, ln 2, ln 3], [7, 7, 7]])", atol=1e-12)
    # Along axis 0: the column (ln 1, ln 3) becomes (1/4, 3/4).
    column = np.array([[math.log(1)], [math.log(3)]])
    expect_array(submission.softmax(column, axis=0), np.array([[0.25], [0.75]]),
                 what="softmax([[ln 1], [ln 3]], axis=0)", atol=1e-12)


@pytest.mark.check(points=1, depends=GATES,
                   hint="Split into heads, attend, join the heads back: the output has the input's shape.")
def test_mha_shape(submission, rng):
    """multi_head_attention returns a float64 array of shape (B, T, d_model)."""
    B, T, d, h = 2, 5, 12, 3
    weights = reference.random_attention_weights(d, h, torch_seed(rng))
    out = submission.multi_head_attention(draw_x(rng, B, T, d), *weights, n_heads=h)
    if not isinstance(out, np.ndarray) or out.shape != (B, T, d) or out.dtype != np.float64:
        got = f"shape {out.shape}, dtype {out.dtype}" if isinstance(out, np.ndarray) else type(out).__name__
        raise CheckFailure(f"multi_head_attention(x of shape {(B, T, d)}, n_heads={h}) returned {got}; "
                           f"expected a float64 array of shape {(B, T, d)}.", layout_diagnosis(out, (B, T, d)))


@pytest.mark.check(points=2, depends=["test_mha_shape"],
                   hint="Q, K, V come from one x @ w_qkv.T + b_qkv; scale scores by 1/sqrt(d_head); "
                        "end with the output projection w_out.")
def test_mha_matches_torch_small(submission, rng):
    """multi_head_attention matches torch.nn.MultiheadAttention on one small case (B=2, T=5, d=12, h=3)."""
    B, T, d, h = 2, 5, 12, 3
    weights = reference.random_attention_weights(d, h, torch_seed(rng))
    x = draw_x(rng, B, T, d)
    got = submission.multi_head_attention(x, *weights, n_heads=h, causal=False)
    expect_array(got, reference.multi_head_attention(x, *weights, n_heads=h, causal=False), atol=ATOL,
                 what=f"multi_head_attention(B={B}, T={T}, d_model={d}, n_heads={h})",
                 mistakes=mha_mistakes(x, weights, h, causal=False))


@pytest.mark.check(points=1, depends=GATES, hint="Each half of the block adds its result to x (the residual stream).")
def test_block_shape(submission, rng):
    """transformer_block returns a float64 array of shape (B, T, d_model)."""
    B, T, d, h = 2, 5, 12, 3
    params = reference.random_block_params(d, h, torch_seed(rng))
    out = submission.transformer_block(draw_x(rng, B, T, d), params, n_heads=h)
    if not isinstance(out, np.ndarray) or out.shape != (B, T, d) or out.dtype != np.float64:
        got = f"shape {out.shape}, dtype {out.dtype}" if isinstance(out, np.ndarray) else type(out).__name__
        raise CheckFailure(f"transformer_block(x of shape {(B, T, d)}) returned {got}; "
                           f"expected a float64 array of shape {(B, T, d)}.", layout_diagnosis(out, (B, T, d)))

