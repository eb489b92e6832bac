"""Shared pieces of exercise 2's public and hidden checks (judge side, trusted).

The known mistakes' formulas (``hidden/mistakes.py``) are imported when present: in a student's copy
(no ``tests/hidden``) the public checks still run, without naming mistakes.

A count must be a whole number: a Python ``int`` or a NumPy integer. A ``float`` fails even when its value
is a whole number (``1234.0``): the contract says ``-> int`` and a count has no fractional part, so the
feedback says whether the value was right and to use ``//`` or ``int(...)``. ``bool``, ``str``, ``None``
and anything else fail with a message that says what was returned. Counts are compared exactly.
"""
from __future__ import annotations

import math

import numpy as np

from exercises.exercise2.tests import reference
from grader.plugin import CheckFailure
from grader.sandbox import SubmissionError
from grader.sandbox.wire import Unsupported

try:  # the mistakes' formulas hold the answer, so they are judge-only (tests/hidden is not released)
    from exercises.exercise2.tests.hidden import mistakes
except ImportError:  # a student's copy: public checks run without naming mistakes
    mistakes = None

#: Test functions every behavioural check depends on.
GATES = ["test_module_loads", "test_uses_no_ml_library"]
#: The module-level names of the contract.
CONSTANTS = ["BLOCK_PARAMS_NO_BIAS", "BLOCK_PARAMS_WITH_BIAS_AND_LN", "GPT2_SMALL_PARAMS", "MLP_SHARE"]
FUNCTIONS = {
    "block_params": ["d_model", "n_heads", "mlp_ratio", "bias", "layer_norm"],
    "gpt_params": ["vocab_size", "n_ctx", "d_model", "n_layer", "n_heads", "mlp_ratio", "tied"],
}
#: |MLP_SHARE - truth| allowed (a float written as 2/3 or 8/12 is within 1e-16).
SHARE_ATOL = 1e-9

#: Said when a wrong count changes with n_heads and no known mistake's formula matches it.
HEADS_NOTE = (
    "your count changes with n_heads, but the number of heads does not change the count: the heads split "
    "d_model into n_heads slices of d_model / n_heads, so W_Q, W_K, W_V and W_O stay d_model x d_model in total"
)

#: Said when a function returns the lesson's count for another configuration (a typed-in number).
FIXED_NOTE = (
    "this is the count for the lesson's configuration, not for the one asked: the function must compute the "
    "count from its arguments (d_model, n_heads, mlp_ratio, ...), not return a fixed number"
)


def read_constant(submission, name: str):
    """The value of the module-level ``name`` in the student's module, as the module computed it.

    Read in the sandbox (``submission.value``), never by importing student code in the judge.

    Raises:
        CheckFailure: ``name`` is not defined at the top level of derive.py.
        SubmissionError: the module cannot be loaded (the load check reports it).
    """
    try:
        return submission.value(name)
    except SubmissionError as exc:
        if exc.kind == "missing":
            raise CheckFailure(f"derive.py defines no {name}: add `{name} = ...` at the top level of the file "
                               "(not inside a function or an `if`).") from None
        raise


def as_count(got, what: str, expected: int, *, constant: bool = False) -> int:
    """``got`` as an int, or a :class:`CheckFailure` saying what it is instead.

    Args:
        got: the value from the sandbox (JSON number, NumPy scalar, str, None, ``Unsupported``, ...).
        what: the call or constant in words, e.g. ``"block_params(768, 12)"``.
        expected: torch's count, to say whether a float had the right value.
        constant: ``got`` is a constant (changes the advice for None).
    """
    if isinstance(got, (bool, np.bool_)):
        raise CheckFailure(f"{what} is {got!r}, a bool; expected a whole number of parameters (an int).")
    if isinstance(got, (int, np.integer)):
        return int(got)
    if got is None:
        advice = ("replace the skeleton's None with your number" if constant
                  else "does the function end with `return` and the count?")
        raise CheckFailure(f"{what} is None; expected a whole number of parameters (an int): {advice}.")
    if isinstance(got, (float, np.floating)):
        value = float(got)
        right = math.isfinite(value) and value == expected
        verdict = "its value is right, but" if right else f"and its value is wrong too (expected {expected:,}):"
        raise CheckFailure(f"{what} is the float {value!r}; {verdict} a parameter count is a whole number, so "
                           "it must be an int: use // instead of /, or int(...).")
    if isinstance(got, str):
        raise CheckFailure(f"{what} is the string {got[:40]!r}; expected a number (an int such as 1234 or "
                           "1_234), not text.")
    if isinstance(got, np.ndarray):
        raise CheckFailure(f"{what} is a NumPy array of shape {got.shape}; expected one whole number (an int).")
    if isinstance(got, Unsupported):
        raise CheckFailure(f"{what} is a {got.type_name} object; expected a whole number (an int).")
    raise CheckFailure(f"{what} is a {type(got).__name__}; expected a whole number (an int).")


def as_share(got, what: str) -> float:
    """``got`` as a float (an int or float, Python or NumPy), or a :class:`CheckFailure` saying what it is."""
    if isinstance(got, (int, float, np.integer, np.floating)) and not isinstance(got, (bool, np.bool_)):
        return float(got)
    if isinstance(got, Unsupported):
        shown = f"a {got.type_name} object"
    elif isinstance(got, np.ndarray):
        shown = f"a NumPy array of shape {got.shape}"
    else:
        shown = "None" if got is None else f"the {type(got).__name__} {got!r}"[:60]
    raise CheckFailure(f"{what} is {shown}; expected one number between 0 and 1 (a float such as 8 / 12).")


def diagnose_count(got: int, variants: list[tuple[str, int]]) -> str:
    """The message of the known mistake whose formula gives exactly ``got`` ("" when none does).

    ``variants`` are ``(message, count)`` pairs in order of preference; when two different mistakes give
    the same number, both are named.
    """
    found: list[str] = []
    for message, value in variants:
        if value == got and message not in found:
            found.append(message)
    return found[0] if len(found) == 1 else " -- or -- ".join(found[:2])


def block_variants(config: dict) -> list[tuple[str, int]]:
    """Every known wrong block count for ``config`` (keyword arguments of ``block_params``); [] without them."""
    if mistakes is None:
        return []
    return [(message, mistakes.block_variant(**config, mistake=key))
            for key, message in mistakes.BLOCK_MISTAKES.items()]


def gpt_variants(config: dict) -> list[tuple[str, int]]:
    """Every known wrong GPT count for ``config`` (keyword arguments of ``gpt_params``); [] without them."""
    if mistakes is None:
        return []
    return [(mistakes.gpt_message(key), mistakes.gpt_variant(**config, mistake=key))
            for key in mistakes.gpt_mistake_keys()]


def _call(config: dict) -> str:
    return ", ".join(f"{k}={v!r}" for k, v in config.items())


def other_heads(d_model: int, n_heads: int) -> int:
    """A different valid number of heads for ``d_model`` (1, or d_model when n_heads is 1)."""
    return 1 if n_heads != 1 else d_model


def heads_note(submission, function: str, config: dict, got: int) -> str:
    """:data:`HEADS_NOTE` when the student's count changes with ``n_heads``, else ""."""
    other = dict(config, n_heads=other_heads(config["d_model"], config["n_heads"]))
    if other["n_heads"] == config["n_heads"]:
        return ""
    try:
        again = getattr(submission, function)(**other)
    except SubmissionError:
        return ""
    if isinstance(again, (int, np.integer)) and not isinstance(again, bool) and int(again) != got:
        return HEADS_NOTE + f" ({function}(..., n_heads={other['n_heads']}) gives {int(again):,})"
    return ""


def fixed_note(function: str, got: int) -> str:
    """:data:`FIXED_NOTE` when ``got`` is torch's count for one of the lesson's configurations."""
    if function == "block_params":
        lesson = {reference.block_count(**reference.LESSON_BLOCK, bias=b, layer_norm=n)
                  for b in (False, True) for n in (False, True)}
    else:
        lesson = {reference.gpt_count(**dict(reference.GPT2_SMALL, tied=t)) for t in (False, True)}
    return FIXED_NOTE if got in lesson else ""


def expect_function_count(submission, function: str, config: dict, expected: int, *, positional: bool = False):
    """Call ``function(**config)`` in the sandbox and fail unless it returns exactly ``expected``.

    Args:
        function: ``"block_params"`` or ``"gpt_params"``.
        config: its arguments (in the contract's order).
        expected: torch's count for this configuration.
        positional: pass the arguments by position instead of by name.

    Raises:
        CheckFailure: wrong type or value, with the mistake the number matches (or the heads note).
    """
    args = list(config.values()) if positional else []
    kwargs = {} if positional else dict(config)
    what = f"{function}({', '.join(map(repr, args))})" if positional else f"{function}({_call(config)})"
    got = as_count(getattr(submission, function)(*args, **kwargs), what, expected)
    if got == expected:
        return
    variants = block_variants(config) if function == "block_params" else gpt_variants(config)
    diagnosis = (diagnose_count(got, variants) or fixed_note(function, got)
                 or heads_note(submission, function, config, got))
    raise CheckFailure(f"{what} returned {got:,}; torch counts {expected:,} parameters for this configuration "
                       f"(off by {got - expected:+,}).", diagnosis, {"expected": expected, "got": got})


def expect_constant_count(submission, name: str, expected: int, variants: list[tuple[str, int]], what: str,
                          function: str, config: dict) -> None:
    """Fail unless the constant ``name`` is exactly torch's count ``expected``.

    When it is wrong but the student's own ``function(**config)`` gives the right number, the feedback says
    so (update the constant). When no formula matches and the constant is what the student's function gives,
    the heads note is added if that function's count changes with ``n_heads``.
    """
    got = as_count(read_constant(submission, name), name, expected, constant=True)
    if got == expected:
        return
    feedback = f"{name} = {got:,}; torch counts {expected:,} parameters for {what} (off by {got - expected:+,})."
    try:
        own = getattr(submission, function)(**config)
    except SubmissionError:
        own = None
    own = int(own) if isinstance(own, (int, np.integer)) and not isinstance(own, bool) else None
    if own == expected:
        feedback += f" Your own {function}({_call(config)}) gives the right number: use it for {name}."
    diagnosis = diagnose_count(got, variants)
    if not diagnosis and own == got:  # the constant comes from the function: does the function vary with heads?
        diagnosis = heads_note(submission, function, config, got)
    raise CheckFailure(feedback, diagnosis, {"expected": expected, "got": got})


def draw_block_config(rng: np.random.Generator, bias: bool, layer_norm: bool) -> dict:
    """A random block configuration that hides no classic mistake.

    n_heads >= 2 (one head hides the per-head mistakes), mlp_ratio in {3, 5, 6, 8} (4 hides an ignored
    ratio, 1 and 2 hide a squared one), d_model = n_heads * d_head <= 192.
    """
    n_heads = int(rng.choice([2, 3, 4, 6, 8]))
    d_head = int(rng.integers(2, 25))
    return dict(d_model=n_heads * d_head, n_heads=n_heads, mlp_ratio=int(rng.choice([3, 5, 6, 8])),
                bias=bias, layer_norm=layer_norm)


def draw_gpt_config(rng: np.random.Generator, tied: bool) -> dict:
    """A random small GPT configuration (vocab <= 5000, n_ctx <= 1024, d_model <= 192, <= 6 layers)."""
    block = draw_block_config(rng, True, True)
    return dict(vocab_size=int(rng.integers(50, 5001)), n_ctx=int(rng.integers(8, 1025)),
                d_model=block["d_model"], n_layer=int(rng.integers(1, 7)), n_heads=block["n_heads"],
                mlp_ratio=block["mlp_ratio"], tied=tied)


__all__ = ["GATES", "CONSTANTS", "FUNCTIONS", "SHARE_ATOL", "HEADS_NOTE", "FIXED_NOTE", "read_constant",
           "as_count", "as_share", "diagnose_count", "block_variants", "gpt_variants", "fixed_note", "heads_note",
           "expect_function_count", "expect_constant_count", "draw_block_config", "draw_gpt_config", "reference",
           "mistakes"]
