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
    ("Not only the heads but also the MLP have weights.", "the heads", "asserted"),
    ("The total costs no more than one full-width head.", "one full-width head", "asserted"),
    ("It is not true that the MLP does not look at other tokens.", "look at other tokens", "negated"),
    ("The paper does not say that heads run one after another.", "heads run one after another", "negated"),
    # doubt
    ("I do not believe that heads run in parallel.", "heads run in parallel", "doubted"),
    ("I doubt that d_model is split between the heads.", "d_model is split", "doubted"),
    ("Nobody has shown that d_model is split between the heads.", "d_model is split", "doubted"),
    ("It is unclear whether heads run in parallel.", "heads run in parallel", "doubted"),
    ("I am not sure that each head has its own weights.", "each head has its own weights", "doubted"),
    ("I think that heads run in parallel.", "heads run in parallel", "asserted"),
    ("Several heads clearly run in parallel.", "run in parallel", "asserted"),
    # attribution
    ("Some people say that the heads split the tokens.", "the heads split the tokens", "attributed"),
    ("Some claim each head reads a few words.", "each head reads", "attributed"),
    ("It is often said that more heads cost more.", "more heads cost more", "attributed"),
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
    # conditionals
    ("If the heads ran one after another, the layer would be slower.", "the heads ran one after another", "supposed"),
    ("If the heads ran one after another, the layer would be slower.", "the layer would be slower", "supposed"),
    ("Suppose each head reads a few words.", "each head reads a few words", "supposed"),
    ("Unless the MLP mixes the tokens, nothing moves between positions.", "the mlp mixes the tokens", "supposed"),
    ("Assuming heads split the tokens, the cost drops.", "heads split the tokens", "supposed"),
    ("Heads run in parallel, even on a small model.", "heads run in parallel", "asserted"),
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
