"""The rubric matcher (grader/rubric/) step by step: reading, normalising, matching, judging."""
import re
import textwrap

import pytest
from conftest import ROOT, ex1_answer as ex1

from grader import rubric

RUBRIC = rubric.load(ROOT / "exercises" / "exercise1" / "rubric.toml")


def lines_earned(text):
    return {k for k, v in rubric.evaluate(RUBRIC, text).lines.items() if v.earned}


def misconceptions_found(text):
    return {k for k, v in rubric.evaluate(RUBRIC, text).misconceptions.items() if v.found}


def test_markdown_headings_comments_and_markup_are_not_read():
    blocks, headings = rubric.blocks(textwrap.dedent("""\
        # BERT is bidirectional, GPT uses a causal mask
        <!-- several heads run in parallel -->
        Some **bold** and `code` and [a link](http://x).

        - a bullet
        - another bullet
        """))
    assert headings == ["BERT is bidirectional, GPT uses a causal mask"]
    assert [b.text for b in blocks] == ["Some bold and code and a link.", "a bullet", "another bullet"]
    assert lines_earned("# BERT is bidirectional and GPT uses a causal mask\n\nHello.") == set()


def test_a_title_line_above_a_paragraph_is_its_own_block_but_wrapped_prose_is_one():
    # A forum reply's "Re: ..." line and a title without a heading mark would otherwise open the first sentence
    # and be quoted with it in the review box; a paragraph wrapped at any width stays one block.
    blocks, _ = rubric.blocks("Re: why several heads\nThe heads run in parallel on the same tokens. They share x.\n")
    assert [b.text for b in blocks] == ["Re: why several heads", "The heads run in parallel on the same tokens. They share x."]
    blocks, _ = rubric.blocks("Multi-head attention in one picture\nThink of a team of readers who each read it all.\n")
    assert [b.text for b in blocks] == ["Multi-head attention in one picture",
                                        "Think of a team of readers who each read it all."]
    wrapped = "The heads run in parallel on the same tokens,\nand each one has its own projections.\nThat is all."
    assert [b.text for b in rubric.blocks(wrapped)[0]] == [" ".join(wrapped.split())]
    for prose in ("Each head has\nits own projections.", "The outputs are concatenated and multiplied by\nW_O, which mixes them.",
                  "Unlike GPT\nBERT attends both ways."):
        assert [b.text for b in rubric.blocks(prose)[0]] == [" ".join(prose.split())]


@pytest.mark.parametrize("sentence", [
    "Each head looks at the same sentence in its own way.",  # an ambiguous -s form after "each head"
    "Warm-up lets the gradients settle before the optimiser takes big steps.",  # a verb not in the list, then its object
    "With a big learning rate and no warm-up, post-norm blew up.",  # an irregular past
    "The original Transformer dealt with this by warming up the learning rate.",
    "The river itself always flows through.",  # a reflexive between the subject and its verb
])
def test_sentences_with_verbs_outside_the_domain_list_are_sentences(sentence):
    from grader.rubric.sentences import has_verb
    assert has_verb(rubric.normalise(sentence))


@pytest.mark.parametrize("fragment", ["attention maps for each head", "several heads in parallel on the same tokens",
                                      "the outputs of all heads concatenated, then W_O",
                                      "own query, key and value projections for each head"])
def test_fragments_stay_fragments(fragment):
    from grader.rubric.sentences import has_verb
    assert not has_verb(rubric.normalise(fragment))


@pytest.mark.parametrize("line, prose", [
    ("Without it the grad goes through all 12 sub-layers → shrinks each time → first blocks get almost no update.", True),
    ("no residuals → every block carries everything → stuck at U (letter freq.)", False),
    ("residuals -> gradient highway -> deep nets trainable", False),
    ("attention -> add & norm -> FFN -> add & norm", False),
])
def test_a_chain_of_arrows_is_a_sentence_only_when_its_links_are_clauses(line, prose):
    from grader.rubric.sentences import _not_arrow_notes
    assert _not_arrow_notes(rubric.normalise(line)) is prose


def test_normalise_folds_unicode_latex_and_contractions():
    assert rubric.normalise("W^O and $W_{O}$, d_{model} ÷ h ≈ 64 — ＢＥＲＴ doesn't") == \
        "w_o and w_o , d_model / h approximately 64 - bert does not"
    assert rubric.normalise("\\text{head}_i = \\frac{QK^\\top}{\\sqrt{d_k}}") == "head_i = qk_t / sqrt d_k"
    assert rubric.normalise("Zo\u00eb\u200b can\u2019t") == "zoë can not"
    # the same contractions typed without the apostrophe, as chat and notes write them
    assert rubric.normalise("the residual doesnt carry them, heads dont share, it isnt, u cant") == \
        "the residual does not carry them, heads do not share, it is not, u can not"
    assert rubric.normalise("Dont panic: the font and the student are words.") == \
        "do not panic: the font and the student are words."


def test_sentences_split_after_full_stops_but_not_after_abbreviations():
    assert rubric.split_sentences("One head, e.g. the first. Another one! Heads don't. Gradient descent does.") == [
        "One head, e.g. the first.", "Another one!", "Heads don't.", "Gradient descent does."]


@pytest.mark.parametrize("text, sentences", [
    # a capital letter after a small word ends its sentence: the lesson's U ended sentences and two were read as one
    ("The run parks at U. Pre-norm keeps the trunk clean.", ["The run parks at U.", "Pre-norm keeps the trunk clean."]),
    ("It sits just above U. Vaswani et al. used a warm-up.", ["It sits just above U.", "Vaswani et al. used a warm-up."]),
    # initials stay with their name
    ("A. Vaswani wrote it. Then more.", ["A. Vaswani wrote it.", "Then more."]),
    ("The output is the sum of x and F. Post-norm puts the norm after it.",
     ["The output is the sum of x and F.", "Post-norm puts the norm after it."]),
    ("Ashish A. Vaswani wrote it.", ["Ashish A. Vaswani wrote it."]),
    # a small letter goes on, as terse notes do
    ("with a skip, out = F(x) + x. the derivative is 1.", ["with a skip, out = F(x) + x. the derivative is 1."]),
])
def test_a_capital_letter_ends_a_sentence_unless_it_is_an_initial(text, sentences):
    assert rubric.split_sentences(text) == sentences


def test_a_comma_separated_keyword_list_is_split_into_items_that_never_co_occur():
    assert lines_earned("Key words: GPT, encoder, decoder, causal mask, bidirectional, BERT, residual, layer norm.") == set()
    assert lines_earned("GPT uses a causal mask.") == {"gpt_causal"}


def test_a_property_must_be_said_of_its_subject():
    assert lines_earned("GPT is bidirectional while BERT uses a causal mask.") == set()
    assert lines_earned("Unlike GPT, BERT attends in both directions.") == {"bert_bidirectional"}
    assert lines_earned("GPT is different. It uses a causal mask.") == {"gpt_causal"}
    assert lines_earned("BERT is not bidirectional.") == set()


def test_negated_misconceptions_are_denials_not_mistakes():
    assert misconceptions_found("The heads split the tokens between them.") == {"heads_split_tokens"}
    assert misconceptions_found("The heads do NOT split the tokens between them.") == set()
    assert misconceptions_found("The heads split the model width, not the tokens.") == set()
    assert misconceptions_found("A common misconception is that each head gets its own part of the sentence.") == set()
    assert misconceptions_found("Each head gets its own part of the sentence. That is wrong.") == set()
    assert misconceptions_found("Each head gets its own slice of the embedding.") == set()
    assert misconceptions_found("The MLP mixes information between the tokens.") == {"mlp_mixes_tokens"}
    assert misconceptions_found("The MLP does not mix information between the tokens.") == set()
    assert misconceptions_found("With 12 heads the layer costs 12 times as much compute as with one.") == {"heads_cost_more"}
    assert misconceptions_found("Adding heads does not multiply the compute.") == set()


def test_a_line_with_two_parts_needs_both():
    one = rubric.evaluate(RUBRIC, "In the picture each person is a head.").lines["analogy_mapped"]
    assert not one.earned and one.missing_parts == ["merging the notes is concatenation + W_O"]
    both = rubric.evaluate(RUBRIC, "Each person is a head. Merging the notes is the concatenation and W_O.")
    assert both.lines["analogy_mapped"].earned and len(both.lines["analogy_mapped"].quotes) == 2


def test_length_problems_are_said():
    assert rubric.evaluate(RUBRIC, "").problems == [
        "the answer is empty: write your explanation under the headings of the template"]
    assert "far too short (5 words" in rubric.evaluate(RUBRIC, "Heads run in parallel here.").problems[0]
    long = "The weather was fine and we walked along the river for a while. " * 100 + "GPT uses a causal mask."
    a = rubric.evaluate(RUBRIC, long)
    assert a.words > RUBRIC.max_words and "only the first 1200 words were read" in a.notes[0]
    assert not a.lines["gpt_causal"].earned  # after word 1200: not read


def test_copied_answers_keep_no_points_and_are_flagged():
    # Copying scales the concept points with the copied share (tests/test_rubric_copying.py): a whole copy keeps none.
    sample = (ROOT / "solutions" / "exercise1" / "answer.md").read_text(encoding="utf-8")
    a = rubric.evaluate(RUBRIC, sample, copy_sources={"sample": sample})
    assert a.copy_overlap == 1.0 and a.copy_factor == 0.0 and a.total == 0
    assert sum(r.earned for r in a.lines.values()) == 14 and sum(r.counted for r in a.lines.values()) == 0
    assert any("copied from sample" in r for r in a.needs_review)
    assert rubric.evaluate(RUBRIC, sample).total == 17  # not a copy of anything given


def test_the_reference_is_not_compared_with_itself():
    reference = ROOT / "solutions" / "exercise1" / "answer.md"
    assert list(rubric.copy_sources_for(RUBRIC, ROOT, reference)) == ["the rubric"]
    assert list(rubric.copy_sources_for(RUBRIC, ROOT, ROOT / "elsewhere.md")) == ["solutions/exercise1/answer.md",
                                                                                 "the rubric"]


def test_bad_rubric_files_name_the_file_and_the_entry(tmp_path):
    text = (ROOT / "exercises" / "exercise1" / "rubric.toml").read_text(encoding="utf-8")
    bad = tmp_path / "rubric.toml"
    bad.write_text(text.replace("'\\bparallel\\b|", "'\\bparallel(\\b|", 1), encoding="utf-8")
    with pytest.raises(rubric.RubricError, match=r"rubric.toml: line 'heads_parallel', evidence 1: bad pattern"):
        rubric.load(bad)
    bad.write_text(text.replace("pass_mark = 9", ""), encoding="utf-8")
    with pytest.raises(rubric.RubricError, match="missing field 'pass_mark'"):
        rubric.load(bad)


def test_keyword_soup_without_commas_is_capped_too():
    soup = " ".join(["heads parallel own query key value projections d_model/h cost one head concat w_o person is "
                     "head notes mlp each token residual layer norm stacked blocks bert bidirectional gpt causal mask"]
                    * 10)
    a = rubric.evaluate(RUBRIC, soup)
    assert a.total <= RUBRIC.cap_points and a.cap_reason and not a.substantive


def test_an_evidence_may_leave_its_misconceptions_common_unless_out():
    # exercise 4's stability claimed in general ("in principle post-norm is the more stable arrangement, since it keeps
    # the activations at a fixed scale") is named whatever reason it gives: "scale" cancels the other evidence only.
    r4 = rubric.load(ROOT / "exercises" / "exercise4" / "rubric.toml")
    m = next(m for m in r4.misconceptions if m.id == "postnorm_more_stable")
    text = "in principle post-norm is the more stable arrangement, since it keeps the activations at a fixed scale."
    own_only = [e for e in m.evidence if not any("fine-tun" in p.pattern and "deepnorm" in p.pattern for p in e.unless)]
    # the two evidence of a claim in general ("in principle", "of the two"), and pre-norm said to need "a lower
    # learning rate than post-norm" (the common unless reads a lower learning rate as a restriction)
    assert len(own_only) == 3
    for e in m.evidence:
        assert any(p.search(text) for p in e.unless) is (e not in own_only)


def test_an_html_blockquote_is_set_apart_as_a_markdown_one_is():
    from grader.rubric.read import blocks
    got = blocks("Its answer:\n\n<blockquote>\nEach head has its own.\n\nThey are joined.\n</blockquote>\n\nMine.\n\n"
                 "<br>\n\nEnd.")[0]
    assert [(b.text, b.quoted) for b in got] == [("Its answer:", False), ("Each head has its own.", True),
                                                 ("They are joined.", True), ("Mine.", False), ("End.", False)]


def test_an_ellipsis_inside_a_formula_does_not_end_the_sentence():
    from grader.rubric.sentences import split_sentences
    assert split_sentences("head_2(head_1(X))...) is not multi-head attention. It is a chain.") == [
        "head_2(head_1(X))...) is not multi-head attention.", "It is a chain."]
    # an ellipsis before a capital still ends one
    assert split_sentences("The heads wait... The layers do.") == ["The heads wait...", "The layers do."]


def test_a_bracket_after_a_word_is_code_indexing_and_a_bracket_after_a_space_a_link():
    from grader.rubric.read import blocks
    text = "Code: x = heads[i](x) and [the paper](https://arxiv.org/abs/1706.03762) says so."
    assert blocks(text)[0][0].text == "Code: x = heads[i](x) and the paper says so."


def test_a_letter_after_head_is_its_index_and_a_noun_after_it_a_compound():
    from grader.rubric.topic import foreign
    text = "head k reads the output of head k-1, like the head chef."
    assert [foreign(text, m.start(), m.end()) for m in re.finditer(r"\bhead\b", text)] == [False, False, True]


def test_no_before_a_word_ends_a_sentence_and_a_labelled_no_answers_a_question():
    from grader.rubric.sentences import split_sentences
    assert split_sentences("Actually no. Without residuals it fails.") == ["Actually no.", "Without residuals it fails."]
    assert split_sentences("See No. 5 of the list. Then go.") == ["See No. 5 of the list.", "Then go."]
    # a tutor's question answered "No." by the student earns nothing, as an unlabelled "No." does
    tail = " The heads run in parallel on the same tokens, each with its own projections."
    for reply, earned in (("Student: No.", False), ("No.", False), ("Student: Yes.", True)):
        text = ex1("Tutor: Are the outputs concatenated and mixed by W_O?\n" + reply + tail, "x", "y")
        assert rubric.evaluate(RUBRIC, text).lines["concat_w_o"].counted is earned, reply
