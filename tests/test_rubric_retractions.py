"""Retractions, trailing frames, weak negations, reported sources, foils ("BERT, unlike GPT, ..."), keyword strings
joined by "and", and the cost of very long inputs (grader/rubric/assertions.py, cues.py, concepts.py, sentences.py):
each rule with the sentences it must stop and the genuine ones it must keep."""
import time

import pytest
from conftest import ROOT

from grader import rubric
from grader.rubric.assertions import distancing, stance_of
from grader.rubric.read import blocks
from grader.rubric.sentences import sentence_share, units

R1 = rubric.load(ROOT / "exercises" / "exercise1" / "rubric.toml")
N = rubric.normalise
GOOD = (ROOT / "tests" / "exercise1_answers" / "excellent_own_words" / "answer.md").read_text()


def earned(text):
    return {k for k, v in rubric.evaluate(R1, text).lines.items() if v.earned}


def after_each_paragraph(sentence):
    """GOOD with ``sentence`` appended to every paragraph (headings left alone)."""
    return "\n\n".join(p if p.lstrip().startswith("#") else f"{p} {sentence}" for p in GOOD.split("\n\n"))


# --------------------------------------------------------------------------- 1. the foil of a comparison

@pytest.mark.parametrize("text, line, expected", [
    ("BERT, unlike GPT, uses a causal mask.", "gpt_causal", False),  # said of BERT
    ("Unlike BERT, GPT sees all tokens.", "bert_bidirectional", False),  # said of GPT
    ("GPT, as opposed to BERT, is causal.", "gpt_causal", True),
    ("In contrast to GPT, BERT sees all tokens.", "bert_bidirectional", True),
    ("Compared with BERT, GPT uses a causal mask.", "gpt_causal", True),
    ("BERT, not GPT, uses a causal mask.", "gpt_causal", False),
    ("BERT, which came after GPT, sees all tokens in the sentence.", "bert_bidirectional", True),  # an aside
    ("GPT (unlike BERT) uses a causal mask.", "gpt_causal", True),
    # the plain cases, and a second subject after a comma that is no aside
    ("GPT uses a causal mask.", "gpt_causal", True),
    ("BERT uses a causal mask.", "gpt_causal", False),
    ("BERT sees all tokens.", "bert_bidirectional", True),
    ("BERT sees all tokens, GPT, by contrast, uses a causal mask.", "gpt_causal", True),
    ("BERT sees all tokens, GPT, by contrast, uses a causal mask.", "bert_bidirectional", True),
])
def test_a_mention_that_is_only_compared_with_is_not_the_subject(text, line, expected):
    assert (line in earned(text)) is expected


# --------------------------------------------------------------------------- 2. frames before and after a statement

@pytest.mark.parametrize("sentence, expected", [
    ("It would be wrong to say that heads run in parallel.", "negated"),
    ("It is a mistake to say that heads run in parallel.", "framed"),
    ("It is false to think that heads run in parallel.", "negated"),
    ("It is not true to say that heads run in parallel.", "negated"),
    ("That heads run in parallel is a myth.", "framed"),
    ("That heads run in parallel is simply not true.", "framed"),
    # kept: a frame that endorses, a denied error word, a "that" subject with another predicate
    ("It would be right to say that heads run in parallel.", "asserted"),
    ("It is not wrong to say that heads run in parallel.", "asserted"),
    ("That heads run in parallel is the key point.", "asserted"),
    ("That heads run in parallel is not a myth.", "asserted"),
])
def test_frames_around_a_statement(sentence, expected):
    assert stance_of(N(sentence), "heads run in parallel") == expected


def test_the_claim_that_frame():
    assert stance_of(N("The claim that each head has its own projections is false."),
                     "each head has its own projections") == "framed"
    assert stance_of(N("The claim that each head has its own projections is not false."),
                     "each head has its own projections") == "asserted"
    assert stance_of(N("The idea that each head has its own projections is central."),
                     "each head has its own projections") == "asserted"


@pytest.mark.parametrize("sentence, phrase, expected", [
    ("Heads hardly run in parallel.", "run in parallel", "negated"),
    ("Heads rarely run in parallel.", "run in parallel", "negated"),
    ("Heads seldom run in parallel.", "run in parallel", "negated"),
    ("The heads fail to run in parallel.", "run in parallel", "negated"),
    ("Each head lacks its own projections.", "its own projections", "negated"),
    ("I wish heads ran in parallel.", "heads ran in parallel", "supposed"),
    # the weak negation covers its own clause only: the genuine sentences of two labelled answers
    ("Specialities emerge during training, and they are rarely clean.", "emerge during training", "asserted"),
    ("Nothing of this is hard: each head runs in parallel.", "each head runs in parallel", "asserted"),
])
def test_weak_negations_and_wishes(sentence, phrase, expected):
    assert stance_of(N(sentence), phrase) == expected


# --------------------------------------------------------------------------- 3. retractions after a paragraph

@pytest.mark.parametrize("sentence, reach", [
    ("None of that is true.", "paragraph"),
    ("Everything in this paragraph is wrong.", "paragraph"),
    ("I made all of this up.", "paragraph"),
    ("Everything I wrote above is false.", "answer"),
    ("None of what I wrote so far is true.", "answer"),
    # not retractions
    ("All of this is true.", ""),
    ("Nothing of this is hard: each head has its own weights.", ""),
    ("That is wrong.", ""),  # refutes the sentence before it (REFUTE_NEXT), no paragraph
])
def test_how_far_a_retraction_reaches(sentence, reach):
    assert distancing(N(sentence)) == reach


def test_good_answer_is_the_baseline():
    assert len(earned(GOOD)) == 14


@pytest.mark.parametrize("sentence", ["None of that is true.", "Everything in this paragraph is wrong.",
                                      "I made all of this up."])
def test_a_retraction_after_every_paragraph_earns_nothing(sentence):
    assert earned(after_each_paragraph(sentence)) == set()


def test_a_retraction_of_everything_above_reaches_the_whole_answer():
    assert earned(GOOD + "\n\nEverything I wrote above is false.\n") == set()
    # a paragraph-wide retraction at the end takes back only its own paragraph
    assert len(earned(GOOD + "\n\nThis is my last paragraph. None of that is true.\n")) == 14


@pytest.mark.parametrize("sentence", ["It would be right to say that this is all there is.",
                                      "Nothing of this is hard: each head has its own query, key and value weights."])
def test_sentences_that_look_like_retractions_keep_the_answer(sentence):
    assert len(earned(after_each_paragraph(sentence))) == 14


# --------------------------------------------------------------------------- 4. what a friend or a chatbot claims

@pytest.mark.parametrize("sentence, expected", [
    ("My friend claims that heads run in parallel.", "attributed"),
    ("A classmate of mine says heads run in parallel.", "attributed"),
    ("ChatGPT told me that heads run in parallel.", "attributed"),
    ("According to ChatGPT, heads run in parallel.", "attributed"),
    ("According to a YouTube video, heads run in parallel.", "attributed"),
    # a reference work or the paper, cited with no distancing, is an endorsement
    ("According to Wikipedia, heads run in parallel.", "asserted"),
    ("According to the paper, heads run in parallel.", "asserted"),
    ("My friend and I checked that heads run in parallel.", "asserted"),
])
def test_a_single_source_without_authority_is_only_reported(sentence, expected):
    assert stance_of(N(sentence), "heads run in parallel") == expected


def test_the_lessons_picture_is_no_source():
    assert stance_of(N("One person reads the dates and another thinks about the payment terms."),
                     "about the payment terms") == "asserted"


# --------------------------------------------------------------------------- 5. a keyword string joined by "and"

KEYWORD_STRING = ("heads parallel and own query key value and concat W_O and MLP per token and residual and layer "
                  "norm and GPT causal mask")


def _prose(text):
    return [u.prose for u in units(R1, blocks(text)[0])[0]]


def test_conjunctions_count_only_as_often_as_other_function_words():
    assert sentence_share(N(KEYWORD_STRING).split()) == 0.0
    assert sentence_share("residual connections and layer norms wrap attention and the mlp".split()) == pytest.approx(0.2)
    assert sentence_share([]) == 0.0


def test_a_keyword_string_is_no_sentence_and_is_capped():
    assert _prose(KEYWORD_STRING) == [False]
    assert _prose("heads parallel and own query and the concat W_O and MLP per token and residual") == [False]
    answer = "\n\n".join([KEYWORD_STRING + "."] * 6)
    assessment = rubric.evaluate(R1, answer)
    assert assessment.prose_share == 0.0
    assert assessment.total <= assessment.cap_points < 17


@pytest.mark.parametrize("sentence", [
    "Residual connections and layer norms wrap attention and the MLP.",
    "One associate checks the dates and deadlines, one checks the payment terms, and one checks the liability clauses.",
    "The heads run in parallel and each has its own projections.",
])
def test_genuine_sentences_with_and_stay_prose(sentence):
    assert _prose(sentence) == [True]


# --------------------------------------------------------------------------- 6. very long inputs

@pytest.mark.parametrize("text, total", [("a" * 1_000_000, 1), ("attention " * 100_000, 100_000),
                                         ("heads, " * 28_000, 28_000), ("heads." * 33_000, 33_000)])
def test_units_stop_normalising_at_the_cut(text, total):
    started = time.perf_counter()
    out, n, cut = units(R1, blocks(text)[0])
    # a guard against work that grows with the input past the cut (normalising all of it takes seconds), loose
    # enough for a loaded CI machine: the time per answer is measured by bench/prose_agreement.py
    assert time.perf_counter() - started < 5
    assert n == total and cut
    assert sum(len(u.norm.split()) for u in out) <= R1.max_words


def test_the_cut_keeps_the_words_before_it():
    out, n, cut = units(R1, blocks("Each head has its own weights. " * 400)[0])
    assert n == 2400 and cut and len(out) == 200  # 6 words a sentence: 1200 words read
    assert out[-1].norm == "each head has its own weights."
