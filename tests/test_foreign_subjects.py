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
    # "the whole choir" is the student's picture, said once with "like"; without that sentence it is a choir
    picture = "Multi-head attention is like a choir of readers going over one contract."
    claim = ("Each head works in d_model / h dimensions, so the whole choir costs about what one full-width head "
             "would.")
    assert "cost_one_head" in _earned(f"## 1. Heads\n\n{picture} {claim}\n")
    assert "cost_one_head" not in _earned(f"## 1. Heads\n\n{claim}\n")
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
    # the writer's own claim after a way of thinking is still theirs
    ("You can think of it as follows: eight heads cost eight times as much as one.", ("heads_cost_more",)),
])
def test_a_belief_given_to_the_reader_is_not_the_writers_error(sentence, named):
    assert errors.named(1, sentence)[0] == named
