"""Probes of ``transformer_block(x, params, n_heads, causal=True)`` (exercise 3; issue 10).

Each probe calls the student's block on designed weights and inputs and compares it with *itself*, or
with the student's own ``layer_norm``, ``gelu`` and ``multi_head_attention`` when given; it computes
properties only (is the output x, is each row normalised, which tokens moved), never the block's output.
The contract (exercises/exercise3/README.md) is a pre-norm block::

    x = x + multi_head_attention(layer_norm(x, ln1), ..., n_heads, causal)
    x = x + MLP(layer_norm(x, ln2)),   MLP(z) = gelu(z @ fc.W.T + fc.b) @ proj.W.T + proj.b

The designs, and the facts about a correct block they rest on, are in :mod:`grader.probes.block_designs`.
Here: the residual stream and layer norms, causality and batch independence, the attention sub-layer; the
MLP's probes (:func:`probe_mlp`, :func:`probe_activation`) are in :mod:`grader.probes.block_mlp`, and
:data:`PROBES` holds them all.

Mistakes no probe here sees: the GELU formula (tanh vs erf vs sigmoid approximation: a variant's job),
``x @ W`` in the MLP (never runs: fc and proj are not square; only swapping them runs, :func:`probe_mlp`), and any
mistake inside ``multi_head_attention`` itself (grader.probes.mha). Probes that need an intact
residual stream run only when the all-zero block returns x, so one fault is reported once.

Every probe is ``probe_<name>(block, **functions) -> Finding | None``: ``block`` is the student's
``transformer_block`` (or a :class:`~grader.probes.block_designs.BlockRun`, whose calls probes share), and
``functions`` the student's own ``layer_norm``, ``gelu`` and ``mha`` (multi_head_attention), each optional.
"""
from __future__ import annotations

from typing import Callable

import numpy as np

from . import Finding
from .block_designs import (D, DESIGNS, SAME, T, BlockRun, as_run, maxabs, normalised_by, normalised_words,
                            post_norm_label, rows_equal, scale)
from .block_mlp import probe_activation, probe_mlp, probe_mlp_input
from .determinism import probe_block_determinism
from .functions import affine_verdict, layer_norm_verdict


# ------------------------------------------------------------------------------ residual and norms

def probe_residual(block, **functions) -> Finding | None:
    """Residual identity: every weight and bias of both sub-layers set to 0 (1 call, 2 more to localise).

    Each zeroed sub-layer outputs exactly 0, so a pre-norm block returns x exactly. What it returned
    instead names the fault (component in brackets): 0 -- then the attention zeroed alone (MLP random)
    gives the same row at every token when x never passed the attention ("residual connection around the
    attention"), and the MLP zeroed alone (attention random) gives 0 when x + attention never passed the MLP
    ("... around the MLP"), or both; s·x, e.g. 2·x ("residual stream": x added more than once); rows that
    are layer-normalised once ln1's or ln2's weight and bias are taken out, while the random-weight output
    is not ("residual stream": it carries the normalised x); x + ln1.bias, x + ln2.bias or both (a zero
    sub-layer output that went through a layer norm); anything else that is not x (e.g. a block off by a
    constant 1e-5, or x rounded to float32): "residual stream", with the largest deviation. A post-norm block
    is :func:`probe_norm_placement`'s.
    """
    run = as_run(block, **functions)
    z = run.out("zero")
    x, p = DESIGNS["zero"].x, DESIGNS["zero"].params
    if z is None or run.identity_holds:
        return None
    lead = "with every weight and bias of both sub-layers set to 0 your block returned"
    tol = 1e-9 * scale(x)
    if maxabs(z) <= tol:
        a, m = run.out("attn_zero"), run.out("mlp_zero")
        if a is None or m is None:
            return None
        attn_lost, mlp_lost = rows_equal(a), maxabs(m) <= tol
        said = f"{lead} 0 instead of x"
        if attn_lost and mlp_lost:
            return Finding("residual", "both residual connections",
                           f"{said}; with only the attention zeroed every token's output is the same row, and with "
                           "only the MLP zeroed the output is still 0: x is added back around neither sub-layer")
        if attn_lost:
            return Finding("residual", "residual connection around the attention",
                           f"{said}, and with only the attention zeroed every token's output is the same row (the "
                           "MLP's input no longer depends on x): x is not added back around the attention")
        if mlp_lost:
            return Finding("residual", "residual connection around the MLP",
                           f"{said}, and with only the MLP zeroed it is still 0 although the attention is active: "
                           "x + attention is not added back around the MLP")
        return Finding("residual", "residual stream", f"{said}: x does not reach the output")
    s = float(np.vdot(z, x) / np.vdot(x, x))
    if maxabs(z - s * x) <= tol and abs(s - 1.0) > 1e-6:
        return Finding("residual", "residual stream", f"{lead} {s:.3g}·x instead of x: x reaches the output "
                                                      f"{s:.3g} times over")
    label = normalised_by(z, p)
    if label is not None and post_norm_label(run) is None:
        return Finding("residual", "residual stream",
                       f"{lead} layer-normalised rows ({normalised_words(z, p, label)}) instead of x, while with "
                       "random weights its output is not normalised: the residual stream carries the normalised "
                       "x, not x itself")
    delta = (z - x).reshape(-1, D)
    if rows_equal(delta):
        for name, bias in (("ln1.bias", p["ln1.bias"]), ("ln2.bias", p["ln2.bias"]),
                           ("ln1.bias + ln2.bias", p["ln1.bias"] + p["ln2.bias"])):
            if maxabs(delta[0] - bias) <= tol:
                return Finding("residual", "residual sum",
                               f"{lead} x + {name} at every token instead of x: a sub-layer's zero output went "
                               "through a layer norm (which turns 0 into its bias) before being added to x")
    off = maxabs(z - x)
    if off > tol and post_norm_label(run) is None:
        return Finding("residual", "residual stream",
                       f"{lead} x off by up to {off:.2g} instead of x exactly (each zeroed sub-layer outputs exactly 0, "
                       "so a pre-norm block returns x + 0 + 0): something besides the two sub-layers changes the "
                       "residual stream")
    return None


def probe_norm_placement(block, **functions) -> Finding | None:
    """Pre-norm vs post-norm: the all-zero call and the random-weight one (2 calls, shared).

    A pre-norm block returns x from the all-zero call and an output with no reason to be normalised from
    random weights. A post-norm block (``x = ln(x + sublayer(x))``) returns layer-normalised rows from both
    (mean 0 and variance ~1 per token once that layer norm's weight and bias are taken out). Finding,
    component ``"layer norm placement (post-norm)"``, with the observed variance.
    """
    run = as_run(block, **functions)
    label = post_norm_label(run)
    if label is None:
        return None
    words = normalised_words(run.out("full"), DESIGNS["full"].params, label)
    return Finding("norm_placement", "layer norm placement (post-norm)",
                   "with both sub-layers zeroed your block returned layer-normalised rows instead of x, and with "
                   f"random weights too every output row is normalised ({words}): the layer norm comes after the "
                   "residual sum (post-norm), not before each sub-layer (pre-norm)")


def probe_layer_norms_present(block, **functions) -> Finding | None:
    """Layer norms present: each token scaled by 2..10 and shifted, one sub-layer zeroed at a time (4 calls).

    A layer norm over the features undoes a per-token scale and shift (up to eps: ~1e-6 here), so in a
    correct block each sub-layer's contribution (output minus input, the other sub-layer zeroed) is the
    same for x and for the rescaled x. Finding when it changes by more than 5 % of its size: component
    ``"ln1 (before the attention)"``, ``"ln2 (before the MLP)"`` or both, with the change observed. Runs
    only when the residual identity holds.
    """
    run = as_run(block, **functions)
    if not run.identity_holds:
        return None
    changed = []
    for label, sub, name in (("ln1 (before the attention)", "attention", "mlp_zero"),
                             ("ln2 (before the MLP)", "MLP", "attn_zero")):
        base, scaled = run.out(name), run.out(name + "_scaled")
        if base is None or scaled is None:
            continue
        branch = base - DESIGNS[name].x
        change = maxabs((scaled - DESIGNS[name + "_scaled"].x) - branch)
        if maxabs(branch) > 1e-6 and change > 0.05 * maxabs(branch):
            changed.append((label, sub, change, maxabs(branch)))
    if not changed:
        return None
    parts = " and ".join(f"the {sub}'s contribution (the other sub-layer zeroed) by up to {c:.3g} (its size: {s:.3g})"
                         for _, sub, c, s in changed)
    who = "neither sub-layer sees" if len(changed) == 2 else f"the {changed[0][1]} does not see"
    return Finding("layer_norms_present", " and ".join(c[0] for c in changed),
                   "scaling each token by 2 to 10 and shifting it (which a layer norm over the features undoes) "
                   f"changed {parts}: {who} a per-token layer-normalised input")


def probe_block_layer_norm(block, **functions) -> Finding | None:
    """The block's own ln1 and ln2, read on T = 1 rows of variance 4 .. 1e-8 (4 calls, 2 of layer_norm).

    With T = 1, Q = K = 0 and V = W_O = I the attention returns ln1(x), so (output - x) is the block's ln1
    (weight 1, bias 0, then a given weight and bias); an MLP at pre-activations >= 17 reads ln2 the same
    way. Judged by :func:`grader.probes.functions.layer_norm_verdict` (mean 0, biased variance
    var / (var + 1e-5): shows eps 1e-6, eps outside the square root, unbiased variance) and
    :func:`~grader.probes.functions.affine_verdict`. When the student's layer_norm is given and returns
    the same on these rows, nothing is reported here (the layer_norm probes report it). Component
    ``"ln1 in transformer_block (eps)"`` etc.; runs only when the residual identity holds and the layer
    norms are present; ln1 only when the block keeps batch elements apart (the rows read are batch
    elements: seen by :func:`_batch_mixed`, whoever is at fault) and, with the student's
    multi_head_attention given, when it returns its input on the reader's weights (1 call: an attention that
    scales its values by 1/sqrt(d_head) would read as a wrong variance); ln2 only when :func:`probe_mlp` passes.
    """
    run = as_run(block, **functions)
    if not run.identity_holds or probe_layer_norms_present(run) is not None:
        return None
    for label in ("ln1", "ln2"):
        if probe_mlp(run) if label == "ln2" else _batch_mixed(run) or not run.attention_reads:
            continue  # the read of ln2 needs the MLP's wiring, that of ln1 an attention returning its input
        rows = DESIGNS[label + "_read"].x
        plain, scaled = run.out(label + "_read"), run.out(label + "_read_affine")
        if plain is None:
            continue
        n = plain - rows
        verdict = layer_norm_verdict(rows[:, 0], n[:, 0])
        affine = DESIGNS[label + "_read_affine"].params
        w, b = affine[label + ".weight"], affine[label + ".bias"]
        if verdict is None and scaled is not None:
            verdict = affine_verdict(n, scaled - rows, w, b, subject=f"the block's {label} with a weight and bias",
                                     rtol=SAME)
        if verdict is None:
            continue
        mine = None if run.layer_norm is None else run.memo.get(
            ("ln", verdict.kind == "affine"), run.layer_norm, rows, w if verdict.kind == "affine" else np.ones(D),
            b if verdict.kind == "affine" else np.zeros(D), shape=rows.shape)
        theirs = (scaled if verdict.kind == "affine" else plain) - rows
        if mine is not None and maxabs(mine - theirs) <= SAME * scale(mine):
            continue
        also = "" if mine is None else f" (your layer_norm gives up to {maxabs(mine - theirs):.3g} different here)"
        return Finding("block_layer_norm", f"{label} in transformer_block ({verdict.kind})",
                       f"the block's {label}, read on single-token rows: {verdict.text}{also}")
    return None


# ------------------------------------------------------------------------------- causality, batches

def _moved(run: BlockRun, name: str) -> np.ndarray | None:
    """(B, T): how far each token's output moved when design ``name``'s input was perturbed."""
    a, b = run.out(name), run.out(name + "_perturbed")
    return None if a is None or b is None else np.abs(b - a).max(-1)


def _moved_by_last_token(run: BlockRun) -> np.ndarray | None:
    """(B, T): how far each token's output moved (causal=True) when only element 0's last token changed."""
    a, b = run.out("full"), run.out("full_last_perturbed")
    return None if a is None or b is None else np.abs(b - a).max(-1)


def _attention_moved(run: BlockRun, causal: bool) -> np.ndarray | None:
    if run.mha is None:
        return None
    a = run.attention("full", DESIGNS["full"].x, causal)
    b = run.attention("full", DESIGNS["full_perturbed"].x, causal)
    return None if a is None or b is None else np.abs(b - a).max(-1)


_TOL = 1e-9 * scale(DESIGNS["full"].x)  # an output "moved": above round-off of the designs' inputs


def _batch_mixed(run: BlockRun) -> tuple[bool, np.ndarray] | None:
    """(causal, moved) of the first causal mode in which batch element 2's output moved, else None."""
    for name, causal in (("full", True), ("full_noncausal", False)):
        moved = _moved(run, name)
        if moved is not None and moved[2].max() > _TOL:
            return causal, moved
    return None


def probe_causal(block, **functions) -> Finding | None:
    """Causality: the last token of batch element 0 and the first of element 1 perturbed (4 calls, 4 of mha).

    With random weights and causal=True, a correct block's outputs at tokens 0..3 of element 0 do not move
    (the mask hides token 4), while element 1's later tokens do (they see token 0); with causal=False
    element 0's earlier tokens move too. Findings: earlier tokens moved with causal=True, or none moved with
    causal=False although attention does mix tokens. With the student's multi_head_attention given, it is
    run on the same input and weights: if it behaves the same, nothing is reported here (the attention
    probes report the mask); if it does not, component ``"causal argument of transformer_block"`` (the
    block does not run its attention with the causal it was given); without it, component
    ``"causal masking in transformer_block"``. When the block also mixes batch elements (element 2 moved),
    element 1's change may be what moved element 0: then element 0's last token is perturbed alone (1 more
    call) and only what that moves counts.
    """
    run = as_run(block, **functions)
    moved, moved_open = _moved(run, "full"), _moved(run, "full_noncausal")
    if moved is None:
        return None
    if moved[0, :-1].max() > _TOL and _batch_mixed(run) is not None:
        moved = _moved_by_last_token(run)  # element 1's change may have moved element 0: perturb token 4 alone
        if moved is None or moved[0, :-1].max() <= _TOL:
            return None  # batch mixing, not the mask: probe_batch_independence's finding
    if moved[0, :-1].max() > _TOL:
        t = int(np.argmax(moved[0, :-1]))
        seen = f"with causal=True, changing token {T - 1} moved your block's output at token {t} by {moved[0, t]:.3g}"
        mine = _attention_moved(run, True)
        if mine is None and run.mha is None:
            return Finding("causal", "causal masking in transformer_block",
                           f"{seen}: a token's output depends on a later token")
        if mine is None or mine[0, :-1].max() > _TOL:
            return None
        return Finding("causal", "causal argument of transformer_block",
                       f"{seen}, while your multi_head_attention(..., causal=True) keeps it unchanged: the block "
                       "does not run its attention with causal=True")
    if moved_open is None or moved[1, 1:].min() <= _TOL or moved_open[0, :-1].max() > _TOL:
        return None
    seen = (f"with causal=False, changing token {T - 1} moved none of your block's outputs at tokens 0..{T - 2} "
            "(changing token 0 does move the later ones)")
    mine = _attention_moved(run, False)
    if mine is None and run.mha is None:
        return Finding("causal", "causal masking in transformer_block", f"{seen}: the block stays causal when "
                                                                          "causal=False")
    if mine is None or mine[0, :-1].max() <= _TOL:
        return None
    return Finding("causal", "causal argument of transformer_block",
                   f"{seen}, while your multi_head_attention(..., causal=False) lets them see it: the block does "
                   "not run its attention with causal=False")


def probe_batch_independence(block, **functions) -> Finding | None:
    """Batch independence: batch elements 0 and 1 perturbed, element 2 not (calls shared with probe_causal).

    A correct block treats batch elements separately, so element 2's output does not move, in either causal
    mode (a mask or attention built over B·T tokens mixes them). Component ``"batch independence of
    transformer_block"``, with the token that moved most; nothing when the student's multi_head_attention,
    given, mixes them too (the attention probes report that).
    """
    run = as_run(block, **functions)
    mixed = _batch_mixed(run)
    if mixed is None:
        return None
    causal, moved = mixed
    mine = _attention_moved(run, causal)
    if run.mha is not None and (mine is None or mine[2].max() > _TOL):
        return None
    t = int(np.argmax(moved[2]))
    return Finding("batch_independence", "batch independence of transformer_block",
                   f"with causal={causal}, changing batch elements 0 and 1 moved your block's output for batch "
                   f"element 2 (token {t}) by {moved[2, t]:.3g}: batch elements must not affect each other")



# ------------------------------------------------------------------------------------------ attention

def probe_attention_sublayer(block, **functions) -> Finding | None:
    """The attention sub-layer as the block runs it (1 block call, plus 2 of layer_norm and mha, or 1 more call).

    With the student's layer_norm and multi_head_attention both given: with the MLP zeroed, a correct block
    returns exactly x + multi_head_attention(layer_norm(x, ln1), ..., causal=True) (to 1e-6), a
    self-consistency check only. Otherwise, with T = 1, Q = K = 0, random non-symmetric V weights W_V and
    W_O: output minus x must be ln1(x) @ W_V.T @ W_O.T (ln1(x) read as in :func:`probe_block_layer_norm`);
    which of ``@ W`` / ``@ W.T`` it follows names the layout slip (also tried when the first check fails).
    Component ``"attention sub-layer of transformer_block"``. Runs only when the residual, norm, causal
    and batch probes found nothing.
    """
    run = as_run(block, **functions)
    upstream = (probe_layer_norms_present, probe_block_layer_norm, probe_causal, probe_batch_independence)
    if not run.identity_holds or any(probe(run) is not None for probe in upstream):
        return None
    if run.layer_norm is None or run.mha is None:
        return _attention_layout(run)
    d = DESIGNS["mlp_zero"]
    out = run.out("mlp_zero")
    h = run.memo.get("ln1(x)", run.layer_norm, d.x, d.params["ln1.weight"], d.params["ln1.bias"], shape=d.x.shape)
    a = None if h is None else run.attention("mlp_zero", h, True)
    if out is None or a is None:
        return None
    err = (out - d.x) - a
    if maxabs(err) <= SAME * scale(a, d.x):
        return None
    b, t, _ = np.unravel_index(np.argmax(np.abs(err)), err.shape)
    return _attention_layout(run) or Finding(
        "attention_sublayer", "attention sub-layer of transformer_block",
        f"with the MLP zeroed your block's output minus x differs from your multi_head_attention(layer_norm(x, "
        f"ln1), ..., causal=True) by up to {maxabs(err):.3g} (batch {b}, token {t}): the block's attention is not "
        "your multi_head_attention with the block's weights")


def _attention_layout(run: BlockRun) -> Finding | None:
    """Which of ``@ W`` / ``@ W.T`` the block applies to V and W_O (T = 1, Q = K = 0; 2 block calls, 1 of mha)."""
    read, out = run.out("ln1_read"), run.out("attn_layout")
    d = DESIGNS["attn_layout"]
    if read is None or out is None:
        return None
    n, got = read - d.x, out - d.x
    wv, wo = d.params["attn.in_proj_weight"][2 * D:], d.params["attn.out_proj.weight"]
    tol = SAME * scale(got)
    layouts = {(True, True): n @ wv.T @ wo.T, (False, True): n @ wv @ wo.T, (True, False): n @ wv.T @ wo,
               (False, False): n @ wv @ wo}
    match = [k for k, v in layouts.items() if maxabs(got - v) <= tol]
    if len(match) != 1 or match[0] == (True, True):
        return None
    if run.mha is not None:
        mine = run.attention("attn_layout", n, True)
        if mine is None or maxabs(mine - got) <= tol:
            return None
    wrong = [name for name, ok in zip(("the V part of in_proj_weight", "out_proj.weight"), match[0]) if not ok]
    return Finding("attention_sublayer", "attention sub-layer of transformer_block",
                   "with one token, Q = K = 0 and non-symmetric weights, the block's attention output follows "
                   f"x @ W instead of x @ W.T for {' and '.join(wrong)}")


PROBES = (probe_block_determinism, probe_residual, probe_norm_placement, probe_layer_norms_present,
          probe_block_layer_norm, probe_mlp, probe_mlp_input, probe_activation, probe_causal,
          probe_batch_independence, probe_attention_sublayer)


def run_block(block: Callable, *, layer_norm: Callable | None = None, gelu: Callable | None = None,
              mha: Callable | None = None) -> list[Finding]:
    """Every block probe, sharing calls: at most 21 block calls and 11 of the optional functions.

    ``layer_norm``, ``gelu`` and ``mha`` are the student's own functions (multi_head_attention's
    signature), used only for self-consistency: with them a block that uses them faithfully gets no
    finding for their mistakes (their own probes report those). Findings in :data:`PROBES` order; a block
    that is random (:func:`~grader.probes.determinism.probe_block_determinism`) gets that finding alone.
    """
    run = BlockRun(block, layer_norm=layer_norm, gelu=gelu, mha=mha)
    random = probe_block_determinism(run)
    if random is not None:
        return [random]
    return [f for f in (probe(run) for probe in PROBES[1:]) if f is not None]


__all__ = ["BlockRun", "DESIGNS", "PROBES", "run_block", *(p.__name__ for p in PROBES)]
