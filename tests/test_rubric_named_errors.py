"""Exercise 1's 0-point named errors (rubric.toml, "named errors"): a confident error that contradicts a
concept is named to the student and flagged for a person, and costs nothing beyond the concept it loses."""
from __future__ import annotations

from pathlib import Path

import pytest

from grader import rubric

ROOT = Path(__file__).resolve().parent.parent
RUBRIC = rubric.load(ROOT / "exercises/exercise1/rubric.toml")
ANSWERS = ROOT / "tests/exercise1_answers"


def found(text: str) -> set[str]:
    return {k for k, m in rubric.evaluate(RUBRIC, text).misconceptions.items() if m.found}


def frame(q1: str = "Several heads run in parallel on the tokens.", q3: str = "BERT attends both ways.") -> str:
    return f"## 1\n\n{q1}\n\n## 2\n\nThe block has attention and an MLP.\n\n## 3\n\n{q3}\n"


@pytest.mark.parametrize("q3, names", [
    ("BERT uses a causal mask, while GPT is bidirectional.", {"bert_causal", "gpt_bidirectional"}),
    ("BERT only attends to the previous tokens.", {"bert_causal"}),
    ("BERT is bidirectional, while GPT uses a causal mask.", set()),
    ("Unlike GPT, BERT is bidirectional: every token attends to all tokens.", set()),
    ("GPT is not bidirectional; BERT is.", set()),
    ("BERT masks some tokens during pre-training, but its attention sees both sides.", set()),
    ("GPT only sees earlier tokens; BERT sees both directions.", set()),
    ("In GPT a causal mask hides the future tokens, so attention only looks left.", set()),
])
def test_bert_and_gpt_errors_are_named_only_when_said_of_that_model(q3, names):
    assert found(frame(q3=q3)) & {"bert_causal", "gpt_bidirectional"} == names


@pytest.mark.parametrize("q1, named", [
    ("In multi-head attention the heads run one after another, each refining the output of the previous head.", True),
    ("In self-attention each head takes the output of the previous head and refines it.", True),
    ("The heads run in parallel on the tokens, and the layers run one after another.", False),
    ("The attention heads do not run one after another: they run in parallel.", False),
    ("Each head takes the output of the previous layer and computes its own attention over the tokens.", False),
])
def test_sequential_heads_are_named_only_for_heads(q1, named):
    assert ("heads_sequential" in found(frame(q1=q1))) is named


def test_a_named_error_costs_nothing_more_and_is_flagged():
    text = (ANSWERS / "swapped_bert_gpt" / "answer.md").read_text(encoding="utf-8")
    a = rubric.evaluate(RUBRIC, text)
    assert {"bert_causal", "gpt_bidirectional"} <= {k for k, m in a.misconceptions.items() if m.found}
    assert not a.lines["bert_bidirectional"].earned and not a.lines["gpt_causal"].earned
    # the 0-point errors change no total: the same answer without them scores the same
    assert a.total == sum(r.score for r in a.lines.values()) + sum(
        m.points for m in a.misconceptions.values() if a.misconception_counts(m))
    assert any("BERT's attention is causal" in r for r in a.needs_review)
    assert a.confidence <= 0.5


def test_a_correct_answer_names_no_error():
    text = (ROOT / "solutions/exercise1/answer.md").read_text(encoding="utf-8")
    a = rubric.evaluate(RUBRIC, text)
    assert not any(m.found for m in a.misconceptions.values())


def earned(text: str) -> set[str]:
    return {k for k, r in rubric.evaluate(RUBRIC, text).lines.items() if r.earned}


def test_heads_one_after_the_other_is_no_stacking_and_not_only_is_no_causal_mask():
    sequential = frame(q1="In multi-head attention, the heads in each layer run one after the other.")
    assert "stacked" not in earned(sequential) and "heads_sequential" in found(sequential)
    blocks = frame(q1="The transformer blocks are applied one after the other, each refining the output of the one below.")
    assert "stacked" in earned(blocks) and "heads_sequential" not in found(blocks)
    assert "gpt_causal" not in earned(frame(q3="GPT can see all the tokens, not only the earlier ones."))
    assert "gpt_causal" in earned(frame(q3="GPT uses a causal mask: each token attends only to the earlier tokens."))
