"""Attention probes of the softmax: the attention weights read back, float64 precision, large scores.

Probes: :func:`probe_attention_weights` (with one-hot values and W_O = I the output *is* the attention
matrix: rows sum to 1 over the keys, the causal mask acts before the softmax, scores are scaled by
1/sqrt(d_head)), :func:`probe_precision` (no float32 computation) and :func:`probe_large_scores` (a
softmax that stays finite at scores of order 1e6). 6 calls in all, through
:func:`grader.probes.attention_calls.call_mha`.
"""
from __future__ import annotations

import numpy as np

from grader.probes import Finding
from grader.probes.attention_calls import DH, HEAD, SEED, B, D, H, T, call_mha, random_inputs
from grader.probes.attention_layout import read_slots, slot_output


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
    out = call_mha(mha, x, np.concatenate([wq, wk, np.eye(D)]), np.zeros(3 * D), np.eye(D), np.zeros(D), H, causal)
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


#: Output / input of the slot design (values the same at every token, all scores 0) that a known mistake gives,
#: and what it means. The contract's is 1: weights that sum to 1 leave such values unchanged.
_VALUE_SCALES = {
    1 / np.sqrt(DH): (f" = 1/sqrt(d_head = {DH})", "the 1/sqrt(d_head) scale is applied to the values (or the output), "
                      "not to the scores Q K^T"),
    T / H: (f" = T / n_heads = {T}/{H}", "the softmax normalises over the heads (each head gets 1/n_heads of every "
            "key) instead of over each query's keys"),
    1 / (B * H * T): (f" = 1/(B * n_heads * T) = 1/{B * H * T}", "the softmax normalises over the whole array at once "
                      "instead of over each query's keys"),
}


def _value_scale(x, out) -> Finding | None:
    """The slot design's output a multiple c != 1 of its input at every feature (see :data:`_VALUE_SCALES`)."""
    c = float(np.vdot(out, x) / np.vdot(x, x))
    if abs(c - 1.0) <= 1e-4 or np.abs(out - c * x).max() > 1e-9 * np.abs(x).max():
        return None
    label, meaning = next(((lab, m) for v, (lab, m) in _VALUE_SCALES.items() if abs(c - v) <= 1e-9 * v),
                          ("", "a query's weights do not sum to 1 over the keys, or the values or the output are scaled"))
    return Finding("attention_weights", "attention weights' sum or value scale",
                   f"with values the same at every token (W_V = W_O = I, all scores 0) your output is {c:.6g} times "
                   f"the values{label}, where weights summing to 1 over the keys give the values unchanged: {meaning}")


def probe_attention_weights(mha) -> Finding | None:
    """Attention weights, read back through one-hot values: rows sum to 1, masked, scaled by 1/sqrt(d_head).

    Feeds the design of :func:`_one_hot` (B 2, T 5, d 24, 4 heads), causal=False and causal=True, after
    the slot probe's design (3 calls; the readout needs each head's values in its own slot). When the slot
    design's output is a multiple c != 1 of its input (values the same at every token), the readout cannot
    work, and c says why (:data:`_VALUE_SCALES`: values scaled by 1/sqrt(d_head), a softmax over the heads or
    over the whole array). Head 1's
    matrix A has, by the contract, rows softmax over keys of scores a_t * b_s / sqrt(d_head), so: rows
    sum to 1; with causal=True entries above the diagonal are 0, the diagonal is not, and rows still sum
    to 1; log(A[t, s] / A[t, 0]) = scale * a_t * (b_s - b_0) with scale = 1/sqrt(6). Tolerance on sums
    1e-9 (1e-5 when every value is a float32 number: :func:`probe_precision` reports that).
    Findings, first that applies: columns sum to 1 instead of rows (softmax over the queries); rows off
    from 1 ("differ from 1 by up to 1.0e-06"); later tokens weighted with causal=True; zero self-weight;
    causal rows that are the causal=False weights with the future zeroed (mask after the softmax); "the
    weights follow scores scaled by 0.2041 = 1/sqrt(d_model = 24); the contract scales by 1/sqrt(d_head)
    = 1/sqrt(6) = 0.4082" (only when one scale fits every weight to 1e-4 and differs from the contract's by
    more than 1 %); weights that follow the contract's scale only to 1e-9 .. 1e-2 in log-ratio (float64 gives
    about 1e-15) and are not float32 numbers (:func:`probe_precision`'s): scores or weights computed in lower
    precision, component ``"float64 precision"``.
    """
    slots = slot_output(mha)
    if slots is None:
        return None
    scaled = _value_scale(*slots)
    if scaled is not None:
        return scaled
    read = read_slots(*slots)
    if read is None or not (read[1] == np.arange(H)).all():
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
    if abs(scale - contract) <= 1e-2 * contract:
        off = float(np.abs(logs - contract * model).max())
        if not 1e-9 < off <= 1e-2 or _is_float32(out):
            return None
        return Finding("attention_weights", "float64 precision",
                       f"{lead} follow the softmax of the scores scaled by 1/sqrt(d_head) only to {off:.1g} in "
                       "log(weight ratio), where float64 arithmetic gives about 1e-15: the scores or the weights are "
                       "computed in lower precision (float16 or float32 somewhere); keep every array float64")
    if np.abs(logs - scale * model).max() > 1e-4:
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
    x, w, b, w_out, b_out = random_inputs(np.random.default_rng(SEED))
    out = call_mha(mha, x, w, b, w_out, b_out, H)
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
    maximum before exp), or the scores overflow a smaller dtype (float16 stops at 65504)".
    """
    x, w, b, w_out, b_out = random_inputs(np.random.default_rng(SEED))
    if call_mha(mha, x, w, b, w_out, b_out, H) is None:
        return None
    big = call_mha(mha, 1000 * x, w, b, w_out, b_out, H, finite=False)
    if big is None or np.isfinite(big).all():
        return None
    return Finding("large_scores", "softmax stability",
                   "with x scaled by 1000 (scores of order 1e6) your output has NaN or inf, though it is finite at "
                   "unit scale: exp overflows or underflows in your attention's softmax (subtract each row's own "
                   "maximum before exp), or the scores overflow a smaller dtype (float16 stops at 65504)")
