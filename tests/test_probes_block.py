"""Probes of transformer_block (grader/probes/block.py) on correct and broken blocks.

The tables below were written from each mistake, before running the probes: which probe must find it and
which component its finding names, and which other probes may legitimately speak (a mistake inside
multi_head_attention makes the block's own output non-causal, for example). Every other finding fails the
test: a wrong finding is worse than none. Each block runs twice: with the student's own layer_norm, gelu and
multi_head_attention given (self-consistency; their own mistakes are then left to their own probes) and
alone (the probes then report what the block does).
"""
from __future__ import annotations

import importlib.util
import time

import numpy as np
import pytest
from conftest import ROOT

from grader.probes import block as bp

CORPUS = ROOT / "tests" / "corpus" / "exercise3"
CAUSAL = "causal masking in transformer_block"

#: corpus case -> (mode -> {probe: component substring} required), and the probes also allowed to find
#: something in "alone" mode. A case not listed expects no finding in either mode.
CORPUS_EXPECTED: dict[str, tuple[dict[str, dict[str, str]], set[str]]] = {
    "no_residual": ({"with": {"residual": "both residual"}, "alone": {"residual": "both residual"}}, set()),
    "no_attn_residual": ({"with": {"residual": "around the attention"},
                          "alone": {"residual": "around the attention"}}, set()),
    "no_mlp_residual": ({"with": {"residual": "around the MLP"}, "alone": {"residual": "around the MLP"}}, set()),
    "post_norm": ({"with": {"norm_placement": "post-norm"}, "alone": {"norm_placement": "post-norm"}}, set()),
    "no_layer_norm": ({"with": {"layer_norms_present": "ln1 (before the attention) and ln2"},
                       "alone": {"layer_norms_present": "ln1 (before the attention) and ln2"}}, set()),
    "block_causal_ignored": ({"with": {"causal": "causal argument"}, "alone": {"causal": CAUSAL}}, set()),
    # the student's layer_norm and gelu mistakes: the function probes' with them given, the block's alone
    "layer_norm_eps_outside_sqrt": ({"with": {}, "alone": {"block_layer_norm": "ln1 in transformer_block (eps_outside)"}},
                                    set()),
    "layer_norm_unbiased_variance": ({"with": {}, "alone": {"block_layer_norm": "ln1 in transformer_block (unbiased)"}},
                                     set()),
    "layer_norm_no_affine": ({"with": {}, "alone": {"block_layer_norm": "ln1 in transformer_block (affine)"}}, set()),
    "relu_gelu": ({"with": {}, "alone": {"activation": "MLP activation"}}, set()),
    # mistakes of multi_head_attention: alone, the block's output is (or may be) non-causal, which is true
    "mask_ignored": ({"with": {}, "alone": {"causal": CAUSAL}}, set()),
    "mask_leaks_future": ({"with": {}, "alone": {"causal": CAUSAL}}, set()),
    "mask_blocks_diagonal": ({"with": {}, "alone": {}}, {"causal"}),  # token 0 attends uniformly, also to the future
    "mask_after_softmax": ({"with": {}, "alone": {}}, {"causal"}),  # future scores stay in the denominator
    "softmax_wrong_axis": ({"with": {}, "alone": {}}, {"causal"}),  # normalising over queries mixes in later ones
    "heads_wrong_order": ({"with": {}, "alone": {}}, {"causal"}),  # the reshape mixes tokens with heads
    "heads_wrong_join": ({"with": {}, "alone": {}}, {"causal"}),
    # -- cases of commit 1b355d6, rows written from each case's code and `mistake` before running the probes
    # the block's own layer norms: its layer_norm's default eps is 1e-6 (with it given, the block agrees)
    "block_eps_1e-6": ({"with": {}, "alone": {"block_layer_norm": "ln1 in transformer_block (eps)"}}, set()),
    "block_inline_eps_outside_sqrt": ({"with": {"block_layer_norm": "ln1 in transformer_block (eps_outside)"},
                                       "alone": {"block_layer_norm": "ln1 in transformer_block (eps_outside)"}}, set()),
    "mlp_weights_swapped": ({"with": {"mlp": "fc and proj swapped"}, "alone": {"mlp": "fc and proj swapped"}}, set()),
    # zero sub-layer outputs become ln1.bias and ln2.bias
    "norm_after_sublayer": ({"with": {"residual": "residual sum"}, "alone": {"residual": "residual sum"}}, set()),
    # x = attn(ln1(x)); x = x + x: x itself is added back around neither sub-layer
    "residual_doubled": ({"with": {"residual": "both residual"}, "alone": {"residual": "both residual"}}, set()),
    "residual_from_ln": ({"with": {"residual": "residual stream"}, "alone": {"residual": "residual stream"}}, set()),
    # the missing MLP residual breaks the identity, which the activation probe needs: the ReLU goes unseen here
    "pair_no_mlp_residual_relu": ({"with": {"residual": "around the MLP"}, "alone": {"residual": "around the MLP"}},
                                  set()),
    # the erf GELU is the variants' to name (and passes every gelu property)
    "pair_post_norm_erf_gelu": ({"with": {"norm_placement": "post-norm"}, "alone": {"norm_placement": "post-norm"}},
                                set()),
    # mistakes of multi_head_attention seen through the block alone (with it given, the attention probes report)
    "mask_added": ({"with": {}, "alone": {"causal": CAUSAL}}, set()),
    "mask_inverted": ({"with": {}, "alone": {"causal": CAUSAL}}, set()),
    "batch_mixed": ({"with": {}, "alone": {"batch_independence": "batch independence"}}, set()),
    "pair_batch_mixed_mask_leaks_future": ({"with": {}, "alone": {"causal": CAUSAL,
                                                                   "batch_independence": "batch independence"}},
                                           set()),
    "out_not_transposed": ({"with": {}, "alone": {"attention_sublayer": "attention sub-layer"}}, set()),
    "qkv_not_transposed": ({"with": {}, "alone": {"attention_sublayer": "attention sub-layer"}}, set()),
    "pair_weights_not_transposed": ({"with": {}, "alone": {"attention_sublayer": "attention sub-layer"}}, set()),
    # x + 0 + 0 is x exactly: the 1e-5 offset shows in the residual stream (a finding, never a name)
    "block_off_by_1e-5": ({"with": {"residual": "residual stream"}, "alone": {"residual": "residual stream"}}, set()),
    # -- held-out cases (heldout_*), rows written from each case's code before running the probes
    "heldout_mlp_bias_after_gelu": ({"with": {"mlp": "fc.bias (after the activation)"},
                                     "alone": {"mlp": "fc.bias (after the activation)"}}, set()),
    "heldout_block_ln1_twice": ({"with": {"block_layer_norm": "ln2 in transformer_block (affine)"},
                                 "alone": {"block_layer_norm": "ln2 in transformer_block (affine)"}}, set()),
    "heldout_dropout_left_on": ({"with": {"determinism": "randomness in transformer_block"},
                                 "alone": {"determinism": "randomness in transformer_block"}}, set()),
    # the student's layer_norm mixes batch elements: no layer norm per token, and batch elements that see each
    # other, both true of this block (not its causal mask: token 4 alone moves nothing earlier)
    "heldout_layer_norm_batch_axis": ({"with": {"layer_norms_present": "ln1 (before the attention) and ln2",
                                                "batch_independence": "batch independence"},
                                       "alone": {"layer_norms_present": "ln1 (before the attention) and ln2",
                                                 "batch_independence": "batch independence"}}, set()),
    # mistakes of multi_head_attention, seen through the block alone: a later token moves earlier outputs
    "heldout_mask_scores_zeroed": ({"with": {}, "alone": {"causal": CAUSAL}}, set()),
    "heldout_pair_no_out_bias_mask_leaks_future": ({"with": {}, "alone": {"causal": CAUSAL}}, set()),
    # one normaliser over the whole array: every output depends on every token and batch element (true)
    "heldout_softmax_global_sum": ({"with": {}, "alone": {}}, {"causal", "batch_independence"}),
    # alone, the block's ln1 read through an attention scaling its values by 1/sqrt(8) looks like ln1 with a
    # wrong variance: a known limit of reading ln1 without the student's attention (the grader always gives it)
    "heldout_scale_on_values": ({"with": {}, "alone": {}}, {"block_layer_norm"}),
    "heldout_pair_ln_eps_outside_relu": ({"with": {}, "alone": {
        "block_layer_norm": "ln1 in transformer_block (eps_outside)", "activation": "MLP activation"}}, set()),
    # the MLP reads the block's input: adding a vector through the attention's b_out moves the output by it alone
    "heldout_parallel_block": ({"with": {"mlp_input": "MLP input (x + attention)"},
                                "alone": {"mlp_input": "MLP input (x + attention)"}}, set()),
    # No block finding, decided: gelu right to 2e-8; attention
    # biases and the scale (the block's designs cannot tell them from other weights); heads reversed or not
    # transposed, and a softmax off by 1e-6 (attention probes' findings); heads_no_transpose raises with causal=True.
    **{case: ({"with": {}, "alone": {}}, set()) for case in (
        "gelu_constant_rounded", "no_biases", "no_out_bias", "no_qkv_bias",
        "pair_no_qkv_bias_no_scale", "heads_reverse_order", "heads_no_transpose", "softmax_eps_in_denominator")},
}


def _load(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


S = _load(ROOT / "solutions" / "exercise3" / "attention.py", "probe_block_solution")


def _ln(x, p, name, eps=1e-5):
    return S.layer_norm(x, p[name + ".weight"], p[name + ".bias"], eps=eps)


def _attn(h, p, n_heads, causal, mha=None):
    return (mha or S.multi_head_attention)(h, p["attn.in_proj_weight"], p["attn.in_proj_bias"],
                                           p["attn.out_proj.weight"], p["attn.out_proj.bias"], n_heads, causal=causal)


def _mlp(h, p, act=None):
    return (act or S.gelu)(h @ p["mlp.fc.weight"].T + p["mlp.fc.bias"]) @ p["mlp.proj.weight"].T + p["mlp.proj.bias"]


# ---------------------------------------------------------------------- a second correct implementation

def alt_layer_norm(x, weight, bias, eps=1e-5):
    mu = np.mean(x, axis=-1, keepdims=True)
    sd = np.sqrt(np.mean((x - mu) ** 2, axis=-1, keepdims=True) + eps)
    return weight * ((x - mu) / sd) + bias


def alt_gelu(x):
    return 0.5 * x * (1.0 + np.tanh(0.7978845608028654 * (x + 0.044715 * x * x * x)))


def alt_mha(x, w_qkv, b_qkv, w_out, b_out, n_heads, causal=False):
    B, T, C = x.shape
    hs = C // n_heads
    qkv = np.einsum("btc,oc->bto", x, w_qkv) + b_qkv  # (B, T, 3C)
    heads = []
    for i in range(n_heads):  # one head at a time
        q, k, v = (qkv[..., j * C + i * hs: j * C + (i + 1) * hs] for j in range(3))  # each (B, T, hs)
        s = np.einsum("bqh,bkh->bqk", q, k) / np.sqrt(hs)
        if causal:
            s = np.where(np.tril(np.ones((T, T), dtype=bool)), s, -np.inf)
        w = np.exp(s - s.max(-1, keepdims=True))
        heads.append((w / w.sum(-1, keepdims=True)) @ v)
    return np.concatenate(heads, axis=-1) @ w_out.T + b_out


def alt_block(x, params, n_heads, causal=True):
    p = params
    a = alt_mha(alt_layer_norm(x, p["ln1.weight"], p["ln1.bias"]), p["attn.in_proj_weight"], p["attn.in_proj_bias"],
                p["attn.out_proj.weight"], p["attn.out_proj.bias"], n_heads, causal)
    x = a + x
    h = np.einsum("btc,hc->bth", alt_layer_norm(x, p["ln2.weight"], p["ln2.bias"]), p["mlp.fc.weight"])
    h = alt_gelu(h + p["mlp.fc.bias"])
    return x + (np.einsum("bth,ch->btc", h, p["mlp.proj.weight"]) + p["mlp.proj.bias"])


# --------------------------------------------------------------------------- broken, not in the corpus

def residual_twice(x, p, n_heads, causal=True):
    x = x + (x + _attn(_ln(x, p, "ln1"), p, n_heads, causal))  # x + x + attention
    return x + _mlp(_ln(x, p, "ln2"), p)


def residual_from_ln(x, p, n_heads, causal=True):
    x = _ln(x, p, "ln1")  # the residual stream now carries ln1(x)
    x = x + _attn(x, p, n_heads, causal)
    return x + _mlp(_ln(x, p, "ln2"), p)


def ln_of_sublayer(x, p, n_heads, causal=True):
    x = x + _ln(_attn(x, p, n_heads, causal), p, "ln1")  # x + LN(f(x))
    return x + _ln(_mlp(x, p), p, "ln2")


def eps_1e6(x, p, n_heads, causal=True):
    x = x + _attn(_ln(x, p, "ln1", eps=1e-6), p, n_heads, causal)
    return x + _mlp(_ln(x, p, "ln2", eps=1e-6), p)


def _inline_ln_eps_outside(x, w, b):
    return (x - x.mean(-1, keepdims=True)) / (np.sqrt(x.var(-1, keepdims=True)) + 1e-5) * w + b


def eps_outside_inline(x, p, n_heads, causal=True):
    x = x + _attn(_inline_ln_eps_outside(x, p["ln1.weight"], p["ln1.bias"]), p, n_heads, causal)
    return x + _mlp(_inline_ln_eps_outside(x, p["ln2.weight"], p["ln2.bias"]), p)


def _swapped_mlp(h, p):
    h = S.gelu(h @ p["mlp.proj.weight"] + p["mlp.fc.bias"])  # (B, T, 4C): runs, as proj.weight is (C, 4C)
    return h @ p["mlp.fc.weight"] + p["mlp.proj.bias"]


def mlp_swapped(x, p, n_heads, causal=True):
    x = x + _attn(_ln(x, p, "ln1"), p, n_heads, causal)
    return x + _swapped_mlp(_ln(x, p, "ln2"), p)


def fc_bias_dropped(x, p, n_heads, causal=True):
    x = x + _attn(_ln(x, p, "ln1"), p, n_heads, causal)
    return x + S.gelu(_ln(x, p, "ln2") @ p["mlp.fc.weight"].T) @ p["mlp.proj.weight"].T + p["mlp.proj.bias"]


def proj_bias_dropped(x, p, n_heads, causal=True):
    x = x + _attn(_ln(x, p, "ln1"), p, n_heads, causal)
    return x + S.gelu(_ln(x, p, "ln2") @ p["mlp.fc.weight"].T + p["mlp.fc.bias"]) @ p["mlp.proj.weight"].T


def relu_inline(x, p, n_heads, causal=True):
    x = x + _attn(_ln(x, p, "ln1"), p, n_heads, causal)
    return x + _mlp(_ln(x, p, "ln2"), p, act=lambda u: np.maximum(u, 0.0))


def causal_always_true(x, p, n_heads, causal=True):
    x = x + _attn(_ln(x, p, "ln1"), p, n_heads, True)
    return x + _mlp(_ln(x, p, "ln2"), p)


def _mha_out_proj_untransposed(x, w_qkv, b_qkv, w_out, b_out, n_heads, causal=False):
    return S.multi_head_attention(x, w_qkv, b_qkv, np.eye(len(w_out)), np.zeros(len(w_out)), n_heads,
                                  causal=causal) @ w_out + b_out  # y @ W_O, not y @ W_O.T


def out_proj_untransposed(x, p, n_heads, causal=True):
    x = x + _attn(_ln(x, p, "ln1"), p, n_heads, causal, mha=_mha_out_proj_untransposed)
    return x + _mlp(_ln(x, p, "ln2"), p)


def batch_mixed(x, p, n_heads, causal=True):
    B, T, C = x.shape
    flat = _ln(x, p, "ln1").reshape(1, B * T, C)  # one sequence of B*T tokens: the mask spans the batch
    x = x + _attn(flat, p, n_heads, causal).reshape(B, T, C)
    return x + _mlp(_ln(x, p, "ln2"), p)


def _mha_heads_reversed(x, w_qkv, b_qkv, w_out, b_out, n_heads, causal=False):
    d = x.shape[-1]
    hs = d // n_heads
    joined = S.multi_head_attention(x, w_qkv, b_qkv, np.eye(d), np.zeros(d), n_heads, causal=causal)  # (B, T, d)
    reverse = np.concatenate([np.arange(g * hs, (g + 1) * hs) for g in reversed(range(n_heads))])
    return joined[..., reverse] @ w_out.T + b_out  # head n_heads - 1 first


def heads_reversed(x, p, n_heads, causal=True):
    x = x + _attn(_ln(x, p, "ln1"), p, n_heads, causal, mha=_mha_heads_reversed)
    return x + _mlp(_ln(x, p, "ln2"), p)


def _mha_batch_flattened(x, w_qkv, b_qkv, w_out, b_out, n_heads, causal=False):
    B, T, C = x.shape  # one sequence of B*T tokens: the mask spans the batch
    return S.multi_head_attention(x.reshape(1, B * T, C), w_qkv, b_qkv, w_out, b_out, n_heads,
                                  causal=causal).reshape(B, T, C)


def fc_bias_after_gelu(x, p, n_heads, causal=True):
    x = x + _attn(_ln(x, p, "ln1"), p, n_heads, causal)
    h = S.gelu(_ln(x, p, "ln2") @ p["mlp.fc.weight"].T) + p["mlp.fc.bias"]  # the bias after the activation
    return x + h @ p["mlp.proj.weight"].T + p["mlp.proj.bias"]


def no_activation(x, p, n_heads, causal=True):
    x = x + _attn(_ln(x, p, "ln1"), p, n_heads, causal)
    return x + _mlp(_ln(x, p, "ln2"), p, act=lambda u: u)


def with_dropout(x, p, n_heads, causal=True):
    out = S.transformer_block(x, p, n_heads, causal)
    return out * (np.random.default_rng().random(out.shape) > 0.1) / 0.9


def _ln_over_batch(x, w, b):
    return (x - x.mean(0, keepdims=True)) / np.sqrt(x.var(0, keepdims=True) + 1e-5) * w + b


def ln_over_batch(x, p, n_heads, causal=True):
    x = x + _attn(_ln_over_batch(x, p["ln1.weight"], p["ln1.bias"]), p, n_heads, causal)
    return x + _mlp(_ln_over_batch(x, p["ln2.weight"], p["ln2.bias"]), p)


def parallel(x, p, n_heads, causal=True):  # GPT-J's parallel block: both sub-layers read the block's input
    return x + _attn(_ln(x, p, "ln1"), p, n_heads, causal) + _mlp(_ln(x, p, "ln2"), p)


def off_by_1e5(x, p, n_heads, causal=True):
    return S.transformer_block(x, p, n_heads, causal) + 1e-5


def eps_1e6_and_causal_ignored(x, p, n_heads, causal=True):
    return eps_1e6(x, p, n_heads, causal=False)


def mlp_swapped_and_no_ln1(x, p, n_heads, causal=True):
    x = x + _attn(x, p, n_heads, causal)
    return x + _swapped_mlp(_ln(x, p, "ln2"), p)


#: inline case -> (mode -> {probe: component substring} required); no other finding is allowed.
INLINE: dict[str, tuple[object, dict[str, dict[str, str]]]] = {
    "residual_twice": (residual_twice, {"both": {"residual": "residual stream"}}),
    "residual_from_ln": (residual_from_ln, {"both": {"residual": "residual stream"}}),
    "ln_of_sublayer": (ln_of_sublayer, {"both": {"residual": "residual sum"}}),
    "eps_1e6": (eps_1e6, {"both": {"block_layer_norm": "ln1 in transformer_block (eps)"}}),
    "eps_outside_inline": (eps_outside_inline, {"both": {"block_layer_norm": "(eps_outside)"}}),
    "mlp_swapped": (mlp_swapped, {"both": {"mlp": "fc and proj swapped"}}),
    "fc_bias_dropped": (fc_bias_dropped, {"both": {"mlp": "fc.bias"}}),
    "proj_bias_dropped": (proj_bias_dropped, {"both": {"mlp": "proj.bias"}}),
    "relu_inline": (relu_inline, {"both": {"activation": "MLP activation"}}),
    "causal_always_true": (causal_always_true, {"with": {"causal": "causal argument"}, "alone": {"causal": CAUSAL}}),
    "out_proj_untransposed": (out_proj_untransposed, {"both": {"attention_sublayer": "attention sub-layer"}}),
    "batch_mixed": (batch_mixed, {"both": {"batch_independence": "batch independence"}}),
    # its attention is not the given (correct) one, which is all the block's probes can tell
    "heads_reversed": (heads_reversed, {"with": {"attention_sublayer": "attention sub-layer"}, "alone": {}}),
    "off_by_1e5": (off_by_1e5, {"both": {"residual": "residual stream"}}),
    # bias after the activation: not ln2, not the activation (which is GELU read through fc.weight)
    "fc_bias_after_gelu": (fc_bias_after_gelu, {"both": {"mlp": "fc.bias (after the activation)"}}),
    # no activation at all reads u both ways: the activation's finding, not a misplaced bias
    "no_activation": (no_activation, {"both": {"activation": "MLP activation"}}),
    "with_dropout": (with_dropout, {"both": {"determinism": "randomness in transformer_block"}}),
    "parallel": (parallel, {"both": {"mlp_input": "MLP input (x + attention)"}}),
    # element 1's change reaches element 0 through the batch statistics, not the mask: no causal finding
    "ln_over_batch": (ln_over_batch, {"both": {"layer_norms_present": "ln1 (before the attention) and ln2",
                                               "batch_independence": "batch independence"}}),
    "eps_1e6_and_causal_ignored": (eps_1e6_and_causal_ignored, {
        "with": {"block_layer_norm": "(eps)", "causal": "causal argument"},
        "alone": {"block_layer_norm": "(eps)", "causal": CAUSAL}}),
    "mlp_swapped_and_no_ln1": (mlp_swapped_and_no_ln1, {"both": {"layer_norms_present": "ln1 (before the attention)",
                                                                 "mlp": "fc and proj swapped"}}),
}

MODES = ("with", "alone")


def _run(block, module, mode):
    if mode == "alone":
        return bp.run_block(block)
    return bp.run_block(block, layer_norm=module.layer_norm, gelu=module.gelu, mha=module.multi_head_attention)


def _assert_findings(findings, required, allowed=frozenset()):
    got = {f.probe: f for f in findings}
    assert len(got) == len(findings), "one finding per probe at most"
    shown = [(f.probe, f.component, f.observation) for f in findings]
    assert set(required) <= set(got), shown
    assert set(got) <= set(required) | set(allowed), shown
    for probe, component in required.items():
        assert component in got[probe].component, shown


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("case", sorted(p.parent.name for p in CORPUS.glob("*/attention.py")))
def test_corpus_case_gets_its_finding_and_no_other(case, mode):
    module = _load(CORPUS / case / "attention.py", f"probe_block_{case}")
    required, allowed = CORPUS_EXPECTED.get(case, ({mode: {}}, set()))
    _assert_findings(_run(module.transformer_block, module, mode), required[mode],
                     allowed if mode == "alone" else set())


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("case", sorted(INLINE))
def test_inline_broken_block_gets_its_finding_and_no_other(case, mode):
    block, expected = INLINE[case]
    _assert_findings(_run(block, S, mode), expected.get(mode, expected.get("both")))


@pytest.mark.parametrize("mode", MODES)
def test_correct_blocks_get_no_finding(mode):
    assert _run(S.transformer_block, S, mode) == []
    alt = type("Alt", (), {"layer_norm": staticmethod(alt_layer_norm), "gelu": staticmethod(alt_gelu),
                           "multi_head_attention": staticmethod(alt_mha)})
    assert _run(alt_block, alt, mode) == []


def _mha_values_scaled(x, w_qkv, b_qkv, w_out, b_out, n_heads, causal=False):
    d = x.shape[-1]
    hs = d // n_heads  # att @ (v / sqrt(d_head)) with unscaled scores; with T = 1 only the values' scale shows
    return S.multi_head_attention(x, w_qkv, b_qkv, np.eye(d) / np.sqrt(hs), np.zeros(d), n_heads,
                                  causal=causal) @ w_out.T + b_out


def values_scaled(x, p, n_heads, causal=True):
    x = x + _attn(_ln(x, p, "ln1"), p, n_heads, causal, mha=_mha_values_scaled)
    return x + _mlp(_ln(x, p, "ln2"), p)


@pytest.mark.parametrize("block, mha", [(heads_reversed, _mha_heads_reversed), (batch_mixed, _mha_batch_flattened),
                                        (values_scaled, _mha_values_scaled)],
                         ids=["heads_reversed", "batch_flattened", "values_scaled"])
def test_block_running_the_students_own_broken_attention_gets_no_block_finding(block, mha):
    """A mistake inside the student's multi_head_attention, used faithfully by the block, is the attention
    probes' to report: the block's ln1, read through that attention, must not be blamed for it."""
    assert bp.run_block(block, layer_norm=S.layer_norm, gelu=S.gelu, mha=mha) == []


# -------------------------------------------------------------------------- what the sentences say

def _observation(probe, block, **functions):
    finding = getattr(bp, "probe_" + probe)(block, **functions)
    assert finding is not None
    return finding.observation


def test_residual_findings_quote_what_came_back():
    assert "returned 2·x instead of x" in _observation("residual", residual_twice)
    assert "x + ln1.bias + ln2.bias at every token" in _observation("residual", ln_of_sublayer)
    assert "returned layer-normalised rows (per token mean 0 and variance 1.000 once ln1's" in _observation(
        "residual", residual_from_ln)


def test_block_layer_norm_infers_eps_and_compares_with_the_students_layer_norm():
    # eps 1e-6 in the block while the student's layer_norm (the solution's) uses 1e-5
    text = _observation("block_layer_norm", eps_1e6, layer_norm=S.layer_norm)
    assert "as with eps = 1e-06 inside the square root" in text and "your layer_norm gives up to" in text
    assert "sqrt(var) + 1e-05" in _observation("block_layer_norm", eps_outside_inline)


def test_activation_compares_with_the_students_gelu():
    text = _observation("activation", relu_inline, gelu=S.gelu)
    # ReLU(-0.5) = 0 where tanh-GELU(-0.5) = -0.25 * (1 - tanh(0.79788 * 0.50559)) = -0.154286: the largest
    # gap of the eight points read (-3 gives only 0.0036, 0.5 gives 0.154 below 0.5 but rounds the same)
    assert text.startswith("the MLP's activation at u = -0.5 gives 0, your gelu(-0.5) gives -0.154286")
    assert "exactly ReLU" in text


def test_causal_finding_names_token_and_localises_with_the_students_attention():
    text = _observation("causal", causal_always_true, mha=S.multi_head_attention)
    assert "with causal=False, changing token 4 moved none of your block's outputs at tokens 0..3" in text
    assert "multi_head_attention(..., causal=False) lets them see it" in text


def test_block_that_raises_or_returns_garbage_gets_no_finding():
    def raises(x, p, n_heads, causal=True):
        raise RuntimeError("broken")

    def wrong_shape(x, p, n_heads, causal=True):
        return x[0]

    def nan(x, p, n_heads, causal=True):
        return np.full_like(x, np.nan)

    for block in (raises, wrong_shape, nan):
        assert bp.run_block(block, layer_norm=S.layer_norm, gelu=S.gelu, mha=S.multi_head_attention) == []


def test_designs_survive_a_block_that_writes_into_its_inputs():
    def in_place(x, p, n_heads, causal=True):
        out = S.transformer_block(x, p, n_heads, causal)
        x *= 0.0
        for v in p.values():
            v *= 0.0
        return out

    before = {name: (d.x.copy(), {k: v.copy() for k, v in d.params.items()}) for name, d in bp.DESIGNS.items()}
    assert bp.run_block(in_place) == []
    for name, (x, params) in before.items():
        assert np.array_equal(bp.DESIGNS[name].x, x)
        assert all(np.array_equal(bp.DESIGNS[name].params[k], v) for k, v in params.items())


def test_block_probes_make_few_calls_and_are_fast():
    counts = {"block": 0, "layer_norm": 0, "gelu": 0, "mha": 0}

    def counted(name, function):
        def wrapper(*args, **kwargs):
            counts[name] += 1
            return function(*args, **kwargs)
        return wrapper

    start = time.perf_counter()
    findings = bp.run_block(counted("block", S.transformer_block), layer_norm=counted("layer_norm", S.layer_norm),
                            gelu=counted("gelu", S.gelu), mha=counted("mha", S.multi_head_attention))
    elapsed = time.perf_counter() - start
    assert findings == []
    # 21 designs less the layout one (the attention is checked against mha instead), the one perturbing a single
    # token (needed only when batch elements mix) and the activation read through fc.weight (needed only when the
    # activation read through fc.bias is the identity); on a correct block layer_norm runs once for the attention
    # check, mha once for it and once for the ln1 reader, gelu once for the activation
    assert counts == {"block": 18, "layer_norm": 1, "gelu": 1, "mha": 2}
    assert elapsed < 0.5
    counts["block"] = 0
    assert bp.run_block(counted("block", S.transformer_block)) == []
    assert counts["block"] == 19
