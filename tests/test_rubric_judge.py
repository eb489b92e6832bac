"""Step 6, judge: whole-answer rules that depend on how much of the answer was read."""
from __future__ import annotations

from pathlib import Path

from grader import rubric

ROOT = Path(__file__).resolve().parent.parent
RUBRIC = rubric.load(ROOT / "exercises/exercise1/rubric.toml")
SOLUTION = (ROOT / "solutions/exercise1/answer.md").read_text(encoding="utf-8")


def test_a_long_answer_in_sentences_is_not_a_keyword_list():
    # the prose share is of the words read (max_words), so 3,000 words of sentences stay sentences
    long = SOLUTION + "\n\n" + "\n\n".join(["The heads of a layer all read the same tokens at the same time, "
                                            "and each of them learns to look for a different relationship."] * 120)
    a = rubric.evaluate(RUBRIC, long)
    assert a.words > 2 * RUBRIC.max_words
    assert a.prose_share > 0.9 and not a.cap_reason
    assert any("only the first 1200 words were read" in n for n in a.notes)


def test_an_unclosed_comment_is_explained():
    a = rubric.evaluate(RUBRIC, "## 1. Multi-head attention\n\n<!-- write here\n\nSeveral heads run in parallel.\n")
    assert a.words == 0
    assert any("never closed" in n for n in a.notes)
    assert not any("never closed" in n for n in rubric.evaluate(RUBRIC, SOLUTION).notes)
