"""Behavioural probes for ``multi_head_attention`` (exercise 3): the student's function against itself.

(Named ``mha``, not ``attention``: the bundle must hold no file named like a submission's ``attention.py``,
which the platforms' export readers look for.)

Every probe calls ``mha(x, w_qkv, b_qkv, w_out, b_out, n_heads, causal=...)`` (the contract of
exercises/exercise3/README.md: PyTorch's layout ``y = x @ W.T + b``; rows 0:d of ``w_qkv`` make Q, d:2d
K, 2d:3d V; head i uses features i*d_head:(i+1)*d_head) on designed float64 inputs and compares the
results with each other, or reads a simple property off them (which output moved, a row sum, a
log-ratio of two weights). No attention output is ever computed here, so the module ships to students.

Designs lean on three facts of the contract: with queries Q = 0 every score is 0, so a token weighs the
tokens it may see equally (its output then moves exactly when a visible token's value moves); softmax
rows sum to 1, so values that are the same at every token come out unchanged; and with one-hot values
and W_O = I the output *is* the attention matrix. Each probe returns at most one
:class:`~grader.probes.Finding` and finds nothing when the function raises or returns something that
is not a float64 array of shape (B, T, d_model) (finite, unless NaN is the observation).

The probes live in :mod:`grader.probes.attention_mask` (causal mask, ``causal`` argument, batch
elements), :mod:`grader.probes.attention_layout` (biases, weight layout, head slots and split) and
:mod:`grader.probes.attention_softmax` (attention weights, precision, large scores), sharing
:mod:`grader.probes.attention_calls`; this module gathers them in :data:`PROBES`. Every probe is
deterministic (:data:`~grader.probes.attention_calls.SEED`); :func:`run` makes 42 calls (at most 49) in all.
"""
from __future__ import annotations

from grader.probes import Finding
from grader.probes.attention_layout import probe_biases, probe_head_slots, probe_head_split, probe_weight_layout
from grader.probes.attention_mask import (probe_batch_independence, probe_causal_flag, probe_causality,
                                          probe_large_scores_mask, probe_self_sight)
from grader.probes.attention_softmax import probe_attention_weights, probe_large_scores, probe_precision
from grader.probes.determinism import probe_determinism

PROBES = (probe_determinism, probe_causality, probe_self_sight, probe_large_scores_mask, probe_causal_flag,
          probe_batch_independence, probe_biases, probe_weight_layout, probe_head_slots, probe_head_split,
          probe_attention_weights, probe_precision, probe_large_scores)


def run(mha) -> list[Finding]:
    """Every probe of :data:`PROBES` on ``mha`` (42 calls, at most 49); the findings, in probe order.

    When the first, :func:`~grader.probes.determinism.probe_determinism`, finds the function random,
    its finding is the only one: every other probe compares calls, and would report noise as a fault.
    """
    random = probe_determinism(mha)
    if random is not None:
        return [random]
    return [f for f in (probe(mha) for probe in PROBES[1:]) if f is not None]


__all__ = ["PROBES", "run", *[p.__name__ for p in PROBES]]
