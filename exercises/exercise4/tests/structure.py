"""Exercise 4's structure checks, on the student's *exported* model (judge side, trusted).

The student's ``model.py`` runs only in its sandbox, and only to describe and export the model
(``harness.py``: ``describe``, ``export_block``, ``export_gpt``). What comes back is graphs of ATen calls
and arrays, checked here (:func:`_checked_export`, ``aten_graph.py``) and run in a clean process that never
imports the student's module (:class:`CleanProcess`, ``trainer.py``): the block in each mode against the
reference block (output in eval mode; output and gradients in training mode; float64), and the GPT the
grader trains against the reference GPT (random weights in float64, its own initial weights in float32).

Expected values come from the reference torch model (``tests/reference.py``, judge only). In a student's
bundle, where the reference is not shipped, the checks compare with stored cases and reference-free
properties (``cases.py``).
"""
from __future__ import annotations

import shutil
import tempfile
import threading
from pathlib import Path

import numpy as np
import torch

from exercises.exercise4 import aten_graph
from exercises.exercise4.tests import settings

try:  # judge side only: the reference block implements every mode, the variants every slip; neither ships
    from exercises.exercise4.tests import reference
    from exercises.exercise4.tests.hidden import mistakes
except ImportError:  # a student's bundle: stored cases instead of the reference, no mistake names
    reference = mistakes = None
from grader.compare import expect_array
from grader.plugin import CheckFailure, record
from grader.sandbox import SubmissionError

EX4 = Path(__file__).resolve().parents[1]
#: Largest allowed absolute error against the reference block in float64 (DESIGN.md).
ATOL = 1e-6
#: Largest difference (relative to max(1, the logits' scale)) between the exported GPT and the reference GPT
#: with the same weights in float32 (two attention implementations differ by about 1e-6 there).
F32_RTOL = 1e-4
#: Largest total size of an export's tensors (the skeleton's GPT: about 1.2 MiB).
MAX_STATE_BYTES = 32 * 2**20
#: The structure check of each mode, by the mode's id (settings.MODES).
MODE_CHECKS = {
    "prenorm": "test_block_prenorm",
    "no-residual": "test_block_no_residual",
    "postnorm": "test_block_postnorm",
    "postnorm-no-residual": "test_block_postnorm_no_residual",
}
#: What the student calls each mode, for messages.
MODE_WORDS = {
    "prenorm": "residual=True, prenorm=True",
    "no-residual": "residual=False, prenorm=True",
    "postnorm": "residual=True, prenorm=False",
    "postnorm-no-residual": "residual=False, prenorm=False",
}


def torch_generator(rng: np.random.Generator) -> torch.Generator:
    """A torch generator seeded from the check's NumPy generator (so the run's seed fixes it)."""
    return torch.Generator().manual_seed(int(rng.integers(2**31)))


def draw_x(rng: np.random.Generator, B: int, T: int, d: int, scale: float = 1.7) -> np.ndarray:
    """(B, T, d) float64 input: N(0.3, scale^2) entries, so never unit-scale or already normalised."""
    return 0.3 + scale * rng.standard_normal((B, T, d))


def block_config(d_model: int, n_heads: int, T: int, residual: bool, prenorm: bool) -> dict:
    """Config fields for a single block of this size (n_layer and vocab_size are not used by a block)."""
    return dict(n_layer=1, d_model=d_model, n_heads=n_heads, n_ctx=max(T, 1), vocab_size=len(settings.corpus()[2]),
                residual=residual, prenorm=prenorm)


class CleanProcess:
    """The clean process of one grading: a sandbox running ``trainer.py`` (grader code only, never the
    student's module), started on first use. The ``clean`` fixture holds one per grading; the structure
    checks and one lane of the re-training runs share it, one call at a time."""

    def __init__(self):
        self.sandbox = None
        self.folder: Path | None = None
        self._lock = threading.Lock()  # the sandbox serves one call at a time

    def call(self, submission, name: str, *args, **kwargs):
        """``trainer.NAME(*args, **kwargs)`` in the clean process.

        Raises:
            CheckFailure: the call failed (the exported graph does not run, or ran out of time or memory).
        """
        try:
            with self._lock:
                if self.sandbox is None:
                    self.folder = Path(tempfile.mkdtemp(prefix="grader-clean-"))
                    for name_ in ("trainer.py", "aten_graph.py"):
                        shutil.copy2(EX4 / name_, self.folder / name_)
                    self.sandbox = submission.grader_sandbox(self.folder, "trainer", preload=("torch",))
                return self.sandbox.call(name, *args, **kwargs)
        except SubmissionError as exc:
            text = exc.message.replace(f"{name}() raised ", "", 1)
            raise CheckFailure(f"The grader's run of your exported model failed: {text}") from None

    def close(self) -> None:
        if self.sandbox is not None:
            self.sandbox.close()
        if self.folder is not None:
            shutil.rmtree(self.folder, ignore_errors=True)
        self.sandbox = self.folder = None


def _checked_export(out, what: str) -> dict:
    """An export from the sandbox, checked: two graphs the grader can run and arrays for their tensors.

    Raises:
        CheckFailure: naming what is wrong.
    """
    if not isinstance(out, dict) or not all(isinstance(out.get(k), dict) for k in ("train", "eval", "state")):
        raise CheckFailure(f"Exporting {what} sent back something that is not an export.")
    graphs = {}
    for mode in ("train", "eval"):
        # Only the format's own keys go on (to the clean process): anything else sent along is dropped.
        graph = {k: out[mode].get(k) for k in ("format", "inputs", "nodes", "outputs")}
        found = aten_graph.problems(graph)
        if found:
            raise CheckFailure(f"{what}, exported in {'training' if mode == 'train' else 'eval'} mode, cannot be "
                               f"run by the grader: {found[0]}.")
        graphs[mode] = graph
    used = {s["target"]: s["kind"] for g in graphs.values() for s in g["inputs"] if s["kind"] != "input"}
    missing = sorted(set(used) - set(out["state"]))
    if missing:
        raise CheckFailure(f"Exporting {what} sent no value for {', '.join(missing[:4])}.")
    state = {k: out["state"][k] for k in used}  # tensors no graph reads are dropped
    if not all(isinstance(v, np.ndarray) and v.dtype.kind in "fiub" and v.dtype.isnative for v in state.values()):
        raise CheckFailure(f"Exporting {what} sent back tensors that are not arrays of numbers.")
    size = sum(v.nbytes for v in state.values())
    if size > MAX_STATE_BYTES:
        raise CheckFailure(f"Exporting {what} sent {size / 2**20:.0f} MiB of tensors (the skeleton's model has about "
                           f"1 MiB; at most {MAX_STATE_BYTES / 2**20:.0f} MiB are taken).")
    bad = sorted(k for k, kind in used.items() if kind == "parameter" and not np.isfinite(state[k]).all())
    if bad:
        raise CheckFailure(f"Exporting {what}: its initial parameters {', '.join(bad[:4])} hold NaN or infinite values.")
    return {**graphs, "state": state}


def _exported(submission, function: str, what: str, *args):
    """``submission.FUNCTION(*args)`` (an export in the student's sandbox), its failure told in the student's
    terms: the error of their own code as ``what`` raised it, or why torch.export could not trace it.

    Raises:
        SubmissionError: with the message rewritten (kind and traceback kept).
    """
    try:
        return getattr(submission, function)(*args)
    except SubmissionError as exc:
        message = exc.message.replace(f"{function}() raised ExportError: ", "").replace(f"{function}()", what)
        raise SubmissionError(exc.kind, message, exc.traceback) from None


def export_block(submission, config: dict, shape: tuple) -> dict:
    """The student's Block exported for inputs of ``shape`` (float64), checked (:func:`_checked_export`)."""
    what = f"Block({MODE_WORDS[settings.mode_of(config['residual'], config['prenorm'])]})"
    return _checked_export(_exported(submission, "export_block", what, config, list(shape)), what)


def export_gpt(cache: dict, submission, mode: str) -> dict:
    """The student's GPT in ``mode``, built with the grader's seed and exported (train and eval), made once
    per grading. Raises (and caches) a CheckFailure or SubmissionError."""
    key = ("gpt", mode)
    if key not in cache:
        config = settings.model_config(*settings.MODES[mode])
        try:
            what = f"GPT({MODE_WORDS[mode]})"
            cache[key] = _checked_export(_exported(submission, "export_gpt", what, config, settings.SEED,
                                                   settings.TRAIN["batch_size"]), what)
        except (SubmissionError, CheckFailure) as exc:
            cache[key] = exc
    value = cache[key]
    if isinstance(value, BaseException):
        raise value
    return value


def parameters_of(graph: dict) -> set[str]:
    """The targets of ``graph``'s parameter inputs ("h.0.ln1.weight", ...)."""
    return {s["target"] for s in graph["inputs"] if s["kind"] == "parameter"}


def max_rel_error(got, expected) -> float:
    """Largest |got - expected| over max(1, max|expected|) (inf when shapes differ or got is not finite)."""
    if not isinstance(got, np.ndarray) or got.shape != expected.shape or not np.isfinite(got).all():
        return float("inf")
    return float(np.abs(got - expected).max() / max(1.0, float(np.abs(expected).max()))) if got.size else 0.0


def check_block(submission, clean: CleanProcess, rng, mode: str, B: int, T: int, d: int, h: int,
                scale: float = 1.7) -> None:
    """The student's Block in ``mode``, exported, equals the reference block with the same random weights:
    its output in eval mode, and in training mode its output and its gradients (float64, 1e-6)."""
    residual, prenorm = settings.MODES[mode]
    config = block_config(d, h, T, residual, prenorm)
    what = f"Block({MODE_WORDS[mode]}) on x of shape {(B, T, d)} with n_heads={h}"
    if reference is None:
        from exercises.exercise4.tests import cases  # the student's bundle: stored expected outputs (imported late:
        # cases imports this module)
        return cases.check_block(submission, clean, mode, B, T, d, h, what)
    block = reference.random_block(d, h, torch_generator(rng), residual, prenorm)
    x = draw_x(rng, B, T, d, scale)
    cotangent = rng.standard_normal((B, T, d))
    ex = export_block(submission, config, (B, T, d))
    weights = reference.student_state(block)
    for graph in (ex["train"], ex["eval"]):
        if parameters_of(graph) != set(weights):
            extra, missing = sorted(parameters_of(graph) - set(weights)), sorted(set(weights) - parameters_of(graph))
            raise CheckFailure(f"{what}: the exported block's parameters are not the skeleton's"
                               + (f" (it also has {', '.join(extra)})" if extra else "")
                               + (f" (it does not use {', '.join(missing)})" if missing else "") + ".")
    tensors = {**ex["state"], **weights}
    evaluated = clean.call(submission, "forward", ex["eval"], tensors, x, "float64")
    expected, grads, x_grad = reference.run_with_grad(block, x, cotangent)
    expect_array(evaluated["out"], expected, atol=ATOL, what=what,
                 mistakes=mistakes.block_mistakes(block, x, evaluated["out"]) if mistakes else None)
    trained = clean.call(submission, "forward", ex["train"], tensors, x, "float64", cotangent)
    expect_train_mode(trained, expected, {**grads, "x": x_grad}, what, "block")


def expect_train_mode(got: dict, expected: np.ndarray, grads: dict, what: str, model: str = "block") -> None:
    """Training mode: the output equals ``expected`` and each gradient ``grads[name]`` (``"x"``: the input's);
    ``model`` names the reference in messages ("block", "GPT").

    Raises:
        CheckFailure: saying which differs (a block that computes otherwise while training, or a
            computation hidden from autograd).
    """
    err = max_rel_error(got.get("out"), expected)
    if err > ATOL:
        raise CheckFailure(
            f"{what}: in eval mode it matches, but in training mode (model.train(), as the grader trains it) its "
            f"output differs (largest error {err:.3g} relative to the output's scale).",
            "The block computes something else while training than in eval mode (a branch on self.training): "
            "the grader trains the model in training mode.")
    got_grads = dict(got.get("grads") or {}, x=got.get("x_grad"))
    off = []
    for name, want in grads.items():
        e = max_rel_error(got_grads.get(name), want)
        if e > ATOL:
            off.append((e, name))
    if off:
        e, name = max(off)
        names = ", ".join(n if n != "x" else "the input x" for _, n in sorted(off, reverse=True)[:4])
        raise CheckFailure(
            f"{what}: the output is right, but its gradient is not: d/d({names}) differs from the reference "
            f"{model}'s (largest error {e:.3g} relative to its scale).",
            "Part of the computation is hidden from autograd (detach(), torch.no_grad(), .data, or x - x.detach() "
            "tricks): training would follow another model than the one that was checked.")


def check_gpt(submission, clean: CleanProcess, cache: dict, rng, mode: str, request) -> None:
    """The GPT the grader trains in ``mode`` (exported) equals the reference GPT with the same random
    weights: logits in eval mode; logits and every parameter's gradient in training mode (float64)."""
    what = f"GPT({MODE_WORDS[mode]}) (exported: the model the grader trains)"
    ex = export_gpt(cache, submission, mode)
    config = settings.model_config(*settings.MODES[mode])
    ids = rng.integers(0, config["vocab_size"], (settings.TRAIN["batch_size"], config["n_ctx"]))
    if reference is None:
        from exercises.exercise4.tests import cases
        cases.check_gpt(submission, clean, ex, ids, rng, what)
        record(request, "The same logits in training and eval mode; gradients agree with finite differences.")
        return
    gpt = reference.random_gpt(config, torch_generator(rng))
    weights = reference.gpt_student_state(gpt)
    params = parameters_of(ex["train"]) | parameters_of(ex["eval"])
    unknown = sorted(params - set(weights))
    if unknown:
        raise CheckFailure(f"{what} has parameters the skeleton's GPT does not: {', '.join(unknown[:6])}.")
    unused = sorted(set(weights) - params - {"lm_head.weight"})
    if unused:
        raise CheckFailure(f"{what} does not use {', '.join(unused[:6])}: keep the skeleton's GPT (wte, wpe, the "
                           "blocks in h, ln_f, an lm_head tied to wte).")
    cotangent = rng.standard_normal((*ids.shape, config["vocab_size"]))
    expected, grads = reference.gpt_run_with_grad(gpt, ids, cotangent)
    tensors = {**ex["state"], **{k: v for k, v in weights.items() if k in params}}
    evaluated = clean.call(submission, "forward", ex["eval"], tensors, ids, "float64")
    err = max_rel_error(evaluated.get("out"), expected)
    if err > ATOL:
        raise CheckFailure(
            f"{what} with the grader's random weights, in eval mode: its logits differ from the reference GPT's "
            f"(largest error {err:.3g} relative to their scale). If the block checks pass, something outside the "
            "blocks differs from the skeleton (embeddings, final layer norm, tied output layer), or GPT does not "
            "pass its config to every Block.")
    trained = clean.call(submission, "forward", ex["train"], tensors, ids, "float64", cotangent)
    want = {k: v for k, v in grads.items() if k in params}
    if "lm_head.weight" in params:  # an untied output layer: its gradient is only the output layer's part
        want.pop("lm_head.weight", None)
    expect_train_mode(dict(trained, x_grad=None), expected, want, what, "GPT")
    # The weights it is trained from, in float32 as it is trained: a graph that tells the grader's random
    # weights (or float64) from these must not pass.
    init = reference_gpt(mode, ex["state"])
    if init is None:
        raise CheckFailure(f"{what}: its initial weights are not the skeleton GPT's (wte, wpe, h, ln_f, an lm_head "
                           "tied to wte).")
    probe = settings.probe_ids()
    want_init = reference.logits(init, probe)
    for graph_mode in ("train", "eval"):
        got = clean.call(submission, "forward", ex[graph_mode], ex["state"], probe, "float32").get("out")
        err = max_rel_error(got, want_init)
        if err > F32_RTOL:
            raise CheckFailure(
                f"{what}, with its own initial weights in float32 ({'training' if graph_mode == 'train' else 'eval'} "
                f"mode, as it is trained): its logits differ from the reference GPT's with the same weights (largest "
                f"error {err:.3g} relative to their scale), while with the grader's random weights in float64 they "
                "agree: the graph depends on the weights' values or on the precision, not only on its structure.")
    record(request, "Logits and gradients equal the reference GPT's in training and eval mode, with random weights "
                    "(float64) and with its own initial weights (float32).")


def reference_gpt(mode: str, weights):
    """The reference GPT (float32) in ``mode`` holding ``weights`` (skeleton names; the tied output layer may be
    left out), or None when they are not the skeleton GPT's."""
    names = reference.gpt_state_names(settings.MODEL["n_layer"])  # parameters only: a mask buffer is the model's own
    state = {k: v for k, v in dict(weights or {}).items() if k in names and isinstance(v, np.ndarray)}
    if "lm_head.weight" not in state and "wte.weight" in state:
        state["lm_head.weight"] = state["wte.weight"]  # tied: one tensor in the graph
    try:
        return reference.load_student_gpt(settings.model_config(*settings.MODES[mode]), state)
    except (ValueError, KeyError):
        return None
