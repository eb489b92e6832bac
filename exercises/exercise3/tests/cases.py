"""Exercise 3's stored cases: what the public checks compare with, on the judge and in the bundle.

The hidden checks compare with PyTorch (``tests/reference.py``) and name mistakes by recomputing known
wrong variants (``tests/hidden/mistakes.py``). Both implement the answer, so neither ships to students
(DESIGN.md, "Layout"). The public checks compare with **stored cases** instead: for each public case, its
inputs (random weights with non-zero biases, inputs neither unit-scale nor normalised, drawn once from a
fixed seed and rounded to float32 so the file holds them exactly), PyTorch's float64 answer for them,
and every known single mistake's output on the same inputs with its message. Numbers, not code: the
public checks give the same verdict and name the same single mistakes on the judge and in the bundle.

The files ``cases/public.npz`` (arrays) and ``cases/public.json`` (per case: the call's arguments and
the known mistakes' messages and matching rules) are written on the judge side by
``tests/test_exercise3_cases.py`` from the reference and the variants, whose tests also check that they
still agree with both. Rewrite them after changing either with::

    .venv/bin/python tests/test_exercise3_cases.py --write
"""
from __future__ import annotations

import dataclasses
import functools
import json
from pathlib import Path

import numpy as np

from grader.compare import Mistake

#: Where the stored cases are.
CASES = Path(__file__).resolve().parent / "cases"
ARRAYS = CASES / "public.npz"
META = CASES / "public.json"


@dataclasses.dataclass(frozen=True)
class Case:
    """One stored public case (arrays float64 once loaded).

    Attributes:
        name: e.g. ``"mha_causal"``.
        function: the student's function it calls, e.g. ``"multi_head_attention"``.
        inputs: the array arguments by name (``x``, ``w_qkv``, ...; for the block ``x`` only).
        params: the block's ``params`` dict (``state_dict`` names), empty for other functions.
        args: the other arguments (``n_heads``, ``causal``, ``axis``, ``eps``), JSON values.
        expected: PyTorch's float64 answer for these inputs.
        variants: mistake key -> what that known mistake returns here (may hold NaN/inf).
        mistakes: mistake key -> ``Mistake`` fields other than ``compute`` (``message``, ``rtol``, ...).
    """

    name: str
    function: str
    inputs: dict[str, np.ndarray]
    params: dict[str, np.ndarray]
    args: dict
    expected: np.ndarray
    variants: dict[str, np.ndarray]
    mistakes: dict[str, dict]

    def known_mistakes(self) -> dict[str, Mistake]:
        """The stored variants as :class:`grader.compare.Mistake` objects for ``expect_array``."""
        return {key: Mistake(compute=lambda key=key: self.variants[key], **fields)
                for key, fields in self.mistakes.items() if key in self.variants}

    def call(self, function):
        """``function`` (the student's) called on this case's inputs, with keyword arguments as the contract."""
        if self.params:
            return function(self.inputs["x"], dict(self.params), **self.args)
        return function(*self.inputs.values(), **self.args)


def pack(cases: list[Case]) -> tuple[dict[str, np.ndarray], dict]:
    """Cases as the arrays of one ``.npz`` ("CASE/inputs/NAME", "CASE/params/NAME", "CASE/expected",
    "CASE/variants/KEY") and the JSON metadata (per case: function, argument order, args, mistakes)."""
    arrays, meta = {}, {}
    for case in cases:
        arrays.update({f"{case.name}/inputs/{k}": v for k, v in case.inputs.items()})
        arrays.update({f"{case.name}/params/{k}": v for k, v in case.params.items()})
        arrays.update({f"{case.name}/variants/{k}": v for k, v in case.variants.items()})
        arrays[f"{case.name}/expected"] = case.expected
        meta[case.name] = {"function": case.function, "inputs": list(case.inputs), "params": list(case.params),
                           "args": case.args, "mistakes": case.mistakes}
    return arrays, meta


def unpack(arrays, meta: dict) -> dict[str, Case]:
    """The inverse of :func:`pack`: ``arrays`` any mapping (e.g. an open ``.npz``), every array float64.

    Raises:
        KeyError: an array named in ``meta`` is missing.
    """
    def group(name, kind, keys):
        return {k: np.asarray(arrays[f"{name}/{kind}/{k}"], dtype=np.float64) for k in keys}

    out = {}
    for name, m in meta.items():
        variants = {k: np.asarray(arrays[f"{name}/variants/{k}"], dtype=np.float64)
                    for k in m["mistakes"] if f"{name}/variants/{k}" in arrays}
        out[name] = Case(name=name, function=m["function"], inputs=group(name, "inputs", m["inputs"]),
                         params=group(name, "params", m["params"]), args=dict(m["args"]),
                         expected=np.asarray(arrays[f"{name}/expected"], dtype=np.float64),
                         variants=variants, mistakes=m["mistakes"])
    return out


@functools.lru_cache(maxsize=1)
def stored() -> dict[str, Case]:
    """Every stored public case by name, read once per process.

    Raises:
        FileNotFoundError: the case files are missing (rewrite them: see the module's doc).
    """
    meta = json.loads(META.read_text(encoding="utf-8"))
    with np.load(ARRAYS, allow_pickle=False) as arrays:
        return unpack(arrays, meta)


def case(name: str) -> Case:
    """The stored case ``name`` (see :func:`stored`)."""
    return stored()[name]
