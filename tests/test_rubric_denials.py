"""Denials the matcher must see (grader/rubric/concepts.py, assertions.py) and sentences that mix the lesson's terms
with unrelated things (topic.py), on both exercises' rubrics: each rule with the sentences it must stop and the
ones it must keep."""
import pytest
from conftest import ROOT

from grader import rubric
from grader.rubric.assertions import stance_of
from grader.rubric.sentences import split_sentences
from grader.rubric.mixing import bound_and_mixed, foreign_nouns, mixed_sentences, mixed_share, mixed_words
from grader.rubric.topic import foreign, foreign_agents, off_topic_share

R1 = rubric.load(ROOT / "exercises" / "exercise1" / "rubric.toml")
R4 = rubric.load(ROOT / "exercises" / "exercise4" / "rubric.toml")
N = rubric.normalise


def earned(r, text):
    return {k for k, v in rubric.evaluate(r, text).lines.items() if v.earned}


def norms(text):
    return [N(s) for s in split_sentences(text)]


# --------------------------------------------------------------------------- 1. pieces picked around a denial

@pytest.mark.parametrize("text, line", [
    ("Post-norm does not put a normalisation in the gradient's way: a layer norm on the stream leaves the backward "
     "pass untouched.", "postnorm_in_gradient_path"),
    ("The residual connections are not what lets the gradient reach the first block; the additions carry nothing "
     "special backwards, and the gradient at the first block is no different with or without them.", "gradient_path"),
    ("In post-norm the gradient goes through every block's norm and weights, so it is tiny by the time it reaches the "
     "first blocks.", "gradient_path"),  # post-norm's norms: another line
])
def test_pieces_around_a_denied_statement_of_the_concept_earn_nothing(text, line):
    assert line not in earned(R4, text)


@pytest.mark.parametrize("r, text, line", [
    (R1, "In attention, the heads do not run one after another but in parallel.", "heads_parallel"),
    (R4, "Without residuals, every block must carry the whole signal.", "whole_signal"),
    (R4, "Without residuals, each block must take the whole thing over, carry all of it and hand all of it on.",
     "whole_signal"),  # a fifth-round dev answer's wording
    (R4, "Once the addition is gone, the gradient that should tell the early blocks what to keep has to go back "
         "through every block's weights instead of along the additions, so it is tiny by the time it gets there.",
     "gradient_path"),  # the route without the residuals, said with "instead of"
    (R4, "Without residuals the gradient reaching the first blocks is tiny; if we trained with the residuals, it would "
         "reach them intact.", "gradient_path"),  # a line's unless in a condition does not restrict it
    # a negated clause inside the span that says nothing of the concept
    (R4, "Post-norm, which does not change the forward pass much, puts a layer norm in the gradient's way.",
     "postnorm_in_gradient_path"),
    (R4, "Post-norm puts a layer norm in the gradient's way, not after it.", "postnorm_in_gradient_path"),
])
def test_a_denial_of_something_else_inside_the_span_keeps_the_line(r, text, line):
    assert line in earned(r, text)


@pytest.mark.parametrize("text, earns", [
    ("Without residuals the gradient reaching the first blocks is tiny, so they barely train.", True),
    ("With no residual connection the signal has no way around any block. At initialisation the gradient also shrinks "
     "through every block, so the first blocks hardly learn.", True),
    ("Without residuals the gradient is multiplied by each block's Jacobian; the first blocks get almost nothing and "
     "never learn.", True),  # the "nothing" is the evidence's own even though "never learn" could also end it
    ("Without residuals the gradient is multiplied by each block's Jacobian; nothing says the first blocks get almost "
     "nothing.", False),
    ("In post-norm the gradient is tiny by the time it reaches the first block.", False),
    ("With residuals the gradient is never tiny at the first blocks, without them it is.", False),
    ("Without residuals the gradient at the first blocks is not tiny at all.", False),
    ("Some people say that without residuals the gradient reaching the first blocks is tiny.", False),
])
def test_the_gradient_path_said_from_the_model_without_residuals(text, earns):
    # three labellers who never saw the rubric count "without residuals the gradient barely reaches the first
    # blocks" as the gradient's path; post-norm, "with residuals", a denial and hearsay do not count
    assert ("gradient_path" in earned(R4, text)) is earns


@pytest.mark.parametrize("text, line, earns", [
    # general vocabulary of exercise 4's concepts, from the dev answers of 2026-12-06 (labels_d.toml); each with the
    # sentence it must not take
    ("Without the skips, the gradient can not get back to the lower blocks, so they never really train.",
     "gradient_path", True),
    ("In post-norm the layer norm comes after the residual addition, so every gradient travelling backwards crosses "
     "all of the norms on the main path.", "gradient_path", False),
    ("Once the residual is removed, each block's output replaces its input entirely.", "whole_signal", True),
    ("With residuals the output of a block does not replace its input.", "whole_signal", False),
    ("Without the skip, every block has to re-encode everything on its own or it is gone.", "whole_signal", True),
    ("Without residual connections the model loses an important part of its design and does much worse.",
     "whole_signal", False),
    ("Post-norm at the high rate blows up without warm-up, and the original Transformer never ran without it.",
     "warmup", True),
    ("In the original Transformer the learning rate was warmed up linearly over the first 4000 steps.", "warmup", True),
    ("Post-norm did not fail without warm-up in my runs; it only learned slowly.", "warmup", False),
    ("The pre-norm run ended at 2.41, far below the unigram level.", "unigram_level", False),
    ("The no-residual run ended at 3.31, about U.", "unigram_level", False),  # the result restated, not explained
    ("Without residuals the model never gets below the unigram level: it only learns how often each character "
     "occurs.", "unigram_level", True),
    ("The identity term is now multiplied by the Jacobian of the layer norm, i.e. the normalisation sits on the "
     "gradient's path.", "postnorm_in_gradient_path", True),
    ("The identity term is now multiplied by the Jacobian of the layer norm, i.e. the normalisation sits on the "
     "gradient's path.", "gradient_path", False),
    ("Pre-norm puts the layer norm on the branch, so it is not on the main path.", "postnorm_in_gradient_path", False),
    ("Post-norm normalises after the residual is added, so the output of every block is cleaned up and the gradients "
     "stay tame.", "postnorm_in_gradient_path", False),  # the wrong reason: nothing in the gradient's way
    ("In post-norm the gradient has to pass every layer norm on its way down.", "postnorm_in_gradient_path", True),
    ("In post-norm the layer norm comes after the residual addition, so it is in the gradient's way at every block.",
     "postnorm_in_gradient_path", True),
    ("Without the skip, each of the twelve sub-layers has to reproduce the full representation.", "whole_signal", True),
    ("The model without skips ended at 3.31. Without the skip, no block passes its input on for free.", "whole_signal",
     True),
    ("With the skip, each of the twelve sub-layers only adds a small correction.", "whole_signal", False),
    ("Without residuals, whatever the last block needs must be re-copied by every block in the chain.", "whole_signal",
     True),
    ("Without residuals the model can only learn what holds regardless of the input: how often each character "
     "occurs.", "unigram_level", True),
    ("Because the early blocks never get told how to improve, the model can not learn anything that depends on the "
     "previous characters. What's left to learn is the overall frequency of each character.", "unigram_level", True),
    # "the overall" and "the early" lead to a noun: they are no foreign actor of the sentence
    ("The model without residuals was bad: it basically just predicts the most common letters every time, which is "
     "why it is around U.", "unigram_level", True),
    ("The model without residuals just memorises the most common character patterns of the training windows.",
     "unigram_level", False),
    ("Skip = identity path for the grads, so they reach block 1 directly.", "gradient_path", True),
    ("Multiplied out over the twelve sub-layers the product is I + J + ...: the I survives, so the gradient at the top "
     "always reaches the bottom.", "gradient_path", True),
    ("That is the uninterrupted gradient path of the residual model.", "gradient_path", True),
    ("Expanding the product gives the term I, so there is always a component of the gradient that reaches block 1 "
     "unchanged.", "gradient_path", True),  # the identity matrix, not the pronoun
    ("In post-norm the term I is multiplied by the LayerNorm's Jacobian, so the gradient never reaches block 1 "
     "intact.", "gradient_path", False),
    ("The i-th head always reaches the gradient of block 1 through its products.", "gradient_path", False),
    ("In post-norm the identity is multiplied by the LayerNorm's derivative at every sub-layer, so the clean path for "
     "the gradient is gone.", "gradient_path", False),
    ("In post-norm the gradient picks up the LayerNorm's derivative at every layer.", "postnorm_in_gradient_path", True),
    ("Without residuals the model can not use the context, so the best it can do is predict every character with its "
     "frequency.", "unigram_level", True),
    ("Without the skips every block must give to the next block all the information, because the next block sees "
     "only its output.", "whole_signal", True),
    ("With residuals, each block has to give only a small correction to the stream.", "whole_signal", False),
    # a paragraph that continues the one before pairs with its last sentence; any other paragraph break separates
    ("Without the skip the gradient decays through all twelve sub-layers of the transformer. That is the first reason "
     "the no-residual run can not learn.\n\nThe second is that y = F(x) has to keep all the information itself.",
     "whole_signal", True),
    ("Without the skip the gradient decays through all twelve sub-layers of the transformer. That is why the "
     "no-residual run can not learn.\n\nIn pre-norm, y = x + F(LN(x)) keeps all the information.", "whole_signal",
     False),
])
def test_exercise4_concepts_in_general_wordings(text, line, earns):
    assert (line in earned(R4, text)) is earns


# --------------------------------------------------------------------------- 2. negatable = false owns only its pieces' negations

def test_negatable_false_owns_only_negations_inside_its_pieces():
    assert "whole_signal" not in earned(R4, "Without residuals the blocks do not have to carry the whole signal, "
                                            "because attention keeps the current character intact anyway.")
    assert "whole_signal" in earned(R4, "Without residuals every block has to carry the whole signal itself.")
    # the negation its pattern spells is still its own ("without", "no residual")
    assert "whole_signal" in earned(R4, "With no residual connection, every block must pass on the whole signal.")


@pytest.mark.parametrize("text, earns", [
    ("Without residuals the model can not get below the unigram level.", True),
    ("Without residuals the loss never gets below the unigram level U.", True),
    ("The model without residuals does not learn more than letter frequencies.", True),
    ("The model without residuals does not stay at the unigram level.", False),  # no bound: a denial
])
def test_a_negated_bound_before_a_piece_states_the_limit(text, earns):
    assert ("unigram_level" in earned(R4, text)) is earns


# --------------------------------------------------------------------------- 3. denials of a role cover their subject

@pytest.mark.parametrize("sentence, phrase", [
    ("Warm-up is irrelevant to it.", "warm-up"),
    ("Warm-up is completely unnecessary for post-norm.", "warm-up"),
    ("The warm-up is not needed.", "warm-up"),
    ("The residual has nothing to do with the gradient.", "residual"),
    ("The layer norm plays no role in the backward pass.", "layer norm"),
    ("The additions make no difference to the gradient.", "additions"),
    ("The gradient is no different with or without them.", "gradient"),
    ("A layer norm on the stream leaves the backward pass untouched.", "backward pass"),
])
def test_a_denied_role_negates_its_subject(sentence, phrase):
    assert stance_of(N(sentence), N(phrase)) == "negated"


def test_role_denials_both_ways():
    assert "warmup" not in earned(R4, "Warm-up is irrelevant to it, and the original Transformer did not need a "
                                      "learning-rate warm-up.")
    assert "warmup" in earned(R4, "Post-norm needs warm-up; without it the run diverges.")
    assert "warmup" in earned(R4, "Post-norm needs warm-up; how long it lasts is irrelevant.")  # a denial elsewhere
    # "untouched" spelled by the line's own pattern: the residual stream leaving the gradient untouched is the concept
    assert "gradient_path" in earned(R4, "The residual stream leaves the gradient untouched on its way to the first block.")
    assert stance_of(N("The heads are not irrelevant."), N("heads")) == "asserted"  # "not irrelevant" is no denial


# --------------------------------------------------------------------------- 4. lesson terms bound to or mixed with foreign things

NONSENSE = (
    "The residual stream in my garden carries rainwater along an uninterrupted path, so the gradient of the lawn "
    "stays gentle all the way down to the first flower bed. Without it every block of paving has to carry the whole "
    "signal of the storm, and the frogs only learn letter frequencies at the unigram level of the pond. Post-norm, the "
    "neighbour's fence, puts a layer norm of ivy in the gradient's way, and at a high learning rate the cat falls off "
    "it. The original Transformer, a toy robot from 1984, needed a warm-up by the fireplace before it would move.")


def test_nonsense_with_the_lessons_terms_earns_nothing_and_is_measured():
    assert earned(R4, NONSENSE) == set()
    assert mixed_share(norms(NONSENSE)) == 1.0
    assert mixed_words(norms(NONSENSE)) == ["garden", "lawn", "flower", "storm", "frogs", "pond"]
    assert {"ivy", "cat", "fireplace"} <= {w for found in mixed_sentences(norms(NONSENSE)) for w in found}


@pytest.mark.parametrize("text, start, word, bound", [
    ("post-norm, the neighbour's fence, puts a layer norm in the way", 0, "post-norm", True),
    ("the original transformer, a toy robot from 1984, needed a warm-up", 13, "transformer", True),
    ("they only reach the unigram level of the pond", 20, "unigram", True),
    ("a layer norm of ivy", 2, "layer norm", True),
    # in the lesson's company
    ("post-norm, the variant in the original paper, needs warm-up", 0, "post-norm", False),
    ("the original transformer, the model of the paper, used post-norm", 13, "transformer", False),
    ("the loss stays at the unigram level of the run", 22, "unigram", False),
    ("post-norm, the gradient, and the stream", 0, "post-norm", False),
    # a clause between the commas is no apposition: "a head, the document everyone reads is the sequence, ..."
    ("a member is a head, the document everyone reads is the sequence of tokens, and", 14, "head", False),
])
def test_a_term_bound_to_a_foreign_thing(text, start, word, bound):
    assert foreign(text, start, start + len(word)) is bound


def test_one_foreign_binding_alone_does_not_silence_a_sentence():
    assert "warmup" in earned(R4, "Post-norm, the variant of the original paper, needs a warm-up.")
    assert not bound_and_mixed(N("The gradient of the loss reaches the first block through the residual stream."))


@pytest.mark.parametrize("text", [
    # the lesson's picture and common analogies, mapped onto the model
    "A team reviewing a contract splits the work: each lawyer reads the whole contract and takes notes on dates.",
    "Attention is like a library: the query is what you look for, the keys are the labels on the shelves.",
    "Each head is a musician in an orchestra, reading the same score with its own instrument.",
    "Think of the residual stream as a river and each block as a village that takes water from it.",
    "Attention is like a meeting where everyone listens. In the meeting, the chair writes the minutes on a board.",
    # plain answers
    "With residuals each block adds a small correction to a stream that carries its input forward unchanged.",
    "The run without residuals stays at the unigram level U in the table after the last step.",
    "After attention, every token goes through an MLP, a small two-layer feed-forward network with a GELU.",
    "The score is the dot product of the query with the key, divided by the square root of the key dimension.",
])
def test_analogies_and_plain_answers_do_not_mix(text):
    assert mixed_share(norms(text)) == 0.0, mixed_sentences(norms(text))


def test_foreign_nouns_need_two_in_a_sentence_with_the_lessons_terms():
    assert foreign_nouns(N("The gradient of the lawn reaches my garden.")) == ["lawn", "garden"]
    assert mixed_share(norms("My cat sat by the fireplace.")) == 0.0  # no lesson term: off-topic, not mixed
    assert mixed_share(norms("The gradient reaches my garden.")) == 0.0  # one foreign noun is not a mix
    assert mixed_share([]) == 0.0


@pytest.mark.parametrize("text, nouns", [
    # a phrase led by "same"/"other" (function words that lead on to the noun), by this/each/every, or by a
    # preposition of time ("on thursday", "before sunday") names its noun
    ("All your heads run on the same stall this week.", ["stall", "week"]),
    ("GPT puts on a causal mask and should not look ahead before Sunday.", ["sunday"]),
    ("Each kitten has its own query, and every other bag is full.", ["kitten", "bag"]),
    # "each"/"this" before a verb are pronouns ("each adds", "this means"); fixed phrases name nothing
    ("Each adds its output to the stream, and this means the heads run in parallel, side by side, at once.", []),
    ("In practice the heads run at the same time; on the other hand each head is narrow.", []),
    ("Each head reads the same tokens, and the other heads do the same.", []),
])
def test_foreign_nouns_of_phrases_led_by_same_this_or_a_time_preposition(text, nouns):
    assert foreign_nouns(N(text)) == nouns


@pytest.mark.parametrize("text, agents", [
    # a domain noun spelled like an adjective ("gradient", "signal") ends its phrase; adverbs and particles are no
    # noun; the lesson's own nouns of exercise 4 (the backward pass, the identity, the branch) are no foreign actor
    ("The addition passes the gradient back unchanged, so even the first block hears it.", []),
    ("So the backward pass has to go through the Jacobian of every layer.", []),
    ("They start random and the training signal shapes them, so the original signal always survives.", []),
    ("What is left to learn is the overall frequency of each character.", []),
    ("The identity carries the gradient while the branch adds a correction.", []),
    # a foreign actor is still one, after a domain word too
    ("Nobody assigns the cooks their jobs.", ["cooks"]),
    ("The farmer stacks the blocks.", ["farmer"]),
    ("The training cooks decide which head tracks which word.", ["cooks"]),
    ("The gradient farmer passes the signal back to the first blocks.", ["farmer"]),
    ("Then the residual chef adds the sauce to every block.", ["chef", "sauce"]),
])
def test_foreign_agents_are_nouns_outside_the_lesson(text, agents):
    assert foreign_agents(N(text)) == agents


def test_a_sentence_about_something_else_denies_no_line():
    # "their jobs" after the picture's manager was read as a foreign subject, and such a clause was taken for a
    # denial of the line the answer earns: said of something else, it denies nothing
    text = ("Each head is a complete attention with its own learned projections; the heads run in parallel.\n\n"
            "The picture misleads in one big way: an audit manager assigns the work, but nobody assigns jobs to heads. "
            "They are initialised randomly and the training signal shapes them, so their jobs are emergent and often "
            "overlapping or hard to name.")
    a = rubric.evaluate(R1, text)
    assert a.lines["analogy_limits"].earned
    assert not [r for r in a.needs_review if r.startswith("contradiction")]
    denial = text + " But the heads do not learn their roles during training."
    assert [r for r in rubric.evaluate(R1, denial).needs_review if r.startswith("contradiction")]
    # a clause whose subject is something else is not a denial of the line either
    a = rubric.evaluate(R1, "Each head has its own W_Q, W_K and W_V. The lettuces have their own W_Q, W_K and W_V.")
    assert a.lines["own_qkv"].earned
    assert not [r for r in a.needs_review if r.startswith("contradiction")]


def test_an_error_said_of_the_letter_counts_keeps_the_unigram_level():
    # the evidence's own loses: "it overfits: it memorises the letter counts" names the error, and states the
    # letter frequencies it would otherwise lose (tests/prose/LABELLING.md: an error loses what it contradicts)
    before = ("Without residuals the model can only learn the letter frequencies, so the run stays at U = 3.29. "
              "The model without residuals also overfits")
    a = rubric.evaluate(R4, before + ": it memorises the letter counts of the training text.")
    assert a.misconceptions["no_residual_overfits"].found and a.lines["unigram_level"].earned
    a = rubric.evaluate(R4, before + " the training windows.")
    assert a.misconceptions["no_residual_overfits"].found and not a.lines["unigram_level"].earned
    assert a.lines["unigram_level"].contradicted_by == "no_residual_overfits"
    # said again in another sentence in words that contradict the line: the misconception's own loses
    a = rubric.evaluate(R4, before + ": it memorises the letter counts of the training text. In fact the model without "
                                     "residuals memorises the training windows, not the letter frequencies.")
    assert a.misconceptions["no_residual_overfits"].found and not a.lines["unigram_level"].earned


def test_a_loses_of_evidence_must_name_lines(tmp_path):
    text = (ROOT / "exercises" / "exercise4" / "rubric.toml").read_text().replace("  loses = []\n",
                                                                              '  loses = ["no_such_line"]\n', 1)
    (tmp_path / "rubric.toml").write_text(text)
    with pytest.raises(rubric.RubricError, match="no_such_line"):
        rubric.load(tmp_path / "rubric.toml")


@pytest.mark.parametrize("text, off_topic", [
    # terse notes in exercise 4's own words are on the lesson; a recipe is not
    ("No-residual ~ U -> it learnt the marginal p(char) and nothing conditional p(char | context). Not memorising "
     "either: its train loss is ~U too. The model can only predict each character from its frequency. Deep stack w/o "
     "shortcut is just hard to train.", False),
    ("In my favourite novel the characters always take shortcuts through the forest. The context of each chapter "
     "changes how often the characters meet, and their frequencies of meeting are low. The author likes long walks. "
     "Every chapter ends in the rain.", True),  # the lesson's words count only beside one of its terms
    ("Knead the dough for ten minutes. Leave it to rise overnight. Bake it at two hundred degrees. Let the loaf cool "
     "on a rack.", True),
])
def test_the_off_topic_measure_knows_exercise_4s_words(text, off_topic):
    assert (off_topic_share(norms(text)) > 0.3) is off_topic


@pytest.mark.parametrize("r, text, line, error", [
    # an adverb before the noun of a "without" phrase is inside it; only after the noun does the predicate start
    (R1, "BERT's attention is bidirectional: every token attends to all tokens, without even a causal mask.",
     "bert_bidirectional", "bert_causal"),
    (R4, "Without residuals the gradient reaching the first blocks is tiny. The model without residuals stays at "
         "U = 3.29 instead of just overfitting the training text.", "gradient_path", "no_residual_overfits"),
    # a source's own action with "will" is no view of vague others
    (R1, "GPT is a language model: a language model will write text one token at a time, so each token attends only "
         "to itself and earlier tokens through a causal mask.", "gpt_causal", "gpt_bidirectional"),
])
def test_phrases_after_the_noun_and_modals_of_others(r, text, line, error):
    a = rubric.evaluate(r, text)
    assert a.lines[line].earned and not a.misconceptions[error].found
