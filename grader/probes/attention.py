"""Behavioural probes for ``multi_head_attention`` (exercise 3): the student's function against itself.

Every probe calls ``mha(x, w_qkv, b_qkv, w_out, b_out, n_heads, causal=...)`` (the contract of
exercises/exercise3/README.md: PyTorch's layout ``y = x @ W.T + b``; rows 0:d of ``w_qkv`` make Q, d:2d
K, 2d:3d V; head i uses features i*d_head:(i+1)*d_head) on designed float64 inputs and compares the
results with each other, or reads a simple property off them (which output moved, a row sum, a
log-ratio of two weights). No attention output is ever computed here, so the module ships to students.

Designs lean on three facts of the contract: with queries Q = 0 every score is 0, so a token weighs the
tokens it may see equally (its output then moves exactly when a visible token's value moves); softmax
rows sum to 1, so values that are the same at every token come out unchanged; and with one-hot values
and W_O = I the output *is* the attention matrix. The visibility probes use n_heads = 1, where no
split or join of heads can move one token's output to another token. Each probe returns at most one
:class:`~grader.probes.Finding` and finds nothing when the function raises or returns something that
is not a float64 array of shape (B, T, d_model) (finite, unless NaN is the observation).
Every probe is deterministic (:data:`SEED`); :func:`run` makes 38 calls (at most 40) in all.
"""
from __future__ import annotations

import numpy as np

from grader.probes import Finding, call

SEED = 10
B, T, D, H = 2, 5, 24, 4  # the multi-head probes: T != n_heads, d_head = 6 >= T (one-hot values fit a head)
DH = D // H
HEAD = 1  # the head the head-split and attention-weight probes drive
MOVED = 1e-10  # relative change below which an output "did not move" (a blocked weight is exactly 0)


def _run(mha, x, w_qkv, b_qkv, w_out, b_out, n_heads, causal=False, finite=True):
    """The student's output on copies of the inputs; ``finite=False`` keeps NaN/inf (else ``None``)."""
    args = [np.array(a, dtype=np.float64) for a in (x, w_qkv, b_qkv, w_out, b_out)]
    if finite:
        return call(mha, *args, n_heads, causal=causal, shape=x.shape)
    try:
        out = mha(*args, n_heads, causal=causal)
    except Exception:  # noqa: BLE001 - a probe that cannot run finds nothing
        return None
    ok = isinstance(out, np.ndarray) and out.dtype == np.float64 and out.shape == x.shape
    return out if ok else None


def _random(rng, b=B, t=T, d=D):
    """x (b, t, d), w_qkv (3d, d), b_qkv (3d,), w_out (d, d), b_out (d,): random, unit scale, float64."""
    return (rng.normal(size=(b, t, d)), rng.normal(size=(3 * d, d)) / np.sqrt(d), rng.normal(size=3 * d) * 0.5,
            rng.normal(size=(d, d)) / np.sqrt(d), rng.normal(size=d) * 0.5)


def _moved(a, b):
    """Largest absolute difference, and whether it is above round-off of the larger of the two."""
    m = float(np.max(np.abs(a - b)))
    return m, m > MOVED * max(float(np.max(np.abs(a))), float(np.max(np.abs(b))), 1e-300)


def _q_zero(rng):
    """A 1-head design (B, 4 tokens, d 6) with W_Q = 0 and b_q = 0: every token weighs what it sees equally."""
    x, w, b, w_out, b_out = _random(rng, t=4, d=6)
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
    base = _run(mha, x, w, b, w_out, b_out, 1, causal, finite=False)
    if base is None:
        return None
    n = x.shape[1]
    moved = np.empty((n, n))
    for s in range(n):
        x2 = x.copy()
        x2[0, s] += rng.normal(size=x.shape[2])
        out = _run(mha, x2, w, b, w_out, b_out, 1, causal, finite=False)
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
    the next one (off by one), only later tokens (inverted).
    """
    got = _visibility(mha, causal=True)
    if got is None:
        return None
    moved, known, sees = got
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
    output must differ from causal=False's (earlier tokens weigh fewer tokens).
    Findings: "with causal=False, changing the last token (3) did not move your output at token 0: your
    function hides later tokens even when causal=False"; "causal=True returned the same output as
    causal=False (largest difference 0): the causal argument is ignored, no mask is applied".
    """
    rng = np.random.default_rng(SEED)
    x, w, b, w_out, b_out = _q_zero(rng)
    off = _run(mha, x, w, b, w_out, b_out, 1, causal=False)
    x2 = x.copy()
    x2[0, -1] += 1.0
    x2[1, 0] += 1.0
    off2 = _run(mha, x2, w, b, w_out, b_out, 1, causal=False)
    if off is None or off2 is None:
        return None
    if not _moved(off2[0, 0], off[0, 0])[1] and _moved(off2[1, -1], off[1, -1])[1]:
        return Finding("causal_flag", "causal argument",
                       f"with causal=False, changing the last token ({x.shape[1] - 1}) did not move your output at "
                       "token 0: your function hides later tokens even when causal=False (only causal=True may)")
    on = _run(mha, x, w, b, w_out, b_out, 1, causal=True)
    if on is not None and not _moved(on, off)[1]:
        return Finding("causal_flag", "causal argument",
                       f"causal=True returned the same output as causal=False (largest difference "
                       f"{_moved(on, off)[0]:.1g}): the causal argument is ignored, no mask is applied")
    return None


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
    x, w, b, w_out, b_out = _random(rng)
    x2 = x.copy()
    x2[0] = rng.normal(size=x[0].shape)
    for causal in (True, False):
        base = _run(mha, x, w, b, w_out, b_out, H, causal=causal)
        other = None if base is None else _run(mha, x2, w, b, w_out, b_out, H, causal=causal)
        if other is not None:
            break
    else:
        return None
    m, moved = _moved(other[1], base[1])
    if not moved:
        return None
    return Finding("batch_independence", "batch elements",
                   f"with causal={causal}, changing batch element 0 moved your output for batch element 1 by {m:.2g}: "
                   "your function mixes the examples of a batch (each sequence must attend only within itself)")


def probe_biases(mha) -> Finding | None:
    """Biases: b_out, and the query and value parts of b_qkv, each change the output as the contract says.

    Feeds random x and w_qkv, W_O = I, biases 0 (B 2, T 5, d 24, 4 heads, causal=False), then one bias
    changed per call. b_out = delta must shift every output by exactly delta (the output is
    linear in b_out). The value part of b_qkv = c (the same number in every feature) must shift every
    output by c: each value gains c and a query's weights sum to 1. The query part must change the
    output: it changes every query, hence the weights over keys that differ. The key part of b_qkv
    provably has no effect (it adds the same q . delta to every score of a query, and softmax ignores a
    shift), so no probe may claim it is missing. It is changed once, as a control: a softmax over the
    queries reverses the two (b_q then shifts each key's scores by one number, b_k does not), so an
    unmoved output under b_q names the query part only when b_k did not move it either (5 calls).
    Finding: "your output did not change when the query part of b_qkv, the value part of b_qkv were
    changed: these biases are ignored ..." or "changing b_out by delta shifted your output by 2 x delta".
    """
    rng = np.random.default_rng(SEED)
    x, w, _, _, _ = _random(rng)
    zero, eye = np.zeros(3 * D), np.eye(D)
    delta_out, delta_q, c = rng.normal(size=D), rng.normal(size=D), 0.7
    base = _run(mha, x, w, zero, eye, np.zeros(D), H)
    out_b = _run(mha, x, w, zero, eye, delta_out, H)
    v_b = _run(mha, x, w, np.concatenate([np.zeros(2 * D), np.full(D, c)]), eye, np.zeros(D), H)
    q_b = _run(mha, x, w, np.concatenate([delta_q, np.zeros(2 * D)]), eye, np.zeros(D), H)
    k_b = _run(mha, x, w, np.concatenate([np.zeros(D), delta_q, np.zeros(D)]), eye, np.zeros(D), H)
    if any(r is None for r in (base, out_b, v_b, q_b, k_b)):
        return None
    if _moved(k_b, base)[1]:
        q_b = None  # the key part moved the output: scores normalised over the queries; b_q cannot be judged
    parts = (("b_qkv (query part)", "the query part of b_qkv", q_b), ("b_qkv (value part)", "the value part of b_qkv",
                                                                       v_b), ("b_out", "b_out", out_b))
    ignored = [(component, words) for component, words, out in parts if out is not None and not _moved(out, base)[1]]
    if ignored:
        return Finding("biases", ", ".join(c for c, _ in ignored),
                       f"your output did not change when {' or '.join(w for _, w in ignored)} changed: "
                       f"{'these biases are' if len(ignored) > 1 else 'this bias is'} ignored (q, k, v are "
                       "x @ w_qkv.T + b_qkv; the output is y @ w_out.T + b_out)")
    shift = out_b - base
    off = float(np.max(np.abs(shift - delta_out)))
    if off > 1e-4 * float(np.max(np.abs(delta_out))):
        ratio = float(np.sum(shift.reshape(-1, D).mean(axis=0) * delta_out) / np.sum(delta_out * delta_out))
        how = (f"by {ratio:.3g} x b_out" if np.max(np.abs(shift - ratio * delta_out)) < 1e-6 * np.max(np.abs(shift))
               else f"by something else (largest difference from b_out {off:.2g})")
        return Finding("biases", "b_out",
                       f"changing b_out shifted your output {how}, not by exactly b_out: the contract adds b_out "
                       "once, after W_O")
    return None


def _moves_tokens(out):
    """Whether batch element 0's output differs between tokens (equal weights give one output for all)."""
    return _moved(out[0], out[0, :1])[1]


def probe_weight_layout(mha) -> Finding | None:
    """Weight layout: W_Q, W_K, W_V (square slices of w_qkv) and W_O follow ``x @ W.T``, not ``x @ W``.

    Feeds n_heads = 1, d 6, T 5, causal=False, biases 0, W_O = I unless tested, and E = a single 1 at
    (i, j) = (1, 4) with feature i of x zero at every token (8 calls):
    - W_V = E, then E.T, with W_Q = W_K = 0 (equal weights): contract v = x_j e_i, output nonzero; with
      E.T, v = x_i e_j = 0, output 0. ``x @ W`` swaps the two.
    - W_Q = E, then E.T, with W_K symmetric (its layout cannot matter): contract, q = x_j e_i moves the
      weights (tokens' outputs differ); with E.T, q = 0 (all tokens equal). Then the same for W_K.
    - W_O = E (random Q, K, V): the contract writes y[..., j] into output feature i only; ``y @ w_out``
      writes y[..., i] into feature j. W_O = 0 (b_out = 0) must give 0: else W_O is not applied.
    A part whose two answers do not form either pattern is not named.
    Finding: "with non-symmetric weights your W_Q, W_K follow x @ W, not x @ W.T (PyTorch's (out, in)
    layout): ..." and/or "with w_out = 0 and b_out = 0 your output is not 0 (largest 0.8): ...".
    """
    rng = np.random.default_rng(SEED)
    d, i, j = 6, 1, 4
    x, w_rand, _, _, _ = _random(rng, d=d)
    x[..., i] = 0.0
    e = np.zeros((d, d))
    e[i, j] = 1.0
    s = rng.normal(size=(d, d))
    sym, z, eye, b0 = (s + s.T) / np.sqrt(8 * d), np.zeros((d, d)), np.eye(d), np.zeros(3 * d)
    bad = []
    for name, slot, other, read in (("W_Q", 0, (sym, rng.normal(size=(d, d))), _moves_tokens),
                                    ("W_K", 1, (sym, rng.normal(size=(d, d))), _moves_tokens),
                                    ("W_V", 2, (z, z), lambda o: _moved(o, 0 * o)[1])):
        seen = []
        for m in (e, e.T):
            blocks = list(other)
            blocks.insert(slot, m)  # [W_Q, W_K, W_V]
            out = _run(mha, x, np.concatenate(blocks), b0, eye, np.zeros(d), 1)
            seen.append(None if out is None else read(out))
        if seen == [False, True]:
            bad.append(name)
    sentences = []
    if bad:
        sentences.append(f"with non-symmetric weights your {', '.join(bad)} follow{'s' if len(bad) == 1 else ''} "
                         f"x @ W, not x @ W.T (PyTorch's (out, in) layout): a single 1 at row {i}, column {j} "
                         f"must read input feature {j} into feature {i}")
    one = _run(mha, x, w_rand, b0, e, np.zeros(d), 1)
    none = _run(mha, x, w_rand, b0, z, np.zeros(d), 1)
    components = list(bad)
    if none is not None and _moved(none, 0 * none)[1]:
        components.append("output projection W_O")
        sentences.append(f"with w_out = 0 and b_out = 0 your output is not 0 (largest {np.max(np.abs(none)):.2g}): "
                         "your output does not go through W_O (y @ w_out.T + b_out)")
    elif one is not None:
        nonzero = [f for f in range(d) if _moved(one[..., f], 0 * one[..., f])[1]]
        if nonzero == [j]:
            components.append("output projection W_O")
            sentences.append(f"with w_out a single 1 at row {i}, column {j}, your output moved feature {j}, not "
                             f"{i}: your W_O follows y @ w_out, not y @ w_out.T")
    if not sentences:
        return None
    return Finding("weight_layout", ", ".join(components), "; ".join(sentences))


def _slot_design():
    """x the same at every token (distinct per feature: 1..24), W_V = W_O = I, all else 0: output = x."""
    x0 = 1.0 + np.arange(D)
    w = np.concatenate([np.zeros((2 * D, D)), np.eye(D)])
    return np.broadcast_to(x0, (B, T, D)).copy(), w, np.zeros(3 * D), np.eye(D), np.zeros(D)


def _slots(mha):
    """(out, holds) for :func:`_slot_design`: holds[t, m] = the head whose values fill slot m at token t.

    -1 where a slot holds no head's values (batch element 0). ``None`` when the call fails or the output's
    total is not the input's (values lost, not moved: then no layout can be read). 1 call.
    """
    x, w, b, w_out, b_out = _slot_design()
    out = _run(mha, x, w, b, w_out, b_out, H)
    if out is None or abs(out.sum() - x.sum()) > 1e-4 * x.sum():
        return None
    heads = x[0, 0].reshape(H, DH)
    blocks = out[0].reshape(T, H, DH)
    holds = np.full((T, H), -1)
    for t in range(T):
        for m in range(H):
            match = [g for g in range(H) if np.allclose(blocks[t, m], heads[g], rtol=1e-4, atol=0)]
            holds[t, m] = match[0] if match else -1
    return out, holds


def _slots_ok(mha):
    got = _slots(mha)
    return got is not None and (got[1] == np.arange(H)).all()


def probe_head_slots(mha) -> Finding | None:
    """Per-head slots: head g's output must land in features g*d_head:(g+1)*d_head of every token.

    Feeds x the same at every token with distinct features (1..24), W_V = W_O = I, W_Q = W_K = 0 and
    biases 0 (B 2, T 5, d 24, 4 heads, causal=False; 1 call). Values equal at every token come out of
    any weights that sum to 1 unchanged, so the correct output is x again, and each slot of d_head
    features holds one head's values: a head's values found in another slot show where the split or the
    join sends it, with no assumption on the scores.
    Finding: "... your output's features 0:6 (head 0's slot) hold head 3's values at every token: the
    heads come back in the wrong order (reversed)"; "... at token 0 features 6:12 hold head 0's values
    (the order differs from token to token) ..."; "... hold values that are no single head's ...".
    """
    got = _slots(mha)
    if got is None or (got[1] == np.arange(H)).all():
        return None
    out, holds = got
    lead = "with each head's values made distinct (the same at every token), "
    t, m = [(t, m) for t in range(T) for m in range(H) if holds[t, m] != m][0]
    where = f"features {m * DH}:{(m + 1) * DH} (head {m}'s slot)"
    if sorted(holds[0]) == list(range(H)) and (holds == holds[0]).all():
        order = " (reversed)" if (holds[0] == np.arange(H)[::-1]).all() else ""
        return Finding("head_slots", "order of the heads",
                       f"{lead}your output's {where} hold head {holds[0, m]}'s values at every token: the heads "
                       f"come back in the wrong order{order}; head i belongs in features i*d_head:(i+1)*d_head")
    if holds[t, m] >= 0:
        return Finding("head_slots", "splitting or joining the heads",
                       f"{lead}at token {t} your output's {where} hold head {holds[t, m]}'s values, and which head "
                       "lands where differs from token to token: splitting into heads or joining them back mixes "
                       "tokens with heads")
    shown = np.array2string(out[0, t, m * DH:(m + 1) * DH], precision=3, separator=", ")
    return Finding("head_slots", "splitting or joining the heads",
                   f"{lead}at token {t} your output's {where} should hold head {m}'s values "
                   f"{list(range(m * DH + 1, (m + 1) * DH + 1))} but hold {shown}, no single head's values: "
                   "splitting into heads or joining them back mixes features of different heads")


def probe_head_split(mha) -> Finding | None:
    """Head split: each head computes its scores from its own d_head features of Q and K only.

    Feeds random x (B 2, T 5, d 24, 4 heads, causal=False), W_V = W_O = I, biases 0, and W_Q, W_K zero
    except a random d_head x d_head block on head 1's features (rows and columns 6:12, so that ``x @ W``
    stays inside the block too). Heads 0, 2, 3 get Q = K = 0: equal weights, one output at every token;
    head 1 attends unevenly, its output differs between tokens. 3 calls: the slot probe's design first
    (values must reach their own slots, else a join mistake would look like a split one), and Q = K = 0
    everywhere (every slot then equal at every token, else causal=False is not honoured).
    Finding: "with Q and K nonzero only in head 1's features (6:12), the outputs of heads 0, 2, 3 differ
    between tokens: ... each head must score with its own d_head features only".
    """
    if not _slots_ok(mha):
        return None
    rng = np.random.default_rng(SEED)
    x = rng.normal(size=(B, T, D))
    lo, hi = HEAD * DH, (HEAD + 1) * DH
    wq, wk = np.zeros((D, D)), np.zeros((D, D))
    wq[lo:hi, lo:hi], wk[lo:hi, lo:hi] = rng.normal(size=(2, DH, DH))
    control = _run(mha, x, np.concatenate([np.zeros((2 * D, D)), np.eye(D)]), np.zeros(3 * D), np.eye(D),
                   np.zeros(D), H)
    out = _run(mha, x, np.concatenate([wq, wk, np.eye(D)]), np.zeros(3 * D), np.eye(D), np.zeros(D), H)
    if control is None or out is None or _moves_tokens(control):
        return None
    varies = [m for m in range(H) if _moves_tokens(out[..., m * DH:(m + 1) * DH])]
    if varies == [HEAD]:
        return None
    others = [m for m in range(H) if m != HEAD]
    said = [f"the outputs of heads {', '.join(map(str, [m for m in others if m in varies]))} differ between tokens "
            "(they should weigh all tokens equally)"] if set(varies) - {HEAD} else []
    if HEAD not in varies:
        said.append(f"head {HEAD}'s output is the same at every token (it should attend unevenly)")
    return Finding("head_split", "splitting Q and K into heads",
                   f"with Q and K nonzero only in head {HEAD}'s features ({lo}:{hi}), {' and '.join(said)}: each "
                   "head must compute its scores from its own d_head features of Q and K only")


_A = np.array([1.0, -0.5, 2.0, 0.5, -1.5])  # query factors a_t: score(t, s) = a_t * b_s (unscaled)
_B = np.array([0.0, 1.0, -1.0, 1.5, 0.5])  # key factors b_s


def _one_hot(mha, causal):
    """Head HEAD's attention matrix (T, T) and the full output, read through one-hot values; or None.

    x[t] has a 1 at feature g*d_head + t of every head g; W_V = W_O = I, biases 0, so output feature
    g*d_head + s at token t is head g's weight of token t on token s. W_Q, W_K give head HEAD the scores
    a_t * b_s (before scaling); the other heads have Q = K = 0. ``None`` unless the output has the shape
    of that readout: no negative weight, the unused feature of every head 0, and (causal=False) the
    other heads' weights equal along each row.
    """
    x = np.zeros((B, T, D))
    for g in range(H):
        x[:, np.arange(T), g * DH + np.arange(T)] = 1.0
    wq, wk = np.zeros((D, D)), np.zeros((D, D))
    wq[HEAD * DH, HEAD * DH + np.arange(T)] = _A
    wk[HEAD * DH, HEAD * DH + np.arange(T)] = _B
    out = _run(mha, x, np.concatenate([wq, wk, np.eye(D)]), np.zeros(3 * D), np.eye(D), np.zeros(D), H, causal)
    if out is None:
        return None
    heads = out[0].reshape(T, H, DH)
    if heads.min() < -1e-12 or np.abs(heads[:, :, T:]).max() > 1e-9:
        return None
    uneven = np.ptp(np.delete(heads[:, :, :T], HEAD, axis=1), axis=-1).max()
    if not causal and uneven > 1e-9:
        return None
    return heads[:, HEAD, :T], out


def _is_float32(out):
    """Every value is exactly a float32 number: computed (at least last) in float32."""
    return bool((out.astype(np.float32).astype(np.float64) == out).all())


def probe_attention_weights(mha) -> Finding | None:
    """Attention weights, read back through one-hot values: rows sum to 1, masked, scaled by 1/sqrt(d_head).

    Feeds the design of :func:`_one_hot` (B 2, T 5, d 24, 4 heads), causal=False and causal=True, after
    the slot probe's design (3 calls; the readout needs each head's values in its own slot). Head 1's
    matrix A has, by the contract, rows softmax over keys of scores a_t * b_s / sqrt(d_head), so: rows
    sum to 1; with causal=True entries above the diagonal are 0, the diagonal is not, and rows still sum
    to 1; log(A[t, s] / A[t, 0]) = scale * a_t * (b_s - b_0) with scale = 1/sqrt(6). Tolerance on sums
    1e-9 (1e-5 when every value is a float32 number: :func:`probe_precision` reports that).
    Findings, first that applies: columns sum to 1 instead of rows (softmax over the queries); rows off
    from 1 ("differ from 1 by up to 1.0e-06"); later tokens weighted with causal=True; zero self-weight;
    causal rows that are the causal=False weights with the future zeroed (mask after the softmax); "the
    weights follow scores scaled by 0.2041 = 1/sqrt(d_model = 24); the contract scales by 1/sqrt(d_head)
    = 1/sqrt(6) = 0.4082" (only when one scale fits every weight to 1e-4).
    """
    if not _slots_ok(mha):
        return None
    free = _one_hot(mha, causal=False)
    if free is None:
        return None
    a, out = free
    masked = _one_hot(mha, causal=True)
    tol = 1e-5 if _is_float32(out) else 1e-9
    rows = a.sum(axis=1)
    dev = np.abs(rows - 1.0)
    t = int(np.argmax(dev))
    lead = "your attention weights (read back through one-hot values, head 1)"
    if dev[t] > tol:
        if np.abs(a.sum(axis=0) - 1.0).max() <= tol:
            return Finding("attention_weights", "softmax axis",
                           f"{lead} sum to 1 down each column (over the queries), not along each row (token {t}'s "
                           f"sum to {rows[t]:.4g}): the softmax runs over the queries instead of the keys")
        alone = "" if masked is None else (f"; with causal=True token 0's only weight (on itself) is "
                                           f"{masked[0][0, 0]:.10f} = 1 - {1 - masked[0][0, 0]:.1e}")
        return Finding("attention_weights", "softmax normalisation",
                       f"{lead} do not sum to 1 over the keys: they differ from 1 by up to {dev[t]:.1e} (token {t}: "
                       f"{rows[t]:.10f}){alone}")
    if masked is not None:
        c = masked[0]
        later = np.triu(c, 1).sum(axis=1)
        if (later[1:] > tol).any():
            u = 1 + int(np.argmax(later[1:]))
            return Finding("attention_weights", "causal mask",
                           f"with causal=True, {lead} give token {u} a weight of {later[u]:.2g} on later tokens: the "
                           "causal mask lets tokens see the future")
        if (np.diag(c)[1:] <= tol).all():
            zero = ("has no weight at all" if c[0].sum() <= tol else
                    "weighs all tokens equally" if np.ptp(c[0]) <= tol else "weighs all tokens unevenly")
            return Finding("attention_weights", "causal mask (diagonal)",
                           f"with causal=True, {lead} give every token after token 0 a weight of 0 on itself: the "
                           "causal mask also blocks the diagonal (token 0, left nothing, "
                           f"{zero})")
        sums = c.sum(axis=1)
        u = int(np.argmax(np.abs(sums - 1.0)))
        if abs(sums[u] - 1.0) > tol:
            kept = np.tril(np.ones((T, T), dtype=bool))
            same = np.abs(c - a)[kept].max() <= tol
            return Finding("attention_weights", "causal mask (after the softmax)" if same else "causal mask",
                           f"with causal=True, {lead} for token {u} sum to {sums[u]:.4g}, not 1" +
                           (": they are the causal=False weights with the later tokens' weights set to 0, not "
                            "renormalised: the mask is applied after the softmax" if same else ""))
    if a.min() <= 0:
        return None
    logs = np.log(a) - np.log(a[:, :1])
    model = _A[:, None] * (_B - _B[0])[None, :]
    scale = float((logs * model).sum() / (model * model).sum())
    contract = 1 / np.sqrt(DH)
    if np.abs(logs - scale * model).max() > 1e-4 or abs(scale - contract) <= 1e-4 * contract:
        return None
    names = {1 / np.sqrt(D): f" = 1/sqrt(d_model = {D})", 1.0: " (not scaled)", 1 / DH: f" = 1/d_head = 1/{DH}",
             np.sqrt(DH): f" = sqrt(d_head = {DH})"}
    label = [n for v, n in names.items() if abs(scale - v) <= 1e-4 * v]
    return Finding("attention_weights", "score scale",
                   f"{lead} follow the scores scaled by {scale:.4g}{label[0] if label else ''}; the contract scales "
                   f"by 1/sqrt(d_head) = 1/sqrt({DH}) = {contract:.4g}")


def probe_precision(mha) -> Finding | None:
    """Precision: a float64 computation does not return only float32 numbers.

    Feeds random weights and biases (B 2, T 5, d 24, 4 heads, causal=False; 1 call). Float64 results
    of these inputs are float32 numbers (24-bit mantissa) only by chance, about 2**-29 per value; all
    240 of them being so means the attention ran (at least its last step) in float32, whose round-off
    (about 6e-8 relative) the 1e-6 checks can see. Work in float32 whose last step is float64 is not seen.
    Finding: "every one of the 240 values of your output is exactly a float32 number: your attention
    computes in float32 (and casts back); keep every array float64".
    """
    x, w, b, w_out, b_out = _random(np.random.default_rng(SEED))
    out = _run(mha, x, w, b, w_out, b_out, H)
    if out is None or np.count_nonzero(out) < out.size // 2 or not _is_float32(out):
        return None
    return Finding("precision", "float64 precision",
                   f"every one of the {out.size} values of your output is exactly a float32 number: your "
                   "attention computes in float32 (and casts back); keep every array float64")


def probe_large_scores(mha) -> Finding | None:
    """Large scores: an output finite at unit scale stays finite with x scaled by 1000.

    Feeds random weights and biases (B 2, T 5, d 24, 4 heads, causal=False), x at unit scale and x*1000
    (2 calls): scores grow to about 1e6, where exp overflows float64 (above about 709); a softmax that
    subtracts each row's maximum first never sees them, and the contract's output is finite.
    A softmax without the maximum overflows there; one that subtracts a single global maximum underflows
    whole rows to 0/0.
    Finding: "with x scaled by 1000 (scores of order 1e6) your output has NaN or inf, though it is finite
    at unit scale: exp overflows or underflows in your attention's softmax (subtract each row's own
    maximum before exp)".
    """
    x, w, b, w_out, b_out = _random(np.random.default_rng(SEED))
    if _run(mha, x, w, b, w_out, b_out, H) is None:
        return None
    big = _run(mha, 1000 * x, w, b, w_out, b_out, H, finite=False)
    if big is None or np.isfinite(big).all():
        return None
    return Finding("large_scores", "softmax stability",
                   "with x scaled by 1000 (scores of order 1e6) your output has NaN or inf, though it is finite at "
                   "unit scale: exp overflows or underflows in your attention's softmax (subtract each row's own "
                   "maximum before exp)")


PROBES = (probe_causality, probe_self_sight, probe_causal_flag, probe_batch_independence, probe_biases,
          probe_weight_layout, probe_head_slots, probe_head_split, probe_attention_weights, probe_precision,
          probe_large_scores)


def run(mha) -> list[Finding]:
    """Every probe of :data:`PROBES` on ``mha`` (38 calls, at most 40); the findings, in probe order."""
    return [f for f in (probe(mha) for probe in PROBES) if f is not None]


__all__ = ["PROBES", "run", *[p.__name__ for p in PROBES]]
