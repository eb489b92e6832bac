"""Exercise 2 (derive the parameter count): the grader's own tests.

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
- Grading: the reference solution gets full marks, the skeleton zero without grader errors, and every
  known-wrong corpus case loses the points and gets the diagnosis its ``expected.toml`` says, and no check
  names a mistake the case does not make (its ``named`` list, written by hand from its derive.py).
- The hidden checks never type in an expected number, and draw at least 20 random configurations.

Naming and the properties have their own file (``test_exercise2_naming.py``); the student bundle is tested
in ``test_release.py``.
"""
from __future__ import annotations

import importlib.util
import inspect
import re
import sys
import tomllib
from pathlib import Path

import numpy as np
import pytest
import torch
from torch import nn

from conftest import ROOT
from grader import corpus

if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))  # the exercise's test helpers import as exercises.exercise2.tests.*

from exercises.exercise2.tests import checks, reference  # noqa: E402
from exercises.exercise2.tests.hidden import mistakes  # noqa: E402
from grader.plugin import CheckFailure  # noqa: E402
from grader.sandbox.wire import Unsupported  # noqa: E402

EX2 = ROOT / "exercises" / "exercise2"


def _load(path: Path, name: str):
    """Import a module from a file path (solution and skeleton folders are not packages)."""
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


solution = _load(ROOT / "solutions" / "exercise2" / "derive.py", "ex2_solution")
skeleton = _load(EX2 / "skeleton" / "derive.py", "ex2_skeleton")

# (d_model, n_heads, mlp_ratio): lesson-like, one head, d_head = 1, odd sizes, ratio 1
BLOCK_SHAPES = [(24, 4, 4), (8, 1, 2), (8, 8, 3), (30, 5, 1), (48, 6, 8), (20, 4, 5)]
GPT_SHAPES = [(50, 8, 16, 1, 2, 4), (311, 64, 24, 3, 4, 3), (1000, 128, 30, 2, 5, 6)]


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


# ---------------------------------------------------------------------------------- types

def test_as_count_accepts_ints_and_numpy_integers():
    assert checks.as_count(7, "x", 7) == 7
    assert checks.as_count(np.int64(7), "x", 7) == 7
    assert type(checks.as_count(np.uint32(7), "x", 7)) is int


@pytest.mark.parametrize("value, text", [
    (7.0, "is the float 7.0; its value is right, but"),
    (np.float64(8.0), "its value is wrong too (expected 7)"),
    (True, "is True, a bool"),
    ("7,077,888", "is the string '7,077,888'"),
    (None, "is None"),
    (np.zeros(3), "a NumPy array of shape (3,)"),
    (Unsupported("Fraction"), "is a Fraction object"),
    ([7], "is a list"),
])
def test_as_count_rejects_everything_else_with_a_clear_message(value, text):
    with pytest.raises(CheckFailure) as info:
        checks.as_count(value, "x", 7)
    assert text in info.value.feedback


def test_as_share_reads_numbers_and_rejects_the_rest():
    assert checks.as_share(2, "s") == 2.0 and checks.as_share(np.float32(0.5), "s") == 0.5
    for value in (None, "2/3", True, Unsupported("Fraction")):
        with pytest.raises(CheckFailure, match="expected one number between 0 and 1"):
            checks.as_share(value, "s")


# ------------------------------------------------------------------ solution and skeleton

@pytest.mark.parametrize("layer_norm", [False, True], ids=["noln", "ln"])
@pytest.mark.parametrize("bias", [False, True], ids=["nobias", "bias"])
@pytest.mark.parametrize("shape", BLOCK_SHAPES, ids=lambda s: "d{}h{}r{}".format(*s))
def test_solution_block_params_matches_torch(shape, bias, layer_norm):
    d, h, r = shape
    got = solution.block_params(d, h, r, bias, layer_norm)
    assert type(got) is int and got == reference.block_count(d, h, r, bias, layer_norm)


@pytest.mark.parametrize("tied", [True, False], ids=["tied", "untied"])
@pytest.mark.parametrize("shape", GPT_SHAPES, ids=lambda s: "V{}T{}d{}L{}h{}r{}".format(*s))
def test_solution_gpt_params_matches_torch(shape, tied):
    got = solution.gpt_params(*shape, tied=tied)
    assert type(got) is int and got == reference.gpt_count(*shape, tied)


def test_solution_constants_are_the_lessons_numbers():
    assert solution.BLOCK_PARAMS_NO_BIAS == 7_077_888
    assert solution.BLOCK_PARAMS_WITH_BIAS_AND_LN == 7_087_872
    assert solution.GPT2_SMALL_PARAMS == 124_439_808
    assert solution.MLP_SHARE == pytest.approx(2 / 3, abs=1e-15)
    assert all(type(getattr(solution, n)) is int for n in checks.CONSTANTS[:3])


def test_skeleton_has_the_solutions_signatures_and_no_answers():
    for name in checks.FUNCTIONS:
        sk, sol = getattr(skeleton, name), getattr(solution, name)
        assert inspect.signature(sk) == inspect.signature(sol)
        assert list(inspect.signature(sk).parameters) == checks.FUNCTIONS[name]
        assert sk.__doc__ and sol.__doc__
        with pytest.raises(NotImplementedError):
            sk(*[1] * len(checks.FUNCTIONS[name]))
    for name in checks.CONSTANTS:
        assert getattr(skeleton, name) is None and hasattr(solution, name)


def test_skeleton_and_solution_define_exactly_the_contract():
    for module in (skeleton, solution):
        public = {k for k, v in vars(module).items() if not k.startswith("_") and not inspect.ismodule(v)}
        assert public == set(checks.FUNCTIONS) | set(checks.CONSTANTS), module.__name__


def test_no_expected_number_is_typed_into_the_checks():
    """The judge's truth is torch's count: the published numbers appear in no check file."""
    numbers = ["7077888", "7087872", "124439808", "2359296", "4718592", "163037184"]
    for path in sorted((EX2 / "tests").rglob("*.py")):
        digits = re.sub(r"(?<=\d)[_,](?=\d)", "", path.read_text(encoding="utf-8"))
        for number in numbers:
            assert number not in digits, f"{path.relative_to(ROOT)} types in {number}"


# ------------------------------------------------------------------------------ grading

def test_reference_solution_gets_full_marks(grade2):
    result = grade2(ROOT / "solutions" / "exercise2")
    failed = [(c.name, c.status, c.feedback) for c in result.checks if c.status != "passed"]
    assert failed == []
    assert result.score == result.max_score == 23
    random_items = [c for c in result.checks if c.name.startswith(("test_block_params_random[",
                                                                  "test_gpt_params_random["))]
    assert len(random_items) >= 20 and all(c.hidden for c in random_items)


def test_skeleton_gets_zero_without_crashing(grade2):
    result = grade2(EX2 / "skeleton")
    assert result.score == 0
    assert result.grader_errors == []
    assert len([c for c in result.checks if "not implemented yet" in c.feedback]) >= 20
    assert len([c for c in result.checks if "replace the skeleton's None" in c.feedback]) == 3


CASES = corpus.cases("exercise2")


def test_the_corpus_has_a_case_for_every_named_mistake():
    diagnoses = [case.diagnosis.lower() for case in CASES if case.diagnosis]
    sentences = ([("block", k, m) for k, m in mistakes.BLOCK_MISTAKES.items()]
                 + [("gpt", k, m) for k, m in mistakes.GPT_MISTAKES.items()]
                 + [("share", k, m) for k, m in mistakes.SHARE_MISTAKES.items()]
                 + [("heads", "note", checks.HEADS_NOTE), ("fixed", "note", checks.FIXED_NOTE)])
    missing = [(kind, key) for kind, key, sentence in sentences
               if not any(d in sentence.lower() for d in diagnoses)]
    assert missing == []
    assert len(CASES) >= 30


def _expected(case: corpus.Case) -> dict:
    """The case's expected.toml: besides corpus.Case's fields, ``named`` (the mistakes it makes, keys of
    mistakes.py: a block key, ``block.KEY`` where gpt_params runs the faulty block_params, a GPT key,
    ``share.KEY``) and ``notes`` (the measured notes it may get: "heads", "fixed")."""
    return tomllib.loads((case.folder / "expected.toml").read_text(encoding="utf-8"))


def _sentence(key: str) -> str:
    """What the student is told for the mistake ``key`` (two keys with one sentence are one name)."""
    if key.startswith("share."):
        return mistakes.SHARE_MISTAKES[key.removeprefix("share.")]
    return mistakes.gpt_message(key) if key in mistakes.GPT_MISTAKES or "." in key else mistakes.BLOCK_MISTAKES[key]


def wrong_names(case: corpus.Case, result) -> list[str]:
    """Every diagnosis of ``result`` that names something the case does not do: a known mistake whose sentence
    is none of the case's ``named`` mistakes', a note the case does not allow, or a diagnosis the checks
    gave without saying what it names (details "mistakes" / "notes")."""
    expected = _expected(case)
    allowed = {_sentence(k) for k in expected.get("named", [])}
    notes = set(expected.get("notes", []))
    wrong = []
    for check in result.checks:
        if not check.diagnosis:
            continue
        keys, said = check.details.get("mistakes", []), check.details.get("notes", [])
        if not keys and not said:
            wrong.append(f"{check.name}: unaccounted diagnosis {check.diagnosis!r}")
        wrong += [f"{check.name}: names {k}" for k in keys if _sentence(k) not in allowed]
        wrong += [f"{check.name}: notes {n}" for n in said if n not in notes]
    return wrong


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_corpus_case(grade2, case):
    """The case loses the points its expected.toml says, gets its diagnosis, and no check names a mistake it
    does not make (a wrong name is worse than none)."""
    result = grade2(case.folder)
    assert corpus.verify(case, result) == []
    assert wrong_names(case, result) == []


def test_every_corpus_case_says_what_it_names():
    """Each case lists the mistakes it makes (by hand, from its derive.py); a case with a diagnosis names some."""
    for case in CASES:
        expected = _expected(case)
        assert "named" in expected, case.name
        for key in expected["named"]:
            _sentence(key)  # a known key
        assert set(expected.get("notes", [])) <= {"heads", "fixed"}, case.name
        if case.diagnosis:
            assert expected["named"] or expected.get("notes"), case.name


if __name__ == "__main__":
    if sys.argv[1:] != ["--write-stored-counts"]:
        sys.exit(f"usage: {sys.argv[0]} --write-stored-counts")
    print(f"wrote {write_stored_counts().relative_to(ROOT)}")
