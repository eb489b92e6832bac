"""Exercise 4, hidden checks: the structure checks on more shapes, in every mode.

Truth: the reference torch block (tests/reference.py, stock ``nn.MultiheadAttention``, ``nn.LayerNorm``
and the exact GELU) with the same random weights, float64, 1e-6. Shapes cover the cases that hide
classic bugs (DESIGN.md): one head, n_heads = d_model / 2, T = 1, B = 1, d_model not a power of two,
inputs scaled x100 (where an un-normalised stream shows). The explanation, graded by its rubric (one check
per concept and per misconception, tests/hidden/explanation.py), and whether a person should also read it
(0 points; the judge lifts ``details["needs_review"]`` into the result).
"""
import pytest

from exercises.exercise4.tests.checks import MODE_CHECKS, MODE_WORDS, check_block
from exercises.exercise4.tests.hidden.explanation import STYLE
from grader.rubric.checks import all_checks

# (B, T, d_model, n_heads, input scale): T never equals n_heads.
SHAPES = [(1, 5, 48, 6, 1.7), (3, 1, 16, 2, 1.7), (2, 6, 20, 1, 1.7), (2, 9, 24, 12, 1.7), (2, 5, 32, 4, 100.0)]


def _shape_id(shape):
    B, T, d, h, scale = shape
    return f"B{B}_T{T}_d{d}_h{h}" + (f"_x{scale:g}" if scale != 1.7 else "")


def _shapes_check(mode: str):
    """The check of one mode on every shape; it needs that mode's public structure check to pass."""

    def check(submission, clean, rng, shape):
        B, T, d, h, scale = shape
        check_block(submission, clean, rng, mode, B=B, T=T, d=d, h=h, scale=scale)

    name = MODE_CHECKS[mode] + "_shapes"
    check.__name__ = check.__qualname__ = name
    check.__doc__ = f"Block({MODE_WORDS[mode]}) matches the reference block on more shapes."
    check = pytest.mark.parametrize("shape", SHAPES, ids=_shape_id)(check)
    return pytest.mark.check(points=0.25, depends=[MODE_CHECKS[mode]],
                             hint="The public check passes on one shape: look for what changes with the shape "
                                  "(one head, a single token, a large input).")(check)


for _mode in MODE_CHECKS:
    globals()[MODE_CHECKS[_mode] + "_shapes"] = _shapes_check(_mode)
del _mode


globals().update(all_checks(STYLE))
