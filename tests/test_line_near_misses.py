"""Near misses of the widened line rules (2026-12-07), found by a code review that wrote sentences students write
with the new words in another sense, said of another run or part, negated or asked. Each must earn nothing; the
right versions beside them must still earn their line (bench/line_passages.py grades a passage inside a neutral
answer)."""
from __future__ import annotations

import pytest
from conftest import bench_module
lines = bench_module("line_passages")
errors = bench_module("named_errors")

NOT_CREDITED = [  # (line, passage): a teacher would not credit the line
 ("whole_signal","The layer norms keep every block on the same scale; removing them makes the whole signal drift."),
 ("whole_signal","Post-norm needs warm-up. If you remove it, every input to the first block is hit by huge updates."),
 ("whole_signal","Dropout was disabled for the residual runs, so all of the information reaches the next layer."),
 ("whole_signal","The error signal ripples back through the residual stream to every block, so the whole input keeps its gradient."),
 ("whole_signal","Without residuals the learning signal can not reach the first blocks."),
 ("whole_signal","Without residuals the training signal is degraded by the time it reaches layer 1."),
 ("whole_signal","Without residuals, the gradient only gets through if every layer keeps its Jacobian close to one."),
 ("whole_signal","Without residuals the gradient vanishes unless every layer passes it back intact."),
 ("whole_signal","In post-norm the gradient has to be carried through every layer norm, which shrinks it."),
 ("whole_signal","Without residuals the feed-forward layers still get the embeddings as their input."),
 ("whole_signal","I removed the residual connections; the forward computation of the features stays the same, only the gradients change."),
 ("whole_signal","Without the skip connections, what I saw is that the loss dropped to 3.3 and stayed there."),
 ("whole_signal","Without skip connections the optimizer can only update what the last block controls."),
 ("whole_signal","Without residuals the features are not degraded; the problem is only the gradient."),
 ("unigram_level","A histogram of the gradient norms shows they stay tiny in the first blocks."),
 ("unigram_level","I plotted a histogram of the activations in pre-norm; they only spread out after step 500."),
 ("unigram_level","The MLP is context-free: it only sees one position at a time, the attention does the mixing."),
 ("unigram_level","At 1.5e-2 the post-norm run collapses and outputs the same distribution for every position, stuck at 3.3."),
 ("unigram_level","The pre-norm model never gives the same prediction for every position; it uses the context."),
 ("unigram_level","Thanks to the residual stream each block sees the current character no matter what came before it, so it never forgets it."),
 ("stacked","A transformer block is a sequence of two layers: attention and an MLP."),
 ("stacked","Inside the block there is a series of layers: attention, then the MLP."),
 ("stacked","The attention layer's output goes into the MLP after the residual add."),
 ("stacked","Layer 1's output feeds the MLP inside the same block."),
 ("stacked","Each block applies layer norm two times, once before each sub-layer."),
 ("stacked","In pre-norm the layer norm is applied two times per block."),
 ("stacked","The MLP is applied to each token, so the layer is applied n times, once per position."),
 ("stacked","The block below shows the pre-norm layout with its two sub-layers."),
 ("stacked","The layer after layer norm is the attention."),
 ("cost_one_head","More heads mean more cost: eight heads cost eight times as much as one head, with d_model = 512."),
 ("cost_one_head","Each extra head adds compute: with h = 12 the layer does twelve single-head computations."),
 ("cost_one_head","Each head is cheap: one head has d_k = 64 dimensions."),
 ("cost_one_head","The heads all run in parallel; the computation is the same for each head, only the weights differ."),
 ("cost_one_head","All heads read the same sequence, so the total input is the same for every head."),
 ("analogy_limits","Each head does not receive the whole embedding, only a 64-dimensional slice of it."),
 ("analogy_limits","The heads do not receive different inputs: each one gets the same tokens."),
 ("analogy_limits","No extra weights are given to the heads; they only get a slice of the dimensions."),
 ("postnorm_in_gradient_path","There is no way post-norm trains at 1.5e-2; its gradients blow up."),
 ("postnorm_in_gradient_path","The post-norm loss went backwards after step 200, and there was no way back."),
 ("postnorm_in_gradient_path","Post-norm failed, the gradient norm spiked, and after that the loss no longer passed 3.3."),
 ("postnorm_in_gradient_path","Post-norm is not a shortcut to better results: it needs a warm-up."),
 ("concat_w_o","The whole network, including W_O, is trained end to end with backprop."),
 ("analogy_mapped","The contract is split into pages, one per reviewer, and the notes are stapled together and merged by W_O."),
 ("gradient_path","In the no-residual run the gradient does not go through any residual connection, it goes through each weight matrix."),
 ("gradient_path","Does the residual stream carry the gradient straight back to the first block? It did not in my runs, as far as I can tell."),
 ("gradient_path","Does the residual stream carry the gradient straight back to the first block? They do not seem to."),
 ("gradient_path","Does the residual stream carry the gradient straight back to the first block? It is hard to say from four runs."),
 ("unigram_level","Is the no-residual run only learning letter frequencies? Definitely not."),
    # a second review, of the third round's words (292fea3)
    ('analogy_limits', 'The heads are not allocated their own weights; they all share one set of Q, K and V.'),
    ('analogy_limits', 'The heads are not allotted separate parameters, they share one big matrix.'),
    ('analogy_limits', 'Attention heads do not impose any order on the tokens, which is why we need positional encodings.'),
    ('analogy_limits', 'The number of heads is not specified by the model; you choose it as a hyperparameter.'),
    ('analogy_limits', 'The head size is not planned separately, it is just d_model divided by the number of heads.'),
    ('cost_one_head', 'The attention weights of one head sum to 1 over the tokens, which makes the computation a weighted average.'),
    ('cost_one_head', 'Each head needs exactly as many multiply-adds as one full-width head, so twelve heads cost twelve times more.'),
    ('cost_one_head', "The heads' operations add up to twelve times those of one full-width head."),
    ('cost_one_head', 'Each head performs the same operations as a single attention head, just with its own weights.'),
    ('cost_one_head', 'The parameters of W_Q are split exactly, one slice for each head.'),
    ('stacked', 'In pre-norm, the layer norm inside each block is applied two times.'),
    ('stacked', 'Layer norm in each block is used two times, once before attention and once before the MLP.'),
    ('stacked', 'The residual connection in each block is used two times, around attention and around the MLP.'),
    ('stacked', 'The MLP is applied to each token, so the block is applied n times, once per position.'),
    ('stacked', 'The attention and MLP blocks are in series, with a residual around each.'),
    ('stacked', 'Inside a block, the attention and MLP sub-blocks are in series.'),
    ('stacked', 'In the MLP, layer 1 expands the vector to 3072 and passes it to layer 2, which shrinks it back to 768.'),
    ('stacked', 'Layer 0 gives broad attention, whereas layer 11 focuses on a few tokens.'),
    ('stacked', 'Block 1 gives sharper attention patterns than block 12.'),
    ('stacked', "In each layer, the heads' outputs are stacked on each other into one vector."),
    ('stacked', 'In GPT-2, W_Q, W_K and W_V are stacked on each other in one layer, c_attn.'),
    ('analogy_mapped', 'Each lawyer is one head. In summary, the outputs go through W_O.'),
    ('analogy_mapped', 'Each lawyer is one head. The outputs of all heads are then combined.'),
    ('analogy_mapped', 'Each lawyer is one head. The outputs are combined by W_O.'),
    ('analogy_mapped', 'Each lawyer is one head. Each head combines the value vectors using its attention weights, after a projection of the input.'),
    ('analogy_mapped', 'Each lawyer is one head. In summary, each head has its own projection of the input.'),
    ('analogy_limits', 'The function of the softmax is to turn the scores that come from the data into weights.'),
    ('analogy_limits', "Each head's task is to find relations, and the queries and keys come from the data."),
    ('analogy_limits', "The heads' roles can overlap, and problems arise when two heads do the same job."),
    ('analogy_limits', 'The task of the model is next-token prediction, and the labels come from the data.'),
    ('analogy_mapped', 'The lawyers report to one boss, namely the head of the team. Merging their notes is the concatenation followed by W_O.'),
]


CREDITED = [  # a teacher would credit the line
 ("gradient_path","Does the gradient reach the first block directly through the residual stream? Through the additions, it does."),
 ("gradient_path","Does the residual stream give the gradient a direct path to the first blocks? In pre-norm, yes: the additions copy it back untouched."),
 ("warmup","Would post-norm have worked with a warm-up? Probably, since the original Transformer used one."),
 ("unigram_level","Is the no-residual model only learning letter frequencies? Its loss sits exactly at U = 3.29."),
 ("unigram_level","If the residuals are removed the model would only learn letter frequencies, which is exactly what we see in the table."),
 ("whole_signal","If you remove the skip connections every block would have to carry the whole signal, and that is what kills the no-residual run."),
    ('stacked', 'GPT-2 small stacks 12 of these blocks. I do not understand why 12 and not more.'),
    ('stacked', 'GPT-2 small stacks 12 of these blocks. It seems unlikely to me that more would always help.'),
    ('cost_one_head', 'All twelve heads together cost about as much as one full-width head. I did not really understand why until I wrote out the shapes.'),
    ('stacked', 'Why are 12 blocks stacked in GPT-2 small? Each one refines the output of the one below; I could not tell you why exactly 12.'),
    ('analogy_mapped', 'The team has twelve lawyers, i.e. twelve heads, and merging their notes is the concatenation followed by W_O.'),
    ('analogy_mapped', 'Each lawyer, i.e. each head, reads the contract, and merging their notes is the concatenation followed by W_O.'),
    # a third review, of the fixes (6dff6bc): the narrowed rules still read the common right wordings
    ('stacked', 'The transformer block is applied 12 times.'),
    ('stacked', 'The block is applied 12 times, once per layer.'),
    ('stacked', 'The identical block is applied L times.'),
    ('stacked', "Each block's output is fed to the next block."),
    ('stacked', 'Block 1 feeds block 2, which feeds block 3.'),
    ('stacked', 'Block 1 passed its output to block 2.'),
    ('stacked', 'Block 1 passes its output to the next block.'),
    ('stacked', 'The model is a series of blocks.'),
    ('analogy_limits', 'No manager allocates the heads their roles.'),
    ('analogy_limits', 'Nobody allocates the heads their tasks.'),
    ('analogy_limits', 'Nobody allocates the heads their specialities.'),
    ('analogy_limits', 'Nobody allocates the heads what to look for.'),
    ('cost_one_head', 'With 12 heads the total cost is basically unchanged.'),
    ('cost_one_head', 'The total number of operations is the same as for one full-width head.'),
    ('analogy_mapped', 'There are 12 heads, one head for each reviewer, and merging the notes is the concatenation followed by W_O.'),
    ('gradient_path', 'Does the residual stream carry the gradient straight back to the first block? Yes, although I am not sure how to prove it.'),
    ('gradient_path', 'Does the gradient reach the first block directly through the residual stream? It does not need to go through every block: the additions carry it.'),
    ('gradient_path', 'With x + f(x) the residual stream gives the gradient a direct path back to the first block, right? No wonder the pre-norm run trains so well.'),
]


@pytest.mark.parametrize("line, passage", NOT_CREDITED)
def test_a_near_miss_earns_nothing(line, passage):
    assert not lines.credited(line, passage)


@pytest.mark.parametrize("line, passage", CREDITED)
def test_the_right_version_still_earns(line, passage):
    assert lines.credited(line, passage)


@pytest.mark.parametrize("q, sentence", [
    # "remove them" is the norms, "take it away" the warm-up: no run without residuals, no exploding-gradient error
    ("ex4", "The layer norms keep the activations in range; remove them and the gradients can explode."),
    ("ex4", "Warm-up keeps the first steps small. Take it away and the gradients blow up."),
    # a statement with an agreement tag, corrected by the next sentence
    (1, "Each head gets its own slice of the tokens, right? Well, no."),
    (1, "Each head gets its own slice of the tokens, right? Actually, no: every head reads all of them."),
    (1, "Each head gets its own slice of the tokens, right? I used to think so."),
    (1, "Each head gets its own slice of the tokens, right? That turns out to be false."),
    (1, "Each head gets its own slice of the tokens, right? That is what I thought at first, but it is wrong."),
    (2, "The MLP mixes information between the tokens, no? Actually it does not, it works on each token separately."),
    (1, "Each head gets its own slice of the tokens, correct? This is the mistake I made in my first draft."),
])
def test_no_error_is_named_for_a_corrected_or_foreign_sentence(q, sentence):
    assert errors.named(q, sentence)[0] == ()


@pytest.mark.parametrize("line, passage", [
    # dev3 line passages: a question the next sentence leaves open
    ("stacked", "How many blocks get stacked, and does each block really build on the one below? I couldn't work that "
                "out from the lecture."),
])
def test_a_claim_left_open_earns_nothing(line, passage):
    assert not lines.credited(line, passage)


def test_a_rule_concluded_after_so_is_the_students_claim():
    # a conditional with no comma before its consequent states a rule when the writer concludes from it
    assert errors.named(1, "If we add more heads the compute would grow linearly, so more heads are more "
                           "expensive.")[0] == ("heads_cost_more",)


@pytest.mark.parametrize("q, sentence, error", [
    # not understanding why something holds is no doubt that it holds: the error is the student's
    (2, 'The MLP mixes information between the tokens. I do not really understand how it does that.', 'mlp_mixes_tokens'),
    (3, 'BERT uses a causal mask, like GPT. I did not follow why though.', 'bert_causal'),
    (1, 'The heads split the sentence between them, so each head reads a different part of the tokens. I do not understand why it is done that way.', 'heads_split_tokens'),
    (1, 'More heads means more compute, twelve heads cost twelve times as much. That seems wrong to me at first, but it is true.', 'heads_cost_more'),
]
)
def test_an_error_followed_by_not_understanding_why_is_named(q, sentence, error):
    assert error in errors.named(q, sentence)[0]


@pytest.mark.parametrize("q, sentence", [
    # a tag question followed by an ordinary opener ("Not a surprise"), a yes/no question answered with a yes later on
    ('ex4', 'Without residuals the gradients explode, right? Not a surprise with twelve blocks.'),
    ('ex4', 'Do the gradients explode without residuals? It is not hard to see: yes, they explode.'),
    ('ex4', 'Do the gradients explode without residuals? I have not plotted them, but yes, they blow up.'),
])
def test_an_exploding_gradient_said_around_a_question_is_named(q, sentence):
    assert "no_residual_gradients_explode" in errors.named(q, sentence)[0]


@pytest.mark.parametrize("q, sentence, names", [
    # "them" is the blocks the sentence names, not heads: stacking, no sequential heads
    (1, "GPT-2 small has 12 blocks, and it runs them one after another.", ()),
    (1, "The model stacks 12 layers and computes them in sequence.", ()),
    (1, "Each block has 12 heads, and it runs them one after another.", ("heads_sequential",)),
])
def test_them_run_in_sequence_is_the_nearest_plural_before_it(q, sentence, names):
    assert errors.named(q, sentence)[0] == names
