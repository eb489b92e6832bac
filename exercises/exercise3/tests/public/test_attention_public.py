"""Exercise 3, public checks: the ones you can read. The hidden checks work the same way on
many more shapes (n_heads = 1, n_heads = d_model, T = 1, d_model = 48, causal and not,
inputs scaled x1000).

Every expected value comes from PyTorch or from a hand derivation written here. PyTorch's answers
for the public cases are stored with their inputs in ``tests/cases/`` (``tests/cases.py``), with what
each known mistake returns for them, so these checks give the same verdict and name the same
mistakes wherever they run.
"""
import math

import numpy as np
import pytest

from exercises.exercise3.tests import cases
from exercises.exercise3.tests.checks import ATOL, GATES
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


def _check_case(submission, probes, name: str, what: str) -> None:
    """Call the student's function on stored case ``name`` and compare with PyTorch's stored answer; on a
    mismatch name the stored mistake it matches, or else give the probes' findings for the function."""
    case = cases.case(name)
    got = case.call(getattr(submission, case.function))
    expect_array(got, case.expected, what=what, atol=ATOL, mistakes=case.known_mistakes,
                 findings=probes.sentences(case.function, submission),
                 input_scale=float(np.abs(case.inputs["x"]).max()))


def _report(found) -> None:
    """Fail a probe check with its findings (each names a component and what was observed)."""
    if found:
        raise CheckFailure(f"The probes found {len(found)} problem(s) by comparing your function with itself.",
                           "; ".join(f.observation for f in found), {"diagnosis_from": "findings"})


def _check_layout(submission, name: str, what: str) -> None:
    """Fail unless the student's function returns a float64 array of the stored case's shape."""
    case = cases.case(name)
    out = case.call(getattr(submission, case.function))
    shape = case.expected.shape
    if not isinstance(out, np.ndarray) or out.shape != shape or out.dtype != np.float64:
        got = f"shape {out.shape}, dtype {out.dtype}" if isinstance(out, np.ndarray) else type(out).__name__
        raise CheckFailure(f"{what} returned {got}; expected a float64 array of shape {shape}.",
                           layout_diagnosis(out, shape))


def _mha_call(name: str) -> str:
    case = cases.case(name)
    B, T, d = case.inputs["x"].shape
    scale = "1000 * x, " if "large" in name else ""
    return (f"multi_head_attention({scale}B={B}, T={T}, d_model={d}, n_heads={case.args['n_heads']}, "
            f"causal={case.args['causal']})")


def _block_call(name: str) -> str:
    case = cases.case(name)
    B, T, d = case.inputs["x"].shape
    return f"transformer_block(B={B}, T={T}, d_model={d}, n_heads={case.args['n_heads']}, causal={case.args['causal']})"


@pytest.mark.check(points=1, depends=GATES, hint="exp(x - max) / sum(exp(x - max)) along the given axis.")
def test_softmax_small(submission):
    """softmax(ln [1, 2, 3]) is [1/6, 2/6, 3/6] and softmax([7, 7, 7]) is [1/3, 1/3, 1/3] (by hand)."""
    # exp(ln k) = k, so each entry is k / (1 + 2 + 3); equal entries share the mass equally.
    x = np.array([[math.log(1), math.log(2), math.log(3)], [7.0, 7.0, 7.0]])
    expected = np.array([[1 / 6, 2 / 6, 3 / 6], [1 / 3, 1 / 3, 1 / 3]])
    expect_array(submission.softmax(x), expected, what="softmax([[ln 1, ln 2, ln 3], [7, 7, 7]])", atol=ATOL)
    # Along axis 0: the column (ln 1, ln 3) becomes (1/4, 3/4).
    column = np.array([[math.log(1)], [math.log(3)]])
    expect_array(submission.softmax(column, axis=0), np.array([[0.25], [0.75]]),
                 what="softmax([[ln 1], [ln 3]], axis=0)", atol=ATOL)


@pytest.mark.check(points=1, depends=GATES,
                   hint="Use the axis you are given for the max and the sum (keepdims=True), and subtract the "
                        "maximum before exp so that large inputs cannot overflow.")
def test_softmax_cases(submission, probes):
    """softmax matches torch.softmax on a (3, 4, 5) input along axes -1, 0 and 1, and on inputs of size ~1000."""
    for name, axis in (("softmax_last", -1), ("softmax_axis0", 0), ("softmax_axis1", 1)):
        _check_case(submission, probes, name, f"softmax(x of shape (3, 4, 5), axis={axis})")
    _check_case(submission, probes, "softmax_large", "softmax(1000 * x)")


@pytest.mark.check(points=1, depends=GATES,
                   hint="Mean and biased variance over the last axis; eps goes inside the square root; "
                        "then scale by weight and shift by bias.")
def test_layer_norm_case(submission, probes):
    """layer_norm matches torch.nn.functional.layer_norm, including two rows with a tiny variance."""
    _check_case(submission, probes, "layer_norm", "layer_norm(x of shape (2, 4, 10), weight, bias, eps=1e-5)")


@pytest.mark.check(points=0.5, depends=GATES,
                   hint="Use the tanh form: 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))).")
def test_gelu_case(submission, probes):
    """gelu matches torch's GELU with the tanh approximation (as GPT-2)."""
    _check_case(submission, probes, "gelu", "gelu(x of shape (5, 7))")


@pytest.mark.check(points=1, depends=GATES,
                   hint="Split into heads, attend, join the heads back: the output has the input's shape.")
def test_mha_shape(submission):
    """multi_head_attention returns a float64 array of shape (B, T, d_model)."""
    _check_layout(submission, "mha", _mha_call("mha"))


@pytest.mark.check(points=2, depends=["test_mha_shape"],
                   hint="Q, K, V come from one x @ w_qkv.T + b_qkv; scale scores by 1/sqrt(d_head); "
                        "end with the output projection w_out.")
def test_mha_matches_torch_small(submission, probes):
    """multi_head_attention matches torch.nn.MultiheadAttention on small cases (B=2, T=5, d=12, h=3; B=1; T=1)."""
    for name in ("mha", "mha_b1", "mha_t1"):
        _check_case(submission, probes, name, _mha_call(name))


@pytest.mark.check(points=1, depends=["test_mha_shape"],
                   hint="With causal=True, set the scores of later tokens (key index > query index) to -inf "
                        "before the softmax; subtract the row maximum of the scores before exp.")
def test_mha_causal_case(submission, probes):
    """multi_head_attention matches torch.nn.MultiheadAttention with a causal mask, also on inputs x1000."""
    for name in ("mha_causal", "mha_causal_large"):
        _check_case(submission, probes, name, _mha_call(name))


@pytest.mark.check(points=1, depends=GATES, hint="Each half of the block adds its result to x (the residual stream).")
def test_block_shape(submission):
    """transformer_block returns a float64 array of shape (B, T, d_model)."""
    _check_layout(submission, "block_causal", _block_call("block_causal"))


@pytest.mark.check(points=1, depends=["test_block_shape"],
                   hint="Fix the checks of layer_norm, gelu and multi_head_attention first if any fail (the block "
                        "uses them). Then: pre-norm, x = x + attn(ln1(x)); x = x + mlp(ln2(x)), with the tanh GELU "
                        "in the MLP, and causal passed on to the attention.")
def test_block_case(submission, probes):
    """transformer_block matches the reference torch pre-norm block, causal and not."""
    for name in ("block_causal", "block"):
        _check_case(submission, probes, name, _block_call(name))


# ------------------------------------------------------------------------------------- probes (0 points)
# Each compares your function with itself on designed inputs (grader/probes): it names the part at fault
# with what was observed, and costs nothing: the value checks above and the hidden ones hold the points.

@pytest.mark.check(points=0, depends=GATES, hint="Each finding names the part of the function at fault.")
def test_small_functions_behaviour(submission, probes):
    """softmax, layer_norm and gelu behave as they must (rows sum to 1, shift invariance, mean 0 and the
    biased variance, weight and bias applied, eps used as given)."""
    _report([f for kind in ("softmax", "layer_norm", "gelu") for f in probes.findings(kind, submission)])


@pytest.mark.check(points=0, depends=["test_mha_shape"], hint="Each finding names the part of the attention at fault.")
def test_mha_behaviour(submission, probes):
    """multi_head_attention behaves as attention must: causal mask, batch independence, biases, weight layout,
    heads split and joined in order, attention weights that sum to 1 with the 1/sqrt(d_head) scale."""
    _report(probes.findings("multi_head_attention", submission))


@pytest.mark.check(points=0, depends=["test_block_shape"], hint="Each finding names the part of the block at fault.")
def test_block_behaviour(submission, probes):
    """transformer_block behaves as a pre-norm block must: the residual stream carries x through, layer norms
    before each sub-layer, the MLP and its activation, causal passed on, batch elements kept apart."""
    _report(probes.findings("transformer_block", submission))
