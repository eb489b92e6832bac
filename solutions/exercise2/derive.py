"""Reference solution for exercise 2: the parameter count of a transformer block and of a GPT.

Letters: d = d_model, h = n_heads, r = mlp_ratio, V = vocab_size. A linear layer d_in -> d_out has a
(d_out, d_in) weight and, with a bias, d_out more; a layer norm over d has a weight and a bias of d each.
"""


def block_params(d_model, n_heads, mlp_ratio=4, bias=False, layer_norm=False):
    """Parameters of one transformer block (multi-head attention + MLP, optional biases and two layer norms).

    The number of heads does not change the count: the heads split d_model into n_heads slices of
    d_model // n_heads, so W_Q, W_K, W_V and W_O are d x d in total whatever n_heads is.
    """
    d = d_model
    hidden = mlp_ratio * d                   # the MLP's width
    attention = 4 * d * d                    # W_Q, W_K, W_V, W_O: (d, d) each
    mlp = d * hidden + hidden * d            # fc: (r·d, d), proj: (d, r·d)
    if bias:
        attention += 4 * d                   # b_Q, b_K, b_V, b_O: (d,) each
        mlp += hidden + d                    # fc: (r·d,), proj: (d,)
    norms = 2 * (d + d) if layer_norm else 0  # ln1, ln2: weight (d,) and bias (d,) each
    return attention + mlp + norms


def gpt_params(vocab_size, n_ctx, d_model, n_layer, n_heads, mlp_ratio=4, tied=True):
    """Parameters of a GPT-2 style model: embeddings, n_layer blocks (biases, two layer norms), final norm, LM head.

    With tied embeddings the LM head reuses the token embedding matrix (V, d), so it adds nothing; untied,
    it is its own (V, d) matrix. GPT-2's LM head has no bias.
    """
    embeddings = vocab_size * d_model + n_ctx * d_model  # wte (V, d) + wpe (n_ctx, d)
    blocks = n_layer * block_params(d_model, n_heads, mlp_ratio, bias=True, layer_norm=True)
    final_norm = 2 * d_model                              # ln_f: weight and bias
    lm_head = 0 if tied else vocab_size * d_model         # (V, d), no bias
    return embeddings + blocks + final_norm + lm_head


# The lesson's block: d = 768, 12 heads, MLP ratio 4.
# Attention 4·768² = 2,359,296; MLP 2·4·768² = 4,718,592; total 12·768² = 7,077,888.
BLOCK_PARAMS_NO_BIAS = 12 * 768 * 768

# Biases: attention 4·768 = 3,072, MLP 3,072 + 768 = 3,840; two layer norms 4·768 = 3,072: +9,984.
BLOCK_PARAMS_WITH_BIAS_AND_LN = BLOCK_PARAMS_NO_BIAS + 4 * 768 + (4 * 768 + 768) + 4 * 768

# GPT-2 small: wte 50,257·768 = 38,597,376; wpe 1,024·768 = 786,432; 12 blocks 85,054,464;
# ln_f 1,536; tied LM head 0: total 124,439,808.
GPT2_SMALL_PARAMS = 50257 * 768 + 1024 * 768 + 12 * BLOCK_PARAMS_WITH_BIAS_AND_LN + 2 * 768

# MLP / block in the bare block: 8·d² / 12·d².
MLP_SHARE = 8 / 12
