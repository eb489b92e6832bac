"""Attacks on the rubric engine (grader/rubric/assertions.py, cues.py, concepts.py, topic.py) and the genuine
sentences each rule must keep: exercise-1 answers that state the concepts and deny or withhold every one of them
(at most 3/10 or flagged for review), exercise-4 explanations that put the lesson's terms in sentences about
kitchens and gardens (the same goal), and, next to every rule, a strong student's sentence with the same words."""
import pytest
from conftest import ROOT, ex1_answer as ex1

from grader import rubric
from grader.rubric.assertions import stance_of

R1 = rubric.load(ROOT / "exercises" / "exercise1" / "rubric.toml")
R4 = rubric.load(ROOT / "exercises" / "exercise4" / "rubric.toml")
N = rubric.normalise


DENIALS = {
    "contrary_slides": ex1(
        "Contrary to what the slides say, several heads run in parallel on the same tokens. Contrary to what the "
        "slides say, each head has its own query, key and value projections. Contrary to what the slides say, one head "
        "tracks which verb a pronoun refers to while another tracks dates. Contrary to what the slides say, each head "
        "works in d_model / h dimensions, 768 = 12 x 64, so all heads together cost about as much as one full-width head.",
        "Contrary to what the slides say, the MLP works on each token on its own. Contrary to what the slides say, there "
        "are residual connections around attention and the MLP, with a layer norm before each. Contrary to what the "
        "slides say, blocks are stacked, 12 in GPT-2 small.",
        "Contrary to what the slides say, BERT attends in both directions. Contrary to what the slides say, GPT uses a "
        "causal mask, so each token attends only to earlier tokens."),
    "wrong_to_claim": ex1(
        "It would be wrong to claim that the heads run in parallel. It would be wrong to claim that each head has its "
        "own query, key and value projections. It would be wrong to claim that one head can track subject and verb while "
        "another tracks dates. It would be wrong to claim that each head works in d_model / h dimensions, and so that "
        "all heads together cost about as much as one head. It would be wrong to claim that the outputs of the heads are "
        "concatenated and mixed by W_O.",
        "It would be wrong to claim that the MLP works on each token separately. It would be wrong to claim that residual "
        "connections and layer norm wrap attention and the MLP. It would be wrong to claim that blocks are stacked.",
        "It would be wrong to claim that BERT attends to tokens on both sides. It would be wrong to claim that GPT uses "
        "a causal mask."),
    "refuse_to_believe": ex1(
        "I refuse to believe that several heads run in parallel. I refuse to believe that each head has its own query, "
        "key and value projections, or that one head follows which noun an adjective describes. I refuse to believe "
        "that each head works in d_model / h = 64 dimensions so that all the heads together cost about as much as one "
        "full-width head. I refuse to believe that the heads' outputs are concatenated and multiplied by W_O. I refuse "
        "to believe that each person in the team is a head.",
        "I refuse to believe that the MLP works on each token on its own. I refuse to believe that there are residual "
        "connections around attention and the MLP, or layer norm before each. I refuse to believe that blocks are "
        "stacked, 12 of them in GPT-2.",
        "I refuse to believe that BERT sees tokens left and right. I refuse to believe that GPT uses a causal mask."),
    "nobody_right_mind": ex1(
        "Nobody in their right mind would say that the heads run in parallel. Nobody in their right mind would say that "
        "each head has its own query, key and value projections. Nobody in their right mind would say that one head "
        "tracks which pronoun refers to which noun. Nobody in their right mind would say that each head works in "
        "d_model / h dimensions, so that all heads cost about as much as one head.",
        "Nobody in their right mind would say that the MLP works on each token on its own. Nobody in their right mind "
        "would say that residual connections and layer norm sit around attention and the MLP. Nobody in their right "
        "mind would say that the blocks are stacked.",
        "Nobody in their right mind would say that BERT attends in both directions. Nobody in their right mind would "
        "say that GPT uses a causal mask."),
    "nonsense": ex1(
        "The idea that the heads run in parallel is nonsense. The idea that each head has its own query, key and value "
        "projections is nonsense. The idea that one head can track the link between a verb and its subject is nonsense. "
        "The idea that each head works in d_model / h dimensions is nonsense, and the idea that all heads together cost "
        "about as much as one full-width head is nonsense too. The idea that the outputs are concatenated and mixed by "
        "W_O is nonsense.",
        "The idea that the MLP works on each token on its own is nonsense. The idea that residual connections wrap "
        "attention and the MLP is nonsense. The idea that layer norm comes before each is nonsense. The idea that blocks "
        "are stacked is nonsense.",
        "The idea that BERT attends in both directions is nonsense. The idea that GPT uses a causal mask is nonsense."),
    "not_at_all": ex1(
        "The heads run in parallel? Not at all. Each head has its own query, key and value projections? Not at all. One "
        "head tracks dates and another tracks amounts, so a head links a pronoun to its noun? Not at all. Each head "
        "works in d_model / h dimensions, 768 = 12 x 64? Not at all. All heads together cost about as much as one head? "
        "Not at all. The outputs are concatenated and mixed by W_O? Not at all.",
        "The MLP works on each token on its own? Not at all. Residual connections go around attention and the MLP? Not "
        "at all. Layer norm comes before each? Not at all. Blocks are stacked? Not at all.",
        "BERT attends in both directions? Not at all. GPT uses a causal mask? Not at all."),
    "is_it_true_no": ex1(
        "Is it true that several heads run in parallel? No. Is it true that each head has its own query, key and value "
        "projections? No. Is it true that one head can track which adjective belongs to which noun? No. Is it true "
        "that each head works in d_model / h dimensions, so the heads together cost about as much as one head? No. Is "
        "it true that the outputs are concatenated and mixed by W_O? No.",
        "Is it true that the MLP works on each token on its own? No. Is it true that residual connections and layer "
        "norm wrap attention and the MLP? No. Is it true that blocks are stacked? No.",
        "Is it true that BERT attends in both directions? No. Is it true that GPT uses a causal mask? No."),
    "far_from": ex1(
        "Far from running in parallel, the heads wait for each other. Far from having its own query, key and value "
        "projections, a head borrows them. Far from one head tracking which verb goes with which subject, all heads "
        "track the same thing. Far from each head working in d_model / h dimensions, each works in the full width, and "
        "far from costing about as much as one head, the heads together cost far more. Far from being concatenated and "
        "mixed by W_O, the outputs are thrown away.",
        "Far from working on each token on its own, the MLP is idle. Far from having residual connections around "
        "attention and the MLP, the block has none, and far from a layer norm before each, nothing is normalised. Far "
        "from being stacked, the blocks stand alone.",
        "Far from attending in both directions, BERT is blind. Far from using a causal mask, GPT looks everywhere."),
    "popular_myth": ex1(
        "That the heads run in parallel is a popular myth. That each head has its own query, key and value projections "
        "is a popular myth. That one head tracks which pronoun refers to which noun is a popular myth. That each head "
        "works in d_model / h dimensions is a popular myth, and that all heads together cost about as much as one head "
        "is a popular myth. That the outputs are concatenated and mixed by W_O is a popular myth.",
        "That the MLP works on each token on its own is a popular myth. That residual connections wrap attention and "
        "the MLP is a popular myth. That layer norm sits before each sublayer is a popular myth. That blocks are stacked "
        "is a popular myth.",
        "That BERT attends in both directions is a popular myth. That GPT uses a causal mask is a popular myth."),
    "told_false": ex1(
        "We were told that the heads run in parallel, which turned out to be false. We were told that each head has its "
        "own query, key and value projections, which turned out to be false. We were told that one head can track the "
        "subject of a verb, which turned out to be false. We were told that each head works in d_model / h dimensions "
        "and that all heads together cost about as much as one head, which turned out to be false. We were told that "
        "the outputs are concatenated and mixed by W_O, which turned out to be false.",
        "We were told that the MLP works on each token on its own, which turned out to be false. We were told that "
        "residual connections and layer norm wrap attention and the MLP, which turned out to be false. We were told "
        "that blocks are stacked, which turned out to be false.",
        "We were told that BERT attends in both directions, which turned out to be false. We were told that GPT uses a "
        "causal mask, which turned out to be false."),
    "so_the_story_goes": ex1(
        "Several heads run in parallel on the same tokens, or so the story goes. Each head has its own query, key and "
        "value projections, or so the story goes. One head tracks which pronoun refers to which noun, or so the story "
        "goes. Each head works in d_model / h dimensions, so all heads cost about as much as one full-width head, or so "
        "the story goes. The outputs of the heads are concatenated and mixed by W_O, or so the story goes.",
        "The MLP works on each token on its own, or so the story goes. Residual connections and layer norm wrap "
        "attention and the MLP, or so the story goes. Blocks are stacked, 12 in GPT-2, or so the story goes.",
        "BERT attends in both directions, or so the story goes. GPT uses a causal mask, or so the story goes."),
    "supposedly_reality": ex1(
        "Several heads run in parallel on the same tokens; in reality nothing of the sort. Each head has its own query, "
        "key and value projections; in reality nothing of the sort. One head tracks dates and another tracks which "
        "pronoun refers to which noun; in reality nothing of the sort. Each head works in d_model / h dimensions and all "
        "heads cost about as much as one head; in reality nothing of the sort. The outputs are concatenated and mixed by "
        "W_O; in reality nothing of the sort.",
        "The MLP works on each token on its own; in reality nothing of the sort. Residual connections wrap attention and "
        "the MLP, with a layer norm before each; in reality nothing of the sort. Blocks are stacked; in reality nothing "
        "of the sort.",
        "BERT attends in both directions; in reality nothing of the sort. GPT uses a causal mask; in reality nothing of "
        "the sort."),
    "used_to_think": ex1(
        "I used to think that several heads run in parallel, but I no longer do. I used to think that each head has its "
        "own query, key and value projections, but I no longer do. I used to think that one head can track which verb "
        "belongs to which subject, but I no longer do. I used to think that each head works in d_model / h dimensions "
        "and that all heads cost about as much as one head, but I no longer do. I used to think that the outputs are "
        "concatenated and mixed by W_O, but I no longer do.",
        "I used to think that the MLP works on each token on its own, but I no longer do. I used to think that residual "
        "connections and layer norm wrap attention and the MLP, but I no longer do. I used to think that blocks are "
        "stacked, but I no longer do.",
        "I used to think that BERT attends in both directions, but I no longer do. I used to think that GPT uses a "
        "causal mask, but I no longer do."),
    "pretend": ex1(
        "Pretend that several heads run in parallel on the same tokens. Pretend that each head has its own query, key "
        "and value projections. Pretend that one head tracks which pronoun refers to which noun. Pretend that each head "
        "works in d_model / h dimensions, so that all heads together cost about as much as one full-width head. Pretend "
        "that the outputs are concatenated and mixed by W_O. Pretend that each person in the team is a head.",
        "Pretend that the MLP works on each token on its own. Pretend that residual connections and layer norm wrap "
        "attention and the MLP. Pretend that blocks are stacked, 12 in GPT-2.",
        "Pretend that BERT attends in both directions. Pretend that GPT uses a causal mask."),
    "let_us_imagine": ex1(
        "Let us imagine that several heads run in parallel. Let us imagine that each head has its own query, key and "
        "value projections. Let us imagine that one head tracks which adjective describes which noun. Let us imagine "
        "that each head works in d_model / h dimensions and that all heads together cost about as much as one head. Let "
        "us imagine that the outputs are concatenated and mixed by W_O. None of it is how the model works.",
        "Let us imagine that the MLP works on each token on its own. Let us imagine that residual connections and layer "
        "norm wrap attention and the MLP. Let us imagine that blocks are stacked.",
        "Let us imagine that BERT attends in both directions. Let us imagine that GPT uses a causal mask."),
    "what_if": ex1(
        "What if several heads run in parallel on the same tokens. What if each head has its own query, key and value "
        "projections. What if one head tracks which pronoun refers to which noun. What if each head works in d_model / "
        "h dimensions, so that all heads together cost about as much as one head. What if the outputs are concatenated "
        "and mixed by W_O.",
        "What if the MLP works on each token on its own. What if residual connections and layer norm wrap attention "
        "and the MLP. What if blocks are stacked, 12 in GPT-2.",
        "What if BERT attends in both directions. What if GPT uses a causal mask."),
    "said_no_one": ex1(
        "Several heads run in parallel on the same tokens, said no one ever. Each head has its own query, key and value "
        "projections, said no one ever. One head tracks which pronoun refers to which noun, said no one ever. Each head "
        "works in d_model / h dimensions and all heads cost about as much as one head, said no one ever. The outputs are "
        "concatenated and mixed by W_O, said no one ever.",
        "The MLP works on each token on its own, said no one ever. Residual connections and layer norm wrap attention "
        "and the MLP, said no one ever. Blocks are stacked, said no one ever.",
        "BERT attends in both directions, said no one ever. GPT uses a causal mask, said no one ever."),
    "in_a_world": ex1(
        "In a world where several heads run in parallel, each head has its own query, key and value projections. In a "
        "world where one head tracks which verb goes with which subject, each head works in d_model / h dimensions. In a "
        "world where that holds, all heads together cost about as much as one head, and the outputs are concatenated "
        "and mixed by W_O. We do not live in that world.",
        "In a world where the MLP works on each token on its own, residual connections and layer norm wrap attention "
        "and the MLP. In a world where that holds, blocks are stacked.",
        "In a world where BERT attends in both directions, GPT uses a causal mask. We do not live there."),
    "sarcasm": ex1(
        "Sure, several heads run in parallel. Right. Sure, each head has its own query, key and value projections. "
        "Right. Sure, one head tracks which pronoun refers to which noun. Right. Sure, each head works in d_model / h "
        "dimensions, so all heads cost about as much as one head. Right. Sure, the outputs are concatenated and mixed "
        "by W_O. Right.",
        "Sure, the MLP works on each token on its own. Right. Sure, residual connections and layer norm wrap attention "
        "and the MLP. Right. Sure, blocks are stacked. Right.",
        "Sure, BERT attends in both directions. Right. Sure, GPT uses a causal mask. Right."),
    "never_mind": ex1(
        "Never mind that several heads run in parallel. Never mind that each head has its own query, key and value "
        "projections. Never mind that one head tracks which pronoun refers to which noun. Never mind that each head "
        "works in d_model / h dimensions and that all heads together cost about as much as one head. Never mind that "
        "the outputs are concatenated and mixed by W_O. None of that is true.",
        "Never mind that the MLP works on each token on its own. Never mind that residual connections and layer norm "
        "wrap attention and the MLP. Never mind that blocks are stacked. None of that is true.",
        "Never mind that BERT attends in both directions. Never mind that GPT uses a causal mask. None of that is true."),
    "opposite_truth": ex1(
        "That several heads run in parallel is the opposite of the truth. That each head has its own query, key and "
        "value projections is the opposite of the truth. That one head tracks which pronoun refers to which noun is the "
        "opposite of the truth. That each head works in d_model / h dimensions, so that all heads cost about as much as "
        "one head, is the opposite of the truth. That the outputs are concatenated and mixed by W_O is the opposite of "
        "the truth.",
        "That the MLP works on each token on its own is the opposite of the truth. That residual connections and layer "
        "norm wrap attention and the MLP is the opposite of the truth. That blocks are stacked is the opposite of the "
        "truth.",
        "That BERT attends in both directions is the opposite of the truth. That GPT uses a causal mask is the opposite "
        "of the truth."),
    "reverse_holds": ex1(
        "Some think several heads run in parallel; if anything, the reverse holds. Each head has its own query, key and "
        "value projections, people say; if anything, the reverse holds. One head tracks which pronoun refers to which "
        "noun; if anything, the reverse holds. Each head works in d_model / h dimensions and all heads cost about as "
        "much as one head; if anything, the reverse holds. The outputs are concatenated and mixed by W_O; if anything, "
        "the reverse holds.",
        "The MLP works on each token on its own; if anything, the reverse holds. Residual connections and layer norm "
        "wrap attention and the MLP; if anything, the reverse holds. Blocks are stacked; if anything, the reverse holds.",
        "BERT attends in both directions; if anything, the reverse holds. GPT uses a causal mask; if anything, the "
        "reverse holds."),
    "wrong_claims_list": ex1(
        "Wrong claims:\n\n- Several heads run in parallel on the same tokens.\n- Each head has its own query, key and "
        "value projections.\n- One head tracks which pronoun refers to which noun.\n- Each head works in d_model / h "
        "dimensions, so all heads together cost about as much as one head.\n- The outputs are concatenated and mixed by "
        "W_O.\n- Each person in the team is a head, and merging the notes is the concatenation.",
        "Myths:\n\n- The MLP works on each token on its own.\n- Residual connections wrap attention and the MLP.\n- A "
        "layer norm comes before each sublayer.\n- Blocks are stacked, 12 in GPT-2 small.",
        "Myths:\n\n- BERT attends in both directions.\n- GPT uses a causal mask, so each token sees only earlier tokens."),
    "all_false_final": ex1(
        "Several heads run in parallel on the same tokens. Each head has its own query, key and value projections, so "
        "one head can track which pronoun refers to which noun. Each head works in d_model / h dimensions, 768 = 12 x "
        "64, so all heads together cost about as much as one full-width head. The outputs are concatenated and mixed by "
        "W_O. Each person in the team is a head, and nobody assigns the heads their jobs.",
        "The MLP works on each token on its own. Residual connections wrap attention and the MLP, with a layer norm "
        "before each. Blocks are stacked, 12 in GPT-2 small.",
        "BERT attends in both directions. GPT uses a causal mask, so each token attends only to earlier tokens.\n\nAll "
        "of the above is false."),
    "dont_believe_anyone": ex1(
        "Don't believe anyone who tells you that several heads run in parallel. Don't believe anyone who tells you that "
        "each head has its own query, key and value projections. Don't believe anyone who tells you that one head tracks "
        "which pronoun refers to which noun. Don't believe anyone who tells you that each head works in d_model / h "
        "dimensions, or that all heads together cost about as much as one head. Don't believe anyone who tells you that "
        "the outputs are concatenated and mixed by W_O.",
        "Don't believe anyone who tells you that the MLP works on each token on its own. Don't believe anyone who tells "
        "you that residual connections and layer norm wrap attention and the MLP. Don't believe anyone who tells you "
        "that blocks are stacked.",
        "Don't believe anyone who tells you that BERT attends in both directions. Don't believe anyone who tells you "
        "that GPT uses a causal mask."),
}

NONSENSE4 = {
    "river": "The residual stream of the river carries the gradient of the hill down to the first block of the dam. "
             "Without residuals the unigram level U of the lake stays flat, because every block of ice replaces the "
             "water. Post-norm rain at a high learning rate falls on the layer norm of the roof, and warm-up of the "
             "sun lets the gradient of the snow flow again.",
    "football": "In football the residual connection between the striker and the goalkeeper keeps the gradient of "
                "the pitch alive. A team without residuals stays at the unigram level U of the league table. Post-norm "
                "defenders at a high learning rate normalise the ball and the match collapses; a warm-up before kick-off "
                "fixes the layer norm of the legs.",
    "cooking": "When cooking pasta, the residual water carries the gradient of salt to the first block of noodles. "
               "Without residuals the sauce stays at the unigram level U, like letter-frequency soup. Post-norm ovens "
               "at a high learning rate burn the layer norm of the cake, so a warm-up of the oven is needed and the "
               "gradient of heat reaches the early blocks.",
    "music": "The residual chord of the orchestra passes the gradient of the melody to the first violin block. "
             "Without residuals the choir stays at the unigram level U and sings letter frequencies. Post-norm drums at "
             "a high learning rate put a layer norm on every beat, and the band never leaves the first note; a warm-up "
             "of the voice lets the gradient flow.",
    "weather": "The residual storm carries the gradient of the pressure down to the first block of clouds. Without "
               "residuals the weather stays at the unigram level U, predicting rain by its frequency. Post-norm wind at a "
               "high learning rate normalises the clouds in every block and the forecast collapses, which is why a "
               "warm-up of spring is needed.",
    "traffic": "Traffic flows on the residual lane, which carries the gradient of the road to the first block of "
               "houses. Without residuals the cars stay at the unigram level U of the junction. Post-norm traffic lights "
               "at a high learning rate put a layer norm on each crossing and the gradient vanishes before the early "
               "blocks; a warm-up of the engine helps.",
    "kitchen": "In the kitchen the residual connection of the fridge keeps the gradient of the milk unchanged through "
               "every block of cheese. A kitchen without residuals stays at the unigram level U of breakfast. Post-norm "
               "toasters at a high learning rate normalise the bread in every block, and a warm-up of the kettle lets "
               "the early blocks of toast learn.",
    "space_station": "On the space station the residual stream of oxygen carries the gradient of gravity to the first "
                     "block of the module. Without residuals the astronauts stay at the unigram level U, guessing "
                     "letters by frequency. Post-norm rockets at a high learning rate put a layer norm on every engine and "
                     "the station falls; warm-up of the thrusters keeps the gradient of fuel flowing.",
    "garden": "The residual roots of the tree pass the gradient of water unchanged to the first block of soil. A garden "
              "without residuals stays at the unigram level U and grows only common weeds. Post-norm sunlight at a high "
              "learning rate normalises the leaves in every block, so the flowers never leave the ground until a warm-up "
              "of the season arrives.",
    "marathon": "A marathon runner keeps a residual of energy so the gradient of the hill reaches the first block of "
                "the race. A runner without residuals stays at the unigram level U of pace. Post-norm shoes at a high "
                "learning rate normalise each step and the runner falls; the warm-up before the start is why the "
                "original runner needed no clean path.",
}


def out_of_ten(assessment):
    return 10 * assessment.total / assessment.max_total


def earned(r, text):
    return {k for k, v in rubric.evaluate(r, text).lines.items() if v.earned}


# --------------------------------------------------------------------------- the goals

@pytest.mark.parametrize("name", sorted(DENIALS))
def test_a_denied_answer_earns_at_most_3_of_10_or_is_flagged(name):
    a = rubric.evaluate(R1, DENIALS[name])
    assert out_of_ten(a) <= 3 or a.needs_review, (name, a.total, sorted(k for k, v in a.lines.items() if v.earned))


@pytest.mark.parametrize("name", sorted(DENIALS))
def test_a_denied_answer_earns_no_concept(name):  # stronger than the goal: what the rules now reach
    assert earned(R1, DENIALS[name]) == set(), name


@pytest.mark.parametrize("name", sorted(NONSENSE4))
def test_a_nonsense_explanation_earns_at_most_3_of_10_or_is_flagged(name):
    a = rubric.evaluate(R4, "## Explanation\n\n" + NONSENSE4[name])
    assert out_of_ten(a) <= 3 or a.needs_review, (name, a.total, sorted(k for k, v in a.lines.items() if v.earned))


def test_the_reference_explanation_keeps_its_points():
    report = (ROOT / "solutions" / "exercise4" / "report.md").read_text()
    a = rubric.evaluate(R4, "## Explanation\n\n" + report.split("## Explanation", 1)[1])
    assert a.total == 6.5


# --------------------------------------------------------------------------- each rule and its genuine counterpart

@pytest.mark.parametrize("sentence, phrase, stance", [
    # refusing, and having believed once
    ("I refuse to believe that the heads run in parallel.", "the heads run in parallel", "doubted"),
    ("I refuse to believe that heads run one after another; they run in parallel.", "they run in parallel", "asserted"),
    ("I used to think that the heads split the tokens.", "the heads split the tokens", "doubted"),
    ("I used to think the heads split the tokens, but in fact they split d_model.", "they split d_model", "asserted"),
    ("Each head has its own projections, but I no longer do.", "each head has its own projections", "doubted"),
    # far from
    ("Far from running in parallel, the heads wait for each other.", "running in parallel", "negated"),
    ("Far from being slow, the heads run in parallel.", "the heads run in parallel", "asserted"),
    ("The picture is far from perfect: the heads learn their roles in training.", "the heads learn their roles",
     "asserted"),
    ("Far from the tokens being split, every head sees the whole sequence.", "every head sees the whole sequence",
     "asserted"),
    # the lesson contradicted, and popular belief contradicted
    ("Contrary to what the slides say, several heads run in parallel.", "several heads run in parallel", "framed"),
    ("Contrary to popular belief, the heads split d_model, not the tokens.", "the heads split d_model", "asserted"),
    # make-believe: the consequent too; a general rule keeps its consequent
    ("Pretend that several heads run in parallel.", "several heads run in parallel", "supposed"),
    ("In a world where heads run in parallel, each head has its own projections.", "each head has its own projections",
     "supposed"),
    ("What if each head works in 64 dimensions, so that all heads cost as much as one head.",
     "all heads cost as much as one head", "supposed"),
    ("If you add heads, the width of each head shrinks.", "the width of each head shrinks", "asserted"),
    ("Suppose d_model is 768, then each head works in 64 dimensions.", "each head works in 64 dimensions", "asserted"),
    ("Let us say d_model is 768, so each head works in 64 dimensions.", "each head works in 64 dimensions", "asserted"),
    # a sub-clause that takes the rest back
    ("The outputs are concatenated, which turned out to be false.", "the outputs are concatenated", "refuted"),
    ("The outputs are concatenated, which turned out to be the key step.", "the outputs are concatenated", "asserted"),
    ("The heads run in parallel, or so the story goes.", "the heads run in parallel", "refuted"),
    ("The heads run in parallel, so the story of the team fits.", "the heads run in parallel", "asserted"),
    ("The blocks are stacked, said no one ever.", "the blocks are stacked", "refuted"),
    ("The blocks are stacked, said the lecturer.", "the blocks are stacked", "asserted"),
    # a segment that takes the one before back
    ("The MLP works on each token; in reality nothing of the sort.", "the mlp works on each token", "refuted"),
    ("Some say the heads split the tokens; in reality each head sees every token.", "each head sees every token",
     "asserted"),
    ("GPT uses a causal mask; if anything, the reverse holds.", "gpt uses a causal mask", "refuted"),
    ("If anything, each head is cheaper than it looks.", "each head is cheaper than it looks", "asserted"),
    # a trailing frame
    ("That the blocks are stacked is the opposite of the truth.", "the blocks are stacked", "framed"),
    ("Each token attends only to earlier tokens, the opposite of BERT.", "each token attends only to earlier tokens",
     "asserted"),
    # do not believe those who say
    ("Don't believe anyone who tells you that the heads run in parallel.", "the heads run in parallel", "doubted"),
    ("Don't believe anyone who tells you the heads split the tokens: each head sees every token.",
     "each head sees every token", "asserted"),
])
def test_stance(sentence, phrase, stance):
    assert stance_of(N(sentence), N(phrase)) == stance


def test_sarcasm_needs_both_the_sure_and_the_right():
    said = N("Sure, several heads run in parallel.")
    assert stance_of(said, "several heads run in parallel", following="right.") == "refuted"
    assert stance_of(said, "several heads run in parallel", following=N("Each head sees every token.")) == "asserted"
    plain = N("Several heads run in parallel.")
    assert stance_of(plain, "several heads run in parallel", following="right.") == "asserted"
    genuine = N("Sure, each head is smaller, but together they cost about as much as one full-width head.")
    assert stance_of(genuine, N("together they cost about as much as one full-width head")) == "asserted"


LIST = ("- Several heads run in parallel on the same tokens.\n- Each head has its own query, key and value "
        "projections.\n- GPT uses a causal mask, so each token attends only to earlier tokens.")


def test_a_myths_label_takes_back_its_list():
    assert earned(R1, ex1(f"Myths:\n\n{LIST}", "", "")) == set()


def test_a_plain_label_keeps_its_list():
    assert {"heads_parallel", "own_qkv", "gpt_causal"} <= earned(R1, ex1(f"Key points:\n\n{LIST}", "", ""))


def test_a_myths_label_ends_where_the_student_answers_it():
    text = ex1("Myths:\n\n- The heads split the tokens between them.\n\nIn reality, several heads run in parallel on "
               "the same tokens.", "", "")
    assert "heads_parallel" in earned(R1, text)


def test_a_genuine_sentence_among_nonsense_keeps_its_point():
    kitchen = NONSENSE4["kitchen"].split(". ")
    kitchen[1] = ("Without residuals the model's validation loss stays at the unigram level U because the gradient "
                  "never reaches the first block")
    assert "unigram_level" in earned(R4, "## Explanation\n\n" + ". ".join(kitchen))


def test_an_analogy_next_to_the_claim_keeps_its_point():
    text = ("## Explanation\n\nWithout residuals the model only learns letter frequencies: its loss stays at the "
            "unigram level U. It is like a relay race where every runner has to carry the whole baton. The gradient "
            "reaching the first block is tiny, because every block replaces its input.")
    assert "unigram_level" in earned(R4, text)


# --------------------------------------------------------------------------- issue 11: more non-assertions

@pytest.mark.parametrize("sentence, phrase, following, stance", [
    # sarcasm and irony
    ("Sure, because the heads obviously share their weights, right?", "the heads obviously share their weights", "",
     "refuted"),
    ("The heads obviously share their weights.", "the heads obviously share their weights", "Yeah, right.", "refuted"),
    ("The heads share their weights, yeah right.", "the heads share their weights", "", "refuted"),
    ("As if the heads ran in parallel.", "the heads ran in parallel", "", "refuted"),
    ("Sure, each head is smaller, but together they cost about as much as one full-width head.",
     "together they cost about as much as one full-width head", "", "asserted"),
    ("The heads run in parallel, as if each were a separate reader.", "the heads run in parallel", "", "asserted"),
    ("Each head has its own projections.", "each head has its own projections", "Right, and W_O mixes them.",
     "asserted"),
    # a belief given up
    ("I used to think that each head had its own projections.", "each head had its own projections", "", "doubted"),
    ("At first I thought each head had its own projections, but that turned out to be wrong.",
     "each head had its own projections", "", "refuted"),
    ("At first I thought the heads split the tokens, but in fact they split d_model.", "they split d_model", "",
     "asserted"),
    ("The heads split d_model, but I was wrong.", "the heads split d_model", "", "refuted"),
    ("At first the heads see every token, but then the mask hides the later ones.", "the heads see every token", "",
     "asserted"),
    # a source contradicted, a claim that does not hold up, a naive claim
    ("Contrary to what Karpathy says, each head has its own projections.", "each head has its own projections", "",
     "framed"),
    ("Contrary to what many people think, the heads split d_model.", "the heads split d_model", "", "asserted"),
    ("The claim that each head has its own projections does not hold up.", "each head has its own projections", "",
     "framed"),
    ("The claim that each head has its own projections has been debunked.", "each head has its own projections", "",
     "framed"),
    ("Each head has its own projections, and the picture holds up.", "each head has its own projections", "",
     "asserted"),
    ("Only a beginner would say that each head has its own projections.", "each head has its own projections", "",
     "framed"),
    ("Even a beginner can see that each head has its own projections.", "each head has its own projections", "",
     "asserted"),
    ("Supposedly, each head has its own projections.", "each head has its own projections", "", "attributed"),
    # an inverted conditional
    ("Had the heads run in parallel, the layer would be faster.", "the heads run in parallel", "", "supposed"),
    ("Had the heads run in parallel, the layer would be faster.", "the layer would be faster", "", "supposed"),
    ("Were the heads to share weights, they would learn the same thing.", "the heads to share weights", "", "supposed"),
    ("The heads had their own projections from the start.", "the heads had their own projections", "", "asserted"),
    # a label with its item in the same sentence
    ("Common misconceptions: the heads split the tokens.", "the heads split the tokens", "", "framed"),
    ("Key point: the heads split d_model.", "the heads split d_model", "", "asserted"),
])
def test_issue_11_stance(sentence, phrase, following, stance):
    assert stance_of(N(sentence), N(phrase), following=N(following)) == stance


@pytest.mark.parametrize("label", ["Wrong answers I have seen:", "Things that are NOT true:", "Common misconceptions:",
                                   "What multi-head attention is not:"])
def test_a_label_that_calls_its_list_wrong_takes_it_back(label):
    assert earned(R1, ex1(f"{label}\n\n{LIST}", "", "")) == set()


def test_a_wrong_label_ends_where_the_student_turns_back():
    text = ex1("Things that are NOT true:\n\n- The heads split the tokens between them.\n\nWhat is true is that several "
               "heads run in parallel on the same tokens.", "", "")
    assert "heads_parallel" in earned(R1, text)


# --------------------------------------------------------------------------- a foreign plural subject

@pytest.mark.parametrize("sentence, phrase, stance", [
    ("Without residuals, pancakes stay at the unigram level.", "pancakes stay at the unigram level", "foreign"),
    ("The lettuces get their own weights.", "the lettuces get their own weights", "foreign"),
    ("So bakers need a warm-up before the learning rate goes up.", "bakers need a warm-up", "foreign"),
    ("The lettuces also get their own weights.", "the lettuces also get their own weights", "foreign"),
    # genuine: a domain or general subject, a singular one, and verbs an '-s' does not make nouns
    ("Without residuals, the model stays at the unigram level.", "the model stays at the unigram level", "asserted"),
    ("Without residuals, gradients vanish and losses stay high.", "losses stay high", "asserted"),
    ("The heads get their own weights.", "the heads get their own weights", "asserted"),
    ("The run collapses when the learning rate is high.", "the run collapses", "asserted"),
    ("The model copes with it because the residual keeps a clean path.", "the model copes with it", "asserted"),
    ("Both components are wrapped in residual connections.", "both components are wrapped", "asserted"),
    ("The parallel perspectives are combined into one vector.", "the parallel perspectives are combined", "asserted"),
    ("Verbs reach back to their subject in one head.", "verbs reach back to their subject", "asserted"),
    ("The readers each read the whole contract.", "the readers each read the whole contract", "asserted"),
    ("The residual branches can amplify parameter updates.", "the residual branches can amplify", "asserted"),
])
def test_foreign_subject(sentence, phrase, stance):
    assert stance_of(N(sentence), N(phrase)) == stance


def test_a_foreign_subject_earns_no_line_and_a_genuine_one_keeps_it():
    genuine = "## Explanation\n\nWithout residuals, the models stay at the unigram level U of the character frequencies."
    nonsense = "## Explanation\n\nWithout residuals, pancakes stay at the unigram level U of the character frequencies."
    assert "unigram_level" in earned(R4, genuine)
    assert "unigram_level" not in earned(R4, nonsense)


# --------------------------------------------------------------------------- mockery, given-up beliefs, strings of questions

@pytest.mark.parametrize("sentence, phrase, following, stance", [
    ("Of course each head is only d_model / h wide.", "each head is only d_model / h wide", "Totally believable.",
     "doubted"),
    ("The outputs get concatenated and mixed by W_O.", "the outputs get concatenated", "What a lovely story.",
     "doubted"),
    ("Oh sure, the heads run in parallel on the same tokens.", "the heads run in parallel",
     "Absolutely, and I am the queen of England.", "doubted"),
    ("Right, and BERT's attention is bidirectional.", "bert's attention is bidirectional", "Sure.", "refuted"),
    ("Every person is a head, merging the notes is the concatenation, sure, sure.", "every person is a head", "",
     "refuted"),
    ("There are residual connections, because that is how the gradient keeps flowing, apparently.",
     "that is how the gradient keeps flowing", "", "refuted"),
    ("Next you will tell me one head follows pronouns while another tracks verbs.", "one head follows pronouns", "",
     "doubted"),
    # sincere: a plain "of course", a closing remark with a claim of its own, "apparently" inside the sentence
    ("Of course each head is only d_model / h wide.", "each head is only d_model / h wide",
     "So the heads together cost about as much as one head.", "asserted"),
    ("Each head has its own projections.", "each head has its own projections", "Sure enough, W_O mixes them.",
     "asserted"),
    ("The heads run in parallel on the same tokens.", "the heads run in parallel", "Great, that is the whole trick.",
     "asserted"),
    # a belief given up, with an adverb or "back then"
    ("I also used to believe that blocks are stacked.", "blocks are stacked", "", "doubted"),
    ("Back then I thought each head was d_model / h wide.", "each head was d_model / h wide", "", "doubted"),
    ("I also once believed that blocks are stacked, but it is more subtle than that.", "blocks are stacked", "",
     "doubted"),
    ("Back then the blocks were stacked in six layers.", "the blocks were stacked", "", "asserted"),
    # a string of questions asks; a question answered keeps its answer's point
    ("Do the heads really run in parallel?", "the heads really run in parallel", "Who decided that?", "doubted"),
    ("Does each head have its own projections, while another tracks verbs?", "another tracks verbs", "", "question"),
    ("Do the heads run in parallel?", "the heads run in parallel", "Yes, on the same tokens.", "question"),
    ("Each head has its own projections, while another head tracks verbs.", "another head tracks verbs", "",
     "asserted"),
])
def test_mockery_and_questions(sentence, phrase, following, stance):
    assert stance_of(N(sentence), N(phrase), following=N(following)) == stance


@pytest.mark.parametrize("sentence, phrase, following, stance", [
    ("Oh, of course, the residual stream is a clean path for the gradient.", "the residual stream is a clean path",
     "Sure.", "refuted"),
    ("Without it every block has to carry the whole signal.", "every block has to carry the whole signal",
     "How convenient.", "doubted"),
    ("Post-norm puts a layer norm in the gradient's way.", "puts a layer norm in the gradient's way",
     "I totally buy every word of it.", "doubted"),
    ("The original Transformer, we are told, fixed it with a warm-up.", "fixed it with a warm-up", "", "attributed"),
    # sincere
    ("In the lecture we were told that the original Transformer used a warm-up.", "used a warm-up", "", "asserted"),
    ("Post-norm puts a layer norm in the gradient's way.", "puts a layer norm in the gradient's way",
     "How convenient the pre-norm fix is: the residual stays clean.", "asserted"),
])
def test_mockery_in_an_explanation(sentence, phrase, following, stance):
    assert stance_of(N(sentence), N(phrase), following=N(following)) == stance


@pytest.mark.parametrize("sentence, phrase, following, stance", [
    ("I asked a chatbot and it told me that the heads run in parallel.", "the heads run in parallel", "", "attributed"),
    ("It claimed each head is d_model / h wide.", "each head is d_model / h wide", "", "attributed"),
    ("The chatbot added that the heads do not divide the tokens.", "the heads do not divide the tokens", "",
     "attributed"),
    ("GPT uses a causal mask so each token sees only the tokens before it.", "gpt uses a causal mask",
     "Both marked wrong.", "refuted"),
    # sincere
    ("The lecturer told me that the heads run in parallel.", "the heads run in parallel", "", "asserted"),
    ("Each head attends to every token and it tells the next layer what it found.", "each head attends to every token",
     "", "asserted"),
    ("GPT uses a causal mask so each token sees only the tokens before it.", "gpt uses a causal mask",
     "Both models stack blocks.", "asserted"),
])
def test_reported_and_crossed_out(sentence, phrase, following, stance):
    assert stance_of(N(sentence), N(phrase), following=N(following)) == stance


def test_a_crossed_out_list_takes_back_its_items():
    label = "Wrong answers I marked this year. These are the sentences students wrote that I crossed out:"
    assert earned(R1, ex1(f"{label}\n\n{LIST}", "", "")) == set()
    assert {"heads_parallel", "own_qkv", "gpt_causal"} <= earned(R1, ex1(f"Sentences I got right:\n\n{LIST}", "", ""))
