"""Exercise 2 -- held-out wrong submission: the MLP's hidden width typed in as 3072 (GPT-2's d_ff) instead of mlp_ratio·d_model: right at the lesson's configuration only."""

def block_params(d_model, n_heads, mlp_ratio=4, bias=False, layer_norm=False):
    """Parameters of one transformer block."""
    d = d_model
    d_ff = 3072                          # GPT-2's MLP width
    attention = 4 * d * d
    mlp = d * d_ff + d_ff * d
    if bias:
        attention += 4 * d
        mlp += d_ff + d
    norms = 4 * d if layer_norm else 0
    return attention + mlp + norms


def gpt_params(vocab_size, n_ctx, d_model, n_layer, n_heads, mlp_ratio=4, tied=True):
    """Parameters of a GPT-2 style model."""
    embeddings = vocab_size * d_model + n_ctx * d_model   # wte + wpe
    blocks = n_layer * block_params(d_model, n_heads, mlp_ratio, bias=True, layer_norm=True)
    final_norm = 2 * d_model
    lm_head = 0 if tied else vocab_size * d_model
    return embeddings + blocks + final_norm + lm_head


BLOCK_PARAMS_NO_BIAS = block_params(768, 12)
BLOCK_PARAMS_WITH_BIAS_AND_LN = block_params(768, 12, bias=True, layer_norm=True)
GPT2_SMALL_PARAMS = gpt_params(50257, 1024, 768, 12, 12)
MLP_SHARE = 8 / 12
