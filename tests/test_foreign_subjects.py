"""Sentences about something else in the lesson's words (issue 11's nonsense, round n of 2026-12-07): a singular
subject outside the lesson ("the choir runs several heads in parallel"), a scene elsewhere ("at the bakery the heads
..."), and a whole answer said in another world's words. Each case fails on the code before the change."""
from __future__ import annotations

import pytest
from conftest import ROOT, bench_module

from grader import rubric
from grader.rubric.assertions import stance_of
from grader.rubric.subjects import pictured

EX1 = rubric.load(ROOT / "exercises/exercise1/rubric.toml")
errors = bench_module("named_errors")
lines = bench_module("line_passages")


@pytest.mark.parametrize("sentence, phrase, stance", [
    # a singular subject outside the lesson, its picture and the words answers on it use
    ("the choir runs several heads in parallel.", "in parallel", "foreign"),
    ("my uncle gave each head its own query, key and value projections.", "own query", "foreign"),
    ("a baker has its own query, key and value.", "own query", "foreign"),
    ("on tuesday the city council concatenated the heads and applied w_o.", "concatenated", "foreign"),
    ("in the garage my uncle ran his heads in parallel.", "in parallel", "foreign"),
    # a scene elsewhere (a place with its determiner) opening the clause
    ("at the bakery the heads run in parallel.", "in parallel", "foreign"),
    # the lesson's own subjects, general ones, a configuration's name, the picture's people
    ("the model runs several heads in parallel.", "in parallel", "asserted"),
    ("this transformer has 12 heads running in parallel.", "in parallel", "asserted"),
    ("the author shows that the heads run in parallel.", "in parallel", "asserted"),
    ("the student explains that heads run in parallel.", "in parallel", "asserted"),
    ("in the model the heads run in parallel.", "in parallel", "asserted"),
    ("in pre the residual addition is never normalised.", "never normalised", "negated"),
    ("in the original paper the heads run in parallel.", "in parallel", "asserted"),
    ("at the end the lawyers' memos are stapled together.", "stapled", "asserted"),
    ("the whole panel costs about what one wide head would.", "costs about", "asserted"),
])
def test_stances(sentence, phrase, stance):
    assert stance_of(sentence, phrase) == stance


def _earned(answer: str) -> set[str]:
    a = rubric.evaluate(EX1, answer)
    return {k for k, r in a.lines.items() if r.earned}


def test_a_noun_of_the_students_own_picture_is_no_foreign_subject():
    # "the whole choir" is the student's picture, said once with "like"
    picture = "Multi-head attention is like a choir of readers going over one contract."
    claim = ("Each head works in d_model / h dimensions, so the whole choir costs about what one full-width head "
             "would.")
    assert "cost_one_head" in _earned(f"## 1. Heads\n\n{picture} {claim}\n")
    assert "choir" in pictured(("multi-head attention is like a choir of readers going over one contract.",))
    assert "lens" in pictured(("for a head, the lens is its own learned query, key and value projections.",))


def test_an_answer_inside_another_world_pictures_nothing():
    norms = ("the bakery runs its heads in parallel.", "the bakery's ovens are the residual connections.",
             "each baker has its own query, key and value.",
             "at noon the flour in the oven is concatenated and multiplied by w_o.")
    assert pictured(norms) == frozenset()


@pytest.mark.parametrize("name", ["n_job_advert", "n_lost_and_found", "n_transformer_manual"])
def test_an_answer_said_in_another_worlds_words_is_sent_to_a_person(name):
    # round n's dev nonsense that no other measure sent to a person: a job advert ("an MLP (Meal and Lunch Plan)"),
    # a lost-and-found notice, the manual of a transformer on a pole
    a = rubric.evaluate(EX1, (ROOT / "tests/prose/exercise1" / name / "answer.md").read_text(encoding="utf-8"))
    reasons = [r for r in a.needs_review if r.startswith("nonsense?")]
    assert reasons and "foreign to answers on this lesson" in reasons[0], a.needs_review


@pytest.mark.parametrize("sentence, named", [
    # a letter to one's past self, or to a reader: the belief is theirs, and the sentence goes on to correct it
    ("You will assume that eight heads cost eight times as much as one, but each head is only d_model / h wide.", ()),
    ("You'd expect that eight heads cost eight times as much as one, but each head is only d_model / h wide.", ()),
    ("You probably believe eight heads cost eight times as much as one, but each head is only d_model / h wide.", ()),
    ("You'll be tempted to say that eight heads cost eight times as much, but each is only d_model / h wide.", ()),
    # the writer's own claim after a way of thinking is still theirs, and so is a belief the sentence confirms or
    # shares ("as you'd expect"), or one it does not correct (the second review of 2026-12-07)
    ("You can think of it as follows: eight heads cost eight times as much as one.", ("heads_cost_more",)),
    ("You'd think the heads split the tokens between them, and that's exactly what happens.",
     ("heads_split_tokens",)),
    ("As you expected, the heads split the tokens between them, each reading its own part of the sentence.",
     ("heads_split_tokens",)),
    ("You assume eight heads cost eight times as much as one head, which is true.", ("heads_cost_more",)),
])
def test_a_belief_given_to_the_reader_is_not_the_writers_error(sentence, named):
    assert errors.named(1, sentence)[0] == named


@pytest.mark.parametrize("line, passage", [
    # a plain answer names its sources and tools as subjects and settings (the second review of 2026-12-07)
    ("heads_parallel", "In the video the heads run in parallel on the same tokens."),
    ("heads_parallel", "On my laptop the heads run in parallel as one batched matrix multiply."),
    ("own_qkv", "The chapter says each head has its own learned query, key and value matrices."),
    ("concat_w_o", "The script concatenates the head outputs and passes them through the output projection W_O."),
    ("heads_parallel", "As you'd expect, the heads run in parallel on the same tokens."),
    # a tool as the actor is no farmer ("the farmer stacks blocks" earns nothing)
    ("stacked", "The checkpoint stacks 12 blocks on top of each other."),
    ("stacked", "My notebook stacks six blocks, each one feeding the next."),
    ("heads_parallel", "The kernel runs all the heads in parallel as one batched matmul."),
])
def test_a_plain_answers_sources_and_settings_are_no_scene_elsewhere(line, passage):
    assert lines.credited(line, passage)


UNCLE = """## 1. Multi-head attention: a team reading one contract

On Tuesday my uncle ran his heads in parallel in the garage. My uncle gave each head its own query, key and value
projections, and the neighbour's dog barked at the output projection. By Friday the garage smelled of paint, the
kettle had boiled dry twice and my aunt had sold the caravan to a man from the allotments.

## 2. The transformer block around it

The shed has an MLP for each token and a residual hose around the lawnmower. Grandma keeps her knitting, her
biscuits and the cat's blanket in a drawer under the stairs, next to the umbrellas and the old radio.

## 3. Quick check: BERT vs GPT at the attention level

Bert from next door wears a causal mask at the carnival.
"""


def test_in_an_answer_of_foreign_words_a_foreign_singular_subject_earns_nothing():
    a = rubric.evaluate(EX1, UNCLE)
    assert not a.lines["heads_parallel"].earned and not a.lines["own_qkv"].earned
    # the same two claims with the model as their subject, in the same answer, earn
    fixed = UNCLE.replace("my uncle ran his heads", "the model ran its heads").replace(
        "My uncle gave each head", "The model gives each head")
    b = rubric.evaluate(EX1, fixed)
    assert b.lines["own_qkv"].earned
    # the student's own system is no uncle, in the same answer (the second review of 2026-12-07: a chess bot, a
    # translation app)
    bot = rubric.evaluate(EX1, UNCLE.replace("my uncle ran his heads", "my bot ran its heads"))
    assert bot.lines["heads_parallel"].earned


def test_the_lessons_own_picture_and_function_words_picture_nothing():
    # "that is why ...", "each person in the team is a head", "the difference is ...": every answer to the exercise
    # says such things; they must not switch the reading of foreign subjects off
    assert pictured(("that is why the heads run in parallel.", "each person in the team is a head.",
                     "the difference is that gpt uses a causal mask.", "in the picture, merging the notes is w_o.")) \
        == frozenset()


KITCHEN = """## 1. Multi-head attention: a team reading one contract

My own picture is a restaurant kitchen. Every cook in the kitchen tastes the same soup at the same moment, and in the model the heads likewise run in parallel on the same tokens. Each cook has their own spoon, nose and notebook, just as each head has its own query, key and value projections. The pastry cook notices the sugar and the sauce cook notices the salt; in a sentence one head links a pronoun to its noun and another tracks the previous token. The kitchen has one budget of 768 minutes split into 12 shifts of 64, so each head works in d_model / h = 64 dimensions and the whole brigade costs about the same as one full-width head. At the pass the head chef lines up the plates and finishes them into one dish: that is the concatenation followed by W_O. The kitchen breaks as a picture because a chef de cuisine hands out the stations, while nobody assigns the heads their roles; they learn them in training.

## 2. The transformer block around it

After the tasting, every plate goes back to its own station where the cook works on it alone: the MLP works on each token separately. The waiter keeps the original order on the ticket and adds every change to it, which is the residual connection around attention and around the MLP. Before each station the plate is weighed and rescaled, a layer norm before attention and before the MLP. The restaurant has twelve floors of kitchens stacked on top of each other, so the blocks are stacked and each refines the dish from the floor below.

## 3. Quick check: BERT vs GPT at the attention level

In BERT the critic reads the whole menu, left and right: its attention is bidirectional with no mask. In GPT the diner only sees the courses already served: a causal mask lets each token attend only to earlier tokens.
"""


def test_an_analogy_mapped_back_sentence_by_sentence_is_not_sent_to_a_person_as_nonsense():
    # a kitchen carried through the whole answer, each sentence bridging to the model ("just as each head ...",
    # "that is the concatenation followed by W_O"): the student's analogy, not another world (the second review)
    a = rubric.evaluate(EX1, KITCHEN)
    assert not [r for r in a.needs_review if r.startswith("nonsense?")], a.needs_review
    assert a.lines["own_qkv"].earned and a.lines["concat_w_o"].earned
