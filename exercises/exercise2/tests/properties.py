"""What a correct count does when one argument changes, checked on the student's own functions.

These probes need no reference and no hidden number, so they run in the student bundle too: each calls
the student's ``block_params`` or ``gpt_params`` on configurations next to the one that failed and compares
the function with itself -- a count that changes with ``d_model`` and not with ``n_heads``;
``layer_norm=True`` adds the two layer norms' 2·d_model each, whatever ``bias`` is; ``bias=True`` adds one
number per output of every linear layer; one more unit of ``mlp_ratio`` adds d_model² to each MLP matrix;
one more token, position or layer adds one embedding row or one block, and there are n_layer blocks; the
final layer norm is 2·d_model; an argument left out counts as its default written out. Each property
follows from the contract in the README (the modules it names: ``nn.MultiheadAttention``, ``nn.Linear``,
``nn.LayerNorm``, ``nn.Embedding``).

A probe returns a :class:`grader.probes.Finding` for a property the function breaks, with the numbers it
measured, and nothing for a property that holds or that it could not measure (a call that failed or did
not return a whole number: the checks report those).
"""
from __future__ import annotations

from typing import Callable, Optional

from grader.probes import Finding

#: ``own(config) -> int | None``: the student's count for a configuration (keyword arguments of the
#: function), None when the call failed or did not return a whole number.
Own = Callable[[dict], Optional[int]]


def other_heads(d_model: int, n_heads: int) -> int:
    """Another valid number of heads for ``d_model``: 1, or d_model when n_heads is 1."""
    return 1 if n_heads != 1 else d_model


def _d_model_and_heads(function: str, own: Own, base: dict, here: int) -> list[Finding]:
    """[the "fixed" finding] when ``function``'s count ``here`` does not change with d_model (then nothing
    else is worth measuring), else [the "heads" finding] when it changes with n_heads, else []."""
    d, h = base["d_model"], base["n_heads"]
    if own(dict(base, d_model=2 * d)) == here:
        return [Finding("fixed", function, f"{function} gives {here:,} for d_model={d} and for d_model={2 * d}: "
                                           "your count does not change with d_model")]
    h2 = other_heads(d, h)
    other = own(dict(base, n_heads=h2))
    if other is not None and other != here:
        return [Finding("heads", "number of heads", (
            f"{function} gives {here:,} with n_heads={h} and {other:,} with n_heads={h2} (d_model={d}): the heads "
            "split d_model into slices, so W_Q, W_K, W_V and W_O are d_model x d_model whatever n_heads is"))]
    return []


def _defaults(function: str, own: Own, config: dict, base: dict, here: int) -> list[Finding]:
    """[the "defaults" finding] when ``function`` called as ``config`` (arguments left to their defaults)
    gives another count than with the contract's defaults ``base`` written out (``here``), else []."""
    left_out = {k: v for k, v in base.items() if k not in config}
    as_called = own(dict(config)) if left_out else None
    if as_called is None or as_called == here:
        return []
    given = ", ".join(f"{k}={v!r}" for k, v in config.items())
    written = ", ".join(f"{k}={v!r}" for k, v in left_out.items())
    return [Finding("defaults", function, (
        f"{function}({given}) gives {as_called:,}, and {here:,} with {written} written out: the defaults must be "
        f"the contract's ({written})"))]


def block_findings(own: Own, config: dict) -> list[Finding]:
    """The properties of a block count that ``block_params`` breaks around ``config``.

    Args:
        own: the student's ``block_params`` (see :data:`Own`).
        config: keyword arguments of ``block_params`` (``mlp_ratio``, ``bias``, ``layer_norm`` optional).
    """
    d, h, r = int(config["d_model"]), int(config["n_heads"]), int(config.get("mlp_ratio", 4))
    base = dict(d_model=d, n_heads=h, mlp_ratio=r, bias=bool(config.get("bias", False)),
                layer_norm=bool(config.get("layer_norm", False)))
    here = own(base)
    if here is None:
        return []
    defaults = _defaults("block_params", own, config, base, here)
    found = _d_model_and_heads("block_params", own, base, here)
    if found and found[0].probe == "fixed":
        return defaults + found
    found = defaults + found
    ln_steps = {}
    for with_bias in (base["bias"], not base["bias"]):
        with_ln, without_ln = (own(dict(base, bias=with_bias, layer_norm=flag)) for flag in (True, False))
        ln_steps[with_bias] = None if with_ln is None or without_ln is None else with_ln - without_ln
    ln_step = ln_steps[base["bias"]]
    if None not in ln_steps.values() and ln_steps[True] != ln_steps[False]:
        found.append(Finding("layer_norm", "biases and layer norms", (
            f"layer_norm=True adds {ln_steps[False]:,} to your count with bias=False and {ln_steps[True]:,} with "
            f"bias=True (d_model={d}); the two layer norms add 4·d_model = {4 * d:,} whatever bias is, and the "
            "biases whatever layer_norm is: add the parts up, none replaces another")))
    elif ln_step is not None and ln_step != 4 * d:
        found.append(Finding("layer_norm", "layer norms", (
            f"layer_norm=True adds {ln_step:,} to your count (d_model={d}); the block's two layer norms have a "
            f"weight and a bias of d_model each: 4·d_model = {4 * d:,}")))
    bare = own(dict(base, bias=False, layer_norm=False))
    with_bias = own(dict(base, bias=True, layer_norm=False))
    bias_step = None if bare is None or with_bias is None else with_bias - bare
    if bias_step is not None and bias_step != (r + 5) * d:
        found.append(Finding("bias", "biases", (
            f"bias=True adds {bias_step:,} to your count (d_model={d}, mlp_ratio={r}); a bias is one number per "
            "output of a linear layer: d_model for each of W_Q, W_K, W_V and W_O, mlp_ratio·d_model and d_model "
            f"for the MLP's two layers, {(r + 5) * d:,} in all")))
    wider_mlp = own(dict(base, bias=False, layer_norm=False, mlp_ratio=r + 1))
    if bare is None or wider_mlp is None:
        return found
    # A bias counted although bias=False adds d to this step: the bias finding says so already.
    if wider_mlp - bare not in (2 * d * d, 2 * d * d + d):
        found.append(Finding("mlp_ratio", "MLP", (
            f"mlp_ratio={r + 1} instead of {r} adds {wider_mlp - bare:,} to your count without biases and norms "
            f"(d_model={d}); each of the MLP's two matrices (d_model x mlp_ratio·d_model) grows by d_model²: "
            f"2·d_model² = {2 * d * d:,}")))
    # What is left for the attention is only its weights when the bare count holds no biases or norms: not
    # so sure when bias=True or layer_norm=True adds nothing (they may be counted always), or heads matter.
    elif (0 not in (bias_step, ln_step) and not [f for f in found if f.probe == "heads"]
          and bare - 2 * r * d * d != 4 * d * d):
        found.append(Finding("attention", "attention projections", (
            f"without biases and norms, your count less the MLP's 2·mlp_ratio·d_model² leaves "
            f"{bare - 2 * r * d * d:,} for the attention (d_model={d}); W_Q, W_K, W_V and W_O are d_model x "
            f"d_model each: 4·d_model² = {4 * d * d:,}")))
    return found


def gpt_findings(own: Own, own_block: Own, config: dict) -> list[Finding]:
    """The properties of a GPT count that ``gpt_params`` breaks around ``config``.

    Args:
        own: the student's ``gpt_params``; ``own_block``: their ``block_params`` (see :data:`Own`).
        config: keyword arguments of ``gpt_params`` (``mlp_ratio`` and ``tied`` optional).
    """
    V, T, d, L, h = (int(config[k]) for k in ("vocab_size", "n_ctx", "d_model", "n_layer", "n_heads"))
    r = int(config.get("mlp_ratio", 4))
    tied = dict(vocab_size=V, n_ctx=T, d_model=d, n_layer=L, n_heads=h, mlp_ratio=r, tied=True)
    here = own(tied)
    if here is None:
        return []
    as_called = dict(tied, tied=bool(config.get("tied", True)))
    defaults = _defaults("gpt_params", own, config, as_called, own(as_called))
    found = _d_model_and_heads("gpt_params", own, tied, here)
    if found and found[0].probe == "fixed":
        return defaults + found
    found = defaults + found
    untied = own(dict(tied, tied=False))
    if untied is not None and untied - here != V * d:
        found.append(Finding("tied", "LM head", (
            f"tied=False adds {untied - here:,} to your count (vocab_size={V}, d_model={d}); an untied LM head is "
            f"its own vocab_size x d_model matrix, {V * d:,}, and a tied one adds nothing")))
    steps = {}
    for key, name, component, what in (
            ("vocab_size", "vocab", "token embedding", "one more token adds one row of the token embedding "
                                                       "(the tied LM head reuses it, with no bias)"),
            ("n_ctx", "n_ctx", "position embedding", "one more position adds one row of the position embedding")):
        more = own(dict(tied, **{key: tied[key] + 1}))
        steps[key] = None if more is None else more - here
        if more is not None and more - here != d:
            found.append(Finding(name, component, (
                f"{key}={tied[key] + 1} instead of {tied[key]} adds {more - here:,} to your count (tied); {what}: "
                f"d_model = {d}")))
    more_layers, block = own(dict(tied, n_layer=L + 1)), own_block(
        dict(d_model=d, n_heads=h, mlp_ratio=r, bias=True, layer_norm=True))
    if more_layers is not None and block is not None and more_layers - here != block:
        found.append(Finding("n_layer", "blocks", (
            f"n_layer={L + 1} instead of {L} adds {more_layers - here:,} to your count; your block_params(d_model={d}, "
            f"n_heads={h}, mlp_ratio={r}, bias=True, layer_norm=True) gives {block:,}: each layer is one block "
            "with biases and both layer norms")))
    elif more_layers is not None and steps["vocab_size"] == steps["n_ctx"] == d:
        step = more_layers - here
        rest = here - L * step - (V + T) * d
        if step > 0 and rest != 2 * d and (rest - 2 * d) % step == 0:
            off = (rest - 2 * d) // step
            found.append(Finding("n_layer", "blocks", (
                f"your count is {abs(off) * step:,} {'less' if off < 0 else 'more'} than the embeddings, {L} of "
                f"your blocks ({step:,} each) and the final layer norm (tied, d_model={d}): {abs(off)} block"
                f"{'s' if abs(off) > 1 else ''} too {'few' if off < 0 else 'many'}; count exactly n_layer blocks")))
        elif rest != 2 * d:
            found.append(Finding("ln_f", "final layer norm", (
                f"besides the embeddings and the {L} blocks your count has {rest:,} (tied, d_model={d}); the final "
                f"layer norm ln_f has a weight and a bias of d_model: 2·d_model = {2 * d:,}")))
    return found


__all__ = ["Own", "other_heads", "block_findings", "gpt_findings"]
