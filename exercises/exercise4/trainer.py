"""The clean process of exercise 4: runs and trains the student's *exported* model (grader code only).

This module is the whole program of a sandbox process that never imports the student's ``model.py``:
what it gets is data -- graphs of ATen calls checked by :mod:`aten_graph` and arrays -- and everything
that decides a grade is the grader's: the training loop, the optimiser, the data order, the seeds, the
loss, the validation windows. Whatever the student's module did to its own process (patched torch,
replaced the harness, counted steps, looked at the environment) cannot reach here; and the graph that is
trained is the graph whose structure the judge checked.

The judge calls these functions through the sandbox protocol (arrays, numbers, dicts); a run is kept in
this process between calls, so the judge can show progress and read checkpoints as training goes.
"""
from __future__ import annotations

import time

import numpy as np
import torch
from torch.nn import functional as F

import aten_graph

torch.set_num_threads(1)  # the grader's runs use one thread: steadier under load, and the student's numbers
try:
    torch.set_num_interop_threads(1)
except RuntimeError:
    pass

_DTYPES = {"float32": torch.float32, "float64": torch.float64}
#: The runs under way: name -> dict (program, parameters, optimiser, data, step, curve).
_RUNS: dict[str, dict] = {}


def _tensors(arrays: dict) -> dict[str, torch.Tensor]:
    return {str(k): torch.from_numpy(np.array(v)) for k, v in arrays.items()}


def forward(graph: dict, tensors: dict, x: np.ndarray, dtype: str = "float64", cotangent: np.ndarray | None = None,
            grad_of: list | None = None) -> dict:
    """Run ``graph`` once on ``x`` and, with a ``cotangent``, backward from ``sum(output * cotangent)``.

    Args:
        graph: a graph of aten_graph's format; ``tensors`` holds a value for each of its non-user inputs.
        x: the user input (float array for a block, int64 token ids for a GPT).
        dtype: "float64" runs the graph at double precision (float32 values and dtype arguments promoted).
        cotangent: an array of the output's shape, or None for a forward pass only.
        grad_of: input targets whose gradients to return (default: every parameter).

    Returns:
        ``{"out": array, "grads": {target: array}, "x_grad": array or None}`` (float64 when dtype is).
    """
    program = aten_graph.Program(graph, _DTYPES[dtype])
    inputs = {}
    for target, t in _tensors(tensors).items():
        if t.is_floating_point():
            t = t.to(_DTYPES[dtype]).requires_grad_(cotangent is not None)
        inputs[target] = t
    xt = torch.from_numpy(np.array(x))
    if xt.is_floating_point():
        xt = xt.to(_DTYPES[dtype]).requires_grad_(cotangent is not None)
    out, _ = program.first_output(inputs, xt)
    result = {"out": out.detach().numpy().copy(), "grads": {}, "x_grad": None}
    if cotangent is not None:
        (out * torch.from_numpy(np.array(cotangent)).to(out.dtype)).sum().backward()
        for target in (grad_of if grad_of is not None else program.parameters):
            t = inputs.get(target)
            g = t.grad if t is not None and t.requires_grad else None
            result["grads"][target] = (g if g is not None else torch.zeros_like(t)).detach().numpy().copy() \
                if t is not None else None
        if xt.is_floating_point() and xt.grad is not None:
            result["x_grad"] = xt.grad.detach().numpy().copy()
    return result


def grad_flow(graph: dict, tensors: dict, x_ids: np.ndarray, y_ids: np.ndarray, n_layer: int) -> dict:
    """One forward and backward pass of a (training-mode) GPT graph on a fixed batch, float32.

    The loss is the cross-entropy of the *last* position's prediction (mean over the batch).
    ``blocks[i]`` is the L2 norm of d loss / d (input of block i at the last position); a block's input is
    found from the graph (:func:`aten_graph.block_inputs`). ``blocks`` is None when the graph's blocks
    cannot be told apart.

    Returns:
        ``{"blocks": [float] or None, "loss": float}``.
    """
    program = aten_graph.Program(graph, torch.float32)
    feeds = aten_graph.block_inputs(graph, int(n_layer))
    inputs = {k: (t.requires_grad_(True) if t.is_floating_point() else t) for k, t in _tensors(tensors).items()}
    x = torch.from_numpy(np.asarray(x_ids, dtype=np.int64))
    y = torch.from_numpy(np.asarray(y_ids, dtype=np.int64))
    logits, kept = program.first_output(inputs, x, keep=feeds or ())
    for t in kept.values():
        if t.requires_grad:
            t.retain_grad()
    loss = F.cross_entropy(logits[:, -1], y[:, -1])
    loss.backward()
    blocks = None
    if feeds is not None:
        blocks = []
        for name in feeds:
            t = kept.get(name)
            g = t.grad if t is not None and t.requires_grad else None
            blocks.append(float(g[:, -1].double().norm()) if g is not None and g.dim() == 3 else float("nan"))
    return {"blocks": blocks, "loss": float(loss.detach())}


def start_run(name: str, train_graph: dict, eval_graph: dict, tensors: dict, train_ids: np.ndarray,
              val_ids: np.ndarray, val_starts: np.ndarray, *, lr: float, seed: int, batch_size: int,
              weight_decay: float, n_ctx: int) -> dict:
    """Set up the grader's training run ``name`` of an exported GPT; returns the validation loss at step 0.

    The loop (the lesson's, and the skeleton's ``train``): batches of ``batch_size`` random windows of
    ``train_ids`` drawn with ``torch.randint`` from a generator seeded ``seed + 1``; loss = mean
    cross-entropy of the logits; AdamW(lr, betas (0.9, 0.999), weight_decay, fused), constant lr, no
    warm-up, no clipping. The initial weights are the ones the student's GPT was built with
    (``torch.manual_seed(seed)`` in the sandbox).

    Returns:
        ``{"val_loss": float, "parameters": int}``.
    """
    train = aten_graph.Program(train_graph, torch.float32)
    evaluate = aten_graph.Program(eval_graph, torch.float32)
    values = _tensors(tensors)
    params = {t: values[t].to(torch.float32).requires_grad_(True) for t in train.parameters}
    fixed = {t: v for t, v in values.items() if t not in params}
    optimizer = torch.optim.AdamW(list(params.values()), lr=float(lr), betas=(0.9, 0.999),
                                  weight_decay=float(weight_decay), fused=True)
    run = {"train": train, "eval": evaluate, "params": params, "fixed": fixed, "optimizer": optimizer,
           "data": torch.from_numpy(np.asarray(train_ids, dtype=np.int64)),
           "val": torch.from_numpy(np.asarray(val_ids, dtype=np.int64)),
           "starts": np.asarray(val_starts, dtype=np.int64), "n_ctx": int(n_ctx), "batch": int(batch_size),
           "batches": torch.Generator().manual_seed(int(seed) + 1), "step": 0, "diverged": False, "seconds": 0.0}
    _RUNS[str(name)] = run
    return {"val_loss": _val_loss(run), "parameters": int(sum(p.numel() for p in params.values()))}


def train_steps(name: str, steps: int) -> dict:
    """Take up to ``steps`` more optimiser steps of run ``name``; a non-finite loss ends the run.

    Returns:
        ``{"curve": [training loss of each step taken], "step": steps taken so far, "diverged": bool,
        "seconds": training time so far}``.
    """
    run = _RUNS[str(name)]
    started = time.perf_counter()
    curve: list[float] = []
    data, n_ctx, b = run["data"], run["n_ctx"], run["batch"]
    tensors = {**run["fixed"], **run["params"]}
    for _ in range(int(steps)):
        if run["diverged"]:
            break
        ix = torch.randint(len(data) - n_ctx - 1, (b,), generator=run["batches"])  # (b,)
        x = torch.stack([data[i:i + n_ctx] for i in ix])          # (b, T)
        y = torch.stack([data[i + 1:i + 1 + n_ctx] for i in ix])  # (b, T)
        logits, _ = run["train"].first_output(tensors, x)
        loss = F.cross_entropy(logits.reshape(-1, logits.size(-1)), y.reshape(-1))
        run["step"] += 1
        curve.append(loss.item())
        if not np.isfinite(curve[-1]):  # the run ends here, with the weights and the batch that diverged
            run["diverged"], run["diverged_batch"] = True, [int(i) for i in ix]
            break
        run["optimizer"].zero_grad(set_to_none=True)
        loss.backward()
        run["optimizer"].step()
    run["seconds"] += time.perf_counter() - started
    return {"curve": curve, "step": run["step"], "diverged": run["diverged"], "seconds": run["seconds"]}


def checkpoint(name: str, weights: bool = False, probe_ids: np.ndarray | None = None) -> dict:
    """Run ``name`` now: its validation loss (eval-mode graph, the grader's windows) and, if asked, its weights
    and both graphs' logits on ``probe_ids`` (so the judge can check that, at these weights, the graphs still
    compute what its reference computes).

    Returns:
        ``{"step": int, "val_loss": float (NaN when diverged), "weights": {target: float32 array} or None,
        "train_logits", "eval_logits": float32 arrays (B, T, vocab) or None, "diverged_batch": the start
        positions of the batch whose loss was not finite, or None}``.
    """
    run = _RUNS[str(name)]
    finite = all(bool(torch.isfinite(p).all()) for p in run["params"].values())
    out = {"step": run["step"], "val_loss": _val_loss(run) if finite else float("nan"), "weights": None,
           "train_logits": None, "eval_logits": None, "diverged_batch": run.get("diverged_batch")}
    if probe_ids is not None:
        tensors = {**run["fixed"], **run["params"]}
        x = torch.from_numpy(np.asarray(probe_ids, dtype=np.int64))
        with torch.no_grad():
            for mode in ("train", "eval"):
                out[f"{mode}_logits"] = run[mode].first_output(tensors, x)[0].detach().numpy().copy()
    if weights:
        out["weights"] = {t: p.detach().numpy().copy() for t, p in run["params"].items()}
    return out


def end_run(name: str) -> None:
    """Forget run ``name`` (frees its memory)."""
    _RUNS.pop(str(name), None)


@torch.no_grad()
def _val_loss(run: dict) -> float:
    """Mean cross-entropy (nats per character) of the eval-mode graph on the validation windows, in
    batches of the exported batch size (the graph's shapes are fixed)."""
    data, n_ctx, b = run["val"], run["n_ctx"], run["batch"]
    tensors = {**run["fixed"], **run["params"]}
    total, count = 0.0, 0
    starts = run["starts"]
    for i in range(0, len(starts) - len(starts) % b, b):
        chunk = starts[i:i + b]
        x = torch.stack([data[s:s + n_ctx] for s in chunk])          # (b, T)
        y = torch.stack([data[s + 1:s + 1 + n_ctx] for s in chunk])  # (b, T)
        logits, _ = run["eval"].first_output(tensors, x)
        total += F.cross_entropy(logits.reshape(-1, logits.size(-1)), y.reshape(-1), reduction="sum").item()
        count += y.numel()
    return total / count
