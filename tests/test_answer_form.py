"""The public checks of a written answer's form (grader/rubric/structure.py) and the judge's confidence and
review reasons (grader/rubric/review.py), on exercise 1.

Form: each question answered, length, sentences, English per paragraph; each rule with the input that would
fool it. Confidence: 1 minus the largest penalty of the reasons, on clear and borderline answers.
"""
import re

import pytest
from conftest import ROOT

from grader import rubric
from grader.rubric import review, structure

EX1 = ROOT / "exercises" / "exercise1"
SPEC = structure.load_spec(EX1 / "exercise.toml")
RUBRIC = rubric.load(EX1 / "rubric.toml")
EX4_RUBRIC = rubric.load(ROOT / "exercises" / "exercise4" / "rubric.toml")
TEMPLATE = (EX1 / "skeleton" / "answer.md").read_text(encoding="utf-8")
SOLUTION = (ROOT / "solutions" / "exercise1" / "answer.md").read_text(encoding="utf-8")
ANSWERS = ROOT / "tests" / "exercise1_answers"
HEADINGS = ["1. Multi-head attention: a team reading one contract", "2. The transformer block around it",
            "3. Quick check: BERT vs GPT at the attention level"]

EN_1 = ("Multi-head attention runs several heads in parallel over the same tokens, and each head has its own "
        "query, key and value projections, so that the heads can look for different things in the sentence.")
EN_2 = ("The block adds an MLP that works on each token on its own, and a residual connection and a layer norm "
        "are wrapped around both parts; many such blocks are stacked on top of each other.")
EN_3 = ("BERT lets every token attend to all the others, while GPT uses a causal mask so that a token sees only "
        "the past.")
PT_1 = ("A atenção de múltiplas cabeças executa várias cabeças em paralelo sobre os mesmos tokens, e cada cabeça "
        "tem as suas próprias projeções de query, key e value.")
PT_2 = ("O bloco tem um MLP que trabalha em cada token separadamente, e uma conexão residual com layer norm em "
        "volta das duas partes; os blocos são empilhados.")


def answer(*sections: str) -> str:
    """An answer with the template's three headings and the given texts under them."""
    return "\n\n".join(f"## {h}\n\n{text}" for h, text in zip(HEADINGS, sections))


# --------------------------------------------------------------------------------------------- the spec

def test_the_rubric_and_the_public_checks_read_the_same_numbers():
    assert (SPEC.min_words, SPEC.max_words, SPEC.suggested) == (100, 1200, (300, 700))
    assert (RUBRIC.min_words, RUBRIC.max_words, RUBRIC.suggested) == (SPEC.min_words, SPEC.max_words, SPEC.suggested)
    assert (RUBRIC.min_prose_share, RUBRIC.list_min_items, RUBRIC.not_english_function_share) == \
           (SPEC.min_prose_share, SPEC.list_min_items, SPEC.min_function_share)
    text = (EX1 / "rubric.toml").read_text(encoding="utf-8")
    assert not re.search(r"^\[(length|keyword_list|language)\]", text, re.M)  # one place for the numbers


def test_a_missing_or_wrong_answer_table_names_the_file_and_the_field(tmp_path):
    spec = tmp_path / "exercise.toml"
    spec.write_text('title = "x"\n', encoding="utf-8")
    with pytest.raises(structure.AnswerSpecError, match=r"exercise.toml has no \[answer\] table"):
        structure.load_spec(spec)
    good = (EX1 / "exercise.toml").read_text(encoding="utf-8")
    spec.write_text(good.replace("min_words = 100", 'min_words = "many"'), encoding="utf-8")
    with pytest.raises(structure.AnswerSpecError, match=r"\[answer\] min_words = 'many' is not a valid number"):
        structure.load_spec(spec)
    spec.write_text(good.replace("paragraph_min_words = 12", ""), encoding="utf-8")
    with pytest.raises(structure.AnswerSpecError, match=r"\[answer\] has no paragraph_min_words"):
        structure.load_spec(spec)


# --------------------------------------------------------------------------------------------- each question answered

def test_the_skeleton_answers_nothing():
    assert structure.unanswered(TEMPLATE, TEMPLATE, SPEC) == [f"'## {h}' has no answer of your own" for h in HEADINGS]
    assert structure.count(TEMPLATE, SPEC) == (0, 0.0)
    assert structure.length_problem(0, SPEC).startswith("the answer is empty")


def test_half_an_answer_names_the_questions_left():
    text = answer(EN_1, EN_2, "TODO")
    assert structure.unanswered(text, TEMPLATE, SPEC) == [f"'## {HEADINGS[2]}' has no answer of your own"]
    missing_heading = "\n\n".join(f"## {h}\n\n{t}" for h, t in zip(HEADINGS[:2], (EN_1, EN_2)))
    assert structure.unanswered(missing_heading, TEMPLATE, SPEC) == [f"'## {HEADINGS[2]}' is missing"]
    assert structure.unanswered(answer(EN_1, EN_2, EN_3), TEMPLATE, SPEC) == []


def test_the_prompt_uncommented_is_not_an_answer_but_an_answer_under_it_is():
    """Fooling input: the skeleton's prompt with its comment markers taken out reads as text."""
    prompts = [m.strip() for m in re.findall(r"<!--(.*?)-->", TEMPLATE, re.S)]
    uncommented = answer(*prompts)
    assert len(structure.unanswered(uncommented, TEMPLATE, SPEC)) == 3
    assert structure.unanswered(answer(*(f"{p}\n\n{e}" for p, e in zip(prompts, (EN_1, EN_2, EN_3)))),
                                TEMPLATE, SPEC) == []


def test_renamed_headings_are_matched_by_their_number():
    text = f"## 1. Heads\n\n{EN_1}\n\n## 2. Block\n\n{EN_2}\n\n## 3. BERT and GPT\n\n{EN_3}"
    assert structure.unanswered(text, TEMPLATE, SPEC) == []


def test_a_heading_inside_a_code_fence_is_text():
    text = answer(EN_1, "```\n## 3. Quick check: BERT vs GPT at the attention level\n```", EN_3)
    assert [s.heading for s in structure.sections(text)] == HEADINGS


# --------------------------------------------------------------------------------------------- length

@pytest.mark.parametrize("n, problem", [
    (0, "the answer is empty"), (40, "the answer is far too short (40 words; write about 300-700, at least 100)"),
    (100, ""), (1200, ""), (1300, "the answer is far too long (1300 words; about 300-700 is right): only the first "
                                  "1200 words are read")])
def test_length_problems_use_the_readmes_numbers(n, problem):
    assert structure.length_problem(n, SPEC).startswith(problem) and bool(problem) == bool(
        structure.length_problem(n, SPEC))


def test_comments_and_headings_are_not_counted():
    assert structure.count(answer(EN_1, "", "") + "\n<!-- " + "word " * 500 + "-->", SPEC)[0] == 34


# --------------------------------------------------------------------------------------------- sentences

KEYWORDS = "heads, parallel, own projections, d_model / h, concat, W_O, MLP per token, residual, layer norm, stacked"


def test_a_keyword_list_is_not_sentences():
    n, share = structure.count(answer(KEYWORDS, KEYWORDS, "BERT bidirectional, GPT causal mask, left, right"), SPEC)
    assert n > 10 and share < SPEC.min_prose_share


def test_bullets_that_are_sentences_are_sentences():
    """Fooling input for the rule above: bullets are fine when each is a sentence."""
    bullets = "\n".join(f"- {s}" for s in (EN_1, EN_2, EN_3))
    assert structure.count(answer(bullets, EN_2, EN_3), SPEC)[1] == 1.0


# --------------------------------------------------------------------------------------------- language

def test_every_second_paragraph_in_portuguese_is_found():
    text = answer(f"{EN_1}\n\n{PT_1}", f"{EN_2}\n\n{PT_2}", EN_3)
    assert [(i, lang) for i, _, lang in structure.foreign_paragraphs(text, SPEC)] == [(2, "Portuguese"),
                                                                                       (4, "Portuguese")]
    assert structure.foreign_paragraphs(answer(EN_1, EN_2, EN_3), SPEC) == []


@pytest.mark.parametrize("text, expected", [
    ("La atención de varias cabezas ejecuta las cabezas en paralelo sobre los mismos tokens y cada una tiene su "
     "propia proyección.", "Spanish"),
    ("Die Köpfe der Attention laufen parallel über die gleichen Tokens, und jeder Kopf hat seine eigenen Gewichte "
     "für die Projektion.", "German"),
    ("多头注意力并行运行多个头，每个头都有自己的查询、键和值投影矩阵，用来关注不同的关系。", "non-Latin script"),
])
def test_other_languages_and_scripts(text, expected):
    assert structure.paragraph_language(text) == expected


@pytest.mark.parametrize("text", [
    # names of another language inside English prose
    "The contract of the Banco do Brasil is read by the whole team, and each of them checks one kind of detail.",
    # formulas: no function words of any language
    "d_head = d_model / h = 768 / 12 = 64, and Concat(head_1, ..., head_h) W_O gives d_model again per token.",
    # a keyword list: almost no function words of any language
    KEYWORDS,
])
def test_what_must_not_be_taken_for_another_language(text):
    assert structure.paragraph_language(text) == ""


# --------------------------------------------------------------------------------------------- through the judge

def _folder(tmp_path, name: str, text: str):
    folder = tmp_path / name
    folder.mkdir()
    (folder / "answer.md").write_text(text, encoding="utf-8")
    return folder


def test_the_public_checks_through_the_judge(grade1, tmp_path):
    result = grade1(_folder(tmp_path, "mixed", answer(f"{EN_1}\n\n{PT_1}", f"{EN_2}\n\n{PT_2}", "TODO")))
    by = {c.name: c for c in result.checks}
    assert by["test_written_in_english"].status == "failed"
    assert by["test_written_in_english"].feedback.startswith('Not in English: paragraph 2 ("A atenção de')
    assert "paragraph 4" in by["test_written_in_english"].feedback
    assert by["test_questions_answered"].feedback == f"Not answered: '## {HEADINGS[2]}' has no answer of your own."
    assert by["test_answer_length"].status == "passed" and by["test_answer_length"].details == {"words": 125}
    assert by["test_content_is_graded"].status == "passed"  # the judge has the rubric
    assert all(by[n].max_points == 0 for n in ("test_questions_answered", "test_answer_length",
                                               "test_written_in_sentences", "test_written_in_english"))
    assert any(r.startswith("other language: paragraphs 2 (Portuguese), 4 (Portuguese)") for r in result.needs_review)
    keywords = grade1(_folder(tmp_path, "keywords", answer(KEYWORDS, KEYWORDS, KEYWORDS)))
    check = next(c for c in keywords.checks if c.name == "test_written_in_sentences")
    assert check.status == "failed" and check.feedback.startswith("Mostly keywords or fragments: only 0% of your")


# --------------------------------------------------------------------------------------------- confidence

def _assess(text: str) -> rubric.Assessment:
    return rubric.evaluate(RUBRIC, text)


def test_confidence_is_one_minus_the_largest_penalty():
    assert review.confidence([]) == 1.0
    assert review.confidence(["borderline total 9/17: ..."]) == pytest.approx(0.5)
    assert review.confidence(["copied from x (90% of its content words)", "borderline total 9/17"]) == \
           pytest.approx(0.2)
    assert review.penalty_of("partly copied from x (30%)") == 0.4
    assert review.penalty_of("a reason nobody listed") == review.PENALTY["other"]
    assert review.confidence(["x"], {"x": 0.9}) == pytest.approx(0.1)


def test_a_clear_answer_has_full_confidence():
    a = _assess(SOLUTION)
    assert (a.total, a.needs_review, a.confidence) == (17, [], 1.0)


def test_a_borderline_total_has_confidence_one_half(grade1):
    """heldout_mid_student gets 9 of 17, the pass mark: one reason, 'borderline'; the judge lifts it."""
    result = grade1(ANSWERS / "heldout_mid_student")
    check = next(c for c in result.checks if c.name == "test_grade_is_clear_cut")
    assert result.score == 9 and check.status == "failed"
    assert check.details["confidence"] == 0.5
    # one reason only: the error model of 061526e also quoted a correct sentence of this answer ("one head can only pay
    # attention to one thing at a time ..."); the model fitted on more dev data (2026-12-07) no longer does
    assert check.details["needs_review"] == ["borderline total 9/17: within 1 of the pass mark 9"]
    assert result.needs_review == check.details["needs_review"]
    clear = grade1(ROOT / "solutions" / "exercise1")
    check = next(c for c in clear.checks if c.name == "test_grade_is_clear_cut")
    assert check.status == "passed" and check.details["confidence"] == 1.0 and clear.needs_review == []


def test_a_misconception_on_a_question_with_earned_concepts_is_contradictory():
    a = _assess((ANSWERS / "misconception_mlp_mixes" / "answer.md").read_text(encoding="utf-8"))
    assert a.misconceptions["mlp_mixes_tokens"].found
    assert [r for r in a.needs_review if r.startswith("contradiction")] == [
        "contradiction: question 2 earns points for 3 concepts but also says that the MLP mixes information between "
        "tokens"]
    assert a.confidence == pytest.approx(0.5)


def test_a_concept_earned_and_denied_elsewhere_is_contradictory():
    denied = SOLUTION.replace("## 2. The transformer block around it",
                              "Then again, the heads do not run in parallel.\n\n## 2. The transformer block around it")
    a = _assess(denied)
    assert a.lines["heads_parallel"].earned
    # the concept as the student reads it in the report, not the rubric's line id
    assert "contradiction: the concept \"Several attention heads run in parallel, all on the same tokens\" is earned, " \
           "but another sentence denies it: \"Then again, the heads do not run in parallel.\"" in a.needs_review
    assert a.confidence == pytest.approx(0.5)
    # the sentence that earned it is not its own denial, and a denied *misconception* is no contradiction
    assert not [r for r in _assess(SOLUTION).needs_review if r.startswith("contradiction")]


@pytest.mark.parametrize("sentence", [
    # the negation is of another piece than the predicate: the heads are said to run in parallel
    "In practice the code does not loop over the heads: it reshapes the tensors once, so the heads really are "
    "parallel.",
    # about the model without a part, or the other way: a contrapositive, not a denial
    "Models put a layer norm before each sublayer, since otherwise the stream would never be normalised.",
    "In a no-residual stack the heads do not run in parallel with a shortcut either.",
])
def test_a_sentence_that_only_seems_to_deny_an_earned_concept_is_no_contradiction(sentence):
    text = SOLUTION.replace("## 3.", f"{sentence}\n\n## 3.", 1)
    assert not [r for r in _assess(text).needs_review if r.startswith("contradiction")], sentence


def test_an_off_topic_answer_is_routed_to_a_person():
    a = _assess((ANSWERS / "off_topic_cnn" / "answer.md").read_text(encoding="utf-8"))
    assert [r for r in a.needs_review if r.startswith("off-topic: ")] and a.confidence == pytest.approx(0.4)


def test_a_very_short_answer_is_graded_by_its_length_rule_not_routed_and_an_empty_one_is_not_either():
    # the README's rule (no misconception points under 100 words) decides a short answer: nothing is uncertain
    short = _assess((ANSWERS / "very_short" / "answer.md").read_text(encoding="utf-8"))
    assert short.total > 0 and short.words < RUBRIC.min_words
    assert not [r for r in short.needs_review if "short" in r]
    todo = _assess((ANSWERS / "skeleton_todo" / "answer.md").read_text(encoding="utf-8"))
    assert (todo.total, todo.needs_review, todo.confidence) == (0, [], 1.0)


def test_nonsense_mixing_the_lessons_terms_with_unrelated_things_is_routed():
    farm = ("## 1\n\nOn the farm every head of cattle has its own weights, and the farmer runs the heads in "
            "parallel across the field. The tokens of the market are split between the cows and the pigs. "
            "Each cow concatenates its hay with the output projection of the barn.\n\n## 2\n\nThe MLP of the "
            "tractor works on each token of corn, with a residual of soup around the fence and a layer norm of "
            "ivy on the gate. The blocks of the barn are stacked by the farmer.\n\n## 3\n\nBERT the dog "
            "looks both ways at the gate; GPT the cat uses a causal mask of mud.\n")
    a = _assess(farm)
    assert [r for r in a.needs_review if r.startswith("nonsense?: ")] and a.confidence <= 0.4 + 1e-9
    assert not [r for r in _assess(SOLUTION).needs_review if r.startswith("nonsense?")]


def test_the_readme_states_the_numbers_of_the_form_checks():
    text = (EX1 / "README.md").read_text(encoding="utf-8")
    lo, hi = SPEC.suggested
    assert f"between {SPEC.min_words} and {SPEC.max_words} words (about {lo}–{hi} is right)" in text
    assert f"at least {SPEC.section_min_words} words of your own" in text
    assert f"every paragraph of {SPEC.paragraph_min_words} words or more reads as English" in text
    assert f"at least {SPEC.min_prose_share:.0%}" not in text and "at least half of your words" in text
    assert SPEC.min_prose_share == 0.5


def test_exercise4_explanation_written_is_the_section_with_own_text():
    ex4 = ROOT / "exercises" / "exercise4"
    spec, template = structure.load_spec(ex4 / "exercise.toml"), (ex4 / "skeleton" / "report.md").read_text()
    assert structure.unanswered(template, template, spec) == ["'## Explanation' has no answer of your own"]
    solution = (ROOT / "solutions" / "exercise4" / "report.md").read_text(encoding="utf-8")
    assert structure.unanswered(solution, template, spec) == []
    no_section = solution[:solution.index("## Explanation")]
    assert structure.unanswered(no_section, template, spec) == ["'## Explanation' is missing"]


def test_a_counterfactual_sentence_is_no_denial_of_the_concept():
    # exercise 4: "without residuals, the gradient can not ..." restates gradient_path, it does not deny it
    a = rubric.evaluate(EX4_RUBRIC, "The residual stream is an uninterrupted path: the gradient reaches the first "
                        "blocks directly through the additions. Without residuals, the gradients can not flow back "
                        "through the network easily, so every block must carry the whole signal.")
    assert a.lines["gradient_path"].earned
    assert not [r for r in a.needs_review if r.startswith("contradiction")]


def test_notes_in_arrows_are_not_sentences():
    notes = ("- no residuals -> every block carries everything -> stuck at the unigram level\n"
             "- post-norm -> the layer norm sits on the stream -> in the backward path of the gradient\n"
             "- the fix for post-norm -> a learning-rate warm-up -> as in the original Transformer paper\n")
    a = rubric.evaluate(EX4_RUBRIC, notes)
    assert a.prose_share == 0 and any(r.startswith("mostly keywords") for r in a.needs_review)
    sentence = "In the original Transformer the shapes go (B, T, d) -> (B, h, T, d_head) when the heads are split."
    assert rubric.evaluate(EX4_RUBRIC, sentence).prose_share == 1.0  # one arrow in a real sentence is fine


def test_a_short_nonsense_explanation_is_routed():
    garden = ("The residual stream in my garden carries rainwater along an uninterrupted path, so the gradient of the "
              "lawn stays gentle down to the first flower bed. Post-norm, the neighbour's fence, puts a layer norm of "
              "ivy in the gradient's way, and the cat falls off it at a high learning rate.")
    a = rubric.evaluate(EX4_RUBRIC, garden)
    assert [r for r in a.needs_review if r.startswith("nonsense?: ")]
    solution = (ROOT / "solutions" / "exercise4" / "report.md").read_text(encoding="utf-8")
    assert not [r for r in rubric.evaluate(EX4_RUBRIC, solution.split("## Explanation", 1)[1]).needs_review
                if r.startswith("nonsense?")]
