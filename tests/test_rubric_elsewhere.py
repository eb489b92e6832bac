"""A sentence about another model, or about an output head, gets no error named (grader/rubric/elsewhere.py): it is
sent to a person instead, and concept lines are not touched."""
from __future__ import annotations

from pathlib import Path

import pytest

from grader import rubric
from grader.rubric.elsewhere import about_elsewhere

ROOT = Path(__file__).resolve().parent.parent
RUBRIC = rubric.load(ROOT / "exercises/exercise1/rubric.toml")


def answer(q1: str = "Several heads run in parallel on the tokens.", q2: str = "The MLP works on each token on its own.",
           q3: str = "BERT attends both ways; GPT uses a causal mask.") -> str:
    return (f"## 1\n\nMulti-head attention is the core of every transformer layer. {q1}\n\n"
            f"## 2\n\nA transformer block has two sub-layers. {q2}\n\n## 3\n\n{q3}\n")


@pytest.mark.parametrize("sentence, expected", [
    ("In Llama 2 70B groups of eight heads share keys.", "Llama"),
    ("In Falcon-7B each head uses the same keys.", "Falcon-7B"),
    ("Gemma 2B has one key-value head.", "Gemma"),
    ("An LSTM has no layer norm.", "LSTM"),
    ("In a convolutional network each filter sees a patch.", "convolutional network"),
    ("With grouped-query attention the cache shrinks.", "grouped-query attention"),
    ("The LM head maps each vector to logits.", "LM head"),
    ("The classifier head on top of [CLS] predicts the class.", "classifier head"),
    # the lesson's own models and sizes are not elsewhere
    ("GPT-2 1.5B has 48 layers of 25 heads.", ""),
    ("The 124M GPT-2 has 12 heads per layer.", ""),
    ("BERT-large has 16 heads of 64 dimensions.", ""),
    ("Each attention head of the block reads every token.", ""),
    ("The heads ahead of the MLP are parallel.", ""),
    ("We opt for pre-norm and clip the gradient, and the patterns bloom.", ""),  # English words, not OPT or CLIP
])
def test_about_elsewhere_finds_other_models_and_output_heads(sentence, expected):
    assert about_elsewhere(sentence) == expected


GUARDED = [
    ("q1", "In Falcon-7B, all the heads share the same key and value projections.", "heads_share_qkv"),
    ("q1", "In PaLM, all the heads share a single key and value projection.", "heads_share_qkv"),
    ("q1", "The engineers give the LM head its job: mapping each vector to logits.", "heads_assigned_roles"),
    ("q1", "In Longformer each head only sees a window of 512 tokens.", "heads_split_tokens"),
    # exercise 1's [naming] elsewhere: training and analysis, not the forward computation its errors are about
    ("q1", "In the backward pass the gradient goes through W_O before the concatenation, and is then cut back into "
           "one piece per head.", "wo_before_concat"),
    ("q1", "The heads share one weight decay setting in AdamW, like every other matrix.", "heads_share_qkv"),
]


@pytest.mark.parametrize("part, sentence, error", GUARDED)
def test_an_error_said_of_another_model_is_not_named_but_sent_to_a_person(part, sentence, error):
    a = rubric.evaluate(RUBRIC, answer(**{part: sentence}))
    assert not a.misconceptions[error].found
    reasons = [r for r in a.needs_review if r.startswith("unsure: a sentence reads like the error")]
    assert len(reasons) == 1 and sentence in reasons[0] and "not what the error is about" in reasons[0]
    assert a.confidence == pytest.approx(0.6)  # the "unsure" penalty, 0.4 (grader/rubric/review.py)


@pytest.mark.parametrize("part, sentence, error", GUARDED)
def test_without_the_guard_the_rubric_would_name_them(part, sentence, error, monkeypatch):
    from grader.rubric import judge
    monkeypatch.setattr(judge, "about_elsewhere", lambda text, also=(): "")
    assert rubric.evaluate(RUBRIC, answer(**{part: sentence})).misconceptions[error].found


def test_a_guarded_error_keeps_its_point():
    parallel = "Several heads run in parallel on the same tokens. "  # a line earned: question 1's points apply
    q2 = ("The MLP works on each token on its own, with the same weights at every position. Around each sub-layer a "
          "residual connection adds the sub-layer's output back to its input, so the residual stream carries the "
          "signal through the whole stack, and a layer norm keeps the scale of each token's vector steady. The "
          "blocks are stacked many times, and each block refines what the ones before it wrote.")  # over 100 words
    own = rubric.evaluate(RUBRIC, answer(q1=parallel + "Each head only sees a window of 512 tokens.", q2=q2))
    other = rubric.evaluate(RUBRIC, answer(q1=parallel + "In Longformer each head only sees a window of 512 tokens.",
                                           q2=q2))
    assert own.substantive and other.substantive
    assert own.misconceptions["heads_split_tokens"].found and own.misconceptions["heads_split_tokens"].points == 1
    assert other.total - own.total == 1


@pytest.mark.parametrize("part, sentence, error", [
    ("q1", "All the heads share one set of query, key and value projections.", "heads_share_qkv"),
    ("q2", "The MLP mixes information between the tokens.", "mlp_mixes_tokens"),
    ("q1", "Like in an RNN, the heads run one after another, each refining the previous head's output.",
     "heads_sequential"),
])
def test_the_same_error_said_of_the_lesson_model_is_named(part, sentence, error):
    a = rubric.evaluate(RUBRIC, answer(**{part: sentence}))
    assert a.misconceptions[error].found
    assert not any(r.startswith("unsure: a sentence reads like the error") for r in a.needs_review)


def test_the_error_said_later_of_the_lesson_model_is_still_named():
    # the first sentence that reads like the error is about Falcon-7B; a later one says it of the lesson's heads
    q1 = ("In Falcon-7B, all the heads share the same key and value projections. Several heads run in parallel. "
          "In our model all the heads share one set of query, key and value projections.")
    a = rubric.evaluate(RUBRIC, answer(q1=q1))
    assert a.misconceptions["heads_share_qkv"].found
    assert a.misconceptions["heads_share_qkv"].quote.startswith("In our model")
    assert not any(r.startswith("unsure: a sentence reads like the error") for r in a.needs_review)


def test_an_error_said_of_the_forward_and_backward_pass_is_still_named():
    sentence = ("More heads multiply the cost, because every new head brings its own matrices, so there is more work "
                "in every forward and backward pass.")
    assert rubric.evaluate(RUBRIC, answer(q1=sentence)).misconceptions["heads_cost_more"].found


def test_the_exercise_s_own_elsewhere_comes_from_its_rubric():
    assert RUBRIC.elsewhere and about_elsewhere("The heads share one AdamW setting.", RUBRIC.elsewhere) == "adamw"
    assert about_elsewhere("The heads share one AdamW setting.") == ""  # exercise 4's errors are about training
    assert not rubric.load(ROOT / "exercises/exercise4/rubric.toml").elsewhere


def test_concept_lines_are_not_touched():
    a = rubric.evaluate(RUBRIC, answer(q1="Unlike an RNN, the attention heads run in parallel on the same tokens."))
    assert a.lines["heads_parallel"].earned
    assert not any(r.startswith("unsure: a sentence reads like the error") for r in a.needs_review)
