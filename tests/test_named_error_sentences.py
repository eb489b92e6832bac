"""Whether a named error is right, on single sentences labelled before the grader read them (issue 11).

bench/named_errors.py grades each labelled sentence of tests/prose/sentences inside a neutral answer. The red
team's correct sentences (dev_redteam, aimed at the rules; tuned on) must name nothing; the held-out sets (written by
writers who never saw the rubric; never tuned on) are held to a little under what was measured, so that a rule change
that names correct sentences, or stops naming real errors, fails here.
"""
from __future__ import annotations

import pytest
from conftest import bench_module
bench = bench_module("named_errors")

#: Per file: (most correct sentences given any name, fewest errors named with their own name). Measured on
#: 2026-12-06 with the tested sentence after a sentence of context (bench/named_errors.py CONTEXT), dev sets tuned on:
#: dev_redteam 0 of 276 named (94 on 2026-12-02); dev_redteam2 1 of 369 (162 when it arrived); dev_redteam4 1 of 256
#: (115 when it arrived); dev_errors 0 of 72 and 151 of 216 errors (80 when it arrived). Held out, never tuned on:
#: heldout_s1 1 of 144 and 49 of 72; heldout_s2 5 of 162 and 50 of 90 (5 and 39 when it arrived); heldout_redteam3, a
#: red team's attack on the rules of 9b6dadf: 64 of 225 correct sentences named (77 when it arrived) and 49 of 54
#: errors; heldout_redteam6, an attack on the rules of 471ac78: 92 of 252 named when it arrived (80 on 2026-12-06, after
#: dev_redteam5 fell to 59), 51 of 54 errors.
#: dev_redteam5 48 of 252 on 2026-12-07 (an origin "that came from the other tokens" is no mixing by the MLP; what BERT
#: "would need" is no mask it has; GPT's causal version in the same sentence): 45; heldout_redteam3 57 and heldout_redteam6
#: 78 after them. Round s's wordings and a red team against them (2026-12-07): dev_errors 174 of 216, dev_redteam5 44,
#: heldout_redteam6 74 (code "x = mlp(ln2(x)) + x" is a residual), heldout_s1 50 and heldout_s2 54 errors (never tuned on).
#: The red teams measure what the rules cannot read. dev_router1 and dev_router2 (2026-12-07, two writers who read nothing
#: of the grader, written to train the error model): at arrival 81 and 85 of 228 errors named, 1 and 5 correct sentences
#: named and one error given another error's name; after three fixes (the mixing "only" in attention, a layer norm that
#: "needs no causal mask", a sentence that opens with the residual run) 0 and 3; 2 after "one might picture". dev_router4: one correct sentence named
#: ("I wrote that BERT uses a causal mask, but I was confusing it with GPT": a plain "I wrote that" stays asserted).
#: dev_router6-8 (2026-12-07, three more such writers: long sentences, chat and notes, metaphors): at arrival 78, 59 and
#: 70 of 210 errors named; 7, 2 and 0 correct sentences named, one error given another error's name ("the work per
#: head shrinks as you add more heads" read as more heads costing more: the "add more" of the heads is no cost).
#: A head's width set equal to d_model ("d_head = d_model", "the head dimension equals d_model"; "h x d_head = d_model"
#: is right) and "it is easy to think X, but": dev_router1, 2, 5, 6, 8 errors named 81 -> 83, 85 -> 86, 53 -> 56,
#: 78 -> 79, 70 -> 72; held out (measured, never tuned on): heldout_redteam6 74 -> 73 wrong names, 52 -> 53 errors.
#: W_O per head with the heads kept apart ("W_O is applied per head, so each head's info stays separate"): W_O on each
#: head named in 19 -> 30 of the 94 dev_router errors, no new wrong name on any set, the held-out ones unchanged.
#: A builder (or design time) that sets a head's job: 17 -> 30 of the 94 dev_router errors on heads given their jobs,
#: the held-out ones unchanged. A looser first version (any builder, verb, head and job within 16 words: 35 of 94) named
#: on a held-out answer an error its label says it does not make (heldout11, measured, not read), and a red team's
#: correct sentence: it was narrowed before it landed.
#: dev_router9 and dev_router10 (2026-12-07, writers from other fields and exam-style justifications): at arrival 66 and
#: 86 of 210 errors named, 3 and 2 correct sentences named. The heads' shared projections, the residual path carrying
#: the attention weights and the MLP mixing tokens in the field's other words (ordered relations, not words near each
#: other), with a red team against each (dev_redteam7, dev_redteam8: 61 of 181 and 58 of 153 correct sentences named
#: by the first versions, none now): those three topics 92 -> 169 of the 366 dev_router errors; dev_router1-8 539 ->
#: 603; held out (measured, never tuned on): heldout_redteam3 56 -> 54 and heldout_redteam6 73 -> 71 wrong names,
#: heldout_s1 1 -> 0, heldout_s2 errors 54 -> 56. A first, looser sharing rule (the words within 14 of each other) named
#: the error on two held-out answers labelled without it (heldout11, heldout12: measured, not read) and was not kept.
#: 2026-12-08: the heads of a layer running one after another read as relations (a head's output as the next one's
#: input, waiting for the previous head, order words with the heads as subject, chain nouns, nested calls, step
#: counts), with two red teams (dev_redteam9, 150 correct sentences written against a description of the rule: 3 named
#: by the first version; dev_redteam10, written by one who read the rule and tested against it: 120 of 150 named at
#: arrival, 1 now): the dev_router heads_sequential errors 36 -> 83 of 122, dev_router1-10 768 -> 815. Evaluating
#: frames found missing for every error ("saying X misdescribes ...", 'the statement "X" is wrong', "Myth #3: X", "the
#: grader flags answers saying X") are read as framed. Not kept: a relation of a head using "the previous one's" or
#: "earlier heads'" output (+11 dev errors), which named the error on five labelled answers that do not make it (one
#: test-split, four held-out: measured, not read); one narrowing for a stated reason left two, so it was dropped.
LIMITS = {"dev_redteam": (0, 0), "dev_redteam2": (2, 0), "dev_redteam4": (2, 0), "dev_redteam5": (48, 46),
          "dev_errors": (1, 180), "heldout_s1": (2, 48), "heldout_s2": (6, 50), "heldout_redteam3": (64, 46),
          "heldout_redteam6": (82, 49), "dev_router1": (0, 101), "dev_router2": (2, 101),
          "dev_router3": (0, 0), "dev_router4": (1, 95), "dev_router5": (0, 75), "dev_router6": (6, 89),
          "dev_router7": (2, 88), "dev_router8": (0, 90), "dev_router9": (3, 77), "dev_router10": (2, 99),
          "dev_redteam7": (0, 0), "dev_redteam8": (0, 0), "dev_redteam9": (0, 0), "dev_redteam10": (1, 0), "dev_redteam11": (0, 0)}
#: Error sentences that make a second error as well, read by a person after the grader named it (the label gives one
#: topic per sentence): "12 heads take 12 times as long", "the time taken by the layer grows with the number of heads"
#: are more heads costing proportionally more.
ALSO_MAKES = {"Because the heads run serially, 12 heads take 12 times as long in wall-clock time as one head would.":
              "heads_cost_more",
              "The heads of a layer cannot be parallelised, since head k needs the result of head k-1 as its input, so "
              "the time taken by the layer grows with the number of heads it has.": "heads_cost_more"}


@pytest.fixture(scope="module", params=sorted(LIMITS))
def judged(request):
    return request.param, bench.judge_file(bench.SENTENCES / f"{request.param}.toml")


def test_correct_sentences_are_seldom_named(judged):
    name, rows = judged
    wrong = [f"{r.topic}: {r.text} -> {r.named}" for r in rows if not r.error and r.named]
    assert len(wrong) <= LIMITS[name][0], "\n".join(wrong)


def test_errors_are_named_and_never_by_another_name(judged):
    name, rows = judged
    errors = [r for r in rows if r.error]
    assert sum(r.caught for r in errors) >= LIMITS[name][1]
    # an error named as another error is a wrong diagnosis
    assert not [r.text for r in errors if set(r.named) - {r.topic, ALSO_MAKES.get(r.text)}]


@pytest.mark.parametrize("q, sentence", [
    (2, "The FFN is shared across positions."),
    (2, "The MLP gets information from other tokens only via attention."),
    (2, "The attention scores need no layer norm because the softmax already normalises them."),
    (2, "Layer norm is not applied across the tokens; it works on each token's vector."),
    (2, "The first residual goes around attention, not around the MLP; the second goes around the MLP."),
    (2, "The residual stream keeps the token vector and the attention pattern is recomputed in every block."),
    (3, "BERT masks random words for training, which is not the same as causal masking."),
    (3, "BERT sees the tokens on both sides, unlike causal models such as GPT."),
    (3, "GPT gives up the bidirectional view that BERT has."),
    (3, "In GPT, the last token attends to every token in the prompt."),
    (3, "The causal mask stops GPT from attending to future tokens."),
    (2, "There is one residual connection around attention and one around the MLP, two per block."),
    (1, "Nobody tells the heads what to look for; the engineers only pick the number of heads."),
    (1, "One query projection for each head is learned in every layer."),
    (2, "Attention has a skip connection; the MLP also gets one."),
    (2, "The MLP does not use any residual-stream information from other tokens."),
    (2, "Position 0 has its own embedding vector, added before the first block; the MLP is shared."),
    (1, "Whoever designs the model decides how many heads there are, and training decides what each head does."),
    (1, "There is one set of weights that all the heads share: W_O, after the concatenation."),
    (1, "There is one W_Q for all heads, split into per-head slices."),
    (1, "The 8 heads all use the same input but each has its own W_Q."),
    (1, "The engineers pick 8 heads and each head learns its own features during training."),
    (1, "The designers write the code once; each head then learns what to look for."),
    (1, "The engineers pick the features of the data set, and the heads learn what to look for."),
    (2, "Each sub-layer has one residual connection: one around attention and one around the MLP."),
    (2, "The MLP processes all the tokens at once, as one matrix multiplication, but each row on its own."),
    (2, "The MLP takes all the token vectors together as a batch and transforms each one separately."),
    (2, "The MLP's output at position 5 depends only on the vector at position 5."),
    (2, "In the MLP, no information is exchanged between positions."),
    (2, "The MLP reads all the tokens in parallel, each through the same weights."),
    (3, "GPT never sees the next token when it predicts it."),
    (3, "In GPT the tokens that come after a position are hidden from it."),
    (3, "Unlike BERT, which attends to the words that come after it, GPT only looks back."),
    ("ex4", "Residual connections add zero parameters."),
    ("ex4", "Without residuals the model cannot even fit the training set, let alone overfit."),
    ("ex4", "Post-norm diverged while pre-norm was more stable."),
    (1, "Before the heads see anything, the tokenizer splits the text into tokens."),
    (1, "All heads share the same value of d_k, 64."),
    (1, "We do the concatenation first and after that W_O mixes the heads."),
    (3, "GPT-3 is an autoregressive model, and a bidirectional model would not fit generation."),
    (3, "BERT differs from Llama, which is causal."),
    (3, "BERT is the bidirectional one; GPT cannot look ahead."),
    (3, "Unlike GPT, which cannot look ahead, BERT sees the whole sentence."),
    ("ex4", "Post-norm is more stable with warm-up than without."),
    ("ex4", "Without residuals the model is unable to overfit."),
    # stability in general, restricted to a respect, a condition or another's claim
    ("ex4", "Post-norm is more stable if you warm up first."),  # a condition is the correct sense
    ("ex4", "Residual connections are an extra path for the gradient, not an extra part of the capacity."),
    # exploding gradients: either way, denied, another's claim, post-norm's, or next to the fading gradient
    ("ex4", "Without residual connections the gradients vanish or explode as they go back."),
    ("ex4", "Without residuals the gradient at the first block is tiny; it does not explode."),
    ("ex4", "Post-norm without warm-up blows up at a high learning rate, while the no-residual model just stalls."),
    ("ex4", "Residual connections are often said to fix exploding gradients, but without them our gradients faded."),
    ("ex4", "Exploding gradients are a different problem; without residuals the gradient to the first blocks is small."),
    ("ex4", "Without residual connections the activations grow very large in a plain network, but the norms stop that."),
    # a third red team (2026-12-06): a claim restricted to a respect, an expectation given up, a guess, a
    # teammate's word, an error ruled out, a smaller model only in effect, weights brought into training
    ("ex4", "Post-norm is in principle the more stable arrangement for the size of the activations, not for the "
            "gradients."),
    ("ex4", "I expected post-norm to be the more stable arrangement in general, but it diverged at 1.5e-2."),
    ("ex4", "My guess before running it was that post-norm is in general the more stable arrangement."),
    ("ex4", "My teammate insisted post-norm is in general the more stable arrangement."),
    ("ex4", "I checked for exploding gradients in the no-residual run: there were none."),
    ("ex4", "Exploding gradients were ruled out: without residuals, the gradient norm at the first block was about 1e-8."),
    ("ex4", "A common guess is exploding gradients, but without residuals the gradient at block one was about 1e-8."),
    ("ex4", "Without residuals the six blocks are a smaller model in effect, because only the last blocks ever train."),
    ("ex4", "Without the skip connections the network is a smaller model in all but name, since the first blocks never "
            "learn."),
    ("ex4", "Residual connections bring more weights into the training, because the gradient finally reaches the first "
            "blocks."),
    ("ex4", "Unlike post-norm, pre-norm is the more stable of the two."),
    # a code review: exploding gradients that are not the problem or that people blame, an "it" that is pre-norm
    ("ex4", "Exploding gradients are not the problem here. Without residuals each block's output replaces its input, so "
            "every block must transform and pass on the whole signal."),
    ("ex4", "People often blame exploding gradients. Without the skip connections every block must carry the whole "
            "signal."),
    ("ex4", "Pre-norm keeps a clean path; next to post-norm, it is the more stable of the two."),
    ("ex4", "Pre-norm trains where post-norm, at the same learning rate, diverges, so it is the more stable of the two."),
    (3, "In BERT the model cannot look ahead at the word it must predict, because that word is replaced by [MASK]."),
    ("ex4", "As for post-norm, when it is set up with warm-up it is the more stable of the two."),
    # the run at U, then another run's overfitting, a denial, or letter counts learnt (the unigram level itself)
    ("ex4", "The no-residual model sits at roughly U. The pre-norm model overfits a little after step 300."),
    ("ex4", "The no-residual model ends at 3.31, about U. It does not overfit: the train loss is 3.31 too."),
    ("ex4", "The no-residual model ends at 3.31, near U. I think it also overfits: it memorises the letter counts of the "
            "train text."),
    ("ex4", "Without residuals the model is effectively a smaller network, because its deep layers never train."),
    ("ex4", "In principle post-norm is the more stable arrangement only if you warm up."),
    ("ex4", "Post-norm is generally more stable in the forward pass: each block's output is normalised."),
    ("ex4", "In principle, post-norm is the more stable arrangement in scale, not in training."),
    ("ex4", "It is often said that in general post-norm is the more stable arrangement, but our run shows otherwise."),
    ("ex4", "In general post-norm is less stable; pre-norm is the more stable one."),
    # layer norm's effect said over the tokens, or attention's work over them, is not its statistics over them
    (2, "Layer norm makes the sizes of the token vectors comparable across the sentence."),
    (2, "Layer norm rescales each vector so that the attention scores over the tokens stay moderate."),
    # the right version asserted in the same sentence, and "in turn" as a link
    (1, "A debugger may step through the heads one by one, but the model computes them together."),
    (1, "Each head is in turn made of three projections of its own."),
    (1, "Every head has one query matrix, one key matrix and one value matrix, 8 separate sets in all."),
    (1, "The heads share one big projection in the code, and its output is cut into per-head pieces."),
    (1, "Putting W_O before the concatenation would be wrong: W_O comes after the concatenation."),
    # overfitting set aside: others' view with a modal, "not the reason", "overfits nothing", a concession
    ("ex4", "Some might think it overfits, but the curves show it does not."),
    ("ex4", "You could call it overfitting to the letter frequencies, but it is really a failure to train."),
    ("ex4", "Overfitting is not the reason: the model is simply untrainable without residuals."),
    ("ex4", "It overfits nothing, since it learns nothing beyond the letter frequencies."),
    ("ex4", "To overfit a model first has to learn the training text, and without residuals the gradient never lets it."),
    ("ex4", "The residual connections add 0 parameters; the model has the same count either way."),
    # "causal" as cause and effect; BERT's [MASK] token and the loss's targets are no attention mask
    (3, "Switching off one of BERT's heads and measuring the change in loss is a causal test of what that head does."),
    (3, "BERT has a [MASK] token, but GPT has no mask token in its vocabulary."),
    (3, "GPT's loss is computed without any mask on the targets, since every position predicts its next token."),
    # what the code or the mask tells every head is no job
    (1, "In GPT every head is told which tokens to ignore: all the ones after the current position."),
    (1, "We tell every head how to compute its scores; what it looks for, nobody tells it."),
    (1, "The code gives every head its own weights to attend with."),
    # the concatenation's layout, and independence said outright
    (1, "The outputs of the 12 heads are placed one after another in a 768-long vector, which W_O then mixes."),
    (1, "Head 7 starts from the same x as head 6, and neither needs the other's result."),
    # post-norm compared with itself, or in one respect only
    ("ex4", "Post-norm trains better at 1e-3 than at 1.5e-2, where it stays near U."),
    ("ex4", "Post-norm is more stable than pre-norm in one respect: the size of the residual stream does not grow."),
    # what the MLP works on came from the other tokens earlier, through attention: the origin of its input, not its mixing
    (2, "The MLP combines the information that came from the other words."),
    (2, "The MLP mixes the features that arrived from the other tokens."),
    (2, "The MLP combines what each word gathered from the other words."),
    (2, "The MLP combines a vector that is already a mix of all the tokens."),
    (2, "The feed-forward layer combines everything that came in from the other positions."),
    # what a model would need for another task is no property it has; a padding mask is no causal mask
    (3, "BERT would need a causal mask before it could write text word by word."),
    (3, "GPT would have to be bidirectional to fill in a blank in the middle of a sentence."),
    (3, "BERT's masked attention only ignores the padding tokens at the end of a short sentence."),
    # GPT's causal version said in the same sentence; the training targets are no attention
    (3, "GPT reads the whole prompt, both the question and the answer so far, and each token still attends only to the "
        "tokens before it."),
    (3, "In GPT, row 3 of the attention matrix is unmasked up to column 3."),
    (3, "During GPT's training the targets are the next tokens, so the inputs and targets overlap in both directions."),
    # a red team's correct sentences against round s's wordings (2026-12-07): a count per head with no dividing, a
    # stretch that is no head's, a range in a head's map; what every head really shares; the residual sum; W_O split
    # into pieces and totalled; builders who leave the jobs to training; a narrow query made from the full x
    (1, "The KV cache keeps a key and a value vector for up to 2048 tokens per head in each layer."),
    (1, "The causal mask gives every token its own stretch of the sequence to look at: itself and everything before it."),
    (1, "In the attention map of head 3, the tokens 5 to 9 all point strongly at the verb."),
    (1, "In ring attention, each GPU holds its own block of the sequence and passes keys and values around."),
    (1, "RoPE precomputes a sine table and a cosine table, and all the heads of every layer use these same two matrices "
        "to rotate their queries and keys."),
    (1, "PyTorch stores W_Q, W_K and W_V as one fused in_proj_weight, and all the heads read from these same weights, "
        "each using a different 64-wide band of them."),
    (1, "Mathematically, W_O can be applied to each head's output individually, head by head with its own 64 x 512 "
        "piece, and the pieces totalled give the usual result."),
    (1, "The designers set up each head with random weights, so the heads end up with different roles only through "
        "training."),
    (1, "Like a single head, each head uses all 512 features of x, but it squeezes them into a 64-number query."),
    (2, "After the MLP adds its output, the updated vector replaces the input as what the next block reads."),
    (2, "Inside the MLP, the expansion replaces the input with 3072 hidden features."),
    (2, "In code the pre-norm block is x = x + attn(ln1(x)) followed by x = mlp(ln2(x)) + x."),
    (2, "Without the skip connection, the MLP's output would replace its input."),
    (2, "The MLP takes the vectors of the tokens and mixes them feature-wise, so every output feature of a token "
        "depends on all 768 input features of that token."),
    (2, "Before the MLP, each token gathers information from the other tokens."),
    (2, "The residual stream runs through the stack; what is carried along it is the attention weights' product with "
        "the values, summed into x, never the weights themselves."),
    (3, "Both BERT and GPT need a causal mask only if they are asked to generate left to right, which BERT is not "
        "trained for."),
    (3, "BERT, like GPT, has a left-to-right numbering of positions, but its attention looks both ways."),
    (3, "BERT is a masked language model: it sees the tokens on both sides."),
    (1, "Nobody tells the heads what to look for; the developers only pick the number of heads."),
    (1, "The developers tell every head how to compute its scores, and how many dimensions it has."),
    (1, "Like a manager handing out checklists to the signatures team, nobody gives the heads their tasks: they "
        "learn them."),
    (2, "Like a relay team passing on a baton, the blocks hand their output to the next block."),
    (2, "Layer norm rescales each token's features with statistics of that token alone, never from the whole sequence."),
    (2, "Layer norm takes each token's mean and variance over its features, not statistics from the whole sequence."),
    (2, "A block has only two sub-layers, attention and the MLP, and nothing else."),
    (2, "A block has attention and an MLP and nothing else that learns from other tokens."),
    (2, "Around the attention and around the MLP there is a residual connection, so the block is only changing a "
        "little the vector of the token."),
    (2, "The block is just attention plus an MLP, each wrapped in a residual connection and a layer norm, nothing else."),
    ("ex4", "Post-norm is the stable placement when the learning rate is small and warmed up."),
    ("ex4", "Compared with post-norm, pre-norm is more stable at the high learning rate."),
    ("ex4", "Pre-norm does not need a lower learning rate than post-norm; it is post-norm that needs warm-up."),
    ("ex4", "Pre-norm keeps a clean path; compared with post-norm, it holds up better."),
    # a first version of one's own answer, corrected (dev_router4)
    (2, "I first wrote that the MLP combines the words, but it is attention that combines words; the MLP processes "
        "each word's vector alone."),
    (1, "The heads do not run serially; they run at the same time."),
    (1, "One might picture W_O being applied to each head on its own, but it acts after the concatenation, which is "
        "precisely where the heads' findings are combined."),
    # adding more heads is no cost by itself; a cost that shrinks is no growing cost (dev_router6)
    (1, "The work per head shrinks as you add more heads, since each one gets a thinner slice of d_model."),
    (1, "If you add more heads at a fixed width, each head's share of the compute shrinks."),
    # a belief set up to be corrected (dev_router6)
    (2, "It is easy to think the feed-forward layer mixes the tokens, but it does not: it processes every position "
        "separately, and only attention moves information from one token to another."),
    (2, "It's natural to assume that the MLP mixes the tokens; it does not."),
    # the head's width set equal to d_model / h, or d_model for a single head
    (1, "Each head works in d_head = d_model / h dimensions, 64 of 512."),
    (1, "With one head, d_head = d_model; with 8 heads d_head = d_model / 8."),
    (1, "So the parameter count and the FLOPs are about those of one full-width head: h heads × d_head = d_model."),
    (1, "The heads together span d_model: h x d_head = d_model."),
    # W_O's blocks per head, summed; the right order (dev_router1-8's near misses)
    (1, "W_O can be read per head: each head's output meets its own block of W_O and the results are summed, so "
        "nothing stays separate."),
    (1, "W_O is not applied per head, so the heads do not stay separate: it mixes them after the concatenation."),
    # a red team against the rules of 2026-12-07 (W_O per head, a head's width, a builder's job for a head)
    (1, "W_O is not applied per head; if it were, the heads would never mix."),
    (1, "Everything before W_O happens per head, so the heads stay separate until W_O combines them."),
    (1, "It's a common myth that engineers assign each head a job."),
    (1, "Researchers choose eight heads; which head tracks syntax is up to the data."),
    (1, "When n_heads = 1, d_k = d_model, which is just ordinary attention."),
    (1, "In a 1-head model the head dimension equals d_model."),
    (1, "The head dimension equals d_model only if there is one attention head."),
    (1, "Saying the engineers assign each head a task is a misunderstanding of how transformers work."),
    (1, "To say that the heads run one after another is a mistake."),
    (1, "Many textbooks draw pictures where designers hand each head a role, which is misleading."),
    (1, "d_k is d_model, divided by h, so 64 for the base model."),
    (1, "The product of h and d_k equals d_model."),
    # builders who choose the number of heads, researchers who probe what a head does, roles that emerge
    (1, "The designers choose the number of heads; what each head does is learned in training."),
    (1, "Interpretability researchers probed BERT and found which head tracks coreference."),
    (1, "The authors of GPT-2 chose 12 heads per layer, and the heads then picked their own jobs in training."),
    (1, "In the contract picture the partner hands out the tasks in advance, but in the model no one assigns a head "
        "its role."),
    # near the heads sharing their projections (dev_redteam7, a red team against a looser first version)
    (1, "All heads use the same keys' positions but compute different key vectors for them."),
    (1, "Sharing the keys and values across heads is a later efficiency trick, not part of the lesson's attention."),
    (1, "Heads do not get individual query weights per batch element, since the parameters are fixed after training."),
    (1, "Every head computes its queries, keys and values from the same hidden states."),
    (1, "All heads share one weight tensor in memory, q_proj.weight, but head 0 only ever touches outputs 0 to 63 of it."),
    (1, "In Llama 2 70B groups of eight query heads share one key and value projection (grouped-query attention)."),
    (1, "There are h times three projection matrices per layer, one query, one key and one value for every head."),
    (1, "Within each of the 8 heads, the same query weights are reused at every position of the sequence."),
    (1, "Each head output goes through the same projection matrix after the heads are concatenated."),
    # near the residual stream carrying the weights, and the MLP mixing tokens (dev_redteam2, 4, 5; dev_router1-10)
    (2, "The residual connection keeps x unchanged past the attention weights and adds attention's output to it."),
    (2, "no, the residual doesnt carry attention weights. it carries the hidden vectors for each position"),
    (2, "The residual stream stores each token's vector, from which every block computes fresh attention weights."),
    (2, "The attention weights decide how much of each value vector is added to the residual stream."),
    (2, "The MLP shares its weights across all positions."),
    (2, "The MLP combines the features of a vector, and the same combination is used across all positions."),
    (2, "The MLP in every block works on vectors that were mixed across the tokens just before."),
    (2, "I think the MLP just takes one token's vector and transforms it, the mixing between tokens already happened in "
        "attention."),
    (2, "The MLP is applied to each token on its own, like a 1x1 convolution over the sequence."),
    # near the heads handing on their work (dev_redteam9, a red team against the chain relations)
    (1, "A head in layer 4 can read what a head in layer 2 wrote into the residual stream."),
    (1, "Induction heads build on the output of a previous-token head in an earlier layer."),
    (1, "The outputs of the heads sit one after another in the concatenated vector: head 0's slice first."),
    (1, "You can look at the heads one at a time in a plot, but they were all computed from the same input."),
    (1, "Each block hands its output to the next block; inside a block the heads do not wait for each other."),
    (1, "Concat(head_1(X), ..., head_h(X)) W^O is multi-head attention; head_2(head_1(X)) would be a different model."),
    (1, "The layers run one after another, the heads of a layer side by side."),
    # heads outside attention, and the heads studied one at a time (dev_redteam10)
    (1, "In a hard drive the read heads take turns, one at a time."),
    (1, "A fair coin lands heads three times in a row with probability 1/8."),
    (1, "Activation patching replaces the heads one at a time to find the ones that matter."),
    (1, "Let me go through the heads in turn: head 1 looks at the previous word, head 2 at the verb."),
    (1, "In GPT-2 the heads are numbered in order, 0.0 to 11.11."),
])
def test_correct_sentences_of_each_kind_name_nothing(q, sentence):
    assert bench.named(q, sentence)[0] == ()


@pytest.mark.parametrize("q, sentence, error", [
    # the head's width set equal to d_model (dev_router2, dev_router5): "d_head" no longer excuses the sentence
    (1, "Width note: d_head = d_model for every head; the heads differ in their weights, not in their size.",
     "heads_full_width"),
    (1, "Note that the head dimension equals d_model: a 768-wide model has 12 heads that are each 768 wide.",
     "heads_full_width"),
    (2, "It is easy to think of the MLP as a per-token function, and the MLP mixes the tokens.", "mlp_mixes_tokens"),
    # a builder, or design time, that sets a head's job (dev_router2, dev_router4, dev_router7)
    (1, "the engineers decide what each head does, like head 1 = syntax, head 2 = coreference, before training even "
        "starts", "heads_assigned_roles"),
    (1, "The jobs of the heads are specified in the architecture: head 1 is designated for the previous token, head 2 "
        "for subject-verb agreement, and so on.", "heads_assigned_roles"),
    (1, "The model designers assign each head a specific linguistic function, such as tracking subject-verb agreement.",
     "heads_assigned_roles"),
    # W_O per head, the heads kept apart (dev_router7)
    (1, "W_O is applied per head, so each head's info stays separate all the way to the next layer.", "wo_before_concat"),
    (1, "Since W_O only sees one head at a time, the heads never exchange anything inside the attention layer.",
     "wo_before_concat"),
    (2, "The MLP shares information across the positions of the sentence.", "mlp_mixes_tokens"),
    (2, "The MLP looks at the neighbouring tokens to build each output.", "mlp_mixes_tokens"),
    (2, "The MLP gathers information from the other tokens.", "mlp_mixes_tokens"),  # its own action, in the present
    (2, "The MLP is what lets each token gather information from the other tokens.", "mlp_mixes_tokens"),
    (2, "The block has no layer norm at all.", "no_layer_norm"),
    (2, "Layer norm takes the mean over the positions of the sequence.", "layer_norm_across_tokens"),
    (2, "Layer norm takes each feature and normalises it across the tokens, so they end up on the same scale.",
     "layer_norm_across_tokens"),
    (2, "The residual stream carries the attention pattern from block to block.", "residual_carries_attention"),
    # the heads' shared projections, the residual path carrying the weights, the MLP mixing tokens, in the field's other
    # words (dev_router1-10)
    (1, "All the heads use one and the same set of query, key and value matrices, so they compute identical queries.",
     "heads_share_qkv"),
    (1, "Because W_Q, W_K and W_V are shared between all the heads of a layer, adding heads adds no parameters.",
     "heads_share_qkv"),
    (1, "sharing Q, K and V across the heads of a layer is what keeps mha cheap", "heads_share_qkv"),
    (1, "heads dont get their own W_Q/W_K/W_V, they all read through one common set", "heads_share_qkv"),
    (2, "the skip connection copies the softmax scores forward, the token representations just get replaced each block.",
     "residual_carries_attention"),
    (2, "The attention weights computed in a block are forwarded through the skip connection to the next block.",
     "residual_carries_attention"),
    (2, "the residual stream is the running sum of attention maps across the blocks", "residual_carries_attention"),
    (2, "The feed-forward layer takes the 1024 token vectors and mixes them together into new ones, that's its job.",
     "mlp_mixes_tokens"),
    (2, "In the feed-forward network the tokens are exchanging information with each other.", "mlp_mixes_tokens"),
    (2, "the ffn input is (B, T, d) and it mixes along the T axis", "mlp_mixes_tokens"),
    (2, "The MLP flattens the whole sequence into one long vector before its hidden layer.", "mlp_mixes_tokens"),
    (3, "BERT only attends to the previous tokens.", "bert_causal"),
    (3, "BERT would use a causal mask, so each token only sees the previous ones.", "bert_causal"),  # "would" alone
    (3, "GPT is bidirectional, so every token sees the whole sentence.", "gpt_bidirectional"),
    (3, "GPT looks both ways, at the words before and the words after.", "gpt_bidirectional"),
    ("ex4", "The residual connections add extra parameters, so the model has more capacity.", "residual_adds_capacity"),
    ("ex4", "Without residuals the model memorises the training text and overfits.", "no_residual_overfits"),
    ("ex4", "With no residuals, it memorises the training text.", "no_residual_overfits"),
    ("ex4", "The residual connections are an extra part of the network's capacity.", "residual_adds_capacity"),
    ("ex4", "Without the skip connections the six blocks are just a weaker, smaller model.", "residual_adds_capacity"),
    ("ex4", "Without them the blocks are just a weaker and smaller model.", "residual_adds_capacity"),
    ("ex4", "The residual connections are part of the network's capacity, so removing them leaves a weaker model.",
     "residual_adds_capacity"),
    ("ex4", "Residuals increase the model's capacity, which is why the model without them stays at U.",
     "residual_adds_capacity"),
    ("ex4", "The residual connections are a second set of weights that the model can use.", "residual_adds_capacity"),
    ("ex4", "There's a second reason the no-residual model is worse: the skip connections add extra capacity to the "
            "network.", "residual_adds_capacity"),  # "no-residual" is no mention of the residuals that has the property
    ("ex4", "Without the skip connections the gradient gets multiplied by every layer's weights and ends up enormous "
            "at the first block.", "no_residual_gradients_explode"),
    ("ex4", "Removing the residuals causes gradient explosion in the early layers.", "no_residual_gradients_explode"),
    ("ex4", "Post-norm is more stable than pre-norm even if you skip the warm-up.", "postnorm_more_stable"),
    ("ex4", "Post-norm is normally the steadier arrangement.", "postnorm_more_stable"),
    ("ex4", "To be fair to post-norm, once it is past this start it is the more stable of the two designs, because "
            "every layer's output is held at a fixed scale.", "postnorm_more_stable"),  # "of the two": in general
    ("ex4", "My no-residual model got to 3.31, roughly U. What happens is that the model memorises the training windows "
            "it sees instead of learning general patterns.", "no_residual_overfits"),
    ("ex4", "Without residual connections the gradients explode as they go back through the six blocks.",
     "no_residual_gradients_explode"),
    ("ex4", "The reason is exploding gradients. Without the skip connections the gradient is multiplied by the weights "
            "of every layer on the way back, and with six blocks these products grow very large.",
     "no_residual_gradients_explode"),
    ("ex4", "Post-norm is more stable than pre-norm at a high learning rate.", "postnorm_more_stable"),
    ("ex4", "In principle post-norm is the more stable arrangement, since it keeps the activations at a fixed scale.",
     "postnorm_more_stable"),  # stability claimed in general, whatever the reason
    ("ex4", "Post-norm is in general the more stable of the two, because the activations never drift in scale.",
     "postnorm_more_stable"),
    ("ex4", "Post-norm is more stable even if you do not warm up.", "postnorm_more_stable"),
    (1, "Each head is processed in turn, after the head before it has been completed.", "heads_sequential"),
    (1, "The heads run one after another, not in parallel.", "heads_sequential"),
    (1, "The heads are stacked in series inside the layer, so the output of head 1 is the input of head 2.",
     "heads_sequential"),
    (1, "With 12 heads and 120 tokens the sentence is divided among the heads, 10 tokens each.", "heads_split_tokens"),
    (1, "Multi-head attention costs roughly h times as much as a single head, and going from 8 to 16 heads doubles "
        "the attention cost.", "heads_cost_more"),
    (3, "GPT, by contrast, is bidirectional: every token attends to both sides, because GPT gets the whole prompt.",
     "gpt_bidirectional"),
    # a model named by its property is the subject's own when the sentence says the subject is one
    (3, "BERT is an autoregressive model, so each token only sees the tokens before it.", "bert_causal"),
    (3, "GPT is a bidirectional model.", "gpt_bidirectional"),
    (3, "GPT uses bidirectional context, so every token sees the whole sentence.", "gpt_bidirectional"),
    (3, "GPT is the bidirectional one, it looks at the whole text.", "gpt_bidirectional"),  # "the X one" is GPT
    (3, "BERT is the one with the mask so it can't look ahead.", "bert_causal"),
    # the MLP said to read or let through the other positions (dev_errors, 2026-12-07)
    (2, "For a sequence of 10 tokens, the feed-forward layer takes all 10 token vectors together and combines them "
        "into each output.", "mlp_mixes_tokens"),
    (2, "The feed-forward network attends across positions, combining the token vectors into new ones.",
     "mlp_mixes_tokens"),
    (2, "In the MLP, information is exchanged between the different positions of the sequence.", "mlp_mixes_tokens"),
    (2, "With 128 tokens, the MLP's output at position 5 depends on the vectors at all 128 positions.",
     "mlp_mixes_tokens"),
    # one residual connection, around attention, in one piece (dev_errors, 2026-12-07)
    (2, "Each block has one residual connection, the one around attention.", "residual_only_attention"),
    (2, "The input is added back only after the attention sub-layer, not after the MLP.", "residual_only_attention"),
    # builders who tell, write or plan the heads' jobs (dev_errors, 2026-12-07)
    (1, "The people building it basically tell each head what to focus on, like one does verbs and one does nouns.",
     "heads_assigned_roles"),
    (1, "The specialisation of the heads comes from the architecture: the designer writes each head to look for "
        "something different.", "heads_assigned_roles"),
    (1, "Each head's job is a hyperparameter that is set before training, such as attend to the previous token.",
     "heads_assigned_roles"),
    # heads said to share one set of projections (dev_errors, 2026-12-07)
    (1, "In a layer with d_model = 512 and 8 heads, the 8 heads all reuse one shared 512 x 64 query matrix.",
     "heads_share_qkv"),
    (1, "It is like every reader is given the same pair of glasses to read the contract with: one shared set of "
        "query, key and value weights for all heads.", "heads_share_qkv"),
    # round q's dev answers (labels_q.toml, 2026-12-07)
    (1, "Whoever designs the model decides up front which head does what, like head 1 handles coreference.",
     "heads_assigned_roles"),
    (2, "The MLP works on each token separately, but position 0 has its own 768 x 3072 and 3072 x 768 matrices, "
        "position 1 has its own pair, and so on.", "mlp_weights_per_position"),
    (2, "Attention has a skip connection, so you get x + attention(x). The MLP doesn't get one: its output just "
        "replaces the vector.", "residual_only_attention"),
    (1, "The queries, keys and values come from one set of projections that all the heads share.", "heads_share_qkv"),
    # GPT said to see the tokens after (dev_errors, 2026-12-07)
    (3, "In GPT, each token is allowed to attend to the tokens that come after it.", "gpt_bidirectional"),
    (3, "GPT generates good text because each token can look ahead at the words that come after it.",
     "gpt_bidirectional"),
    (3, "In GPT every token attends to the future tokens as well.", "gpt_bidirectional"),
    # round s's dev answers (labels_s.toml) and dev_errors, 2026-12-07
    (1, "The sequence is shared out as well: 128 tokens / 8 heads = 16 positions per head.", "heads_split_tokens"),
    (1, "Head 0 does attention over tokens 0-15, head 1 over tokens 16-31, and so on.", "heads_split_tokens"),
    (1, "Each head is one of the readers, and each head gets its own stretch of the sequence: head 1 attends over the "
        "first block of tokens, head 2 over the next block.", "heads_split_tokens"),
    (1, "It is like splitting a long contract into chapters and handing one chapter to each lawyer on the team.",
     "heads_split_tokens"),
    (1, "These projections map a token to the full d_model size, so every head works with all 512 dimensions of the "
        "token, just like a single-head attention would.", "heads_full_width"),
    (1, "The people who design the model set up each head for its job.", "heads_assigned_roles"),
    (1, "Whoever designs the model decides up front which head does what, and training then just makes each head "
        "better at the job it was given.", "heads_assigned_roles"),  # training that only polishes the given jobs
    (1, "There is one W_Q, one W_K and one W_V, and all the heads of the layer use these same three matrices.",
     "heads_share_qkv"),
    (1, "That tidying is W_O: the output projection is applied to each head's output by itself.", "wo_before_concat"),
    (1, "With d_model = 512, 8 heads need eight times the multiplications of one 512-wide head.", "heads_cost_more"),
    (2, "The MLP takes the vectors of the tokens and mixes them, so every token receives information from the other "
        "tokens.", "mlp_mixes_tokens"),
    (2, "The MLP is not wrapped in this way; its output replaces its input and is passed on directly.",
     "residual_only_attention"),
    (2, "Attention has a residual connection around it. The MLP does not, so it overwrites the vector.",
     "residual_only_attention"),
    (2, "The residual stream is the path through the whole stack, and what travels along it is the attention "
        "weights: each block adds its attention pattern to the stream.", "residual_carries_attention"),
    (2, "Each feature is normalised using the mean and variance taken over all the positions of the sequence.",
     "layer_norm_across_tokens"),
    (3, "Both BERT and GPT employ a causal mask, so that each token attends only to itself and to the tokens "
        "preceding it.", "bert_causal"),
    (3, "In GPT, token 3 attends to all 10 tokens of the sequence, including tokens 4 to 10.", "gpt_bidirectional"),
    # a masked language model is BERT, no rival
    (3, "BERT's masked language model works by hiding the future tokens, so each token can only attend to the words "
        "before it.", "bert_causal"),
    (2, "Layer norm lets tokens influence each other a little, because each token's features are rescaled using "
        "statistics from the whole sequence.", "layer_norm_across_tokens"),  # "each token's" said with the sequence
    # the block's parts listed as all there is, with no norm among them
    (2, "The block is just attention plus MLP plus the skip connections, nothing else.", "no_layer_norm"),
    (2, "The full list of parts in a transformer block is: multi-head attention, a feed-forward network, and two "
        "residual connections.", "no_layer_norm"),
    # post-norm the stabler one at a high learning rate, in exercise 4's explanation
    ("ex4", "Post-norm normalises the residual stream itself, which makes it the stable placement when the learning "
            "rate is large.", "postnorm_more_stable"),
    ("ex4", "If you crank up the learning rate, go with post-norm, it holds up better.", "postnorm_more_stable"),
    ("ex4", "Pre-norm needs a lower learning rate than post-norm to train without diverging.", "postnorm_more_stable"),
    # a leading likeness is the picture's; the claim after it is the student's
    (1, "Like a team leader telling one reader to check the dates and another to check the signatures, the engineers "
        "give each head its task.", "heads_assigned_roles"),
    (1, "The heads run serially, one finishing before the next starts.", "heads_sequential"),
    # a plain "I wrote that" is the student's claim (a reviewer's attack on the corrected-first-version cue); so
    # "I wrote that BERT uses a causal mask, but I was confusing it with GPT" (dev_router4) is still named
    (1, "I wrote that the heads take turns, one after another, and I still think that is right.", "heads_sequential"),
    # the chain inside a layer as relations: hand-off, dependency, waiting, order words, chain nouns, nested calls
    (1, "Within one layer, the output of head 2 becomes the input of head 3.", "heads_sequential"),
    (1, "Each head passes its notes on to the next head.", "heads_sequential"),
    (1, "Head 5 can not start until head 4 has finished.", "heads_sequential"),
    (1, "In every layer the heads are applied in a fixed order.", "heads_sequential"),
    (1, "The heads of an attention layer form a pipeline.", "heads_sequential"),
    (1, "In code: `for i in range(h): x = heads[i](x)`", "heads_sequential"),
    (1, "With 16 heads there are 16 successive attention steps in every layer.", "heads_sequential"),
])
def test_the_errors_next_to_them_are_still_named(q, sentence, error):
    assert error in bench.named(q, sentence)[0]


@pytest.mark.parametrize("q, sentence", [
    # an error mentioned to be judged (dev_redteam10 found these frames missing for every error; written here with
    # other errors than the red team's)
    (2, "The picture of the MLP mixing the tokens is wrong."),
    (2, "Saying the MLP mixes the tokens misdescribes the block."),
    (2, "Anyone who says the MLP mixes the tokens has confused it with attention."),
    (3, 'The statement "BERT uses a causal mask" is wrong.'),
    (3, 'A typical exam distractor reads: "BERT uses a causal mask". That option is false.'),
    (2, "Describing the MLP as mixing the tokens mixes up the two sub-layers."),
    (2, "The grader flags answers saying the MLP mixes the tokens."),
    (2, "Early drafts of my notes said the MLP mixes the tokens; I have fixed that."),
    (3, "The blog's figure wrongly shows BERT with a causal mask."),
    (2, "This is the picture to avoid: the MLP mixes the tokens."),
    (3, 'In the quiz, "BERT only looks at the previous tokens" is a distractor.'),
    (2, "Students who write that the MLP mixes the tokens confuse it with attention."),
    (3, "Myth #2: BERT uses a causal mask."),
    (2, "Honestly the MLP mixing the tokens thing is a myth."),
    (2, "There is no sense in which the MLP mixes the tokens."),
    (3, "A misleading diagram shows BERT with a causal mask."),
])
def test_an_error_mentioned_to_be_judged_names_nothing(q, sentence):
    assert bench.named(q, sentence)[0] == ()


@pytest.mark.parametrize("q, sentence, error", [
    (2, "The MLP mixes the tokens, which confuses many students.", "mlp_mixes_tokens"),
    (2, "The MLP mixes the tokens; people get this wrong.", "mlp_mixes_tokens"),
    (2, "Students who write that the MLP mixes the tokens are right.", "mlp_mixes_tokens"),
    (3, "The statement in the lesson is that BERT is causal.", "bert_causal"),
])
def test_an_error_stated_next_to_judging_words_is_still_named(q, sentence, error):
    assert error in bench.named(q, sentence)[0]
