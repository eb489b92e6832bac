"""Exercise 1's 0-point named errors (rubric.toml, "named errors"): a confident error that contradicts a
concept is named to the student and flagged for a person, and costs nothing beyond the concept it loses."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from grader import rubric

ROOT = Path(__file__).resolve().parent.parent
RUBRIC = rubric.load(ROOT / "exercises/exercise1/rubric.toml")
ANSWERS = ROOT / "tests/exercise1_answers"


def found(text: str) -> set[str]:
    return {k for k, m in rubric.evaluate(RUBRIC, text).misconceptions.items() if m.found}


def frame(q1: str = "Several heads run in parallel on the tokens.", q3: str = "BERT attends both ways.") -> str:
    return f"## 1\n\n{q1}\n\n## 2\n\nThe block has attention and an MLP.\n\n## 3\n\n{q3}\n"


@pytest.mark.parametrize("q3, names", [
    ("BERT uses a causal mask, while GPT is bidirectional.", {"bert_causal", "gpt_bidirectional"}),
    ("BERT only attends to the previous tokens.", {"bert_causal"}),
    ("BERT is bidirectional, while GPT uses a causal mask.", set()),
    ("Unlike GPT, BERT is bidirectional: every token attends to all tokens.", set()),
    ("GPT is not bidirectional; BERT is.", set()),
    ("BERT masks some tokens during pre-training, but its attention sees both sides.", set()),
    ("GPT only sees earlier tokens; BERT sees both directions.", set()),
    ("In GPT a causal mask hides the future tokens, so attention only looks left.", set()),
    ("In BERT, attention only looks backwards: each token just sees what came before it.", {"bert_causal"}),
    ("For a 4-word input to BERT, the attention matrix is lower-triangular.", {"bert_causal"}),
    ("BERT cannot use the right context of a word, because its self-attention is masked to the left.", {"bert_causal"}),
    ("GPT's attention, unlike a bidirectional encoder's, only looks back.", set()),
    ("GPT's attention matrix is lower-triangular; BERT's is full.", set()),
])
def test_bert_and_gpt_errors_are_named_only_when_said_of_that_model(q3, names):
    assert found(frame(q3=q3)) & {"bert_causal", "gpt_bidirectional"} == names


@pytest.mark.parametrize("q1, named", [
    ("In multi-head attention the heads run one after another, each refining the output of the previous head.", True),
    ("In self-attention each head takes the output of the previous head and refines it.", True),
    ("The heads run in parallel on the tokens, and the layers run one after another.", False),
    ("The attention heads do not run one after another: they run in parallel.", False),
    ("Each head takes the output of the previous layer and computes its own attention over the tokens.", False),
])
def test_sequential_heads_are_named_only_for_heads(q1, named):
    assert ("heads_sequential" in found(frame(q1=q1))) is named


@pytest.mark.parametrize("q1, named", [
    ("The layer has several heads. It runs them sequentially, one at a time.", True),
    ("The layer has several heads. It runs them all at once, in parallel.", False),
])
def test_an_error_said_with_it_is_named(q1, named):
    assert ("heads_sequential" in found(frame(q1=q1))) is named


DIALOGUE = ("**Student:** So several heads run in parallel on the same tokens. But then eight heads must be eight "
            "times the work.\n\n**Tutor:** {reply} Each head works in d_model / h dimensions, so the total is about "
            "one full-width head.")


@pytest.mark.parametrize("reply, named", [
    ("Not if you keep d_model fixed.", False),   # the next speaker refutes the turn
    ("No, the width is split.", False),
    ("Exactly, and that is the price of heads.", True),  # the next speaker agrees: the error stands
])
def test_a_dialogue_turn_refuted_by_the_next_speaker_is_no_error(reply, named):
    assert ("heads_cost_more" in found(frame(q1=DIALOGUE.format(reply=reply)))) is named


@pytest.mark.parametrize("q3, named", [
    # a definition is said of every head, not of the model the sentence before named
    ("BERT attends both ways. GPT-2 has 12 heads per layer. A head is one attention pattern: a grid that says, for "
     "every token, how much it looks at every other token.", False),
    ("BERT attends both ways. GPT-2 has 12 heads per layer. Every token looks at every other token, before and "
     "after it.", True),
])
def test_a_general_definition_takes_no_model_from_the_sentence_before(q3, named):
    assert ("gpt_bidirectional" in found(frame(q3=q3))) is named


def test_a_next_paragraph_without_speakers_refutes_nothing():
    text = frame(q1="Several heads run in parallel. Eight heads must be eight times the work.\n\n"
                    "Not if you keep d_model fixed, some say.")
    assert "heads_cost_more" in found(text)


def test_a_named_error_costs_nothing_more_and_is_flagged():
    text = (ANSWERS / "swapped_bert_gpt" / "answer.md").read_text(encoding="utf-8")
    a = rubric.evaluate(RUBRIC, text)
    assert {"bert_causal", "gpt_bidirectional"} <= {k for k, m in a.misconceptions.items() if m.found}
    assert not a.lines["bert_bidirectional"].earned and not a.lines["gpt_causal"].earned
    # the 0-point errors change no total: the same answer without them scores the same
    assert a.total == sum(r.score for r in a.lines.values()) + sum(
        m.points for m in a.misconceptions.values() if a.misconception_counts(m))
    assert any("BERT's attention is causal" in r for r in a.needs_review)
    assert a.confidence <= 0.5


def test_a_correct_answer_names_no_error():
    text = (ROOT / "solutions/exercise1/answer.md").read_text(encoding="utf-8")
    a = rubric.evaluate(RUBRIC, text)
    assert not any(m.found for m in a.misconceptions.values())


def earned(text: str) -> set[str]:
    return {k for k, r in rubric.evaluate(RUBRIC, text).lines.items() if r.earned}


def test_heads_one_after_the_other_is_no_stacking_and_not_only_is_no_causal_mask():
    sequential = frame(q1="In multi-head attention, the heads in each layer run one after the other.")
    assert "stacked" not in earned(sequential) and "heads_sequential" in found(sequential)
    blocks = frame(q1="The transformer blocks are applied one after the other, each refining the output of the one below.")
    assert "stacked" in earned(blocks) and "heads_sequential" not in found(blocks)
    assert "gpt_causal" not in earned(frame(q3="GPT can see all the tokens, not only the earlier ones."))
    assert "gpt_causal" in earned(frame(q3="GPT uses a causal mask: each token attends only to the earlier tokens."))


def block(q2: str) -> str:
    return f"## 1\n\nSeveral heads run in parallel on the tokens.\n\n## 2\n\nA transformer block has attention and an MLP. {q2}\n\n## 3\n\nBERT attends both ways.\n"


@pytest.mark.parametrize("q3, names", [
    ("GPT can see all the tokens of the sentence.", {"gpt_bidirectional"}),
    ("GPT looks at the whole sentence at once.", {"gpt_bidirectional"}),
    ("GPT can see all the tokens, not only the earlier ones.", {"gpt_bidirectional"}),
    ("BERT masks the future tokens, so each token only predicts from the left.", {"bert_causal"}),
    ("BERT hides the next words from every token.", {"bert_causal"}),
    ("BERT masks 15% of the tokens during pre-training, and its attention sees both sides.", set()),
    ("BERT masks some tokens and predicts them from the context.", set()),
    ("GPT masks the future tokens, BERT does not.", set()),
    ("In GPT every token attends to all the tokens before it.", set()),
    ("In GPT a token can see all the tokens to its left, nothing after it.", set()),
    ("GPT sees the whole sequence during training, but a causal mask hides the later tokens.", set()),
    ("BERT sees the whole sentence; GPT only sees the earlier tokens.", set()),
    ("Unlike GPT, BERT looks at the whole sentence at once.", set()),
    ("BERT does not mask the future tokens: every token attends to all of them.", set()),
    ("GPT uses the whole context to predict the next token.", set()),
    ("GPT sees all the words it has generated.", set()),
    ("Unlike BERT, GPT masks the future tokens.", set()),
    ("BERT masks tokens at random, not the future ones.", set()),
])
def test_new_wordings_of_the_bert_and_gpt_errors(q3, names):
    q3 = "Both models are stacks of transformer blocks with self-attention. " + q3
    assert found(frame(q3=q3)) & {"bert_causal", "gpt_bidirectional"} == names


@pytest.mark.parametrize("q1, named", [
    ("Each head uses all 512 dimensions of the embedding.", True),
    ("Every head has full-size Q, K, V matrices of d_model x d_model.", True),
    ("Every head works in the full d_model width, so more heads see more.", True),
    ("Each head is full-size: as wide as the model.", True),
    ("Each head projects to the full model dimension before attention.", True),
    ("The heads together span d_model: 8 heads of 64 make 512.", False),
    ("The head outputs are concatenated back to d_model and W_O is d_model x d_model.", False),
    ("A head does not work at the full model width: it gets d_model / h dimensions.", False),
    ("All the heads together cost about as much as one full-width head.", False),
    ("Every head receives the full input, the whole sequence, and projects it down to 64 dimensions.", False),
    ("The projections of all heads add up to 512 x 512 in total, the same as one head.", False),
    ("The heads do not each use the full 512 dimensions; each one gets 64.", False),
    ("Each head has dimension d_model / h, so twelve heads cost no more than one head of full dimension.", False),
    ("Since every head has width d_model/h, the total cost is that of one full-width head.", False),
    ("Each head has its own full-size Q, K and V matrices (d_model x d_model).", True),
    ("Each head uses the full d_model-dimensional input and projects it down to 64.", False),
    ("Every head computes attention in the full d_model space.", True),
    ("Each of the 8 heads keeps all 512 dimensions, so nothing is lost.", True),
    ("Each head has Q, K and V of size d_model x d_model.", True),
    ("Each head has its own Q, K and V, and W_O is d_model x d_model.", False),
    ("Each head has full-size attention over the sequence, but only 64 dimensions.", False),
])
def test_full_width_heads_are_named(q1, named):
    q1 = "Several heads run in parallel on the tokens. " + q1
    assert ("heads_full_width" in found(frame(q1=q1))) is named


@pytest.mark.parametrize("q1, named", [
    ("In the model we assign one head to grammar and another to pronouns.", True),
    ("The engineers decide which head tracks what.", True),
    ("Each head is assigned a role by the designers, like the people in the team.", True),
    ("The heads are programmed to track different relationships.", True),
    ("The jobs of the heads are decided by the engineers before training.", True),
    ("Nobody assigns the heads their jobs; they learn them in training.", False),
    ("In the analogy the manager assigns tasks, but in the model they are learned.", False),
    ("You pick the number of heads and set d_k = d_model / h.", False),
    ("In the demo you can pick a layer and a head, and the heatmap shows which tokens it looks at.", False),
    ("We give each head a different job, like the lawyers in the team.", True),
    ("You can tell what each head tracks by looking at its attention pattern.", False),
    ("Each head is told what to look for by the programmer.", True),
    ("Before training we choose a job for every head.", True),
    ("The heads are assigned different tasks, such as syntax or coreference.", True),
    ("We choose the number of heads before training; their jobs are learned.", False),
    ("We specify the number of heads, not what each head tracks.", False),
    ("Each head is given its own query, key and value projections.", False),
    ("The heads' jobs are assigned by nobody: gradient descent shapes them.", False),
    ("The heads are not programmed to track grammar; their roles emerge in training.", False),
])
def test_assigned_head_roles_are_named(q1, named):
    q1 = "Several attention heads run in parallel on the tokens. " + q1
    assert ("heads_assigned_roles" in found(frame(q1=q1))) is named


@pytest.mark.parametrize("q2, names", [
    ("The MLP has different weights at each position.", {"mlp_weights_per_position"}),
    ("There is a separate MLP for each token, with its own parameters.", {"mlp_weights_per_position"}),
    ("Each token gets its own feed-forward network.", {"mlp_weights_per_position"}),
    ("The same MLP (same weights) is applied at every position.", set()),
    ("Each position goes through the MLP separately.", set()),
    ("The FFN is shared: one set of weights for all positions, applied to each token on its own.", set()),
    ("Each token gets its own MLP output, computed with the shared weights.", set()),
    ("The MLP, a small two-layer network applied to each token on its own, comes with a different set of weights for each position.",
     {"mlp_weights_per_position"}),
    ("In the block position 3 has its own MLP and position 4 another.", {"mlp_weights_per_position"}),
    ("After the MLP, attention computes a different set of weights for each token.", set()),
    ("The MLP is the same for all positions; position 3 and position 4 use the same weights.", set()),
    ("The block applies one MLP per token.", set()),
    ("The block has no layer norm, only attention and the MLP.", {"no_layer_norm"}),
    ("Transformers do not need layer normalisation.", {"no_layer_norm"}),
    ("There is no normalisation in the block.", {"no_layer_norm"}),
    ("Layer normalisation is not used in the transformer block.", {"no_layer_norm"}),
    ("The transformer block does not use any normalisation.", {"no_layer_norm"}),
    ("In pre-norm there is no layer norm after the residual add; the norm comes before each sub-layer.", set()),
    ("Without layer norm training diverges, so every block normalises before attention and the MLP.", set()),
    ("The residual stream itself has no normalisation in pre-norm; each sub-layer gets a layer norm first.", set()),
    ("Transformers use no batch normalisation; they use layer norm.", set()),
    ("There is no final layer norm in the original post-norm transformer.", set()),
    ("There is no normalisation of the attention weights other than the softmax; layer norm comes after each add.", set()),
    ("There is a residual connection only around attention, not around the MLP.", {"residual_only_attention"}),
    ("Only attention has a skip connection; the MLP output replaces x.", {"residual_only_attention"}),
    ("The MLP has no residual connection.", {"residual_only_attention"}),
    ("A residual goes around attention but not around the MLP.", {"residual_only_attention"}),
    ("The residual connection only goes around the attention sub-layer.", {"residual_only_attention"}),
    ("Skip connections are used around attention, but not around the feed-forward network.", {"residual_only_attention"}),
    ("The feed-forward layer has no skip connection.", {"residual_only_attention"}),
    ("There are residual connections around both attention and the MLP.", set()),
    ("Residuals wrap both sub-layers; only attention mixes tokens.", set()),
    ("Residual connections are not only around attention but also around the MLP.", set()),
    ("The residual connection only adds the attention output to x, and a second one adds the MLP output.", set()),
    ("Without a residual around the MLP, the gradients would have to pass through it.", set()),
])
def test_block_errors_are_named(q2, names):
    block_errors = {"mlp_weights_per_position", "no_layer_norm", "residual_only_attention"}
    assert found(block(q2)) & block_errors == names


@pytest.mark.parametrize("section, sentence, name", [
    (2, "In multi-head attention each head uses all 512 dimensions of the embedding.", "heads_full_width"),
    (2, "In the transformer we assign one attention head to grammar and another head to pronouns.", "heads_assigned_roles"),
    (3, "In a transformer block the MLP has different weights at each position.", "mlp_weights_per_position"),
    (3, "The transformer block has no layer norm: the residual additions keep the values small.", "no_layer_norm"),
    (3, "In the transformer block there is a residual connection only around attention, not around the MLP.",
     "residual_only_attention"),
    (None, "GPT looks at the whole sentence at once when it computes attention.", "gpt_bidirectional"),
    (None, "BERT masks the future tokens in its self-attention.", "bert_causal"),
])
def test_an_excellent_answer_with_one_confident_error_has_it_named_and_flagged(section, sentence, name):
    text = (ROOT / "solutions/exercise1/answer.md").read_text(encoding="utf-8")
    if section is None:
        text = text.rstrip() + f"\n\n{sentence}\n"
    else:
        head = f"\n## {section}."
        assert head in text
        text = text.replace(head, f"\n{sentence}\n{head}", 1)
    a = rubric.evaluate(RUBRIC, text)
    assert {k for k, m in a.misconceptions.items() if m.found} == {name}
    error = next(m for m in RUBRIC.misconceptions if m.id == name)
    assert any(error.statement in r for r in a.needs_review)
    # ... and it loses the line it contradicts, only that one (the solution alone earns every line)
    solution = rubric.evaluate(RUBRIC, (ROOT / "solutions/exercise1/answer.md").read_text(encoding="utf-8"))
    assert all(r.earned for r in solution.lines.values())
    assert {k for k, r in a.lines.items() if not r.earned} == set(error.loses) != set()
    assert all(a.lines[k].contradicted_by == name and not a.lines[k].counted for k in error.loses)


@pytest.mark.parametrize("question, claim, name", [
    (1, "each head uses all 512 dimensions", "heads_full_width"),
    (1, "the engineers decide which head tracks what", "heads_assigned_roles"),
    (2, "the MLP has different weights at each position", "mlp_weights_per_position"),
    (2, "the block has no layer norm", "no_layer_norm"),
    (2, "there is a residual connection only around attention", "residual_only_attention"),
    (3, "GPT can see all the tokens of the sentence", "gpt_bidirectional"),
    (3, "BERT masks the future tokens", "bert_causal"),
])
@pytest.mark.parametrize("wrap, named", [
    ("{C}.", True),
    ("A common misconception is that {c}.", False),
    ("Some people think that {c}, but that is wrong.", False),
    ("It is not true that {c}.", False),
])
def test_a_new_named_error_is_named_only_when_asserted(question, claim, name, wrap, named):
    sentence = wrap.format(c=claim, C=claim[0].upper() + claim[1:])
    parts = {1: "Several attention heads run in parallel on the tokens.", 2: "A transformer block has attention and an MLP.",
             3: "Both models are stacks of transformer blocks with self-attention."}
    parts[question] += " " + sentence
    text = "".join(f"## {q}\n\n{parts[q]}\n\n" for q in (1, 2, 3))
    assert (name in found(text)) is named


def test_a_rubric_whose_error_loses_an_unknown_line_is_refused(tmp_path):
    text = (ROOT / "exercises/exercise1/rubric.toml").read_text(encoding="utf-8")
    bad = tmp_path / "rubric.toml"
    bad.write_text(text.replace('loses = ["heads_parallel"]', 'loses = ["heads_paralel"]', 1), encoding="utf-8")
    with pytest.raises(rubric.RubricError, match=r"heads_sequential.*heads_paralel.*not line ids"):
        rubric.load(bad)



def test_a_rubric_pattern_with_an_undefined_term_is_refused(tmp_path):
    text = (ROOT / "exercises/exercise1/rubric.toml").read_text(encoding="utf-8")
    bad = tmp_path / "rubric.toml"
    bad.write_text(text.replace("{w8}", "{w10}", 1), encoding="utf-8")  # a typo matched the braces, never words
    with pytest.raises(rubric.RubricError, match=r"uses \{w10\}, which \[terms\] does not define"):
        rubric.load(bad)


def test_terms_inside_terms_are_expanded_and_a_loop_is_refused(tmp_path):
    text = (ROOT / "exercises/exercise1/rubric.toml").read_text(encoding="utf-8")
    a = rubric.load(ROOT / "exercises/exercise1/rubric.toml")
    assert not any("{" + "gpt}" in p.pattern for m in a.misconceptions for e in m.evidence for p in e.unless)
    bad = tmp_path / "rubric.toml"
    bad.write_text(text.replace("gpt = '", "gpt = '{gpt_foil}|", 1), encoding="utf-8")
    with pytest.raises(rubric.RubricError, match=r"uses itself \(gpt -> gpt_foil -> gpt\)"):
        rubric.load(bad)
    bad.write_text(text.replace("gpt = '", "gpt = '{gtp}|", 1), encoding="utf-8")
    with pytest.raises(rubric.RubricError, match=r"\[terms\] gpt: pattern .* uses \{gtp\}"):
        rubric.load(bad)


@pytest.mark.parametrize("q3, named", [
    ("BERT masks random words for training, which is not the same as causal masking.", False),
    ("Unlike in GPT, in BERT there is no rule saying a token cannot see future tokens.", False),
    # the unless is cancelled when the student denies it: a "not" it does not spell itself
    ("BERT's attention is causal; it is not different from a causal mask at all.", True),
])
def test_an_unless_that_spells_its_own_negation_is_asserted(q3, named):
    assert ("bert_causal" in found(frame(q3=q3))) is named

NAMED = {"heads_sequential", "bert_causal", "gpt_bidirectional", "heads_full_width", "heads_assigned_roles",
         "mlp_weights_per_position", "no_layer_norm", "residual_only_attention", "heads_share_qkv", "wo_before_concat",
         "residual_carries_attention", "layer_norm_across_tokens"}


@pytest.mark.parametrize("question, sentence", [
    # a reviewer's false hits: each cost a correct student the line it "contradicted"
    (1, "The engineers only decide how many heads there are; what each head tracks is learned."),
    (1, "The programmer give only the architecture, the heads learn themself what they attend."),
    (1, "You choose d_model and the number of heads; the heads then learn different relations."),
    (1, "After training, we can give each head a name according to what it tracks, but that is only a description."),
    (2, "Layer norm is not part of attention itself; it sits before it in the block."),
    (2, "Not only attention but also the MLP has a skip connection."),
    (3, "Unlike GPT's masked self-attention, BERT's attention is bidirectional."),
    (3, "Unlike GPT's causal mask, BERT's attention sees both sides."),
    (3, "Unlike GPT, which only sees the previous tokens, BERT sees the whole sentence."),
    (3, "Unlike GPT, which masks the future tokens, BERT sees the whole sentence."),
    (3, "Unlike BERT, which sees both directions, GPT only sees the past."),
    (3, "Unlike BERT's bidirectional attention, GPT's attention is causal."),
    (3, "Compared with BERT, which has no mask, GPT uses a causal mask."),
    (1, "With one single head, the head would use the full d_model width, but with 8 heads each uses 64."),
    (1, "A single head with full-size Q, K, V matrices of d_model x d_model would cost the same as 8 small heads."),
    (1, "One head with d_model x d_model projections costs as much as all the heads together."),
    (1, "With only one head, each head has the full d_model width; with 8 heads each has 64."),
    (1, "You can choose to look at one head and see what it attends to."),
    (1, "We choose to plot what each head attends to."),
    # close correct sentences that stayed clean, kept so a widened rule does not catch them
    (1, "Head 2 does not use the output of head 1; both read the same input."),
    (1, "The designers choose the number of heads, but not their jobs."),
    (1, "Each head has its own full set of Q, K and V weights, only narrower: 512 x 64."),
    (2, "Each block has its own MLP with its own weights, used at every position."),
    (2, "Post-norm has no layer norm at the input of the sub-layer."),
    (3, "GPT cannot see the future tokens, but BERT can."),
    (3, "GPT uses masked attention, BERT does not."),
    (1, "The layers work in a chain, while the heads of a layer run in parallel."),
    (1, "Head 2 does not take head 1's result: the heads run in parallel."),
    (1, "No head waits for the one before it; each block waits for the one before it."),
    (3, "BERT and GPT both use attention, but only GPT applies a causal mask."),
    (3, "BERT and GPT both use masks: GPT a causal mask, BERT a mask over 15 % of the input tokens."),
    (3, "BERT and GPT do not both use a causal mask: only GPT does."),
    (1, "The heads share the same input but each has its own projections."),
    (1, "In multi-query attention all heads share one key and value projection; here each head has its own."),
    (1, "Each head's output goes through its own slice of W_O and the results are summed, the same as concatenating "
        "and applying W_O."),
    (1, "W_O is applied to each head separately, then the results are summed: the same as concatenating first."),
    (1, "The heads are concatenated and then W_O is applied to the result."),
    (2, "The residual stream carries the token's vector; the attention weights are recomputed in every block."),
    (2, "The residual connection passes the input around the attention weights."),
    (2, "Layer norm normalises each token's vector over its features, independently across positions."),
    (2, "LayerNorm computes the mean and variance over the d_model features of each token."),
])
def test_correct_sentences_name_no_error_and_lose_no_line(question, sentence):
    parts = {1: "Several heads run in parallel on the tokens.", 2: "The block has attention and an MLP.",
             3: "BERT attends both ways."}
    parts[question] += " " + sentence
    a = rubric.evaluate(RUBRIC, "".join(f"## {q}\n\n{parts[q]}\n\n" for q in (1, 2, 3)))
    assert not {k for k, m in a.misconceptions.items() if m.found} & NAMED
    assert not any(r.contradicted_by for r in a.lines.values())


@pytest.mark.parametrize("question, sentence, name", [
    (1, "Each head uses the whole 512 dimensions.", "heads_full_width"),
    (1, "The heads are processed one after another, each one improving the previous one.", "heads_sequential"),
    (1, "Head 2 uses the output of head 1.", "heads_sequential"),
    (3, "BERT cannot see future tokens.", "bert_causal"),
    (3, "BERT uses masked attention so that tokens cannot see the future.", "bert_causal"),
    (3, "In BERT a token does not attend to the next words.", "bert_causal"),
    (3, "Unlike GPT, BERT only sees the previous tokens.", "bert_causal"),
    (3, "Unlike BERT, GPT is bidirectional.", "gpt_bidirectional"),
    (1, "The heads of a layer work in a chain: head 1 attends first, head 2 then takes head 1's result.",
     "heads_sequential"),
    (1, "The heads are applied as a pipeline, each after the last.", "heads_sequential"),
    (1, "Each head waits for the one before it to finish.", "heads_sequential"),
    (3, "At the attention level BERT and GPT are the same: both use a causal mask.", "bert_causal"),
    (3, "GPT and BERT both apply a causal mask to attention.", "bert_causal"),
    (1, "All the heads share one set of query, key and value projections.", "heads_share_qkv"),
    (1, "Every head receives the same Q, K and V; only the softmax temperature differs.", "heads_share_qkv"),
    (1, "W_O is applied to each head separately, and then the projected pieces are concatenated.", "wo_before_concat"),
    (1, "The output projection is used before the concatenation.", "wo_before_concat"),
    (2, "What the residual stream carries from block to block is the attention pattern itself.",
     "residual_carries_attention"),
    (2, "Layer norm normalises each feature across the tokens of the sequence.", "layer_norm_across_tokens"),
    (2, "Layer normalisation takes the mean and variance over all the positions.", "layer_norm_across_tokens"),
])
def test_more_wordings_of_the_named_errors(question, sentence, name):
    parts = {1: "Several heads run in parallel on the tokens.", 2: "The block has attention and an MLP.",
             3: "Both models are stacks of transformer blocks with self-attention."}
    parts[question] += " " + sentence
    assert name in found("".join(f"## {q}\n\n{parts[q]}\n\n" for q in (1, 2, 3)))


@pytest.mark.parametrize("q2, named", [
    ("The MLP is where the tokens really exchange information.", True),
    ("The feed-forward layer takes in the whole sequence and blends the tokens' vectors together.", True),
    ("The MLP transforms each token's vector on its own, while attention blends the tokens' vectors.", False),
    ("The feed-forward layer works on each token alone; it never blends the tokens' vectors.", False),
    ("The MLP then mixes the features within each token's vector.", False),
])
def test_the_mlp_mixing_tokens_is_found_in_more_wordings(q2, named):
    assert ("mlp_mixes_tokens" in found(block(q2))) is named


@pytest.mark.parametrize("section, sentence, name", [
    # the heads split the tokens, in more words: in charge of a piece, a fraction of the positions
    (1, "In multi-head attention, the sentence is cut into eight pieces and every head takes care of one piece.",
     "heads_split_tokens"),
    (1, "In multi-head attention, with h heads each head covers n / h of the positions.", "heads_split_tokens"),
    (1, "In multi-head attention, each head only sees part of the sentence, not the whole thing.", "heads_split_tokens"),
    (1, "In multi-head attention, each head takes care of one kind of relationship, and every head reads the "
        "whole sentence.", None),
    (1, "In multi-head attention, each head works in d_model / h of the dimensions, so it is narrow.", None),
    # a builder tells the heads what to do, or sets them up for a job
    (1, "In multi-head attention, each head is set up from the start to focus on one type of relationship.",
     "heads_assigned_roles"),
    (1, "In multi-head attention, the architecture hard-codes which relationship each head tracks.",
     "heads_assigned_roles"),
    (1, "In multi-head attention, we tell every head what it should attend to before training starts.",
     "heads_assigned_roles"),
    (1, "In multi-head attention, we can tell what each head tracks by plotting its attention weights.", None),
    (1, "In multi-head attention, you can tell each head apart by what it attends to after training.", None),
    (1, "In multi-head attention, the heads are built to look at the whole sequence in parallel.", None),
    # the MLP mixes across the sequence; not when the other clause gives the mixing to attention
    (2, "The feed-forward layer mixes information across the sequence so that each token's output depends on "
        "every other token.", "mlp_mixes_tokens"),
    (2, "The FFN looks at the whole sequence at once and mixes the positions together.", "mlp_mixes_tokens"),
    (2, "The MLP works on each token separately; mixing across positions is attention's job.", None),
    (2, "Attention mixes information across the sequence and the MLP then processes each token on its own.", None),
    (2, "The MLP mixes features within a token rather than across the sequence.", None),
    # "h times as much as a single head" is the cost error; "about as much as a single head" is the point
    (1, "In multi-head attention, the heads therefore cost roughly h times as much as a single head, and going "
        "from 8 to 16 heads doubles the cost.", "heads_cost_more"),
    (1, "In multi-head attention, eight narrow heads cost about as much as a single head of full width, not eight "
        "times as much.", None),
])
def test_more_wordings_of_split_tokens_assigned_roles_and_mlp_mixing(section, sentence, name):
    text = frame(q1=sentence) if section == 1 else block(sentence)
    names = found(text) & {"heads_split_tokens", "heads_assigned_roles", "mlp_mixes_tokens", "heads_cost_more"}
    assert names == ({name} if name else set())


@pytest.mark.parametrize("section, sentence, name", [
    (1, "In multi-head attention the heads take turns: head 1 finishes and hands its result to head 2.",
     "heads_sequential"),
    (1, "In multi-head attention each head waits until the previous head is done before it starts.",
     "heads_sequential"),
    (1, "In multi-head attention head 1 processes the tokens first, then head 2 continues from its output.",
     "heads_sequential"),
    (1, "In multi-head attention the heads do not take turns; they all work at the same time.", None),
    (1, "Each block hands its output to the next block, while the heads inside it run in parallel.", None),
    (1, "The layers take turns, but the heads of one layer all run at once.", None),
    (2, "Layer normalisation rescales the values across the sequence so that every position has the same scale.",
     "layer_norm_across_tokens"),
    (2, "Layer norm rescales each token's vector on its own, not across the sequence.", None),
    (2, "The MLP blends the positions together, so each output is a mix of all input positions.", "mlp_mixes_tokens"),
    (2, "In the feed-forward network the tokens are combined with each other.", "mlp_mixes_tokens"),
    (2, "The MLP is where information flows between the tokens.", "mlp_mixes_tokens"),
    (2, "Attention blends the positions together; the MLP then works on each token separately.", None),
    (3, "There is no real difference at the attention level: BERT and GPT both use masked self-attention.",
     "bert_causal"),
    (3, "BERT and GPT both use self-attention, but only GPT uses masked self-attention.", None),
])
def test_more_wordings_of_turns_layer_norm_over_tokens_mlp_blending_and_both_masked(section, sentence, name):
    text = {1: lambda: frame(q1=sentence), 2: lambda: block(sentence), 3: lambda: frame(q3=sentence)}[section]()
    names = found(text) & {"heads_sequential", "layer_norm_across_tokens", "mlp_mixes_tokens", "bert_causal"}
    assert names == ({name} if name else set())


@pytest.mark.parametrize("q2, unsure", [
    # an error in words no evidence knows: a person reads it ("The FFN is where the positions get blended into one
    # another." is now read: the tokens mixed with one another in the MLP)
    ("Positions end up blended in the FFN.", True),
    ("The FFN is where the positions get blended into one another.", False),
    # read either way: the error named, or the right version earned in that sentence
    ("The MLP mixes information between tokens.", False),
    ("The MLP works on each token on its own, with no mixing between tokens.", False),
    # the mixing is attention's
    ("Attention lets tokens exchange information; the FFN only processes each token's own vector.", False),
])
def test_a_sentence_about_an_error_that_the_rubric_cannot_read_asks_a_person(q2, unsure):
    reasons = rubric.evaluate(RUBRIC, block(q2)).needs_review
    assert any(r.startswith("unsure:") and "the MLP mixes information between tokens" in r for r in reasons) is unsure


def test_a_misconception_may_only_oppose_lines_of_the_rubric(tmp_path):
    text = (ROOT / "exercises/exercise1/rubric.toml").read_text(encoding="utf-8")
    bad = text.replace('opposes = ["mlp_per_token"]', 'opposes = ["mlp_each_token"]', 1)
    assert bad != text
    (tmp_path / "rubric.toml").write_text(bad, encoding="utf-8")
    with pytest.raises(rubric.RubricError, match="opposes.*mlp_each_token.*not line ids"):
        rubric.load(tmp_path / "rubric.toml")


@pytest.mark.parametrize("exercise", ["exercise1", "exercise4"])
def test_no_rubric_pattern_can_backtrack_without_end(exercise):
    """A repeated group whose separator may be empty (``(?:\\s*[\\w,]+){0,16}?``) splits one word in exponentially
    many ways when the rest fails to match: one such pattern took 190 s on a 20-word sentence. Word gaps are written
    with a required separator, ``(?:\\s+\\S+){0,16}?``."""
    r = rubric.load(ROOT / f"exercises/{exercise}/rubric.toml")
    every = [p for x in (*r.lines, *r.misconceptions) for e in x.evidence for p in (*e.patterns, *e.unless, *e.unless_near)]
    bad = [p.pattern for p in every if re.search(r"\(\?:\\s\*\[[^\]]*\]\+\)\{\d*,\d+\}", p.pattern)]
    assert bad == []


@pytest.mark.parametrize("q1, name, named", [
    # the head as wide as the model, said after its queries or output, or with the model's own number
    ("Each head computes its queries, keys and values at the full d_model width.", "heads_full_width", True),
    ("With d_model = 768 and 12 heads, each head's queries and keys are 768-dimensional.", "heads_full_width", True),
    ("Every head works in the full 512 dimensions, nothing is shrunk for the heads.", "heads_full_width", True),
    ("Each head projects from the full d_model space down to 64 dimensions.", "heads_full_width", False),
    ("Each head reads the full 512-dimensional input and projects it to 64 dimensions.", "heads_full_width", False),
    ("With d_model = 768 and 12 heads, each head's queries are 64-dimensional.", "heads_full_width", False),
    ("The heads' outputs are concatenated back to the full d_model width before W_O.", "heads_full_width", False),
    # one set of projections for all heads
    ("Each of the 12 heads uses the very same W_Q, W_K and W_V.", "heads_share_qkv", True),
    ("A single set of query, key and value projections is shared by all the heads in the layer.", "heads_share_qkv", True),
    ("In this layer there is just one Q, K, V projection and all the heads use it.", "heads_share_qkv", True),
    ("All heads use the same input tokens, but each has its own W_Q, W_K and W_V.", "heads_share_qkv", False),
    ("One output projection W_O is shared by all the heads: it mixes their concatenated outputs.", "heads_share_qkv", False),
    ("One fused W_Q is shared by all heads and split into their columns, each head its own 64.", "heads_share_qkv", False),
    ("In multi-query attention a single key projection is shared by all the heads.", "heads_share_qkv", False),
])
def test_width_and_shared_projection_errors_are_named_in_their_wordings_only(q1, name, named):
    assert (name in found(frame(q1=q1))) is named


@pytest.mark.parametrize("q2, named", [
    ("After layer norm, each feature has mean zero over the sentence, since the statistics are computed over the "
     "sequence dimension.", True),
    ("Layer norm needs a mean and a variance. It computes them for each feature over all the tokens in the sequence.", True),
    ("Layer norm is like batch norm but over the sequence instead of the batch.", True),
    ("Layer norm normalises each token's vector over its own features, independently of the other tokens.", False),
    ("Batch norm averages each feature over the tokens of the batch; layer norm works on one token at a time.", False),
    ("Layer norm has a gamma and a beta for each feature, shared across all the positions.", False),
])
def test_layer_norm_across_tokens_is_named_in_its_wordings_only(q2, named):
    assert ("layer_norm_across_tokens" in found(block(q2))) is named


@pytest.mark.parametrize("q1, named", [
    ("With 12 heads and a sequence of 120 tokens, each head handles 10 of the tokens.", True),
    ("In the layer, head 1 looks at words 1 to 4, head 2 at words 5 to 8, and so on.", True),
    ("The heads each get a different slice of the sentence and attend only within it.", True),
    ("With 12 heads and 120 tokens, each head attends to all 120 of the tokens.", False),
    ("Each head handles 64 of the 512 dimensions, and every head sees all the tokens.", False),
])
def test_heads_splitting_the_tokens_is_named_in_counted_wordings(q1, named):
    assert ("heads_split_tokens" in found(frame(q1=q1))) is named


@pytest.mark.parametrize("q2, named", [
    ("A separate set of feed-forward weights is learned for every position of the sequence.", True),
    ("With a context of 512 tokens there are 512 separate feed-forward networks, one per position.", True),
    ("The feed-forward layer is position-specific: each position gets its own W_1 and W_2.", True),
    ("The same feed-forward weights are used at every position, so it is position-wise.", False),
    ("The MLP is applied to each token separately. It uses the same weights at each position.", False),
])
def test_mlp_weights_per_position_is_named_in_more_wordings(q2, named):
    assert ("mlp_weights_per_position" in found(block(q2))) is named
