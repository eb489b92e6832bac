"""A picture of the student's own (grader/rubric/pictures.py): once an answer says "think of the heads as chefs",
its sentences about the chefs are read as sentences about the heads, as a teacher reads them; a noun of the
lesson, a general word or nonsense that never speaks of the model keeps its words."""
from pathlib import Path

import pytest
from conftest import ROOT, ex1_answer as ex1

from grader import rubric
from grader.rubric import pictures
from grader.rubric.read import blocks
from grader.rubric.sentences import units

R1 = rubric.load(ROOT / "exercises" / "exercise1" / "rubric.toml")
N = rubric.normalise


@pytest.mark.parametrize("sentence, picture", [
    ("Think of the heads as chefs in one kitchen.", ("chef", "chefs")),
    ("Each head is like a reporter on the news desk.", ("reporter", "reporters")),
    ("In my picture the musicians are the heads.", ("musician", "musicians")),
    ("Imagine the heads as little spotlights on a stage.", ("spotlight", "spotlights")),
    ("The heads are like eyes.", ("eye", "eyes")),
    ("In the factory picture every employee is a head.", ("employee", "employees")),
    ("Every token is a head of its own.", None),  # a word of the lesson
    ("Detective = head, the case file = the tokens.", None),  # a word the lesson's picture has already
    ("The heads are the parts that attend.", None),
    ("Each head is a small attention mechanism.", None),
    ("Each head is a separate linear projection.", None),
    ("What matters is the heads.", None),
    ("The heads are then concatenated.", None),
    ("Each head is one of several views.", None),
    # no noun after "like" / "as": a word of comparing or an adverb is never the picture
    ("The heads are a lot like filters.", None),
    ("Imagine the heads as working together.", None),
    ("The heads are like spotlights.", ("spotlight", "spotlights")),
    # "one ... is one head", a place after the noun, a noun spelled like an abstract one (used as a plural too)
    ("In the transformer, one chef is one attention head.", ("chef", "chefs")),
    ("So each cook at a station is a head.", ("cook", "cooks")),
    ("The stations are the attention heads.", ("station", "stations")),
    ("Each head is a function of the input.", None),
    # a participle or relative clause after the noun; a number word is no noun
    ("Each reporter covering one angle of the same story is an attention head.", ("reporter", "reporters")),
    ("Each musician who reads the same score is a head.", ("musician", "musicians")),
    ("In the picture one meeting room is one head.", ("room", "rooms")),
    # the heads must be the verb's subject: here "sharing" is, and "efficiency" is no picture
    ("Sharing the keys and values across heads is a later efficiency trick.", None),
    ("Splitting d_model among the heads is a neat budget trick.", None),
])
def test_which_noun_is_mapped_onto_the_heads(sentence, picture):
    assert pictures.own_picture([N(sentence)]) == picture


@pytest.mark.parametrize("q1, mapped", [
    # the picture's merging set equal to concatenation + W_O in the mapping sentence
    ("Twelve teachers mark the same essay at the same time. In multi-head attention the teachers are the heads. "
     "Teacher = head, and the mark sheet plus the head of department = concat + W_O.", True),
    # the merging told in one sentence, and the next bridges to the model
    ("A squad of detectives gets the same case file. In the transformer, one detective is one attention head. When "
     "the squad meets, everybody lays their notes side by side and the chief writes one report. In the model that "
     "is the concatenation of the head outputs followed by the output projection W_O.", True),
    # half a mapping: the heads' outputs concatenated, no merging of the picture's
    ("Twelve teachers mark the same essay at the same time. In multi-head attention the teachers are the heads. "
     "The outputs of the heads are concatenated and multiplied by W_O.", False),
])
def test_the_pictures_merging_mapped_onto_concatenation_and_w_o(q1, mapped):
    text = ex1(q1, "The MLP works on each token.", "BERT attends both ways.")
    assert rubric.evaluate(R1, text).lines["analogy_mapped"].earned is mapped


def test_the_pictures_sentences_are_matched_as_sentences_about_the_heads():
    us = units(R1, blocks(ex1("Think of the heads as chefs. The head chef tastes. One chef watches the verbs, "
                              "the other chefs watch the nouns.", "x", "y"))[0])[0]
    read = pictures.read_as_heads(us, ("chef", "chefs"))
    norms = [u.norm for u in read]
    assert norms[0] == N("Think of the heads as persons.")  # the mapping: read as the lesson's picture
    assert norms[1] == N("The head chef tastes.")  # the picture's own head is another part
    assert norms[2] == N("One head watches the verbs, the other heads watch the nouns.")
    assert [u.display for u in read] == [u.display for u in us]  # what people see is the student's text


CHEFS = ex1(
    "Think of the heads as chefs in one kitchen. All the chefs work in parallel on the same tokens, and each chef "
    "has their own recipe cards, i.e. its own W_Q, W_K and W_V. So one chef notices which noun \"it\" refers to, "
    "while another chef watches the word just before. Each chef only gets a station d_model / h wide, so the whole "
    "brigade costs about as much as one full-width chef. The heads' outputs are concatenated and W_O mixes them: "
    "so a chef is a head, and collecting the plates is the concatenation, with W_O as the head chef.",
    "The MLP then works on each token on its own, with the same weights at every position. Residual connections "
    "go around attention and the MLP, with a layer norm before each, and the blocks are stacked.",
    "BERT's chefs see the tokens on both sides; GPT's chefs wear a causal mask and see only the earlier tokens.")


def test_an_answer_explained_through_its_own_picture_earns_the_heads_concepts():
    a = rubric.evaluate(R1, CHEFS)
    for line in ("heads_parallel", "different_relations", "cost_one_head", "analogy_mapped"):
        assert a.lines[line].earned, line
        assert "chef" in a.lines[line].quotes[0]  # quoted in the student's words
    assert not [r for r in a.needs_review if r.startswith(("off-topic", "nonsense?"))]


def test_without_the_mapping_the_chefs_are_not_the_heads():
    unmapped = CHEFS.replace("Think of the heads as chefs in one kitchen. ", "").replace(
        ": so a chef is a head, and collecting the plates is the concatenation, with W_O as the head chef", ".")
    assert "a chef is a head" not in unmapped and "as chefs" not in unmapped
    a = rubric.evaluate(R1, unmapped)
    assert not a.lines["different_relations"].earned and not a.lines["heads_parallel"].earned


def test_nonsense_that_says_it_maps_keeps_its_words():
    kittens = ex1(
        "The eight kittens are the heads of our house. The kitten eats from the bowl of tokens, the kitten "
        "chases the mouse in the garden, and the kitten sleeps on the sofa by the window.",
        "The kitten naps in the basket after the MLP of dinner on the carpet, and a layer norm of fur lies on the "
        "mat.",
        "The kitten BERT sees the garden from the roof of the shed, and GPT wears a causal mask of wool.")
    us = units(R1, blocks(kittens)[0])[0]
    assert pictures.own_picture([u.norm for u in us]) == ("kitten", "kittens")
    assert pictures.matching_units(us) == us  # it says everything inside another world: no reading as heads


def _chefs(limit: str) -> str:
    """CHEFS with ``limit`` (a sentence or two on where the picture breaks) after its first paragraph's mapping."""
    return CHEFS.replace("Think of the heads as chefs in one kitchen. ", "Think of the heads as chefs in one kitchen. "
                         + limit + " ", 1)


@pytest.mark.parametrize("limit, error", [
    ("In a real kitchen the chefs work one after another, passing the plate along, but the heads do not.",
     "heads_sequential"),
    ("Unlike heads, chefs work one after another on the dish.", "heads_sequential"),
    ("Where the picture fails: each chef gets only a part of the order, while every head sees all the tokens.",
     "heads_split_tokens"),
    ("The picture breaks in one place: each chef is assigned a task by the head chef.", "heads_assigned_roles"),
    ("The picture breaks in one place. Each chef is assigned a task by the head chef.", "heads_assigned_roles"),
])
def test_where_the_picture_breaks_is_no_error_about_the_heads(limit, error):
    # what the picture's world does unlike the model is not said of the heads (a wrong diagnosis is worse than none)
    a = rubric.evaluate(R1, _chefs(limit))
    assert not a.misconceptions[error].found
    assert not [r for r in a.needs_review if r.startswith("contradiction")]


def test_the_same_error_said_of_the_picture_is_still_an_error():
    a = rubric.evaluate(R1, _chefs("The chefs work one after another, each one finishing the plate of the chef "
                                   "before.").replace("All the chefs work in parallel on the same tokens, and each",
                                                      "Each"))
    assert a.misconceptions["heads_sequential"].found


def test_an_error_said_in_the_mapping_sentence_is_said_of_the_heads():
    # the mapping itself is read as the lesson's picture (a person is a head); the rest of the sentence is about
    # the heads, errors included
    us = units(R1, blocks(ex1("Think of the heads as chefs. Each chef is a head, and the chefs take turns.", "x",
                              "y"))[0])[0]
    assert pictures.read_as_heads(us, ("chef", "chefs"))[1].norm == N("Each person is a head, and the heads take "
                                                                      "turns.")
    wrong = rubric.evaluate(R1, CHEFS.replace(
        "All the chefs work in parallel on the same tokens, and each chef",
        "Each chef is a head, and the chefs work one after another on the same order; each chef"))
    assert wrong.misconceptions["heads_sequential"].found
    right = rubric.evaluate(R1, CHEFS.replace(
        "All the chefs work in parallel on the same tokens, and each chef",
        "Each chef is a head, and the chefs work at the same time on the same order; each chef"))
    assert not right.misconceptions["heads_sequential"].found
    assert right.lines["heads_parallel"].earned and right.lines["analogy_mapped"].earned


def test_real_is_where_the_picture_breaks_only_before_the_pictures_noun():
    real = rubric.evaluate(R1, _chefs("Real chefs work one after another, passing the plate along."))
    assert not real.misconceptions["heads_sequential"].found
    # "a real station" is part of the picture: the sentence is still read as the heads
    station = CHEFS.replace("All the chefs work in parallel on the same tokens",
                            "Each chef has a real station, and all the chefs work in parallel on the same tokens")
    assert rubric.evaluate(R1, station).lines["heads_parallel"].earned


def test_a_not_about_the_heads_inside_the_picture_is_no_limit():
    text = CHEFS.replace("All the chefs work in parallel on the same tokens, and each chef has their own recipe cards, "
                         "i.e. its own W_Q, W_K and W_V.",
                         "All the chefs work in parallel on the same tokens, and each chef has their own recipe cards, "
                         "W_Q, W_K and W_V, that are not shared with other heads.")
    assert text != CHEFS
    assert rubric.evaluate(R1, text).lines["heads_parallel"].earned


# --------------------------------------------------------------------------- pictures of other parts (exercise 4)

R4 = rubric.load(ROOT / "exercises" / "exercise4" / "rubric.toml")


@pytest.mark.parametrize("sentence, mapped", [
    ("I think of the residual stream as a river and every sub-layer as a mill on a side channel.",
     {("river", "rivers"): ("residual stream", "residual streams"), ("mill", "mills"): ("block", "blocks")}),
    ("The residual stream is the motorway: the embedding gets on at the bottom.",
     {("motorway", "motorways"): ("residual stream", "residual streams")}),
    ("The coach's feedback, i.e. the gradient, runs back down the same chain.",
     {("feedback", "feedbacks"): ("gradient", "gradients")}),
    ("Twelve runners (the twelve sub-layers) hand the baton on.", {("runner", "runners"): ("block", "blocks")}),
    ("Each stage (an attention or MLP sub-layer) adds its own colour.", {("stage", "stages"): ("block", "blocks")}),
    ("Cut the bypass (no residuals) and the music is lost.",
     {("bypass", "bypasses"): ("residual stream", "residual streams")}),
    ("The residual stream is a path for the gradient.", {}),  # a word of the lesson's own account
    ("Each block is a small MLP with attention.", {}),  # a word of the lesson
    ("The gradient is tiny by the first block.", {}),
])
def test_a_picture_of_another_part_is_found_only_when_stated(sentence, mapped):
    assert pictures.part_pictures([N(sentence)]) == mapped


def test_a_part_pictures_sentences_are_matched_as_sentences_about_the_part():
    # ("the gradient is shrunk by every mill" earned nothing before: the mills made it a sentence about something else)
    text = ("I think of the residual stream as a river and every sub-layer as a mill on a side channel. The river "
            "itself always flows through.\n\nWithout residuals there is no river, only mills one after another. Going "
            "upstream the gradient is shrunk by every mill, so the first blocks hardly get any signal.")
    assert rubric.evaluate(R4, text).lines["gradient_path"].earned
    # the mapping sentence keeps its words; the others are read with the part's
    us = units(R4, blocks(text)[0])[0]
    read = [u.norm for u in pictures.matching_units(us)]
    assert read[0] == us[0].norm and read[3] == N("Going upstream the gradient is shrunk by every block, so the first "
                                                  "blocks hardly get any signal.")
    # without a stated mapping nothing is read as the part
    unmapped = text.replace("I think of the residual stream as a river and every sub-layer as a mill on a side "
                            "channel.", "There is a river with mills on its side channels.")
    assert pictures.part_pictures([u.norm for u in units(R4, blocks(unmapped)[0])[0]]) == {}


def test_naming_the_residual_stream_in_a_picture_is_not_the_residual_connections():
    # "Residual stream" is a term of the lesson, but a sentence that only names it says nothing of the connections
    # around attention and the MLP (exercise 1's residual line); it earned the point when "stream" counted as a part
    # of the block. Saying what the stream does still earns it.
    assert not rubric.evaluate(R1, ex1("", "Think of the residual stream as a river.", "")).lines["residual"].earned
    said = "Think of the residual stream as a river: attention and the MLP each add their output to it."
    assert rubric.evaluate(R1, ex1("", said, "")).lines["residual"].earned


def test_a_noun_described_as_what_training_sends_back_is_the_gradient():
    said = N('The "you were wrong, change this" message that training sends backwards comes straight back through '
             'the plus signs.')
    assert pictures.part_pictures([said]) == {("message", "messages"): ("gradient", "gradients")}
    assert pictures.part_pictures([N("The message that the author sends back is short.")]) == {}
    assert pictures.part_pictures([N("In football, the ball that training passes back to the keeper matters.")]) == {}
    # everyday words all through: only the described part is read, and the gradient's path is earned
    text = (f"{said.capitalize()} Take the plus signs out and the message has to squeeze through every block's "
            "weights, shrinking each time, so the first blocks hear almost nothing and never improve.")
    assert rubric.evaluate(R4, text).lines["gradient_path"].earned
    assert not rubric.evaluate(R4, text.replace("that training sends backwards", "")).lines["gradient_path"].earned
