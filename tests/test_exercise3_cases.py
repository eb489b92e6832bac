"""Exercise 3's stored public cases agree with PyTorch and with the known mistakes' variants.

The public checks (and so the student bundle) compare with ``exercises/exercise3/tests/cases/``, which
:func:`make_cases` writes on the judge side from the torch reference and ``hidden/mistakes.py``. The tests
here recompute every stored answer and every stored variant from the stored inputs, so a change of the
reference, of a variant or of a mistake's message that was not written to the files fails. Rewrite with::

    .venv/bin/python tests/test_exercise3_cases.py --write
"""
from __future__ import annotations

import dataclasses
import json
import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from exercises.exercise3.tests import cases, checks, reference  # noqa: E402
from exercises.exercise3.tests.hidden import mistakes  # noqa: E402

#: The seed the stored inputs were drawn from.
SEED = 20261202

#: name -> (function, shape or (B, T, d_model, n_heads), extra arguments, input scale)
SPECS = {
    "softmax_last": ("softmax", (3, 4, 5), {"axis": -1}, 2.5),
    "softmax_axis0": ("softmax", (3, 4, 5), {"axis": 0}, 2.5),
    "softmax_axis1": ("softmax", (3, 4, 5), {"axis": 1}, 2.5),
    "softmax_large": ("softmax", (4, 6), {"axis": -1}, 1000.0),
    "layer_norm": ("layer_norm", (2, 4, 10), {"eps": 1e-5}, 3.0),
    "gelu": ("gelu", (5, 7), {}, 3.0),
    "mha": ("multi_head_attention", (2, 5, 12, 3), {"causal": False}, 1.7),
    "mha_b1": ("multi_head_attention", (1, 4, 8, 2), {"causal": False}, 1.7),   # B = 1: np.squeeze shows
    "mha_t1": ("multi_head_attention", (3, 1, 8, 4), {"causal": True}, 1.7),    # T = 1
    "mha_causal": ("multi_head_attention", (2, 6, 16, 4), {"causal": True}, 1.7),
    "mha_causal_large": ("multi_head_attention", (2, 6, 16, 4), {"causal": True}, 1700.0),
    "block_causal": ("transformer_block", (2, 5, 12, 3), {"causal": True}, 1.7),
    "block": ("transformer_block", (2, 6, 20, 5), {"causal": False}, 1.7),
}


def _f32(a: np.ndarray) -> np.ndarray:
    """``a`` rounded to float32 and back: stored exactly in a float32 file, used as float64."""
    return np.asarray(a, dtype=np.float32).astype(np.float64)


def _fields(mistake) -> dict:
    """A ``Mistake``'s fields other than ``compute`` (JSON values)."""
    return {f.name: getattr(mistake, f.name) for f in dataclasses.fields(mistake) if f.name != "compute"}


def _answer_and_mistakes(function: str, inputs: dict, params: dict, args: dict):
    """PyTorch's answer and the known mistakes (``Mistake`` objects) for one call (judge side)."""
    import torch
    import torch.nn.functional as F

    x = inputs["x"]
    if function == "softmax":
        answer = torch.softmax(torch.from_numpy(x), dim=args["axis"]).numpy()
        known = checks.simple_mistakes(mistakes.SOFTMAX_MISTAKES,
                                       lambda k: mistakes.softmax_variant(x, args["axis"], mistake=k))
    elif function == "layer_norm":
        w, b = inputs["weight"], inputs["bias"]
        answer = F.layer_norm(torch.from_numpy(x), (x.shape[-1],), torch.from_numpy(w), torch.from_numpy(b),
                              eps=args["eps"]).numpy()
        known = checks.simple_mistakes(mistakes.LAYER_NORM_MISTAKES,
                                       lambda k: mistakes.layer_norm_variant(x, w, b, args["eps"], k))
    elif function == "gelu":
        answer = F.gelu(torch.from_numpy(x), approximate="tanh").numpy()
        known = checks.simple_mistakes(mistakes.GELU_MISTAKES, lambda k: mistakes.gelu_variant(x, k))
    elif function == "multi_head_attention":
        weights = tuple(inputs[k] for k in ("w_qkv", "b_qkv", "w_out", "b_out"))
        answer = reference.multi_head_attention(x, *weights, **args)
        known = checks.mha_mistakes(x, weights, args["n_heads"], args["causal"])
    else:
        answer = reference.transformer_block(x, params, **args)
        known = checks.block_mistakes(x, params, args["n_heads"], args["causal"])
    return np.asarray(answer, dtype=np.float64), known


def make_cases(seed: int = SEED) -> list[cases.Case]:
    """Every public case of :data:`SPECS`: inputs drawn from ``seed`` and rounded to float32, PyTorch's
    answers and every known single mistake's output for them."""
    rng = np.random.default_rng(seed)
    made = []
    for name, (function, shape, extra, scale) in SPECS.items():
        params, args = {}, dict(extra)
        if function in ("multi_head_attention", "transformer_block"):
            B, T, d, h = shape
            args["n_heads"] = h
            inputs = {"x": _f32(checks.draw_x(rng, B, T, d, scale=scale))}
            if function == "multi_head_attention":
                weights = reference.random_attention_weights(d, h, checks.torch_seed(rng))
                inputs.update({k: _f32(v) for k, v in zip(("w_qkv", "b_qkv", "w_out", "b_out"), weights)})
            else:
                params = {k: _f32(v) for k, v in reference.random_block_params(d, h, checks.torch_seed(rng)).items()}
        else:
            inputs = {"x": _f32(0.7 + scale * rng.standard_normal(shape))}
            if function == "layer_norm":
                d = shape[-1]
                inputs["x"][1, :2] = _f32(0.2 + 0.01 * rng.standard_normal((2, d)))  # tiny variance: eps shows
                inputs["weight"] = _f32(1.0 + 0.5 * rng.standard_normal(d))
                inputs["bias"] = _f32(0.5 * rng.standard_normal(d))
        answer, known = _answer_and_mistakes(function, inputs, params, args)
        variants, fields = {}, {}
        for key, mistake in known.items():
            try:
                variants[key] = np.asarray(mistake.compute(), dtype=np.float64)
            except Exception:  # noqa: BLE001 - a variant that cannot run on these shapes is not stored
                continue
            fields[key] = _fields(mistake)
        made.append(cases.Case(name=name, function=function, inputs=inputs, params=params, args=args,
                               expected=answer, variants=variants, mistakes=fields))
    return made


def write_cases() -> list[Path]:
    """Write ``cases/public.npz`` and ``cases/public.json`` (judge side; see the module's doc)."""
    arrays, meta = cases.pack(make_cases())
    cases.CASES.mkdir(exist_ok=True)
    stored = {k: (v.astype(np.float32) if "/inputs/" in k or "/params/" in k else v) for k, v in arrays.items()}
    np.savez_compressed(cases.ARRAYS, **stored)
    cases.META.write_text(json.dumps(meta, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    return [cases.ARRAYS, cases.META]


# ----------------------------------------------------------------------------------------------- tests

@pytest.fixture(scope="module")
def stored():
    assert cases.ARRAYS.is_file(), "run: .venv/bin/python tests/test_exercise3_cases.py --write"
    return cases.stored()


def test_every_public_case_is_stored(stored):
    assert set(stored) == set(SPECS)
    for name, (function, shape, extra, _) in SPECS.items():
        case = stored[name]
        assert case.function == function
        assert case.inputs["x"].shape == (shape if function in ("softmax", "layer_norm", "gelu") else shape[:3])
        assert {k: case.args[k] for k in extra} == extra


@pytest.mark.parametrize("name", list(SPECS))
def test_stored_answer_is_pytorchs(stored, name):
    """PyTorch, run again on the stored inputs, gives the stored answer (to float64 round-off)."""
    case = stored[name]
    answer, _ = _answer_and_mistakes(case.function, case.inputs, case.params, case.args)
    scale = max(1.0, float(np.abs(answer).max()))
    np.testing.assert_allclose(case.expected, answer, rtol=0, atol=1e-12 * scale)


@pytest.mark.parametrize("name", list(SPECS))
def test_stored_variants_are_todays(stored, name):
    """Every known mistake of today has its stored output, its message and its matching rule."""
    case = stored[name]
    _, known = _answer_and_mistakes(case.function, case.inputs, case.params, case.args)
    assert set(case.variants) <= set(known)
    for key, mistake in known.items():
        try:
            fresh = np.asarray(mistake.compute(), dtype=np.float64)
        except Exception:  # noqa: BLE001 - not stored either (see make_cases)
            assert key not in case.variants
            continue
        assert key in case.variants, f"{name}: {key} is not stored; rewrite the cases"
        assert case.mistakes[key] == _fields(mistake), f"{name}: {key} changed; rewrite the cases"
        scale = max(1.0, float(np.nanmax(np.abs(np.where(np.isfinite(fresh), fresh, 0.0)))))
        # float32 variants: torch's summation order (threads, CPU) moves them by float32 round-off
        rounding = 1e-5 if mistake.precision == "float32" else 1e-12
        np.testing.assert_allclose(case.variants[key], fresh, rtol=0, atol=rounding * scale, equal_nan=True)


def test_inputs_are_not_the_coincidences_that_hide_bugs(stored):
    """Non-zero biases, non-identity weights, T != n_heads, inputs neither unit-scale nor normalised."""
    for name, case in stored.items():
        x = case.inputs["x"]
        assert abs(float(x.mean())) > 0.05 or name == "softmax_large", name
        if case.function == "multi_head_attention":
            assert np.abs(case.inputs["b_qkv"]).min() > 0 and np.abs(case.inputs["b_out"]).min() > 0
            assert not np.allclose(case.inputs["w_out"], np.eye(x.shape[-1]))
            assert x.shape[1] != case.args["n_heads"]
        if case.function == "transformer_block":
            assert all(np.abs(v).min() > 0 for k, v in case.params.items() if k.endswith("bias"))
            assert x.shape[1] != case.args["n_heads"]


def test_the_solution_passes_every_stored_case(stored):
    import importlib.util

    from conftest import ROOT

    spec = importlib.util.spec_from_file_location("ex3_solution_cases", ROOT / "solutions/exercise3/attention.py")
    solution = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(solution)
    for name, case in stored.items():
        got = case.call(getattr(solution, case.function))
        assert np.abs(got - case.expected).max() <= 1e-9, name


if __name__ == "__main__":
    if sys.argv[1:] == ["--write"]:
        for path in write_cases():
            print(f"wrote {path} ({path.stat().st_size:,} bytes)")
    else:
        sys.exit("usage: python tests/test_exercise3_cases.py --write")
