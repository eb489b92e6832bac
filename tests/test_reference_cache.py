"""Tests of the cache of exercise 3's torch references (``reference.cached`` in
``exercises/exercise3/tests/reference.py``).

A judge grades a batch with one seed, so each check asks for the same reference again and again;
the cache must give exactly what torch computes now, never an answer for other inputs, never an
answer a caller has edited, and must stay small. Expected values are computed here with torch.
"""
from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import numpy as np
import pytest
import torch
from torch import nn

ROOT = Path(__file__).resolve().parent.parent


def _load(path: Path, name: str):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


reference = _load(ROOT / "exercises" / "exercise3" / "tests" / "reference.py", "ex3_reference_cache")


def _x(shape, seed: int) -> np.ndarray:
    return 0.3 + 1.7 * np.random.default_rng(seed).standard_normal(shape)


def _torch_attention(weights, x: np.ndarray, n_heads: int, causal: bool) -> np.ndarray:
    """``nn.MultiheadAttention(batch_first=True)`` holding ``weights``, run on ``x`` now."""
    w_qkv, b_qkv, w_out, b_out = (torch.tensor(w) for w in weights)
    attn = nn.MultiheadAttention(w_out.shape[0], n_heads, bias=True, batch_first=True, dtype=torch.float64).eval()
    with torch.no_grad():
        attn.in_proj_weight.copy_(w_qkv)
        attn.in_proj_bias.copy_(b_qkv)
        attn.out_proj.weight.copy_(w_out)
        attn.out_proj.bias.copy_(b_out)
        T = x.shape[1]
        mask = torch.triu(torch.ones(T, T, dtype=torch.bool), diagonal=1) if causal else None
        xt = torch.tensor(x)
        return attn(xt, xt, xt, attn_mask=mask, need_weights=False)[0].numpy()


def test_cached_attention_equals_fresh_torch():
    d, h, seed, x = 12, 3, 7, _x((2, 5, 12), 1)
    fresh = reference.random_attention(d, h, torch.Generator().manual_seed(seed))
    fresh_weights = [t.detach().numpy() for t in (fresh.in_proj_weight, fresh.in_proj_bias,
                                                  fresh.out_proj.weight, fresh.out_proj.bias)]
    for _ in range(2):  # a miss, then a hit
        weights = reference.random_attention_weights(d, h, seed)
        assert all(np.array_equal(a, b) for a, b in zip(weights, fresh_weights))
        for causal in (False, True):
            got = reference.multi_head_attention(x, *weights, n_heads=h, causal=causal)
            assert got.dtype == np.float64 and got.shape == (2, 5, 12)
            assert np.array_equal(got, _torch_attention(fresh_weights, x, h, causal))


def test_cached_block_equals_fresh_torch():
    d, h, seed, x = 16, 4, 11, _x((2, 7, 16), 2)
    block = reference.random_block(d, h, torch.Generator().manual_seed(seed))
    with torch.no_grad():
        expected = block(torch.tensor(x), causal=True).numpy()
    fresh_params = {name: t.detach().numpy() for name, t in block.state_dict().items()}
    for _ in range(2):
        params = reference.random_block_params(d, h, seed)
        assert params.keys() == fresh_params.keys()
        assert all(np.array_equal(params[k], fresh_params[k]) for k in params)
        assert np.array_equal(reference.transformer_block(x, params, n_heads=h, causal=True), expected)


def test_different_inputs_get_different_entries():
    d, h, x = 8, 2, _x((2, 6, 8), 3)
    weights = reference.random_attention_weights(d, h, 21)
    cache = reference.multi_head_attention.cache
    base = reference.multi_head_attention(x, *weights, n_heads=h, causal=True)
    size = len(cache)
    nudged_x = x.copy()
    nudged_x[1, 5, 7] += 1e-9  # one bit-level change of one input entry
    nudged_bias = list(weights)
    nudged_bias[3] = weights[3] + np.eye(1, d, 2)[0]  # one output bias entry
    variants = [
        ((nudged_x, *weights), {"n_heads": h, "causal": True}),
        ((x, *weights), {"n_heads": h, "causal": False}),
        ((x, *weights), {"n_heads": 4, "causal": True}),
        ((x, *nudged_bias), {"n_heads": h, "causal": True}),
        ((x, *reference.random_attention_weights(d, h, 22)), {"n_heads": h, "causal": True}),
    ]
    for i, (args, kwargs) in enumerate(variants, start=1):
        got = reference.multi_head_attention(*args, **kwargs)
        assert len(cache) == size + i
        assert not np.array_equal(got, base)
        assert np.array_equal(got, _torch_attention(args[1:], args[0], kwargs["n_heads"], kwargs["causal"]))
    assert np.array_equal(reference.multi_head_attention(x, *weights, n_heads=h, causal=True), base)
    assert len(cache) == size + len(variants)  # the same inputs again: a hit


def test_key_tells_types_shapes_and_dtypes_apart():
    a = np.arange(6.0)
    keys = {reference._key(v) for v in (a, a.reshape(2, 3), a.astype(np.float32), 1, 1.0, True, "1", None)}
    assert len(keys) == 8
    assert reference._key(np.asfortranarray(a.reshape(2, 3))) == reference._key(a.reshape(2, 3))
    with pytest.raises(TypeError, match="cannot key on a object"):
        reference._key(object())


def test_editing_a_result_does_not_change_the_next_lookup():
    d, h, x = 12, 3, _x((1, 4, 12), 4)
    weights = reference.random_attention_weights(d, h, 31)
    kept = [w.copy() for w in weights]
    weights[0][:] = 0.0  # a caller edits what it got
    assert all(np.array_equal(a, b) for a, b in zip(reference.random_attention_weights(d, h, 31), kept))

    expected = reference.multi_head_attention(x, *kept, n_heads=h, causal=True)
    first = expected.copy()
    expected *= 2.0
    expected[0, 0, 0] = np.nan
    assert np.array_equal(reference.multi_head_attention(x, *kept, n_heads=h, causal=True), first)

    params = reference.random_block_params(d, h, 32)
    kept_params = {k: v.copy() for k, v in params.items()}
    params["ln1.weight"][:] = 0.0
    params.pop("mlp.fc.bias")
    again = reference.random_block_params(d, h, 32)
    assert again.keys() == kept_params.keys()
    assert all(np.array_equal(again[k], kept_params[k]) for k in again)

    # What the cache holds is read-only; the caller's own inputs stay writable.
    stored = next(reversed(reference.random_block_params.cache.values()))
    assert not any(v.flags.writeable for v in stored.values())
    assert x.flags.writeable and all(w.flags.writeable for w in kept)


def test_cache_is_a_bounded_lru():
    calls = []

    def square(a):
        calls.append(float(a[0]))
        return a * a

    cached = reference.cached(square, maxsize=3)
    for v in range(10):
        assert np.array_equal(cached(np.array([float(v)])), np.array([float(v * v)]))
    assert len(cached.cache) == 3 and len(calls) == 10
    cached(np.array([7.0]))  # a hit: now the most recent
    cached(np.array([10.0]))  # evicts 8, the least recently used
    assert len(calls) == 11 and len(cached.cache) == 3
    cached(np.array([7.0]))
    assert len(calls) == 11
    cached(np.array([8.0]))
    assert len(calls) == 12 and len(cached.cache) == 3


def test_real_caches_stay_bounded():
    for seed in range(300):
        reference.random_attention_weights(8, 2, 1000 + seed)
    assert len(reference.random_attention_weights.cache) == 256


def test_a_judge_regrading_with_one_seed_adds_no_entries(grade3):
    """As in a batch: a second grading with the same seed finds every reference in the cache."""
    solution = ROOT / "solutions" / "exercise3"
    first = grade3(solution, seed=4242)
    judged = sys.modules["exercises.exercise3.tests.reference"]  # the module the judge's checks use
    sizes = [len(f.cache) for f in (judged.random_attention_weights, judged.random_block_params,
                                    judged.multi_head_attention, judged.transformer_block)]
    assert sizes[0] > 0 and sizes[2] > 0
    second = grade3(solution, seed=4242)
    assert [len(f.cache) for f in (judged.random_attention_weights, judged.random_block_params,
                                   judged.multi_head_attention, judged.transformer_block)] == sizes
    assert [(c.name, c.status, c.points) for c in second.checks] == [(c.name, c.status, c.points)
                                                                      for c in first.checks]
    assert second.score == second.max_score
