"""Designed inputs for the transformer_block probes (grader/probes/block.py and block_mlp.py), and the run that calls them.

Designs use B = 3, T = 5, d_model = 8, 2 heads (1 for the T = 1 readers), a fixed seed. Facts they rest on,
true of any correct block (exercises/exercise3/README.md's pre-norm block):

- a sub-layer whose weights and biases are all 0 outputs exactly 0 (V = 0, so any attention weights give
  0; gelu(0) = 0 for every GELU and for ReLU), so a pre-norm block with both zeroed returns x exactly;
- with T = 1 and one head every attention weight is 1 and no split or join of heads can move a feature
  (with 2, heads joined in the wrong order would permute ln1's features), so Q = K = 0, V = I, W_O = I
  makes the attention return its input, ln1(x), whatever the mask or head layout, as long as the batch
  elements (here the rows read) stay apart: the block's ln1 can be read; likewise an MLP whose
  pre-activations are >= 17 reads ln2, since there GELU, its approximations and ReLU equal their input
  (to ~1e-13);
- a layer norm over the features undoes a per-token scale and shift, and with weight 0 returns its bias at
  every token; only attention mixes tokens.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Callable

import numpy as np

from .functions import DESIGNS as FUNCTION_DESIGNS
from .functions import SEED
from .memo import Memo

B, T, D, N_HEADS = 3, 5, 8, 2
HIDDEN = 4 * D
BIG = 20.0
#: Pre-activations at which the MLP's activation is read (one per output feature).
U_READ = np.array([-3.0, -1.5, -0.5, -0.1, 0.1, 0.5, 1.5, 3.0])
#: Relative tolerance for "the same" when a value is read through the student's code (the contract's 1e-6:
#: a float32 attention agrees to ~1e-7), against differences of 1e-4 and more for the mistakes named.
SAME = 1e-6
_ATTN = ("attn.in_proj_weight", "attn.in_proj_bias", "attn.out_proj.weight", "attn.out_proj.bias")


@dataclass(frozen=True)
class Design:
    """One designed call: ``transformer_block(x, params, n_heads, causal=causal)``."""

    x: np.ndarray
    params: dict
    causal: bool = True
    n_heads: int = N_HEADS


def _designs() -> dict[str, Design]:
    rng = np.random.default_rng(SEED + 1)
    z = rng.standard_normal((B, T, D))
    z = (z - z.mean(-1, keepdims=True)) / z.std(-1, keepdims=True)
    x = 3.0 * z + rng.uniform(-2.0, 2.0, (B, T, 1))  # (B, T, D): per-token mean in [-2, 2], variance 9
    x_scaled = rng.uniform(2.0, 10.0, (B, T, 1)) * x + rng.uniform(-3.0, 3.0, (B, T, 1))
    x_pert = x.copy()
    x_pert[0, -1] += 2.0 * rng.standard_normal(D)  # the last token of batch element 0
    x_pert[1, 0] += 2.0 * rng.standard_normal(D)  # the first token of batch element 1; element 2 untouched
    x_last = x.copy()
    x_last[0, -1] = x_pert[0, -1]  # only the last token of batch element 0
    ln = {f"ln{i}.{k}": rng.uniform(0.5, 1.5, D) if k == "weight" else rng.uniform(-1.0, 1.0, D)
          for i in (1, 2) for k in ("weight", "bias")}
    unit = {f"ln{i}.{k}": np.ones(D) if k == "weight" else np.zeros(D) for i in (1, 2) for k in ("weight", "bias")}
    attn = dict(zip(_ATTN, (rng.standard_normal((3 * D, D)) / np.sqrt(D), 0.5 * rng.standard_normal(3 * D),
                            rng.standard_normal((D, D)) / np.sqrt(D), 0.5 * rng.standard_normal(D))))
    mlp = {"mlp.fc.weight": rng.standard_normal((HIDDEN, D)) / np.sqrt(D), "mlp.fc.bias": 0.5 * rng.standard_normal(HIDDEN),
           "mlp.proj.weight": rng.standard_normal((D, HIDDEN)) / np.sqrt(HIDDEN), "mlp.proj.bias": 0.5 * rng.standard_normal(D)}
    no_attn = {k: np.zeros_like(v) for k, v in attn.items()}
    no_mlp = {k: np.zeros_like(v) for k, v in mlp.items()}

    def attention(v_weight, out_weight):  # T = 1 reader: Q = K = 0, the given V and W_O, no biases
        w = np.zeros((3 * D, D))
        w[2 * D:] = v_weight
        return dict(zip(_ATTN, (w, np.zeros(3 * D), out_weight, np.zeros(D))))

    def mlp_with(fc_w, fc_b, proj_w, proj_b):
        return dict(zip(("mlp.fc.weight", "mlp.fc.bias", "mlp.proj.weight", "mlp.proj.bias"),
                        (fc_w, fc_b, proj_w, proj_b)))

    rows = FUNCTION_DESIGNS["ln_rows"][:, None, :]  # (4, 1, D): T = 1, variances 4 .. 1e-8
    affine = {"weight": FUNCTION_DESIGNS["ln_weight"], "bias": FUNCTION_DESIGNS["ln_bias"]}
    ln1_affine = {**unit, "ln1.weight": affine["weight"], "ln1.bias": affine["bias"]}
    ln2_affine = {**unit, "ln2.weight": affine["weight"], "ln2.bias": affine["bias"]}
    select = np.eye(HIDDEN, D)  # (4D, D): hidden unit i <- feature i, for i < D
    reader = mlp_with(select, BIG * select.sum(1), select.T.copy(), np.full(D, -BIG))
    u_big = BIG + 0.5 * np.arange(HIDDEN)
    u_read = np.concatenate([U_READ, np.zeros(HIDDEN - D)])
    full = {**ln, **attn, **mlp}
    return {
        "zero": Design(x, {**ln, **no_attn, **no_mlp}),
        "attn_zero": Design(x, {**ln, **no_attn, **mlp}),
        "attn_zero_scaled": Design(x_scaled, {**ln, **no_attn, **mlp}),
        # the attention reduced to its output bias c: it adds c at every token, which the MLP must then see
        "attn_bias_only": Design(x, {**ln, **no_attn, "attn.out_proj.bias": attn["attn.out_proj.bias"], **mlp}),
        "mlp_zero": Design(x, {**ln, **attn, **no_mlp}),
        "mlp_zero_scaled": Design(x_scaled, {**ln, **attn, **no_mlp}),
        "full": Design(x, full),
        "full_perturbed": Design(x_pert, full),
        "full_again": Design(x, full),  # the same call as "full", made again (is the block deterministic?)
        "full_last_perturbed": Design(x_last, full),
        "full_noncausal": Design(x, full, causal=False),
        "full_noncausal_perturbed": Design(x_pert, full, causal=False),
        "ln1_read": Design(rows, {**unit, **attention(np.eye(D), np.eye(D)), **no_mlp}, n_heads=1),
        "ln1_read_affine": Design(rows, {**ln1_affine, **attention(np.eye(D), np.eye(D)), **no_mlp}, n_heads=1),
        "ln2_read": Design(rows, {**unit, **no_attn, **reader}),
        "ln2_read_affine": Design(rows, {**ln2_affine, **no_attn, **reader}),
        "attn_layout": Design(rows, {**unit, **attention(rng.standard_normal((D, D)), rng.standard_normal((D, D))),
                                     **no_mlp}, n_heads=1),
        "mlp_linear": Design(x, {**ln, **no_attn, **mlp_with(np.zeros((HIDDEN, D)), u_big,
                                                              0.2 * rng.standard_normal((D, HIDDEN)), mlp["mlp.proj.bias"])}),
        "mlp_swap": Design(x, {**ln, **no_attn, **mlp_with(mlp["mlp.fc.weight"], u_big, np.zeros((D, HIDDEN)), np.zeros(D))}),
        "activation": Design(x, {**ln, **no_attn, **mlp_with(np.zeros((HIDDEN, D)), u_read, select.T.copy(), np.zeros(D))}),
        # the same u reached through fc.weight: ln2 (weight 0, bias u) gives u at every token, fc.bias = 0
        "activation_by_weight": Design(x, {**ln, "ln2.weight": np.zeros(D), "ln2.bias": U_READ.copy(), **no_attn,
                                           **mlp_with(select, np.zeros(HIDDEN), select.T.copy(), np.zeros(D))}),
    }


#: The designed calls (fixed seed); every call gets fresh copies (see :class:`grader.probes.memo.Memo`).
DESIGNS = _designs()


class BlockRun:
    """The student's block (and optionally their layer_norm, gelu, multi_head_attention) on the designs.

    Each designed call is made at most once however many probes ask, so :func:`run_block` costs at most
    21 block calls and 11 calls of the other functions (mha 7, layer_norm 3, gelu 1).
    """

    def __init__(self, block: Callable, *, layer_norm: Callable | None = None, gelu: Callable | None = None,
                 mha: Callable | None = None) -> None:
        self.block, self.layer_norm, self.gelu, self.mha = block, layer_norm, gelu, mha
        self.memo = Memo()

    def out(self, name: str) -> np.ndarray | None:
        """The block's output on design ``name`` (None if it raised or is not finite float64 (B, T, D))."""
        d = DESIGNS[name]
        return self.memo.get(name, self.block, d.x, d.params, d.n_heads, causal=d.causal, shape=d.x.shape)

    def attention(self, name: str, x: np.ndarray, causal: bool) -> np.ndarray | None:
        """The student's multi_head_attention on ``x`` with design ``name``'s attention weights and heads."""
        p = DESIGNS[name].params
        return self.memo.get(("mha", name, causal, x.tobytes()), self.mha, x, *(p[k] for k in _ATTN),
                             DESIGNS[name].n_heads, causal=causal, shape=x.shape)

    @cached_property
    def attention_reads(self) -> bool:
        """Whether the student's multi_head_attention, when given, returns its input on the ln1 reader's weights
        (T = 1, one head, Q = K = 0, V = W_O = I), as the contract's does (1 call); True when it is not given."""
        if self.mha is None:
            return True
        rows = DESIGNS["ln1_read"].x
        out = self.attention("ln1_read", rows, True)
        return out is not None and maxabs(out - rows) <= SAME * scale(rows)

    @cached_property
    def identity_holds(self) -> bool:
        """Both sub-layers zeroed, the block returned x (to 1e-9): the residual stream is intact."""
        z = self.out("zero")
        return z is not None and maxabs(z - DESIGNS["zero"].x) <= 1e-9 * scale(DESIGNS["zero"].x)


def as_run(block, layer_norm=None, gelu=None, mha=None) -> BlockRun:
    """``block`` itself if it is a :class:`BlockRun` (probes share its calls), else a new run of it."""
    return block if isinstance(block, BlockRun) else BlockRun(block, layer_norm=layer_norm, gelu=gelu, mha=mha)


def maxabs(a: np.ndarray) -> float:
    return float(np.abs(a).max())


def scale(*arrays: np.ndarray) -> float:
    return max(1.0, *(float(np.abs(a).max()) for a in arrays))


def rows_equal(y: np.ndarray) -> bool:
    rows = y.reshape(-1, y.shape[-1])
    return maxabs(rows - rows[0]) <= 1e-9 * scale(y)


def normalised_by(y: np.ndarray, params: dict) -> str | None:
    """Which layer norm's weight and bias leave rows of per-token mean 0, variance in [0.8, 1] ("plain": none)."""
    for label, w, b in (("ln2", params["ln2.weight"], params["ln2.bias"]),
                        ("ln1", params["ln1.weight"], params["ln1.bias"]), ("plain", 1.0, 0.0)):
        n = (y - b) / w
        if np.abs(n.mean(-1)).max() <= 1e-6 and np.all((n.var(-1) >= 0.8) & (n.var(-1) <= 1.0 + 1e-6)):
            return label
    return None


def normalised_words(y: np.ndarray, params: dict, label: str) -> str:
    n = y if label == "plain" else (y - params[label + ".bias"]) / params[label + ".weight"]
    by = "" if label == "plain" else f" once {label}'s weight and bias are taken out"
    return f"per token mean 0 and variance {n.var(-1).mean():.3f}{by}"


def post_norm_label(run: BlockRun) -> str | None:
    z, f = run.out("zero"), run.out("full")
    if z is None or f is None:
        return None
    label = normalised_by(z, DESIGNS["zero"].params)
    return label if label is not None and normalised_by(f, DESIGNS["full"].params) == label else None
