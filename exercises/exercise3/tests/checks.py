"""Shared pieces of exercise 3's public and hidden checks (judge side, trusted).

Inputs are drawn so that classic bugs cannot hide (DESIGN.md): random weights *and*
non-zero biases, T different from n_heads, inputs that are neither unit-scale nor
already normalised.
"""
from __future__ import annotations

import numpy as np

from grader.compare import Mistake

try:  # judge side only: the torch reference and the variants (with no mistake, the right computation)
    from exercises.exercise3.tests import reference
    from exercises.exercise3.tests.hidden import mistakes
except ImportError:  # a student's bundle: public checks use the stored cases (tests/cases.py) instead
    reference = mistakes = None
# The two costly diagnoses (torch attention in full), kept per exact input like the references: in a batch
# with one seed, every submission that fails a check the same way asks for the same variants.
mha_variant = reference.cached(mistakes.mha_variant) if mistakes else None
block_variant = reference.cached(mistakes.block_variant) if mistakes else None

#: Test functions every behavioural check depends on.
GATES = ["test_module_loads", "test_uses_only_numpy"]
#: Largest allowed absolute error against PyTorch in float64 (DESIGN.md).
ATOL = 1e-6


def torch_seed(rng: np.random.Generator) -> int:
    """A seed for the reference's torch generator, drawn from the check's NumPy generator (so the run's
    seed fixes it): ``reference.random_attention_weights(d, h, torch_seed(rng))``."""
    return int(rng.integers(2**31))


def draw_x(rng: np.random.Generator, B: int, T: int, d: int, scale: float = 1.7) -> np.ndarray:
    """(B, T, d) float64 input: N(0.3, scale^2) entries, so never unit-scale or pre-normalised."""
    return 0.3 + scale * rng.standard_normal((B, T, d))


def mha_mistakes(x, weights, n_heads: int, causal: bool) -> dict[str, Mistake]:
    """Known wrong variants of ``multi_head_attention`` for these inputs ({} in a student's bundle)."""
    out = {}
    if mistakes is None:
        return out
    for key, message in mistakes.MHA_MISTAKES.items():
        if key in mistakes.MHA_CAUSAL_ONLY and not causal:
            continue
        out[key] = Mistake(
            message,
            lambda key=key: mha_variant(x, *weights, n_heads, causal, mistake=key),
            rtol=1e-4 if key == "float32" else 1e-7,
            nan_matches_any=key == "mask_blocks_diagonal",
        )
    return out


def block_mistakes(x, params, n_heads: int, causal: bool) -> dict[str, Mistake]:
    """Known wrong variants of ``transformer_block`` for these inputs ({} in a student's bundle)."""
    if mistakes is None:
        return {}
    return {
        key: Mistake(message, lambda key=key: block_variant(x, params, n_heads, causal, mistake=key))
        for key, message in mistakes.BLOCK_MISTAKES.items()
        if causal or key not in mistakes.BLOCK_CAUSAL_ONLY
    }


def simple_mistakes(messages: dict[str, str], variant) -> dict[str, Mistake]:
    """Mistakes of the small functions: ``variant(key)`` computes each wrong output."""
    return {key: Mistake(message, lambda key=key: variant(key)) for key, message in messages.items()}


__all__ = ["GATES", "ATOL", "torch_seed", "draw_x", "mha_mistakes", "block_mistakes",
           "simple_mistakes", "reference", "mistakes"]
