"""The grader's harness for exercise 4: runs inside the sandbox, next to the student's ``model.py``.

The judge cannot hold the student's torch model (nothing from the sandbox is unpickled), so this
module does the torch work where the student's code lives and answers in the wire format: NumPy
arrays, numbers, strings, lists and dicts of these. Its public functions are what the exercise's
checks call as ``submission.NAME(...)``.

Only the model classes are the student's (``model.Config``, ``model.Block``, ``model.GPT``). The
training loop, the optimiser, the data order, the seeds and the loss are the grader's, written here;
whatever ``train`` or ``estimate_loss`` the student's file holds is never called. The student's copy
of this loop in the skeleton does the same thing, so a student's report reproduces the re-run.

Everything is deterministic for a given seed: one torch thread, seeded init, seeded batches.
"""
from __future__ import annotations

import math
import operator
import time

import numpy as np
import torch
from torch.nn import functional as F

torch.set_num_threads(1)  # steadier than two under load, and the same numbers as the student's run
try:
    torch.set_num_interop_threads(1)
except RuntimeError:  # already set, or parallel work has started (the harness imported twice in one process)
    pass

import model  # noqa: E402  (the student's model.py; imported after the thread settings)

#: The submodules of a block the grader loads weights into (README's contract).
BLOCK_MODULES = ("ln1", "attn", "ln2", "mlp")


class ContractError(Exception):
    """The student's model does not follow the skeleton's contract (names, signatures, shapes)."""


def _config(config: dict):
    """``model.Config(**config)``, with a clear message when the student's Config does not take these fields."""
    if not hasattr(model, "Config"):
        raise ContractError("model.py has no Config class (keep the skeleton's dataclass Config).")
    try:
        return model.Config(**config)
    except TypeError as exc:
        raise ContractError(f"model.Config({', '.join(f'{k}={v!r}' for k, v in config.items())}) failed: {exc}. "
                            "Keep the skeleton's fields: n_layer, d_model, n_heads, n_ctx, vocab_size, residual, "
                            "prenorm.") from exc


def _block(config: dict):
    cfg = _config(config)
    if not hasattr(model, "Block"):
        raise ContractError("model.py has no Block class (keep the skeleton's class names).")
    block = model.Block(cfg)
    missing = [name for name in BLOCK_MODULES if not isinstance(getattr(block, name, None), torch.nn.Module)]
    if missing:
        raise ContractError(f"Block has no submodule(s) {', '.join(missing)}: keep the skeleton's names "
                            f"{', '.join(BLOCK_MODULES)} so the grader can load weights into them.")
    return block


def _gpt(config: dict, seed: int):
    cfg = _config(config)
    if not hasattr(model, "GPT"):
        raise ContractError("model.py has no GPT class (keep the skeleton's class names).")
    torch.manual_seed(int(seed))
    net = model.GPT(cfg)
    if not isinstance(net, torch.nn.Module):
        raise ContractError("GPT(config) is not a torch.nn.Module.")
    return net


def _logits(net, x: torch.Tensor, vocab_size: int) -> torch.Tensor:
    """The model's logits for ``x`` (B, T), whether ``forward`` returns logits or (logits, loss)."""
    out = net(x)
    logits = out[0] if isinstance(out, (tuple, list)) else out
    want = (*x.shape, vocab_size)
    if not isinstance(logits, torch.Tensor) or tuple(logits.shape) != want:
        got = tuple(logits.shape) if isinstance(logits, torch.Tensor) else type(logits).__name__
        raise ContractError(f"GPT(idx) must return logits of shape {want} (or (logits, loss)); got {got}.")
    return logits


def describe(config: dict) -> dict:
    """What the student's classes look like: Config defaults, a block's parameters, the GPT's size.

    Returns ``{"config_defaults": {field: value}, "block_params": {name: shape}, "block_modules": [...],
    "gpt_params": int, "gpt_blocks": int}``.
    """
    defaults = {}
    fields = getattr(model.Config, "__dataclass_fields__", {}) if hasattr(model, "Config") else {}
    for name, f in fields.items():
        value = f.default
        defaults[name] = value if isinstance(value, (bool, int, float, str)) else repr(value)
    block = _block(config)
    net = _gpt(config, 0)
    blocks = [m for m in net.modules() if isinstance(m, model.Block)]
    return {
        "config_defaults": defaults,
        "block_params": {k: list(v.shape) for k, v in block.state_dict().items()},
        "block_modules": [name for name, _ in block.named_children()],
        "gpt_params": int(sum(p.numel() for p in net.parameters())),
        "gpt_blocks": len(blocks),
    }


def block_forward(config: dict, state: dict, x: np.ndarray) -> np.ndarray:
    """The student's ``Block(Config(**config))`` in float64 with the weights ``state`` applied to ``x``.

    Args:
        config: Config fields, including ``residual`` and ``prenorm``.
        state: ``state_dict`` name -> float64 array (the names of the skeleton's block).
        x: (B, T, d_model) float64.

    Returns:
        (B, T, d_model) float64.
    """
    block = _block(config).to(torch.float64)
    tensors = {k: torch.from_numpy(np.array(v, dtype=np.float64)) for k, v in state.items()}
    own = block.state_dict()
    missing = sorted(set(own) - set(tensors))
    unexpected = sorted(set(tensors) - set(own))
    if missing or unexpected:
        parts = []
        if unexpected:
            parts.append(f"it lacks {', '.join(unexpected)}")
        if missing:
            parts.append(f"it has {', '.join(missing)}, which the skeleton's block does not")
        raise ContractError("Block's parameters are not the skeleton's: " + "; ".join(parts) + ". Keep the "
                            "skeleton's submodules (ln1, attn.c_attn, attn.c_proj, ln2, mlp.c_fc, mlp.c_proj).")
    bad = [f"{k} {tuple(own[k].shape)} (grader's {tuple(v.shape)})" for k, v in tensors.items()
           if tuple(own[k].shape) != tuple(v.shape)]
    if bad:
        raise ContractError("Block's parameter shapes differ from the skeleton's: " + "; ".join(bad) + ".")
    block.load_state_dict(tensors)
    block.eval()
    with torch.no_grad():
        out = block(torch.from_numpy(np.array(x, dtype=np.float64)))
    if not isinstance(out, torch.Tensor):
        raise ContractError(f"Block(x) returned {type(out).__name__}, not a tensor.")
    return out.detach().cpu().numpy()


def grad_flow(config: dict, seed: int, x_ids: np.ndarray, y_ids: np.ndarray) -> dict:
    """One forward and backward pass of a fresh, seeded ``GPT(Config(**config))`` on a fixed batch.

    The loss is the cross-entropy of the *last* position's prediction (mean over the batch). Backward
    from it, this measures the gradient that reaches each block along the last token's own stream:
    ``blocks[i]`` is the L2 norm of d loss / d (input of block i at the last position), for blocks in
    the order ``GPT.modules()`` visits them (input to output); ``final`` is the same at the input of
    the rest of the model after the last block. ``params[i]`` is the L2 norm of the gradient of all of
    block i's parameters.

    Returns:
        ``{"blocks": [...], "final": float, "params": [...], "loss": float}``.
    """
    net = _gpt(config, seed)
    net.train()
    blocks = [m for m in net.modules() if isinstance(m, model.Block)]
    if not blocks:
        raise ContractError("GPT contains no Block modules: build its layers from the Block class.")
    inputs: list = [None] * len(blocks)
    outputs: list = [None]

    def keep_input(i):
        def hook(module, args):
            if args and isinstance(args[0], torch.Tensor) and args[0].requires_grad and inputs[i] is None:
                args[0].retain_grad()
                inputs[i] = args[0]
        return hook

    def keep_output(module, args, out):
        if isinstance(out, torch.Tensor) and out.requires_grad:
            out.retain_grad()
            outputs[0] = out

    handles = [b.register_forward_pre_hook(keep_input(i)) for i, b in enumerate(blocks)]
    handles.append(blocks[-1].register_forward_hook(keep_output))
    try:
        x = torch.from_numpy(np.asarray(x_ids, dtype=np.int64))
        y = torch.from_numpy(np.asarray(y_ids, dtype=np.int64))
        logits = _logits(net, x, int(config["vocab_size"]))
        loss = F.cross_entropy(logits[:, -1], y[:, -1])
        net.zero_grad(set_to_none=True)
        loss.backward()
    finally:
        for h in handles:
            h.remove()

    def last(t):
        if t is None or t.grad is None:
            return float("nan")
        return float(t.grad[:, -1].detach().double().norm())

    params = []
    for block in blocks:
        grads = [p.grad.detach().double().pow(2).sum() for p in block.parameters() if p.grad is not None]
        params.append(float(torch.stack(grads).sum().sqrt()) if grads else 0.0)
    return {"blocks": [last(t) for t in inputs], "final": last(outputs[0]), "params": params, "loss": float(loss.detach())}


def train_run(config: dict, train_ids: np.ndarray, probe_ids: np.ndarray, *, steps: int, lr: float, seed: int,
              batch_size: int, weight_decay: float) -> dict:
    """Train a fresh ``GPT(Config(**config))`` with the grader's loop and send back what it learned.

    ``torch.manual_seed(seed)`` before the model is built; batches of ``batch_size`` random windows of
    ``train_ids`` from a generator seeded ``seed + 1``; AdamW(lr, betas (0.9, 0.999), weight_decay, fused),
    constant lr, no warm-up, no clipping; loss = mean cross-entropy of the logits. A step whose loss is
    not finite ends the run (the rest of the curve is NaN).

    The judge evaluates the trained weights itself (validation loss with its reference GPT); the
    logits of the trained model on ``probe_ids`` (B, T) let it check that the student's GPT computes
    what the reference GPT computes with those weights.

    Returns:
        ``{"curve": [training loss per step], "seconds": float, "diverged": bool,
        "state": {parameter name: float32 array}, "probe_logits": (B, T, vocab) float32 array}``
        (``named_parameters(remove_duplicate=False)``: a tied weight appears under both names).
    """
    started = time.perf_counter()
    n_ctx, vocab = int(config["n_ctx"]), int(config["vocab_size"])
    net = _gpt(config, seed)
    data = torch.from_numpy(np.asarray(train_ids, dtype=np.int64))
    batches = torch.Generator().manual_seed(int(seed) + 1)
    optimizer = torch.optim.AdamW(net.parameters(), lr=float(lr), betas=(0.9, 0.999), weight_decay=float(weight_decay),
                                  fused=True)
    net.train()
    curve: list[float] = []
    for _ in range(int(steps)):
        ix = torch.randint(len(data) - n_ctx - 1, (int(batch_size),), generator=batches)  # (b,)
        x = torch.stack([data[i:i + n_ctx] for i in ix])          # (b, T)
        y = torch.stack([data[i + 1:i + 1 + n_ctx] for i in ix])  # (b, T)
        logits = _logits(net, x, vocab)
        loss = F.cross_entropy(logits.reshape(-1, logits.size(-1)), y.reshape(-1))
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        curve.append(loss.item())
        if not np.isfinite(curve[-1]):
            break
    diverged = not np.isfinite(curve[-1]) if curve else False
    curve += [float("nan")] * (int(steps) - len(curve))
    net.eval()
    with torch.no_grad():
        probe = _logits(net, torch.from_numpy(np.asarray(probe_ids, dtype=np.int64)), vocab)
    state = {name: p.detach().cpu().numpy().copy() for name, p in net.named_parameters(remove_duplicate=False)}
    return {"curve": curve, "seconds": time.perf_counter() - started, "diverged": diverged, "state": state,
            "probe_logits": probe.detach().cpu().numpy().copy()}


# ---------------------------------------------------------------------------------------- export
# What leaves the sandbox for grading: the student's model as exported graphs of ATen calls (JSON) and
# the tensors they read (arrays). The grader checks, trains and evaluates these in a process that never
# imports model.py (exercises/exercise4/aten_graph.py reads this format; its docstring describes it).

class ExportError(Exception):
    """The student's model could not be exported (the message names the construct and what to write)."""


def _arg(value):
    """One argument of an exported call as JSON (aten_graph's ARG)."""
    if isinstance(value, torch.fx.Node):
        return {"node": value.name}
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else {"float": repr(value)}
    if isinstance(value, (list, tuple)):
        return [_arg(v) for v in value]
    if isinstance(value, torch.dtype):
        return {"dtype": str(value).removeprefix("torch.")}
    if isinstance(value, torch.device):
        return {"device": value.type}
    if isinstance(value, torch.layout):
        return {"layout": str(value).removeprefix("torch.")}
    if isinstance(value, torch.memory_format):
        return {"memory_format": str(value).removeprefix("torch.")}
    raise ExportError(f"the exported graph holds an argument of type {type(value).__name__}, which the grader "
                      "cannot carry")


_KINDS = {"PARAMETER": "parameter", "BUFFER": "buffer", "CONSTANT_TENSOR": "constant", "USER_INPUT": "input"}


def _graph(program) -> tuple[dict, dict]:
    """An ExportedProgram as (graph JSON, {input target: array}) -- aten_graph's format, version 1."""
    sig = program.graph_signature
    inputs = []
    for spec in sig.input_specs:
        kind = _KINDS.get(spec.kind.name)
        if kind is None:
            raise ExportError(f"the exported model takes an input of kind {spec.kind.name}; use only parameters, "
                              "buffers and tensors computed in forward")
        inputs.append({"name": spec.arg.name, "kind": kind, "target": spec.target or spec.arg.name})
    mutated = [s.target or s.arg.name for s in sig.output_specs if s.kind.name != "USER_OUTPUT"]
    if mutated:
        raise ExportError(f"forward changes {', '.join(map(str, mutated))} (a buffer or an input) while it runs; "
                          "a block must compute its output without keeping state between calls")
    nodes, outputs = [], []
    for node in program.graph.nodes:
        if node.op == "placeholder":
            continue
        if node.op == "output":
            outputs = [_arg(v) for v in node.args[0]]
            continue
        if node.op != "call_function":
            raise ExportError(f"the exported graph has a {node.op} node")
        stack = node.meta.get("nn_module_stack") or {}
        module = list(stack.values())[-1][0] if stack else ""
        if node.target is operator.getitem:
            op = "getitem"
        else:
            op = str(node.target)
        nodes.append({"name": node.name, "op": op, "args": _arg(list(node.args)),
                      "kwargs": {k: _arg(v) for k, v in node.kwargs.items()}, "module": str(module)})
    values = {**program.state_dict, **program.constants}
    tensors = {}
    for spec in inputs:
        if spec["kind"] != "input":
            t = values[spec["target"]]
            tensors[spec["target"]] = t.detach().cpu().numpy().copy()
    return {"format": 1, "inputs": inputs, "nodes": nodes, "outputs": outputs}, tensors


def _export(module, example: torch.Tensor) -> tuple[dict, dict]:
    try:
        program = torch.export.export(module, (example,)).run_decompositions({})
    except Exception as exc:  # noqa: BLE001 - torch.export's errors are many; the message is what counts
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise ExportError(
            f"torch.export could not trace your model: {type(exc).__name__}: {first[:400]}. Write forward with "
            "tensor operations only: no Python branches on tensor values (use torch.where), no .item() or "
            "NumPy inside forward, no printing or global state.") from None
    return _graph(program)


def export_gpt(config: dict, seed: int, batch_size: int) -> dict:
    """``GPT(Config(**config))`` built with ``torch.manual_seed(seed)``, exported in training and in eval mode.

    Both programs take token ids of shape (batch_size, n_ctx) (int64) and return the logits first.

    Returns:
        ``{"train": graph, "eval": graph, "state": {target: array}}``: the two graphs (aten_graph's format)
        and the model's initial parameters, buffers and constants (float32 as built).
    """
    net = _gpt(config, seed)
    example = torch.zeros(int(batch_size), int(config["n_ctx"]), dtype=torch.int64)
    net.train()
    train, state = _export(net, example)
    net.eval()
    evaluate, state_eval = _export(net, example)
    state.update(state_eval)
    return {"train": train, "eval": evaluate, "state": state}


def export_block(config: dict, shape: list) -> dict:
    """``Block(Config(**config))`` in float64, exported in training and eval mode for inputs of ``shape`` (B, T, C).

    Returns:
        ``{"train": graph, "eval": graph, "state": {target: array}}`` (the block's own initial tensors; the
        grader replaces the parameters with its own).
    """
    block = _block(config).to(torch.float64)
    example = torch.zeros(tuple(int(s) for s in shape), dtype=torch.float64)
    block.train()
    train, state = _export(block, example)
    block.eval()
    evaluate, state_eval = _export(block, example)
    state.update(state_eval)
    return {"train": train, "eval": evaluate, "state": state}
