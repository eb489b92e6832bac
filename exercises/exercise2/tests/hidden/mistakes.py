"""Known wrong parameter counts for exercise 2, as formulas of the configuration (judge side, trusted).

This file lives in ``tests/hidden`` because every formula here, right or wrong, gives the answer away:
students do not get it, so their public checks name no mistake; the graded run does.

Each ``*_MISTAKES`` dict maps a mistake key to the one sentence the student sees: what went wrong, in the
lesson's words, and the fix. A count's formula takes ``mistake``: ``None`` (the correct count), one key,
or a tuple of keys from different groups (:data:`BLOCK_GROUPS`, :data:`GPT_GROUPS`): two mistakes made
together, each changing its own part of the count. Which mistakes and pairs are named, and on which
configurations, is ``naming.py``'s business.

``mistake=None`` gives the correct count; the grader's own tests check it against the torch reference
modules (``reference.py``) on many configurations -- the judge never uses it as the truth.
A block (d = d_model, h = n_heads, r = mlp_ratio) has attention 4·d² (W_Q, W_K, W_V, W_O) plus 4·d biases,
an MLP 2·r·d² (d -> r·d -> d) plus r·d + d biases, and two layer norms of 2·d each.
Sources: the lesson; Radford et al. 2019 (GPT-2); PyTorch docs (``nn.MultiheadAttention``: in_proj_weight
(3d, d), in_proj_bias (3d,), out_proj (d, d) with bias (d,)).
"""
from __future__ import annotations

_MLP_ONE_WAY = (
    "the MLP was counted one way only (r·d² instead of 2·r·d²): it has two matrices, d -> r·d and r·d -> d, "
    "each with r·d² weights"
)

BLOCK_MISTAKES: dict[str, str] = {
    "no_out_proj": (
        "the output projection W_O was left out (attention 3·d² instead of 4·d²): attention has four d x d "
        "matrices, W_Q, W_K, W_V and W_O"
    ),
    "per_head_full_size": (
        "each head was given its own d x d matrices (h·4·d² instead of 4·d²): the heads split d_model into "
        "slices, so the number of heads does not change the count"
    ),
    "attention_one_head": (
        "the projections were sized for one head (d x d/h each, 4·d²/h in total): together the heads' slices "
        "fill d x d matrices, so attention has 4·d², whatever the number of heads"
    ),
    "mlp_up_only": _MLP_ONE_WAY,
    "mlp_down_only": _MLP_ONE_WAY,
    "mlp_ratio_ignored": (
        "mlp_ratio was ignored and 4 used instead (the MLP counted as 8·d²): the hidden layer has "
        "mlp_ratio·d units, so the MLP has 2·mlp_ratio·d² weights"
    ),
    "mlp_ratio_squared": (
        "the MLP ratio was squared (r²·d² instead of 2·r·d²): the MLP is two matrices, d x r·d and r·d x d"
    ),
    "biases_included": (
        "biases were counted although bias=False: count them only when bias is True"
    ),
    "biases_missing": (
        "bias=True was ignored: add the biases, 3·d + d in attention (Q, K, V and W_O) and r·d + d in the MLP"
    ),
    "attention_biases_missing": (
        "the attention's biases were left out: with bias=True, Q, K, V and W_O each have a bias of d, "
        "4·d in total (nn.MultiheadAttention keeps them in in_proj_bias and out_proj.bias)"
    ),
    "qkv_biases_missing": (
        "the Q, K and V biases were left out (only W_O's bias counted): with bias=True the fused in_proj "
        "has a bias of 3·d (in_proj_bias) besides out_proj.bias"
    ),
    "norms_included": (
        "layer norms were counted although layer_norm=False: count them only when layer_norm is True"
    ),
    "norms_missing": (
        "layer_norm=True was ignored: add the two layer norms, each with a weight and a bias of d (4·d in total)"
    ),
    "layer_norm_half": (
        "the layer norms were counted as 2·d instead of 4·d: there are two of them per block, and each has a "
        "weight (gamma) and a bias (beta) of d"
    ),
}

#: Block mistakes that change the same part of the count: two of one group are never combined.
BLOCK_GROUPS: dict[str, tuple[str, ...]] = {
    "attention": ("no_out_proj", "per_head_full_size", "attention_one_head"),
    "mlp": ("mlp_up_only", "mlp_down_only", "mlp_ratio_ignored", "mlp_ratio_squared"),
    "bias": ("biases_included", "biases_missing", "attention_biases_missing", "qkv_biases_missing"),
    "norm": ("norms_included", "norms_missing", "layer_norm_half"),
}

GPT_MISTAKES: dict[str, str] = {
    "lm_head_counted_when_tied": (
        "the LM head was counted although the embeddings are tied (tied=True): a tied LM head reuses the "
        "token embedding matrix, so vocab_size·d is counted once, not twice"
    ),
    "lm_head_missing_when_untied": (
        "the LM head was left out although it is not tied (tied=False): an untied LM head is its own "
        "vocab_size x d matrix, so add vocab_size·d"
    ),
    "lm_head_bias": (
        "the LM head was given a bias (vocab_size more): GPT-2's LM head has no bias"
    ),
    "no_position_embedding": (
        "the position embedding was forgotten: add n_ctx·d for the learned positions (wpe)"
    ),
    "no_embeddings": (
        "the token and position embeddings were left out (vocab_size·d + n_ctx·d): they are parameters of "
        "the model too, wte and wpe"
    ),
    "blocks_only": (
        "only the blocks were counted (n_layer blocks): add the token and position embeddings, the final "
        "layer norm and, when not tied, the LM head"
    ),
    "no_final_layer_norm": (
        "the final layer norm was forgotten: GPT-2 has one more layer norm (ln_f, 2·d) after the last block"
    ),
    "blocks_without_bias_ln": (
        "the blocks were counted without biases and layer norms: GPT-2's blocks have both "
        "(block_params(..., bias=True, layer_norm=True))"
    ),
}
#: ``gpt_variant(..., mistake="block.KEY")``: every block counted with the block mistake KEY.
GPT_BLOCK_PREFIX = "block."
#: GPT mistakes that change the same part of the count. ``blocks_only`` leaves out everything but the
#: blocks, so it combines with no other GPT mistake (only with block mistakes); ``blocks_without_bias_ln``
#: combines with no block mistake about biases or norms (it already leaves them all out).
GPT_GROUPS: dict[str, tuple[str, ...]] = {
    "lm_head_tie": ("lm_head_counted_when_tied", "lm_head_missing_when_untied"),
    "lm_head_bias": ("lm_head_bias",),
    "embeddings": ("no_position_embedding", "no_embeddings"),
    "final_norm": ("no_final_layer_norm",),
    "blocks_only": ("blocks_only",),
    "blocks_bias_ln": ("blocks_without_bias_ln",),
}
#: Block mistakes a GPT's blocks cannot show: they always have biases and layer norms.
HIDDEN_IN_GPT = ("biases_included", "norms_included")

SHARE_MISTAKES: dict[str, str] = {
    "attention_share": (
        "this is the attention's share (1/3); MLP_SHARE is the MLP's share: MLP / (attention + MLP)"
    ),
    "mlp_over_attention": (
        "this is MLP / attention (8·d² / 4·d² = 2); the share is MLP / whole block = 8·d² / 12·d²"
    ),
    "mlp_one_way": (
        "this share uses an MLP counted one way only (4·d² / 8·d² = 1/2): the MLP has two matrices, 8·d²"
    ),
    "with_bias_and_ln": (
        "this is the share in the block with biases and layer norms; MLP_SHARE is for the bare block "
        "(no biases, no layer norm), where it is exactly 8·d² / 12·d²"
    ),
    "percent": (
        "the share was given in percent; give it as a fraction between 0 and 1"
    ),
    "rounded": (
        "the share was rounded; write it exactly, as a fraction such as 8 / 12, or compute it from your counts"
    ),
}


def _keys(mistake: str | tuple[str, ...] | None, known, what: str) -> frozenset[str]:
    """``mistake`` as a set of keys; ``ValueError`` naming the known keys for an unknown one."""
    keys = () if mistake is None else (mistake,) if isinstance(mistake, str) else tuple(mistake)
    for key in keys:
        if key not in known:
            raise ValueError(f"unknown {what} mistake {key!r}; known: {', '.join(sorted(known))}")
    return frozenset(keys)


def block_variant(d_model: int, n_heads: int, mlp_ratio: int = 4, bias: bool = False, layer_norm: bool = False,
                  mistake: str | tuple[str, ...] | None = None) -> int:
    """The count of one block with ``mistake``: None (correct), a key of ``BLOCK_MISTAKES`` or a tuple of them.

    Raises: ValueError for an unknown key.
    """
    keys = _keys(mistake, BLOCK_MISTAKES, "block")
    d, h, r = int(d_model), int(n_heads), int(mlp_ratio)
    bias = True if "biases_included" in keys else False if "biases_missing" in keys else bool(bias)
    layer_norm = True if "norms_included" in keys else False if "norms_missing" in keys else bool(layer_norm)
    if "mlp_ratio_ignored" in keys:
        r = 4
    # Attention: the projections Q, K, V (and O), each a weight and a bias.
    weight, bias_size = d * d, d
    if "per_head_full_size" in keys:
        weight, bias_size = h * d * d, h * d
    elif "attention_one_head" in keys:
        weight, bias_size = d * (d // h), d // h
    projections = 3 if "no_out_proj" in keys else 4
    attn_w, attn_b = projections * weight, projections * bias_size
    if "attention_biases_missing" in keys:
        attn_b = 0
    elif "qkv_biases_missing" in keys:
        attn_b -= 3 * bias_size
    # MLP: fc (r·d, d) with bias r·d, proj (d, r·d) with bias d.
    mlp_w, mlp_b = 2 * r * d * d, r * d + d
    if "mlp_up_only" in keys:
        mlp_w, mlp_b = r * d * d, r * d
    elif "mlp_down_only" in keys:
        mlp_w, mlp_b = r * d * d, d
    elif "mlp_ratio_squared" in keys:
        mlp_w = r * r * d * d
    norms = 2 * d if "layer_norm_half" in keys else 2 * 2 * d  # ln1, ln2: weight and bias each
    return attn_w + mlp_w + (attn_b + mlp_b if bias else 0) + (norms if layer_norm else 0)


def gpt_mistake_keys() -> list[str]:
    """Every single key ``gpt_variant`` accepts: ``GPT_MISTAKES`` and ``block.KEY`` for each block mistake
    a GPT's blocks can show (not :data:`HIDDEN_IN_GPT`)."""
    return list(GPT_MISTAKES) + [GPT_BLOCK_PREFIX + key for key in BLOCK_MISTAKES if key not in HIDDEN_IN_GPT]


def gpt_message(key: str) -> str:
    """The sentence for a ``gpt_variant`` key (a block mistake is said to be in every block)."""
    if key.startswith(GPT_BLOCK_PREFIX):
        return "in every block: " + BLOCK_MISTAKES[key[len(GPT_BLOCK_PREFIX):]]
    return GPT_MISTAKES[key]


def gpt_variant(vocab_size: int, n_ctx: int, d_model: int, n_layer: int, n_heads: int, mlp_ratio: int = 4,
                tied: bool = True, mistake: str | tuple[str, ...] | None = None) -> int:
    """The count of a GPT-2 style model with ``mistake``: None (correct), a key of :func:`gpt_mistake_keys`
    or a tuple of them.

    Correct: token embedding V·d + position embedding n_ctx·d + n_layer blocks (biases, two layer norms)
    + final layer norm 2·d + LM head (0 when tied, V·d when not; never a bias).
    Raises: ValueError for an unknown key.
    """
    keys = _keys(mistake, set(gpt_mistake_keys()) | {GPT_BLOCK_PREFIX + k for k in HIDDEN_IN_GPT}, "GPT")
    V, T, d, L = int(vocab_size), int(n_ctx), int(d_model), int(n_layer)
    block_keys = tuple(k[len(GPT_BLOCK_PREFIX):] for k in keys if k.startswith(GPT_BLOCK_PREFIX))
    with_bias_ln = "blocks_without_bias_ln" not in keys
    blocks = L * block_variant(d, n_heads, mlp_ratio, bias=with_bias_ln, layer_norm=with_bias_ln,
                               mistake=block_keys)
    if "blocks_only" in keys:
        return blocks
    if keys & {"lm_head_counted_when_tied", "lm_head_missing_when_untied"}:
        tied = "lm_head_missing_when_untied" in keys
    wte = 0 if "no_embeddings" in keys else V * d
    wpe = 0 if keys & {"no_embeddings", "no_position_embedding"} else T * d
    ln_f = 0 if "no_final_layer_norm" in keys else 2 * d
    lm_head = (0 if tied else V * d) + (V if "lm_head_bias" in keys else 0)
    return wte + wpe + blocks + ln_f + lm_head


def share_variant(d_model: int = 768, n_heads: int = 12, mlp_ratio: int = 4, mistake: str | None = None) -> float:
    """What ``MLP_SHARE`` is with ``mistake`` (a key of ``SHARE_MISTAKES``; None = correct, MLP / block).

    ``rounded`` returns the correct share: a share is named after it when it is that share rounded or cut
    to a few digits (``naming.name_share``).
    Raises: ValueError for an unknown key.
    """
    (key,) = _keys(mistake, SHARE_MISTAKES, "MLP share") or (None,)
    d, r = int(d_model), int(mlp_ratio)
    attn, mlp = 4 * d * d, 2 * r * d * d
    if key == "attention_share":
        return attn / (attn + mlp)
    if key == "mlp_over_attention":
        return mlp / attn
    if key == "mlp_one_way":
        return (r * d * d) / (attn + r * d * d)
    if key == "with_bias_and_ln":
        return (mlp + r * d + d) / block_variant(d, n_heads, r, bias=True, layer_norm=True)
    share = mlp / (attn + mlp)
    return 100.0 * share if key == "percent" else share
