"""Shared pieces of exercise 2's public and hidden checks (judge side, and shipped in the student bundle).

A count must be a whole number: a Python ``int`` or a NumPy integer. A ``float`` fails even when its value
is a whole number (``1234.0``): the contract says ``-> int`` and a count has no fractional part, so the
feedback says whether the value was right and to use ``//`` or ``int(...)``. ``bool``, ``str``, ``None``
and anything else fail with a message that says what was returned. Counts are compared exactly.

What a wrong count is told, in this order:

- the numbers (the count, torch's, the difference);
- what the student's own function does when one argument changes, where that breaks a property of
  every correct count (``properties.py``: no reference needed, so the bundle shows it too);
- the likely mistake (the diagnosis): a known mistake's name, decided on several configurations
  (``hidden/naming.py``, judge only: its formulas give the answer away); else, when it was measured, that
  the count changes with n_heads (:data:`HEADS_NOTE`) or not with d_model (:data:`FIXED_NOTE`).

The public checks' expected counts are stored (``stored_counts.toml``, written and checked against the
torch reference by the grader's own tests), so that neither the reference nor any hidden number ships.
"""
from __future__ import annotations

import math
import tomllib
from pathlib import Path

import numpy as np

from exercises.exercise2.tests import properties
from grader.plugin import CheckFailure
from grader.sandbox import SubmissionError
from grader.sandbox.wire import Unsupported

try:  # the mistakes' formulas hold the answer, so they are judge-only (tests/hidden is not released)
    from exercises.exercise2.tests.hidden import naming
except ImportError:  # a student's copy: the checks run and show the properties, without naming mistakes
    naming = None

#: Test functions every behavioural check depends on.
GATES = ["test_module_loads", "test_uses_no_ml_library"]
#: The module-level names of the contract.
CONSTANTS = ["BLOCK_PARAMS_NO_BIAS", "BLOCK_PARAMS_WITH_BIAS_AND_LN", "GPT2_SMALL_PARAMS", "MLP_SHARE"]
FUNCTIONS = {
    "block_params": ["d_model", "n_heads", "mlp_ratio", "bias", "layer_norm"],
    "gpt_params": ["vocab_size", "n_ctx", "d_model", "n_layer", "n_heads", "mlp_ratio", "tied"],
}
#: The contract's defaults.
DEFAULTS = {"block_params": dict(mlp_ratio=4, bias=False, layer_norm=False),
            "gpt_params": dict(mlp_ratio=4, tied=True)}
#: |MLP_SHARE - truth| allowed (a float written as an exact fraction is within 1e-16).
SHARE_ATOL = 1e-9
#: The public checks' expected counts (see the module's doc).
STORED_COUNTS = Path(__file__).with_name("stored_counts.toml")

#: Said when no known mistake is named and the student's count was measured to change with n_heads.
HEADS_NOTE = (
    "your count changes with n_heads, but the number of heads does not change the count: the heads split "
    "d_model into n_heads slices of d_model / n_heads, so W_Q, W_K, W_V and W_O stay d_model x d_model in total"
)

#: Said when no known mistake is named and the student's count was measured not to change with d_model.
FIXED_NOTE = (
    "your function returns the same count whatever d_model is: it must compute the count from its arguments "
    "(d_model, n_heads, mlp_ratio, ...), not return a fixed number"
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
        what: the call or constant in words, e.g. ``"block_params(40, 5)"``.
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
    raise CheckFailure(f"{what} is {shown}; expected one number between 0 and 1 (a float such as 3 / 4).")


def stored_count(function: str, config: dict) -> int:
    """Torch's count for ``function(**config)`` (defaults filled in) from :data:`STORED_COUNTS`.

    Raises:
        KeyError: the configuration is not stored (rewrite the file: see tests/test_exercise2.py).
    """
    with STORED_COUNTS.open("rb") as f:
        stored = tomllib.load(f)
    full = {**DEFAULTS[function], **config}
    for entry in stored.get(function, []):
        if entry["config"] == full:
            return int(entry["count"])
    raise KeyError(f"no stored count for {function}({call_text(config)}) in {STORED_COUNTS.name}")


def own_counts(submission, function: str) -> properties.Own:
    """The student's ``function`` as ``own(config) -> int | None`` (None: the call failed or returned no
    whole number), each configuration called once."""
    seen: dict[tuple, int | None] = {}

    def own(config: dict) -> int | None:
        key = tuple(sorted(config.items()))
        if key not in seen:
            try:
                got = getattr(submission, function)(**config)
            except SubmissionError:
                got = None
            seen[key] = int(got) if isinstance(got, (int, np.integer)) and not isinstance(got, bool) else None
        return seen[key]

    return own


def call_text(config: dict) -> str:
    """``config`` as keyword arguments, e.g. ``d_model=40, n_heads=5``."""
    return ", ".join(f"{k}={v!r}" for k, v in config.items())


def explain(submission, function: str, config: dict, got: int, own_here: bool = True) -> tuple[str, str, dict]:
    """What to tell a student whose ``function(**config)`` returned the wrong count ``got``.

    Args:
        own_here: ``got`` is what the student's function returns at ``config`` (False for a constant that
            differs from it: then only its one number can name a mistake).

    Returns:
        (findings, diagnosis, details): the broken properties in sentences (""), the likely mistake
        (module doc; ""), and ``{"mistakes": keys}`` when a known mistake is named.
    """
    own = own_counts(submission, function)
    if not own_here:
        candidate = naming.name_count(function, config, got) if naming else None
        return "", candidate.message if candidate else "", {"mistakes": list(candidate.keys)} if candidate else {}
    block_own = own_counts(submission, "block_params") if function == "gpt_params" else None
    found = (properties.block_findings(own, config) if block_own is None
             else properties.gpt_findings(own, block_own, config))
    findings = "What your function does: " + ". ".join(f.observation for f in found) + "." if found else ""
    if block_own is not None and not found:  # gpt_params adds up the student's blocks: are those right?
        block = dict(d_model=config["d_model"], n_heads=config["n_heads"], mlp_ratio=config.get("mlp_ratio", 4),
                     bias=True, layer_norm=True)
        in_block = properties.block_findings(block_own, block)
        if in_block:
            findings = (f"Your gpt_params counts your block_params({call_text(block)}) once a layer; what that "
                        "does: " + ". ".join(f.observation for f in in_block) + ".")
    candidate = naming.name_function(function, config, got, own, block_own) if naming else None
    if candidate is not None:
        return findings, candidate.message, {"mistakes": list(candidate.keys)}
    probes = {f.probe for f in found}
    note = FIXED_NOTE if "fixed" in probes else HEADS_NOTE if "heads" in probes else ""
    return findings, note, {"notes": ["fixed" if note == FIXED_NOTE else "heads"]} if note else {}


def expect_function_count(submission, function: str, config: dict, expected: int, *, positional: bool = False):
    """Call ``function(**config)`` in the sandbox and fail unless it returns exactly ``expected``.

    Args:
        function: ``"block_params"`` or ``"gpt_params"``.
        config: its arguments (in the contract's order).
        expected: torch's count for this configuration.
        positional: pass the arguments by position instead of by name.

    Raises:
        CheckFailure: wrong type or value, with the properties it breaks and the likely mistake.
    """
    args = list(config.values()) if positional else []
    kwargs = {} if positional else dict(config)
    what = f"{function}({', '.join(map(repr, args))})" if positional else f"{function}({call_text(config)})"
    got = as_count(getattr(submission, function)(*args, **kwargs), what, expected)
    if got == expected:
        return
    findings, diagnosis, details = explain(submission, function, config, got)
    raise CheckFailure(f"{what} returned {got:,}; torch counts {expected:,} parameters for this configuration "
                       f"(off by {got - expected:+,}).{' ' + findings if findings else ''}", diagnosis,
                       {"expected": expected, "got": got, **details})


def expect_constant_count(submission, name: str, expected: int, what: str, function: str, config: dict) -> None:
    """Fail unless the constant ``name`` is exactly torch's count ``expected`` (judge side: hidden checks).

    When it is wrong but the student's own ``function(**config)`` gives the right number, the feedback says
    so (update the constant). When the constant is what that function returns, the function is diagnosed
    as a failing call would be; otherwise only the constant's one number can name a mistake.
    """
    got = as_count(read_constant(submission, name), name, expected, constant=True)
    if got == expected:
        return
    feedback = f"{name} = {got:,}; torch counts {expected:,} parameters for {what} (off by {got - expected:+,})."
    own = own_counts(submission, function)(config)
    if own == expected:
        feedback += f" Your own {function}({call_text(config)}) gives the right number: use it for {name}."
    findings, diagnosis, details = explain(submission, function, config, got, own_here=own == got)
    if findings:
        feedback += f" It is what your {function}({call_text(config)}) returns. {findings}"
    raise CheckFailure(feedback, diagnosis, {"expected": expected, "got": got, **details})


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


__all__ = ["GATES", "CONSTANTS", "FUNCTIONS", "SHARE_ATOL", "STORED_COUNTS", "HEADS_NOTE", "FIXED_NOTE",
           "read_constant", "as_count", "as_share", "stored_count", "own_counts", "call_text", "explain",
           "expect_function_count", "expect_constant_count", "draw_block_config", "draw_gpt_config", "naming"]
