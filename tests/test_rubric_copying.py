"""Step 5, copying (grader/rubric/copying.py) and how the judge scales points with the copied share."""
from __future__ import annotations

import math

import time
from pathlib import Path

import pytest

from grader import rubric
from grader.rubric import copying
from grader.rubric.copying import CopySettings, best_source, compare, plain_text, prepare, winnow

ROOT = Path(__file__).resolve().parents[1]
RUBRIC = rubric.load(ROOT / "exercises" / "exercise1" / "rubric.toml")
SETTINGS = RUBRIC.copying
SOLUTION = (ROOT / "solutions" / "exercise1" / "answer.md").read_text(encoding="utf-8")
OWN_WORDS = (ROOT / "tests" / "exercise1_answers" / "excellent_own_words" / "answer.md").read_text(encoding="utf-8")

# The reference solution's first two sections rewritten by hand: words swapped for synonyms ("group",
# "simultaneously", "entire", "glued", "divided", ...), clauses turned round and sentences moved.
SWAPPED = """
## 1. Multi-head attention

Multi-head attention behaves in the same manner as a group reviewing a single contract. Every member of
the group reads the entire document, but every one looks for one sort of detail: one follows the dates,
one the sums, one which party owes what to whom. At the end they merge their notes into one single review.

A layer runs h attention heads simultaneously over the same sequence of tokens, rather than a single
attention operation. Every head has its own learned query, key and value projections (its own W_Q, W_K and
W_V), so every head computes its own attention pattern: which other tokens every token should look at, and
what to take from them. The heads can track different relationships simultaneously, since the projections
differ. Another head links a pronoun like "it" to the noun it refers to, while in trained models one head
frequently attends to the preceding token, and another connects a verb with its subject.

The heads do not each receive a full-size copy of the model. The model dimension d_model is divided
between them: every head operates in a subspace of d_head = d_model / h dimensions, for instance 12 heads
of 64 dimensions in GPT-2 small, where d_model = 768. What is divided is the feature dimension, not the
tokens: every head still sees every token of the sequence. All the heads together cost roughly the same as
one full-width attention head, because every head is h times narrower: the projections still add up to
d_model x d_model matrices, so adding heads does not multiply the compute or the number of parameters.

These outputs are glued back into one d_model-dimensional vector per token: every head returns a
d_head-dimensional vector for each token. A learned output projection W_O (a d_model x d_model matrix)
then mixes them, so that what one head found can be merged with what the others found.

## 2. The block

After attention comes an MLP (the feed-forward network): two linear layers with a GELU between them,
usually widening to 4 x d_model and back; attention is only half of a transformer block. The MLP is
applied to every token separately, with the same weights at each position; it does not look at the other
tokens. The MLP then processes what every token has collected, and attention moves information between
tokens.
"""


def test_winnowing_keeps_the_smallest_hash_of_every_window():
    # windows of 4 over [5 3 8 3 9 1 7]: minima at positions 3 (rightmost 3), 5, 5, 5
    assert winnow([5, 3, 8, 3, 9, 1, 7], 4) == [3, 1]
    assert winnow([4, 2], 4) == [4, 2]  # shorter than a window: every hash
    # a run of window + k - 1 shared words always shares a fingerprint: same hashes, same selection
    a = prepare("alpha beta gamma delta epsilon zeta eta theta iota kappa lambda", 4, 4)
    b = prepare("zulu yankee alpha beta gamma delta epsilon zeta eta xray", 4, 4)
    assert a.fingerprint & b.fingerprint


def test_content_words_fold_synonyms_stems_and_drop_function_words():
    text = prepare("The outputs are glued together and the heads run at the same time.")
    # "outputs" -> produce, "glued" -> concatenate, "at the same time" -> parallel (one word for the phrase)
    assert [t.canon for t in text.tokens] == ["produc", "concaten", "togeth", "head", "run", "parallel"]
    # each token keeps its characters in the text
    first = text.tokens[1]
    assert text.plain[first.start:first.end] == "glued"


def test_a_verbatim_copy_has_share_one():
    a = rubric.evaluate(RUBRIC, SOLUTION, copy_sources={"solutions/exercise1/answer.md": SOLUTION})
    assert a.copy_overlap == pytest.approx(1.0)
    assert a.copy_source == "solutions/exercise1/answer.md"
    assert a.copy_factor == 0.0 and a.total == 0
    assert any("copied from solutions/exercise1/answer.md" in r for r in a.needs_review)


def test_a_synonym_swapped_reordered_copy_is_still_mostly_copied():
    m = best_source(plain_text(SWAPPED), {"sol": plain_text(SOLUTION)}, SETTINGS)
    assert m.source == "sol" and m.share >= 0.7
    assert any("glued back into one d_model-dimensional vector" in p.answer for p in m.passages)


def test_an_independent_good_answer_is_not_a_copy():
    a = rubric.evaluate(RUBRIC, OWN_WORDS, copy_sources=rubric.copy_sources_for(RUBRIC, ROOT, ROOT / "x.md"))
    assert a.copy_overlap <= 0.15 and a.copy_factor == 1.0
    assert not any("copied" in r for r in a.needs_review)
    assert a.total == rubric.evaluate(RUBRIC, OWN_WORDS).total


def _half_copied() -> str:
    """The independent answer's first section, then the solution's last two (51 % of the content words)."""
    return OWN_WORDS.split("## 2.")[0] + "\n## 2." + SOLUTION.split("## 2.", 1)[1]


def test_half_copied_has_share_about_half_and_about_half_the_points():
    text = _half_copied()
    alone = rubric.evaluate(RUBRIC, text)
    a = rubric.evaluate(RUBRIC, text, copy_sources={"sol": SOLUTION})
    assert 0.4 <= a.copy_overlap <= 0.65
    earned = sum(r.points for r in alone.lines.values() if r.counted)
    counted = sum(r.points for r in a.lines.values() if r.counted)
    assert counted == round(earned * SETTINGS.factor(a.copy_overlap)) == a.cap_points  # the checks say "at most N"
    assert 0.3 * earned <= counted <= 0.65 * earned
    # a note with the share, the source and a passage, not a problem: the misconception points scale by the same
    # factor (3 avoided, about half kept: no cliff at the review share); and a review flag
    assert a.substantive and any("sol" in n and f"{a.copy_overlap:.0%}" in n and '"' in n for n in a.notes)
    avoided = [k for k, m in alone.misconceptions.items() if m.points and alone.misconception_counts(m)]
    kept = [k for k, m in a.misconceptions.items() if m.points and a.misconception_counts(m)]
    assert len(avoided) == 3 and len(kept) == math.floor(3 * a.copy_factor + 0.5) == 1 and set(kept) < set(avoided)
    assert a.total == counted + len(kept)
    assert any("copied from sol" in r for r in a.needs_review)
    assert a.copy_passages and all(p.answer in plain_text(text) for p in a.copy_passages)
    # the lines dropped first are those whose evidence is in the copied sections (questions 2 and 3): 7 of the
    # 14 earned are kept, all 8 of question 1 but one
    question = {x.id: x.question for x in RUBRIC.lines}
    assert all(not r.counted for k, r in a.lines.items() if question[k] in (2, 3))
    assert sum(r.counted for k, r in a.lines.items() if question[k] == 1) == counted


def test_the_factor_has_no_cliff():
    s = CopySettings(free_share=0.15, zero_share=0.85)
    assert s.factor(0.0) == s.factor(0.15) == 1.0
    assert s.factor(0.5) == pytest.approx(0.5)
    assert s.factor(0.85) == s.factor(1.0) == 0.0
    steps = [s.factor(x / 100) for x in range(101)]
    assert max(a - b for a, b in zip(steps, steps[1:])) < 0.02  # never a jump


def test_pasted_rubric_concepts_are_copied_from_the_rubric():
    pasted = "\n\n".join(line.concept for line in RUBRIC.lines)
    a = rubric.evaluate(RUBRIC, pasted, copy_sources=rubric.copy_sources_for(RUBRIC, ROOT, ROOT / "x.md"))
    assert a.copy_source == "the rubric" and a.copy_overlap >= 0.9
    assert a.total <= 2 and any("the rubric" in r for r in a.needs_review)


def test_a_file_is_never_its_own_source_and_readme_is_never_a_source(tmp_path):
    sources = rubric.copy_sources_for(RUBRIC, ROOT, ROOT / "solutions" / "exercise1" / "answer.md")
    assert "solutions/exercise1/answer.md" not in sources and "the rubric" in sources
    assert not any(name.endswith("README.md") for name in sources)
    (tmp_path / "exercises" / "exercise1" / "copy_sources").mkdir(parents=True)
    sample = tmp_path / "exercises" / "exercise1" / "copy_sources" / "sample_answer.md"
    sample.write_text("The lesson's sample answer.", encoding="utf-8")
    (sample.parent / "README.md").write_text("Not a source.", encoding="utf-8")
    assert list(rubric.copy_sources_for(RUBRIC, tmp_path, tmp_path / "x.md")) == [
        "exercises/exercise1/copy_sources/sample_answer.md", "the rubric"]
    assert list(rubric.copy_sources_for(RUBRIC, tmp_path, sample)) == ["the rubric"]


def test_what_would_fool_it():
    # Shared topic words alone are not copying: the same short facts, in other sentences.
    facts = ("GPT masks the future. BERT sees both sides of every token. The MLP acts per token. Heads run "
             "side by side and their outputs get concatenated, then W_O mixes them. Residual paths add the "
             "input back. Layer norm keeps the scale steady. Blocks are stacked twelve deep in GPT-2 small. "
             "Each head is 64 wide when d_model is 768 and there are 12 heads, so the cost stays flat.")
    assert best_source(facts, {"sol": plain_text(SOLUTION)}, SETTINGS).share <= 0.15
    # Too short to call copied, even when verbatim.
    assert compare(prepare("Every head has its own learned query, key and value projections."),
                   prepare(plain_text(SOLUTION)), SETTINGS)[0] == 0.0
    # Every sentence's words put in reverse order: no k-gram survives, the sentences still match.
    sentences = [s for p in plain_text(SOLUTION).split("\n") for s in rubric.split_sentences(p)]
    backwards = " ".join(" ".join(reversed(s.rstrip(".").split())) + "." for s in sentences)
    m = best_source(backwards, {"sol": plain_text(SOLUTION)}, SETTINGS)
    assert m.share >= 0.7


def test_settings_are_checked():
    with pytest.raises(ValueError, match=r"unknown keys \['ngrams'\]"):
        CopySettings.from_table({"ngrams": 5}, "rubric.toml")
    with pytest.raises(ValueError, match="free_share < zero_share"):
        CopySettings.from_table({"free_share": 0.9, "zero_share": 0.5}, "rubric.toml")


def test_one_answer_is_measured_well_within_a_second():
    copying.prepare.cache_clear()
    started = time.perf_counter()
    best_source(plain_text(OWN_WORDS), rubric.copy_sources_for(RUBRIC, ROOT, ROOT / "x.md"), SETTINGS)
    assert time.perf_counter() - started < 1.0  # the limit for a whole answer; bench/prose_agreement.py measures it


def test_copy_sources_stay_with_the_judge():
    from grader.release import judge_only

    for name in ("exercise1", "exercise4"):
        root = ROOT / "exercises" / name
        assert (root / "copy_sources").resolve() in judge_only(name, root)
        assert (root / "copy_sources" / "README.md").is_file()
