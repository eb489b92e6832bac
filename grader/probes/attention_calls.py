"""What the attention probes share: their seed and shapes, the call of the student's function, a comparison.

The probes (:mod:`grader.probes.attention_mask`, :mod:`~grader.probes.attention_layout`,
:mod:`~grader.probes.attention_softmax`) call ``mha(x, w_qkv, b_qkv, w_out, b_out, n_heads, causal=...)``
through :func:`call_mha` on float64 inputs of the shapes below, and judge "did this output move" with
:func:`difference`. Nothing here computes attention.
"""
from __future__ import annotations

import numpy as np

from grader.probes import call

SEED = 10
B, T, D, H = 2, 5, 24, 4  # the multi-head probes: T != n_heads, d_head = 6 >= T (one-hot values fit a head)
DH = D // H
HEAD = 1  # the head the head-split and attention-weight probes drive
MOVED = 1e-10  # relative change below which an output "did not move" (a blocked weight is exactly 0)


def call_mha(mha, x, w_qkv, b_qkv, w_out, b_out, n_heads, causal=False, finite=True):
    """The student's output on float64 copies of the inputs: an array of x's shape (B, T, d_model), or ``None``.

    ``None`` when the call raises or returns anything but a float64 array of that shape; also when the
    output has NaN or inf, unless ``finite=False`` (the probes that observe NaN keep it).
    """
    args = [np.array(a, dtype=np.float64) for a in (x, w_qkv, b_qkv, w_out, b_out)]
    if finite:
        return call(mha, *args, n_heads, causal=causal, shape=x.shape)
    try:
        out = mha(*args, n_heads, causal=causal)
    except Exception:  # noqa: BLE001 - a probe that cannot run finds nothing
        return None
    ok = isinstance(out, np.ndarray) and out.dtype == np.float64 and out.shape == x.shape
    return out if ok else None


def random_inputs(rng, b=B, t=T, d=D):
    """x (b, t, d), w_qkv (3d, d), b_qkv (3d,), w_out (d, d), b_out (d,) drawn from ``rng``, float64.

    x is standard normal; the weights are scaled by 1/sqrt(d) and the biases by 0.5, so q, k, v and the
    output are of unit scale.
    """
    return (rng.normal(size=(b, t, d)), rng.normal(size=(3 * d, d)) / np.sqrt(d), rng.normal(size=3 * d) * 0.5,
            rng.normal(size=(d, d)) / np.sqrt(d), rng.normal(size=d) * 0.5)


def difference(a, b):
    """(largest absolute difference of ``a`` and ``b``, whether an output moved): arrays of one shape.

    Moved means the difference is above :data:`MOVED` times the larger of the two arrays' largest values.
    """
    m = float(np.max(np.abs(a - b)))
    return m, m > MOVED * max(float(np.max(np.abs(a))), float(np.max(np.abs(b))), 1e-300)
