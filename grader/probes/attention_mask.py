"""Attention probes of what each output may see: the causal mask, the ``causal`` argument, batch elements.

Probes: :func:`probe_causality` and :func:`probe_self_sight` (the causal mask: no later token, but the
token itself), :func:`probe_large_scores_mask` (no later token at scores of order 1e6 either),
:func:`probe_causal_flag` (causal=False masks nothing, causal=True does) and
:func:`probe_batch_independence` (no batch element sees another). The first three use one design: n_heads
= 1 and queries Q = 0, so every score is 0 and a token weighs the tokens it may see equally -- its output
moves exactly when a visible token's value moves -- and with one head no split or join of heads can move
one token's output to another token. 17 calls (at most 24) in all, through
:func:`grader.probes.attention_calls.call_mha`.
"""
from __future__ import annotations

import numpy as np

from grader.probes import Finding
from grader.probes.attention_calls import MOVED, SEED, H, call_mha, difference, random_inputs


def _q_zero(rng):
    """A 1-head design (B, 4 tokens, d 6) with W_Q = 0 and b_q = 0: every token weighs what it sees equally."""
    x, w, b, w_out, b_out = random_inputs(rng, t=4, d=6)
    w[:6], b[:6] = 0.0, 0.0
    return x, w, b, w_out, b_out


def _visibility(mha, causal):
    """(moved, known, sees): moved[t, s] = how far output t (batch element 0) moved when token s changed.

    With Q = 0 the weights are equal over the visible tokens, so moved[t, s] > 0 (``sees``) exactly when
    token t sees token s. NaN (not ``known``) where output t is not finite. 5 calls; ``None`` when a call
    gives no array.
    """
    rng = np.random.default_rng(SEED)
    x, w, b, w_out, b_out = _q_zero(rng)
    base = call_mha(mha, x, w, b, w_out, b_out, 1, causal, finite=False)
    if base is None:
        return None
    n = x.shape[1]
    moved = np.empty((n, n))
    for s in range(n):
        x2 = x.copy()
        x2[0, s] += rng.normal(size=x.shape[2])
        out = call_mha(mha, x2, w, b, w_out, b_out, 1, causal, finite=False)
        if out is None:
            return None
        moved[:, s] = np.max(np.abs(out[0] - base[0]), axis=-1)
    finite = base[np.isfinite(base)]
    scale = float(np.max(np.abs(finite))) if finite.size else 1.0
    return moved, np.isfinite(moved), moved > MOVED * scale


def _blind_pattern(sees, known):
    """Tokens t >= 1 that do not see themselves, when that holds for every known such row, else []."""
    rows = [t for t in range(1, len(sees)) if known[t].all()]
    blind = [t for t in rows if not sees[t, t]]
    return blind if rows and blind == rows else []


def probe_causality(mha) -> Finding | None:
    """Causal mask: with causal=True, changing a later token must not move an earlier token's output.

    Feeds: n_heads = 1, 4 tokens, W_Q = 0 and b_q = 0 (equal weights over the visible tokens), random
    K, V, W_O and biases; token s of batch element 0 changed, one token per call (5 calls). A correct
    mask blocks every later key with -inf (or -1e9): its weight is exactly 0, so outputs at tokens
    t < s do not move at all. Rows that are NaN are skipped (an inverted mask with -inf leaves the last
    token nothing). When only token 0 sees later tokens and every other token is blind to itself, the
    mask blocks the diagonal (token 0 has nothing left): that is :func:`probe_self_sight`'s finding.
    Finding: "with causal=True, changing token 3 moved your output at token 0 by 0.41: the causal mask
    lets tokens see the future", plus the pattern when it is one of: every later token visible, exactly
    the next one (off by one), only later tokens (inverted). When the causal=True output is NaN or inf
    everywhere, the same call with causal=False (1 more call) tells whether the mask is what makes it so.
    """
    got = _visibility(mha, causal=True)
    if got is None:
        return None
    moved, known, sees = got
    if not known.any():
        return _nan_everywhere(mha)
    n = len(moved)
    future = np.triu(np.ones((n, n), dtype=bool), 1)
    leaks = sees & future
    if not leaks.any() or (not leaks[1:].any() and _blind_pattern(sees, known)):
        return None
    t, s = np.unravel_index(np.argmax(np.where(leaks, moved, -1.0)), moved.shape)
    rows = [r for r in range(n - 1) if known[r].all()]
    pattern = ""
    if all((sees[r] == (np.arange(n) > r)).all() for r in rows):
        pattern = "; each token sees only later tokens, not itself or earlier ones (the mask is inverted)"
    elif all(leaks[r, r + 1:].all() for r in rows):
        pattern = "; every token sees every later token (the mask hides nothing)"
    elif all((leaks[r] == (np.arange(n) == r + 1)).all() for r in rows):
        pattern = "; each token sees exactly one token ahead (the mask is off by one)"
    return Finding("causality", "causal mask",
                   f"with causal=True, changing token {s} moved your output at token {t} by {moved[t, s]:.2g}: "
                   f"the causal mask lets tokens see the future{pattern}")


def _nan_everywhere(mha) -> Finding | None:
    """The causal=True output of the Q = 0 design is NaN or inf everywhere: a finding when causal=False's is
    finite (then the mask did it: ``triu(ones) * -inf`` is NaN below the diagonal, 0 * -inf, or it blocks every
    key of every token)."""
    x, w, b, w_out, b_out = _q_zero(np.random.default_rng(SEED))
    if call_mha(mha, x, w, b, w_out, b_out, 1, causal=False) is None:
        return None
    return Finding("causality", "causal mask",
                   "with causal=True every value of your output is NaN or inf, with causal=False none is: the causal "
                   "mask puts NaN into the scores (0 * -inf is NaN: a mask built as triu(ones) * -inf) or leaves no "
                   "token anything to attend to; set the later tokens' scores to -inf, e.g. np.where(future, -np.inf, "
                   "scores)")


def probe_large_scores_mask(mha) -> Finding | None:
    """Causal mask at large scores: with x scaled by 1000, a later token must still move no earlier output.

    Feeds random weights and biases (B 2, T 5, d 24, 4 heads, causal=True), x scaled by 1000 (scores of order
    1e6), then element 0's last token redrawn (2 calls); when earlier outputs of element 0 moved, the same at
    unit scale (2 more calls) keeps this probe to what only large scores show. A mask of -inf (or of a
    number far below every score) gives later tokens weight exactly 0 at any scale; a finite mask value
    such as -1e4 is outweighed by scores of order -1e6, and the weight goes to the future.
    Finding: "with x scaled by 1000 ... changing token 4 moved your output at token 0 by 3e+02, though at
    unit scale it does not: ...", component ``"causal mask (large scores)"``.
    """
    rng = np.random.default_rng(SEED + 1)
    x, w, b, w_out, b_out = random_inputs(rng)
    x2 = x.copy()
    x2[0, -1] = rng.normal(size=x.shape[2])

    def earlier_moved(factor):
        base = call_mha(mha, factor * x, w, b, w_out, b_out, H, causal=True)
        other = None if base is None else call_mha(mha, factor * x2, w, b, w_out, b_out, H, causal=True)
        if other is None:
            return None
        return difference(other[0, :-1], base[0, :-1])

    big = earlier_moved(1000.0)
    if big is None or not big[1]:
        return None
    unit = earlier_moved(1.0)
    if unit is None or unit[1]:
        return None
    return Finding("large_scores_mask", "causal mask (large scores)",
                   f"with x scaled by 1000 (scores of order 1e6) and causal=True, changing the last token moved your "
                   f"output at earlier tokens by up to {big[0]:.2g}, though at unit scale it does not: the blocked "
                   "scores are set to a finite number (such as -1e4) that scores of this size outweigh; use -inf")


def probe_self_sight(mha) -> Finding | None:
    """Causal mask, diagonal: with causal=True every token must see itself (token 0 sees only itself).

    Feeds the design of :func:`probe_causality` (5 calls). A correct mask keeps key s = t, so output t
    moves when token t changes, and token 0's output (one visible key: weight 1) is finite. A mask that
    also blocks the diagonal leaves token 0 nothing: NaN with -inf, or equal weights on all tokens with
    -1e9; the other tokens no longer depend on themselves. Silent when a later token is visible from a
    token t >= 1 (then :func:`probe_causality` reports: an inverted mask also hides the diagonal).
    Finding: "with causal=True your output at token 0 is NaN (the others are finite) ..." or "changing
    token t did not move your output at token t for tokens 1, 2, 3: the causal mask also hides each token
    from itself", naming what became of token 0.
    """
    got = _visibility(mha, causal=True)
    if got is None:
        return None
    moved, known, sees = got
    n = len(moved)
    if (sees & np.triu(np.ones((n, n), dtype=bool), 1))[1:].any():
        return None
    blind = _blind_pattern(sees, known)
    fix = "; it must block only later tokens"
    if not known[0].any() and known[1:].all():
        also = f" and tokens {', '.join(map(str, blind))} do not depend on themselves" if blind else ""
        return Finding("self_sight", "causal mask (diagonal)",
                       f"with causal=True your output at token 0 is NaN (the others are finite){also}: token 0 may "
                       f"see only itself, and the causal mask blocks that too{fix}")
    if blind:
        zero = (" (token 0, left nothing, weighs all tokens)" if sees[0].all() else
                " (token 0, left nothing, depends on no token)" if not sees[0].any() else
                " (token 0 sees only itself, as it should)" if not sees[0, 1:].any() else "")
        return Finding("self_sight", "causal mask (diagonal)",
                       f"with causal=True (all queries 0, so each token weighs the tokens it sees equally), changing "
                       f"token t did not move your output at token t for tokens {', '.join(map(str, blind))}: the "
                       f"causal mask also hides each token from itself{fix}{zero}")
    return None


def probe_causal_flag(mha) -> Finding | None:
    """The ``causal`` argument: causal=False must let token 0 see the last token; causal=True must differ.

    Feeds the Q = 0 design of :func:`probe_causality` (3 calls): with causal=False, the last token of
    batch element 0 changed (token 0 must move: nothing is masked) and token 0 of element 1 changed (the
    last token must move: the control that tokens attend to each other at all); then causal=True, whose
    output must differ from causal=False's (earlier tokens weigh fewer tokens). When it does not, the same
    two calls with random queries (2 more calls) tell a mask that is ignored from one that changes nothing
    only while every score is 0 (future scores set to 0 rather than -inf: ``np.tril(scores)``).
    Findings: "with causal=False, changing the last token (3) did not move your output at token 0: your
    function hides later tokens even when causal=False"; "causal=True returned the same output as
    causal=False (largest difference 0): the causal argument is ignored, no mask is applied".
    """
    rng = np.random.default_rng(SEED)
    x, w, b, w_out, b_out = _q_zero(rng)
    off = call_mha(mha, x, w, b, w_out, b_out, 1, causal=False)
    x2 = x.copy()
    x2[0, -1] += 1.0
    x2[1, 0] += 1.0
    off2 = call_mha(mha, x2, w, b, w_out, b_out, 1, causal=False)
    if off is None or off2 is None:
        return None
    if not difference(off2[0, 0], off[0, 0])[1] and difference(off2[1, -1], off[1, -1])[1]:
        return Finding("causal_flag", "causal argument",
                       f"with causal=False, changing the last token ({x.shape[1] - 1}) did not move your output at "
                       "token 0: your function hides later tokens even when causal=False (only causal=True may)")
    on = call_mha(mha, x, w, b, w_out, b_out, 1, causal=True)
    if on is None or difference(on, off)[1]:
        return None
    x, w, b, w_out, b_out = random_inputs(rng, t=4, d=6)  # random queries: scores that are not all 0
    off, on = (call_mha(mha, x, w, b, w_out, b_out, 1, causal=c) for c in (False, True))
    if off is None or on is None or difference(on, off)[1]:
        return None
    return Finding("causal_flag", "causal argument",
                   f"causal=True returned the same output as causal=False (largest difference "
                   f"{difference(on, off)[0]:.1g}), with all queries 0 and with random ones: the causal argument is "
                   "ignored, no mask is applied")


def probe_batch_independence(mha) -> Finding | None:
    """Batch elements: changing batch element 0 must not move batch element 1's output.

    Feeds random weights and biases, B = 2, T = 5, d_model = 24, 4 heads, causal=True (2 calls: as is,
    and with element 0 redrawn; 2 more with causal=False when causal=True gives no finite array, e.g. a
    mask that leaves a token nothing). Attention runs within each sequence, so element 1 is untouched. A
    batch flattened into one sequence of B*T tokens (with a mask over B*T positions) lets element 1's
    tokens see element 0 -- in either flattening order.
    Finding: "changing batch element 0 moved your output for batch element 1 by 0.21: your function mixes
    the examples of a batch (each sequence must attend only within itself)".
    """
    rng = np.random.default_rng(SEED)
    x, w, b, w_out, b_out = random_inputs(rng)
    x2 = x.copy()
    x2[0] = rng.normal(size=x[0].shape)
    for causal in (True, False):
        base = call_mha(mha, x, w, b, w_out, b_out, H, causal=causal)
        other = None if base is None else call_mha(mha, x2, w, b, w_out, b_out, H, causal=causal)
        if other is not None:
            break
    else:
        return None
    m, moved = difference(other[1], base[1])
    if not moved:
        return None
    return Finding("batch_independence", "batch elements",
                   f"with causal={causal}, changing batch element 0 moved your output for batch element 1 by {m:.2g}: "
                   "your function mixes the examples of a batch (each sequence must attend only within itself)")
