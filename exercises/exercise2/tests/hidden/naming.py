"""Which known mistake a wrong count is, decided on several configurations (judge side, trusted).

One count at one configuration cannot single out a mistake: at d_model = 768 the attention's biases and
the two layer norms are both 3,072, and at small sizes unrelated slips give the same number. So a wrong
``block_params`` or ``gpt_params`` is named only from the student's own function called on every
configuration of :data:`BLOCK_PROBES` (or :data:`GPT_PROBES`) besides the one that failed:

    **The rule.** A candidate -- one known mistake, or two from different groups made together -- is named
    when its formula gives exactly the student's count on the failing configuration and on every probe
    configuration, and no other candidate does. If the student's function fails to return a count on any
    probe configuration, nothing is named. A GPT's mistake "in every block" is named only when the
    student's block_params is correct or named after the same block mistake (:func:`name_function`).

The probe configurations are chosen so that no two candidates give the same counts on all of them
(``tests/test_exercise2_naming.py`` proves it for the whole table): so a function is never named after a mistake
it does not make, and two mistakes made together get the pair's name, never one wrong single name.
Key sets whose formulas are the same function of the configuration are one candidate
(:func:`candidates`). It is named when they say the same thing ("W_O and the Q, K, V biases left out" is
"W_O and the attention's biases left out": without W_O the attention's biases *are* Q, K and V's), and
never when they do not: a GPT's blocks always have biases and layer norms, so "no layer norms in any
block" and "no attention biases in any block" are both 4·d per block, and no count of gpt_params can tell
them apart.

A constant is one number at one configuration (the lesson's). It is named after the student's function
when it is what that function returns there (then the rule above decides), otherwise only when exactly one
candidate visible at that configuration gives that number (:func:`name_count`).

``MLP_SHARE`` is named after a share mistake when it is that mistake's share (to ``atol``, or in float32),
and after "rounded" or "in percent" only when it is the right share (or its percentage) written with fewer
digits, rounded or cut (0.67, 0.6666, 66.7): a share that is merely near 2/3, such as the share of a block
with biases but no norms (0.66670...), is some other mistake and gets no name (:func:`name_share`).
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from itertools import combinations
import math

import numpy as np

from . import mistakes

#: Block configurations the student's block_params is called on to name a mistake: d_model not a power of
#: two and not a multiple of another probe's, n_heads >= 3 (one head hides the per-head mistakes), MLP
#: ratios other than 4 (hides an ignored ratio) and 1, 2 (hide a squared one), every bias / layer_norm.
BLOCK_PROBES: tuple[dict, ...] = tuple(
    dict(d_model=d, n_heads=h, mlp_ratio=r, bias=bias, layer_norm=layer_norm)
    for d, h, r in ((60, 5, 3), (42, 7, 5), (36, 3, 6))
    for bias in (False, True) for layer_norm in (False, True))
#: GPT configurations the student's gpt_params is called on: generic sizes, tied and untied.
GPT_PROBES: tuple[dict, ...] = tuple(
    dict(vocab_size=V, n_ctx=T, d_model=d, n_layer=L, n_heads=h, mlp_ratio=r, tied=tied)
    for V, T, d, L, h, r in ((97, 13, 60, 2, 5, 3), (211, 29, 42, 3, 7, 5), (150, 40, 36, 1, 3, 6))
    for tied in (True, False))


@dataclass(frozen=True)
class Candidate:
    """One known mistake, or two made together, of ``block_params`` or ``gpt_params``.

    Attributes:
        function: "block_params" or "gpt_params".
        keys: the mistakes' keys (``mistakes.BLOCK_MISTAKES``; for a GPT also ``mistakes.GPT_MISTAKES`` and
            ``block.KEY``), one or two.
        message: what the student sees.
        same_formula: other key sets whose formula is this one's (the same count on every configuration).
        nameable: False when those say something else than ``message`` (a GPT's blocks always have biases
            and layer norms, so "no layer norms" and "no attention biases" are both 4·d per block there):
            then no count can tell them apart, and none of them is named.
    """

    function: str
    keys: tuple[str, ...]
    message: str
    same_formula: tuple[tuple[str, ...], ...] = ()
    nameable: bool = True

    def count(self, config: dict) -> int:
        """The count this mistake gives for ``config`` (keyword arguments of the function)."""
        variant = mistakes.block_variant if self.function == "block_params" else mistakes.gpt_variant
        return variant(**config, mistake=self.keys)


#: Key sets that are one mistake in other words, though their sentences differ: without W_O the attention's
#: biases are Q, K and V's; blocks without biases and without layer norms are blocks without bias and LN.
SAME_MISTAKE: tuple[frozenset, ...] = (
    frozenset({("no_out_proj", "attention_biases_missing"), ("no_out_proj", "qkv_biases_missing")}),
    frozenset({("block.no_out_proj", "block.attention_biases_missing"),
               ("block.no_out_proj", "block.qkv_biases_missing")}),
    frozenset({("blocks_without_bias_ln",), ("block.biases_missing", "block.norms_missing")}),
)


def _message(function: str, keys: tuple[str, ...]) -> str:
    sentence = (lambda k: mistakes.BLOCK_MISTAKES[k]) if function == "block_params" else mistakes.gpt_message
    if len(keys) == 1:
        return sentence(keys[0])
    return "two mistakes together: " + "; and ".join(sentence(k) for k in keys)


def _group(key: str) -> str:
    """The group of a single key (a GPT's block mistake is in its block group, prefixed)."""
    if key.startswith(mistakes.GPT_BLOCK_PREFIX):
        base = key[len(mistakes.GPT_BLOCK_PREFIX):]
        return mistakes.GPT_BLOCK_PREFIX + next(g for g, ks in mistakes.BLOCK_GROUPS.items() if base in ks)
    groups = {**mistakes.BLOCK_GROUPS, **mistakes.GPT_GROUPS}
    return next(g for g, ks in groups.items() if key in ks)


#: Pairs of different groups that are left out: "no embeddings" with "no final layer norm" is what
#: "only the blocks" says (when tied), and "no embeddings" with an LM head counted against ``tied`` is "no
#: position embedding" in other words (V·d counted once): as pairs they would only blur those names.
_NOT_PAIRED = (frozenset({"no_embeddings", "no_final_layer_norm"}),
               frozenset({"no_embeddings", "lm_head_counted_when_tied"}),
               frozenset({"no_embeddings", "lm_head_missing_when_untied"}))


def _combinable(a: str, b: str) -> bool:
    """Two mistakes that change different parts of the count (see the groups in ``mistakes.py``)."""
    ga, gb = _group(a), _group(b)
    if ga == gb or frozenset({a, b}) in _NOT_PAIRED:
        return False
    for one, other in ((ga, gb), (gb, ga)):
        gpt_level = not other.startswith(mistakes.GPT_BLOCK_PREFIX)
        if one == "blocks_only" and gpt_level:
            return False
        if one == "blocks_bias_ln" and other in ("block.bias", "block.norm"):
            return False
    return True


#: Configurations on which candidates are compared to find those that are one formula under two names.
_WIDE_SEED = 2_0250


def _wide_configs(function: str) -> list[dict]:
    rng = np.random.default_rng(_WIDE_SEED)
    out = []
    for _ in range(40):
        h = int(rng.integers(2, 12))
        d = h * int(rng.integers(2, 40))
        r = int(rng.integers(1, 10))
        if function == "block_params":
            out.append(dict(d_model=d, n_heads=h, mlp_ratio=r, bias=bool(rng.integers(2)),
                            layer_norm=bool(rng.integers(2))))
        else:
            out.append(dict(vocab_size=int(rng.integers(10, 5000)), n_ctx=int(rng.integers(1, 2000)), d_model=d,
                            n_layer=int(rng.integers(1, 13)), n_heads=h, mlp_ratio=r, tied=bool(rng.integers(2))))
    return out


@cache
def candidates(function: str) -> tuple[Candidate, ...]:
    """Every candidate of ``function`` ("block_params" or "gpt_params"): each single mistake, then each pair
    of combinable mistakes. Key sets that give the same counts on 40 varied configurations (the same
    formula) are one candidate, under the first; it is :attr:`~Candidate.nameable` when their sentences
    are the same or :data:`SAME_MISTAKE` says they are one mistake."""
    singles = list(mistakes.BLOCK_MISTAKES) if function == "block_params" else mistakes.gpt_mistake_keys()
    keyed = [(k,) for k in singles] + [(a, b) for a, b in combinations(singles, 2) if _combinable(a, b)]
    wide = _wide_configs(function)
    by_formula: dict[tuple[int, ...], list[tuple[str, ...]]] = {}
    for keys in keyed:
        values = tuple(Candidate(function, keys, "").count(c) for c in wide)
        by_formula.setdefault(values, []).append(keys)
    out = []
    for first, *others in by_formula.values():
        messages = {_message(function, keys) for keys in (first, *others)}
        nameable = len(messages) == 1 or frozenset((first, *others)) in SAME_MISTAKE
        out.append(Candidate(function, first, _message(function, first), tuple(others), nameable))
    return tuple(out)


def probes(function: str) -> tuple[dict, ...]:
    """The configurations ``function`` is called on to name a mistake."""
    return BLOCK_PROBES if function == "block_params" else GPT_PROBES


def name_function(function: str, config: dict, got: int, own, block_own=None) -> Candidate | None:
    """The candidate that reproduces the student's ``function`` (rule in the module's doc), or None.

    Args:
        function: "block_params" or "gpt_params".
        config: the failing configuration; ``got``: the student's count there.
        own: ``own(config) -> int | None``, the student's count for another configuration (None when the
            call failed or did not return a whole number).
        block_own: for ``gpt_params``, the student's ``block_params`` in the same form. A GPT candidate with
            block mistakes ("in every block: ...") is named only when the student's block_params agrees:
            it is correct on every block probe (then gpt_params made the mistake on its own), or it is named
            after the same block mistakes. A block_params with an unknown mistake, or another one, may be
            what gpt_params adds up, and then "in every block: X" would describe it wrongly (a block_params
            whose norms overwrite its biases leaves the biases out only when both flags are True, as a GPT's
            blocks have them; "bias=True was ignored" is not what it does). When gpt_params matches a formula
            that is two mistakes in other words ("no layer norms" or "no attention biases" in every block),
            the one block_params is named after is named.
    """
    observed = [(config, got)]
    for probe in probes(function):
        value = own(probe)
        if value is None:
            return None
        observed.append((probe, value))
    found = [c for c in candidates(function) if all(c.count(cfg) == value for cfg, value in observed)]
    if block_own is None:
        return _one(found)
    if len(found) == 1 and not found[0].nameable:
        return _by_block(found[0], _own_block_keys(block_own))
    named = _one(found)
    if named is None or not _block_part(named.keys):
        return named
    own_block = _own_block_keys(block_own)
    agrees = own_block is not None and (not own_block or own_block in
                                        [_block_part(keys) for keys in (named.keys, *named.same_formula)])
    return named if agrees else None


def _block_part(keys: tuple[str, ...]) -> frozenset[str]:
    """The ``block.KEY`` keys of a GPT candidate's ``keys``."""
    return frozenset(k for k in keys if k.startswith(mistakes.GPT_BLOCK_PREFIX))


def _own_block_keys(block_own) -> frozenset[str] | None:
    """What the student's block_params does in a GPT's blocks, as ``block.KEY`` keys: none (frozenset())
    when it is correct on every block probe or named after mistakes a GPT's blocks cannot show
    (:data:`mistakes.HIDDEN_IN_GPT`), those it is named after otherwise, and None when it makes an unknown
    mistake or a call fails."""
    counts = [block_own(probe) for probe in BLOCK_PROBES]
    if None in counts:
        return None
    if all(got == mistakes.block_variant(**probe) for got, probe in zip(counts, BLOCK_PROBES)):
        return frozenset()
    named = name_function("block_params", BLOCK_PROBES[0], counts[0], block_own)
    if named is None:
        return None
    return frozenset(mistakes.GPT_BLOCK_PREFIX + k for k in named.keys if k not in mistakes.HIDDEN_IN_GPT)


def _by_block(candidate: Candidate, own_block: frozenset[str] | None) -> Candidate | None:
    """Of the key sets of a GPT ``candidate`` that is not nameable, the one whose block mistakes are
    ``own_block``, what the student's own block_params is named after; None when that is not exactly one."""
    if not own_block:
        return None
    fits = [keys for keys in (candidate.keys, *candidate.same_formula) if _block_part(keys) == own_block]
    return Candidate("gpt_params", fits[0], _message("gpt_params", fits[0])) if len(fits) == 1 else None


def name_count(function: str, config: dict, got: int) -> Candidate | None:
    """The one candidate that gives ``got`` at ``config`` among those whose every mistake shows there
    (changes the count at ``config``), or None when none or several do."""
    variant = mistakes.block_variant if function == "block_params" else mistakes.gpt_variant
    correct = variant(**config)
    shows = {k: variant(**config, mistake=k) != correct for c in candidates(function) for k in c.keys}
    found = [c for c in candidates(function) if all(shows[k] for k in c.keys) and c.count(config) == got]
    return _one(found)


def _one(found: list[Candidate]) -> Candidate | None:
    """The first of ``found`` when they all say the same thing and can be named, else None ("the MLP counted
    one way only" is two candidates that one count cannot tell apart: d -> r·d or r·d -> d)."""
    if found and all(c.nameable for c in found) and len({c.message for c in found}) == 1:
        return found[0]
    return None


#: Significant digits a share written by hand is rounded or cut to (0.67 to 0.666666667).
SHORT_DIGITS = range(2, 10)


def short_forms(value: float) -> list[float]:
    """``value`` rounded and cut to each of :data:`SHORT_DIGITS` significant digits, and as a float32: what
    the number looks like written by hand or computed in float32 (``value`` > 0)."""
    forms = [float(np.float32(value))]
    exponent = math.floor(math.log10(abs(value)))
    for digits in SHORT_DIGITS:
        scale = 10.0 ** (digits - 1 - exponent)
        forms += [round(value * scale) / scale, math.trunc(value * scale) / scale]
    return forms


def name_share(got: float, config: dict, atol: float) -> str | None:
    """The one key of ``mistakes.SHARE_MISTAKES`` whose share ``got`` is (module doc), or None.

    Args:
        got: the student's MLP_SHARE; ``config``: the block (``d_model``, ``n_heads``, ``mlp_ratio``);
        atol: how close a share must be to a variant's to be it (the check's tolerance for the right share).
    """
    def near(value: float, target: float) -> bool:
        return abs(value - target) <= 1e-12 * max(1.0, abs(target))

    right = mistakes.share_variant(**config)
    matches = []
    for key in mistakes.SHARE_MISTAKES:
        share = mistakes.share_variant(**config, mistake=key)
        if key == "rounded":
            ok = abs(got - right) > atol and any(near(got, form) for form in short_forms(right))
        else:
            ok = abs(got - share) <= atol or any(near(got, form) for form in short_forms(share)
                                                 if key == "percent" or form == float(np.float32(share)))
        if ok:
            matches.append(key)
    return matches[0] if len(matches) == 1 else None
