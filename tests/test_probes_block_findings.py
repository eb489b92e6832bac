"""Block probes (grader/probes/block.py): what their findings say, and how run_block treats a block.

- Sentences: a finding quotes what came back from the broken block (from ``broken_blocks.py``) and, given
  the student's own layer_norm, gelu or multi_head_attention, compares with it.
- run_block: a block that raises or returns garbage gets no finding; one that writes into its inputs leaves
  the designs as they were; a correct block costs a known, small number of calls, in under half a second.

Which finding each corpus and inline block gets is tested in ``test_probes_block.py``.
"""
from __future__ import annotations

import time

import numpy as np
from broken_blocks import (S, causal_always_true, eps_1e6, eps_outside_inline, ln_of_sublayer, relu_inline,
                           residual_from_ln, residual_twice)

from grader.probes import block as bp


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


# ------------------------------------------------------------------------ how run_block runs

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
    assert elapsed < 5  # the counts above are the check; this only catches a run gone quadratic
    counts["block"] = 0
    assert bp.run_block(counted("block", S.transformer_block)) == []
    assert counts["block"] == 19
