"""Exercise 2: derive the parameter count of a transformer block and of GPT-2 small.

Fill in the two functions and the four constants below. Read README.md for the full contract; in short:

- every count is a whole number: return an int (use // rather than /, or int(...));
- derive the counts with arithmetic: importing torch, tensorflow, jax, transformers or a
  parameter-counting tool scores zero;
- keep the names and parameters exactly as they are here.

Letters: d = d_model, h = n_heads, r = mlp_ratio, V = vocab_size. A linear layer d_in -> d_out has a
(d_out, d_in) weight matrix and, with a bias, d_out more numbers.
"""


def block_params(d_model, n_heads, mlp_ratio=4, bias=False, layer_norm=False):
    """Number of parameters in one transformer block.

    Args:
        d_model: width of the residual stream, d (an int, divisible by n_heads).
        n_heads: number of attention heads, h.
        mlp_ratio: the MLP's hidden layer has mlp_ratio * d_model units (an int).
        bias: count the biases of every linear layer (Q, K, V, the output projection W_O, and both MLP layers).
        layer_norm: count the block's two layer norms (each has a weight and a bias of d_model).

    Returns:
        The count, an int. The block is multi-head attention (W_Q, W_K, W_V, W_O) followed by the MLP
        d -> r·d -> d.
    """
    raise NotImplementedError("block_params: not written yet")


def gpt_params(vocab_size, n_ctx, d_model, n_layer, n_heads, mlp_ratio=4, tied=True):
    """Number of parameters in a GPT-2 style model.

    Args:
        vocab_size: number of tokens, V.
        n_ctx: number of positions (context length).
        d_model: width d.
        n_layer: number of blocks.
        n_heads: heads per block.
        mlp_ratio: MLP hidden size is mlp_ratio * d_model.
        tied: the LM head shares its weight matrix with the token embedding.

    Returns:
        The count, an int: token embedding (V, d), position embedding (n_ctx, d), n_layer blocks with
        biases and two layer norms each, a final layer norm, and an LM head (V, d) without bias, which
        adds nothing when tied.
    """
    raise NotImplementedError("gpt_params: not written yet")


# The lesson's block: d_model = 768, 12 heads, MLP ratio 4. Replace each None with your number
# (a literal such as 1_234_567, an expression, or a call of your own function).
BLOCK_PARAMS_NO_BIAS = None           # no biases, no layer norm
BLOCK_PARAMS_WITH_BIAS_AND_LN = None  # with biases and the block's two layer norms
GPT2_SMALL_PARAMS = None              # vocab 50257, n_ctx 1024, 12 layers, tied embeddings
MLP_SHARE = None                      # MLP parameters / block parameters (no biases, no norms), a float
