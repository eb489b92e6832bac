"""An answer written as another kind of text (grader/rubric/genre.py): a genre's conventions plus words foreign to
the lesson raise a review flag; a genuine letter, talk or informal post about the model does not."""
import subprocess
import sys

import pytest
from conftest import ROOT, ex1_answer as ex1

from grader import rubric
from grader.rubric import genre

R1 = rubric.load(ROOT / "exercises" / "exercise1" / "rubric.toml")
R4 = rubric.load(ROOT / "exercises" / "exercise4" / "rubric.toml")

CONTENT_1 = ("Several heads run in parallel on the same tokens, and each head has its own query, key and value "
             "projections, so one head can link a pronoun to its noun while another follows the previous token. Each "
             "head works in d_model / h dimensions, 64 of 512, so all heads together cost about one full-width head. "
             "Their outputs are concatenated and mixed by the output projection W_O.")
CONTENT_2 = ("The MLP works on each token on its own with the same weights at every position. Residual connections run "
             "around attention and the MLP, with a layer norm before each, and the blocks are stacked.")
CONTENT_3 = "BERT attends in both directions; GPT uses a causal mask, so a token sees only earlier tokens."

#: A retirement speech that tells the lesson through the retiring colleague (a genre no labelled set has).
RETIREMENT = ex1(
    "Ladies and gentlemen, welcome to the canteen for the retirement of our colleague, the warehouse's eighth head. "
    + CONTENT_1 + " Like the forklift rota and the pension fund, the heads' outputs were always merged in the "
    "stockroom before the lorries left.",
    "The MLP is the canteen kettle of the block, serving each token its tea on its own. " + CONTENT_2 + " The "
    "caravan, the allotment and the fishing rods of the retiring head are stacked like blocks in the car park.",
    CONTENT_3 + " Please raise your glasses to the eighth head, its allotment and its pension.")

#: A genuine email to a classmate: a letter's form around an explanation of the model.
EMAIL = ex1(
    "Dear Priya,\n\nyou asked what I took from the lecture, so here it is. " + CONTENT_1,
    CONTENT_2 + " I think this is the part the lecturer stressed most.",
    CONTENT_3 + "\n\nBest wishes,\nTom")


def _review(text: str, rub=R1) -> list[str]:
    return [r for r in rubric.evaluate(rub, text).needs_review if "another kind of text" in r]


@pytest.mark.parametrize("text, name", [
    ("Dear Hiring Manager,\nI write to apply.", "a letter's salutation"),
    ("It was a pleasure.\n\nYours sincerely,\nHead 3", "a letter's sign-off"),
    ("Brothers and sisters, the heads are many.", "a speech's formulas"),
    ("Please raise your glasses to the couple.", "a speech's formulas"),
    ("FOR IMMEDIATE RELEASE\nAttendCo ships heads.", "an advert's or announcement's formulas"),
    ("Use code HEADS for 20% off.", "an advert's or announcement's formulas"),
    ("heads are wild lol", "social media's marks"),
    ("Learned so much today #attention #growth", "social media's marks"),
    ("Once upon a time there were eight heads.", "a story's formulas"),
    ("SECTION 4 \u2014 HEAD REMOVAL\nDisconnect the battery.", "a formal document's layout"),
    ("Clause 2. Each party keeps its own keys.", "a formal document's layout"),
    ("I am an attention head in the fourth layer.", "a model part speaking or spoken to"),
    ("My dearest Residual,\nyou carry my gradient.", "a model part speaking or spoken to"),
    ("WEEK 3 \u2014 HEAD DAY (upper body)\nSquats.", "a formal document's layout"),  # a number, a parenthesis
    ("Monday: heads.\nTuesday: the MLP.", "lines labelled by foreign words"),
    ("**Ingredients:** eight heads.\n**Oven:** hot.", "lines labelled by foreign words"),
    ("1. Monday: heads.\n2. *Tuesday* (week 3): the MLP.", "lines labelled by foreign words"),
    ("3.5/5 stars. The heads are concatenated nicely.", "a review's formulas"),
    ("Each head has its own keys. Would definitely buy again.", "a review's formulas"),
    ("Rovers 2, Athletic 0. The heads ran in parallel.", "a match report's formulas"),
    ("Player of the match: the output projection.", "a match report's formulas"),
    ("The heads were concatenated just before the final whistle.", "a match report's formulas"),
    ("Attention pie (serves six). Slice d_model into heads.", "a recipe's formulas"),
    ("Ingredients: eight heads, one W_O. Method: concatenate.", "a recipe's formulas"),
    ("Stir in 200 g of W_O, then season to taste.", "a recipe's formulas"),
])
def test_each_convention_is_found_by_name(text, name):
    assert name in genre.conventions(text)


@pytest.mark.parametrize("text", [
    "# 1. MULTI-HEAD ATTENTION\n\nEach head has its own projections.",  # a heading is the exercise's, not a layout
    "The MLP and the FFN are the same thing; GPT and BERT differ in the mask.",  # acronyms are no title line
    "At the end of the layer the heads are concatenated. The end.",  # "the end" only as a line of its own
    "I was sure the model would learn, but the run stayed at the unigram level.",  # "I" is the student, not a part
    "Each head is a reader; the analogy says nothing about who assigns the roles.",
    "Heads: each has its own projections.\nMLP: per token.\nLayer norm - before each sub-layer.",  # lesson words
    "Tom\u00e1s: what is a head?\nMe: a head has its own projections.\nTom\u00e1s: and W_O?",  # one foreign label
    "Step 1: project. Step 2: split into heads.\nNote: d_head = 64.",
    # a red team (2026-12-06): a report's parts, its own titles, asides set off by dashes, hard-wrapped prose
    "Observation: the loss is 3.29.\nHypothesis: no path back.\nConclusion: only letter frequencies.",
    "Claim: no path.\nEvidence: 3.291.\nReasoning: the gradient fades.\nTakeaway: use residuals.\nCaveat: one seed.",
    "RUN 2: NO RESIDUALS (3.291)\n\nThe gradient fades.\n\nWHY POST-NORM FAILS (lr = 1.5e-2, no warm-up)",
    "In hindsight \u2014 after a whole evening \u2014 the run stayed at U.\nSadly for my wallet \u2014 a pizza \u2014 it failed.",
    "the output replaces its input. The picture I keep coming back to is from my\nsummer in a bakery: every loaf\n"
    "is worth: imagine a check at every counter.",
    # the words of those formulas in an explanation of the model
    "With 8 heads you get eight views for the price of one full-width head.",
    "The output projection serves as the mixer; W_O serves all heads at once.",
    "Model 12, layer 3: head 5 attends to the previous token.",  # a run's name and numbers, no score line
    "The method: split d_model into n_heads pieces. The kick of the loss at step 40 is the warm-up ending.",
    "Each run got three stars in my table: 3.29, 2.41 and 3.30.",
    # a review of 2026-12-07: a report's own parts, a score of configurations, a training run told as a match
    "Method: I reran all three configurations with the same seed.",
    "Layer 4, Head 11 puts nearly all its weight on the previous token.",
    "Pre-Norm 4, Post-Norm 1 was the final count after five seeds.",
    "Exercise 4, Question 2.",
    "The loss looked healthy until roughly half-time, then it shot up.",
    "Warm-up is like when you preheat the pan before the eggs go in.",
    "Post-norm without warm-up: would not recommend again.",
])
def test_genuine_wordings_have_no_convention(text):
    assert genre.conventions(text) == {}


def test_foreign_share_counts_content_words_outside_the_lesson():
    plain = [rubric.normalise(CONTENT_1), rubric.normalise(CONTENT_2)]
    share, words = genre.foreign_share(plain)
    assert share < 0.05, words
    party = plain + [rubric.normalise("Gerald kept his fishing rods in the stockroom next to the forklift and the "
                                      "caravan, near the allotment, the flowerpots and his dog Biscuit.")]
    share_party, words_party = genre.foreign_share(party)
    assert share_party > 0.15
    assert {"fishing", "forklift", "caravan", "allotment", "flowerpots"} <= set(words_party)
    assert genre.foreign_share(plain[:1][:0]) == (0.0, [])  # too few words: not judged


def test_a_speech_about_something_else_is_flagged_and_keeps_its_points():
    reasons = _review(RETIREMENT)
    assert len(reasons) == 1 and "a speech's formulas" in reasons[0] and "forklift" in reasons[0], reasons
    plain = ex1(CONTENT_1, CONTENT_2, CONTENT_3)
    assert _review(plain) == []
    # review routing only: the frame's score is what its sentences earn
    assert rubric.evaluate(R1, RETIREMENT).total >= rubric.evaluate(R1, plain).total - 2


def test_a_review_or_match_formula_is_weak_a_joke_in_an_answer_needs_many_foreign_words():
    joke = ex1(CONTENT_1 + " Pre-norm gets 5/5 stars from me, my flatmate disagrees.", CONTENT_2, CONTENT_3)
    assert "a review's formulas" in genre.conventions(joke) and _review(joke) == []
    match = ex1("Rovers 2, Athletic 0. The striker was booked by the referee in the rain at the stadium after the "
                "corner kick, and the fans were singing in the stands with scarves and pies. " + CONTENT_1,
                "The groundsman rolled the pitch and the mascot danced by the dugout. " + CONTENT_2,
                CONTENT_3 + " The stewards opened the turnstiles and the supporters went to the pub.")
    reasons = _review(match)
    assert len(reasons) == 1 and "a match report's formulas" in reasons[0], reasons


def test_a_genuine_letter_about_the_model_is_not_flagged():
    assert set(genre.conventions(EMAIL)) == {"a letter's salutation", "a letter's sign-off"}
    assert _review(EMAIL) == []


def test_exercise4_love_letter_to_the_residual_is_flagged():
    text = ("My dearest Residual,\n\nsince the evening we met at the harbour café I could never learn without you. You "
            "are the uninterrupted path my gradient takes back to the first block; without you every block had to "
            "carry the whole signal, and I sank to the unigram level, guessing each character by its frequency. "
            "Post-norm, that jealous violinist, put a layer norm in the gradient's way at every block and I collapsed "
            "at the high learning rate until a warm-up calmed him, like the lighthouse keeper's lantern over the "
            "pier.\n\nForever yours, in pre-norm,\nYour Model")
    reasons = [r for r in rubric.evaluate(R4, text).needs_review if "another kind of text" in r]
    assert len(reasons) == 1 and "a model part speaking or spoken to" in reasons[0], reasons


def test_exercise4_told_as_a_cruise_itinerary_is_flagged_by_its_day_labels():
    text = ("Day one in port: residual connections are an uninterrupted path, so the gradient reaches the first "
            "block without crossing every sub-layer. Board by noon.\n"
            "Sea day: without residuals the model drifts to the unigram level, predicting characters by frequency "
            "alone. The buffet and the spa stay open until late.\n"
            "Excursion: post-norm puts a layer norm on the gradient path at every block, and at the high learning "
            "rate the run diverges. Bring sunscreen and a hat.\n"
            "Captain's dinner: pre-norm with warm-up trains at that rate. Jackets are required.\n"
            "Disembarkation: leave your cabin keys at the reception desk by nine.")
    assert {"sea day", "excursion", "captain's dinner"} <= set(genre.foreign_labels(text))
    reasons = [r for r in rubric.evaluate(R4, text).needs_review if "nonsense?" in r]
    assert len(reasons) == 1 and "lines labelled by foreign words" in reasons[0], reasons


def test_labels_inside_a_fenced_block_are_no_layout_of_the_answer():
    log = "```\nDevice: laptop\nHost: kitchen-box\nOwner: me\nWeather: sunny\n```"
    text = f"The run without residuals stays at U.\n\n{log}\n\nPost-norm fails at the high learning rate.\n"
    assert genre.conventions(text) == {}
    assert "lines labelled by foreign words" in genre.conventions(text.replace("```\n", "").replace("\n```", ""))


def test_a_title_line_of_many_short_tokens_is_read_at_once():
    # a code review found the title pattern backtracking exponentially on '#' tokens (2.4 s for 20 of them, 16 times
    # more for every 4 more); it now reads them once, so this returns at once and finds no title
    assert "a formal document's layout" not in genre.conventions("RUN 2 #" + " #3" * 40 + " x")
    assert "a formal document's layout" not in genre.conventions("PRE-LN VS POST-LN")  # a report's own title


def test_lesson_words_file_is_what_its_script_writes():
    done = subprocess.run([sys.executable, str(ROOT / "bench" / "lesson_words.py"), "--check"],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    assert len(genre.lesson_words()) > 500 and {"head", "token", "residu"} <= genre.lesson_words()
