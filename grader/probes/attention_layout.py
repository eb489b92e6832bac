"""Attention probes of where the weights, biases and heads go: biases, ``x @ W.T`` layout, head slots, head split.

Probes: :func:`probe_biases` (b_qkv's query and value parts and b_out change the output as the contract
says), :func:`probe_weight_layout` (W_Q, W_K, W_V and W_O follow ``x @ W.T``, and W_O is applied),
:func:`probe_head_slots` (head g's output lands in features g*d_head:(g+1)*d_head) and
:func:`probe_head_split` (each head scores with its own features). The head designs lean on softmax rows
summing to 1: values that are the same at every token come out unchanged, whatever the scores.
17 calls in all, through :func:`grader.probes.attention_calls.call_mha`.
"""
from __future__ import annotations

import numpy as np

from grader.probes import Finding
from grader.probes.attention_calls import DH, HEAD, SEED, B, D, H, T, call_mha, difference, random_inputs


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
    Only whether each part moves the output is checked (not by how much), except for b_out.
    Finding: "your output did not change when the query part of b_qkv or the value part of b_qkv changed:
    these biases are ignored ..." or "changing b_out shifted your output by 2 x b_out, not by exactly b_out".
    """
    rng = np.random.default_rng(SEED)
    x, w, _, _, _ = random_inputs(rng)
    zero, eye = np.zeros(3 * D), np.eye(D)
    delta_out, delta_q, c = rng.normal(size=D), rng.normal(size=D), 0.7
    base = call_mha(mha, x, w, zero, eye, np.zeros(D), H)
    out_b = call_mha(mha, x, w, zero, eye, delta_out, H)
    v_b = call_mha(mha, x, w, np.concatenate([np.zeros(2 * D), np.full(D, c)]), eye, np.zeros(D), H)
    q_b = call_mha(mha, x, w, np.concatenate([delta_q, np.zeros(2 * D)]), eye, np.zeros(D), H)
    k_b = call_mha(mha, x, w, np.concatenate([np.zeros(D), delta_q, np.zeros(D)]), eye, np.zeros(D), H)
    if any(r is None for r in (base, out_b, v_b, q_b, k_b)):
        return None
    if difference(k_b, base)[1]:
        q_b = None  # the key part moved the output: scores normalised over the queries; b_q cannot be judged
    parts = (("b_qkv (query part)", "the query part of b_qkv", q_b), ("b_qkv (value part)", "the value part of b_qkv",
                                                                       v_b), ("b_out", "b_out", out_b))
    ignored = [(component, words) for component, words, out in parts
               if out is not None and not difference(out, base)[1]]
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
    return difference(out[0], out[0, :1])[1]


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
    x, w_rand, _, _, _ = random_inputs(rng, d=d)
    x[..., i] = 0.0
    e = np.zeros((d, d))
    e[i, j] = 1.0
    s = rng.normal(size=(d, d))
    sym, z, eye, b0 = (s + s.T) / np.sqrt(8 * d), np.zeros((d, d)), np.eye(d), np.zeros(3 * d)
    bad = []
    for name, slot, other, read in (("W_Q", 0, (sym, rng.normal(size=(d, d))), _moves_tokens),
                                    ("W_K", 1, (sym, rng.normal(size=(d, d))), _moves_tokens),
                                    ("W_V", 2, (z, z), lambda o: difference(o, 0 * o)[1])):
        seen = []
        for m in (e, e.T):
            blocks = list(other)
            blocks.insert(slot, m)  # [W_Q, W_K, W_V]
            out = call_mha(mha, x, np.concatenate(blocks), b0, eye, np.zeros(d), 1)
            seen.append(None if out is None else read(out))
        if seen == [False, True]:
            bad.append(name)
    sentences = []
    if bad:
        sentences.append(f"with non-symmetric weights your {', '.join(bad)} follow{'s' if len(bad) == 1 else ''} "
                         f"x @ W, not x @ W.T (PyTorch's (out, in) layout): a single 1 at row {i}, column {j} "
                         f"must read input feature {j} into feature {i}")
    one = call_mha(mha, x, w_rand, b0, e, np.zeros(d), 1)
    none = call_mha(mha, x, w_rand, b0, z, np.zeros(d), 1)
    components = list(bad)
    if none is not None and difference(none, 0 * none)[1]:
        components.append("output projection W_O")
        sentences.append(f"with w_out = 0 and b_out = 0 your output is not 0 (largest {np.max(np.abs(none)):.2g}): "
                         "your output does not go through W_O (y @ w_out.T + b_out)")
    elif one is not None:
        nonzero = [f for f in range(d) if difference(one[..., f], 0 * one[..., f])[1]]
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


def slot_output(mha):
    """(x, out) for :func:`_slot_design` (values the same at every token, W_V = W_O = I, all else 0, so the
    contract's output is x), or ``None`` when the call gives no finite array (1 call)."""
    x, w, b, w_out, b_out = _slot_design()
    out = call_mha(mha, x, w, b, w_out, b_out, H)
    return None if out is None else (x, out)


def read_slots(x, out):
    """(out, holds) for :func:`_slot_design`'s input ``x`` and the output ``out``: holds[t, m] = the head whose
    values fill slot m at token t, -1 where a slot holds no head's values (batch element 0). ``None`` when
    the output's total is not the input's (values lost, not moved: then no layout can be read)."""
    if abs(out.sum() - x.sum()) > 1e-4 * x.sum():
        return None
    heads = x[0, 0].reshape(H, DH)
    blocks = out[0].reshape(T, H, DH)
    holds = np.full((T, H), -1)
    for t in range(T):
        for m in range(H):
            match = [g for g in range(H) if np.allclose(blocks[t, m], heads[g], rtol=1e-4, atol=0)]
            holds[t, m] = match[0] if match else -1
    return out, holds


def _slots(mha):
    """:func:`read_slots` of the student's output on :func:`_slot_design`, or ``None`` (1 call)."""
    got = slot_output(mha)
    return None if got is None else read_slots(*got)


def slots_ok(mha):
    """Whether every head's values land in its own slot at every token (:func:`_slots`; 1 call)."""
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
    if not slots_ok(mha):
        return None
    rng = np.random.default_rng(SEED)
    x = rng.normal(size=(B, T, D))
    lo, hi = HEAD * DH, (HEAD + 1) * DH
    wq, wk = np.zeros((D, D)), np.zeros((D, D))
    wq[lo:hi, lo:hi], wk[lo:hi, lo:hi] = rng.normal(size=(2, DH, DH))
    control = call_mha(mha, x, np.concatenate([np.zeros((2 * D, D)), np.eye(D)]), np.zeros(3 * D), np.eye(D),
                   np.zeros(D), H)
    out = call_mha(mha, x, np.concatenate([wq, wk, np.eye(D)]), np.zeros(3 * D), np.eye(D), np.zeros(D), H)
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
