"""What counts as prose: the verb test of a sentence (grader/rubric/sentences.py) and the per-paragraph script
test of English (grader/rubric/structure.py, picked up by the review step, grader/rubric/review.py).

Each rule is tested both ways: the input it must catch, and the input that would fool a careless version of it.
"""
import pytest
from conftest import ROOT, bench_module

from grader import rubric
from grader.rubric import review, structure
from grader.rubric.read import normalise
from grader.rubric.sentences import has_verb, sentence_share

line_passages = bench_module("line_passages")

EX1 = ROOT / "exercises" / "exercise1"
SPEC = structure.load_spec(EX1 / "exercise.toml")
RUBRIC = rubric.load(EX1 / "rubric.toml")
HEADINGS = ["1. Multi-head attention: a team reading one contract", "2. The transformer block around it",
            "3. Quick check: BERT vs GPT at the attention level"]


def answer(*sections: str) -> str:
    """An answer with exercise 1's three headings and the given texts under them."""
    return "\n\n".join(f"## {h}\n\n{text}" for h, text in zip(HEADINGS, sections))


def bullets(*items: str) -> str:
    return "\n".join(f"- {item}" for item in items)


# --------------------------------------------------------------------------------------------- fragments

#: Noun-phrase bullets: each has six words or more and enough function words, so only the verb test stops them.
FRAGMENTS_1 = ("several heads in parallel on the same tokens",
               "own query, key and value projections for each head",
               "a different relationship between the tokens for each of the heads",
               "the width of each head d_model / h, so about the cost of one head",
               "the outputs of all heads concatenated, then W_O",
               "a team of lawyers on one contract, one lawyer per head")
FRAGMENTS_2 = ("an MLP on each token separately, with no mixing between the tokens",
               "a residual connection around each of the two parts",
               "a layer norm before the attention and before the MLP",
               "many such blocks on top of each other in the model")
FRAGMENTS_3 = ("full attention over all the tokens in BERT, in both directions",
               "a causal mask for GPT, none for BERT",
               "only the earlier tokens for each token in GPT")

#: The same content, written as sentences.
SENTENCES_1 = ("Several heads run in parallel on the same tokens.",
               "Each head has its own query, key and value projections.",
               "Each head learns a different relationship between the tokens.",
               "A head is d_model / h wide, so all of them cost about as much as one full head.",
               "The outputs of all heads are concatenated and then multiplied by W_O.",
               "Think of a team of lawyers who read one contract, one lawyer per head.")
SENTENCES_2 = ("The MLP works on each token separately, with no mixing between the tokens.",
               "A residual connection goes around each of the two parts.",
               "A layer norm comes before the attention and before the MLP.",
               "The model stacks many such blocks on top of each other.")
SENTENCES_3 = ("BERT attends over all the tokens, in both directions.",
               "GPT uses a causal mask, and BERT uses none.",
               "In GPT each token sees only the earlier tokens.")


@pytest.mark.parametrize("fragment", FRAGMENTS_1 + FRAGMENTS_2 + FRAGMENTS_3)
def test_a_noun_phrase_has_no_verb_though_it_looks_like_a_sentence(fragment):
    norm = normalise(fragment)
    assert len(norm.split()) >= SPEC.sentence_min_words
    assert sentence_share(norm.split()) >= SPEC.sentence_min_function_share  # the old test took it for prose
    assert not has_verb(norm)


@pytest.mark.parametrize("sentence", SENTENCES_1 + SENTENCES_2 + SENTENCES_3)
def test_the_same_content_as_sentences_has_a_verb(sentence):
    assert has_verb(normalise(sentence))


def test_an_answer_of_fragment_bullets_is_a_keyword_list_and_capped():
    text = answer(bullets(*FRAGMENTS_1), bullets(*FRAGMENTS_2), bullets(*FRAGMENTS_3))
    a = rubric.evaluate(RUBRIC, text)
    assert a.words >= SPEC.min_words
    assert a.prose_share == 0.0
    assert "mostly a list of keywords or fragments" in a.cap_reason
    assert a.total <= RUBRIC.cap_points
    assert structure.count(text, SPEC)[1] == 0.0  # the public check counts the same way


def test_an_answer_of_sentence_bullets_is_prose_and_not_capped():
    text = answer(bullets(*SENTENCES_1), bullets(*SENTENCES_2), bullets(*SENTENCES_3))
    a = rubric.evaluate(RUBRIC, text)
    assert a.prose_share == 1.0
    assert a.cap_reason == ""


@pytest.mark.parametrize("sentence", [
    "It's the same weights for every position in the sequence.",      # a contraction
    "They're all computed at once from the same input.",
    "Imagine a team of readers going over one contract.",             # a command
    "So picture a bunch of lawyers with the same contract.",
    "Think of each head as one of the lawyers in the team.",
    "The feed-forward network (MLP) processes each token separately.",  # a bracket between subject and verb
    "The heads also run at the same time on the same tokens.",          # an adverb between them
    "A residual connection and a layer norm surround each of the parts.",
    "The model maps each token to a query, a key and a value.",         # 'maps' before its object
    "In 2017 the transformer paper took this idea to its end.",         # an irregular past
    "After that they meet and merge their notes into one memo.",        # a verb not in the list after 'they'
    "Stacking the blocks deepens the network a lot in the end.",        # -ing subject, -s verb not in the list
    "| reads the whole contract ; attends over all tokens |",           # a table cell: the subject is the row's
    "merging the notes ; concatenating the head outputs and applying W_O",
    "Each block refines the representation of the one below.",           # general verbs of explanations
    "The attention pattern reveals which tokens matter for the pronoun.",
    "Post-norm weakens the gradient in the early blocks.",
])
def test_sentences_a_careless_verb_test_would_miss(sentence):
    assert has_verb(normalise(sentence))


@pytest.mark.parametrize("fragment", [
    "attention maps for each head and for each of the layers",   # 'maps' a plural noun, not a verb
    "the uses of a causal mask in a decoder like GPT",           # 'uses' after 'the'
    "the head's own projections of the same input tokens",       # a possessive, not "head is"
    "a mix of all the tokens in the attention layer",            # 'mix' a noun after 'a'
    "roles of the heads learned, not assigned by the designer",  # a participle ending a phrase
    "heads attending to different parts of the input",           # -ing without an object
])
def test_fragments_a_careless_verb_test_would_take_for_sentences(fragment):
    assert not has_verb(normalise(fragment))


@pytest.mark.parametrize("fragment", [
    "heads computed in parallel on the same tokens",
    "Heads running in parallel on the tokens.",
    "the outputs of the heads concatenated by W_O into one vector",
])
def test_a_participle_with_a_complement_is_a_fragment(fragment):
    assert not has_verb(normalise(fragment))


@pytest.mark.parametrize("sentence", [
    "The heads worked in parallel on the same tokens.",
    "The loss dropped to the unigram level.",
    "The model learned a pattern in the tokens.",
    "The heads computed their scores in parallel.",
])
def test_a_finite_past_verb_is_a_sentence(sentence):
    assert has_verb(normalise(sentence))


# --------------------------------------------------------------------------------------------- scripts

EN = ["Multi-head attention runs several heads in parallel over the same tokens.",
      "Each head has its own query, key and value projections, so it can learn a different relationship.",
      "The outputs of the heads are concatenated and multiplied by the output matrix W_O."]
TRANSLATIONS = {
    "Japanese": ["マルチヘッドアテンションは同じトークンに対して複数のヘッドを並列に実行します。",
                 "各ヘッドは独自のクエリ、キー、バリューの射影を持つので、異なる関係を学習できます。",
                 "ヘッドの出力は連結され、出力行列W_Oが掛けられます。"],
    "Chinese": ["多头注意力在相同的词元上并行运行多个头。",
                "每个头都有自己的查询、键和值投影，因此它可以学习不同的关系。",
                "各个头的输出被拼接起来，再乘以输出矩阵W_O。"],
    "Arabic": ["يشغل الانتباه متعدد الرؤوس عدة رؤوس بالتوازي على نفس الرموز.",
               "لكل رأس إسقاطات خاصة به للاستعلام والمفتاح والقيمة، لذلك يمكنه تعلم علاقة مختلفة.",
               "تُدمج مخرجات الرؤوس وتُضرب في مصفوفة الإخراج W_O."],
    "Russian": ["Многоголовое внимание запускает несколько голов параллельно на одних и тех же токенах.",
                "У каждой головы есть свои проекции запроса, ключа и значения, поэтому она может выучить другое "
                "отношение.",
                "Выходы голов объединяются и умножаются на выходную матрицу W_O."],
}


def interleaved(language: str) -> str:
    """Every English sentence followed by its translation, in one paragraph."""
    return " ".join(f"{en} {tr}" for en, tr in zip(EN, TRANSLATIONS[language]))


@pytest.mark.parametrize("language", sorted(TRANSLATIONS))
def test_sentences_each_followed_by_a_translation_are_not_english(language):
    paragraph = interleaved(language)
    assert structure.paragraph_language(paragraph).startswith(("English mixed with a non-Latin script",
                                                               "non-Latin script"))
    text = answer(paragraph, " ".join(EN), " ".join(EN))
    assert [i for i, _, _ in structure.foreign_paragraphs(text, SPEC)] == [1]


@pytest.mark.parametrize("language", sorted(TRANSLATIONS))
def test_the_review_step_flags_an_answer_with_translations(language):
    """One mixed paragraph: the review step names it (before, only Russian was flagged, its letters being over
    half Cyrillic); two of three: the whole-answer test may name the answer instead; either is 'other language'."""
    one = rubric.evaluate(RUBRIC, answer(interleaved(language), " ".join(EN), " ".join(EN)))
    lang = structure.paragraph_language(interleaved(language))
    assert one.needs_review == [f"other language: paragraph 1 ({lang}) not in English"]
    assert one.confidence == pytest.approx(1 - review.PENALTY["other language"])
    two = rubric.evaluate(RUBRIC, answer(interleaved(language), interleaved(language), " ".join(EN)))
    assert len(two.needs_review) == 1
    assert two.needs_review[0].startswith(("other language: paragraphs 1 (", "the answer may not be in English"))
    assert two.confidence == pytest.approx(1 - review.PENALTY["other language"])


def test_the_review_step_leaves_an_english_answer_with_a_name_alone():
    text = answer("The course by 张伟 explains it well. " + " ".join(EN), " ".join(EN), " ".join(EN))
    assert not [r for r in rubric.evaluate(RUBRIC, text).needs_review if r.startswith("other language")]


def test_a_translation_in_its_own_paragraph_is_found_though_it_has_no_spaces():
    """A Japanese paragraph is one or two 'words' to a space-splitting count; its characters are counted."""
    text = answer(" ".join(EN) + "\n\n" + "".join(TRANSLATIONS["Japanese"]), " ".join(EN), " ".join(EN))
    assert [(i, lang) for i, _, lang in structure.foreign_paragraphs(text, SPEC)] == [(2, "non-Latin script")]


@pytest.mark.parametrize("paragraph", [
    # a Greek letter, and symbols (not letters)
    "The attention weights α of each head are computed by a softmax over all the tokens ∑ = 1, one row per "
    "query token.",
    # a Chinese name
    "The lesson's example comes from a course by 张伟, who compares the heads to a team of lawyers reading one "
    "contract.",
    # a Russian name and a Greek formula
    "As Андрей explains, each head computes softmax(QKᵀ/√d) V with its own projections, and the outputs are "
    "concatenated.",
])
def test_names_and_symbols_in_another_script_do_not_make_a_paragraph_foreign(paragraph):
    assert 0 < structure.non_latin_share(paragraph) <= structure.MAX_NON_LATIN_SHARE
    assert structure.paragraph_language(paragraph) == ""
    assert structure.foreign_paragraphs(answer(paragraph, " ".join(EN), " ".join(EN)), SPEC) == []


def test_names_in_code_ticks_are_left_out_of_the_script_count():
    """Inline code may hold a name in any script: many of them in ticks do not make the paragraph foreign."""
    paragraph = ("The heads are named `注意头一号`, `注意头二号`, `注意头三号` and `注意头四号` in the course "
                 "notes, and each of them has its own projections.")
    assert structure.paragraph_language(paragraph.replace("`", "")) != ""  # without the ticks: foreign
    assert structure.foreign_paragraphs(answer(paragraph, " ".join(EN), " ".join(EN)), SPEC) == []


def test_counting_letters_not_symbols():
    assert structure.non_latin_share("∑ √ ∞ → ≤ 12 + 64 = 76") == 0.0
    assert structure.non_latin_share("abc абв") == 0.5
    assert structure.non_latin_share("abcd 注意") == 0.5  # a Chinese character weighs two letters


@pytest.mark.parametrize("example", ['(in "the old red car", "old" and "red" go to "car")', '(in "the old red car")',
                                     '(e.g. "the chef cooked the pasta")'])
def test_a_quoted_example_names_no_actor_of_another_world(example):
    # the car and the chef are tokens of the example, not the actors of the sentence
    text = answer(f"In multi-head attention several heads run in parallel. One head can link an adjective to its "
                  f"noun {example}, another one finds what a pronoun refers to.", "The MLP works on each token.",
                  "BERT attends both ways.")
    assert rubric.evaluate(RUBRIC, text).lines["different_relations"].earned


@pytest.mark.parametrize("name", ["feed forward network", "feed-forward network", "feedforward network"])
def test_the_feed_forward_network_is_the_mlp_however_it_is_spelled(name):
    text = answer("Several heads run in parallel on the same tokens.",
                  f"After attention, a {name} is applied to each token separately, with the same weights.",
                  "BERT attends both ways.")
    assert rubric.evaluate(RUBRIC, text).lines["mlp_per_token"].earned


# Terms side by side, with nothing that relates them, assert nothing (LABELLING.md: a bare term earns nothing); a
# fragment that relates its terms by a word or a sign still earns its line (bench/line_passages.py grades a passage
# inside a neutral answer that earns none of these lines).
@pytest.mark.parametrize("line, passage", [
    ("heads_parallel", "heads parallel qkv W_O concat"),
    ("concat_w_o", "heads parallel qkv W_O concat"),
    ("heads_parallel", "Parallel heads."),
    ("concat_w_o", "Concatenation W_O."),
    ("own_qkv", "Heads, own QKV? No: shared QKV."),
])
def test_bare_terms_earn_nothing(line, passage):
    assert not line_passages.credited(line, passage)


@pytest.mark.parametrize("line, passage", [
    ("heads_parallel", "Several heads in parallel on the same tokens."),
    ("concat_w_o", "Head outputs: concat, then W_O."),
    ("concat_w_o", "Head outputs concatenated -> W_O."),
    ("own_qkv", "Q, K, V projections per head."),
    ("mlp_per_token", "MLP: per token, no mixing."),
    ("bert_bidirectional", "BERT uses bidirectional self-attention."),  # four words, but a verb
    ("residual", "Residuals around attention, MLP."),  # prepositions that are no function words
    ("layer_norm", "LayerNorm before attention, MLP."),
])
def test_terms_related_by_a_word_a_sign_or_a_verb_still_earn(line, passage):
    assert line_passages.credited(line, passage)
