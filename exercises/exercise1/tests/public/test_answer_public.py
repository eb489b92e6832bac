"""Exercise 1, public checks: the form of answer.md only (0 points each).

Each question answered, the length, sentences rather than keywords, English in every paragraph. What the
answer says is graded by the hidden checks, when the work is graded: one per concept of the rubric (with
the sentence that earned it) and one per misconception. The answer is read, never run: nothing starts a
sandbox (exercise.toml has ``module = ""``).
"""
import pytest

from exercises.exercise1.tests.checks import ANSWER, EXERCISE, FILE_GATE, SPEC, answer_path, answer_text, template_text
from grader.plugin import CheckFailure, quote, record
from grader.rubric import structure

LO, HI = SPEC.suggested


@pytest.mark.check(points=0, hint="Write your answer in answer.md, next to nothing else (start from skeleton/answer.md).")
def test_answer_file(submission):
    """answer.md is there."""
    path = answer_path(submission)
    if path.is_symlink():
        raise CheckFailure(f"{ANSWER} is a link; hand in the file itself.")
    if not path.is_file():
        raise CheckFailure(f"There is no {ANSWER} in your folder.")


@pytest.mark.check(points=0, depends=[FILE_GATE],
                   hint="Keep the three ## headings of skeleton/answer.md and write your own text under each "
                        "(the comments are prompts: they are not read).")
def test_questions_answered(submission, request):
    """Each of the three questions has an answer of your own under its ## heading."""
    missing = structure.unanswered(answer_text(submission), template_text(), SPEC)
    if missing:
        raise CheckFailure("Not answered: " + "; ".join(missing) + ".", details={"unanswered": missing})
    record(request, "All three questions have an answer.")


@pytest.mark.check(points=0, depends=[FILE_GATE],
                   hint=f"About {LO}-{HI} words in total is right; fewer than {SPEC.min_words} is too short to be "
                        f"read as an answer, and only the first {SPEC.max_words} are read.")
def test_answer_length(submission, request):
    """answer.md is neither far too short nor far too long."""
    n_words, _ = structure.count(answer_text(submission), SPEC)
    problem = structure.length_problem(n_words, SPEC)
    if problem:
        raise CheckFailure(problem[0].upper() + problem[1:] + ".", details={"words": n_words})
    record(request, f"{n_words} words.", {"words": n_words})


@pytest.mark.check(points=0, depends=[FILE_GATE],
                   hint="Explain in sentences (bullets are fine when each is a sentence): a bare term explains "
                        "nothing, and an answer that is mostly a list of keywords gets at most half marks.")
def test_written_in_sentences(submission, request):
    """answer.md is written in sentences, not as a list of keywords or fragments."""
    n_words, prose_share = structure.count(answer_text(submission), SPEC)
    details = {"words": n_words, "prose_share": round(prose_share, 3)}
    if n_words == 0:
        raise CheckFailure("There is nothing to read yet.", details=details)
    if n_words >= 10 and prose_share < SPEC.min_prose_share:
        raise CheckFailure(f"Mostly keywords or fragments: only {prose_share:.0%} of your words are in sentences "
                           f"(at least {SPEC.min_prose_share:.0%} should be).", details=details)
    record(request, f"{prose_share:.0%} of your words are in sentences.", details)


@pytest.mark.check(points=0, depends=[FILE_GATE],
                   hint="Write the answer in English (names, symbols and formulas in any script are fine).")
def test_written_in_english(submission, request):
    """Every paragraph of answer.md is in English."""
    foreign = structure.foreign_paragraphs(answer_text(submission), SPEC)
    if foreign:
        where = "; ".join(f"paragraph {i} ({quote(start + ' ...', 80)}) reads like {lang}"
                          for i, start, lang in foreign)
        raise CheckFailure(f"Not in English: {where}.", details={"paragraphs": [i for i, _, _ in foreign]})
    record(request, "Every paragraph reads as English.")


#: What a student's copy says about the content, which its checks do not grade.
CONTENT_LATER = ("not run in your copy: what answer.md says is graded when your work is graded (the rubric's "
                 "concepts, each with the sentence of yours that earned it, and its misconceptions)")


@pytest.mark.check(points=0, depends=[FILE_GATE])
def test_content_is_graded(submission, request):
    """The content of answer.md is graded by the rubric (the hidden checks)."""
    if not (EXERCISE / "rubric.toml").is_file():  # a student's bundle: the rubric stays with the judge
        pytest.skip(CONTENT_LATER)
    record(request, "Graded: see the concept and misconception checks.")
