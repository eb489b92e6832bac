"""Reported speech (grader/rubric/reported.py): a chatbot's turn in a pasted transcript, or its answer quoted under
"This is what it answered:", is the chatbot's claim; it earns nothing, costs nothing and asks a person to look.
The student's own turns, a self-made "Q: / A:", and a quote of the paper stay the student's."""
import pytest
from conftest import ROOT

from grader import rubric
from grader.rubric.read import blocks
from grader.rubric.reported import reported
from grader.rubric.sentences import units

R4 = rubric.load(ROOT / "exercises" / "exercise4" / "rubric.toml")

NO_RESIDUAL = ("Without residual connections there is no direct path for the gradient back to the early blocks, so it "
               "shrinks through every layer and the first blocks barely learn. Each block also has to pass the whole "
               "signal on by itself. So the model only learns the character frequencies and stays at the unigram "
               "level U.")
POST_NORM = ("In post-norm the layer norm sits on the residual path, so the gradient has to go through every "
             "normalisation on its way back. The original Transformer used a learning-rate warm-up to get around "
             "this.")
ALL_LINES = {"gradient_path", "whole_signal", "unigram_level", "postnorm_in_gradient_path", "warmup"}


def earned(text):
    a = rubric.evaluate(R4, text)
    return {k for k, v in a.lines.items() if v.counted}, a


def flags(a):
    return [r for r in a.needs_review if r.startswith("reported:")]


def said(text):
    us = units(R4, blocks(text)[0])[0]
    return [(u.norm[:12], r) for u, r in zip(us, reported(us))]


def test_the_explanation_said_in_the_students_own_words_earns_everything():
    got, a = earned(f"{NO_RESIDUAL}\n\n{POST_NORM}")
    assert got == ALL_LINES and not flags(a)


@pytest.mark.parametrize("speaker", ["ChatGPT", "**ChatGPT:**", "AI", "Assistant", "Claude", "GPT-4o", "My friend"])
def test_a_chatbots_turns_in_a_transcript_earn_nothing_and_are_flagged(speaker):
    label = speaker if speaker.endswith("**") else f"{speaker}:"
    text = (f"Me: why does my model without residuals get stuck at 3.29?\n\n{label} {NO_RESIDUAL}\n\n"
            f"Me: and why does post-norm blow up at 1.5e-2?\n\n{label} {POST_NORM}\n\n"
            "Me: ok thanks, I'll hand that in.")
    got, a = earned(text)
    assert got == set() and a.total == 0
    assert flags(a) and "earn nothing" in flags(a)[0] and a.confidence == 0.5


def test_the_students_own_turns_in_a_transcript_still_earn():
    text = (f"ChatGPT: Why do you think the run without residuals stops at 3.29?\n\nMe: {NO_RESIDUAL}\n\n"
            f"ChatGPT: And post-norm?\n\nMe: {POST_NORM}")
    got, a = earned(text)
    assert got == ALL_LINES and not flags(a)


def test_turns_on_lines_of_one_paragraph_are_told_apart():
    text = f"AI: Post-norm is fine at any learning rate.\nMe: {NO_RESIDUAL}\nAI: Right.\nMe: {POST_NORM}"
    got, a = earned(text)
    assert got == ALL_LINES
    assert not a.misconceptions["postnorm_more_stable"].found  # the AI's error is not the student's


def test_a_self_made_question_and_answer_is_the_students_own():
    got, _ = earned(f"Q: What happens without residuals?\nA: {NO_RESIDUAL}\n\nQ: And post-norm?\nA: {POST_NORM}")
    assert got == ALL_LINES


def test_a_reply_over_several_paragraphs_is_the_speakers_until_the_next_turn():
    gradient, rest = NO_RESIDUAL.split(". ", 1)
    text = f"Me: why 3.29?\n\nChatGPT: {gradient}.\n\n{rest}\n\nMe: thanks.\n\n{POST_NORM}"
    assert [r for _, r in said(text)] == [False, True, True, True, False, False, False]
    got, _ = earned(text)
    assert got == {"postnorm_in_gradient_path", "warmup"}  # after the last turn the student speaks again


def test_a_paragraph_between_two_turns_of_the_same_speaker_is_not_theirs():
    text = f"Classmate: So why does it stop at 3.29?\n\n{NO_RESIDUAL}\n\nClassmate: And post-norm?\n\n{POST_NORM}"
    got, a = earned(text)
    assert got == ALL_LINES and not flags(a)  # a classmate who only asks: the answers are the student's


def test_a_chatbots_answer_quoted_under_what_it_answered_earns_nothing():
    quoted = "\n".join(f"> {p}" for p in (NO_RESIDUAL, ">", POST_NORM))
    text = (f"I was not sure about this part so I asked an AI assistant. This is what it answered:\n\n{quoted}\n\n"
            "It sounds plausible.")
    got, a = earned(text)
    assert got == set() and flags(a)


def test_a_quote_of_the_paper_is_cited_and_stays_the_students():
    text = (f"{NO_RESIDUAL}\n\nThe original paper says it plainly:\n\n> {POST_NORM}")
    got, a = earned(text)
    assert got == ALL_LINES and not flags(a)


def test_a_formula_fenced_after_the_students_own_sentence_is_theirs():
    text = f"{NO_RESIDUAL}\n\nThe schedule I used for the warm-up:\n\n```\n{POST_NORM}\n```"
    got, a = earned(text)
    assert got == ALL_LINES and not flags(a)


def test_a_quote_after_a_sentence_that_does_not_report_a_source_is_the_students():
    text = f"My summary:\n\n> {NO_RESIDUAL}\n\n{POST_NORM}"
    assert not any(r for _, r in said(text))


# Found by a red team (2026-12-06): chat copies the rule missed, and honest answers it took for reported speech.

@pytest.mark.parametrize("text", [
    f"You said:\n\nwhy 3.29?\n\nChatGPT said:\n\n{NO_RESIDUAL}\n\n{POST_NORM}\n\nYou said:\n\nthanks",  # chatgpt.com
    f"Grok: {NO_RESIDUAL} {POST_NORM}",
    f"ChatGPT (GPT-4o): {NO_RESIDUAL} {POST_NORM}",
    f"Claude 3.5 Sonnet: {NO_RESIDUAL} {POST_NORM}",
    f"I asked ChatGPT.\n\nIts answer:\n\n> {NO_RESIDUAL}\n>\n> {POST_NORM}",  # the source in the paragraph before
    f"I asked GPT-4, and this is what it wrote:\n\n> {NO_RESIDUAL}\n>\n> {POST_NORM}",
    f"I asked ChatGPT and this is what it told me:\n\n```\n{NO_RESIDUAL}\n{POST_NORM}\n```",  # a fence sets it apart
    f"I asked o3 about this. Its answer:\n\n> {NO_RESIDUAL}\n>\n> {POST_NORM}",
    f"Meta AI: {NO_RESIDUAL} {POST_NORM}",
    f"Qwen said:\n\n{NO_RESIDUAL} {POST_NORM}",
    # a third round (2026-12-06): an opener that ends in a full stop, quotation marks, HTML's blockquote
    f"I asked ChatGPT to explain the runs. Below is what came out.\n\n> {NO_RESIDUAL}\n>\n> {POST_NORM}",
    f"I asked ChatGPT to explain the runs. Here is its answer.\n\n> {NO_RESIDUAL}\n>\n> {POST_NORM}",
    f"I used Gemini for this. What came back:\n\n> {NO_RESIDUAL}\n>\n> {POST_NORM}",
    f'ChatGPT answered: "{NO_RESIDUAL} {POST_NORM}"',
    f"When I asked Claude, it replied: \u201c{NO_RESIDUAL} {POST_NORM}\u201d",
    f"I asked ChatGPT. Its answer:\n\n<blockquote>\n{NO_RESIDUAL}\n\n{POST_NORM}\n</blockquote>",
    # the third red team's: a bracketed or colon-less label, other openers
    f"[ChatGPT]: {NO_RESIDUAL} {POST_NORM}",
    f"**User**\n\nexplain my runs\n\n**ChatGPT**\n\n{NO_RESIDUAL} {POST_NORM}",
    f"I put the question to ChatGPT. The reply follows.\n\n> {NO_RESIDUAL}\n>\n> {POST_NORM}",
    f"I asked ChatGPT. This was its reply.\n\n> {NO_RESIDUAL}\n>\n> {POST_NORM}",
    f"ChatGPT helped me with this one. Its explanation, word for word:\n\n> {NO_RESIDUAL}\n>\n> {POST_NORM}",
    f"I asked Perplexity. Below is what came out.\n\n> {NO_RESIDUAL}\n>\n> {POST_NORM}",
    f"Me: explain my runs\nChatGPT: {NO_RESIDUAL}\n{POST_NORM}",  # turns on lines of one paragraph
    f"#### You:\n\nexplain my runs\n\n#### ChatGPT:\n\n{NO_RESIDUAL} {POST_NORM}",  # turns set as headings
])
def test_more_layouts_of_a_pasted_chat_earn_nothing(text):
    got, a = earned(text)
    assert got == set() and flags(a)


@pytest.mark.parametrize("text", [
    # a label that names no speaker ends the chatbot's turn and leaves the paragraphs before it to the student
    f"ChatGPT: It overfits.\n\n{NO_RESIDUAL}\n\n{POST_NORM}\n\nIn short: no clean path.",
    f"Friend: So why 3.29?\n\n{NO_RESIDUAL}\n\nFriend: And post-norm?\n\n{POST_NORM}\n\nBottom line: warm-up.",
    # the student's own words quoted to a friend, and a paper quoted on a classmate's advice
    f"My friend asked me why. I told her:\n\n> {NO_RESIDUAL}\n>\n> {POST_NORM}",
    f"{NO_RESIDUAL}\n\nA classmate pointed me to Xiong et al. (2020), which puts it like this:\n\n> {POST_NORM}",
    # a second red team: a measure named like a chatbot, the student's own words set apart, a denied or merely
    # mentioned source, a friend who only asks
    f"Perplexity: {NO_RESIDUAL} {POST_NORM}",
    f"A YouTube video got me started, but the explanation below is entirely my own:\n\n> {NO_RESIDUAL}\n>\n"
    f"> {POST_NORM}",
    f"My friend missed the lecture. She got this explanation from me:\n\n> {NO_RESIDUAL}\n>\n> {POST_NORM}",
    f"I did not use ChatGPT for this part. It explains itself:\n\n> {NO_RESIDUAL}\n>\n> {POST_NORM}",
    f"I added a comment to model.py that explains it:\n\n```\n{NO_RESIDUAL}\n{POST_NORM}\n```",
    f"Friend: Why does it stay at U?\n\n{NO_RESIDUAL} {POST_NORM}\n\nMe: That is all.",
    "GPT-4\n\n" + NO_RESIDUAL + "\n\n" + POST_NORM,  # a model named alone on a line is no chatbot's label
    # a code review of the third round: a chat that ends on the chatbot's short wrong answer, then the student's
    # own; a quote that closes mid-paragraph (the splitter drops its mark) and a later one; an unclosed <blockquote>;
    # a chatbot's answer the student calls wrong, then the student's own
    f"Me: Why does the model without residuals stay at U?\n\nChatGPT: Because the gradients explode in a deep "
    f"network.\n\n{NO_RESIDUAL}\n\n{POST_NORM}",
    f'My friend said: "Residuals add capacity." That is wrong.\n\n{NO_RESIDUAL}\n\n{POST_NORM}\n\nPre-norm keeps '
    f'what people call the "gradient highway." That is the whole story.',
    f"ChatGPT answered:\n<blockquote>It overfits.\n\n## My explanation\n\n{NO_RESIDUAL}\n\n{POST_NORM}",
    # the honest neighbours of the third round, and a third red team's: "Prompt:" is also an assignment's question
    # or a shell's, the student's correction after a chatbot's short turn, an answer set against the chatbot's, and
    # an opening quotation mark never closed (a typo)
    f"Prompt: Explain why the run without residuals ends where it does, and why post-norm fails.\n\nResponse: "
    f"{NO_RESIDUAL} {POST_NORM}",
    f"Prompt: python model.py\n\nOutput: prenorm 2.473, no-residual 3.291\n\n{NO_RESIDUAL}\n\n{POST_NORM}",
    f"Me: is the no-residual run overfitting?\n\nChatGPT: Yes, it is overfitting.\n\nThat is wrong, and the training "
    f"loss shows it. {NO_RESIDUAL}\n\n{POST_NORM}",
    f"Me: I think the no-residual run overfits.\n\nChatGPT: That's right, it overfits.\n\nActually no. {NO_RESIDUAL}"
    f"\n\n{POST_NORM}",
    f"Human: why 3.29?\n\nAI: overfitting.\n\nI did not trust that, so I checked the training loss myself.\n\n"
    f"{NO_RESIDUAL}\n\n{POST_NORM}",
    f"I asked ChatGPT first. It got the post-norm part wrong, so here is the corrected answer.\n\n> {NO_RESIDUAL}\n>\n"
    f"> {POST_NORM}",
    f"I tried ChatGPT, but it did not help, so below is the answer I settled on.\n\n> {NO_RESIDUAL}\n>\n> {POST_NORM}",
    f"I asked ChatGPT what \u201cpost-norm\u201d means and its answer was \u201clayer norm after the addition. That much was "
    f"right. {NO_RESIDUAL} {POST_NORM}",
    f"Question: why does it stop at 3.29?\n\nResponse: {NO_RESIDUAL} {POST_NORM}",  # no prompt: the student's own Q/A
    f"I asked ChatGPT to explain the runs, but it was wrong. Below is my own explanation.\n\n> {NO_RESIDUAL}\n>\n"
    f"> {POST_NORM}",
    f"I asked ChatGPT what a residual is. Here is what I understood.\n\n> {NO_RESIDUAL}\n>\n> {POST_NORM}",
    f'As ChatGPT put it, "post-norm is fragile". {NO_RESIDUAL} {POST_NORM}',  # the quote closes in its sentence
    f'ChatGPT said "it overfits", which is wrong. {NO_RESIDUAL} {POST_NORM}',
    f"I ran the script. Output:\n\n```\nloss 3.29\n```\n\n{NO_RESIDUAL} {POST_NORM}",
    f"Xiong et al. (2020) write:\n\n<blockquote>{POST_NORM}</blockquote>\n\n{NO_RESIDUAL}",
    f'The lecture said: "{NO_RESIDUAL}" {POST_NORM}',
    f"I asked ChatGPT first, but it said the model overfits. That is wrong.\n\n{NO_RESIDUAL}\n\n{POST_NORM}",
    f"Me: I think it overfits.\n\nChatGPT: It does not.\n\nMe: Right. {NO_RESIDUAL} {POST_NORM}",
])
def test_honest_answers_with_labels_or_quotes_keep_their_points(text):
    got, a = earned(text)
    assert got == ALL_LINES and not flags(a)


def test_a_chatbots_label_alone_heads_one_paragraph_when_no_one_speaks_after_it():
    # the student's own explanation after the bot's one-paragraph answer stays theirs
    text = f"ChatGPT said:\n\nIt overfits.\n\nWrong. {NO_RESIDUAL}\n\n{POST_NORM}"
    assert [r for _, r in said(text)] == [True, True] + [False] * 6
    assert earned(text)[0] == ALL_LINES


def test_a_star_sign_is_no_chatbot():
    assert not any(r for _, r in said(f"GEMINI (21 May - 20 June): {NO_RESIDUAL}"))
    assert all(r for _, r in said(f"Gemini 2.5 Pro: {NO_RESIDUAL}"))


def test_a_model_of_the_lesson_as_a_paragraph_label_is_no_chatbot():
    from conftest import ex1_answer

    r1 = rubric.load(ROOT / "exercises" / "exercise1" / "rubric.toml")
    q3 = ("BERT: every token attends to all the tokens, left and right.\n\nGPT-2: it uses a causal mask, so each token "
          "attends only to itself and the tokens before it.")
    a = rubric.evaluate(r1, ex1_answer("", "", q3))
    assert a.lines["gpt_causal"].earned and a.lines["bert_bidirectional"].earned


def test_a_point_said_only_in_the_chatbots_turn_is_named_as_such():
    text = f"Me: why does it stop at 3.29?\n\nChatGPT: {NO_RESIDUAL}\n\nMe: {POST_NORM}"
    got, a = earned(text)
    assert got == {"postnorm_in_gradient_path", "warmup"}
    assert a.lines["unigram_level"].reported_only.startswith("So the model only learns the character frequencies")
    assert a.lines["warmup"].reported_only == "" and a.lines["postnorm_in_gradient_path"].reported_only == ""
    assert any("3 sentences of your answer are someone else's words" in n for n in a.notes)
    # nothing reported: no such note, and a missing line is simply missing
    _, own = earned(POST_NORM)
    assert own.lines["unigram_level"].reported_only == "" and not own.notes


def test_an_answer_that_names_a_chatbot_as_its_source_asks_a_person():
    got, a = earned(f"{NO_RESIDUAL}\n\n{POST_NORM}\n\n(Source: ChatGPT, copied.)")
    assert got == ALL_LINES  # the words are not set apart: a person decides
    assert [r for r in a.needs_review if r.startswith("reported: the answer names a chatbot as its source")]
    _, own = earned(f"{NO_RESIDUAL}\n\n{POST_NORM}\n\nSources: the lesson and Xiong et al. (2020).")
    assert not flags(own)
