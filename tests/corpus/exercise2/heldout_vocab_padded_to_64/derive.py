"""Exercise 2 -- held-out wrong submission: the vocabulary padded up to a multiple of 64 as nanoGPT does (50257 -> 50304)."""

def block_params(d_model, n_heads, mlp_ratio=4, bias=False, layer_norm=False):
    """Parameters of one transformer block."""
    d = d_model
    attention = 4 * d * d              # W_Q, W_K, W_V, W_O
    mlp = 2 * mlp_ratio * d * d        # fc and proj
    if bias:
        attention += 4 * d
        mlp += mlp_ratio * d + d
    norms = 4 * d if layer_norm else 0  # ln1, ln2: weight and bias
    return attention + mlp + norms


def gpt_params(vocab_size, n_ctx, d_model, n_layer, n_heads, mlp_ratio=4, tied=True):
    """Parameters of a GPT-2 style model (vocabulary padded to a multiple of 64, as nanoGPT)."""
    vocab = (vocab_size + 63) // 64 * 64
    embeddings = vocab * d_model + n_ctx * d_model
    blocks = n_layer * block_params(d_model, n_heads, mlp_ratio, bias=True, layer_norm=True)
    lm_head = 0 if tied else vocab * d_model
    return embeddings + blocks + 2 * d_model + lm_head


BLOCK_PARAMS_NO_BIAS = block_params(768, 12)
BLOCK_PARAMS_WITH_BIAS_AND_LN = block_params(768, 12, bias=True, layer_norm=True)
GPT2_SMALL_PARAMS = gpt_params(50257, 1024, 768, 12, 12)
MLP_SHARE = 8 / 12
