"""Exercise 2 -- held-out wrong submission: each head given d_head x d_head projections (4·h·d_head² = 4·d²/h) with full biases (4·d): the weights are the table's one-head count, the biases are not."""

def block_params(d_model, n_heads, mlp_ratio=4, bias=False, layer_norm=False):
    """Parameters of one transformer block."""
    d = d_model
    d_head = d // n_heads
    attention = n_heads * 4 * d_head * d_head      # per head: W_Q, W_K, W_V, W_O of (d_head, d_head)
    mlp = 2 * mlp_ratio * d * d
    if bias:
        attention += n_heads * 4 * d_head
        mlp += mlp_ratio * d + d
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
