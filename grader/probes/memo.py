"""Calls of the student's functions on designed inputs, made once per probe run (the function probes and
the block probes share them, :mod:`grader.probes.functions`, :mod:`grader.probes.block_designs`)."""
from __future__ import annotations

from typing import Callable

import numpy as np

from . import call


class Memo:
    """Calls of the student's functions on designed inputs, each made at most once per probe run.

    ``get(key, function, *args, shape=..., **kwargs)`` is :func:`grader.probes.call` on fresh copies of
    the array arguments (and of dicts of arrays), remembered under ``key``.
    """

    def __init__(self) -> None:
        self._results: dict = {}

    def get(self, key, function: Callable, *args, shape=None, raw: bool = False, **kwargs):
        """The (remembered) result; ``raw=True`` keeps a float64 array of ``shape`` even with NaN/inf."""
        key = (id(function), key)
        if key not in self._results:
            args = [_fresh(a) for a in args]
            kwargs = {k: _fresh(v) for k, v in kwargs.items()}
            with np.errstate(all="ignore"):  # the student's overflow is the probe's evidence, not a warning
                self._results[key] = (_call_keeping_nonfinite(function, *args, shape=shape, **kwargs) if raw
                                      else call(function, *args, shape=shape, **kwargs))
        return self._results[key]


def _fresh(value):
    if isinstance(value, np.ndarray):
        return value.copy()
    if isinstance(value, dict):
        return {k: _fresh(v) for k, v in value.items()}
    return value


def _call_keeping_nonfinite(function, *args, shape, **kwargs):
    """As :func:`grader.probes.call`, but NaN and inf are kept: softmax's stability probe needs to see them."""
    try:
        out = function(*args, **kwargs)
    except Exception:  # noqa: BLE001 - a probe that cannot run finds nothing
        return None
    ok = isinstance(out, np.ndarray) and out.dtype == np.float64 and out.shape == tuple(shape)
    return out if ok else None
