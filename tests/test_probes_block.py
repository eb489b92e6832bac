"""Probes of transformer_block (grader/probes/block.py): which findings each correct and broken block gets.

The tables below were written from each mistake, before running the probes: which probe must find it and
which component its finding names, and which other probes may legitimately speak (a mistake inside
multi_head_attention makes the block's own output non-causal, for example). Every other finding fails the
test: a wrong finding is worse than none. Each block runs twice: with the student's own layer_norm, gelu and
multi_head_attention given (self-consistency; their own mistakes are then left to their own probes) and
alone (the probes then report what the block does).

The broken blocks not in the corpus are in ``broken_blocks.py``; the findings' sentences, run_block on
blocks that raise or write into their inputs, and its call counts are tested in
``test_probes_block_findings.py``.
"""
from __future__ import annotations

import numpy as np
import pytest
from broken_blocks import (
    S, attn, batch_mixed, causal_always_true, eps_1e6, eps_1e6_and_causal_ignored, eps_outside_inline,
    fc_bias_after_gelu, fc_bias_dropped, heads_reversed, ln, ln_of_sublayer, ln_over_batch, load,
    mha_batch_flattened, mha_heads_reversed, mlp, mlp_swapped, mlp_swapped_and_no_ln1, no_activation,
    off_by_1e5, out_proj_untransposed, parallel, proj_bias_dropped, relu_inline, residual_from_ln,
    residual_twice, with_dropout,
)
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
    module = load(CORPUS / case / "attention.py", f"probe_block_{case}")
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
    x = x + attn(ln(x, p, "ln1"), p, n_heads, causal, mha=_mha_values_scaled)
    return x + mlp(ln(x, p, "ln2"), p)


@pytest.mark.parametrize("block, mha", [(heads_reversed, mha_heads_reversed), (batch_mixed, mha_batch_flattened),
                                        (values_scaled, _mha_values_scaled)],
                         ids=["heads_reversed", "batch_flattened", "values_scaled"])
def test_block_running_the_students_own_broken_attention_gets_no_block_finding(block, mha):
    """A mistake inside the student's multi_head_attention, used faithfully by the block, is the attention
    probes' to report: the block's ln1, read through that attention, must not be blamed for it."""
    assert bp.run_block(block, layer_norm=S.layer_norm, gelu=S.gelu, mha=mha) == []
