"""Step 3b, reported speech: sentences that are someone else's words, which the student only reports.

A teacher reads a chatbot's turn in a pasted transcript, or a chatbot's answer quoted under "This is what it
answered:", as the chatbot's claim, not the student's (tests/prose/LABELLING.md: what is attributed to others earns
nothing, and a misconception said there costs nothing). The sentence-level cue does the same inside one sentence
("ChatGPT told me that ...", :data:`.cues.FRAMES`); this step reaches the sentences a speaker label or a quote
carries. Only sources with no authority count (:data:`.cues.SOURCE`, :data:`.cues.OTHER_SPEAKER`): a quote of the
paper or the lecture is cited, and stays the student's.
"""
from __future__ import annotations

import re

from . import cues
from .sentences import Unit


#: A sentence that opens a quote of the student's own words or of an authority, not a source's answer: "I told her:",
#: "the explanation I gave:", "below is my own:", "she got this from me:", "Xiong et al. (2020) explain it like this:".
_NOT_A_SOURCES_ANSWER = re.compile(
    r"\b(?:i|we) (?:\w+ )?(?:told|tell|gave|give|wrote|write|said|say|answered|explained|replied|added)\b|"
    r"\bmy (?:own|answer|explanation|reply|words|version|comment|\w+ paragraph)\b|\bmine\b|\bfrom me\b|\bet al\b|"
    r"\(\d{4}\)|\b(?:paper|lecture|lesson|slides|textbook|book|article)\b")
#: The source as the speaker of the quote: "ChatGPT answered:", "this is what the assistant wrote:" (a few words
#: between), or the source's answer: "ChatGPT's answer:".
_SPEAKS = re.compile(rf"{cues.SOURCE.pattern}(?:\s+\S+){{0,4}}?\s+(?:said|says|answered|answers|replied|replies|wrote|"
                     r"writes|told|tells|responded|responds|gave|gives|printed|generated|produced|suggested|came back "
                     r"with|puts it|put it)\b|" + cues.SOURCE.pattern + r"'s (?:answer|reply|response|output)\b")
#: The source's own pronoun in a sentence that opens its quote ("Its answer:", "This is what it wrote:"), after a
#: or in a sentence that asked the source ("I asked ChatGPT."; not "I did not use ChatGPT.", "I never asked it").
_ITS = re.compile(r"\b(?:it|its)\b")
_ASKED = re.compile(rf"(?<!never )(?<!not )\b(?:asked|used|consulted|tried|queried|prompted)\b(?:\s+\S+){{0,3}}?\s+"
                    rf"{cues.SOURCE.pattern}")
#: A friend's or a classmate's turn: a person asking, whose turn is only its own paragraph.
_PERSON_SOURCE = re.compile(r"(?:the |my )?(?:friend|classmate|roommate)\b")


def reported(units_: list[Unit]) -> list[bool]:
    """For each unit, whether it is another speaker's words that the student reports.

    - A transcript turn whose label names a chatbot or a friend ("ChatGPT: ...", "**AI:** ...", "ChatGPT said:" on a
      line of its own), up to the next label: the rest of its paragraph, and the paragraphs after it in the same
      section when the next turn is a person's ("Me:", "You said:", another chatbot's) or when the label stood alone
      on its line (it heads what follows, to the end of the section). A label that names no speaker ("Note:", "In
      short:") ends the turn and leaves the paragraphs before it to the student.
    - A blockquote ("> ...") or a fence right after a sentence that ends with ":" and has such a source speak ("This
      is what ChatGPT answered:", "I asked ChatGPT. / Its answer:"): every quoted unit up to the first unquoted one;
      not a quote of the student's own words ("I told her:", "below is my own:") or of a paper.

    The student's own turns ("Me:", "Student:", "A:") and a self-made "Q: / A:" stay theirs.
    """
    out = [False] * len(units_)
    turn: tuple[str, bool] | None = None  # the open turn: its speaker, and whether it is a chatbot's
    pending: list[int] = []  # paragraphs after a chatbot's turn: its own if a person speaks next
    headed = False  # a chatbot's label stood alone on its line: the next paragraph is its
    current = False  # the paragraph under way is another speaker's
    for i, u in enumerate(units_):
        new_block = i == 0 or u.block != units_[i - 1].block
        if i == 0 or u.section != units_[i - 1].section:
            turn, pending, headed, current = None, [], False, False
        other = cues.OTHER_SPEAKER.match(u.norm)
        label = other or cues.SPEAKER.match(u.norm) or cues.PERSON.match(u.norm)
        if label:
            speaker = label.group(1) if label.groups() else label.group(0)
            if turn and turn[1] and pending and (other or cues.PERSON.match(u.norm)) and speaker != turn[0]:
                for j in pending:
                    out[j] = True
            bot = bool(other) and not _PERSON_SOURCE.match(speaker)
            turn, pending, current = (speaker, bot), [], bool(other)
            headed = bot and not u.norm[label.end():].strip()
        elif new_block:
            current, headed = headed, False
            if not current and turn and turn[1]:  # a chatbot's reply may run on, up to the next person's turn
                pending.append(i)
        elif pending and units_[pending[-1]].block == u.block:
            pending.append(i)
        out[i] = out[i] or current
    for i, u in enumerate(units_):
        if u.quoted or not u.norm.rstrip().endswith(":") or not cues.REPORTING.search(u.norm) \
                or _NOT_A_SOURCES_ANSWER.search(u.norm):
            continue
        before = units_[i - 1].norm if i else ""
        if not (_SPEAKS.search(u.norm) or cues.OTHER_SPEAKER.match(u.norm)
                or _ITS.search(u.norm) and (_ASKED.search(before) or _ASKED.search(u.norm))):
            continue
        j = i + 1
        while j < len(units_) and units_[j].quoted:
            out[j] = True
            j += 1
    return out
