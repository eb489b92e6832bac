"""Exercise 2 (derive the parameter count): the judge's truth, torch's counts, and the mistakes' counts.

The public checks compare with torch's counts stored in ``exercises/exercise2/tests/stored_counts.toml``
(the bundle ships no reference); :func:`write_stored_counts` writes them from the reference and
``test_stored_counts_are_torchs`` checks them. Rewrite them (after a change of the public configurations)
with::

    .venv/bin/python tests/test_exercise2.py --write-stored-counts

- ``exercises/exercise2/tests/reference.py``: the torch reference modules give the lesson's published
  numbers (7,077,888 / 7,087,872 / 124,439,808, MLP share 2/3: the independent truth, from the lesson), and
  agree with a second torch construction (separate Q, K, V, O linear layers, built on the CPU).
- ``exercises/exercise2/tests/hidden/mistakes.py``: every ``*_variant(mistake=None)`` equals torch's count; every
  mistake changes the count on the configurations the checks draw, whatever the seed.

The checks' readers of answers, the solution and skeleton, and grading them and the corpus are tested in
``test_exercise2_grading.py``; naming and the properties in ``test_exercise2_naming.py``; the student bundle
in ``test_release.py``.
"""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
import torch
from conftest import ROOT
from exercise2_shapes import BLOCK_SHAPES, GPT_SHAPES  # first: it puts the project root on sys.path
from torch import nn

from exercises.exercise2.tests import checks, reference
from exercises.exercise2.tests.hidden import mistakes


#: The public checks' configurations (test_derive_public.py), whose torch counts are stored. None is the
#: lesson's, and none can be a hidden random one (those have mlp_ratio 3, 5, 6 or 8 and 2, 3, 4, 6 or 8 heads).
STORED_CONFIGS = {
    "block_params": [dict(d_model=d, n_heads=h, mlp_ratio=r, bias=b, layer_norm=b)
                     for b in (False, True) for d, h, r in ((40, 5, 4), (42, 7, 3))],
    "gpt_params": [dict(vocab_size=100, n_ctx=16, d_model=24, n_layer=3, n_heads=4, mlp_ratio=4, tied=t)
                   for t in (True, False)],
}


def _toml_value(value) -> str:
    return str(value).lower() if isinstance(value, bool) else str(value)


def stored_counts_text() -> str:
    """The stored counts file for :data:`STORED_CONFIGS`, each count from the torch reference."""
    lines = ["# Torch's parameter counts for the public checks' configurations: sum(p.numel() for p in",
             "# module.parameters()) of the reference modules. Written by tests/test_exercise2.py",
             "# (--write-stored-counts) and checked against the reference there; do not edit by hand."]
    count = {"block_params": reference.block_count, "gpt_params": reference.gpt_count}
    for function, configs in STORED_CONFIGS.items():
        for config in configs:
            inline = ", ".join(f"{k} = {_toml_value(v)}" for k, v in config.items())
            lines += ["", f"[[{function}]]", f"config = {{ {inline} }}", f"count = {count[function](**config)}"]
    return "\n".join(lines) + "\n"


def write_stored_counts() -> Path:
    """Write :data:`checks.STORED_COUNTS` (judge side; run by hand, see the module's doc)."""
    checks.STORED_COUNTS.write_text(stored_counts_text(), encoding="utf-8")
    return checks.STORED_COUNTS


def test_stored_counts_are_torchs():
    """The stored file is exactly what the reference gives for the public configurations, and each count is
    also the count of the independent torch construction below."""
    assert checks.STORED_COUNTS.read_text(encoding="utf-8") == stored_counts_text(), (
        "run: .venv/bin/python tests/test_exercise2.py --write-stored-counts")
    for config in STORED_CONFIGS["block_params"]:
        block = _LinearBlock(config["d_model"], config["mlp_ratio"], config["bias"], config["layer_norm"])
        assert checks.stored_count("block_params", config) == sum(p.numel() for p in block.parameters())
    for config in STORED_CONFIGS["gpt_params"]:
        gpt = _LinearGPT(*(config[k] for k in ("vocab_size", "n_ctx", "d_model", "n_layer", "mlp_ratio", "tied")))
        assert checks.stored_count("gpt_params", config) == sum(p.numel() for p in gpt.parameters())
    assert checks.stored_count("block_params", dict(d_model=40, n_heads=5)) == reference.block_count(40, 5)
    with pytest.raises(KeyError, match="no stored count for block_params"):
        checks.stored_count("block_params", dict(d_model=768, n_heads=12))


# ------------------------------------------------------------------ the lesson's published numbers

def test_reference_modules_give_the_lessons_numbers():
    """The lesson: attention 4·d² = 2,359,296, MLP 8·d² = 4,718,592, block 7,077,888; with biases and
    layer norms 7,087,872; GPT-2 small with tied embeddings 124,439,808; MLP share 2/3."""
    block = reference.build_block(768, 12)
    assert reference.count(block.attn) == 2_359_296
    assert reference.count(block.mlp) == 4_718_592
    assert reference.block_count(768, 12) == 7_077_888
    assert reference.block_count(768, 12, 4, bias=True, layer_norm=True) == 7_087_872
    assert reference.gpt_count(**reference.GPT2_SMALL) == 124_439_808
    assert reference.mlp_share(768, 12, 4) == pytest.approx(2 / 3, abs=1e-15)


def test_reference_gpt_ties_the_lm_head_to_the_token_embedding():
    tied = reference.build_gpt(100, 16, 24, 2, 4, tied=True)
    untied = reference.build_gpt(100, 16, 24, 2, 4, tied=False)
    assert tied.lm_head.weight is tied.wte.weight
    assert untied.lm_head.weight is not untied.wte.weight
    assert untied.lm_head.bias is None
    assert reference.count(untied) - reference.count(tied) == 100 * 24


class _LinearBlock(nn.Module):
    """A second, independent torch block: separate Q, K, V, O linear layers (no heads at all), on the CPU."""

    def __init__(self, d, r, bias, layer_norm):
        super().__init__()
        self.q, self.k, self.v, self.o = (nn.Linear(d, d, bias=bias) for _ in range(4))
        self.up, self.down = nn.Linear(d, r * d, bias=bias), nn.Linear(r * d, d, bias=bias)
        self.norms = nn.ModuleList([nn.LayerNorm(d), nn.LayerNorm(d)] if layer_norm else [])


class _LinearGPT(nn.Module):
    def __init__(self, V, T, d, L, r, tied):
        super().__init__()
        self.tok, self.pos = nn.Embedding(V, d), nn.Embedding(T, d)
        self.blocks = nn.ModuleList(_LinearBlock(d, r, True, True) for _ in range(L))
        self.norm = nn.LayerNorm(d)
        self.head = nn.Linear(d, V, bias=False)
        if tied:
            self.head.weight = self.tok.weight


@pytest.mark.parametrize("layer_norm", [False, True], ids=["noln", "ln"])
@pytest.mark.parametrize("bias", [False, True], ids=["nobias", "bias"])
@pytest.mark.parametrize("shape", BLOCK_SHAPES, ids=lambda s: "d{}h{}r{}".format(*s))
def test_reference_block_agrees_with_an_independent_torch_block(shape, bias, layer_norm):
    d, h, r = shape
    expected = sum(p.numel() for p in _LinearBlock(d, r, bias, layer_norm).parameters())
    assert reference.block_count(d, h, r, bias, layer_norm) == expected
    with torch.device("cpu"):  # the meta device changes nothing about the count
        cpu_block = reference.ReferenceBlock(d, h, r, bias, layer_norm)
    assert reference.count(cpu_block) == expected


@pytest.mark.parametrize("tied", [True, False], ids=["tied", "untied"])
@pytest.mark.parametrize("shape", GPT_SHAPES, ids=lambda s: "V{}T{}d{}L{}h{}r{}".format(*s))
def test_reference_gpt_agrees_with_an_independent_torch_gpt(shape, tied):
    V, T, d, L, h, r = shape
    expected = sum(p.numel() for p in _LinearGPT(V, T, d, L, r, tied).parameters())
    assert reference.gpt_count(V, T, d, L, h, r, tied) == expected


def test_heads_do_not_change_torchs_count():
    counts = {h: reference.block_count(96, h, 4, True, True) for h in (1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 96)}
    assert len(set(counts.values())) == 1


# ------------------------------------------------------------------------------- mistakes.py

def test_mistake_keys_are_the_contract():
    assert set(mistakes.BLOCK_MISTAKES) == {
        "no_out_proj", "per_head_full_size", "attention_one_head", "mlp_up_only", "mlp_down_only",
        "mlp_ratio_ignored", "mlp_ratio_squared", "biases_included", "biases_missing", "attention_biases_missing",
        "qkv_biases_missing", "norms_included", "norms_missing", "layer_norm_half"}
    assert set(mistakes.GPT_MISTAKES) == {
        "lm_head_counted_when_tied", "lm_head_missing_when_untied", "lm_head_bias", "no_position_embedding",
        "no_embeddings", "blocks_only", "no_final_layer_norm", "blocks_without_bias_ln"}
    # Every key is in exactly one group (groups decide which pairs exist).
    for table, groups in ((mistakes.BLOCK_MISTAKES, mistakes.BLOCK_GROUPS),
                          (mistakes.GPT_MISTAKES, mistakes.GPT_GROUPS)):
        grouped = [k for keys in groups.values() for k in keys]
        assert sorted(grouped) == sorted(table)
    assert set(mistakes.SHARE_MISTAKES) == {
        "attention_share", "mlp_over_attention", "mlp_one_way", "with_bias_and_ln", "percent", "rounded"}
    for table in (mistakes.BLOCK_MISTAKES, mistakes.GPT_MISTAKES, mistakes.SHARE_MISTAKES):
        for key, sentence in table.items():
            assert sentence and "\n" not in sentence and len(sentence) < 300, key
    for note in (checks.HEADS_NOTE, checks.FIXED_NOTE):
        assert "\n" not in note and len(note) < 300


def test_unknown_mistake_is_a_clear_error():
    with pytest.raises(ValueError, match="unknown block mistake 'nope'; known: attention_biases_missing"):
        mistakes.block_variant(8, 2, mistake="nope")
    with pytest.raises(ValueError, match="unknown GPT mistake 'block.nope'"):
        mistakes.gpt_variant(10, 4, 8, 1, 2, mistake="block.nope")
    with pytest.raises(ValueError, match="unknown block mistake 'nope'"):
        mistakes.block_variant(8, 2, mistake=("no_out_proj", "nope"))


def test_two_mistakes_add_up_part_by_part():
    """A pair changes each part of the count as its two mistakes alone do (d = 60, h = 5, r = 3, by hand:
    W_O left out is -d² - d, the MLP one way (up only) is -r·d² - d, both with bias=True)."""
    config = dict(d_model=60, n_heads=5, mlp_ratio=3, bias=True, layer_norm=True)
    correct = mistakes.block_variant(**config)
    assert mistakes.block_variant(**config, mistake="no_out_proj") == correct - 3600 - 60
    assert mistakes.block_variant(**config, mistake="mlp_up_only") == correct - 10800 - 60
    assert mistakes.block_variant(**config, mistake=("no_out_proj", "mlp_up_only")) == correct - 3600 - 60 - 10800 - 60
    # Without W_O the attention's biases are Q, K and V's: both ways of leaving them out give the same count.
    assert (mistakes.block_variant(**config, mistake=("no_out_proj", "qkv_biases_missing"))
            == mistakes.block_variant(**config, mistake=("no_out_proj", "attention_biases_missing"))
            == correct - 3600 - 4 * 60)
    # GPT-2 small's public wrong numbers: no Q/K/V bias (12 · 3 · 768 fewer), the 12 blocks alone.
    gpt2 = reference.GPT2_SMALL
    assert mistakes.gpt_variant(**gpt2, mistake="block.qkv_biases_missing") == 124_439_808 - 12 * 3 * 768
    assert mistakes.gpt_variant(**gpt2, mistake="blocks_only") == 12 * 7_087_872
    assert mistakes.gpt_variant(**gpt2, mistake="no_embeddings") == 12 * 7_087_872 + 2 * 768
    assert mistakes.gpt_variant(**gpt2, mistake=("lm_head_counted_when_tied", "lm_head_bias")) == (
        124_439_808 + 50257 * 768 + 50257)


@pytest.mark.parametrize("layer_norm", [False, True], ids=["noln", "ln"])
@pytest.mark.parametrize("bias", [False, True], ids=["nobias", "bias"])
@pytest.mark.parametrize("shape", BLOCK_SHAPES + [(768, 12, 4)], ids=lambda s: "d{}h{}r{}".format(*s))
def test_block_variant_none_matches_torch(shape, bias, layer_norm):
    d, h, r = shape
    assert mistakes.block_variant(d, h, r, bias, layer_norm) == reference.block_count(d, h, r, bias, layer_norm)


@pytest.mark.parametrize("tied", [True, False], ids=["tied", "untied"])
@pytest.mark.parametrize("shape", GPT_SHAPES + [(50257, 1024, 768, 12, 12, 4)],
                         ids=lambda s: "V{}T{}d{}L{}h{}r{}".format(*s))
def test_gpt_variant_none_matches_torch(shape, tied):
    assert mistakes.gpt_variant(*shape, tied) == reference.gpt_count(*shape, tied)


def test_share_variant_none_matches_torch():
    assert mistakes.share_variant(768, 12, 4) == pytest.approx(reference.mlp_share(768, 12, 4), abs=1e-15)
    block = reference.build_block(768, 12, 4, bias=True, layer_norm=True)
    assert mistakes.share_variant(mistake="with_bias_and_ln") == pytest.approx(
        reference.count(block.mlp) / reference.count(block), abs=1e-15)


#: Block mistakes that only show when the flag is False / True.
ONLY_WITHOUT = {"biases_included": "bias", "norms_included": "layer_norm"}
ONLY_WITH = {"biases_missing": "bias", "attention_biases_missing": "bias", "qkv_biases_missing": "bias",
             "norms_missing": "layer_norm", "layer_norm_half": "layer_norm"}


@pytest.mark.parametrize("seed", range(40))
def test_every_block_mistake_shows_on_every_drawn_configuration(seed):
    """Whatever the run's seed, the random configurations hide no mistake (so corpus expectations hold)."""
    rng = np.random.default_rng(seed)
    for bias in (False, True):
        for layer_norm in (False, True):
            config = checks.draw_block_config(rng, bias, layer_norm)
            assert config["d_model"] % config["n_heads"] == 0 and config["d_model"] <= 256
            correct = mistakes.block_variant(**config)
            for key in mistakes.BLOCK_MISTAKES:
                flags = dict(bias=bias, layer_norm=layer_norm)
                if key in ONLY_WITHOUT and flags[ONLY_WITHOUT[key]] or key in ONLY_WITH and not flags[ONLY_WITH[key]]:
                    assert mistakes.block_variant(**config, mistake=key) == correct, key
                else:
                    assert mistakes.block_variant(**config, mistake=key) != correct, (key, config)


@pytest.mark.parametrize("seed", range(40))
def test_every_gpt_mistake_shows_on_every_drawn_configuration(seed):
    rng = np.random.default_rng(seed)
    for tied in (True, False):
        config = checks.draw_gpt_config(rng, tied)
        assert config["vocab_size"] <= 5000 and config["d_model"] <= 256
        correct = mistakes.gpt_variant(**config)
        for key in mistakes.gpt_mistake_keys():
            block_key = key.removeprefix(mistakes.GPT_BLOCK_PREFIX)
            harmless = (key == "lm_head_counted_when_tied" and not tied
                        or key == "lm_head_missing_when_untied" and tied
                        or block_key in ONLY_WITHOUT)  # GPT blocks always have biases and norms
            got = mistakes.gpt_variant(**config, mistake=key)
            assert (got == correct) if harmless else (got != correct), (key, config)


def test_every_mistake_shows_at_the_lessons_configuration():
    lesson, lesson_with = dict(d_model=768, n_heads=12), dict(d_model=768, n_heads=12, bias=True, layer_norm=True)
    seen = set()
    for key in mistakes.BLOCK_MISTAKES:
        if key == "mlp_ratio_ignored":
            continue  # the lesson's ratio is 4: only the random configurations can show it
        if (mistakes.block_variant(**lesson, mistake=key) != mistakes.block_variant(**lesson)
                or mistakes.block_variant(**lesson_with, mistake=key) != mistakes.block_variant(**lesson_with)):
            seen.add(key)
    assert seen == set(mistakes.BLOCK_MISTAKES) - {"mlp_ratio_ignored"}
    gpt2 = reference.GPT2_SMALL
    for key in mistakes.GPT_MISTAKES:
        untied = dict(gpt2, tied=key != "lm_head_missing_when_untied")
        assert mistakes.gpt_variant(**untied, mistake=key) != mistakes.gpt_variant(**untied), key
    values = {key: mistakes.share_variant(mistake=key) for key in mistakes.SHARE_MISTAKES if key != "rounded"}
    assert all(abs(v - 2 / 3) > 1e-4 for v in values.values())


if __name__ == "__main__":
    if sys.argv[1:] != ["--write-stored-counts"]:
        sys.exit(f"usage: {sys.argv[0]} --write-stored-counts")
    print(f"wrote {write_stored_counts().relative_to(ROOT)}")
