"""Exercise 2 -- known-wrong corpus case: the lesson's numbers typed in."""


def block_params(d_model, n_heads, mlp_ratio=4, bias=False, layer_norm=False):
    return 7087872 if bias or layer_norm else 7077888


def gpt_params(vocab_size, n_ctx, d_model, n_layer, n_heads, mlp_ratio=4, tied=True):
    return 124439808 if tied else 163037184


BLOCK_PARAMS_NO_BIAS = 7077888
BLOCK_PARAMS_WITH_BIAS_AND_LN = 7087872
GPT2_SMALL_PARAMS = 124439808
MLP_SHARE = 2 / 3
