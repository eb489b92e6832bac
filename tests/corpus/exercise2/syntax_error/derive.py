def block_params(d_model, n_heads, mlp_ratio=4, bias=False, layer_norm=False)
    return 12 * d_model ** 2
