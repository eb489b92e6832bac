"""Exercise 4's exported graphs: what the harness writes, what aten_graph accepts and how it runs them.

The harness runs in the student's sandbox and imports the student's ``model``; here it is imported
in-process with the reference solution as ``model`` (a test of the grader's own, not a grading).
"""
from __future__ import annotations

import copy
import importlib.util
import sys

import numpy as np
import pytest
import torch
from conftest import ROOT
from torch.nn import functional as F

EX4 = ROOT / "exercises" / "exercise4"
sys.path.insert(0, str(ROOT))


def _load(name: str, path):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses look their module up while the class is made
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def ex4():
    """(harness, aten_graph, trainer, the solution's model module), imported as the sandboxes do."""
    saved = {k: sys.modules.get(k) for k in ("model", "aten_graph", "ex4_harness", "ex4_trainer")}
    threads = torch.get_num_threads()
    _load("model", ROOT / "solutions" / "exercise4" / "model.py")
    aten_graph = _load("aten_graph", EX4 / "aten_graph.py")
    try:
        harness = _load("ex4_harness", EX4 / "harness.py")
        trainer = _load("ex4_trainer", EX4 / "trainer.py")
        yield harness, aten_graph, trainer, sys.modules["model"]
    finally:
        torch.set_num_threads(threads)
        for k, v in saved.items():
            if v is None:
                sys.modules.pop(k, None)
            else:
                sys.modules[k] = v


class Masked(torch.nn.Module):
    """Attention written by hand: a float32 mask made in forward, an in-place add, a non-persistent buffer."""

    def __init__(self, dropout: float = 0.0):
        super().__init__()
        self.proj = torch.nn.Linear(6, 6)
        self.register_buffer("scale", torch.tensor(0.5), persistent=False)
        self.dropout = dropout

    def forward(self, x):  # (B, T, 6)
        T = x.shape[1]
        mask = torch.triu(torch.full((T, T), float("-inf"), dtype=torch.float32), diagonal=1)  # (T, T)
        att = (x @ x.transpose(1, 2)) * self.scale + mask  # (B, T, T)
        y = F.softmax(att, dim=-1) @ x
        y += 1.0
        return F.dropout(self.proj(y), self.dropout, self.training)


def test_a_hand_written_model_runs_in_float64_as_eager_torch_does(ex4):
    harness, aten_graph, trainer, _ = ex4
    module = Masked().train()
    graph, tensors = harness._export(module, torch.zeros(2, 5, 6))
    assert aten_graph.problems(graph) == []
    assert {s["kind"] for s in graph["inputs"]} == {"parameter", "constant", "input"} or \
        {s["kind"] for s in graph["inputs"]} == {"parameter", "buffer", "input"}
    assert not any(n["op"].split(".")[1].endswith("_") for n in graph["nodes"] if n["op"] != "getitem")  # no add_
    rng = np.random.default_rng(0)
    x, cot = rng.standard_normal((2, 5, 6)), rng.standard_normal((2, 5, 6))
    got = trainer.forward(graph, tensors, x, "float64", cot)
    # The truth: the same module in float64, eagerly, with the same weights.
    eager = copy.deepcopy(module).double()
    xt = torch.from_numpy(x).requires_grad_(True)
    out = eager(xt)
    (out * torch.from_numpy(cot)).sum().backward()
    assert got["out"].dtype == np.float64  # the float32 mask made in forward was promoted too
    np.testing.assert_allclose(got["out"], out.detach().numpy(), rtol=0, atol=1e-12)
    np.testing.assert_allclose(got["x_grad"], xt.grad.numpy(), rtol=0, atol=1e-12)
    np.testing.assert_allclose(got["grads"]["proj.weight"], eager.proj.weight.grad.numpy(), rtol=0, atol=1e-12)


def test_dropout_and_randomness_are_refused(ex4):
    harness, aten_graph, _, _ = ex4
    graph, _ = harness._export(Masked(dropout=0.1).train(), torch.zeros(2, 5, 6))
    found = aten_graph.problems(graph)
    assert len(found) == 1 and "dropout" in found[0] and "does not run" in found[0]


def test_state_kept_between_calls_is_refused_with_a_clear_message(ex4):
    harness, _, _, _ = ex4

    class Counter(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.register_buffer("calls", torch.zeros(()))

        def forward(self, x):
            self.calls += 1  # a step counter: the graph would behave differently on later calls
            return x * self.calls

    with pytest.raises(harness.ExportError, match="changes calls .* while it runs"):
        harness._export(Counter(), torch.zeros(2, 3))


def _graph(nodes, inputs=None, outputs=None):
    return {"format": 1, "inputs": inputs or [{"name": "x", "kind": "input", "target": "x"}],
            "nodes": nodes, "outputs": outputs or [{"node": nodes[-1]["name"]}] if nodes else [{"node": "x"}]}


@pytest.mark.parametrize("node, words", [
    ({"name": "a", "op": "aten.add_.Tensor", "args": [{"node": "x"}, 1]}, "add_"),
    ({"name": "a", "op": "aten.rand.default", "args": [[3]]}, "does not run"),
    ({"name": "a", "op": "aten.bernoulli.p", "args": [{"node": "x"}, 0.5]}, "does not run"),
    ({"name": "a", "op": "aten.empty.memory_format", "args": [[3]]}, "does not run"),
    ({"name": "a", "op": "aten.add.out", "args": [{"node": "x"}, {"node": "x"}]}, "out= variant"),
    ({"name": "a", "op": "builtins.eval", "args": ["1"]}, "not an ATen operator"),
    ({"name": "a", "op": "aten.linear.default; import os", "args": []}, "not an ATen operator"),
    ({"name": "a", "op": "aten.relu.default", "args": [{"node": "later"}]}, "before it is computed"),
    ({"name": "a", "op": "aten.ones.default", "args": [[2]], "kwargs": {"device": {"device": "cuda"}}}, "kind"),
    ({"name": "a", "op": "aten.relu.default", "args": [{"__class__": "os.system"}]}, "kind"),
    ({"name": "a b", "op": "aten.relu.default", "args": [{"node": "x"}]}, "malformed"),
    ({"name": "a", "args": [{"node": "x"}]}, "not an ATen operator"),
    ({"name": "a", "op": "aten.relu.overloads", "args": [{"node": "x"}]}, "not an operator of this torch"),
    ({"name": "a", "op": "getitem", "args": [{"node": []}, 0]}, "picks a result"),
])
def test_graphs_outside_the_allow_list_are_refused_naming_the_call(ex4, node, words):
    _, aten_graph, _, _ = ex4
    found = aten_graph.problems(_graph([dict(node, kwargs=node.get("kwargs", {}), module="")]))
    assert len(found) == 1 and words in found[0], found


def test_a_graph_with_two_user_inputs_or_none_is_refused(ex4):
    _, aten_graph, _, _ = ex4
    two = _graph([{"name": "a", "op": "aten.add.Tensor", "args": [{"node": "x"}, {"node": "y"}], "kwargs": {}}],
                 inputs=[{"name": "x", "kind": "input", "target": "x"}, {"name": "y", "kind": "input", "target": "y"}])
    assert "exactly one input" in aten_graph.problems(two)[0]
    assert aten_graph.problems({"format": 2}) and aten_graph.problems([]) and aten_graph.problems(None)


def test_the_solution_gpt_exports_with_its_tied_output_layer_as_one_parameter(ex4):
    harness, aten_graph, trainer, _ = ex4
    from exercises.exercise4.tests import checks, settings

    ex = harness.export_gpt(settings.model_config(True, True), settings.SEED, 16)
    for mode in ("train", "eval"):
        assert aten_graph.problems(ex[mode]) == []
        params = aten_graph.Program(ex[mode]).parameters
        assert "wte.weight" in params and "lm_head.weight" not in params  # tied: one tensor, as in the model
        assert len(params) == 2 + 6 * 12 + 2
    # Each block's input is found from the graph: the gradient profile of the lesson (flat with residuals).
    x, y = checks.grad_batch()
    flow = trainer.grad_flow(ex["train"], ex["state"], x, y, 6)
    assert len(flow["blocks"]) == 6 and all(np.isfinite(flow["blocks"]))
    assert flow["blocks"][0] >= 0.1 * flow["blocks"][-1]
    assert aten_graph.block_inputs(ex["train"], 6)[0] != aten_graph.block_inputs(ex["train"], 6)[1]


def test_einsum_and_a_zero_dropout_are_accepted_any_other_dropout_is_not(ex4):
    """Common ways of writing attention run; nn.Dropout(0.0) in training mode changes nothing and is allowed."""
    harness, aten_graph, trainer, _ = ex4

    class Einsum(torch.nn.Module):
        def __init__(self, p):
            super().__init__()
            self.proj, self.drop = torch.nn.Linear(4, 4), torch.nn.Dropout(p)

        def forward(self, x):  # (B, T, 4)
            att = torch.einsum("btc,bsc->bts", x, x).softmax(-1)  # (B, T, T)
            return self.drop(self.proj(torch.einsum("bts,bsc->btc", att, x)))

    graph, tensors = harness._export(Einsum(0.0).train(), torch.zeros(2, 3, 4))
    assert aten_graph.problems(graph) == []
    x = np.random.default_rng(1).standard_normal((2, 3, 4))
    eager = copy.deepcopy(Einsum(0.0)).double()
    eager.load_state_dict({k: torch.from_numpy(v).double() for k, v in tensors.items()})
    np.testing.assert_allclose(trainer.forward(graph, tensors, x)["out"], eager(torch.from_numpy(x)).detach().numpy(),
                               rtol=0, atol=1e-12)
    graph, _ = harness._export(Einsum(0.1).train(), torch.zeros(2, 3, 4))
    assert aten_graph.problems(graph) == ["it uses dropout with p=0.1: the grader's models have no dropout (p=0)"]
