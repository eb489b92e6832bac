"""Exercise 2 -- known-wrong corpus case: gpt_params is missing."""


def block_params(d_model, n_heads, mlp_ratio=4, bias=False, layer_norm=False):
    d = d_model
    count = 4 * d * d + 2 * mlp_ratio * d * d
    if bias:
        count += 4 * d + mlp_ratio * d + d
    if layer_norm:
        count += 4 * d
    return count


BLOCK_PARAMS_NO_BIAS = block_params(768, 12)
BLOCK_PARAMS_WITH_BIAS_AND_LN = block_params(768, 12, bias=True, layer_norm=True)
GPT2_SMALL_PARAMS = 124439808
MLP_SHARE = 2 / 3
