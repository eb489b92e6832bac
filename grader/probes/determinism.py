"""Probes that the student's function is deterministic: the same call twice gives the same output.

Every other probe compares the student's function with itself on designed inputs ("changing token 4
moved token 0"), so it assumes that an unchanged input gives an unchanged output. A function that draws
random numbers (attention dropout left on at inference, ``np.random`` noise) breaks that assumption: its
outputs move between any two calls, and the other probes would blame the causal mask, the batch, a bias
or the layer norms for noise. When the same call twice gives different outputs, :func:`grader.probes.
mha.run` and :func:`grader.probes.block.run_block` report this finding alone.

The contract's functions (exercises/exercise3/README.md) are deterministic: the same float64 inputs give
the same float64 outputs, bit for bit on one machine; :data:`SAME` allows for round-off all the same.
"""
from __future__ import annotations

import numpy as np

from grader.probes import Finding
from grader.probes.attention_calls import SEED, H, call_mha, random_inputs
from grader.probes.block_designs import BlockRun, as_run, maxabs, scale

#: Two outputs of one call differ when they differ by more than this, relative to their size.
SAME = 1e-12


def _differ(a: np.ndarray, b: np.ndarray) -> bool:
    return maxabs(a - b) > SAME * scale(a, b)


def _finding(function: str, component: str, a: np.ndarray, b: np.ndarray) -> Finding:
    return Finding("determinism", component,
                   f"two identical calls of your {function} returned outputs that differ by up to "
                   f"{maxabs(a - b):.2g}: it is random (attention dropout left on at inference, or np.random "
                   "somewhere); the contract's function gives the same output for the same input, and the other "
                   "probes, which compare calls, were not run")


def probe_determinism(mha) -> Finding | None:
    """multi_head_attention called twice on the same random inputs (B 2, T 5, d 24, 4 heads, causal=True;
    2 calls). Component ``"randomness in multi_head_attention"`` when the outputs differ."""
    x, w, b, w_out, b_out = random_inputs(np.random.default_rng(SEED))
    first = call_mha(mha, x, w, b, w_out, b_out, H, causal=True)
    second = None if first is None else call_mha(mha, x, w, b, w_out, b_out, H, causal=True)
    if second is None or not _differ(first, second):
        return None
    return _finding("multi_head_attention", "randomness in multi_head_attention", first, second)


def probe_block_determinism(block, **functions) -> Finding | None:
    """transformer_block called twice on its random-weight design ("full" and "full_again"; 1 call more than
    the other block probes make). Component ``"randomness in transformer_block"`` when the outputs differ."""
    run: BlockRun = as_run(block, **functions)
    first, second = run.out("full"), run.out("full_again")
    if first is None or second is None or not _differ(first, second):
        return None
    return _finding("transformer_block", "randomness in transformer_block", first, second)


__all__ = ["probe_block_determinism", "probe_determinism"]
