"""Probes of the MLP inside ``transformer_block``: its wiring and its activation (exercise 3; issue 10).

The contract's MLP (exercises/exercise3/README.md) is ``gelu(z @ fc.W.T + fc.b) @ proj.W.T + proj.b`` on
``z = layer_norm(x, ln2)``. :func:`probe_mlp` reads it at pre-activations 20..35.5, where GELU, its
approximations and ReLU equal their input, and :func:`probe_activation` reads the activation at
u = -3 .. 3 (designs in :mod:`grader.probes.block_designs`). Both run only when the residual identity
holds; they are part of :data:`grader.probes.block.PROBES` and share a
:class:`~grader.probes.block_designs.BlockRun`'s calls with the other block probes.
"""
from __future__ import annotations

import numpy as np

from . import Finding
from .block_designs import D, DESIGNS, SAME, U_READ, as_run, maxabs, rows_equal, scale
from .functions import activation_kind


def probe_mlp(block, **functions) -> Finding | None:
    """MLP wiring at pre-activations 20..35.5, where GELU, its approximations and ReLU equal their input (2 calls).

    Call 1: fc.weight = 0, fc.bias = u = 20, 20.5, ..., proj.weight P random, proj.bias c: a correct block
    returns x + P @ u + c at every token (all 4·d_model hidden units count). Call 2: fc.weight F random,
    fc.bias u, proj.weight = proj.bias = 0: a correct block returns x. Findings (component): call 2 gives
    x + u @ F and call 1 x + c ("MLP weights (fc and proj swapped)": ``z @ proj.W`` then ``@ fc.W`` is the
    only layout slip whose shapes run); call 1 gives x + P @ u ("MLP proj.bias"); call 1 gives x + c while
    call 2 is right ("MLP fc.bias"); else the largest difference ("MLP"). Needs the residual identity.
    When both pass, :func:`_bias_after_activation` looks where fc.bias enters (1 or 2 more calls).
    """
    run = as_run(block, **functions)
    if not run.identity_holds:
        return None
    lin, swap = run.out("mlp_linear"), run.out("mlp_swap")
    if lin is None or swap is None:
        return None
    p, q, x = DESIGNS["mlp_linear"].params, DESIGNS["mlp_swap"].params, DESIGNS["mlp_linear"].x
    u, P, c = p["mlp.fc.bias"], p["mlp.proj.weight"], p["mlp.proj.bias"]
    got, got_swap = lin - x, swap - x
    tol = 1e-8 * scale(P @ u)

    def near(a, b):
        return maxabs(a - b) <= tol

    swap_ok = maxabs(got_swap) <= tol
    if near(got, P @ u + c) and swap_ok:
        return _bias_after_activation(run)
    lead = "with fc.weight = 0 and fc.bias = 20 .. 35.5 (where every GELU equals its input)"
    if near(got_swap, q["mlp.fc.bias"] @ q["mlp.fc.weight"]) and near(got, c):
        return Finding("mlp", "MLP weights (fc and proj swapped)",
                       "with proj.weight = 0 the MLP still added fc.bias @ fc.weight, and " + lead + " it added "
                       "only proj.bias: fc.weight is used as the output projection and proj.weight as the input one")
    if near(got, P @ u):
        return Finding("mlp", "MLP proj.bias", f"{lead} the MLP added proj.weight @ fc.bias without proj.bias")
    if near(got, c) and swap_ok:
        return Finding("mlp", "MLP fc.bias", f"{lead} the MLP added only proj.bias: fc.bias did not reach the "
                                             "hidden units")
    if not swap_ok:
        return Finding("mlp", "MLP", f"with proj.weight = 0 and proj.bias = 0 the MLP still moved the output by up "
                                     f"to {maxabs(got_swap):.3g}")
    return Finding("mlp", "MLP", f"{lead} the MLP added something other than proj.weight @ fc.bias + proj.bias "
                                 f"(off by up to {maxabs(got - (P @ u + c)):.3g})")


def _bias_after_activation(run) -> Finding | None:
    """fc.bias added after the activation, ``gelu(z @ fc.W.T) + fc.b``: the activation read two ways (2 calls).

    At pre-activations >= 20 (:func:`probe_mlp`'s calls) every activation is the identity, so the bias's
    place does not show there. Read at u = -3 .. 3 instead: through fc.bias (fc.weight = 0: design
    "activation") and through fc.weight (ln2's weight 0 and bias u give u at every token, fc.bias = 0: design
    "activation_by_weight"). A correct block gives act(u) both ways. ``gelu(z @ fc.W.T) + fc.b`` gives
    act(0) + u = u through the bias and act(u) through the weight. So: u exactly through the bias (a block
    with no activation gives u both ways), while through the weight the same value at every token that
    is not u. Finding, component ``"MLP fc.bias (after the activation)"``.
    """
    by_bias = run.out("activation")
    if by_bias is None:
        return None
    g = (by_bias - DESIGNS["activation"].x).reshape(-1, D)
    if maxabs(g - U_READ) > 1e-9 * scale(U_READ):
        return None  # the activation read through fc.bias is not the identity: fc.bias is where it belongs
    by_weight = run.out("activation_by_weight")
    if by_weight is None:
        return None
    w = by_weight - DESIGNS["activation_by_weight"].x
    if not rows_equal(w):
        return None  # ln2 did not give u at every token: the read through fc.weight says nothing
    w = w.reshape(-1, D)[0]
    i = int(np.argmax(np.abs(w - U_READ)))
    if abs(w[i] - U_READ[i]) <= 1e-6:
        return None
    return Finding("mlp", "MLP fc.bias (after the activation)",
                   f"with fc.weight = 0 and fc.bias = u the MLP passed u through unchanged (u = {U_READ[i]:g} gave "
                   f"{g[0, i]:.7g}), while the same u reached through fc.weight came out as {w[i]:.7g}: fc.bias is "
                   "added after the activation; it belongs inside, gelu(z @ fc.weight.T + fc.bias)")


def probe_mlp_input(block, **functions) -> Finding | None:
    """The MLP reads x + attention, not the block's input x (1 call, and the "attn_zero" one it shares).

    With every attention weight 0 and only out_proj.bias = c, the attention adds c at every token; a
    correct block then returns x + c + mlp(ln2(x + c)), so its output minus the all-zero attention's output
    (x + mlp(ln2(x)), MLP random) is c plus a change of the MLP's. A block whose MLP reads the block's
    input (``x + attn(ln1(x)) + mlp(ln2(x))``, a parallel block as in GPT-J) moves by exactly c.
    Component ``"MLP input (x + attention)"``. Needs the residual identity, :func:`probe_mlp` and the
    per-token layer norms (:func:`grader.probes.block.probe_layer_norms_present`) to pass: a layer norm over
    the batch axis removes a shift that is the same at every token, and would read as a parallel block.
    """
    from .block import probe_layer_norms_present  # block imports this module: import at call time

    run = as_run(block, **functions)
    if not run.identity_holds or probe_mlp(run) is not None or probe_layer_norms_present(run) is not None:
        return None
    base, shifted = run.out("attn_zero"), run.out("attn_bias_only")
    if base is None or shifted is None:
        return None
    c = DESIGNS["attn_bias_only"].params["attn.out_proj.bias"]
    if maxabs(shifted - base - c) > 1e-9 * scale(shifted, base):
        return None
    return Finding("mlp_input", "MLP input (x + attention)",
                   "with the attention reduced to its output bias (it adds the same vector at every token) your "
                   "block's output moved by exactly that vector, while a random MLP reading ln2(x + attention) "
                   "would change too: the MLP reads the block's input, not x + attention (x = x + attn(ln1(x)) "
                   "comes first, then x = x + mlp(ln2(x)))")


def probe_activation(block, **functions) -> Finding | None:
    """The MLP's activation read at u = -3 .. 3 (fc.weight = 0, fc.bias = u, proj selects units) (1 call).

    Output minus x is then the activation at u, one value per feature. With the student's gelu given, a
    correct block matches gelu(u) to 1e-6 ("the MLP's activation at u = 1.5 gives 1.3996, your gelu(1.5)
    gives 1.3998"); without it, only an activation that is exactly ReLU or exactly the identity is named
    (which GELU formula is a variant's job). Component ``"MLP activation in transformer_block"``. Needs the
    residual identity and :func:`probe_mlp` to pass.
    """
    run = as_run(block, **functions)
    if not run.identity_holds or probe_mlp(run) is not None:
        return None
    out = run.out("activation")
    if out is None or not rows_equal(out - DESIGNS["activation"].x):
        return None
    g = (out - DESIGNS["activation"].x).reshape(-1, D)[0]
    kind = activation_kind(U_READ, g)
    mine = None if run.gelu is None else run.memo.get("gelu_u", run.gelu, U_READ, shape=U_READ.shape)
    if mine is not None:
        i = int(np.argmax(np.abs(g - mine)))
        if abs(g[i] - mine[i]) <= SAME:
            return None
        what = f", exactly {kind}" if kind else ""
        return Finding("activation", "MLP activation in transformer_block",
                       f"the MLP's activation at u = {U_READ[i]:g} gives {g[i]:.7g}, your gelu({U_READ[i]:g}) "
                       f"gives {mine[i]:.7g} (difference {g[i] - mine[i]:.2g}{what}): the block's activation is "
                       "not your gelu")
    if kind == "ReLU":
        return Finding("activation", "MLP activation in transformer_block",
                       "the MLP's activation is exactly ReLU: 0 at u = -1.5 and 0.5 at u = 0.5; GELU is slightly "
                       "negative for u < 0")
    if kind == "identity":
        return Finding("activation", "MLP activation in transformer_block",
                       "the MLP has no activation: at u = -3 it gives -3")
    return None
