"""Which known mistake a wrong count is, decided on several configurations (judge side, trusted).

One count at one configuration cannot single out a mistake: at d_model = 768 the attention's biases and
the two layer norms are both 3,072, and at small sizes unrelated slips give the same number. So a wrong
``block_params`` or ``gpt_params`` is named only from the student's own function called on every
configuration of :data:`BLOCK_PROBES` (or :data:`GPT_PROBES`) besides the one that failed:

    **The rule.** A candidate -- one known mistake, or two from different groups made together -- is named
    when its formula gives exactly the student's count on the failing configuration and on every probe
    configuration, and no other candidate does. If the student's function fails to return a count on any
    probe configuration, nothing is named.

The probe configurations are chosen so that no two candidates give the same counts on all of them
(``tests/test_exercise2.py`` proves it for the whole table): so a function is never named after a mistake
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
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from itertools import combinations

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
        block_own: for ``gpt_params``, the student's ``block_params`` in the same form. When gpt_params
            matches a formula that is two mistakes in other words ("no layer norms" or "no attention biases"
            in every block), and the student's block_params is named after exactly one of them (by the
            rule above), that one is named.
    """
    observed = [(config, got)]
    for probe in probes(function):
        value = own(probe)
        if value is None:
            return None
        observed.append((probe, value))
    found = [c for c in candidates(function) if all(c.count(cfg) == value for cfg, value in observed)]
    if len(found) == 1 and not found[0].nameable and block_own is not None:
        return _by_block(found[0], block_own)
    return _one(found)


def _by_block(candidate: Candidate, block_own) -> Candidate | None:
    """Of the key sets of a GPT ``candidate`` that is not nameable, the one whose block mistakes are what
    the student's own block_params is named after; None when that is not exactly one."""
    probe = BLOCK_PROBES[0]
    got = block_own(probe)
    named = None if got is None else name_function("block_params", probe, got, block_own)
    if named is None:
        return None
    wanted = {mistakes.GPT_BLOCK_PREFIX + k for k in named.keys}
    fits = [keys for keys in (candidate.keys, *candidate.same_formula)
            if {k for k in keys if k.startswith(mistakes.GPT_BLOCK_PREFIX)} == wanted]
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
