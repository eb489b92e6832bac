"""Exercise 2 -- known-wrong corpus case: counting a torch module instead of deriving."""
import torch.nn as nn


def block_params(d_model, n_heads, mlp_ratio=4, bias=False, layer_norm=False):
    parts = [nn.MultiheadAttention(d_model, n_heads, bias=bias),
             nn.Linear(d_model, mlp_ratio * d_model, bias=bias), nn.Linear(mlp_ratio * d_model, d_model, bias=bias)]
    if layer_norm:
        parts += [nn.LayerNorm(d_model), nn.LayerNorm(d_model)]
    return sum(p.numel() for part in parts for p in part.parameters())


def gpt_params(vocab_size, n_ctx, d_model, n_layer, n_heads, mlp_ratio=4, tied=True):
    block = block_params(d_model, n_heads, mlp_ratio, True, True)
    return (vocab_size + n_ctx) * d_model + n_layer * block + 2 * d_model + (0 if tied else vocab_size * d_model)


BLOCK_PARAMS_NO_BIAS = 7077888
BLOCK_PARAMS_WITH_BIAS_AND_LN = 7087872
GPT2_SMALL_PARAMS = 124439808
MLP_SHARE = 2 / 3
