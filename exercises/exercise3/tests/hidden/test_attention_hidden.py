"""Exercise 3, hidden checks: parity with PyTorch over many shapes, at 1e-6 in float64.

Truth: ``torch.nn.MultiheadAttention(batch_first=True)`` and a reference torch pre-norm
block with the same weights, ``torch.softmax``, ``torch.nn.functional.layer_norm`` and
``torch.nn.functional.gelu(approximate="tanh")`` (PyTorch docs). Shapes cover the cases
that hide classic bugs (DESIGN.md): n_heads = 1, n_heads = d_model, T = 1, B = 1,
d_model not a power of two, causal and not, inputs scaled x1000.
"""
import pytest
import torch
import torch.nn.functional as F

from exercises.exercise3.tests.checks import (ATOL, GATES, block_mistakes, draw_x, mha_mistakes, mistakes,
                                              reference, simple_mistakes, torch_seed)
from grader.compare import expect_array

# (B, T, d_model, n_heads, causal): T never equals n_heads, so a heads/tokens mix-up shows.
MHA_CASES = [
    (2, 7, 16, 4, False), (2, 7, 16, 4, True),
    (1, 5, 12, 3, False),                       # B = 1
    (3, 1, 16, 4, False), (3, 1, 16, 4, True),  # T = 1
    (2, 6, 8, 1, False), (2, 6, 8, 1, True),    # one head
    (2, 5, 8, 8, False), (2, 5, 8, 8, True),    # n_heads = d_model (d_head = 1)
    (2, 9, 48, 6, False), (2, 9, 48, 6, True),  # d_model not a power of two
    (2, 11, 20, 5, True),
]
BLOCK_CASES = [(2, 7, 16, 4, True), (1, 5, 48, 6, True), (2, 6, 20, 5, False), (3, 1, 16, 2, True)]


def _case_id(case):
    B, T, d, h, causal = case
    return f"B{B}_T{T}_d{d}_h{h}" + ("_causal" if causal else "")


@pytest.mark.check(points=0.5, depends=GATES, hint="Normalise along the axis you are given, not always the last one.")
@pytest.mark.parametrize("axis", [-1, 0, 1])
def test_softmax_matches_torch(submission, probes, rng, axis):
    """softmax matches torch.softmax along the given axis."""
    x = 2.5 * rng.standard_normal((3, 4, 5)) + 0.7
    expected = torch.softmax(torch.from_numpy(x), dim=axis).numpy()
    expect_array(submission.softmax(x, axis=axis), expected, what=f"softmax(x of shape (3, 4, 5), axis={axis})",
                 atol=ATOL, mistakes=simple_mistakes(mistakes.SOFTMAX_MISTAKES,
                                                     lambda k: mistakes.softmax_variant(x, axis, mistake=k)),
                 findings=probes.sentences("softmax", submission))


@pytest.mark.check(points=0.5, depends=GATES, hint="Subtract the maximum along the axis before exp.")
def test_softmax_large_inputs(submission, probes, rng):
    """softmax stays finite and correct on inputs of magnitude ~1000."""
    x = 1000.0 * rng.standard_normal((4, 6))
    expected = torch.softmax(torch.from_numpy(x), dim=-1).numpy()
    expect_array(submission.softmax(x), expected, what="softmax(1000 * x)", atol=ATOL, input_scale=1000.0,
                 mistakes=simple_mistakes(mistakes.SOFTMAX_MISTAKES,
                                          lambda k: mistakes.softmax_variant(x, -1, mistake=k)),
                 findings=probes.sentences("softmax", submission))


@pytest.mark.check(points=1, depends=GATES,
                   hint="Mean and biased variance over the last axis; eps goes inside the square root; "
                        "then scale by weight and shift by bias.")
def test_layer_norm_matches_torch(submission, probes, rng):
    """layer_norm matches torch.nn.functional.layer_norm, including rows with a tiny variance."""
    d = 10
    x = 1.5 + 3.0 * rng.standard_normal((2, 4, d))
    x[1, :2] = 0.2 + 0.01 * rng.standard_normal((2, d))  # low-variance rows: where eps placement shows
    weight, bias = 1.0 + 0.5 * rng.standard_normal(d), 0.5 * rng.standard_normal(d)
    expected = F.layer_norm(torch.from_numpy(x), (d,), torch.from_numpy(weight), torch.from_numpy(bias),
                            eps=1e-5).numpy()
    expect_array(submission.layer_norm(x, weight, bias, eps=1e-5), expected, what="layer_norm(x, weight, bias)",
                 atol=ATOL, mistakes=simple_mistakes(
                     mistakes.LAYER_NORM_MISTAKES, lambda k: mistakes.layer_norm_variant(x, weight, bias, 1e-5, k)),
                 findings=probes.sentences("layer_norm", submission))


@pytest.mark.check(points=0.5, depends=GATES, hint="Use the tanh form: 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))).")
def test_gelu_matches_torch(submission, probes, rng):
    """gelu matches torch's GELU with the tanh approximation (as GPT-2)."""
    x = 3.0 * rng.standard_normal((5, 7))
    expected = F.gelu(torch.from_numpy(x), approximate="tanh").numpy()
    expect_array(submission.gelu(x), expected, what="gelu(x)", atol=ATOL,
                 mistakes=simple_mistakes(mistakes.GELU_MISTAKES, lambda k: mistakes.gelu_variant(x, k)),
                 findings=probes.sentences("gelu", submission))


@pytest.mark.check(points=0.5, depends=["test_mha_shape"],
                   hint="Reshape (B, T, d) -> (B, T, h, d_head) -> transpose to (B, h, T, d_head); "
                        "scale by 1/sqrt(d_head); mask before softmax; join heads; apply w_out.")
@pytest.mark.parametrize("case", MHA_CASES, ids=_case_id)
def test_mha_parity(submission, probes, rng, case):
    """multi_head_attention matches torch.nn.MultiheadAttention with the same weights."""
    B, T, d, h, causal = case
    weights = reference.random_attention_weights(d, h, torch_seed(rng))
    x = draw_x(rng, B, T, d)
    got = submission.multi_head_attention(x, *weights, n_heads=h, causal=causal)
    expect_array(got, reference.multi_head_attention(x, *weights, n_heads=h, causal=causal), atol=ATOL,
                 what=f"multi_head_attention(B={B}, T={T}, d_model={d}, n_heads={h}, causal={causal})",
                 mistakes=lambda: mha_mistakes(x, weights, h, causal),
                 findings=probes.sentences("multi_head_attention", submission))


@pytest.mark.check(points=1, depends=["test_mha_shape"],
                   hint="Subtract the row maximum of the scores before exp, and keep everything float64.")
def test_mha_large_inputs(submission, probes, rng):
    """multi_head_attention stays finite and exact on inputs scaled x1000 (causal)."""
    B, T, d, h = 2, 6, 16, 4
    weights = reference.random_attention_weights(d, h, torch_seed(rng))
    x = 1000.0 * draw_x(rng, B, T, d)
    got = submission.multi_head_attention(x, *weights, n_heads=h, causal=True)
    expect_array(got, reference.multi_head_attention(x, *weights, n_heads=h, causal=True), atol=ATOL,
                 what=f"multi_head_attention(1000 * x, n_heads={h}, causal=True)",
                 mistakes=lambda: mha_mistakes(x, weights, h, causal=True),
                 findings=probes.sentences("multi_head_attention", submission))


@pytest.mark.check(points=0.75, depends=["test_block_shape"],
                   hint="Fix the checks of layer_norm, gelu and multi_head_attention first if any fail (the block "
                        "uses them). Then: pre-norm, x = x + attn(ln1(x)); x = x + mlp(ln2(x)), with the tanh GELU "
                        "in the MLP.")
@pytest.mark.parametrize("case", BLOCK_CASES, ids=_case_id)
def test_block_parity(submission, probes, rng, case):
    """transformer_block matches the reference torch pre-norm block with the same weights."""
    B, T, d, h, causal = case
    params = reference.random_block_params(d, h, torch_seed(rng))
    x = draw_x(rng, B, T, d)
    got = submission.transformer_block(x, params, n_heads=h, causal=causal)
    expect_array(got, reference.transformer_block(x, params, n_heads=h, causal=causal), atol=ATOL,
                 what=f"transformer_block(B={B}, T={T}, d_model={d}, n_heads={h}, causal={causal})",
                 mistakes=lambda: block_mistakes(x, params, h, causal),
                 findings=probes.sentences("transformer_block", submission))


@pytest.mark.check(points=1, depends=["test_block_shape"],
                   hint="Fix the checks of layer_norm, gelu and multi_head_attention first if any fail (the block "
                        "uses them). The residual stream carries large values through unchanged; layer norm handles "
                        "the scale.")
def test_block_large_inputs(submission, probes, rng):
    """transformer_block stays finite and exact on inputs scaled x1000."""
    B, T, d, h = 2, 5, 16, 4
    params = reference.random_block_params(d, h, torch_seed(rng))
    x = 1000.0 * draw_x(rng, B, T, d)
    got = submission.transformer_block(x, params, n_heads=h, causal=True)
    expect_array(got, reference.transformer_block(x, params, n_heads=h, causal=True), atol=ATOL,
                 what="transformer_block(1000 * x, causal=True)", mistakes=lambda: block_mistakes(x, params, h, True),
                 findings=probes.sentences("transformer_block", submission))
