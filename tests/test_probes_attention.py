"""The attention probes (grader/probes/mha.py) on correct and on broken ``multi_head_attention``.

Correct: the reference solution and two implementations written differently here (a loop over heads
with einsum and a -1e9 mask; a loop over queries that never builds a mask) get no finding from any
probe. Broken: every exercise-3 corpus case whose mistake is in the attention, and mistakes the corpus
lacks (written below as switches of one NumPy implementation), get a finding from the right probe
naming the right component -- and no finding from a probe unrelated to their mistake. The
expectations (tables ``CORPUS`` and ``INLINE``) come from the mistakes' definitions, not from the
probes' output.
"""
from __future__ import annotations

import functools
import importlib.util
from pathlib import Path

import numpy as np
import pytest
from conftest import ROOT

from grader import corpus
from grader.probes import mha as probes

CORPUS_DIR = ROOT / "tests" / "corpus" / "exercise3"


def _load(path: Path, name: str):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


SOLUTION = _load(ROOT / "solutions" / "exercise3" / "attention.py", "ex3_solution_probes").multi_head_attention


def looped(x, w_qkv, b_qkv, w_out, b_out, n_heads, causal=False):
    """Correct, written differently: one head at a time, einsum, -1e9 for blocked scores."""
    B, T, d = x.shape
    hs = d // n_heads
    w_q, w_k, w_v = w_qkv[:d], w_qkv[d:2 * d], w_qkv[2 * d:]
    b_q, b_k, b_v = b_qkv[:d], b_qkv[d:2 * d], b_qkv[2 * d:]
    heads = []
    for i in range(n_heads):
        f = slice(i * hs, (i + 1) * hs)
        q = np.einsum("btc,hc->bth", x, w_q[f]) + b_q[f]  # (B, T, hs)
        k = np.einsum("btc,hc->bth", x, w_k[f]) + b_k[f]
        v = np.einsum("btc,hc->bth", x, w_v[f]) + b_v[f]
        s = np.einsum("bth,buh->btu", q, k) / np.sqrt(hs)  # (B, T, T)
        if causal:
            s = s + np.triu(np.full((T, T), -1e9), 1)
        s = np.exp(s - s.max(axis=-1, keepdims=True))
        heads.append(np.einsum("btu,buh->bth", s / s.sum(axis=-1, keepdims=True), v))
    return np.concatenate(heads, axis=-1) @ w_out.T + b_out  # (B, T, d)


def per_query(x, w_qkv, b_qkv, w_out, b_out, n_heads, causal=False):
    """Correct, written a third way: one batch element, head and query at a time, only visible keys."""
    B, T, d = x.shape
    hs = d // n_heads
    qkv = x @ w_qkv.T + b_qkv  # (B, T, 3d)
    y = np.zeros((B, T, d))
    for b in range(B):
        for i in range(n_heads):
            q, k, v = (qkv[b, :, j * d + i * hs:j * d + (i + 1) * hs] for j in range(3))  # (T, hs) each
            for t in range(T):
                keys = t + 1 if causal else T
                s = k[:keys] @ q[t] / np.sqrt(hs)
                p = np.exp(s - s.max())
                y[b, t, i * hs:(i + 1) * hs] = (p / p.sum()) @ v[:keys]
    return y @ w_out.T + b_out


def _softmax(s, axis=-1, eps=0.0, global_max=False):
    e = np.exp(s - (s.max() if global_max else s.max(axis=axis, keepdims=True)))
    return e / (e.sum(axis=axis, keepdims=True) + eps)


def broken(x, w_qkv, b_qkv, w_out, b_out, n_heads, causal=False, *, m=frozenset()):
    """Multi-head attention with the mistakes ``m`` (keys of ``INLINE``) switched on; none: correct."""
    B, T, d = shape = x.shape
    if "batch_mixed" in m:
        x = x.reshape(1, B * T, d)  # one sequence of B*T tokens; a causal mask over B*T positions
        B, T = 1, B * T
    hs = d // n_heads
    if m & {"no_qkv_bias", "no_biases"}:
        b_qkv = np.zeros_like(b_qkv)
    if "qkv_not_transposed" in m:
        q, k, v = (x @ w_qkv[i * d:(i + 1) * d] + b_qkv[i * d:(i + 1) * d] for i in range(3))
    else:
        q, k, v = np.split(x @ w_qkv.T + b_qkv, 3, axis=-1)  # (B, T, d) each
    if "heads_no_transpose" in m:
        q, k, v = (a.reshape(B, T, n_heads, hs) for a in (q, k, v))  # heads attend to heads
    else:
        q, k, v = (a.reshape(B, T, n_heads, hs).transpose(0, 2, 1, 3) for a in (q, k, v))  # (B, h, T, hs)
    if "heads_share_scores" in m:  # one score matrix from all d features, used by every head
        whole_q, whole_k = (a.transpose(0, 2, 1, 3).reshape(B, T, d) for a in (q, k))  # (B, T, d)
        att = np.broadcast_to((whole_q @ whole_k.transpose(0, 2, 1))[:, None], (B, n_heads, T, T)) / np.sqrt(hs)
    else:
        att = q @ k.swapaxes(-1, -2) / (1.0 if m & {"no_scale", "values_scaled"} else np.sqrt(hs))
    later = np.triu(np.ones((T, T), dtype=bool), 1)  # True above the diagonal
    if (causal or "always_causal" in m) and "mask_ignored" not in m:
        if "mask_inverted" in m:
            att = np.where(~later, -np.inf, att)  # the meaning of the bool mask inverted: blocks key <= query
        elif "mask_added" in m:
            att = att + later  # a 0/1 float mask added (1 = blocked)
        elif "mask_added_keep" in m:
            att = att + ~later  # a 0/1 float mask added (1 = may attend)
        elif m & {"mask_blocks_diagonal_inf", "mask_blocks_diagonal_nan_to_num"}:
            att = np.where(np.triu(np.ones((T, T), dtype=bool)), -np.inf, att)
        elif "mask_leaks_future" in m:
            att = np.where(np.triu(np.ones((T, T), dtype=bool), 2), -np.inf, att)  # sees the next token
        elif "mask_minus_1e4" in m:
            att = np.where(later, -1e4, att)  # a finite mask value: outweighed by scores of order 1e6
        elif "mask_zero_scores" in m:
            att = np.where(later, 0.0, att)  # np.tril(scores): the future's scores 0, not -inf
        elif "mask_times_inf" in m:
            att = att + later * -np.inf  # 0 * -inf is NaN below the diagonal
        elif "mask_after_softmax" not in m:
            att = np.where(later, -np.inf, att)
    if "scores_float16" in m:
        att = att.astype(np.float16).astype(np.float64)  # about 3 significant digits; inf above 65504
    att = _softmax(att, axis=1 if "softmax_over_heads" in m else -1, eps=1e-6 if "denominator_eps" in m else 0.0,
                   global_max="softmax_global_max" in m)
    if "dropout" in m:
        att = att * (np.random.default_rng().random(att.shape) > 0.1) / 0.9  # left on at inference
    if "values_scaled" in m:
        v = v / np.sqrt(hs)  # the 1/sqrt(d_head) on the values (the scores above are not scaled)
    if "mask_blocks_diagonal_nan_to_num" in m:
        att = np.nan_to_num(att)  # the NaN row of token 0 "fixed" to zeros
    if causal and "mask_after_softmax" in m:
        att = att * ~later
    y = att @ v
    if "heads_no_transpose" in m:
        y = y.reshape(B, T, d)
    elif "heads_reverse_order" in m:
        y = y[:, ::-1].transpose(0, 2, 1, 3).reshape(B, T, d)
    else:
        y = y.transpose(0, 2, 1, 3).reshape(B, T, d)
    if m & {"no_out_bias", "no_biases"}:
        b_out = np.zeros_like(b_out)
    y = y @ (w_out if "out_not_transposed" in m else w_out.T) + b_out
    if "out_bias_twice" in m:
        y = y + b_out
    return y.reshape(shape)


# Expectations, written before running the probes. Each case: the findings it must get, as
# (probe, a substring of the component, a substring of the observation), and the probes allowed to
# report it (every other probe must find nothing).
Need = tuple[tuple[str, str, str], ...]

INLINE: dict[str, tuple[Need, set[str]]] = {
    "no_qkv_bias": ((("biases", "b_qkv (query part), b_qkv (value part)", "ignored"),), {"biases"}),
    "no_out_bias": ((("biases", "b_out", "ignored"),), {"biases"}),
    "out_bias_twice": ((("biases", "b_out", "by 2 x b_out, not by exactly b_out"),), {"biases"}),
    "no_biases": ((("biases", "b_qkv (query part), b_qkv (value part), b_out", "ignored"),), {"biases"}),
    "out_not_transposed": ((("weight_layout", "output projection W_O", "y @ w_out, not y @ w_out.T"),),
                           {"weight_layout"}),
    "qkv_not_transposed": ((("weight_layout", "W_Q, W_K, W_V", "x @ W, not x @ W.T"),), {"weight_layout"}),
    "heads_reverse_order": ((("head_slots", "order of the heads", "(reversed)"),), {"head_slots"}),
    "heads_no_transpose": ((("head_slots", "splitting or joining the heads", "no single head's values"),),
                           {"head_slots"}),
    "heads_share_scores": ((("head_split", "splitting Q and K into heads", "heads 0, 2, 3 differ"),),
                           {"head_split"}),
    "batch_mixed": ((("batch_independence", "batch elements", "batch element 1"),), {"batch_independence"}),
    "mask_inverted": ((("causality", "causal mask", "the mask is inverted"),), {"causality"}),
    "mask_added": ((("causality", "causal mask", "see the future"),), {"causality", "attention_weights"}),
    "mask_added_keep": ((("causality", "causal mask", "see the future"),), {"causality", "attention_weights"}),
    "mask_blocks_diagonal_inf": ((("self_sight", "causal mask (diagonal)", "token 0 is NaN"),), {"self_sight"}),
    "mask_blocks_diagonal_nan_to_num": ((("self_sight", "causal mask (diagonal)", "depends on no token"),
                                         ("attention_weights", "causal mask (diagonal)", "has no weight at all")),
                                        {"self_sight", "attention_weights"}),
    "denominator_eps": ((("attention_weights", "softmax normalisation",
                          "token 0's only weight (on itself) is 0.9999990000 = 1 - 1.0e-06"),), {"attention_weights"}),
    # one maximum for the whole array: rows far below it underflow to 0 / 0 at large scale
    "softmax_global_max": ((("large_scores", "softmax stability", "NaN or inf"),), {"large_scores"}),
    "always_causal": ((("causal_flag", "causal argument", "even when causal=False"),), {"causal_flag"}),
    "no_scale+no_qkv_bias": ((("attention_weights", "score scale", "(not scaled)"),
                              ("biases", "b_qkv (query part), b_qkv (value part)", "ignored")),
                             {"attention_weights", "biases"}),
    "out_not_transposed+mask_leaks_future": ((("weight_layout", "output projection W_O", "y @ w_out"),
                                              ("causality", "causal mask", "off by one")),
                                             {"weight_layout", "causality", "attention_weights"}),
    "heads_reverse_order+batch_mixed": ((("head_slots", "order of the heads", "reversed"),
                                         ("batch_independence", "batch elements", "mixes")),
                                        {"head_slots", "batch_independence"}),
    "qkv_not_transposed+mask_after_softmax": ((("weight_layout", "W_Q, W_K, W_V", "x @ W"),
                                               ("attention_weights", "causal mask (after the softmax)",
                                                "not renormalised")), {"weight_layout", "attention_weights"}),
    # -- written with the held-out corpus cases, before running the probes
    "mask_minus_1e4": ((("large_scores_mask", "causal mask (large scores)", "such as -1e4"),), {"large_scores_mask"}),
    # with all queries 0 every score is 0 already: the mask is seen only where scores are not 0, so the
    # causal argument is not "ignored"
    "mask_zero_scores": ((("causality", "causal mask", "see the future"),), {"causality", "attention_weights"}),
    "mask_times_inf": ((("causality", "causal mask", "0 * -inf is NaN"),), {"causality"}),
    "dropout": ((("determinism", "randomness in multi_head_attention", "two identical calls"),), {"determinism"}),
    "scores_float16": ((("attention_weights", "float64 precision", "lower precision"),
                        ("large_scores", "softmax stability", "float16 stops at 65504")),
                       {"attention_weights", "large_scores"}),
    "values_scaled": ((("attention_weights", "value scale", "= 1/sqrt(d_head = 6)"),), {"attention_weights"}),
    "softmax_over_heads": ((("attention_weights", "value scale", "over the heads"),), {"attention_weights"}),
}

#: Corpus cases whose mistake is in multi_head_attention (or the softmax it uses).
CORPUS: dict[str, tuple[Need, set[str]]] = {
    "float32": ((("precision", "float64 precision", "float32"),), {"precision"}),
    "heads_wrong_join": ((("head_slots", "splitting or joining the heads", "head 0's values"),), {"head_slots"}),
    "heads_wrong_order": ((("head_slots", "splitting or joining the heads", "no single head's values"),),
                          {"head_slots"}),
    "mask_after_softmax": ((("attention_weights", "causal mask (after the softmax)", "not renormalised"),),
                           {"attention_weights"}),
    "mask_blocks_diagonal": ((("self_sight", "causal mask (diagonal)", "hides each token from itself"),),
                             {"self_sight", "attention_weights"}),
    "mask_ignored": ((("causal_flag", "causal argument", "ignored"), ("causality", "causal mask", "hides nothing")),
                     {"causal_flag", "causality", "attention_weights"}),
    "mask_leaks_future": ((("causality", "causal mask", "off by one"),), {"causality", "attention_weights"}),
    # with the output projection gone, b_out is gone too: the bias probe says so, truly
    "no_out_proj": ((("weight_layout", "output projection W_O", "does not go through W_O"),),
                    {"weight_layout", "biases"}),
    "no_scale": ((("attention_weights", "score scale", "(not scaled)"),), {"attention_weights"}),
    "scale_sqrt_d_model": ((("attention_weights", "score scale", "1/sqrt(d_model = 24)"),), {"attention_weights"}),
    "scale_d_head": ((("attention_weights", "score scale", "= 1/d_head = 1/6"),), {"attention_weights"}),
    "softmax_wrong_axis": ((("attention_weights", "softmax axis", "over the queries"),), {"attention_weights"}),
    "unstable_softmax": ((("large_scores", "softmax stability", "NaN or inf"),), {"large_scores"}),
    # Invisible to probes: np.squeeze changes nothing at the probes' B = 2, T > 1, and a float32 result is
    # not an array a probe reads (``call`` gives None); the shape/dtype checks report both.
    "drops_batch_dim": ((), set()),
    "returns_float32": ((), set()),
    # -- cases of commit 1b355d6, rows written from each case's code and `mistake` before running the probes
    "no_qkv_bias": ((("biases", "b_qkv (query part), b_qkv (value part)", "ignored"),), {"biases"}),
    "no_out_bias": ((("biases", "b_out", "ignored"),), {"biases"}),
    "no_biases": ((("biases", "b_qkv (query part), b_qkv (value part), b_out", "ignored"),), {"biases"}),
    "out_not_transposed": ((("weight_layout", "output projection W_O", "y @ w_out, not y @ w_out.T"),),
                           {"weight_layout"}),
    "qkv_not_transposed": ((("weight_layout", "W_Q, W_K, W_V", "x @ W, not x @ W.T"),), {"weight_layout"}),
    "pair_weights_not_transposed": ((("weight_layout", "W_Q, W_K, W_V", "x @ W, not x @ W.T"),
                                     ("weight_layout", "output projection W_O", "y @ w_out, not y @ w_out.T")),
                                    {"weight_layout"}),
    "heads_reverse_order": ((("head_slots", "order of the heads", "(reversed)"),), {"head_slots"}),
    # heads attend to heads within a token: causal=True raises (a (T, T) mask on (B, T, h, h) scores), so only
    # the non-causal slot design reads it: every slot holds the mean of the heads' values
    "heads_no_transpose": ((("head_slots", "splitting or joining the heads", "no single head's values"),),
                           {"head_slots"}),
    # the flattened batch keeps element 0 first, so the per-token mask probes (element 0) see nothing; the
    # one-hot readout is the same for keys duplicated across the batch
    "batch_mixed": ((("batch_independence", "batch elements", "batch element 1"),), {"batch_independence"}),
    "pair_batch_mixed_mask_leaks_future": ((("causality", "causal mask", "off by one"),
                                            ("batch_independence", "batch elements", "batch element 1")),
                                           {"causality", "batch_independence", "attention_weights"}),
    # + 1 on later scores: every later token weighs e times more than it should, not 0
    "mask_added": ((("causality", "causal mask", "see the future"),), {"causality", "attention_weights"}),
    # -1e9, not -inf: outputs stay finite, so the one-hot readout also sees the weights on later tokens
    "mask_inverted": ((("causality", "causal mask", "the mask is inverted"),), {"causality", "attention_weights"}),
    "pair_no_qkv_bias_no_scale": ((("attention_weights", "score scale", "(not scaled)"),
                                   ("biases", "b_qkv (query part), b_qkv (value part)", "ignored")),
                                  {"attention_weights", "biases"}),
    "softmax_eps_in_denominator": ((("attention_weights", "softmax normalisation",
                                     "token 0's only weight (on itself) is 0.9999990000 = 1 - 1.0e-06"),),
                                   {"attention_weights"}),
    # -- held-out cases (heldout_*), rows written from each case's code before running the probes
    "heldout_mask_minus_1e4": ((("large_scores_mask", "causal mask (large scores)", "-1e4"),), {"large_scores_mask"}),
    # one sum over the whole (B, h, T, T) array: the weights' sum is 1/(B h T), and the batch elements share it
    "heldout_softmax_global_sum": ((("attention_weights", "value scale", "over the whole array"),),
                                   {"attention_weights", "batch_independence"}),
    "heldout_scale_on_values": ((("attention_weights", "value scale", "1/sqrt(d_head"),), {"attention_weights"}),
    "heldout_heads_d_head_first": ((("head_split", "splitting Q and K into heads", "own d_head features"),),
                                   {"head_split", "head_slots"}),
    "heldout_mask_tril_neg_inf": ((("causality", "causal mask", "the mask is inverted"),), {"causality"}),
    "heldout_dropout_left_on": ((("determinism", "randomness in multi_head_attention", "two identical calls"),),
                                {"determinism"}),
    "heldout_float16_scores": ((("attention_weights", "float64 precision", "lower precision"),),
                               {"attention_weights", "large_scores"}),
    "heldout_pair_no_out_bias_mask_leaks_future": ((("causality", "causal mask", "off by one"),
                                                    ("biases", "b_out", "ignored")),
                                                   {"causality", "biases", "attention_weights"}),
    "heldout_mask_scores_zeroed": ((("causality", "causal mask", "see the future"),), {"causality", "attention_weights"}),
    "heldout_mask_triu_times_inf": ((("causality", "causal mask", "NaN"),), {"causality"}),
    "heldout_qkv_bias_only_q": ((("biases", "b_qkv (value part)", "ignored"),), {"biases"}),
    "heldout_softmax_over_heads": ((("attention_weights", "value scale", "over the heads"),), {"attention_weights"}),
}

CORPUS_CASES = {case.name: case for case in corpus.cases("exercise3")}


def _corpus_function(name: str):
    return _load(CORPUS_DIR / name / "attention.py", f"ex3_probe_case_{name}").multi_head_attention


def _inline_function(name: str):
    return functools.partial(broken, m=frozenset(name.split("+")))


def _check(findings, need: Need, allowed: set[str]):
    by_probe = {f.probe: f for f in findings}
    assert len(by_probe) == len(findings), findings  # one finding per probe
    for probe, component, words in need:
        assert probe in by_probe, f"{probe} found nothing; findings: {findings}"
        assert component in by_probe[probe].component, by_probe[probe]
        assert words in by_probe[probe].observation, by_probe[probe]
    assert set(by_probe) <= allowed, f"unrelated probes reported: {sorted(set(by_probe) - allowed)}: {findings}"


def test_every_probe_has_a_broken_case():
    needed = {probe for need, _ in (*INLINE.values(), *CORPUS.values()) for probe, _, _ in need}
    assert needed == {p.__name__.removeprefix("probe_") for p in probes.PROBES}


@pytest.mark.parametrize("function", [SOLUTION, looped, per_query, broken],
                         ids=["solution", "looped", "per_query", "broken_with_none"])
@pytest.mark.parametrize("probe", probes.PROBES, ids=lambda p: p.__name__)
def test_correct_functions_get_no_finding(probe, function):
    assert probe(function) is None


def test_correct_implementations_agree():
    """The test's own implementations are correct: they agree with the reference solution."""
    rng = np.random.default_rng(0)
    x, w, b, wo, bo = rng.normal(size=(2, 5, 12)), rng.normal(size=(36, 12)), rng.normal(size=36), \
        rng.normal(size=(12, 12)), rng.normal(size=12)
    for causal in (False, True):
        want = SOLUTION(x, w, b, wo, bo, 3, causal=causal)
        np.testing.assert_allclose(looped(x, w, b, wo, bo, 3, causal=causal), want, atol=1e-12)
        np.testing.assert_allclose(per_query(x, w, b, wo, bo, 3, causal=causal), want, atol=1e-12)
        np.testing.assert_allclose(broken(x, w, b, wo, bo, 3, causal=causal), want, atol=1e-12)


@pytest.mark.parametrize("name", sorted(INLINE))
def test_inline_mistake_is_found_by_its_probe_only(name):
    need, allowed = INLINE[name]
    _check(probes.run(_inline_function(name)), need, allowed)


#: Corpus cases whose multi_head_attention is the reference's (the mistake is in the block, layer_norm,
#: gelu, softmax's axis argument, which attention does not use, or an import).
OUTSIDE = {"block_causal_ignored", "erf_gelu", "imports_torch", "layer_norm_eps_outside_sqrt", "layer_norm_no_affine",
           "layer_norm_unbiased_variance", "no_attn_residual", "no_layer_norm", "no_mlp_residual", "no_residual",
           "post_norm", "relu_gelu", "sigmoid_gelu", "softmax_axis_ignored",
           # cases of commit 1b355d6 whose multi_head_attention is the reference's
           "block_eps_1e-6", "block_inline_eps_outside_sqrt", "block_off_by_1e-5", "gelu_constant_rounded",
           "mlp_weights_swapped", "norm_after_sublayer", "pair_no_mlp_residual_relu", "pair_post_norm_erf_gelu",
           "residual_doubled", "residual_from_ln",
           # held-out cases whose multi_head_attention is the reference's
           "heldout_mlp_bias_after_gelu", "heldout_layer_norm_batch_axis", "heldout_layer_norm_std_squared",
           "heldout_block_ln1_twice", "heldout_gelu_constant_0447", "heldout_pair_ln_eps_outside_relu",
           "heldout_parallel_block", "heldout_gelu_sqrt_2pi"}


def test_corpus_tables_cover_every_case():
    """A new corpus case must be put in CORPUS or OUTSIDE (a decision, not a default)."""
    assert set(CORPUS) | OUTSIDE == set(CORPUS_CASES)
    assert not set(CORPUS) & OUTSIDE


@pytest.mark.parametrize("name", sorted(CORPUS))
def test_corpus_attention_mistake_is_found_by_its_probe_only(name):
    need, allowed = CORPUS[name]
    _check(probes.run(_corpus_function(name)), need, allowed)


@pytest.mark.parametrize("name", sorted(OUTSIDE))
def test_corpus_case_with_correct_attention_gets_no_finding(name):
    """Block, layer-norm, GELU, softmax-axis and import cases: their attention is correct."""
    assert probes.run(_corpus_function(name)) == []


@pytest.mark.parametrize("function, n_calls", [(SOLUTION, 42), (_inline_function("no_scale+mask_inverted"), 41)],
                         ids=["solution", "nan_with_causal"])
def test_run_is_deterministic_and_within_its_call_budget(function, n_calls):
    """42 calls; when causal=True gives NaN the batch probe retries with causal=False (2 more) while the
    determinism and large-score mask probes stop after their first call (2 fewer), and the causality probe
    asks causal=False once (1 more)."""
    calls = []

    def counted(*args, **kwargs):
        calls.append(1)
        return function(*args, **kwargs)

    first = probes.run(counted)
    assert len(calls) == n_calls
    assert probes.run(counted) == first


def test_garbage_results_give_no_finding():
    """A function that raises, or returns the wrong shape, dtype or NaN everywhere, finds nothing."""
    def raises(*args, **kwargs):
        raise ValueError("no")

    def wrong_shape(x, *args, **kwargs):
        return np.zeros(x.shape[1:])

    def as_float32(*args, **kwargs):
        return SOLUTION(*args, **kwargs).astype(np.float32)

    def nan(x, *args, **kwargs):
        return np.full(x.shape, np.nan)

    for function in (raises, wrong_shape, as_float32, nan):
        assert probes.run(function) == []
