"""Shared pieces of exercise 4's checks (judge side, trusted).

The student's ``model.py`` runs only in its sandbox, and only to describe and *export* the model
(``harness.py``: ``describe``, ``export_block``, ``export_gpt``). What comes back is graphs of ATen calls
and arrays; everything else runs on those graphs in a clean process that never imports the student's
module (:class:`CleanProcess`, ``trainer.py``): the structure checks (forward and gradient, training and
eval mode, float64), the gradient flow and the four re-training runs, with the grader's own loop,
optimiser, data, seeds and loss. So the graph whose structure is checked is the graph that is trained,
and nothing the student's process does to itself reaches a grade.

Expected values come from the reference torch model (``tests/reference.py``, judge only) and U from the
corpus. In a student's bundle, where the reference is not shipped, the structure checks compare with
stored cases (``tests/cases/``) and reference-free properties.
"""
from __future__ import annotations

import contextlib
import functools
import shutil
import tempfile
import threading
from pathlib import Path

import numpy as np
import pytest
import torch

from exercises.exercise4 import aten_graph
from exercises.exercise4.tests import plots, report_md, settings

try:  # judge side only: the reference block implements every mode, the variants every slip; neither ships
    from exercises.exercise4.tests import reference
    from exercises.exercise4.tests.hidden import mistakes
except ImportError:  # a student's bundle: stored cases instead of the reference, no mistake names
    reference = mistakes = None
from grader import progress, rubric
from grader.compare import expect_array
from grader.exercises import course_root
from grader.plugin import CheckFailure
from grader.sandbox import SubmissionError

EX4 = Path(__file__).resolve().parents[1]

#: Test functions every behavioural check depends on.
GATES = ["test_model_loads", "test_contract"]
#: Largest allowed absolute error against the reference block in float64 (DESIGN.md).
ATOL = 1e-6
#: Largest difference between the validation loss of the trained graph (clean process) and of the reference GPT
#: on the same weights (float32; two attention implementations differ by about 1e-5 in the logits).
VAL_ATOL = 1e-3
#: Largest difference (relative to max(1, the logits' scale)) between the exported GPT and the reference GPT
#: with the same weights in float32 (two attention implementations differ by about 1e-6 there).
F32_RTOL = 1e-4
#: Largest total size of an export's tensors (the skeleton's GPT: about 1.2 MiB).
MAX_STATE_BYTES = 32 * 2**20
#: Steps per call of the clean process while training (progress is shown between calls).
CHUNK = 50
#: Steps between validation checkpoints of a run (the curve's validation points).
CHECKPOINT_EVERY = 100
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


def record(request, feedback: str = "", details: dict | None = None) -> None:
    """Attach feedback and details to a *passing* check (pytest user properties of the item).

    The plugin keeps ``feedback``/``details`` only for failures; lifting these properties into passing
    results is the plugin change exercise 1 asks for too.
    """
    if feedback:
        request.node.user_properties.append(("feedback", feedback))
    if details:
        request.node.user_properties.append(("details", details))


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
    student's module), started on first use. The ``clean`` fixture holds one per grading."""

    def __init__(self):
        self.sandbox = None
        self.folder: Path | None = None

    def call(self, submission, name: str, *args, **kwargs):
        """``trainer.NAME(*args, **kwargs)`` in the clean process.

        Raises:
            CheckFailure: the call failed (the exported graph does not run, or ran out of time or memory).
        """
        if self.sandbox is None:
            self.folder = Path(tempfile.mkdtemp(prefix="grader-clean-"))
            for name_ in ("trainer.py", "aten_graph.py"):
                shutil.copy2(EX4 / name_, self.folder / name_)
            self.sandbox = submission.grader_sandbox(self.folder, "trainer", preload=("torch",))
        try:
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
    what = f"Block({MODE_WORDS[mode_of(config)]})"
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


def mode_of(config: dict) -> str:
    return next(m for m, v in settings.MODES.items() if v == (bool(config["residual"]), bool(config["prenorm"])))


def _parameters(graph: dict) -> set[str]:
    return {s["target"] for s in graph["inputs"] if s["kind"] == "parameter"}


def _max_rel(got, expected) -> float:
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
        from exercises.exercise4.tests import cases  # the student's bundle: stored expected outputs
        return cases.check_block(submission, clean, mode, B, T, d, h, what)
    block = reference.random_block(d, h, torch_generator(rng), residual, prenorm)
    x = draw_x(rng, B, T, d, scale)
    cotangent = rng.standard_normal((B, T, d))
    ex = export_block(submission, config, (B, T, d))
    weights = reference.student_state(block)
    for graph in (ex["train"], ex["eval"]):
        if _parameters(graph) != set(weights):
            extra, missing = sorted(_parameters(graph) - set(weights)), sorted(set(weights) - _parameters(graph))
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
    err = _max_rel(got.get("out"), expected)
    if err > ATOL:
        raise CheckFailure(
            f"{what}: in eval mode it matches, but in training mode (model.train(), as the grader trains it) its "
            f"output differs (largest error {err:.3g} relative to the output's scale).",
            "The block computes something else while training than in eval mode (a branch on self.training): "
            "the grader trains the model in training mode.")
    got_grads = dict(got.get("grads") or {}, x=got.get("x_grad"))
    off = []
    for name, want in grads.items():
        e = _max_rel(got_grads.get(name), want)
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
    params = _parameters(ex["train"]) | _parameters(ex["eval"])
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
    err = _max_rel(evaluated.get("out"), expected)
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
        err = _max_rel(got, want_init)
        if err > F32_RTOL:
            raise CheckFailure(
                f"{what}, with its own initial weights in float32 ({'training' if graph_mode == 'train' else 'eval'} "
                f"mode, as it is trained): its logits differ from the reference GPT's with the same weights (largest "
                f"error {err:.3g} relative to their scale), while with the grader's random weights in float64 they "
                "agree: the graph depends on the weights' values or on the precision, not only on its structure.")
    record(request, "Logits and gradients equal the reference GPT's in training and eval mode, with random weights "
                    "(float64) and with its own initial weights (float32).")


# ---------------------------------------------------------------------------------------- re-training runs

def run_label(name: str) -> str:
    residual, prenorm, lr = settings.RUNS[name]
    return f"{name} (lr {lr:g})"


class Runs:
    """The four re-training runs of one grading, made once, two at a time (one clean process each, one
    torch thread each: on two cores the four runs take the time of two). The ``runs`` fixture holds one.

    The student's model is exported first, in the calling thread (the student's sandbox serves one call
    at a time); the runs then go in two lanes: ``prenorm`` then ``prenorm-high-lr``, and ``no-residual``
    then ``postnorm-high-lr``.
    """

    LANES = (("prenorm", "prenorm-high-lr"), ("no-residual", "postnorm-high-lr"))

    def __init__(self):
        self.results: dict[str, dict | BaseException] = {}
        self.done: dict[str, threading.Event] = {name: threading.Event() for name in settings.RUNS}
        self.status: dict[str, str] = {}
        self.lanes: list[tuple[threading.Thread, CleanProcess]] = []
        self._lock = threading.Lock()

    def get(self, exports: dict, submission, name: str) -> dict:
        """Run ``name``'s result (:func:`_train`); starts all runs on the first call.

        Raises:
            SubmissionError, CheckFailure: the run's failure (exported model unusable, or its run failed).
        """
        if not self.lanes:
            for mode in dict.fromkeys(settings.RUN_MODES.values()):  # export in this thread, before the lanes
                with contextlib.suppress(SubmissionError, CheckFailure):
                    export_gpt(exports, submission, mode)
            for names in self.LANES:
                clean = CleanProcess()
                thread = threading.Thread(target=self._lane, args=(names, exports, clean, submission), daemon=True,
                                          name=f"exercise4-runs-{names[0]}")
                self.lanes.append((thread, clean))
                thread.start()
        while not self.done[name].wait(0.5):
            pass
        value = self.results[name]
        if isinstance(value, BaseException):
            raise value
        return value

    @property
    def made(self) -> dict[str, dict]:
        """The runs that finished with a result, by name."""
        return {n: v for n, v in self.results.items() if isinstance(v, dict)}

    def _lane(self, names, exports, clean, submission) -> None:
        for name in names:
            try:
                self.results[name] = _train(exports, clean, submission, name, self._report)
            except (SubmissionError, CheckFailure) as exc:
                self.results[name] = exc
            except Exception as exc:  # noqa: BLE001 - a grader error: raised again in the check that reads it
                self.results[name] = exc
            finally:
                self.done[name].set()

    def _report(self, name: str, text: str, milestone: bool) -> None:
        """One progress line for all runs under way ("prenorm 150/400 (2.612) | no-residual 150/400 (3.351)")."""
        with self._lock:
            self.status[name] = text
            line = " | ".join(self.status[n] for n in settings.RUNS if n in self.status)
        progress.say(line, milestone=milestone)

    def close(self) -> None:
        """Stop the runs' clean processes (a run under way ends with a failure) and wait for the lanes."""
        for thread, clean in self.lanes:
            clean.close()
        for thread, _ in self.lanes:
            thread.join(timeout=10)


def get_run(runs: Runs, exports: dict, submission, name: str) -> dict:
    """The grader's re-run ``name`` of the student's exported GPT (:meth:`Runs.get`)."""
    return runs.get(exports, submission, name)


def _train(exports: dict, clean: CleanProcess, submission, name: str, report) -> dict:
    """Train the exported GPT of run ``name`` in the clean process with the grader's loop, in chunks of
    :data:`CHUNK` steps (``report(name, text, milestone)`` between them), with a validation checkpoint every
    :data:`CHECKPOINT_EVERY` steps.

    Returns ``{"val_loss": float (NaN when the run diverged), "val_start": the loss before training,
    "curve": training loss per step, "checkpoints": [[step, validation loss], ...], "seconds", "diverged"}``.
    """
    residual, prenorm, lr = settings.RUNS[name]
    mode = settings.RUN_MODES[name]
    ex = export_gpt(exports, submission, mode)
    train, val, _ = settings.corpus()
    steps = settings.TRAIN["steps"]
    report(name, f"{name}: starting", False)
    start = clean.call(submission, "start_run", name, ex["train"], ex["eval"], ex["state"], train, val,
                       settings.eval_starts(len(val)), lr=lr, seed=settings.SEED,
                       batch_size=settings.TRAIN["batch_size"], weight_decay=settings.TRAIN["weight_decay"],
                       n_ctx=settings.MODEL["n_ctx"])
    curve: list[float] = []
    checkpoints = [[0, _number(start.get("val_loss"))]]
    out = {"diverged": False, "seconds": float("nan")}
    mismatches: list[str] = []
    verify = reference is not None  # at each checkpoint: do the graphs still compute the reference GPT?
    probe = settings.probe_ids() if verify else None
    try:
        if verify:
            mismatches += _disagreement(name, 0, clean.call(submission, "checkpoint", name, True, probe))
        while len(curve) < steps and not out["diverged"]:
            out = clean.call(submission, "train_steps", name, min(CHUNK, steps - len(curve)))
            chunk = out.get("curve") if isinstance(out, dict) else None
            if not isinstance(chunk, list) or not chunk:
                raise CheckFailure(f"The re-run {name} stopped unexpectedly after {len(curve)} steps.")
            curve += [_number(v) for v in chunk]
            done = len(curve)
            report(name, f"{name} {done}/{steps} ({curve[-1]:.3f})", done % CHECKPOINT_EVERY == 0)
            if done % CHECKPOINT_EVERY == 0 and done < steps and not out.get("diverged"):
                cp = clean.call(submission, "checkpoint", name, verify, probe)
                checkpoints.append([done, _number(cp.get("val_loss"))])
                mismatches += _disagreement(name, done, cp) if verify else []
        final = clean.call(submission, "checkpoint", name, True, probe)
    finally:
        with contextlib.suppress(CheckFailure):
            clean.call(submission, "end_run", name)
    diverged = bool(out.get("diverged")) or not np.isfinite(_number(final.get("val_loss")))
    result = {"curve": curve + [float("nan")] * (steps - len(curve)), "seconds": _number(out.get("seconds")),
              "diverged": diverged, "val_start": checkpoints[0][1], "checkpoints": checkpoints,
              "val_loss": float("nan") if diverged else _number(final.get("val_loss"))}
    result["reference_val_loss"] = None
    if verify:
        mismatches += _disagreement(name, len(curve), final) if not diverged else _divergence_disagrees(name, final)
    result["mismatch"] = mismatches[0] if mismatches else None
    if not diverged:
        checkpoints.append([len(curve), result["val_loss"]])
        if verify:
            result["reference_val_loss"] = _reference_val_loss(name, final.get("weights"))
    report(name, f"{name}: validation {describe_run(result)}", True)
    return result


def _number(value) -> float:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else float("nan")


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


def _disagreement(name: str, step: int, cp) -> list[str]:
    """Where run ``name``'s graphs at checkpoint ``step`` (weights and logits on the probe windows from the clean
    process) do not compute what the reference GPT with the same weights computes: [] or one sentence."""
    gpt = reference_gpt(settings.RUN_MODES[name], cp.get("weights") if isinstance(cp, dict) else None)
    if gpt is None:
        return [f"at step {step} the weights of run {name} are not the skeleton GPT's"]
    want = reference.logits(gpt, settings.probe_ids())
    for graph_mode in ("train", "eval"):
        err = _max_rel(cp.get(f"{graph_mode}_logits"), want)
        if not np.isfinite(want).all() or err > F32_RTOL:
            return [f"at step {step} of run {name}, your model's {'training' if graph_mode == 'train' else 'eval'}-mode "
                    f"logits differ from the reference GPT's with the same weights (largest error {err:.3g} relative "
                    "to their scale)"]
    return []


def _divergence_disagrees(name: str, final) -> list[str]:
    """A run that diverged did so as the reference GPT would: with the weights it had, the reference's loss on the
    batch that diverged is not finite either (or the weights themselves are not). [] or one sentence."""
    weights, batch = final.get("weights"), final.get("diverged_batch")
    if not isinstance(weights, dict) or not all(isinstance(v, np.ndarray) and np.isfinite(v).all()
                                                for v in weights.values()):
        return []  # the weights blew up: nothing left to compute with
    gpt = reference_gpt(settings.RUN_MODES[name], weights)
    train, _, _ = settings.corpus()
    n_ctx = settings.MODEL["n_ctx"]
    if gpt is None or not isinstance(batch, list) or not all(type(i) is int and 0 <= i < len(train) - n_ctx - 1
                                                             for i in batch) or not batch:
        return [f"run {name} diverged, but the grader cannot check that the reference GPT would have"]
    x = np.stack([train[i:i + n_ctx] for i in batch])
    y = np.stack([train[i + 1:i + 1 + n_ctx] for i in batch])
    with torch.no_grad():
        logits = gpt(torch.from_numpy(x.astype(np.int64)))
        loss = float(torch.nn.functional.cross_entropy(logits.reshape(-1, logits.shape[-1]),
                                                       torch.from_numpy(y.astype(np.int64)).reshape(-1)))
    if np.isfinite(loss):
        return [f"run {name} diverged (a loss that is not finite), but the reference GPT with the same weights has "
                f"loss {loss:.3f} on that batch"]
    return []


def _reference_val_loss(name: str, weights) -> float | None:
    """The validation loss of run ``name``'s trained weights, computed in the judge by the reference GPT
    (None when the weights are not the skeleton's GPT's). See :func:`verified_run`."""
    gpt = reference_gpt(settings.RUN_MODES[name], weights)
    if gpt is None:
        return None
    _, val, _ = settings.corpus()
    with one_thread():
        return reference.val_loss(gpt, val, settings.eval_starts(len(val)), settings.MODEL["n_ctx"])


def verified_run(run: dict, name: str) -> dict:
    """``run``, once the judge has checked that its trained graph still computes the reference GPT: the
    re-training checks run only on graphs checked equal to the reference on random weights, and this catches
    a graph that behaves otherwise on the weights it was trained to (the reference GPT's validation loss on
    those weights must agree with the graph's own within VAL_ATOL). Without the reference (a student's
    bundle) there is nothing to compare with.

    Raises:
        CheckFailure: the two losses disagree, or the trained weights are not the skeleton GPT's.
    """
    if reference is None:
        return run
    if run.get("mismatch"):
        raise CheckFailure(f"The re-run {name}: {run['mismatch']}: your model computes something else while it "
                           "trains than what its structure check saw.")
    if run["diverged"]:
        return run
    ref = run.get("reference_val_loss")
    if ref is None:
        raise CheckFailure(f"The re-run {name} trained, but its weights are not the skeleton GPT's (wte, wpe, h, "
                           "ln_f, a tied lm_head), so the grader cannot check what they compute.")
    if not abs(ref - run["val_loss"]) <= VAL_ATOL:
        raise CheckFailure(
            f"The re-run {name}: with its trained weights your model's validation loss is {run['val_loss']:.4f}, "
            f"but the reference GPT with the same weights gets {ref:.4f}: your model computes something else once "
            "trained than what its structure check saw.")
    return run


@contextlib.contextmanager
def one_thread():
    """Run torch on one thread in the judge for a while: on a busy 2-core machine two threads are several
    times slower than one (measured: the judge's evaluation of a trained model took 10.8 s with two threads
    and 1.7 s with one, under load)."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(before)


def describe_run(run: dict) -> str:
    if run["diverged"]:
        return "diverged (the loss became NaN or infinite)"
    return f"{run['val_loss']:.3f}"


def trained_enough(run: dict) -> bool:
    """The run shows it trained: it started untrained (validation loss at least U + START_ABOVE) and its loss
    moved down by at least MOVED_MIN, or it diverged (the loss blew up: that is training too)."""
    if run["diverged"]:
        return True
    U = settings.unigram_loss()
    return run["val_start"] >= U + settings.START_ABOVE and run["val_start"] - run["val_loss"] >= settings.MOVED_MIN


# ---------------------------------------------------------------------------------------- gradient flow

def grad_batch() -> tuple[np.ndarray, np.ndarray]:
    """The fixed batch of the gradient-flow check: GRAD_BATCH training windows drawn with GRAD_SEED."""
    train, _, _ = settings.corpus()
    n_ctx = settings.MODEL["n_ctx"]
    starts = np.random.default_rng(settings.GRAD_SEED).integers(0, len(train) - n_ctx - 1, settings.GRAD_BATCH)
    x = np.stack([train[s:s + n_ctx] for s in starts])
    y = np.stack([train[s + 1:s + 1 + n_ctx] for s in starts])
    return x, y


# ---------------------------------------------------------------------------------------- the report

REPORT = "report.md"
RUBRIC_PATH = Path(__file__).resolve().parents[1] / "rubric.toml"
RUBRIC = rubric.load(RUBRIC_PATH)
#: The lesson's own numbers (800 steps, its own data): a report quoting them did not run this model.
LESSON_NUMBERS = {"prenorm": 1.86, "no-residual": 3.37, "prenorm-high-lr": 1.79, "postnorm-high-lr": 3.37}


def read_report(submission) -> report_md.Report:
    return report_md.read(Path(submission.path) / REPORT)


def assess(submission) -> rubric.Assessment:
    """The rubric's reading of the report's Explanation section (cached per text)."""
    text = read_report(submission).explanation
    # Compare with the sample report's explanation only: the table and the template's text are shared by all.
    sources = tuple(sorted((k, report_md.explanation_of(v)) for k, v in
                           rubric.copy_sources_for(RUBRIC, course_root(), Path(submission.path) / REPORT).items()))
    return _assess(text, sources)


@functools.lru_cache(maxsize=32)
def _assess(text: str, sources: tuple) -> rubric.Assessment:
    return rubric.evaluate(RUBRIC, text, copy_sources=dict(sources))


def quote(text: str, limit: int = 300) -> str:
    text = " ".join(text.split())
    return f'"{text if len(text) <= limit else text[:limit - 1] + "…"}"'


def concept_check(line: rubric.Line):
    """The check of one rubric line: passes when the line's evidence is found (and counted)."""

    def check(submission, request):
        a = assess(submission)
        r = a.lines[line.id]
        details = {"rubric_line": line.id, "evidence": r.quotes}
        found = " + ".join(quote(q) for q in r.quotes)
        if r.counted:
            record(request, f"Earned by: {found}", details)
            return
        if r.earned:
            raise CheckFailure(f"Found ({found}), but not counted: {a.cap_reason}.", details=details)
        if r.quotes:
            raise CheckFailure(f"Only part of it: {found}; missing: {', '.join(r.missing_parts)}.", details=details)
        raise CheckFailure("Not found in your explanation.", details=details)

    check.__name__ = check.__qualname__ = f"test_explains_{line.id}"
    check.__doc__ = line.concept
    return pytest.mark.check(points=line.points, hint=line.hint, depends=["test_report_file"])(check)


def misconception_check(m: rubric.Misconception):
    """Passes when a substantive explanation that earns a point on the question does not make the misconception."""

    def check(submission, request):
        a = assess(submission)
        r = a.misconceptions[m.id]
        if not a.substantive:
            raise CheckFailure("Not checked: " + "; ".join(a.problems) + ".")
        if not r.applies:
            pytest.skip(f"not checked: your explanation earns no point on {RUBRIC.questions.get(m.question, '')}")
        details = {"misconception": m.id, "evidence": [r.quote] if r.quote else []}
        if r.found:
            raise CheckFailure(f"Your explanation says: {quote(r.quote)}", diagnosis=f"misconception: {m.statement}",
                               details=details)
        record(request, "Your explanation does not say this.", details)

    check.__name__ = check.__qualname__ = f"test_no_{m.id}"
    check.__doc__ = f"No misconception: {m.statement}."
    return pytest.mark.check(points=m.points, hint=m.hint, depends=["test_report_file"])(check)


__all__ = ["GATES", "ATOL", "MODE_CHECKS", "MODE_WORDS", "record", "torch_generator", "draw_x", "block_config",
           "check_block", "check_gpt", "export_gpt", "trained_enough", "verified_run", "reference_gpt", "CleanProcess", "Runs", "get_run", "run_label", "describe_run", "grad_batch", "read_report", "assess",
           "concept_check", "misconception_check", "RUBRIC", "LESSON_NUMBERS", "REPORT", "plots", "reference",
           "settings", "mistakes"]
