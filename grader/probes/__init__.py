"""Behavioural probes: reference-free checks that localise a fault (DESIGN.md, "Diagnosis").

A probe calls the student's own function on designed inputs and compares it with *itself*: perturb a
future token and watch the past, perturb one batch element and watch the others, change one bias, drive
one head, zero the sub-layers, read the attention weights back through one-hot values. No reference
implementation is involved, so probes run on the judge and in the student bundle alike.

A probe returns a :class:`Finding` -- the component at fault and what was observed, in one sentence a
student can act on -- or ``None`` when it saw nothing wrong or could not tell (the function raised, or
returned something that is not a finite float64 array of the contract's shape: the layout checks report
that). Probes never raise because of the student's code.

Modules:

- :mod:`grader.probes.mha`: ``multi_head_attention`` (``run``, ``PROBES``), gathering
  :mod:`~grader.probes.attention_mask` (causal mask, ``causal`` argument, batch elements),
  :mod:`~grader.probes.attention_layout` (biases, weight layout, head slots and split) and
  :mod:`~grader.probes.attention_softmax` (attention weights, precision, large scores), which share
  :mod:`~grader.probes.attention_calls` (seed, shapes, the call of the student's function).
- :mod:`grader.probes.block`: ``transformer_block`` (``run_block``, ``PROBES``): residual stream, layer
  norms, causality, batch elements, attention sub-layer; its MLP in :mod:`~grader.probes.block_mlp`; the
  designed calls in :mod:`~grader.probes.block_designs`.
- :mod:`grader.probes.functions`: ``softmax``, ``layer_norm``, ``gelu`` (``run_functions``); their calls, and the
  block designs', are made once each through :class:`~grader.probes.memo.Memo`.
- :mod:`grader.probes.determinism`: the same call twice gives the same output (dropout left on does not);
  ``run`` and ``run_block`` report only that finding when it fails, since every other probe compares calls.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np


@dataclass(frozen=True)
class Finding:
    """What one probe observed about the student's function.

    Attributes:
        probe: the probe's name, e.g. ``"causality"``.
        component: the part at fault in the lesson's words, e.g. ``"causal mask"``,
            ``"output projection W_O"``, ``"b_qkv (query part)"``, ``"residual around the attention"``.
        observation: one sentence naming the component and the numbers observed, e.g. "changing token 5
            moved your output at token 3 (by 0.41): the causal mask lets tokens see the future".
    """

    probe: str
    component: str
    observation: str


def call(function: Callable, *args, shape: tuple[int, ...] | None = None, **kwargs) -> np.ndarray | None:
    """``function(*args, **kwargs)`` as a finite float64 array, or ``None`` when it is not one.

    Args:
        function: the student's function (a local callable, or the sandbox proxy's method).
        shape: the contract's output shape; a result of another shape is ``None``.

    Returns:
        The result, or ``None`` if the call raised anything, or returned something other than a
        float64 ``np.ndarray`` (of ``shape`` when given) with only finite values.
    """
    try:
        out = function(*args, **kwargs)
    except Exception:  # noqa: BLE001 - a probe that cannot run finds nothing; the checks report the error
        return None
    if not isinstance(out, np.ndarray) or out.dtype != np.float64:
        return None
    if shape is not None and out.shape != tuple(shape):
        return None
    if not np.isfinite(out).all():
        return None
    return out


__all__ = ["Finding", "call"]
