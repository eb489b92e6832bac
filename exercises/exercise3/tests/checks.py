"""Shared pieces of exercise 3's public and hidden checks (judge side, trusted).

Inputs are drawn so that classic bugs cannot hide (DESIGN.md): random weights *and*
non-zero biases, T different from n_heads, inputs that are neither unit-scale nor
already normalised.
"""
from __future__ import annotations

import numpy as np

from grader.compare import KnownMistakes, Mistake, both

try:  # judge side only: the torch reference and the variants (with no mistake, the right computation)
    from exercises.exercise3.tests import reference
    from exercises.exercise3.tests.hidden import mistakes
except ImportError:  # a student's bundle: public checks use the stored cases (tests/cases.py) instead
    reference = mistakes = None
# The two costly diagnoses (torch attention in full), kept per exact input like the references: in a batch
# with one seed, every submission that fails a check the same way asks for the same variants.
# A failing check may ask for a few hundred pairs, hence the larger cache (an entry is one (B, T, d) array).
mha_variant = reference.cached(mistakes.mha_variant, maxsize=4096) if mistakes else None
block_variant = reference.cached(mistakes.block_variant, maxsize=4096) if mistakes else None

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


def _known(table: dict[str, str], keys: list[str], variant, exclusive, precision=frozenset(),
           nan_matches_any=frozenset()) -> KnownMistakes:
    """``keys`` of ``table`` as Mistakes, with the pairs ``mistakes.pairs`` allows; ``variant(key or pair)``
    computes each wrong output."""
    def mistake(combo: tuple[str, ...]) -> Mistake:
        return Mistake(both(*(table[k] for k in combo)) if len(combo) > 1 else table[combo[0]],
                       lambda: variant(combo if len(combo) > 1 else combo[0]),
                       nan_matches_any=bool(set(combo) & nan_matches_any),
                       precision="float32" if set(combo) & precision else "float64")

    return KnownMistakes({k: mistake((k,)) for k in keys},
                         {pair: mistake(pair) for pair in mistakes.pairs(keys, exclusive, precision)})


def mha_mistakes(x, weights, n_heads: int, causal: bool) -> KnownMistakes:
    """Known wrong variants of ``multi_head_attention`` for these inputs, with the pairs of them that
    ``grader.compare.diagnose`` tries when no single one explains the output ({} in a student's bundle)."""
    if mistakes is None:
        return KnownMistakes()
    return _known(mistakes.MHA_MISTAKES,
                  [k for k in mistakes.MHA_MISTAKES if causal or k not in mistakes.MHA_CAUSAL_ONLY],
                  lambda m: mha_variant(x, *weights, n_heads, causal, mistake=m), mistakes.MHA_EXCLUSIVE,
                  mistakes.MHA_PRECISION, mistakes.MHA_FULLY_MASKED_ROW)


def block_mistakes(x, params, n_heads: int, causal: bool) -> KnownMistakes:
    """Known wrong variants of ``transformer_block`` for these inputs, with their pairs ({} in a student's
    bundle)."""
    if mistakes is None:
        return KnownMistakes()
    return _known(mistakes.BLOCK_MISTAKES,
                  [k for k in mistakes.BLOCK_MISTAKES if causal or k not in mistakes.BLOCK_CAUSAL_ONLY],
                  lambda m: block_variant(x, params, n_heads, causal, mistake=m), mistakes.BLOCK_EXCLUSIVE)


def simple_mistakes(messages: dict[str, str], variant) -> dict[str, Mistake]:
    """Mistakes of the small functions: ``variant(key)`` computes each wrong output."""
    return {key: Mistake(message, lambda key=key: variant(key)) for key, message in messages.items()}


__all__ = ["GATES", "ATOL", "torch_seed", "draw_x", "mha_mistakes", "block_mistakes",
           "simple_mistakes", "reference", "mistakes"]
