"""Exercise 2 -- known-wrong corpus case: MLP_SHARE is missing."""


def block_params(d_model, n_heads, mlp_ratio=4, bias=False, layer_norm=False):
    d = d_model
    count = 4 * d * d + 2 * mlp_ratio * d * d
    if bias:
        count += 4 * d + mlp_ratio * d + d
    if layer_norm:
        count += 4 * d
    return count


def gpt_params(vocab_size, n_ctx, d_model, n_layer, n_heads, mlp_ratio=4, tied=True):
    block = block_params(d_model, n_heads, mlp_ratio, bias=True, layer_norm=True)
    head = 0 if tied else vocab_size * d_model
    return (vocab_size + n_ctx) * d_model + n_layer * block + 2 * d_model + head


BLOCK_PARAMS_NO_BIAS = block_params(768, 12)
BLOCK_PARAMS_WITH_BIAS_AND_LN = block_params(768, 12, bias=True, layer_norm=True)
GPT2_SMALL_PARAMS = gpt_params(50257, 1024, 768, 12, 12)
