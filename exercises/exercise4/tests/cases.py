"""Exercise 4's structure checks without the reference: what runs in a student's bundle.

The judge compares the student's exported block and GPT with the reference torch model
(``tests/reference.py``). That file implements every mode -- the answer -- so it does not ship; in the
bundle :func:`structure.check_block` and :func:`structure.check_gpt` call :func:`check_block` and
:func:`check_gpt` here instead, which use only

* **stored cases** (``tests/cases/*.npz``): for the public shape, per mode, random weights under the
  skeleton's ``state_dict`` names, an input ``x``, the reference block's output in eval mode, a
  cotangent and the reference's gradients of ``sum(output * cotangent)``. They are written on the judge
  side from the reference (by the grader's own tests, which also check that they still agree with it);
  numbers, not code.
* **properties every correct block or GPT has**, checked on the student's graph against itself:
  with the sub-layers' output projections zeroed each mode has a known output; the attention is causal
  and batch elements do not mix; training mode computes what eval mode computes; autograd's gradient
  is the derivative of the output (a central finite difference along a random direction agrees).

Shapes: a block takes and returns (B, T, d_model) float64; a GPT takes (B, n_ctx) int64 token ids and
returns (B, n_ctx, vocab_size) logits. Every comparison is in float64, relative to the expected value's
scale (``structure.ATOL``). Every failure raises :class:`grader.plugin.CheckFailure` with the numbers.
"""
from __future__ import annotations

import dataclasses
import functools
from pathlib import Path

import numpy as np

from exercises.exercise4.tests import settings, structure
from grader.compare import expect_array
from grader.plugin import CheckFailure

#: Where the stored cases are (one ``.npz`` per block shape).
CASES = Path(__file__).resolve().parent / "cases"
#: Block shapes (B, T, d_model, n_heads) with a stored case, and its file: the public checks' shape.
BLOCK_CASES = {(2, 7, 32, 4): CASES / "block_B2_T7_d32_h4.npz"}
#: ``nn.LayerNorm``'s default epsilon (the skeleton's layer norms).
LN_EPS = 1e-5
#: Step of the central finite difference along a unit direction of all parameters (float64). Measured
#: on the reference solution (blocks of four shapes in four modes, the three trained GPTs): the largest
#: relative difference to autograd is 4.5e-9 with this step, 7.4e-8 with 1e-3 (the error of the
#: difference grows as step^2) and 5.6e-8 with 1e-5 (rounding grows as 1 / step).
FD_STEP = 1e-4
#: Largest relative difference between autograd's directional derivative and the finite difference: 2000
#: times the largest measured on the reference solution; a gradient hidden from autograd was off by 0.05
#: to 1.8 (a detached MLP, a detached final layer norm).
FD_RTOL = 1e-5
#: What each mode of a block returns when both sub-layers output 0 (their c_proj weights and biases zeroed).
ZEROED_SUBLAYERS = {
    "prenorm": "x unchanged (x + 0, twice)",
    "no-residual": "zeros (each sub-layer's 0 replaces x)",
    "postnorm": "ln2(ln1(x)) (the layer norms of x + 0)",
    "postnorm-no-residual": "ln2.bias at every token (ln1(0) is ln1.bias, the MLP of it is 0, ln2(0) is ln2.bias)",
}
#: The sub-layers' output projections: zeroing them makes each sub-layer output 0.
OUTPUT_PROJECTIONS = ("attn.c_proj.weight", "attn.c_proj.bias", "mlp.c_proj.weight", "mlp.c_proj.bias")


def block_shapes(d_model: int) -> dict[str, tuple[int, ...]]:
    """The skeleton's block parameters: ``state_dict`` name -> shape (``nn.Linear`` weights are (out, in))."""
    d = d_model
    return {"ln1.weight": (d,), "ln1.bias": (d,), "attn.c_attn.weight": (3 * d, d), "attn.c_attn.bias": (3 * d,),
            "attn.c_proj.weight": (d, d), "attn.c_proj.bias": (d,), "ln2.weight": (d,), "ln2.bias": (d,),
            "mlp.c_fc.weight": (4 * d, d), "mlp.c_fc.bias": (4 * d,), "mlp.c_proj.weight": (d, 4 * d),
            "mlp.c_proj.bias": (d,)}


def gpt_names(n_layer: int, d_model: int) -> set[str]:
    """The skeleton GPT's parameter names (``lm_head.weight`` is tied to ``wte.weight``)."""
    names = {"wte.weight", "wpe.weight", "ln_f.weight", "ln_f.bias", "lm_head.weight"}
    return names | {f"h.{i}.{n}" for i in range(n_layer) for n in block_shapes(d_model)}


def random_weights(shapes: dict[str, tuple], rng: np.random.Generator) -> dict[str, np.ndarray]:
    """float64 weights for ``shapes``: matrices ~ N(0, 1/fan_in) (fan_in = the second axis), vectors ~
    N(0, 0.5^2), layer-norm scales (a 1-D ``weight`` of a module named ``ln*``) ~ 1 + N(0, 0.5^2), so no
    bug hides behind a zero bias or an identity layer norm."""
    out = {}
    for name, shape in sorted(shapes.items()):
        shape = tuple(int(s) for s in shape)
        if len(shape) >= 2:
            out[name] = rng.standard_normal(shape) / np.sqrt(shape[1])
        else:
            out[name] = 0.5 * rng.standard_normal(shape)
            parts = name.split(".")
            if len(parts) >= 2 and parts[-2].startswith("ln") and parts[-1] == "weight":
                out[name] += 1.0
    return out


# ---------------------------------------------------------------------------------------- stored cases

@dataclasses.dataclass
class BlockCase:
    """One stored case of one mode (all float64 once loaded).

    Attributes:
        weights: skeleton name -> array (``block_shapes``).
        x: (B, T, d) input.
        out: (B, T, d) the reference block's output in eval mode.
        cotangent: (B, T, d) the weights of ``sum(out * cotangent)``.
        grads: skeleton name -> d sum(out * cotangent) / d weight, and ``"x"`` -> d/dx.
    """

    weights: dict[str, np.ndarray]
    x: np.ndarray
    out: np.ndarray
    cotangent: np.ndarray
    grads: dict[str, np.ndarray]


def pack(cases: dict[str, BlockCase]) -> dict[str, np.ndarray]:
    """Cases by mode as the arrays of one ``.npz`` ("MODE/weights/NAME", "MODE/x", "MODE/out",
    "MODE/cotangent", "MODE/grads/NAME"); arrays keep their dtype (inputs may be stored as float32)."""
    arrays = {}
    for mode, case in cases.items():
        arrays.update({f"{mode}/weights/{k}": v for k, v in case.weights.items()})
        arrays.update({f"{mode}/grads/{k}": v for k, v in case.grads.items()})
        arrays.update({f"{mode}/x": case.x, f"{mode}/out": case.out, f"{mode}/cotangent": case.cotangent})
    return arrays


def unpack(arrays) -> dict[str, BlockCase]:
    """The inverse of :func:`pack` (any mapping of arrays, e.g. an open ``.npz``); every array as float64.

    Raises:
        KeyError: a mode lacks x, out or cotangent.
    """
    found: dict[str, dict] = {}
    for key in arrays.keys():
        mode, field = key.split("/", 1)
        found.setdefault(mode, {})[field] = np.asarray(arrays[key], dtype=np.float64)
    return {mode: BlockCase(weights={k.split("/", 1)[1]: v for k, v in f.items() if k.startswith("weights/")},
                            grads={k.split("/", 1)[1]: v for k, v in f.items() if k.startswith("grads/")},
                            x=f["x"], out=f["out"], cotangent=f["cotangent"])
            for mode, f in found.items()}


@functools.lru_cache(maxsize=4)
def stored_cases(shape: tuple) -> dict[str, BlockCase] | None:
    """The stored cases of block ``shape`` (B, T, d_model, n_heads) by mode, or None when there are none."""
    path = BLOCK_CASES.get(tuple(shape))
    if path is None or not path.is_file():
        return None
    with np.load(path, allow_pickle=False) as arrays:
        return unpack(arrays)


# ---------------------------------------------------------------------------------------- helpers

def _layer_norm(v: np.ndarray, weight: np.ndarray, bias: np.ndarray) -> np.ndarray:
    """``nn.LayerNorm`` over the last axis (biased variance, eps 1e-5), float64."""
    mean = v.mean(axis=-1, keepdims=True)
    var = ((v - mean) ** 2).mean(axis=-1, keepdims=True)
    return (v - mean) / np.sqrt(var + LN_EPS) * weight + bias


def zeroed_sublayers_output(mode: str, x: np.ndarray, weights: dict[str, np.ndarray]) -> np.ndarray:
    """What a correct block in ``mode`` returns for ``x`` (B, T, d) when both sub-layers output 0
    (:data:`ZEROED_SUBLAYERS`); float64 (B, T, d)."""
    ln1 = (weights["ln1.weight"], weights["ln1.bias"])
    ln2 = (weights["ln2.weight"], weights["ln2.bias"])
    expected = {
        "prenorm": lambda: x.copy(),
        "no-residual": lambda: np.zeros_like(x),
        "postnorm": lambda: _layer_norm(_layer_norm(x, *ln1), *ln2),
        "postnorm-no-residual": lambda: np.broadcast_to(ln2[1], x.shape).copy(),
    }
    return expected[mode]()


def _expect_parameters(ex: dict, names: set[str], what: str) -> None:
    """Both graphs of a block export read exactly the skeleton's parameters ``names``.

    Raises:
        CheckFailure: naming the extra and the unused ones.
    """
    for graph in (ex["train"], ex["eval"]):
        got = structure.parameters_of(graph)
        if got != names:
            extra, missing = sorted(got - names), sorted(names - got)
            raise CheckFailure(f"{what}: the exported block's parameters are not the skeleton's"
                               + (f" (it also has {', '.join(extra)})" if extra else "")
                               + (f" (it does not use {', '.join(missing)})" if missing else "") + ".")


def _forward(submission, clean, graph: dict, tensors: dict, x: np.ndarray, cotangent=None) -> dict:
    """``trainer.forward`` of ``graph`` in float64 in the clean process: {"out", "grads", "x_grad"}."""
    args = (graph, tensors, x, "float64") + ((cotangent,) if cotangent is not None else ())
    out = clean.call(submission, "forward", *args)
    if not isinstance(out, dict) or not isinstance(out.get("out"), np.ndarray):
        raise CheckFailure("The grader's run of your exported model returned no output.")
    return out


def _first_index(diff: np.ndarray) -> tuple[int, ...]:
    return tuple(int(i) for i in np.unravel_index(int(np.argmax(diff)), diff.shape))


# ---------------------------------------------------------------------------------------- block

def block_probes(submission, clean, ex: dict, tensors: dict, weights: dict, x: np.ndarray, mode: str,
                 out: np.ndarray) -> list[str]:
    """Reference-free findings on the exported block's eval graph (empty: a correct block's behaviour).

    Args:
        ex: the block's export; ``tensors`` its inputs with ``weights`` (skeleton names) in place.
        x: (B, T, d) float64 input; ``mode`` a key of ``settings.MODES``.
        out: the eval graph's output on ``x`` (B, T, d).

    Raises:
        CheckFailure: the clean process could not run the graph.

    Returns:
        One sentence per property that does not hold: the sub-layers zeroed, causality, batch elements
        kept apart.
    """
    findings = []
    B, T, _ = x.shape
    atol = structure.ATOL
    zeroed = dict(tensors, **{k: np.zeros_like(weights[k]) for k in OUTPUT_PROJECTIONS})
    got = _forward(submission, clean, ex["eval"], zeroed, x)["out"]
    want = zeroed_sublayers_output(mode, x, weights)
    err = structure.max_rel_error(got, want)
    if err > atol:
        findings.append(f"with attn.c_proj and mlp.c_proj zeroed (weights and biases) each sub-layer outputs 0, "
                        f"so the block should return {ZEROED_SUBLAYERS[mode]}, but it differs from that by up to "
                        f"{err:.3g} (relative to its scale)")
    if T > 1:
        t = (T - 1) // 2
        later = x.copy()
        later[:, t + 1:] = x[:, t + 1:][:, ::-1] * -1.3 + 0.7  # other tokens after t, same scale
        moved = _forward(submission, clean, ex["eval"], tensors, later)["out"]
        diff = np.abs(moved[:, :t + 1] - out[:, :t + 1]) if moved.shape == out.shape else None
        if diff is None or not np.isfinite(diff).all() or diff.max() > atol * max(1.0, float(np.abs(out).max())):
            where = f" (most at token {_first_index(diff)[1]})" if diff is not None and np.isfinite(diff).all() else ""
            findings.append(f"changing the tokens after position {t} moved the outputs at positions 0..{t}{where}: "
                            f"the attention is not causal (token t must see tokens 0..t only)")
    if B > 1:
        other = x.copy()
        other[1:] = x[1:] * -0.8 + 0.5
        moved = _forward(submission, clean, ex["eval"], tensors, other)["out"]
        if moved.shape != out.shape or structure.max_rel_error(moved[0], out[0]) > atol:
            findings.append("changing the other batch elements moved the output of the first one: batch elements "
                            "mix (attention or a layer norm over the wrong axis)")
    return findings


def _with_findings(failure: CheckFailure, findings: list[str]) -> CheckFailure:
    """``failure`` with the probes' findings added to its feedback (its diagnosis and details kept)."""
    if not findings:
        return failure
    text = failure.feedback.rstrip() + " What the grader observed on your block: " + "; ".join(findings) + "."
    return CheckFailure(text, failure.diagnosis, failure.details)


def check_block(submission, clean, mode: str, B: int, T: int, d: int, h: int, what: str) -> None:
    """The student's Block in ``mode``, exported for (B, T, d) with ``h`` heads, checked without the reference.

    With a stored case for this shape: eval output equal to the stored reference output, and in training
    mode the same output and the stored gradients (float64, ``structure.ATOL``), as the judge checks with the
    reference itself. Always: the reference-free properties of :func:`block_probes`. Without a stored case
    (shapes of the hidden checks, which run on the judge): random weights drawn from a fixed seed, the
    properties, training mode equal to eval mode, and gradients that agree with a finite difference.

    Raises:
        CheckFailure: what differs, with numbers (and the properties that do not hold).
        SubmissionError: the student's block could not be built or exported.
    """
    residual, prenorm = settings.MODES[mode]
    ex = structure.export_block(submission, structure.block_config(d, h, T, residual, prenorm), (B, T, d))
    case = (stored_cases((B, T, d, h)) or {}).get(mode)
    if case is not None:
        weights, x = case.weights, case.x
    else:
        rng = np.random.default_rng([B, T, d, h, list(settings.MODES).index(mode)])
        weights = random_weights(block_shapes(d), rng)
        x = structure.draw_x(rng, B, T, d)
    _expect_parameters(ex, set(weights), what)
    tensors = {**ex["state"], **weights}
    evaluated = _forward(submission, clean, ex["eval"], tensors, x)
    findings = block_probes(submission, clean, ex, tensors, weights, x, mode, evaluated["out"])
    if case is not None:
        try:
            expect_array(evaluated["out"], case.out, atol=structure.ATOL, what=what)
        except CheckFailure as failure:
            raise _with_findings(failure, findings) from None
    if findings:
        raise CheckFailure(f"{what}: " + "; ".join(findings) + ".")
    if case is not None:
        trained = _forward(submission, clean, ex["train"], tensors, x, case.cotangent)
        structure.expect_train_mode(trained, case.out, case.grads, what)
        return
    rng = np.random.default_rng([B, T, d, h, 99])
    cotangent = rng.standard_normal(x.shape)
    trained = _forward(submission, clean, ex["train"], tensors, x, cotangent)
    expect_same_in_training(trained["out"], evaluated["out"], what)
    expect_gradient_is_derivative(submission, clean, ex["train"], tensors, x, cotangent, trained, rng, what,
                                  with_input=True)


# ---------------------------------------------------------------------------------------- shared properties

def expect_same_in_training(train_out: np.ndarray, eval_out: np.ndarray, what: str) -> None:
    """The training-mode graph's output equals the eval-mode graph's on the same weights and input.

    Raises:
        CheckFailure: they differ (the model computes otherwise while training, which is how it is trained).
    """
    err = structure.max_rel_error(train_out, eval_out)
    if err > structure.ATOL:
        raise CheckFailure(
            f"{what}: in training mode (model.train(), as the grader trains it) its output differs from eval mode "
            f"on the same weights and input (largest difference {err:.3g} relative to the output's scale).",
            "The model computes something else while training than in eval mode (a branch on self.training): "
            "the grader trains the model in training mode.")


def expect_gradient_is_derivative(submission, clean, graph: dict, tensors: dict, x: np.ndarray,
                                  cotangent: np.ndarray, trained: dict, rng: np.random.Generator, what: str,
                                  with_input: bool = False) -> None:
    """Autograd's gradient of ``sum(graph(x) * cotangent)`` agrees with a central finite difference.

    Along one random unit direction ``u`` over every parameter of ``graph`` (and over ``x`` when
    ``with_input``), ``grad . u`` must equal ``(f(w + s u) - f(w - s u)) / 2s`` with s = :data:`FD_STEP`,
    to :data:`FD_RTOL` relative. A computation hidden from autograd (``detach()``, ``no_grad``, ``.data``,
    ``x - x.detach()``) changes the gradient but not the output, and shows here.

    Args:
        graph: the training-mode graph; ``tensors`` its inputs (float64 weights in place).
        x: its user input ((B, T, d) float64, or (B, T) int64 token ids).
        trained: ``trainer.forward`` of ``graph`` with ``cotangent``: {"out", "grads", "x_grad"}.

    Raises:
        CheckFailure: the two disagree (numbers given).
    """
    params = sorted(structure.parameters_of(graph))
    grads = trained.get("grads") or {}
    direction = {p: rng.standard_normal(np.shape(tensors[p])) for p in params}
    if with_input:
        direction["x"] = rng.standard_normal(x.shape)
    norm = float(np.sqrt(sum(float((u ** 2).sum()) for u in direction.values())))
    direction = {k: u / norm for k, u in direction.items()}
    autograd = 0.0
    for k, u in direction.items():
        g = trained.get("x_grad") if k == "x" else grads.get(k)
        if isinstance(g, np.ndarray) and g.shape == u.shape:
            autograd += float((g * u).sum())
        elif g is not None:
            raise CheckFailure(f"{what}: the gradient of {k} has the wrong shape.")

    def value(sign: float) -> float:
        moved = {**tensors, **{k: np.asarray(tensors[k], dtype=np.float64) + sign * FD_STEP * u
                               for k, u in direction.items() if k != "x"}}
        moved_x = x + sign * FD_STEP * direction["x"] if "x" in direction else x
        return float((_forward(submission, clean, graph, moved, moved_x)["out"] * cotangent).sum())

    numeric = (value(1.0) - value(-1.0)) / (2 * FD_STEP)
    err = abs(autograd - numeric) / max(abs(autograd), abs(numeric), 1e-12)
    if not err <= FD_RTOL:
        raise CheckFailure(
            f"{what}: in training mode its gradient is not the derivative of its output: along a random "
            f"direction of all its {'parameters and the input' if with_input else 'parameters'} autograd gives "
            f"{autograd:.8g}, a finite difference of the output gives {numeric:.8g} (relative difference "
            f"{err:.2g}, allowed {FD_RTOL:g}).",
            "Part of the computation is hidden from autograd (detach(), torch.no_grad(), .data, or x - x.detach() "
            "tricks): training would follow another model than the one that was checked.")


# ---------------------------------------------------------------------------------------- GPT

def check_gpt(submission, clean, ex: dict, ids: np.ndarray, rng: np.random.Generator, what: str) -> None:
    """The exported GPT (train and eval graphs of ``ex``), checked without the reference, float64.

    Every parameter of the graphs gets a random value from ``rng`` (:func:`random_weights`); then: the
    parameters are the skeleton's; the eval graph maps ``ids`` (B, n_ctx) int64 to finite logits
    (B, n_ctx, vocab_size); the training-mode graph gives the same logits; and its gradient of
    ``sum(logits * cotangent)`` agrees with a central finite difference along a random direction of all
    parameters (:func:`expect_gradient_is_derivative`).

    Raises:
        CheckFailure: what differs, with numbers.
    """
    config = settings.model_config()
    params = structure.parameters_of(ex["train"]) | structure.parameters_of(ex["eval"])
    skeleton = gpt_names(config["n_layer"], config["d_model"])
    unknown = sorted(params - skeleton)
    if unknown:
        raise CheckFailure(f"{what} has parameters the skeleton's GPT does not: {', '.join(unknown[:6])}.")
    unused = sorted(skeleton - params - {"lm_head.weight"})
    if unused:
        raise CheckFailure(f"{what} does not use {', '.join(unused[:6])}: keep the skeleton's GPT (wte, wpe, the "
                           "blocks in h, ln_f, an lm_head tied to wte).")
    weights = random_weights({p: np.shape(ex["state"][p]) for p in params}, rng)
    tensors = {**ex["state"], **weights}
    shape = (*ids.shape, config["vocab_size"])
    evaluated = _forward(submission, clean, ex["eval"], tensors, ids)
    logits = evaluated["out"]
    if logits.shape != shape or not np.isfinite(logits).all():
        problem = f"of shape {logits.shape}" if logits.shape != shape else "that are not all finite"
        raise CheckFailure(f"{what} with the grader's random weights, in eval mode, returns logits {problem}; "
                           f"expected finite logits of shape {shape}.")
    cotangent = rng.standard_normal(shape)
    trained = _forward(submission, clean, ex["train"], tensors, ids, cotangent)
    expect_same_in_training(trained["out"], logits, what)
    expect_gradient_is_derivative(submission, clean, ex["train"], tensors, ids, cotangent, trained, rng, what)


__all__ = ["BLOCK_CASES", "BlockCase", "block_probes", "block_shapes", "check_block", "check_gpt",
           "expect_gradient_is_derivative", "expect_same_in_training", "gpt_names", "pack", "random_weights",
           "stored_cases", "unpack", "zeroed_sublayers_output"]
