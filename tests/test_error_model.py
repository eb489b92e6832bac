"""The learned error model that routes sentences like known mistakes to a person (grader/rubric/error_model.py)."""
from __future__ import annotations

import json
import sys
import tomllib
from pathlib import Path

import pytest

from grader import rubric
from grader.rubric import error_model

ROOT = Path(__file__).resolve().parent.parent
RUBRIC = ROOT / "exercises/exercise1/rubric.toml"
SENTENCES = ROOT / "tests/prose/sentences"
sys.path.insert(0, str(ROOT / "bench"))


@pytest.fixture(scope="module")
def model():
    m = error_model.for_rubric(RUBRIC)
    assert m is not None, "exercises/exercise1/error_model.json is missing: python bench/train_error_model.py"
    return m


def test_features_are_word_and_in_word_character_ngrams():
    words, chars = error_model.features("The heads, the HEADS run")
    assert words["the heads"] == 2 and words["heads"] == 2 and words["heads the heads"] == 1
    assert words["the heads run"] == 1 and "run the" not in words
    # characters inside each token padded by a space: " run " gives 3 + 2 + 1 n-grams of 3, 4, 5; no punctuation
    assert chars[" ru"] == 1 and chars["run "] == 1 and chars[" run "] == 1 and chars["un"] == 0
    assert chars["ads "] == 2 and "ds," not in chars


def test_register_words_and_lone_letters_are_no_features():
    words, chars = error_model.features("I think basically the q of GPT's head, honestly")
    assert set(words) == {"the", "of", "gpt", "head", "the of", "of gpt", "gpt head", "the of gpt", "of gpt head"}
    assert " q " not in chars and " s " not in chars
    # so a hedge in front changes nothing: the model scores what is said, not how casually
    m = error_model.for_rubric(RUBRIC)
    sentence = "each head sees all the tokens and works in a 64-dimensional subspace."
    assert m.score("Basically, I think " + sentence) == m.score(sentence.capitalize())


def test_score_follows_the_documented_formula():
    m = error_model.from_dict({"format": 3, "intercept": 0.5, "threshold": 0.8, "chars": {},
                               "words": {"heads": [2.0, 1.5], "run": [1.0, -1.0]}})
    # heads: tf 1 + ln 2, idf 2 -> 3.3863; run: 1 x 1; L2 norm 3.5309; 0.5 + (3.3863 x 1.5 - 1) / 3.5309
    assert m.score("heads run heads") == pytest.approx(1.6553669, abs=1e-6)
    assert m.probability("heads run heads") == pytest.approx(0.8396151, abs=1e-6)
    assert m.routed("heads run heads") and not m.routed("run")
    assert m.probability("nothing known here") == pytest.approx(0.6224593, abs=1e-6)  # the intercept alone


@pytest.mark.parametrize("data, words", [
    ({"format": 2, "intercept": 0, "threshold": 0.5, "words": {}, "chars": {}}, "format 2"),
    ({"format": 3, "intercept": 0, "threshold": 1.5, "words": {}, "chars": {}}, "not a score"),
    ({"format": 3, "intercept": 0, "threshold": 0.5, "words": {}}, "KeyError"),
    ({"format": 3, "intercept": 0, "threshold": 0.5, "words": {"a": [1.0]}, "chars": {}}, "IndexError"),
])
def test_a_bad_model_file_says_what_is_wrong(data, words):
    with pytest.raises(error_model.ErrorModelError, match=words) as info:
        error_model.from_dict(data, "m.json")
    assert "m.json" in str(info.value) and "train_error_model" in str(info.value)


def test_a_rubric_without_a_model_routes_nothing_and_a_broken_file_is_named(tmp_path):
    assert error_model.for_rubric(tmp_path / "rubric.toml") is None
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / error_model.FILE_NAME).write_text("{not json", encoding="utf-8")
    with pytest.raises(error_model.ErrorModelError, match="cannot read"):
        error_model.for_rubric(tmp_path / "sub" / "rubric.toml")


def test_plain_python_inference_agrees_with_scikit_learn(model):
    # scikit-learn's predict_proba for training sentences, stored when it fitted the model (bench/train_error_model.py)
    assert len(model.probes) >= 50
    worst = max(abs(model.probability(text) - p) for text, p in model.probes)
    assert worst < 1e-4, worst


def test_the_model_was_trained_on_the_current_dev_data(model):
    """The stored model was fitted on exactly the (sentence, label) pairs the training script reads today: a change to
    a dev file, to a dev answer or to what the rubric names in one needs a new model (python bench/train_error_model.py)."""
    import train_error_model as training
    data = training.dataset("exercise1")
    assert model.trained_on["pairs_sha256"] == training.pairs_sha256(data.texts, data.labels), "re-train the error model"
    assert not [k for k in data.files if "heldout" in k]  # held-out data is never trained on
    assert model.trained_on["files"] == data.files
    assert model.trained_on["max_routed"] == training.MAX_ROUTED


def _heldout(name):
    rows = tomllib.loads((SENTENCES / f"{name}.toml").read_text(encoding="utf-8"))["sentence"]
    return [s for s in rows if s["q"] != "ex4"]


def test_held_out_sentences_measured(model):
    """Sentences by writers the model never saw (heldout_s1, heldout_s2: never trained on, never tuned on), measured on
    2026-12-07 with the model of that day: 22 of 60 and 24 of 75 errors routed (19 of the 54 the rules neither name nor
    send to a person), 0 of 120 and 1 of 135 correct sentences. The red teams' correct sentences, written to sound like
    the errors: 5 of 188 and 3 of 210. Refitted with dev_router6-8 (2026-12-07): 26 and 32 errors, 1 and 0 correct
    sentences; the red teams' 5 and 3 (their errors, which the rules name, 9 of 45 and 22 -> 17 of 45). Refitted with
    dev_router9-10 and dev_redteam7-8, C = 8 by the dev-only rule (bench/train_error_model.py): 24 and 22 errors (fewer:
    measured once, not tuned), 0 and 0 correct sentences; the red teams' 5 and 4. Refitted with dev_redteam9-10 and the
    threshold at the whole 5 % budget of genuine answers (2026-12-08): 23 and 20 errors (fewer again: measured once,
    not tuned), 0 and 0 correct sentences; the red teams' 3 and 2."""
    measured = {"heldout_s1": (23, 0), "heldout_s2": (20, 0), "heldout_redteam3": (8, 3), "heldout_redteam6": (13, 2)}
    for name, (errors, correct) in measured.items():
        rows = _heldout(name)
        routed = [model.routed(s["text"]) for s in rows]
        assert sum(r for r, s in zip(routed, rows) if s["error"]) >= errors - 2, name
        assert sum(r for r, s in zip(routed, rows) if not s["error"]) <= correct + 2, name


ANSWER = """## 1. Multi-head attention: a team reading one contract

Multi-head attention is the core of every transformer layer. Several heads run in parallel on the same tokens.
{sentence}

## 2. The transformer block around it

A transformer block has two sub-layers. The MLP works on each token on its own.

## 3. Quick check: BERT vs GPT at the attention level

Both models are stacks of transformer blocks. BERT attends both ways; GPT uses a causal mask.
"""


def test_an_answer_goes_to_a_person_with_the_sentence_quoted_and_nothing_named():
    # an error in words no evidence of the rubric reads, from a reviewer's attack (never trained on)
    sentence = "The engineers decide in advance which head handles grammar and which handles names."
    rub = rubric.load(RUBRIC)
    a = rubric.evaluate(rub, ANSWER.format(sentence=sentence))
    reasons = [r for r in a.needs_review if "learned model" in r]
    assert len(reasons) == 1 and reasons[0].startswith("unsure: ") and f'"{sentence}"' in reasons[0]
    assert not [m for m in a.misconceptions.values() if m.found]  # routed, not named: no point is taken
    plain = rubric.evaluate(rub, ANSWER.format(sentence=""))
    assert a.total == plain.total and not [r for r in plain.needs_review if "learned model" in r]
    reference = rubric.evaluate(rub, (ROOT / "solutions/exercise1/answer.md").read_text(encoding="utf-8"))
    assert not [r for r in reference.needs_review if "learned model" in r]


def test_a_sentence_that_earns_a_line_is_scored_too():
    # it earns "heads in parallel" ("side by side") and says each head is full width: a reviewer's case
    sentence = "It's like running 8 full copies of single-head attention side by side, each one at the model's full size."
    text = ANSWER.format(sentence=sentence).replace("Several heads run in parallel on the same tokens.\n", "")
    a = rubric.evaluate(rubric.load(RUBRIC), text)
    assert a.lines["heads_parallel"].quotes == [sentence]
    assert [r for r in a.needs_review if "learned model" in r and sentence in r]


def test_the_stored_model_is_valid_json_of_the_current_format():
    data = json.loads((RUBRIC.parent / error_model.FILE_NAME).read_text(encoding="utf-8"))
    assert data["format"] == error_model.FORMAT and len(data["words"]) > 1000 and len(data["chars"]) > 1000


def test_a_broken_model_file_costs_one_reason_never_the_grade(tmp_path):
    for name in ("rubric.toml", "exercise.toml"):
        (tmp_path / name).write_bytes((RUBRIC.parent / name).read_bytes())
    (tmp_path / error_model.FILE_NAME).write_text('{"format": 3}', encoding="utf-8")
    text = ANSWER.format(sentence="It's like running 8 full copies of single-head attention side by side, each one at "
                                  "the model's full size.")
    good = rubric.evaluate(rubric.load(RUBRIC), text)
    broken = rubric.evaluate(rubric.load(tmp_path / "rubric.toml"), text)
    assert broken.total == good.total and broken.lines.keys() == good.lines.keys()
    reasons = [r for r in broken.needs_review if "error model" in r]
    assert len(reasons) == 1 and reasons[0].startswith("grader: the error model could not be read")
    assert "KeyError" in reasons[0] and "train_error_model" in reasons[0]


def test_at_most_two_sentences_are_quoted_and_the_rest_counted():
    sentences = ("The engineers decide in advance which head handles grammar and which handles names. Each head is "
                 "programmed by the designers to look for one specific kind of relation. The normalisation computes "
                 "its mean over the positions of the sequence for every channel.")  # a reviewer's errors, never trained on
    a = rubric.evaluate(rubric.load(RUBRIC), ANSWER.format(sentence=sentences))
    reasons = [r for r in a.needs_review if "learned model" in r]
    assert len(reasons) == 2 and reasons[-1].endswith(" (and 1 more sentence)") and "(and" not in reasons[0]
