"""The lesson's terms joined in relations the model does not have (grader/rubric/relations.py): a word salad
("the layer norm's letter frequencies", "its query is the MLP") is sent to a person; the same constructions said
rightly ("a head's query", "the residual stream is the clean path") are not."""
import pytest
from conftest import ROOT, ex1_answer as ex1

from grader import rubric
from grader.rubric import relations
from grader.rubric.read import normalise

R1 = rubric.load(ROOT / "exercises" / "exercise1" / "rubric.toml")
R4 = rubric.load(ROOT / "exercises" / "exercise4" / "rubric.toml")


@pytest.mark.parametrize("sentence, said", [
    ("The gradient flows through the layer norm's letter frequencies.", "layer norm's letter frequencies"),
    ("Post-norm fails because of the warm-up of the residuals.", "warm-up of the residuals"),
    ("The learning rate of the layer norm is too high.", "learning rate of the layer norm"),
    ("So the heads are stacked and the query is the MLP.", "the query is the mlp"),
    ("Each key has its own head and W_O.", "key has its own head"),
    ("So W_O is bidirectional per token.", "w_o is bidirectional"),
    ("In GPT the MLP is bidirectional.", "the mlp is bidirectional"),
    ("Blocks are stacked, and the query is pre-norm.", "the query is pre-norm"),
    ("The causal mask is concatenated with the values.", "causal mask is concatenated"),
    ("Residual connections normalise the causal mask.", "residual connections normalise"),
    ("The heads run in parallel inside the query.", "heads run in parallel inside the query"),
    ("Multi-head attention is the residual connection of the block.", "multi-head attention is the residual connection"),
    ("Each head computes the query, key and value of the MLP.", "value of the mlp"),
    ("The residual stream attends to the letter frequencies.", "residual stream attends"),
    ("The learning rate masks the heads.", "learning rate masks"),
    ("The query warms up the MLP.", "query warms up"),
    ("The warm-up projects the queries into the residual stream.", "warm-up projects"),
    ("The letter frequencies flow through W_O.", "letter frequencies flow through"),
    ("W_O is stuck at the unigram loss.", "w_o is stuck at"),
    ("The keys rest inside the gradient.", "inside the gradient"),
    ("The heads stay on the near side of the warm-up.", "near side of the warm-up"),
    ("The block computes MLP = softmax(residual connection).", "softmax(residual connection)"),
    ("Each head satisfies W_O = 3.29 nats.", "w_o = 3.29 nats"),
    # a term swapped into one of the lesson's own claims (round r's swapped salads, 2026-12-07)
    ("Without residuals, every head must carry the whole learning rate.", "carry the whole learning rate"),
    ("The warm-up reaching the first blocks is tiny.", "warm-up reaching the first blocks"),
    ("The causal mask is an uninterrupted path for the letter frequencies.",
     "uninterrupted path for the letter frequencies"),
    ("It raised the layer norm slowly over the first 4000 steps.", "raised the layer norm slowly"),
    ("A layer runs several causal masks in parallel.", "runs several causal masks in parallel"),
    ("A transformer is a stack of such learning rates.", "a stack of such learning rates"),
    ("GPT uses a causal unigram loss.", "causal unigram loss"),
    ("BERT's layer norm is bidirectional.", "bert's layer norm is bidirectional"),
    ("So every head attends to all the learning rates.", "attends to all the learning rates"),
    # round r's formulas and bullets (exercise 4, dev): a loss in nats on either side, terms that no formula adds or
    # subtracts, what goes into a softmax, a property after "because"
    ("With n_heads = 6 this gives 3.29 nats = W_O.", "3.29 nats = w_o"),
    ("The gradient is gradient = residual stream − causal mask.", "residual stream - causal mask"),
    ("Pre-norm computes x = learning rate + MLP(U).", "learning rate + mlp"),
    ("Then y = attention + causal mask + residual stream.", "causal mask + residual stream"),  # a chain's later pair
    ("Post-norm fails at the high learning rate because W_O is bidirectional.", "w_o is bidirectional"),
])
def test_a_relation_the_model_does_not_have_is_a_clash(sentence, said):
    assert said in relations.clashes(normalise(sentence))


@pytest.mark.parametrize("sentence", [
    "Each head has its own query, key and value projections.",
    "The heads' outputs are concatenated and multiplied by W_O.",
    "The residual stream is the clean path for the gradient.",
    "The gradient of the loss reaches the first block through the additions.",
    "Post-norm puts a layer norm on the residual stream, so the gradient crosses every normalisation.",
    "Post-norm needs a warm-up of the learning rate.",
    "The loss of predicting by letter frequency is U = 3.29 nats.",
    "A uniform guess has a loss of about ln(65).",
    "The skip connections are the key.",
    "What flows along the residual stream is the attention pattern.",
    "The residual stream is the attention pattern: the softmax scores each block adds to.",
    "There is no residual around the MLP of the classification head on top of BERT.",
    "What makes a head a head is its own query, key and value projections.",
    "The attention and the feed-forward part each sit inside a residual connection.",
    "Post-norm keeps the residual stream normalized after every block.",
    "The value of d_model is 768, and the key of the argument is the split.",
    "BERT's attention is bidirectional; GPT's attention is causal.",
    "The model is pre-norm: the layer norm of each block sits on the branch.",
    "The attention's heads each have their own W_Q, W_K and W_V.",
    # a review's correct sentences that an earlier version read as clashes (2026-12-07)
    "The output projection of the feed-forward network maps 4 d_model back to d_model.",
    "The feed-forward layer has its own output projection, W_2.",
    "The loss of a model without warm-up blew up after a few hundred steps.",
    "Warm-up reduces the frequency of loss spikes.",
    "The residual stream's key advantage is the clean path; the learning rate's peak value is 1.5e-2.",
    "The layer norm's output feeds attention in a pre-norm block.",
    "In pre-norm, the input to the attention is the layer norm of the residual stream.",
    "In post-norm, the residual stream is the layer norm of x + f(x).",
    "Warm-up is a small learning rate for the first few thousand steps.",
    "The MLP is causal already, since it works on each token alone; the attention and the MLP are pre-norm in GPT-2.",
    "The softmax inside each head normalises the scores, and each head normalises its attention weights.",
    "The head outputs computed under the causal mask are concatenated.",
    "Heads concatenated then layer norm is applied to the sum.",
    "The gradients are large within the warm-up.",
    "Loss of no-residual stays at 3.3 because the model predicts only by letter frequency.",
    "The learning rate rises linearly within the warm-up; under warm-up post-norm trains.",
    "Pre-norm ends well below the unigram loss, and the no-residual loss = 3.29 nats.",
    "Attention is softmax(QK^T / sqrt(d_head)) V, and post-norm computes LN(x + f(x)).",
    "The scores are softmax(scores + mask) row by row.",
    # the same claims said rightly
    "Every block must carry the whole signal, and the gradient reaching the first blocks is tiny.",
    "The residual stream is a clean path for the gradient; warm-up raises the learning rate linearly.",
    "A layer runs several heads in parallel, and a transformer is a stack of such blocks.",
    "GPT uses a causal mask, so each token attends only to earlier tokens; BERT's attention is bidirectional.",
    "Both sub-layers are wrapped in a residual connection; after attention comes the MLP.",
    # a second review's correct sentences (2026-12-07)
    "The loss values stay near U, and both values plateau at 3.29.",
    "No-residual is 3.291 nats; the run without residual connections is 3.291 nats.",
    "U is the loss of a letter frequency model, the average of -ln(letter frequency).",
    "It can not get below letter frequency; outside the warm-up, the learning rate is constant.",
    "We clip norm(gradient) at 1, and the LM head is an output projection to the vocabulary.",
    "The attention flows into the MLP, which holds key-value memories inside the MLP.",
    "The gradient flows through the residual stream; the loss is stuck at U without residuals.",
    "Without residuals the loss stays at U, the entropy of the letter frequencies.",
    "The update is the learning rate * gradient, and 3.29 nats = the unigram loss.",
    "The scores + causal mask go into the softmax; the gradient flows back into the softmax.",
    "x + mlp(ln(x)) is the residual + MLP output, with the learning rate + warm-up schedule.",
    "It works because attention is bidirectional in BERT, since the MLP is pre-norm in GPT-2.",
    # a review's correct prose (2026-12-07): dashes, which normalise to "-", and "+" for "and" are no formula
    "Pre-norm doesn't need warm-up – residuals give a direct path, and post-norm needs a warm-up – layer norm on the "
    "stream scales the gradient.",
    "Large learning rate + layer norm on the residual stream = exploding updates in post-norm.",
    "Pre-norm + residual connections + warm-up is the recipe GPT-2 used.",
    "We kept the learning rate/heads/layers the same, and 3.29 nats = a head that only learns letter frequencies.",
    "The output of the final layer norm goes into the softmax after the unembedding.",
])
def test_the_same_constructions_said_rightly_are_no_clash(sentence):
    assert relations.clashes(normalise(sentence)) == ()


#: A word salad of exercise 1 written for this test: every noun is the lesson's, every relation is wrong.
SALAD_1 = ex1(
    "Multi-head attention is the layer norm of the causal mask. Each key has its own head, and the heads run in "
    "parallel inside the query. The output projection is bidirectional, so the MLP's heads are concatenated by the "
    "learning rate. A person is a head, and the notes are the residual connections.",
    "The MLP works on each token on its own residual connection. The causal mask is concatenated with the layer "
    "norm, and the blocks are stacked per head.",
    "BERT is bidirectional because its query is the MLP. GPT uses a causal mask, so the learning rate is "
    "causal.")
#: The same content said rightly, in the same dry register.
DRY_1 = ex1(
    "Several heads run in parallel on the same tokens. Each head has its own query, key and value projections, so "
    "each head can track a different relationship. Each head works in d_model / n_heads dimensions, so all heads "
    "together cost about one full-width head. The heads' outputs are concatenated and multiplied by W_O. A person "
    "is a head, and merging the notes is the concatenation followed by W_O.",
    "The MLP works on each token on its own. Residual connections run around the attention and the MLP, with a "
    "layer norm before each, and the blocks are stacked.",
    "BERT's attention is bidirectional. GPT uses a causal mask, so each token attends only to earlier tokens.")


def _salad(text: str, rub=R1) -> list[str]:
    return [r for r in rubric.evaluate(rub, text).needs_review if "word salad" in r]


def test_a_word_salad_is_sent_to_a_person_with_the_relations_quoted():
    a = rubric.evaluate(R1, SALAD_1)
    reasons = [r for r in a.needs_review if "word salad" in r]
    assert len(reasons) == 1 and "relations the model does not have" in reasons[0]
    assert '"key has its own head"' in reasons[0]
    assert a.confidence <= 0.4


def test_the_same_content_said_rightly_is_not_flagged():
    assert _salad(DRY_1) == []
    assert relations.word_salad(tuple(normalise(DRY_1).split(". "))) == ()


def test_one_odd_relation_is_a_slip_not_a_salad():
    one = DRY_1.replace("The MLP works on each token on its own.", "The MLP works on each token, so the MLP is bidirectional.")
    assert len(relations.clashes(normalise("so the MLP is bidirectional."))) == 1
    assert _salad(one) == []


@pytest.mark.parametrize("exercise, name", [("exercise4", "o_salad_postnorm"), ("exercise4", "o_salad_unigram_warmup"),
                                            ("exercise1", "o_salad_residual_bidirectional"),
                                            ("exercise4", "r_salad_formulas"), ("exercise4", "r_salad_bullets")])
def test_the_dev_word_salads_that_passed_every_other_measure_are_flagged(exercise, name):
    text = (ROOT / "tests" / "prose" / exercise / name / "answer.md").read_text(encoding="utf-8")
    assert _salad(text, R4 if exercise == "exercise4" else R1)


def test_in_a_word_salad_a_sentence_with_such_a_relation_earns_nothing():
    # "The heads run in parallel inside the query", "BERT is bidirectional because its query is the MLP": each holds
    # a line's words and a relation the model does not have; the dry answer says the same lines rightly.
    salad = rubric.evaluate(R1, SALAD_1).lines
    dry = rubric.evaluate(R1, DRY_1).lines
    for line in ("heads_parallel", "concat_w_o", "bert_bidirectional", "gpt_causal"):
        assert dry[line].earned and not salad[line].earned, line
    assert salad["mlp_per_token"].earned  # "the MLP works on each token on its own ...": no relation of its own


def test_one_odd_relation_keeps_the_line_of_its_sentence():
    one = DRY_1.replace("Several heads run in parallel on the same tokens.", "The heads run in parallel inside the "
                        "query.")
    assert rubric.evaluate(R1, one).lines["heads_parallel"].earned


def test_one_sentence_with_two_odd_relations_is_a_slip_three_are_a_salad():
    two = normalise("The keys rest inside the gradient, and W_O is stuck at the unigram loss.")
    three = normalise("The keys rest inside the gradient, W_O is stuck at the unigram loss and the MLP is bidirectional.")
    assert len(relations.clashes(two)) == 2 and relations.word_salad((two, two)) == ()  # repeated: counted once
    assert len(relations.word_salad((three,))) == 3


def test_a_picture_read_as_heads_is_no_salad_of_its_own():
    # .pictures reads "each chef" as "each head" for the concepts; the salad check reads the sentences as written, as
    # review does, so the picture costs the answer nothing ("each chef warms up the same stove" is no head warming up)
    text = ex1("Think of the heads as chefs in one kitchen. Each chef warms up the same stove, and every chef stays at "
               "the same station and cooks at the same time as the others, so the heads run in parallel. Each head has "
               "its own query, key and value projections, and the outputs are concatenated and multiplied by W_O.",
               "The MLP works on each token on its own. Residual connections go around attention and the MLP.",
               "BERT attends both ways; GPT uses a causal mask.")
    a = rubric.evaluate(R1, text)
    assert a.lines["heads_parallel"].earned and not [r for r in a.needs_review if "word salad" in r]


def test_a_word_salad_in_terse_notes_is_read_too():
    # notes with no verb are no prose sentences (.sentences), but their relations are the answer's all the same
    bullets = ex1("- keys inside the gradient\n- W_O = 3.29 nats\n- attention = softmax(learning rate)\n- warm-up of "
                  "the residuals",
                  "- The MLP works on each token on its own.\n- Residual connections go around attention and the MLP.",
                  "- BERT attends both ways.\n- GPT uses a causal mask.")
    assert [r for r in rubric.evaluate(R1, bullets).needs_review if "word salad" in r]
