"""Nonsense written as a mapping onto another world (issue 11, grader/rubric/worlds.py): an answer that lays the
lesson's terms over an aquarium or a train station gets the "nonsense?" review flag (a flag only: its score is
the rules' own), while a genuine answer that uses the lesson's picture (a team reading a contract) or says it
compares ("think of it like a post office") is not flagged."""
import pytest
from conftest import ROOT, ex1_answer as ex1

from grader import rubric
from grader.rubric import worlds

R1 = rubric.load(ROOT / "exercises" / "exercise1" / "rubric.toml")
R4 = rubric.load(ROOT / "exercises" / "exercise4" / "rubric.toml")
N = rubric.normalise


def nonsense_flags(r, text):
    return [x for x in rubric.evaluate(r, text).needs_review if x.startswith("nonsense?")]


WORLDS1 = {
    "aquarium": ex1(
        "In the aquarium the heads of goldfish swim in parallel through the same tank. Each head of goldfish keeps "
        "its own queries, keys and values: it queries the pebbles, keys into the gravel and values the bubbles. "
        "One head of goldfish tracks the castle, another the plastic diver. Each head is d_model / h fins wide. "
        "The output projection W_O is the glass lid that closes the tank.",
        "The MLP is the filter pump that cleans each corner of the tank on its own. The residual connections are the "
        "tubes that loop around the rocks, and the layer norm is the thermometer that keeps the water level.",
        "BERT is the bidirectional snail that cleans both sides of the glass; GPT wears a causal mask of seaweed, so "
        "it only sees the crumbs that already fell."),
    "station": ex1(
        "In our station the heads are the ticket offices of the platforms, which run in parallel over the same "
        "timetable. The queries are the passengers' questions at the counter, the keys are the lockers of the "
        "cloakroom and the values are the coins in the machine. The concatenation is the long train of carriages.",
        "The residual stream is the underpass below the tracks, and the layer norm is the clock over the hall. "
        "The blocks are the buildings of the station, stacked floor on floor above the tracks.",
        "BERT is the porter who looks down both ends of the platform; GPT is the driver who only sees the rails "
        "behind the engine."),
    # says that it maps ("are called the heads", "says each ... is a head"), then never leaves the other world
    "hamsters": ex1(
        "My brother keeps eight hamsters and says each hamster is a head. They run in parallel on the same tokens, "
        "and each one has its own query, key and value in the cage. Because of that, one head chases the carrot and "
        "another head chases the pronoun. Each head eats d_model / h seeds, so together they eat about what one "
        "full-width head ate from the bowl. My brother concatenates their outputs, and W_O mixes them in the hutch.",
        "Our MLP visits each token on its own with the same paw. Two residual connections run around the "
        "sawdust, and a layer norm comes before each of them in the cage.",
        "Our BERT sees both ends of the garden; GPT wears a causal mask, so it only looks at the seeds it already "
        "ate."),
}
WORLDS4 = {
    "harbour": "In our harbour the residual stream is the pier along the docks, an open path for the gradient of "
               "the cranes. Without it every sailor carries the cargo, the ropes and the anchors alone, so the "
               "harbour stays at the unigram level of the tide. The post-norm is the harbour master who comes "
               "after the storm and puts a layer norm of fog in the gradient's way. The original harbour used a "
               "warm-up: an hour of tugboats before the ferry.",
}
GENUINE1 = {
    "team": ex1(
        "Multi-head attention is like a team reading one contract. Each person is a head: every head has its own "
        "query, key and value projections and reads the same tokens in parallel. One person tracks the dates, "
        "another tracks which party a pronoun refers to. Each head works in d_model / h dimensions, so all the "
        "heads together cost about as much as one full-width head. Merging the notes is the concatenation, and "
        "W_O mixes the heads' outputs back into d_model.",
        "Around attention the block has an MLP applied to each token on its own, residual connections that add "
        "each sublayer's input to its output, and layer norm; the blocks are stacked, each refining the "
        "representation of the one below.",
        "BERT uses bidirectional attention with no mask; GPT uses a causal mask, so each token only attends to "
        "the tokens before it."),
    "post_office": ex1(
        "Think of attention like a post office: the query is the address on a letter, the keys are the labels on "
        "the boxes and the values are what is inside the boxes. Several heads run in parallel on the same tokens, "
        "each with its own query, key and value projections, and each head learns a different relation. Each head "
        "has d_model / h dimensions, so the heads together cost about what one full-width head costs. The heads' "
        "outputs are concatenated and W_O projects them back to d_model.",
        "The MLP transforms each position on its own; residual connections add the input of every sublayer to "
        "its output, and layer norm keeps the activations at a steady scale. The blocks are stacked.",
        "BERT attends in both directions; GPT masks the future tokens, so it is causal."),
    # a picture of its own (not the lesson's), mapped, and the model also spoken of in sentences of its own
    "garage": ex1(
        "My picture is a garage where several mechanics inspect the same car at the same time. The mechanics are "
        "the heads: the heads of a layer run in parallel over the same tokens. Each mechanic has a toolbox of "
        "their own, as each head has its own query, key and value projections, so one head follows which noun a "
        "pronoun refers to while another looks at the previous token. Each head works in d_model / h dimensions, so "
        "all heads together cost about as much as one full-width head. The heads' outputs are concatenated and "
        "the output projection W_O mixes them back to d_model, like the foreman who writes one report.",
        "After attention the block applies an MLP to every token on its own, with the same weights at every "
        "position. Residual connections add each sublayer's input to its output, and layer norm comes before "
        "each sublayer. The blocks are stacked, each one refining the residual stream of the one below.",
        "BERT attends to the tokens on both sides; GPT uses a causal mask, so a token only attends to the "
        "tokens before it."),
}


@pytest.mark.parametrize("name", sorted(WORLDS1))
def test_another_world_in_exercise_1_is_flagged_as_nonsense(name):
    flags = nonsense_flags(R1, WORLDS1[name])
    assert flags, name


@pytest.mark.parametrize("name", sorted(WORLDS4))
def test_another_world_in_exercise_4_is_flagged_as_nonsense(name):
    assert nonsense_flags(R4, "## Explanation\n\n" + WORLDS4[name]), name


@pytest.mark.parametrize("name", sorted(GENUINE1))
def test_the_lessons_picture_and_a_said_comparison_are_not_flagged(name):
    flags = rubric.evaluate(R1, GENUINE1[name]).needs_review
    assert [x for x in flags if x.startswith(("nonsense?", "off-topic"))] == [], name


def test_the_flag_does_not_change_the_score():
    text = WORLDS1["station"]
    a = rubric.evaluate(R1, text)
    assert any(x.startswith("nonsense?") for x in a.needs_review)
    assert a.total == rubric.evaluate(R1, text).total  # deterministic; the flag only lowers the confidence
    assert a.confidence <= 0.4 + 1e-9


@pytest.mark.parametrize("sentence, why", [
    ("the residual connections are the hoses looped around the beds.", "mapped"),
    ("the post-norm is the conductor who arrives after the applause.", "mapped"),
    ("each head of goldfish keeps its own queries, keys and values.", "bound"),
    ("each person is a head and merging the notes is the concatenation.", ""),
    ("the residual connections are like the hoses in a garden.", ""),
    ("the residual connection is the sum of the input and the sublayer's output.", ""),
    ("w_o is the output projection that mixes the heads.", ""),
    ("the layer norm is the normalisation of each token's vector.", ""),
    ("bert is our bidirectional roadie who watches the crowd; gpt only hears the past notes.", "mapped"),
    ("gpt is a decoder: in \"the cat sat on the mat\" the token cat only attends to \"the\".", ""),
    ("multi-head attention is one of the main ideas of the transformer.", ""),
])
def test_which_sentence_lays_the_terms_over_another_world(sentence, why):
    assert worlds.world_sentences([N(sentence)]) == [why]


def test_the_share_said_inside_another_world():
    inside = [N("the hamster has its own query, key and value in the tunnels."),  # 12 words
              N("the vet, w_o, mixes the heap of fur.")]  # 8 words
    own = [N("each head has its own query, key and value projections."), N("w_o mixes the heads' outputs.")]  # 10, 5
    off = [N("my brother keeps eight hamsters.")]  # no lesson term: counted neither way
    assert worlds.entangled_share(inside + off) == (1.0, 2)
    assert worlds.entangled_share(own + off) == (0.0, 2)
    assert worlds.entangled_share(inside[:1] + own) == (pytest.approx(12 / (12 + 10 + 5)), 3)
    assert worlds.entangled_share(off) == (0.0, 0)
    assert worlds.entangled_words(inside + own + off) == ["hamster", "tunnels", "vet", "heap", "fur"]


def test_a_said_mapping_that_never_leaves_the_other_world_is_flagged():
    # each sentence names one foreign thing only (no "mixing") and the answer says it maps ("each hamster is a
    # head"): only the share said inside the other world tells it from an analogy
    flags = nonsense_flags(R1, WORLDS1["hamsters"])
    assert len(flags) == 1 and "never of the model on its own" in flags[0]
    assert "cage" in flags[0]


@pytest.mark.parametrize("sentence, verbs", [
    ("the mlp poaches each token on its own.", ["poaches"]),
    ("each head caulks its own query, key and value.", ["caulks"]),
    ("the outputs are then braised together by w_o.", ["braised"]),
    ("blocks are moored on top of one another.", ["moored"]),
    # verbs of the lesson and of explanations, with a prefix or made from a lesson word
    ("the mlp refines each token and layer norm rescales the stream.", []),
    ("bert is pretrained on masked tokens; the text is tokenized into words.", []),
    ("the heads' outputs are glued together and w_o mixes them.", []),
    ("attention is computed 3 times in parallel.", []),
])
def test_verbs_from_another_world(sentence, verbs):
    assert worlds.foreign_verbs(N(sentence)) == verbs


# vivid verbs in an answer that names only the model's things: the student's style, not another world
VIVID = ex1(
    "Several heads run in parallel over the same tokens; each head owns its W_Q, W_K and W_V. One head hooks a "
    "pronoun to its noun, another the previous token. Each head squints at only d_model / h dimensions, so the "
    "heads together cost about as much as one full-width head. The heads' outputs get glued end to end and W_O "
    "stirs them together.",
    "The MLP chews on each token on its own with the same weights. Residual connections sidestep attention and "
    "the MLP, so each sublayer only nudges the stream; layer norm tames the scale before each sublayer. The "
    "blocks get piled up, twelve deep.",
    "BERT peeks in both directions with no mask; GPT wears a causal mask, so each token only glimpses earlier "
    "tokens.")
# the same verbs where half the term sentences name things of another world: they are said inside it
VIVID_WORLD = VIVID.replace("One head hooks a pronoun to its noun, another the previous token.",
                            "One head hooks a pronoun to the anchor of the jetty, another the previous buoy.") \
    .replace("the heads together cost about as much as one full-width head.",
             "the heads together cost about as much as one full-width head of the harbour crane.") \
    .replace("The MLP chews on each token on its own with the same weights.",
             "The MLP chews on each token on its own with the same nets of the trawler.") \
    .replace("The blocks get piled up, twelve deep.", "The blocks get piled up like crates on the quay.")


def test_vivid_verbs_about_the_model_alone_are_no_other_world():
    assert worlds.entangled_share([N(s) for s in ("The MLP chews on each token on its own.",
                                                  "Each head squints at d_model / h dimensions.",
                                                  "BERT peeks in both directions with no mask.")]) == (0.0, 3)
    assert not nonsense_flags(R1, VIVID)


def test_vivid_verbs_in_another_world_still_count():
    share, n = worlds.entangled_share([N(s) for s in ("The MLP chews on each token on its own.",
                                                      "Each head squints at the buoys of the harbour.",
                                                      "BERT peeks at the gulls with no mask.")])
    assert share == 1.0 and n == 3
    assert nonsense_flags(R1, VIVID_WORLD)


def test_quoted_examples_of_the_sentence_being_processed_are_no_other_world():
    # the words of an example sentence are tokens, not things of another world; the same words unquoted are
    examples = [N(s) for s in ("In 'the chef cooked the pasta in the kitchen', one head links 'cooked' to 'chef'.",
                               'In "the dog chased the cat", BERT lets "dog" attend to "cat" both ways.',
                               "The MLP transforms the vector of 'pasta' on its own, as it does for 'chef'.")]
    assert worlds.world_sentences(examples) == ["", "", ""]
    assert worlds.entangled_share(examples) == (0.0, 3)
    unquoted = [n.replace("'", "").replace('"', "") for n in examples]
    assert worlds.entangled_share(unquoted)[0] == 1.0
    assert worlds.world_sentences(unquoted)[:2] == ["mixed", "mixed"]



EXAMPLES = ex1(
    "Several heads run in parallel over the same tokens, each head with its own W_Q, W_K and W_V. In 'the chef cooked "
    "the pasta in the kitchen', one head links 'cooked' to 'chef', another links 'pasta' to 'cooked'. In 'the dog "
    "chased the cat because it was hungry', a head links 'it' to 'dog'. Each head works in d_model / h dimensions, "
    "so all heads cost about as much as one full-width head. The outputs are concatenated and W_O mixes them.",
    "In 'the chef cooked the pasta', the MLP transforms the vector of 'pasta' on its own, with the same weights as "
    "for 'chef'. Residual connections add the input of attention and of the MLP to their outputs, and layer norm "
    "comes before each. The blocks are stacked.",
    "In 'the dog chased the cat', BERT lets 'dog' attend to 'cat' in both directions; GPT's causal mask lets 'cat' "
    "see 'dog' but not the other way round.")


@pytest.mark.xfail(strict=True, reason="known false flag: the 'mixing' measure (mixing.mixed_share) still counts the "
                   "nouns of quoted examples; leaving them out there also let a held-out nonsense answer through")
def test_an_answer_built_on_quoted_examples_is_not_routed_as_nonsense():
    assert worlds.world_share([N(s) for s in EXAMPLES.split(". ")]) == 0.0  # the measures of worlds.py leave them out
    assert nonsense_flags(R1, EXAMPLES) == []
    # the same answer with the quotes taken away names a chef, pasta, a kitchen, a dog and a cat
    assert nonsense_flags(R1, EXAMPLES.replace("'", " ")) != []

@pytest.mark.parametrize("sentence, bridged", [
    ("each detective files what they find, which in the model is each head's own w_q, w_k and w_v.", True),
    ("so the notebooks are collected, in other words the heads' outputs are concatenated by w_o.", True),
    ("in the model each head is a musician and the song is the token sequence.", True),
    ("the tracks are laid side by side (that is the concatenation) and the engineer at the desk mixes them.", True),
    # a bridge with the other world going on after it bridges to nothing
    ("in the model one head chases the carrot and another head chases the pronoun.", False),
    ("technically our mlp visits each token in the hutch.", False),
    ("they run in parallel on the same wheel, i.e. the heads, and each one has its own query in the cage.", False),
])
def test_a_bridge_to_the_model_leaves_the_other_world_behind(sentence, bridged):
    assert worlds.bridges(N(sentence)) is bridged


def test_nonsense_that_says_in_the_model_everywhere_is_still_flagged():
    bridged = ex1(
        "My brother keeps eight hamsters and says each hamster is a head. In the model they run in parallel on the "
        "same wheel, and each one has its own query, key and value in the cage. In the model one head chases the "
        "carrot and another head chases the pronoun. In the model each head eats d_model / h seeds, so together "
        "they eat about what one full-width head ate from the bowl. In the model my brother concatenates their "
        "outputs, and W_O mixes them in the hutch.",
        "In the model our MLP visits each token on its own with the same paw. In the model two residual "
        "connections run around the sawdust, and a layer norm comes before each of them in the cage.",
        "In the model our BERT sees both ends of the garden; GPT wears a causal mask, so it only looks at the "
        "seeds it already ate.")
    assert nonsense_flags(R1, bridged)


def test_the_flag_names_each_foreign_word_once():
    norms = [N("one head chases the carrot in the cage, another head chases the pronoun in the cage."),
             N("each head chases its own query in the hutch.")]
    assert worlds.entangled_words(norms) == ["carrot", "cage", "chases", "hutch"]


STORY = ex1(
    "We are sad to announce that head 4 of layer 2 has passed away. He grew up with seven brothers, who all read "
    "the same tokens side by side, in parallel, and each had his own query, key and value. He was narrow, only "
    "d_model / h wide, and his whole family together cost no more than one full-width head. His notes were "
    "concatenated and mixed by W_O, an old friend of his.",
    "He leaves behind the MLP, who worked on each token alone, and the residual connections, who kept him stable "
    "around attention with a layer norm before each. He rests in block 2 of the stack.",
    "He is survived by BERT, who saw in both directions, and by GPT, who wore a causal mask to the end.")
TEAM = ex1(
    "The heads are the reviewers of one contract: they all read the same tokens at the same time, in parallel. One "
    "reviewer checks the dates, another the amounts; she uses her own checklist, which in the model is each head's "
    "own W_Q, W_K and W_V. Each head works in d_model / h dimensions, so all of them together cost about one "
    "full-width head. Their notes are concatenated and mixed by W_O: merging the notes is concat + W_O, and a "
    "reviewer is a head. Unlike the team, nobody assigns the heads their jobs; they learn them.",
    "The MLP works on each token on its own. Residual connections go around attention and the MLP, with a layer "
    "norm before each. Blocks are stacked, each refining the one below.",
    "BERT attends in both directions; GPT uses a causal mask.")


def test_the_lessons_terms_told_as_the_characters_of_a_story_are_flagged():
    n, rate = worlds.characters([rubric.normalise(STORY)])
    assert n >= worlds.CHARACTERS_MIN and rate > worlds.CHARACTER_RATE
    flags = nonsense_flags(R1, STORY)
    assert len(flags) == 1 and "characters of a story" in flags[0]


def test_a_reviewer_who_is_she_once_or_twice_is_no_story():
    assert worlds.characters([rubric.normalise(TEAM)])[0] == 2  # "she", "her"
    assert not any("characters of a story" in x for x in nonsense_flags(R1, TEAM))
