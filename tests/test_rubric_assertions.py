"""Step 3 of the rubric (grader/rubric/assertions.py) and the domain sense (topic.py), alone and through evaluate().

Only what a clause asserts earns a line or commits a misconception; each stance is tested both ways:
sentences that earn and sentences that must not.
"""
import pytest
from conftest import ROOT

from grader import rubric
from grader.rubric.assertions import clauses, stance_of
from grader.rubric.topic import foreign, off_topic_share, topical

RUBRIC = rubric.load(ROOT / "exercises" / "exercise1" / "rubric.toml")
N = rubric.normalise


def lines_earned(text):
    return {k for k, v in rubric.evaluate(RUBRIC, text).lines.items() if v.earned}


def misconceptions_found(text):
    return {k for k, v in rubric.evaluate(RUBRIC, text).misconceptions.items() if v.found}


def stance(sentence, phrase, following=""):
    return stance_of(N(sentence), N(phrase), N(following))


# --------------------------------------------------------------------------- stances, one by one

STANCE_CASES = [  # (sentence, phrase, the phrase's stance)
    # negation has clause scope
    ("The heads do not split the tokens between them.", "split the tokens", "negated"),
    ("Heads never run one after another.", "run one after another", "negated"),
    ("Nobody assigns the heads their jobs.", "assigns the heads", "negated"),
    ("The MLP works on each token with no mixing between tokens.", "mixing between tokens", "negated"),
    ("The MLP works on each token with no mixing between tokens.", "the mlp works on each token", "asserted"),
    ("The heads run in parallel and do not share weights.", "the heads run in parallel", "asserted"),
    ("The heads run in parallel and do not share weights.", "share weights", "negated"),
    ("I believe that heads do not share weights.", "i believe", "asserted"),
    ("Without residuals every block must transform the whole signal.", "every block must transform", "asserted"),
    ("Without residuals every block must transform the whole signal.", "residuals", "negated"),
    ("The model without residuals learned only the letter frequencies.", "learned only the letter", "asserted"),
    ("The model without residuals also overfits.", "overfits", "asserted"),  # an adverb or a past verb ends the phrase
    ("In the plain stack no gradient reached the first blocks.", "reached the first blocks", "negated"),  # "no" subject
    ("Not only the heads but also the MLP have weights.", "the heads", "asserted"),
    ("The first blocks of my no-residual model barely moved.", "first blocks of my no-residual model", "asserted"),
    ("The first blocks of my model with no residual barely moved.", "residual barely moved", "negated"),
    ("The total costs no more than one full-width head.", "one full-width head", "asserted"),
    ("It is not true that the MLP does not look at other tokens.", "look at other tokens", "negated"),
    ("The paper does not say that heads run one after another.", "heads run one after another", "negated"),
    # doubt
    ("I do not believe that heads run in parallel.", "heads run in parallel", "doubted"),
    ("I doubt that d_model is split between the heads.", "d_model is split", "doubted"),
    ("Nobody has shown that d_model is split between the heads.", "d_model is split", "doubted"),
    ("It is unclear whether heads run in parallel.", "heads run in parallel", "doubted"),
    ("It could be that the heads run in parallel, or not.", "heads run in parallel", "doubted"),
    ("It might well be that the no-residual run only learns letter frequencies.", "only learns", "doubted"),
    ("It could be shown that the heads run in parallel.", "heads run in parallel", "asserted"),  # no possibility
    ("I am not sure that each head has its own weights.", "each head has its own weights", "doubted"),
    ("I think that heads run in parallel.", "heads run in parallel", "asserted"),
    ("Several heads clearly run in parallel.", "run in parallel", "asserted"),
    # attribution
    ("Some people say that the heads split the tokens.", "the heads split the tokens", "attributed"),
    ("Some claim each head reads a few words.", "each head reads", "attributed"),
    ("Some might think the heads split the tokens.", "the heads split the tokens", "attributed"),
    # a source named in the sentence, then its words after a colon or "that"; without a source, "it" may be the lecture
    ("I asked ChatGPT and it explained: the heads split the tokens.", "the heads split the tokens", "attributed"),
    ("I asked my friend and he replied that the heads split the tokens.", "the heads split the tokens", "attributed"),
    ("I reread the lecture and it explained: the heads split d_model.", "the heads split d_model", "asserted"),
    ("Many students would say each head reads a few words.", "each head reads", "attributed"),
    ("It is often said that more heads cost more.", "more heads cost more", "attributed"),
    ("Residuals are often said to fix exploding gradients.", "fix exploding gradients", "attributed"),
    ("More heads were claimed to cost more.", "cost more", "attributed"),
    ("Residuals are often said to be a path for the gradient, and that is exactly what they are.", "a path",
     "asserted"),  # endorsed
    ("I expected the heads to run in turn, but they run together.", "run in turn", "doubted"),  # given up
    ("I expected post-norm to fail, and it did.", "fail", "asserted"),  # an expectation kept
    ("As I expected, post-norm failed.", "failed", "asserted"),
    ("I thought about why the loss stays at the unigram level: the first blocks did not learn.", "unigram level",
     "asserted"),
    ("My guess was that it stays at the unigram level, and the run confirmed it.", "unigram level", "asserted"),
    ("Residuals are sometimes said to add extra parameters, which they do not.", "extra parameters", "attributed"),
    ("Residuals are sometimes said to add extra parameters; that is what they do.", "extra parameters", "asserted"),
    ("My teammate insisted that the heads run in turn.", "run in turn", "attributed"),
    ("Many assume the MLP mixes the tokens.", "the mlp mixes", "attributed"),
    ("One might think that 12 heads cost 12 times as much.", "12 heads cost", "attributed"),
    ("It is also tempting to think that 12 heads cost 12 times as much.", "12 heads cost", "attributed"),
    ("Some heads look at the previous token.", "look at the previous token", "asserted"),
    ("People reading a contract each check one detail.", "each check one detail", "asserted"),
    # questions
    ("Do heads run in parallel?", "heads run in parallel", "question"),
    ("Is d_model split between the heads, or not?", "d_model split", "question"),
    ("I wonder whether the heads share weights.", "the heads share weights", "question"),
    ("Heads run in parallel.", "heads run in parallel", "asserted"),
    ("Why? Heads run in parallel.", "heads run in parallel", "asserted"),
    # a negation that governs a "that" clause stops where the writer draws a conclusion
    ("It knows e is common but not that q is followed by u, which is why its loss sits at U.", "its loss sits at u",
     "asserted"),
    ("It is not true that the heads run in parallel, which is why they share weights.", "the heads run in parallel",
     "negated"),
    # a tag that asks only for agreement asserts; after an ironic "obviously" it does not
    ("So every lawyer on the team is a head, right?", "every lawyer on the team is a head", "asserted"),
    ("Giving each head private weights is obviously what anyone would do, right?", "each head private weights",
     "question"),
    # conditionals
    ("If the heads ran one after another, the layer would be slower.", "the heads ran one after another", "supposed"),
    ("If the heads ran one after another, the layer would be slower.", "the layer would be slower", "supposed"),
    ("Suppose each head reads a few words.", "each head reads a few words", "supposed"),
    ("Unless the MLP mixes the tokens, nothing moves between positions.", "the mlp mixes the tokens", "supposed"),
    ("Assuming heads split the tokens, the cost drops.", "heads split the tokens", "supposed"),
    ("Heads run in parallel, even on a small model.", "heads run in parallel", "asserted"),
    # a possibility left unrealised supposes; "would have" and "must have" assert
    ("GPT could have used bidirectional attention, but then it could not learn to predict the next token.",
     "gpt could have used bidirectional attention", "supposed"),
    ("GPT could have used bidirectional attention, but its causal mask hides the future.",
     "its causal mask hides the future", "asserted"),
    ("The heads might have been sequential in an older design.", "the heads might have been sequential", "supposed"),
    ("Each extra head would have made the layer more expensive.", "each extra head would have made the layer", "asserted"),
    ("Post-norm is more stable, so it should have learned better.", "it should have learned better", "asserted"),
    ("The heads must have learned different patterns.", "the heads must have learned different patterns", "asserted"),
    ("If you add heads, each head gets narrower.", "each head gets narrower", "asserted"),
    # framing
    ("A common misconception is that the heads split the tokens.", "the heads split the tokens", "framed"),
    ("It is a myth that more heads cost more.", "more heads cost more", "framed"),
    ("Students wrongly believe that the MLP mixes tokens.", "the mlp mixes tokens", "framed"),
    ("Contrary to popular belief, heads split d_model.", "heads split d_model", "asserted"),
    ("Contrary to popular belief, heads split d_model.", "popular belief", "framed"),
    ("The most common error in the code was a missing mask.", "missing mask", "asserted"),
]


@pytest.mark.parametrize("sentence, phrase, expected", STANCE_CASES)
def test_each_stance_both_ways(sentence, phrase, expected):
    assert stance(sentence, phrase) == expected


@pytest.mark.parametrize("sentence, following, phrase, expected", [
    ("Each head gets its own part of the sentence.", "That is wrong.", "each head gets", "refuted"),
    ("More heads cost more compute.", "This is a myth.", "more heads cost", "refuted"),
    ("12 heads cost 12 times as much as one head.", "They don't, because each head is narrower.", "12 heads cost",
     "refuted"),
    ("Each head splits the tokens, which is wrong.", "", "each head splits the tokens", "refuted"),
    ("Each head has its own weights.", "That is why heads can differ.", "each head has", "asserted"),
    ("The MLP works per token.", "It does not mix tokens.", "the mlp works per token", "asserted"),
])
def test_refutation_by_the_next_sentence(sentence, following, phrase, expected):
    assert stance(sentence, phrase, following) == expected


@pytest.mark.parametrize("sentence, first, second", [
    ("Some say heads split the tokens, but in fact they split d_model.", "attributed", "asserted"),
    ("Some say the MLP mixes tokens, while attention works per token.", "attributed", "asserted"),
    ("Some people think heads share weights, whereas each head has its own.", "attributed", "asserted"),
    ("I doubt heads share weights; each has its own.", "doubted", "asserted"),
    ("Heads run in parallel, but some say they run in turn.", "asserted", "attributed"),
])
def test_contrast_markers_start_a_clause_with_its_own_stance(sentence, first, second):
    found = clauses(N(sentence))
    assert found[0].stance == first and found[-1].stance == second


def test_clauses_tile_the_sentence():
    text = N("Some say heads split the tokens, but in fact they split d_model.")
    found = clauses(text)
    assert "".join(c.text for c in found) == text
    assert [c.stance for c in found] == ["attributed", "asserted", "asserted"]


# --------------------------------------------------------------------------- through the rubric

def test_denied_doubted_attributed_asked_and_supposed_concepts_earn_nothing():
    assert lines_earned("Several heads run in parallel on the same tokens.") == {"heads_parallel"}
    for text in ("I do not believe that several heads run in parallel on the same tokens.",
                 "Some people say several heads run in parallel on the same tokens.",
                 "Do several attention heads run in parallel on the same tokens?",
                 "If several attention heads ran in parallel on the same tokens, it would be fast.",
                 "Several attention heads run in parallel on the same tokens. That is wrong.",
                 "It is a myth that several attention heads run in parallel on the same tokens."):
        assert "heads_parallel" not in lines_earned(text), text


def test_denied_or_framed_misconceptions_cost_nothing():
    assert misconceptions_found("The heads split the tokens between them.") == {"heads_split_tokens"}
    for text in ("Some people say the heads split the tokens between them, but in fact they split d_model.",
                 "I doubt that the heads split the tokens between them.",
                 "Do the heads split the tokens between them?",
                 "If the heads split the tokens between them, each would see less context."):
        assert misconceptions_found(text) == set(), text


def test_a_negation_that_belongs_to_the_concept_still_earns():
    assert "mlp_per_token" in lines_earned("The MLP works on each token with no mixing between tokens.")
    assert "mlp_per_token" in lines_earned("The MLP does not look at other tokens.")
    assert "analogy_limits" in lines_earned("In attention, nobody assigns the heads their jobs.")
    assert "gpt_causal" in lines_earned("In GPT a token can not see the future tokens.")


def test_negatable_false_evidence_under_doubt_attribution_or_question_earns_nothing():
    for text in ("Some say nobody assigns the heads their jobs?",
                 "Some people say nobody assigns the heads their jobs.",
                 "I do not believe that nobody assigns the heads their jobs.",
                 "Does the MLP not look at other tokens?"):
        assert lines_earned(text) & {"analogy_limits", "mlp_per_token"} == set(), text


def test_a_real_denial_of_the_concept_loses_it():
    assert "mlp_per_token" not in lines_earned("It is not true that the MLP does not look at other tokens.")
    assert "mlp_per_token" not in lines_earned("The MLP does not work on each token separately.")


# --------------------------------------------------------------------------- terms in the lesson's sense

@pytest.mark.parametrize("text", [
    "Each head of lettuce has its own weights.",
    "The head chef has his own keys.",
    "The farmer stacks blocks in parallel.",
    "The residual of the soup is normalised.",
    "In attention, each head of lettuce has its own separate weights.",
])
def test_everyday_senses_of_rubric_words_earn_nothing(text):
    assert lines_earned(text) == set()


def test_the_domain_sense_still_earns():
    assert lines_earned("Each attention head has its own weights.") == {"own_qkv"}
    assert "own_qkv" in lines_earned("Each head has its own query, key and value projections.")
    assert "stacked" in lines_earned("The transformer blocks are stacked on top of each other.")
    assert "analogy_mapped" not in lines_earned("The head chef is a person.")
    one = rubric.evaluate(RUBRIC, "In the picture each person is a head.").lines["analogy_mapped"]
    assert one.missing_parts == ["merging the notes is concatenation + W_O"]  # the person-head part is earned


def test_foreign_binding_and_topical_flags():
    text = N("each head of lettuce has its own weights")
    assert foreign(text, 5, 9) and not foreign(N("each head of the layer"), 5, 9)
    assert not foreign(N("each head attends to all tokens"), 5, 9)
    assert foreign(N("the head chef"), 4, 8) and not foreign(N("the head dimension"), 4, 8)
    assert topical(text) == "off-topic"
    assert topical(N("Each attention head has its own weights.")) == "domain"
    assert topical(N("Every member of the team reads the whole contract.")) == "analogy"
    assert topical(N("The farmer stacks blocks in parallel.")) == "off-topic"
    assert off_topic_share([N("The farmer stacks blocks."), N("Each attention head has its own weights.")]) == pytest.approx(4 / 11)  # by words
    assert off_topic_share([]) == 0.0


# --------------------------------------------------------------------------- whole answers

DENIED = """\
## 1. Multi-head attention

I do not believe that several heads run in parallel on the same tokens. Nobody has shown that each head has
its own query, key and value projections. Some people say that d_model is split between the heads, so that
each head works in d_model / h dimensions. It is unclear whether the heads' outputs are concatenated and
multiplied by W_O. Some say the heads split the tokens between them, and I doubt that more heads cost twelve
times as much compute.

## 2. The transformer block

It is often said that the MLP works on each token separately. Is there a residual connection around
attention and the MLP? If blocks were stacked on top of each other, the model would be deeper. A common
misconception is that the MLP mixes information between the tokens.

## 3. BERT vs GPT

Some people claim that BERT is bidirectional and that GPT uses a causal mask, but I am not sure that this
is so.
"""


def test_an_all_denied_answer_earns_no_concept_points_and_loses_no_misconception_points():
    a = rubric.evaluate(RUBRIC, DENIED)
    assert [k for k, v in a.lines.items() if v.earned] == []
    assert [k for k, v in a.misconceptions.items() if v.found] == []
    assert a.total == 0  # misconception points need an earned concept on their question


ASSERTED = DENIED.replace("I do not believe that several", "Several").replace(
    "Nobody has shown that each", "Each").replace("It is often said that the MLP", "The MLP")


def test_undoing_the_denials_earns_the_lines_again():
    a = rubric.evaluate(RUBRIC, ASSERTED)
    earned = {k for k, v in a.lines.items() if v.earned}
    assert {"heads_parallel", "own_qkv", "mlp_per_token"} <= earned
    assert "head_width" not in earned and "residual" not in earned  # still attributed / asked
    assert not any(v.found for v in a.misconceptions.values())


def test_a_paragraph_vouches_only_for_sentences_with_a_domain_word_of_their_own():
    assert "own_qkv" in lines_earned("Attention mixes the tokens. Each head has its own weights.")
    assert lines_earned("Attention mixes the tokens. The farmer is proud. The head chef has his own keys.") == set()
    assert "stacked" not in lines_earned("The farmer stacks blocks. The residual of the soup is normalised.")
    assert "stacked" in lines_earned("Attention mixes the tokens. The blocks are stacked.")


def test_a_domain_word_in_another_sense_makes_weak_words_no_anchor():
    assert topical(N("Each head of lettuce has its own weights and keys.")) == "off-topic"
    assert topical(N("Each head of the model has its own weights and keys.")) == "domain"


def test_a_question_answered_by_the_next_sentence_gives_it_its_topic():
    assert "stacked" in lines_earned("How do blocks make a model? They are stacked, 24 of them in BERT-large.")
    assert "stacked" not in lines_earned("Are the transformer blocks stacked? No, they are not.")
    # a yes/no question is answered by a yes, not by any next sentence
    assert "stacked" in lines_earned("Are the transformer blocks stacked? Yes, 24 of them in BERT-large.")
    assert "stacked" not in lines_earned("Are the transformer blocks stacked? I did not check the code.")


def test_a_negated_predicate_leaves_its_subject_to_what_follows():
    assert "heads_parallel" in lines_earned("In attention, the heads do not run one after another but in parallel.")
    assert "heads_parallel" not in lines_earned("In attention, the heads do not run in parallel but one after another.")
    assert misconceptions_found("The heads do not split the tokens but the width d_model.") == set()


def test_without_and_instead_of_negate_only_their_phrase():
    assert "bert_bidirectional" in lines_earned("BERT attends to every token without any causal mask.")
    assert "heads_parallel" in lines_earned("In attention, heads run in parallel instead of one after another.")
    assert "heads_parallel" not in lines_earned("In attention, heads run one after another instead of in parallel.")
    assert "mlp_per_token" in lines_earned("The MLP, which does not mix tokens, is applied to each token separately.")


def test_a_general_rule_asserts_its_antecedent_a_counterfactual_does_not():
    assert "cost_one_head" in lines_earned("If you add more heads, the total cost stays about the same as one full-width head.")
    assert misconceptions_found("If you add more heads, the compute of the layer grows 12 times.") == {"heads_cost_more"}
    assert misconceptions_found("If you added more heads, the compute of the layer would grow 12 times.") == set()


def test_exercise4_uses_the_same_scope_rules():
    r4 = rubric.load(ROOT / "exercises" / "exercise4" / "rubric.toml")

    def earned(text):
        return {k for k, v in rubric.evaluate(r4, text).lines.items() if v.earned}

    assert "whole_signal" in earned("Without residuals, every block must transform the whole signal, so what a "
                                    "block does not pass on is lost.")
    assert "whole_signal" not in earned("I doubt that without residuals every block's output replaces its input.")
    # a consequent with no comma before it is supposed with its antecedent, whatever follows the comma (dev line
    # passages, tests/prose/lines)
    supposed = ("If the blocks were removed altogether the model would fall back to letter frequencies and score U, "
                "but the no-residual model still has all six of its blocks.")
    assert "unigram_level" not in earned(supposed)
    assert "unigram_level" in earned(supposed.replace("If the blocks were removed altogether the model would fall",
                                                      "The no-residual model falls"))


# --------------------------------------------------------------------------- vague others vs endorsed authorities

CONTEXT = "Attention mixes the tokens. "  # a domain sentence, so that single sentences may rely on their paragraph


@pytest.mark.parametrize("text", [
    "A few people say the heads run in parallel on the same tokens.",
    "Many people think the heads run in parallel on the same tokens.",
    "Others say the heads run in parallel on the same tokens.",
    "A few sources claim the heads run in parallel on the same tokens.",
    "People also say the heads run in parallel on the same tokens.",
    "Apparently the heads run in parallel on the same tokens.",
    "The heads supposedly run in parallel on the same tokens.",
    "Allegedly, the heads run in parallel on the same tokens.",
    "According to some blog posts, the heads run in parallel on the same tokens.",
    "According to some people, the heads run in parallel on the same tokens.",
    "It is claimed that the heads run in parallel on the same tokens.",
    CONTEXT + "Some say one thing about the heads. They also say the heads run in parallel on the same tokens.",
])
def test_a_report_of_vague_others_is_not_an_assertion(text):
    assert "heads_parallel" not in lines_earned(text)


def test_vague_attribution_of_other_lines():
    assert "bert_bidirectional" not in lines_earned("According to its fans, BERT attends to every token.")
    assert "mlp_per_token" not in lines_earned("Some sources claim the MLP is applied to each token separately.")


@pytest.mark.parametrize("text, line", [
    (CONTEXT + "The paper shows that the heads run in parallel.", "heads_parallel"),
    ("As Vaswani et al. explain, each head has its own query, key and value projections.", "own_qkv"),
    (CONTEXT + "In the lecture we saw that the heads run in parallel.", "heads_parallel"),
    ("According to the original paper, the MLP is applied to each token separately.", "mlp_per_token"),
    ("The authors say that the heads run in parallel on the same tokens.", "heads_parallel"),
    ("Some heads run in parallel on the same tokens.", "heads_parallel"),  # "some" without a verb of saying
    ("They run in parallel on the same tokens: the heads of one layer.", "heads_parallel"),
])
def test_a_report_of_an_endorsed_authority_still_earns(text, line):
    assert line in lines_earned(text)


# --------------------------------------------------------------------------- distancing

@pytest.mark.parametrize("after", [
    "But I am not convinced.", "I have my doubts.", "That is their claim, not mine.", "I would not commit either way.",
    "I have not checked any of this.", "I am not sure it is right.", "Maybe.", "I leave that to the lecturer.",
    "That is the common view; I am not sure it is right.", "I'm not sure.", "I am not sure about that.",
])
def test_a_distancing_sentence_retracts_the_one_before(after):
    assert "heads_parallel" not in lines_earned(f"The heads run in parallel on the same tokens. {after}")


@pytest.mark.parametrize("text", [
    "The heads run in parallel on the same tokens, but I am not convinced.",
    "The heads run in parallel on the same tokens, but I have my doubts.",
    "Each head has its own query, key and value projections; maybe.",
])
def test_a_distancing_clause_retracts_the_clause_before(text):
    assert lines_earned(text) & {"heads_parallel", "own_qkv"} == set()


def test_distancing_reaches_back_one_sentence_unless_it_says_all_of_this():
    two = "Each head has its own query, key and value projections. The heads run in parallel on the same tokens. "
    assert lines_earned(two + "I have my doubts.") == {"own_qkv"}
    assert lines_earned(two + "I have not checked any of this.") == set()
    assert lines_earned(two + "Another paragraph.\n\nMaybe.") >= {"own_qkv"}  # the same paragraph only


@pytest.mark.parametrize("text, line", [
    ("I am not sure about the exact numbers, but each head has 64 dimensions, d_model / h.", "head_width"),
    ("I am not sure why, but the heads run in parallel on the same tokens.", "heads_parallel"),
    ("The heads run in parallel on the same tokens. I am not sure that they share weights.", "heads_parallel"),
    ("The heads run in parallel on the same tokens. Maybe each head also has its own weights.", "heads_parallel"),
    ("The heads run in parallel on the same tokens. That is why the layer is fast.", "heads_parallel"),
    ("The heads run in parallel on the same tokens. I am not sure how much faster that is.", "heads_parallel"),
    ("The heads run in parallel on the same tokens. I have my doubts about the speed gain.", "heads_parallel"),
    ("The heads run in parallel on the same tokens, but I may be wrong.", "heads_parallel"),  # a hedge, not a retraction
])
def test_doubt_about_something_else_keeps_the_assertion(text, line):
    assert line in lines_earned(text)


def test_distancing_flags():
    from grader.rubric.assertions import distancing
    assert distancing(N("I have my doubts.")) == "previous"
    assert distancing(N("I have not checked any of this.")) == "paragraph"
    assert distancing(N("I am not sure about the heads.")) == ""  # speaks of something itself
    assert distancing(N("Maybe each head has its own weights.")) == ""
    assert stance("The heads run in parallel.", "run in parallel", "I have my doubts.") == "doubted"
    assert stance("The heads run in parallel.", "run in parallel", "I have seen this.") == "asserted"


# --------------------------------------------------------------------------- a pronoun after a clause break

def test_a_leading_they_stands_for_the_simple_subject_before_it():
    assert "heads_parallel" in lines_earned("In attention, the heads do not run in sequence; they run in parallel.")
    assert "heads_parallel" in lines_earned(CONTEXT + "The heads are not sequential. They run in parallel.")
    assert "heads_parallel" in lines_earned(CONTEXT + "The attention heads share one input. Each of them runs in parallel.")
    assert "heads_parallel" not in lines_earned(CONTEXT + "The cooks do not run in sequence. They run in parallel.")
    assert "heads_parallel" not in lines_earned(CONTEXT + "The heads are not sequential. These cooks run in parallel.")


@pytest.mark.parametrize("sentence, earned", [
    ("You might think the heads take turns, but they run in parallel on the same tokens.", True),
    ("Many people assume that all the heads take turns; in fact they run in parallel.", True),
    ("It is tempting to think the heads split the tokens, but they all read every token in parallel.", True),
    ("You might think the cooks take turns, but they run in parallel on the same tokens.", False),  # not a head
    ("You might think the heads take turns, and they do run in parallel.", False),  # no contrast: the belief goes on
    ("You might think the heads run in parallel, but they don't.", False),
])
def test_a_they_after_a_belief_and_its_contrast_is_the_writers(sentence, earned):
    assert ("heads_parallel" in lines_earned(CONTEXT + sentence)) == earned



def test_resolve_leading_offsets():
    from grader.rubric.scopes import resolve_leading
    assert resolve_leading("the heads are not sequential.", "they run in parallel.") == (
        "the heads run in parallel.", 0, 4, 9)
    assert resolve_leading("nobody assigns the cooks their jobs.", "they learn.") is None
    assert resolve_leading("some people like the heads.", "they run in parallel.") is None  # not simple: left alone
    assert resolve_leading("the heads read tokens.", "these heads are fine.") is None


@pytest.mark.parametrize("previous, sentence, resolved", [
    ("the layer has several heads.", "it runs them one at a time.", "the layer runs them one at a time."),
    ("the block has attention and an mlp.", "but it does not normalise.", "but the block does not normalise."),
    ("layer norm keeps the scale steady.", "it works on each token.", "layer norm works on each token."),
    ("the mlp works on each token.", "it is important to see why.", None),  # the dummy "it"
    ("the mlp works on each token.", "it seems simple.", None),
    ("the heads read tokens.", "it runs.", None),  # a plural subject is no antecedent of "it"
    ("the model with residuals trained better.", "it had more weights.", None),  # not simple: left alone
    ("some people like the mlp.", "it mixes tokens.", None),  # no subject at the start
])
def test_a_leading_it_stands_for_the_simple_singular_subject_before(previous, sentence, resolved):
    from grader.rubric.scopes import resolve_leading
    got = resolve_leading(previous, sentence)
    assert (got[0] if got else None) == resolved


def test_a_resolved_hit_is_quoted_at_the_pronoun():
    units_, _, _ = rubric.sentences.units(RUBRIC, rubric.read.blocks(CONTEXT + "The heads are not sequential. They run in parallel.")[0])
    from grader.rubric.concepts import find
    hit = find(RUBRIC.lines[0].evidence[0], units_)
    assert hit.quote == "They run in parallel." and hit.units[0].norm[hit.start:hit.end].startswith("they")


# --------------------------------------------------------------------------- names and foreign actors

def test_bert_and_gpt_as_people_earn_nothing():
    for text in (CONTEXT + "Attention uses a mask. Bert looks in both directions before crossing the street.",
                 "Bert looks in both directions. GPT only looks at the future.",
                 CONTEXT + "My friend Bert looks left and right, both directions."):
        assert lines_earned(text) & {"bert_bidirectional", "gpt_causal"} == set(), text
    assert topical(N("Bert and Ernie cross the street in both directions.")) != "domain"


def test_bert_and_gpt_as_models_still_earn():
    assert "bert_bidirectional" in lines_earned(CONTEXT + "BERT reads the whole sentence in both directions.")
    assert "bert_bidirectional" in lines_earned("BERT is bidirectional.")
    assert "gpt_causal" in lines_earned("GPT is a model that only sees the previous words.")
    assert "gpt_causal" in lines_earned("In GPT a token can not see the future tokens.")


def test_a_sentence_about_foreign_actors_is_not_vouched_for_by_its_paragraph():
    assert "analogy_limits" not in lines_earned(CONTEXT + "Nobody assigns the cooks their jobs; they learn their roles "
                                                          "during training.")
    assert "analogy_limits" not in lines_earned(CONTEXT + "Nobody assigns the cooks their jobs. They learn their roles "
                                                          "during training.")
    assert "stacked" not in lines_earned(CONTEXT + "The farmer stacks blocks.")


def test_the_heads_or_the_mapped_picture_learn_their_roles():
    for text in (CONTEXT + "Nobody assigns the heads their jobs; they learn their roles during training.",
                 CONTEXT + "Each head has its own weights. They learn their roles during training.",
                 CONTEXT + "In the picture each person is a head, but the heads learn their roles during training.",
                 "Attention heads are not told what to look for: they learn their roles during training.",
                 CONTEXT + "Each head computes the scores itself; nobody assigns the heads their jobs."):
        assert "analogy_limits" in lines_earned(text), text


def test_foreign_agents():
    from grader.rubric.topic import foreign_agents
    assert foreign_agents(N("Nobody assigns the cooks their jobs.")) == ["cooks"]
    assert foreign_agents(N("Bert looks both ways before crossing the street.")) == ["street"]
    assert foreign_agents(N("In the lecture we saw that the heads run on the same input.")) == []
    assert foreign_agents(N("The paper shows the learned weights of the rest of the model.")) == []
    assert foreign_agents(N("One head links a pronoun and the noun it refers to.")) == []  # the lesson's words


def test_stacking_is_said_of_blocks_not_of_heads_or_sublayers():
    # dev2 line passages (tests/prose/lines): the heads of one layer, or the two sub-layers of one block, are no stack
    assert "stacked" in lines_earned("Attention mixes the tokens. BERT-base is 12 identical encoder blocks deep.")
    assert "stacked" in lines_earned("Attention mixes the tokens. The model is blocks on top of blocks, each "
                                     "polishing what the last one made.")
    assert "stacked" not in lines_earned("Attention mixes the tokens. The heads of a layer are stacked on top of each "
                                         "other, each head refining what the previous head produced.")
    assert "stacked" not in lines_earned("Attention mixes the tokens. Inside the block the two sublayers come one "
                                         "after another.")


@pytest.mark.parametrize("sentence, phrase, expected", [
    # another's claim the student agrees with in so many words is the student's claim too (2026-12-07)
    ("the instructor said the heads run in parallel, and that matches my code.", "in parallel", "asserted"),
    ("some people say the heads run in parallel, and that is correct.", "in parallel", "asserted"),
    ("my friend told me that bert is causal, which is true.", "causal", "asserted"),
    # not an agreement: a verdict against it, a qualified one, or what someone else believed
    ("some say heads split the tokens between them, and that is a common mistake.", "split the tokens", "attributed"),
    ("some say post-norm is more stable, and that is true only with a warm-up.", "more stable", "attributed"),
    ("people say post-norm is more stable, and that is what the original paper believed.", "more stable",
     "attributed"),
])
def test_an_attribution_the_student_agrees_with(sentence, phrase, expected):
    assert stance_of(sentence, phrase) == expected


@pytest.mark.parametrize("before", ["Multi-head attention is the core of every transformer layer.", "Attention is useful.",
                                    "The layer has several heads."])
@pytest.mark.parametrize("sentence", ["It is a myth that the heads run one after another.",
                                      "It's a common misconception that the heads run one after another.",
                                      "It is wrong to say that the heads run one after another."])
def test_a_frame_after_a_sentence_keeps_its_dummy_it(before, sentence):
    # the "it" of "it is a myth that" stands for nothing: read as the previous sentence's subject ("attention is a
    # myth that the heads run one after another"), the frame was lost and the error named (a red team, 2026-12-07)
    a = rubric.evaluate(RUBRIC, f"## 1. Multi-head attention\n\n{before} {sentence}\n")
    assert not a.misconceptions["heads_sequential"].found
    # a referring "it" still stands for its subject
    a = rubric.evaluate(RUBRIC, f"## 1. Multi-head attention\n\n{before} It runs the heads one after another.\n")
    assert a.misconceptions["heads_sequential"].found
