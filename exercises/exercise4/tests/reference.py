"""Judge-side PyTorch reference for exercise 4's block, in each of its four modes (trusted code).

``ReferenceBlock`` is written with stock torch modules (``nn.LayerNorm``, ``nn.MultiheadAttention``,
``nn.Linear``, ``nn.GELU()``), independently of the solution's hand-written attention: the
student's block is right when it agrees with this one on the same weights (minGPT's habit). Its
weights are handed to the student's block under the skeleton's ``state_dict`` names
(:func:`student_state`), e.g. ``attn.in_proj_weight`` -> ``attn.c_attn.weight`` (both (3C, C) with rows
[q; k; v]), ``attn.out_proj`` -> ``attn.c_proj``, ``mlp.fc`` -> ``mlp.c_fc``.

Modes (the lesson; README's table)::

    residual prenorm   x = x + attn(ln1(x)); x = x + mlp(ln2(x))     pre-norm (GPT-2)
    residual postnorm  x = ln1(x + attn(x)); x = ln2(x + mlp(x))     post-norm (Vaswani et al. 2017)
    no residual, pre   x = attn(ln1(x));     x = mlp(ln2(x))
    no residual, post  x = ln1(attn(x));     x = ln2(mlp(x))

Attention is causal (a GPT block): token t attends to tokens <= t.
"""
from __future__ import annotations

from collections import OrderedDict

import numpy as np
import torch
from torch import nn

from exercises.exercise4.tests import settings

#: reference state_dict name -> the skeleton's name.
NAME_MAP = {
    "ln1.weight": "ln1.weight", "ln1.bias": "ln1.bias",
    "attn.in_proj_weight": "attn.c_attn.weight", "attn.in_proj_bias": "attn.c_attn.bias",
    "attn.out_proj.weight": "attn.c_proj.weight", "attn.out_proj.bias": "attn.c_proj.bias",
    "ln2.weight": "ln2.weight", "ln2.bias": "ln2.bias",
    "mlp.fc.weight": "mlp.c_fc.weight", "mlp.fc.bias": "mlp.c_fc.bias",
    "mlp.proj.weight": "mlp.c_proj.weight", "mlp.proj.bias": "mlp.c_proj.bias",
}

#: The four modes: id -> (residual, prenorm).
MODES = settings.MODES


def causal_mask(T: int) -> torch.Tensor:
    """Bool (T, T) mask for ``nn.MultiheadAttention``: True = blocked, i.e. strictly above the diagonal."""
    return torch.triu(torch.ones(T, T, dtype=torch.bool), diagonal=1)


class ReferenceBlock(nn.Module):
    """The lesson's block with the two switches, from stock torch modules; float64 by default."""

    def __init__(self, d_model: int, n_heads: int, residual: bool = True, prenorm: bool = True,
                 dtype: torch.dtype = torch.float64):
        super().__init__()
        self.residual, self.prenorm = residual, prenorm
        self.ln1 = nn.LayerNorm(d_model, eps=1e-5, dtype=dtype)
        self.attn = nn.MultiheadAttention(d_model, n_heads, dropout=0.0, bias=True, batch_first=True, dtype=dtype)
        self.ln2 = nn.LayerNorm(d_model, eps=1e-5, dtype=dtype)
        self.mlp = nn.Sequential(OrderedDict(
            fc=nn.Linear(d_model, 4 * d_model, dtype=dtype),
            gelu=nn.GELU(),  # exact (erf) GELU, as nanoGPT
            proj=nn.Linear(4 * d_model, d_model, dtype=dtype),
        ))

    def attend(self, h: torch.Tensor) -> torch.Tensor:
        """Causal multi-head self-attention of ``h`` (B, T, C) -> (B, T, C)."""
        return self.attn(h, h, h, attn_mask=causal_mask(h.shape[1]), need_weights=False)[0]

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for f, ln in ((self.attend, self.ln1), (self.mlp, self.ln2)):
            if self.prenorm:
                out = f(ln(x))
                x = x + out if self.residual else out
            else:
                out = f(x)
                x = ln(x + out if self.residual else out)
        return x


def _randomise(module: nn.Module, generator: torch.Generator) -> None:
    """Matrices ~ N(0, 1/fan_in); vectors ~ N(0, 0.5^2); layer-norm scales ~ 1 + N(0, 0.5^2).

    Non-zero biases and non-trivial layer-norm affine maps, so no bug hides behind an identity.
    """
    with torch.no_grad():
        for name, p in module.named_parameters():
            if p.dim() == 2:
                p.copy_(torch.randn(p.shape, generator=generator, dtype=p.dtype) / p.shape[1] ** 0.5)
            else:
                p.copy_(0.5 * torch.randn(p.shape, generator=generator, dtype=p.dtype))
                if name.split(".")[-2].startswith("ln") and name.endswith("weight"):  # ln1, ln2, ln_f
                    p.add_(1.0)


def random_block(d_model: int, n_heads: int, generator: torch.Generator, residual: bool = True,
                 prenorm: bool = True) -> ReferenceBlock:
    """A float64 ``ReferenceBlock`` in the given mode with every parameter drawn from ``generator``."""
    block = ReferenceBlock(d_model, n_heads, residual, prenorm)
    _randomise(block, generator)
    return block.eval()


def student_state(block: ReferenceBlock) -> dict[str, np.ndarray]:
    """The block's weights as float64 arrays under the skeleton's names (what the student's block loads)."""
    return {NAME_MAP[k]: v.detach().to(torch.float64).numpy().copy() for k, v in block.state_dict().items()}


def run_with_grad(block: ReferenceBlock, x: np.ndarray, cotangent: np.ndarray) -> tuple[np.ndarray, dict, np.ndarray]:
    """``block(x)`` and the gradients of ``sum(block(x) * cotangent)``: (output, {skeleton name: d/dparam}, d/dx)."""
    xt = torch.as_tensor(np.asarray(x, dtype=np.float64)).clone().requires_grad_(True)
    block.zero_grad(set_to_none=True)
    out = block(xt)
    (out * torch.as_tensor(np.asarray(cotangent, dtype=np.float64))).sum().backward()
    grads = {NAME_MAP[k]: p.grad.detach().numpy().copy() for k, p in block.named_parameters()}
    return out.detach().numpy().copy(), grads, xt.grad.detach().numpy().copy()


def with_mode(block: ReferenceBlock, residual: bool, prenorm: bool) -> ReferenceBlock:
    """A copy of ``block`` (same weights) in another mode."""
    other = ReferenceBlock(block.ln1.normalized_shape[0], block.attn.num_heads, residual, prenorm)
    other.load_state_dict(block.state_dict())
    return other.eval()


def run(block: ReferenceBlock, x: np.ndarray) -> np.ndarray:
    """PyTorch's answer: ``block(x)`` on float64 ``x`` (B, T, C) -> (B, T, C) float64."""
    with torch.no_grad():
        return block(torch.as_tensor(np.asarray(x, dtype=np.float64))).numpy().copy()


class ReferenceGPT(nn.Module):
    """The skeleton's GPT around :class:`ReferenceBlock`: token + position embeddings, blocks, ``ln_f``,
    an output layer tied to the token embedding. Used to evaluate the weights a re-training run returns,
    in the judge, so the losses the checks use are computed by trusted code."""

    def __init__(self, n_layer: int, d_model: int, n_heads: int, n_ctx: int, vocab_size: int,
                 residual: bool = True, prenorm: bool = True, dtype: torch.dtype = torch.float32):
        super().__init__()
        self.wte = nn.Embedding(vocab_size, d_model, dtype=dtype)
        self.wpe = nn.Embedding(n_ctx, d_model, dtype=dtype)
        self.h = nn.ModuleList([ReferenceBlock(d_model, n_heads, residual, prenorm, dtype=dtype)
                                for _ in range(n_layer)])
        self.ln_f = nn.LayerNorm(d_model, dtype=dtype)
        self.lm_head = nn.Linear(d_model, vocab_size, bias=False, dtype=dtype)
        self.lm_head.weight = self.wte.weight

    def forward(self, idx: torch.Tensor) -> torch.Tensor:
        """idx (B, T) -> logits (B, T, vocab)."""
        x = self.wte(idx) + self.wpe(torch.arange(idx.shape[1]))  # (B, T, C)
        for block in self.h:
            x = block(x)
        return self.lm_head(self.ln_f(x))


def random_gpt(config: dict, generator: torch.Generator) -> ReferenceGPT:
    """A float64 :class:`ReferenceGPT` in ``config``'s mode with every parameter drawn from ``generator``
    (as :func:`random_block`; embeddings ~ N(0, 1/d_model))."""
    fields = {k: config[k] for k in ("n_layer", "d_model", "n_heads", "n_ctx", "vocab_size", "residual", "prenorm")}
    gpt = ReferenceGPT(**fields, dtype=torch.float64)
    _randomise(gpt, generator)
    with torch.no_grad():  # embeddings: one row per token, so fan-in is the row's width
        for emb in (gpt.wte, gpt.wpe):
            emb.weight.copy_(torch.randn(emb.weight.shape, generator=generator, dtype=torch.float64)
                             / emb.weight.shape[1] ** 0.5)
    return gpt.eval()


def _skeleton_name(ref: str) -> str:
    """A ReferenceGPT parameter name under the skeleton's name ("h.0.attn.in_proj_weight" -> "h.0.attn.c_attn.weight")."""
    parts = ref.split(".", 2)
    return f"h.{parts[1]}.{NAME_MAP[parts[2]]}" if parts[0] == "h" else ref


def gpt_run_with_grad(gpt: ReferenceGPT, ids: np.ndarray, cotangent: np.ndarray) -> tuple[np.ndarray, dict]:
    """``gpt(ids)`` logits and the gradients of ``sum(logits * cotangent)`` by skeleton name (the tied
    ``wte.weight`` gets both of its uses' gradients, as in the skeleton)."""
    gpt.zero_grad(set_to_none=True)
    out = gpt(torch.from_numpy(np.asarray(ids, dtype=np.int64)))
    (out * torch.as_tensor(np.asarray(cotangent), dtype=out.dtype)).sum().backward()
    grads = {_skeleton_name(k): p.grad.detach().numpy().copy() for k, p in gpt.named_parameters()}
    return out.detach().numpy().copy(), grads


def gpt_student_state(gpt: ReferenceGPT) -> dict[str, np.ndarray]:
    """The GPT's weights under the skeleton's names (``lm_head.weight`` is ``wte.weight``)."""
    state = {_skeleton_name(k): v.detach().numpy().copy() for k, v in gpt.named_parameters()}
    state["lm_head.weight"] = state["wte.weight"]
    return state


def gpt_state_names(n_layer: int) -> set[str]:
    """The skeleton GPT's ``state_dict`` names."""
    names = {"wte.weight", "wpe.weight", "ln_f.weight", "ln_f.bias", "lm_head.weight"}
    return names | {f"h.{i}.{n}" for i in range(n_layer) for n in NAME_MAP.values()}


def load_student_gpt(config: dict, state: dict[str, np.ndarray]) -> ReferenceGPT:
    """A :class:`ReferenceGPT` holding the student's trained weights (skeleton names).

    Raises:
        ValueError: names or shapes are not the skeleton's, or ``lm_head`` is not tied to ``wte``.
    """
    fields = {k: config[k] for k in ("n_layer", "d_model", "n_heads", "n_ctx", "vocab_size", "residual", "prenorm")}
    gpt = ReferenceGPT(**fields)
    want = gpt_state_names(fields["n_layer"])
    got = set(state)
    if got != want:
        missing, extra = sorted(want - got), sorted(got - want)
        raise ValueError("the trained model's parameters are not the skeleton's ("
                         + "; ".join(p for p in (f"missing {', '.join(missing[:6])}" if missing else "",
                                                  f"not in the skeleton: {', '.join(extra[:6])}" if extra else "")
                                     if p) + ")")
    if not np.array_equal(state["lm_head.weight"], state["wte.weight"]):
        raise ValueError("lm_head.weight is not tied to wte.weight as in the skeleton")
    inverse = {v: k for k, v in NAME_MAP.items()}
    tensors = {}
    for name, value in state.items():
        parts = name.split(".", 2)
        ref = f"h.{parts[1]}.{inverse[parts[2]]}" if parts[0] == "h" else name
        tensors[ref] = torch.as_tensor(np.asarray(value, dtype=np.float32))
    own = gpt.state_dict()
    bad = [f"{k} {tuple(v.shape)} (expected {tuple(own[k].shape)})" for k, v in tensors.items()
           if tuple(own[k].shape) != tuple(v.shape)]
    if bad:
        raise ValueError("the trained model's parameter shapes are not the skeleton's: " + "; ".join(bad[:4]))
    gpt.load_state_dict(tensors)
    return gpt.eval()


def grad_flow(gpt: ReferenceGPT, x_ids: np.ndarray, y_ids: np.ndarray) -> list[float]:
    """The gradient reaching each block at initialisation (the lesson's picture; CALIBRATION.md).

    The loss is the cross-entropy of the *last* position's prediction (mean over the batch); returns, for each
    block from the input up, the L2 norm of d loss / d (the block's input at the last position).
    """
    inputs: list = []

    def keep(module, args):
        args[0].retain_grad()
        inputs.append(args[0])

    handles = [block.register_forward_pre_hook(keep) for block in gpt.h]
    try:
        gpt.zero_grad(set_to_none=True)
        out = gpt(torch.from_numpy(np.asarray(x_ids, dtype=np.int64)))  # (B, T, vocab)
        loss = torch.nn.functional.cross_entropy(out[:, -1], torch.from_numpy(np.asarray(y_ids, dtype=np.int64))[:, -1])
        loss.backward()
    finally:
        for h in handles:
            h.remove()
    return [float(t.grad[:, -1].double().norm()) for t in inputs]


@torch.no_grad()
def logits(gpt: ReferenceGPT, ids: np.ndarray) -> np.ndarray:
    """``gpt``'s logits for ``ids`` (B, T) as a float32 array (B, T, vocab)."""
    return gpt(torch.from_numpy(np.asarray(ids, dtype=np.int64))).numpy().copy()


@torch.no_grad()
def val_loss(gpt: ReferenceGPT, val_ids: np.ndarray, starts: np.ndarray, n_ctx: int) -> float:
    """Mean cross-entropy (nats per character) of ``gpt`` on the windows starting at ``starts``."""
    data = torch.from_numpy(np.asarray(val_ids, dtype=np.int64))
    total = 0.0
    for chunk in np.array_split(starts, max(1, len(starts) // 64)):
        x = torch.stack([data[s:s + n_ctx] for s in chunk])          # (b, T)
        y = torch.stack([data[s + 1:s + 1 + n_ctx] for s in chunk])  # (b, T)
        logits = gpt(x)
        total += torch.nn.functional.cross_entropy(logits.reshape(-1, logits.shape[-1]), y.reshape(-1),
                                                   reduction="sum").item()
    return total / (len(starts) * n_ctx)
