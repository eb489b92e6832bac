"""The grader's harness for exercise 4: runs inside the sandbox, next to the student's ``model.py``.

The student's module is used here for one thing: to build the model (``model.Config``, ``model.Block``,
``model.GPT``) and export it with ``torch.export``. Nothing is trained or judged in this process --
whatever the student's module does to it (patches torch, replaces this harness, counts calls) reaches
nothing but the export. What leaves is data in the wire format: graphs of ATen calls as JSON and the
tensors they read as arrays (nothing is unpickled outside this sandbox). The clean process
(``trainer.py``) checks, runs and trains those graphs with the grader's own loop.

Its public functions are what the exercise's checks call as ``submission.NAME(...)``.
"""
from __future__ import annotations

import math
import operator
import sys
import traceback
import warnings
from pathlib import Path

import torch

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
        "block_params": {k: list(v.shape) for k, v in block.named_parameters()},  # weights; a mask buffer is fine
        "block_modules": [name for name, _ in block.named_children()],
        "gpt_params": int(sum(p.numel() for p in net.parameters())),
        "gpt_blocks": len(blocks),
    }


# ---------------------------------------------------------------------------------------- export
# What leaves the sandbox for grading: the student's model as exported graphs of ATen calls (JSON) and
# the tensors they read (arrays). The grader checks, trains and evaluates these in a process that never
# imports model.py (exercises/exercise4/aten_graph.py reads this format; its docstring describes it).

class ExportError(Exception):
    """The student's model could not be exported (the message names the construct and what to write)."""


def _arg(value, rename: dict):
    """One argument of an exported call as JSON (aten_graph's ARG); ``rename`` maps tied inputs to one name."""
    if isinstance(value, torch.fx.Node):
        return {"node": rename.get(value.name, value.name)}
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else {"float": repr(value)}
    if isinstance(value, (list, tuple)):
        return [_arg(v, rename) for v in value]
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
    """An ExportedProgram as (graph JSON, {input target: array}) -- aten_graph's format, version 1.

    A tensor the model uses under two names (the output layer tied to the token embedding) is one input
    of the graph, as it is one parameter of the model: its uses all read the first name.
    """
    sig = program.graph_signature
    values = {**program.state_dict, **program.constants}
    for spec in sig.input_specs:
        if spec.kind.name not in _KINDS:
            raise ExportError(f"the exported model takes an input of kind {spec.kind.name}; use only parameters, "
                              "buffers and tensors computed in forward")
    # Tied tensors: one name each, and the output layer tied to the token embedding keeps the embedding's
    # name whichever of the two modules was made first.
    rename, first_of = {}, {}
    for spec in sorted(sig.input_specs, key=lambda s: s.target == "lm_head.weight"):
        if _KINDS[spec.kind.name] == "input":
            continue
        tensor = values[spec.target]
        key = (tensor.data_ptr(), tuple(tensor.shape), tuple(tensor.stride()), tensor.dtype)
        if key in first_of and tensor.data_ptr() != 0:
            rename[spec.arg.name] = first_of[key]
        else:
            first_of[key] = spec.arg.name
    inputs = [{"name": spec.arg.name, "kind": _KINDS[spec.kind.name], "target": spec.target or spec.arg.name}
              for spec in sig.input_specs if spec.arg.name not in rename]
    mutated = [s.target or s.arg.name for s in sig.output_specs if s.kind.name != "USER_OUTPUT"]
    if mutated:
        raise ExportError(f"forward changes {', '.join(map(str, mutated))} (a buffer or an input) while it runs; "
                          "a block must compute its output without keeping state between calls")
    nodes, outputs = [], []
    for node in program.graph.nodes:
        if node.op == "placeholder":
            continue
        if node.op == "output":
            outputs = [_arg(v, rename) for v in node.args[0]]
            continue
        if node.op != "call_function":
            raise ExportError(f"the exported graph has a {node.op} node")
        stack = node.meta.get("nn_module_stack") or {}
        module = list(stack.values())[-1][0] if stack else ""
        op = "getitem" if node.target is operator.getitem else str(node.target)
        nodes.append({"name": node.name, "op": op, "args": _arg(list(node.args), rename),
                      "kwargs": {k: _arg(v, rename) for k, v in node.kwargs.items()}, "module": str(module)})
    tensors = {spec["target"]: values[spec["target"]].detach().cpu().numpy().copy()
               for spec in inputs if spec["kind"] != "input"}
    return {"format": 1, "inputs": inputs, "nodes": nodes, "outputs": outputs}, tensors


def _export(module, example: torch.Tensor) -> tuple[dict, dict]:
    """``module`` exported for ``example`` (the mode it is in), as (graph, tensors).

    The module first runs once as it is: an error of the student's own forward reaches the grader as
    that error (with its traceback), not as an export problem.

    Raises:
        ExportError: torch.export could not trace it, or the graph cannot be carried.
    """
    with torch.no_grad():
        module(example)
    try:
        with warnings.catch_warnings():  # torch.export's own deprecation warnings are not the student's output
            warnings.simplefilter("ignore")
            program = torch.export.export(module, (example,))
            if any(n.op == "call_function" and getattr(getattr(n.target, "_schema", None), "is_mutable", False)
                   for n in program.graph.nodes):
                program = program.run_decompositions({})  # in-place calls (x += ...) become pure ones
    except Exception as exc:  # noqa: BLE001 - torch.export's errors are many; the message is what counts
        line = _failing_line(exc)
        if line.startswith("assert ") and not getattr(model, "_grader_without_asserts", False):
            raise _AssertInForward from None
        raise ExportError(_export_failure(exc)) from None
    return _graph(program)


class _AssertInForward(Exception):
    """The export failed on an ``assert`` of the student's forward (a check on a tensor's value)."""


def _failing_line(exc: Exception) -> str:
    """The line of model.py where ``exc`` was raised ("" when it was not raised in model.py)."""
    import linecache

    source = getattr(model, "__file__", None)
    frames = [f for f, _ in traceback.walk_tb(exc.__traceback__) if f.f_code.co_filename == source]
    return linecache.getline(source, frames[-1].f_lineno).strip() if frames else ""


def _without_asserts() -> None:
    """Use model.py compiled without its ``assert`` statements from now on (as ``python -O`` runs it).

    A correct model may check its tensors with ``assert``; torch.export cannot trace a Python check on a
    tensor's value, and an assert changes nothing that the model computes, so the grader exports the model
    without them (the eager run before each export still runs them)."""
    global model
    import types

    source = Path(model.__file__).read_bytes()
    module = types.ModuleType("model")
    module.__file__ = model.__file__
    module._grader_without_asserts = True
    sys.modules["model"] = module  # dataclasses look their module up while the class is made
    exec(compile(source, model.__file__, "exec", optimize=1), module.__dict__)
    model = module


def _exported(build, example: torch.Tensor) -> dict:
    """``build()`` exported in both modes (:func:`_both_modes`); once more without asserts when one of them
    stopped the export."""
    try:
        return _both_modes(build(), example)
    except _AssertInForward:
        _without_asserts()
        return _both_modes(build(), example)


#: What torch.export's errors mean in the student's terms (a part of the error's type or text -> why).
_EXPORT_CAUSES = (
    ("DataDependent", "a Python `if`, `while`, `.item()` or `.tolist()` on a tensor's value (use torch.where, "
                      "or a mask)"),
    ("numpy", "NumPy called on a tensor inside forward (use torch operations)"),
)


def _export_failure(exc: Exception) -> str:
    """One message for a failed export: the construct, where in model.py, and what to write instead."""
    text = str(exc).strip()
    first = text.splitlines()[0][:300] if text else type(exc).__name__
    cause = next((why for key, why in _EXPORT_CAUSES if key in type(exc).__name__ or key in text[:2000]), None)
    where = ""
    source = getattr(model, "__file__", None)
    frames = [f for f, _ in traceback.walk_tb(exc.__traceback__) if f.f_code.co_filename == source]
    if frames:
        where = f" at model.py line {frames[-1].f_lineno} (`{_failing_line(exc)[:120]}`)"
    what = f"{cause}{where}" if cause else f"{type(exc).__name__}: {first}{where}"
    return (f"torch.export could not trace your model: {what}. Write forward with tensor operations only: no "
            "Python branches on tensor values (use torch.where), no .item() or NumPy inside forward, no printing "
            "or global state.")


def export_gpt(config: dict, seed: int, batch_size: int) -> dict:
    """``GPT(Config(**config))`` built with ``torch.manual_seed(seed)``, exported in training and in eval mode.

    Both programs take token ids of shape (batch_size, n_ctx) (int64) and return the logits first.

    Returns:
        ``{"train": graph, "eval": graph, "state": {target: array}}``: the two graphs (aten_graph's format)
        and the model's initial parameters, buffers and constants (float32 as built).
    """
    return _exported(lambda: _gpt(config, seed), torch.zeros(int(batch_size), int(config["n_ctx"]), dtype=torch.int64))


def export_block(config: dict, shape: list) -> dict:
    """``Block(Config(**config))`` in float64, exported in training and eval mode for inputs of ``shape`` (B, T, C).

    Returns:
        ``{"train": graph, "eval": graph, "state": {target: array}}`` (the block's own initial tensors; the
        grader replaces the parameters with its own).
    """
    return _exported(lambda: _block(config).to(torch.float64),
                     torch.zeros(tuple(int(s) for s in shape), dtype=torch.float64))


def _both_modes(module, example: torch.Tensor) -> dict:
    """``module`` exported in training mode and in eval mode: ``{"train", "eval", "state"}``."""
    module.train()
    train, state = _export(module, example)
    module.eval()
    evaluate, state_eval = _export(module, example)
    return {"train": train, "eval": evaluate, "state": {**state, **state_eval}}
