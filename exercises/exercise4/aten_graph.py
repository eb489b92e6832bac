"""Exported torch programs as plain data: checked against an allow-list, then run (trusted code).

Exercise 4 grades the student's model without trusting the student's process. In the sandbox the
harness builds the model and exports it with ``torch.export`` (:func:`harness.export_program`); what
leaves the sandbox is a *graph* -- JSON of ATen operator calls -- and the tensors the graph reads
(parameters, buffers, constants) as ``.npy`` arrays. ``torch.export.load`` is not used: it unpickles.

This module is the other end, run in processes that never import the student's module (the judge, and
the clean training process :mod:`trainer`):

* :func:`problems` checks a graph: every call is an ATen operator of :data:`ALLOWED_OPS` (pure,
  deterministic tensor maths: no random numbers, no in-place or ``out=`` variants, no I/O), every
  argument is data of a known kind, every reference points to an earlier value, no buffer or input is
  mutated. A graph that passes is a pure function of its inputs: it cannot count steps, read the
  environment or call back into Python.
* :class:`Program` runs a checked graph eagerly, op by op, under autograd -- in float32 as exported,
  or in float64 (every float32 in the graph, its dtype arguments included, becomes float64: the same
  graph at a higher precision, for the 1e-6 parity checks).

Graph format (written by the harness, version 1)::

    {"format": 1,
     "inputs":  [{"name": "p_h_0_ln1_weight", "kind": "parameter" | "buffer" | "constant" | "input",
                  "target": "h.0.ln1.weight"}, ...],           # in the exported program's order
     "nodes":   [{"name": "linear", "op": "aten.linear.default", "args": [ARG, ...],
                  "kwargs": {"k": ARG}, "module": "h.0.attn"}, ...],
     "outputs": [ARG, ...]}                                       # the user outputs

    ARG = null | bool | int | float | str | [ARG, ...] | {"node": NAME} | {"float": "inf" | "-inf" | "nan"}
          | {"dtype": "float32"} | {"device": "cpu"} | {"layout": "strided"} | {"memory_format": "contiguous_format"}

``op`` is ``"getitem"`` for picking one result of a multi-output operator (``args: [{"node": N}, i]``).
``module`` is the submodule the call was made in (``nn_module_stack``), "" at the top level.
"""
from __future__ import annotations

import re

import torch

FORMAT = 1

#: ATen operators a graph may call (any overload but ``out`` ones). Tensor maths a small GPT uses,
#: written in any of the usual ways; nothing random, in-place, with side effects, or reading uninitialised
#: memory (``empty``); attention only without dropout (:func:`_check_call`).
ALLOWED_OPS = frozenset("""
    linear matmul mm bmm addmm baddbmm einsum mv dot outer t transpose permute view reshape _unsafe_view view_as
    reshape_as unsafe_split unsafe_chunk cumsum maximum minimum sign fill any all isinf isnan isfinite nan_to_num
    std_mean _assert_tensor_metadata dropout numpy_T mT adjoint swapaxes swapdims movedim moveaxis broadcast_to
    index_put index_select gather slice_scatter select_scatter logsumexp copy repeat_interleave tensor_split
    linalg_vector_norm
    contiguous clone alias detach expand expand_as unsqueeze squeeze flatten unflatten split
    split_with_sizes chunk unbind slice select narrow index cat stack repeat flip roll
    add sub rsub mul div neg pow sqrt rsqrt exp log abs reciprocal square tanh erf sigmoid gelu relu silu
    softmax _softmax log_softmax _log_softmax _safe_softmax masked_fill where tril triu
    ones zeros full arange scalar_tensor ones_like zeros_like full_like new_ones new_zeros new_full new_tensor
    layer_norm native_layer_norm mean var var_mean std sum amax amin max min clamp clamp_min clamp_max
    embedding scaled_dot_product_attention _to_copy to type_as lift_fresh_copy
    eq ne lt le gt ge logical_not logical_and logical_or bitwise_not bitwise_and bitwise_or
    sym_size
""".split())

#: dtypes a graph may name.
DTYPES = {"float32": torch.float32, "float64": torch.float64, "float16": torch.float16, "bfloat16": torch.bfloat16,
          "int64": torch.int64, "int32": torch.int32, "int16": torch.int16, "int8": torch.int8,
          "uint8": torch.uint8, "bool": torch.bool}
LAYOUTS = {"strided": torch.strided}
MEMORY_FORMATS = {"contiguous_format": torch.contiguous_format, "preserve_format": torch.preserve_format}
INPUT_KINDS = ("parameter", "buffer", "constant", "input")
#: Largest graph accepted (the reference GPT has about 170 calls).
MAX_NODES = 5000
_OP = re.compile(r"^aten\.([A-Za-z0-9_]+)\.([A-Za-z0-9_]+)$")
_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,199}$")


class GraphError(ValueError):
    """A graph is not one this module runs (the message says which call or argument, and why)."""


def _operator(op: str):
    """The ATen overload named ``op`` ("aten.linear.default").

    Raises:
        GraphError: not of that form, not on the allow-list, an ``out=`` or in-place variant, or unknown.
    """
    m = _OP.match(op) if isinstance(op, str) else None
    if m is None:
        raise GraphError(f"{str(op)[:80]!r} is not an ATen operator")
    name, overload = m.groups()
    if name not in ALLOWED_OPS:
        raise GraphError(f"it calls {op}, which the grader does not run (allowed: pure tensor maths such as "
                         "linear, matmul, softmax, layer_norm, scaled_dot_product_attention, gelu)")
    if "out" in overload.split("_"):
        raise GraphError(f"it calls {op}, an out= variant")
    packet = getattr(torch.ops.aten, name, None)
    fn = getattr(packet, overload, None) if packet is not None else None
    if not isinstance(fn, torch._ops.OpOverload):
        raise GraphError(f"{op} is not an operator of this torch")
    if fn._schema.is_mutable:
        raise GraphError(f"{op} changes its input in place")
    return fn


def _check_call(op: str, fn, args: list, kwargs: dict) -> None:
    """Rules for single operators: no dropout (it draws random numbers), in attention or on its own.

    Raises:
        GraphError: the call breaks a rule.
    """
    if op.startswith("aten.dropout."):  # nn.Dropout(0.0) in training mode: allowed, as it changes nothing
        p = kwargs.get("p", args[1] if len(args) > 1 else None)
        if p != 0:
            raise GraphError(f"it uses dropout with p={p!r}: the grader's models have no dropout (p=0)")
    if op.startswith("aten.scaled_dot_product_attention."):
        names = [a.name for a in fn._schema.arguments]
        at = names.index("dropout_p") if "dropout_p" in names else None
        p = kwargs.get("dropout_p", args[at] if at is not None and at < len(args) else 0.0)
        if p != 0:
            raise GraphError(f"its attention uses dropout_p={p!r}: the grader's models have no dropout (dropout_p=0)")


def problems(graph) -> list[str]:
    """What is wrong with ``graph`` (empty when it can be run). Pure Python: nothing is executed."""
    try:
        _check(graph)
    except GraphError as exc:
        return [str(exc)]
    except Exception as exc:  # noqa: BLE001 - a forged graph is data: whatever it breaks, it is refused
        return [f"it is malformed ({type(exc).__name__})"]
    return []


def _check(graph) -> None:
    if not isinstance(graph, dict) or graph.get("format") != FORMAT:
        raise GraphError("it is not an exported graph of the grader's format")
    inputs, nodes, outputs = graph.get("inputs"), graph.get("nodes"), graph.get("outputs")
    if not isinstance(inputs, list) or not isinstance(nodes, list) or not isinstance(outputs, list):
        raise GraphError("it lacks inputs, nodes or outputs")
    if len(nodes) > MAX_NODES:
        raise GraphError(f"it has {len(nodes)} calls (at most {MAX_NODES})")
    seen: set[str] = set()
    for spec in inputs:
        if not isinstance(spec, dict) or spec.get("kind") not in INPUT_KINDS or not isinstance(spec.get("target"), str) \
                or not _is_name(spec.get("name")) or spec["name"] in seen:
            raise GraphError(f"an input is malformed: {str(spec)[:120]}")
        seen.add(spec["name"])
    if sum(spec["kind"] == "input" for spec in inputs) != 1:
        raise GraphError("it must take exactly one input (the tensor passed to forward)")
    for node in nodes:
        if not isinstance(node, dict) or not _is_name(node.get("name")) or node["name"] in seen:
            raise GraphError(f"a call is malformed: {str(node)[:120]}")
        args, kwargs = node.get("args"), node.get("kwargs", {})
        if not isinstance(args, list) or not isinstance(kwargs, dict) or not isinstance(node.get("module", ""), str):
            raise GraphError(f"the call {node['name']} is malformed")
        if node.get("op") == "getitem":
            if len(args) != 2 or not isinstance(args[0], dict) or not isinstance(args[0].get("node"), str) \
                    or args[0]["node"] not in seen or type(args[1]) is not int or kwargs:
                raise GraphError(f"the call {node['name']} picks a result in a way the grader does not run")
        else:
            op = node.get("op")
            _check_call(op, _operator(op), args, kwargs)
            for value in [*args, *kwargs.values()]:
                _check_arg(value, seen, node["name"])
            if not all(isinstance(k, str) and _NAME.match(k) for k in kwargs):
                raise GraphError(f"the call {node['name']} has a malformed keyword")
        seen.add(node["name"])
    if not outputs:
        raise GraphError("it returns nothing")
    for value in outputs:
        _check_arg(value, seen, "output")


def _is_name(value) -> bool:
    return isinstance(value, str) and bool(_NAME.match(value))


def _check_arg(value, seen: set[str], where: str, depth: int = 0) -> None:
    if depth > 4:
        raise GraphError(f"an argument of {where} is nested too deeply")
    if value is None or isinstance(value, (bool, int, str)):
        if isinstance(value, str) and len(value) > 64:
            raise GraphError(f"an argument of {where} is a long string")
        return
    if isinstance(value, float):
        return
    if isinstance(value, list):
        if len(value) > 10_000:
            raise GraphError(f"an argument of {where} is a list of {len(value)} items")
        for item in value:
            _check_arg(item, seen, where, depth + 1)
        return
    if isinstance(value, dict) and len(value) == 1:
        (key, inner), = value.items()
        ok = {"node": lambda v: v in seen, "float": lambda v: v in ("inf", "-inf", "nan"),
              "dtype": lambda v: v in DTYPES, "device": lambda v: v == "cpu", "layout": lambda v: v in LAYOUTS,
              "memory_format": lambda v: v in MEMORY_FORMATS}.get(key)
        if ok is not None and isinstance(inner, str) and ok(inner):
            return
        if key == "node":
            raise GraphError(f"{where} uses {str(inner)[:60]!r} before it is computed")
    raise GraphError(f"an argument of {where} is of a kind the grader does not run: {str(value)[:80]}")


def _copy(self, src, non_blocking=False):
    """``aten.copy`` (the pure form of ``self.copy_(src)``): ``src``'s values in ``self``'s shape and dtype,
    differentiably."""
    return src.to(self.dtype).expand(self.shape).clone()


class Program:
    """A checked graph, ready to run.

    Args:
        graph: the graph (see the module's docstring).
        dtype: ``torch.float32`` runs the graph as exported; ``torch.float64`` turns every float32 in it
            (inputs and dtype arguments) into float64.

    Raises:
        GraphError: the graph does not pass :func:`problems`.
    """

    def __init__(self, graph: dict, dtype: torch.dtype = torch.float32):
        _check(graph)
        self.graph = graph
        self.dtype = dtype
        self.inputs = graph["inputs"]
        self.user_input = next(s["name"] for s in self.inputs if s["kind"] == "input")
        self._steps = []
        for node in graph["nodes"]:
            fn = None if node["op"] == "getitem" else _operator(node["op"])
            if node["op"] == "aten.copy.default":  # what x[...] = v becomes; aten.copy has no autograd formula
                fn = _copy
            self._steps.append((node["name"], fn, node["args"], node.get("kwargs", {})))

    @property
    def parameters(self) -> list[str]:
        """Targets of the parameter inputs ("h.0.ln1.weight", ...), in the graph's order."""
        return [s["target"] for s in self.inputs if s["kind"] == "parameter"]

    def _value(self, arg, env: dict):
        if isinstance(arg, list):
            return [self._value(a, env) for a in arg]
        if isinstance(arg, dict):
            (key, inner), = arg.items()
            if key == "node":
                return env[inner]
            if key == "float":
                return float(inner)
            if key == "dtype":
                dtype = DTYPES[inner]
                return self.dtype if dtype == torch.float32 else dtype
            if key == "device":
                return torch.device("cpu")
            if key == "layout":
                return LAYOUTS[inner]
            return MEMORY_FORMATS[inner]
        return arg

    def run(self, tensors: dict[str, torch.Tensor], x: torch.Tensor, keep=()) -> tuple[list, dict]:
        """Run the graph on ``x`` with ``tensors`` (input target -> tensor) for every other input.

        Float32 tensors are cast to the program's dtype (a differentiable cast: gradients reach them).
        Returns ``(outputs, kept)``: the user outputs, and the values of the nodes named in ``keep``.

        Raises:
            GraphError: an input is missing; KeyError never (the graph was checked).
            RuntimeError: an operator failed (wrong shapes, ...).
        """
        env: dict = {}
        for spec in self.inputs:
            if spec["kind"] == "input":
                env[spec["name"]] = x
                continue
            if spec["target"] not in tensors:
                raise GraphError(f"no value for the graph's {spec['kind']} {spec['target']}")
            t = tensors[spec["target"]]
            env[spec["name"]] = t.to(self.dtype) if t.dtype == torch.float32 and self.dtype != torch.float32 else t
        default = torch.get_default_dtype()
        if self.dtype != torch.float32:  # factories without a dtype (torch.ones(T, T)) made float32 when exported
            torch.set_default_dtype(self.dtype)
        try:
            for name, fn, args, kwargs in self._steps:
                if fn is None:
                    env[name] = env[args[0]["node"]][args[1]]
                else:
                    env[name] = fn(*self._value(args, env), **{k: self._value(v, env) for k, v in kwargs.items()})
        finally:
            torch.set_default_dtype(default)
        outputs = [self._value(o, env) for o in self.graph["outputs"]]
        return outputs, {k: env[k] for k in keep if k in env}

    def first_output(self, tensors: dict[str, torch.Tensor], x: torch.Tensor, keep=()):
        """The first user output (the logits, or a block's output) and the kept values.

        Raises:
            GraphError: the first output is not a tensor.
        """
        outputs, kept = self.run(tensors, x, keep)
        if not isinstance(outputs[0], torch.Tensor):
            raise GraphError("its first output is not a tensor")
        return outputs[0], kept


def block_inputs(graph: dict, n_layer: int, prefix: str = "h") -> list[str] | None:
    """The node (or input) that feeds block ``i`` of ``prefix`` from outside it, for each block.

    A block's input is the one value computed from the model's input outside ``h.i`` that calls inside
    ``h.i`` read (not a parameter, buffer or constant, nor a mask made from them). None when a block has
    no such value or several.
    """
    kinds = {s["name"]: s["kind"] for s in graph["inputs"]}
    owner = {n["name"]: n.get("module", "") for n in graph["nodes"]}
    # Values computed from the model's input: a block's input is one of them (a mask made once outside the
    # blocks and passed to each is not).
    from_input = {s["name"] for s in graph["inputs"] if s["kind"] == "input"}
    for node in graph["nodes"]:
        if any(ref in from_input for ref in _refs([*node["args"], *node.get("kwargs", {}).values()])):
            from_input.add(node["name"])
    found = []
    for i in range(n_layer):
        scope = f"{prefix}.{i}"
        inside = {name for name, mod in owner.items() if mod == scope or mod.startswith(scope + ".")}
        feeds: set[str] = set()
        for node in graph["nodes"]:
            if node["name"] in inside:
                for ref in _refs([*node["args"], *node.get("kwargs", {}).values()]):
                    if ref not in inside and kinds.get(ref, "input") == "input" and ref in from_input:
                        feeds.add(ref)
        if len(feeds) != 1:
            return None
        found.append(feeds.pop())
    return found


def _refs(value):
    if isinstance(value, list):
        for v in value:
            yield from _refs(v)
    elif isinstance(value, dict) and "node" in value:
        yield value["node"]

