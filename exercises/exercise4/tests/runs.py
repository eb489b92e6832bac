"""Exercise 4's re-training runs: the student's exported GPT trained by the grader (judge side, trusted).

The runs are made in clean processes (:class:`~exercises.exercise4.tests.structure.CleanProcess`, running
``trainer.py``) with the grader's loop, optimiser, data order, seeds and loss, two at a time (:class:`Runs`).
At every checkpoint the judge checks that the graphs being trained still compute the reference GPT with the
same weights, and that a divergence is one the reference would have too (:func:`verified_run`).
"""
from __future__ import annotations

import contextlib
import threading

import numpy as np
import torch

from exercises.exercise4.tests import settings
from exercises.exercise4.tests.structure import (F32_RTOL, CleanProcess, max_rel_error, export_gpt, reference,
                                                 reference_gpt)
from grader import progress
from grader.plugin import CheckFailure
from grader.sandbox import SubmissionError

#: Largest difference between the validation loss of the trained graph (clean process) and of the reference GPT
#: on the same weights (float32; two attention implementations differ by about 1e-5 in the logits).
VAL_ATOL = 1e-3
#: Steps per call of the clean process while training (progress is shown between calls).
CHUNK = 50
#: Steps between validation checkpoints of a run (the curve's validation points).
CHECKPOINT_EVERY = 100


def run_label(name: str) -> str:
    residual, prenorm, lr = settings.RUNS[name]
    return f"{name} (lr {lr:g})"


class Runs:
    """The four re-training runs of one grading, made once, two at a time (one clean process each, one
    torch thread each: on two cores the four runs take the time of two). The ``runs`` fixture holds one.

    The student's model is exported first, in the calling thread (the student's sandbox serves one call
    at a time); the runs then go in two lanes: ``prenorm`` then ``prenorm-high-lr`` in the grading's own
    clean process ``shared``, and ``no-residual`` then ``postnorm-high-lr`` in a second one.
    """

    LANES = (("prenorm", "prenorm-high-lr"), ("no-residual", "postnorm-high-lr"))

    def __init__(self, shared: CleanProcess):
        self.shared = shared
        self.results: dict[str, dict | BaseException] = {}
        self.done: dict[str, threading.Event] = {name: threading.Event() for name in settings.RUNS}
        self.status: dict[str, str] = {}
        self.lanes: list[tuple[threading.Thread, CleanProcess]] = []
        self.stopping = threading.Event()
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
            for names, clean in zip(self.LANES, (self.shared, CleanProcess())):
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
            except Exception as exc:  # noqa: BLE001 - raised again in the check that reads it (a grader error
                self.results[name] = exc  # unless a SubmissionError or CheckFailure)
            finally:
                self.done[name].set()

    def _report(self, name: str, text: str, milestone: bool) -> None:
        """One progress line for all runs under way ("prenorm 150/400 (2.612) | no-residual 150/400 (3.351)").

        Raises:
            CheckFailure: the grading was stopped (the lane ends at its next report).
        """
        if self.stopping.is_set():
            raise CheckFailure(f"The re-run {name} was not finished: grading was stopped.")
        with self._lock:
            self.status[name] = text
            line = " | ".join(self.status[n] for n in settings.RUNS if n in self.status)
        progress.say(line, milestone=milestone)

    def close(self) -> None:
        """Stop the runs: the lanes end at their next report; the second lane's own clean process is stopped
        at once (the shared one is the ``clean`` fixture's to close)."""
        self.stopping.set()
        for _, clean in self.lanes:
            if clean is not self.shared:
                clean.close()
        for thread, _ in self.lanes:
            thread.join(timeout=10)


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


def _disagreement(name: str, step: int, cp) -> list[str]:
    """Where run ``name``'s graphs at checkpoint ``step`` (weights and logits on the probe windows from the clean
    process) do not compute what the reference GPT with the same weights computes: [] or one sentence."""
    gpt = reference_gpt(settings.RUN_MODES[name], cp.get("weights") if isinstance(cp, dict) else None)
    if gpt is None:
        return [f"at step {step} the weights of run {name} are not the skeleton GPT's"]
    want = reference.logits(gpt, settings.probe_ids())
    for graph_mode in ("train", "eval"):
        err = max_rel_error(cp.get(f"{graph_mode}_logits"), want)
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


