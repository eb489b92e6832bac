"""Exercise 2: which mistake a wrong count is named after (hidden/naming.py), and the properties the
checks report (properties.py).

- The whole table at once: no two candidates (single mistakes and pairs) give the same counts on the
  naming configurations, so a function is never named after a mistake it does not make.
- Each candidate, played by a function that makes exactly that mistake, is named after it; functions that
  make an unknown mistake, or fail on a probe configuration, are named after nothing.
- One number (a constant): the lesson's counts each mistake gives, and the public wrong numbers.
- Each property: silent on a correct count, and the right finding, with the numbers, on a broken one.
"""
from __future__ import annotations

import sys

import numpy as np
import pytest

from conftest import ROOT

if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from exercises.exercise2.tests import checks, properties, reference  # noqa: E402
from exercises.exercise2.tests.hidden import mistakes, naming  # noqa: E402

FUNCTIONS = ("block_params", "gpt_params")
VARIANT = {"block_params": mistakes.block_variant, "gpt_params": mistakes.gpt_variant}
LESSON = dict(reference.LESSON_BLOCK)
LESSON_WITH = dict(LESSON, bias=True, layer_norm=True)
GPT2 = dict(reference.GPT2_SMALL)


def _formula(function: str, keys=None):
    """A function that makes exactly the mistakes ``keys``, as ``own(config)``."""
    return lambda config: VARIANT[function](**config, mistake=keys)


def _failing_config(function: str, candidate: naming.Candidate) -> dict:
    """A configuration the checks draw on which ``candidate`` is wrong (every candidate is, on some)."""
    rng = np.random.default_rng(7)
    for i in range(200):
        flags = dict(bias=bool(i % 2), layer_norm=bool(i // 2 % 2))
        config = (checks.draw_block_config(rng, **flags) if function == "block_params"
                  else checks.draw_gpt_config(rng, tied=bool(i % 2)))
        if candidate.count(config) != VARIANT[function](**config):
            return config
    raise AssertionError(f"{candidate.keys} is never wrong")


# ---------------------------------------------------------------------------------- the whole table

@pytest.mark.parametrize("function", FUNCTIONS)
def test_no_two_candidates_give_the_same_counts_on_the_naming_configurations(function):
    """Pairwise over the whole table, single mistakes and pairs, and against the correct count."""
    probes = naming.probes(function)
    assert all(p["d_model"] % p["n_heads"] == 0 and p["n_heads"] >= 3 and p["mlp_ratio"] not in (1, 2, 4)
               for p in probes)
    seen = {tuple(VARIANT[function](**p) for p in probes): ("correct",)}
    for candidate in naming.candidates(function):
        counts = tuple(candidate.count(p) for p in probes)
        assert counts not in seen, f"{candidate.keys} and {seen[counts]} give the same counts"
        seen[counts] = candidate.keys
    singles = [c for c in naming.candidates(function) if len(c.keys) == 1]
    assert len(naming.candidates(function)) > 3 * len(singles)  # the pairs are there


def test_one_formula_under_two_descriptions_is_what_reasoning_says():
    """Key sets that are one formula (the same count everywhere), found from the formulas, are exactly those
    we expect: for a block, W_O left out with either kind of attention bias (the same thing: without W_O
    the attention's biases are Q, K and V's) and the MLP one way either way without biases (one sentence);
    for a GPT, the same in every block, "no biases and no norms in the blocks" as one mistake or two, and
    the ones that cannot be told apart: a GPT's blocks have biases and layer norms, so "no attention
    biases" and "no layer norms" are both 4·d per block, alone or with any other mistake."""
    def classes(function):
        return {(c.keys, c.same_formula): c.nameable for c in naming.candidates(function) if c.same_formula}

    assert classes("block_params") == {
        (("no_out_proj", "attention_biases_missing"), (("no_out_proj", "qkv_biases_missing"),)): True,
        (("mlp_up_only", "biases_missing"), (("mlp_down_only", "biases_missing"),)): True,
    }
    gpt = classes("gpt_params")
    nameable = {k for k, v in gpt.items() if v}
    assert nameable == {
        (("blocks_without_bias_ln",), (("block.biases_missing", "block.norms_missing"),)),
        (("block.no_out_proj", "block.attention_biases_missing"), (("block.no_out_proj", "block.qkv_biases_missing"),)),
        (("block.mlp_up_only", "block.biases_missing"), (("block.mlp_down_only", "block.biases_missing"),)),
        (("blocks_without_bias_ln", "block.mlp_up_only"), (("blocks_without_bias_ln", "block.mlp_down_only"),)),
    }
    swap = {"block.attention_biases_missing": "block.norms_missing"}
    for keys, others in set(gpt) - nameable:
        assert others == (tuple(swap.get(k, k) for k in keys),), keys


@pytest.mark.parametrize("function", FUNCTIONS)
def test_every_candidate_is_named_from_a_function_that_makes_it(function):
    """A function that makes exactly a candidate's mistakes is named after them (by their sentence), on a
    failing configuration the checks could draw; one that cannot be told from another by its counts is
    named after nothing, unless the student's block_params says which (then after that one)."""
    for candidate in naming.candidates(function):
        config = _failing_config(function, candidate)
        own = _formula(function, candidate.keys)
        named = naming.name_function(function, config, candidate.count(config), own)
        if candidate.nameable:
            assert named is not None and named.message == candidate.message, candidate.keys
            continue
        assert named is None, candidate.keys
        for keys in (candidate.keys, *candidate.same_formula):
            block_keys = tuple(k.removeprefix(mistakes.GPT_BLOCK_PREFIX) for k in keys
                               if k.startswith(mistakes.GPT_BLOCK_PREFIX))
            told = naming.name_function(function, config, candidate.count(config), own,
                                        _formula("block_params", block_keys))
            assert told is not None and told.keys == keys, keys


@pytest.mark.parametrize("name, block_params", [
    ("one too many", lambda c: mistakes.block_variant(**c) + 1),
    ("MLP biases 2·d (d each)",
     lambda c: mistakes.block_variant(**c) - (c["mlp_ratio"] - 1) * c["d_model"] * c["bias"]),
    ("one W_O per head", lambda c: mistakes.block_variant(**c) + (c["n_heads"] - 1) * c["d_model"] ** 2),
    ("attention 4·d² + h", lambda c: mistakes.block_variant(**c) + c["n_heads"]),
])
def test_a_function_with_an_unknown_mistake_is_named_after_nothing(name, block_params):
    for config in (LESSON_WITH, dict(d_model=96, n_heads=4, mlp_ratio=4, bias=True, layer_norm=True),
                   dict(d_model=6, n_heads=2, mlp_ratio=3, bias=True, layer_norm=False)):
        assert naming.name_function("block_params", config, block_params(config), block_params) is None, config


def test_a_function_that_fails_on_a_probe_configuration_is_named_after_nothing():
    no_out_proj = _formula("block_params", "no_out_proj")
    assert naming.name_function("block_params", LESSON, no_out_proj(LESSON), no_out_proj).keys == ("no_out_proj",)

    def fails_once(config):
        return None if config == naming.BLOCK_PROBES[-1] else no_out_proj(config)

    assert naming.name_function("block_params", LESSON, no_out_proj(LESSON), fails_once) is None


def test_the_issues_collision_at_768_is_told_apart():
    """At d_model 768 the attention's biases and the layer norms are both 3,072 short: the function's other
    configurations tell them apart (the d_model 6 collision is the unknown-mistake test above)."""
    for key in ("attention_biases_missing", "norms_missing"):
        own = _formula("block_params", key)
        assert own(LESSON_WITH) == 7_087_872 - 3_072
        assert naming.name_function("block_params", LESSON_WITH, own(LESSON_WITH), own).keys == (key,)
        assert naming.name_count("block_params", LESSON_WITH, own(LESSON_WITH)) is None  # one number cannot tell


def _overwriting_block(config):
    """A block_params whose layer norms overwrite its biases (``extra = ...`` instead of ``+=``)."""
    d, r = config["d_model"], config["mlp_ratio"]
    extra = 0
    if config["bias"]:
        extra = 4 * d + r * d + d
    if config["layer_norm"]:
        extra = 4 * d
    return 12 * d * d + 2 * (r - 4) * d * d + extra


def test_a_gpt_is_named_after_a_block_mistake_only_when_its_block_params_agrees():
    """gpt_params adding up a block_params whose norms overwrite its biases counts exactly "no biases in any
    block" (a GPT's blocks have bias=True and layer_norm=True), but its block_params does not ignore bias=True:
    nothing is named. The same GPT count is named when block_params is correct (gpt_params left the biases
    out itself) or is named after that mistake; not when block_params is named after another one."""
    def gpt(c):  # the correct GPT count, with the student's block_params in every layer
        block = dict(d_model=c["d_model"], n_heads=c["n_heads"], mlp_ratio=c["mlp_ratio"], bias=True, layer_norm=True)
        return mistakes.gpt_variant(**c) + c["n_layer"] * (_overwriting_block(block) - mistakes.block_variant(**block))

    no_biases = _formula("gpt_params", "block.biases_missing")
    assert all(gpt(c) == no_biases(c) for c in naming.GPT_PROBES + (GPT2,))
    assert naming.name_function("block_params", LESSON_WITH, _overwriting_block(LESSON_WITH), _overwriting_block) is None
    assert naming.name_function("gpt_params", GPT2, gpt(GPT2), gpt, _overwriting_block) is None
    for block, named in ((_block(), ("block.biases_missing",)),
                         (_formula("block_params", "biases_missing"), ("block.biases_missing",)),
                         (_formula("block_params", "no_out_proj"), None)):
        got = naming.name_function("gpt_params", GPT2, no_biases(GPT2), no_biases, block)
        assert (got.keys if got else None) == named


@pytest.mark.parametrize("share, key", [
    (0.67, "rounded"), (0.667, "rounded"), (0.6666, "rounded"), (0.666667, "rounded"),
    (0.6666666865348816, "rounded"),            # 2/3 in float32
    (66.67, "percent"), (67, "percent"), (66.6, "percent"),
    (1 / 3, "attention_share"), (2.0, "mlp_over_attention"), (0.5, "mlp_one_way"),
    (4_722_432 / 7_084_800, None),              # bias, no norms: (8·768² + 5·768) / (12·768² + 9·768)
    (0.6669, None), (8 / 11, None), (0.7, None), (1.0, None), (0.33, None),
])
def test_a_share_is_named_rounded_only_when_it_is_two_thirds_written_shorter(share, key):
    """A share near 2/3 is not a rounded 2/3: only 2/3 rounded or cut to 2 to 9 digits (or float32) is."""
    assert naming.name_share(share, LESSON, checks.SHARE_ATOL) == key


# ------------------------------------------------------------------------------------ one number

def test_the_lessons_constants_each_name_their_mistake_unless_one_number_cannot_tell():
    """Every single mistake's count at the lesson's configurations, named from that number alone. Not named:
    where two mistakes give the same number there ("no attention biases" and "no layer norms" are both
    -4·d, in a block and in each of GPT-2's; the MLP down only, with biases, is the MLP up only without the
    Q, K, V biases)."""
    not_named = {("with", "attention_biases_missing"), ("with", "norms_missing"), ("with", "mlp_down_only"),
                 ("gpt2", "block.attention_biases_missing"), ("gpt2", "block.norms_missing"),
                 ("gpt2", "block.mlp_down_only")}
    seen = set()
    for where, function, config in (("bare", "block_params", LESSON), ("with", "block_params", LESSON_WITH),
                                    ("gpt2", "gpt_params", GPT2)):
        correct = VARIANT[function](**config)
        for key in (mistakes.BLOCK_MISTAKES if function == "block_params" else mistakes.gpt_mistake_keys()):
            got = VARIANT[function](**config, mistake=key)
            if got == correct:
                continue  # the mistake does not show here (e.g. mlp_ratio_ignored: the lesson's ratio is 4)
            named = naming.name_count(function, config, got)
            if (where, key) in not_named:
                assert named is None, (where, key)
                seen.add((where, key))
            else:
                sentence = mistakes.BLOCK_MISTAKES[key] if function == "block_params" else mistakes.gpt_message(key)
                assert named is not None and named.message == sentence, (where, key)
    assert seen == not_named


@pytest.mark.parametrize("function, config, number, keys", [
    ("block_params", LESSON_WITH, 7_085_568, ("qkv_biases_missing",)),           # 7,087,872 - 3·768
    ("gpt_params", GPT2, 124_412_160, ("block.qkv_biases_missing",)),            # - 12 · 3·768
    ("gpt_params", GPT2, 85_054_464, ("blocks_only",)),                          # 12 · 7,087,872
    ("gpt_params", GPT2, 85_056_000, ("no_embeddings",)),                        # + ln_f 1,536
    ("gpt_params", GPT2, 123_653_376, ("no_position_embedding",)),               # - 1024·768
    ("gpt_params", GPT2, 163_037_184, ("lm_head_counted_when_tied",)),           # + 50257·768
    ("gpt_params", GPT2, 124_490_065, ("lm_head_bias",)),                        # + 50257
    ("gpt_params", GPT2, 163_087_441, ("lm_head_counted_when_tied", "lm_head_bias")),  # a full Linear(768, V)
    ("gpt_params", GPT2, 124_439_809, None),
])
def test_public_wrong_numbers_are_named(function, config, number, keys):
    named = naming.name_count(function, config, number)
    assert (named.keys if named else None) == keys
    if keys and len(keys) == 2:
        assert named.message.startswith("two mistakes together: ")


# ------------------------------------------------------------------------------------ properties

def _block(broken=lambda c: 0):
    """A block_params that is torch's count plus ``broken(config)``."""
    return lambda c: reference.block_count(**c) + broken(c)


SMALL = dict(d_model=40, n_heads=5, mlp_ratio=4, bias=True, layer_norm=True)


def test_a_correct_count_breaks_no_property():
    assert properties.block_findings(_block(), SMALL) == []
    assert properties.block_findings(_block(), dict(d_model=42, n_heads=7)) == []
    gpt = dict(vocab_size=100, n_ctx=16, d_model=24, n_layer=3, n_heads=4, mlp_ratio=4, tied=False)
    assert properties.gpt_findings(lambda c: reference.gpt_count(**c), _block(), gpt) == []


@pytest.mark.parametrize("broken, probe, numbers", [
    (lambda c: (c["n_heads"] - 1) * c["d_model"] ** 2, "heads", "26,120 with n_heads=5 and 19,720 with n_heads=1"),
    (lambda c: -2 * c["d_model"] * c["layer_norm"], "layer_norm", "adds 80 to your count (d_model=40)"),
    (lambda c: -4 * c["d_model"] * c["bias"], "bias", "adds 200 to your count (d_model=40, mlp_ratio=4); "),
    (lambda c: -c["mlp_ratio"] * c["d_model"] ** 2, "mlp_ratio", "adds 1,600 to your count"),
    (lambda c: -c["d_model"] ** 2, "attention", "leaves 4,800 for the attention"),
])
def test_a_broken_block_count_gets_the_property_it_breaks(broken, probe, numbers):
    """d_model 40, 5 heads, ratio 4, by hand: 4·d = 160, (r + 5)·d = 360, 2·d² = 3,200, 4·d² = 6,400."""
    found = properties.block_findings(_block(broken), SMALL)
    assert [f.probe for f in found] == [probe]
    assert numbers in found[0].observation, found[0].observation


def test_a_count_that_ignores_d_model_gets_only_that():
    found = properties.block_findings(lambda c: 7_077_888, SMALL)
    assert [(f.probe, f.observation) for f in found] == [("fixed", "block_params gives 7,077,888 for d_model=40 and "
                                                          "for d_model=80: your count does not change with d_model")]


GPT_SMALL = dict(vocab_size=100, n_ctx=16, d_model=24, n_layer=3, n_heads=4, mlp_ratio=4, tied=True)


@pytest.mark.parametrize("keys, probes, numbers", [
    # V·d counted twice: untying adds nothing, and a token adds two rows.
    ("lm_head_counted_when_tied", ["tied", "vocab"], "tied=False adds 0 to your count"),
    ("lm_head_bias", ["vocab"], "adds 25 to your count (tied)"),
    ("no_position_embedding", ["n_ctx"], "n_ctx=17 instead of 16 adds 0"),
    ("blocks_without_bias_ln", ["n_layer"], "adds 6,912 to your count; your block_params(d_model=24, n_heads=4, "
                                            "mlp_ratio=4, bias=True, layer_norm=True) gives 7,224"),
    ("no_final_layer_norm", ["ln_f"], "your count has 0 (tied, d_model=24)"),
    # The student's block_params makes the same mistake, so each layer adds one of their blocks.
    ("block.per_head_full_size", ["heads"], "46,104 with n_heads=4 and 24,504 with n_heads=1"),
])
def test_a_broken_gpt_count_gets_the_property_it_breaks(keys, probes, numbers):
    """vocab 100, n_ctx 16, d_model 24, 3 layers, 4 heads, by hand: a block with biases and norms is
    12·576 + 13·24 = 7,224, without them 6,912; the GPT 116·24 + 3·7,224 + 48 = 24,504; with four heads of
    full size each block's attention has 3·4·(576 + 24) = 7,200 more: 24,504 + 3·7,200 = 46,104."""
    block_keys = keys.removeprefix(mistakes.GPT_BLOCK_PREFIX) if keys.startswith(mistakes.GPT_BLOCK_PREFIX) else None
    found = properties.gpt_findings(_formula("gpt_params", keys), _formula("block_params", block_keys), GPT_SMALL)
    assert [f.probe for f in found] == probes
    assert numbers in found[0].observation, found[0].observation


def test_a_property_that_cannot_be_measured_is_not_reported():
    assert properties.block_findings(lambda c: None, SMALL) == []
    assert properties.gpt_findings(lambda c: None, _block(), GPT_SMALL) == []
    only_here = lambda c: reference.block_count(**c) + 1 if c == SMALL else None  # noqa: E731
    assert properties.block_findings(only_here, SMALL) == []


def test_a_default_that_is_not_the_contracts_is_found():
    """block_params(40, 5) with defaults bias=True, layer_norm=True: by hand 12·40² = 19,200 bare, + (4 + 5)·40
    biases + 4·40 norms = 19,720."""
    wrong_defaults = lambda c: reference.block_count(**{**dict(mlp_ratio=4, bias=True, layer_norm=True), **c})  # noqa: E731
    found = properties.block_findings(wrong_defaults, dict(d_model=40, n_heads=5))
    assert [(f.probe, f.observation) for f in found] == [("defaults", (
        "block_params(d_model=40, n_heads=5) gives 19,720, and 19,200 with mlp_ratio=4, bias=False, layer_norm=False "
        "written out: the defaults must be the contract's (mlp_ratio=4, bias=False, layer_norm=False)"))]
    assert properties.block_findings(_block(), dict(d_model=40, n_heads=5)) == []


def test_layer_norms_that_replace_the_biases_are_found_as_such():
    """The norms overwrite the biases (d_model 40, ratio 4): layer_norm=True adds 4·40 = 160 without biases and
    160 - 360 = -200 with them; bias=True (without norms) adds the right (4 + 5)·40 = 360."""
    found = properties.block_findings(_overwriting_block, SMALL)
    assert [f.probe for f in found] == ["layer_norm"]
    assert found[0].component == "biases and layer norms"
    assert "adds 160 to your count with bias=False and -200 with bias=True (d_model=40)" in found[0].observation


def test_a_gpt_one_block_short_is_found_as_blocks_not_as_the_final_norm():
    """range(1, n_layer): one block of 7,224 (by hand, docstring above) too few; the final norm is right."""
    def one_short(c):
        block = dict(d_model=c["d_model"], n_heads=c["n_heads"], mlp_ratio=c["mlp_ratio"], bias=True, layer_norm=True)
        return reference.gpt_count(**c) - reference.block_count(**block)

    found = properties.gpt_findings(one_short, _block(), GPT_SMALL)
    assert [(f.probe, f.component) for f in found] == [("n_layer", "blocks")]
    assert found[0].observation == ("your count is 7,224 less than the embeddings, 3 of your blocks (7,224 each) and "
                                    "the final layer norm (tied, d_model=24): 1 block too few; count exactly n_layer "
                                    "blocks")
