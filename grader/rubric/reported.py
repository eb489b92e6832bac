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
#: "the explanation I gave:", "Xiong et al. (2020) explain it like this:".
_NOT_A_SOURCES_ANSWER = re.compile(
    r"\b(?:i|we) (?:\w+ )?(?:told|tell|gave|give|wrote|write|said|say|answered|explained|replied)\b|"
    r"\bmy (?:answer|explanation|reply|words|version)\b|\bet al\b|\(\d{4}\)|"
    r"\b(?:paper|lecture|lesson|slides|textbook|book|article)\b")
#: The source's own pronoun in a sentence that opens its quote: "Its answer:", "This is what it wrote:".
_ITS = re.compile(r"\b(?:it|its|he|his|she|her|they|their)\b")


def reported(units_: list[Unit]) -> list[bool]:
    """For each unit, whether it is another speaker's words that the student reports.

    - A transcript turn whose label names a chatbot or a friend ("ChatGPT: ...", "**AI:** ...", "ChatGPT said:" on a
      line of its own), up to the next label: the rest of its paragraph, and the paragraphs after it in the same
      section when the next turn is a person's ("Me:", "You said:", another chatbot's) or when the label stood alone
      on its line (it heads what follows, to the end of the section). A label that names no speaker ("Note:", "In
      short:") ends the turn and leaves the paragraphs before it to the student.
    - A blockquote ("> ...") right after a sentence that ends with ":" and says such a source answered ("I asked an AI
      assistant. This is what it answered:", "I asked ChatGPT. / Its answer:"): every quoted unit up to the first
      unquoted one; not a quote of the student's own words ("I told her:") or of a paper.

    The student's own turns ("Me:", "Student:", "A:") and a self-made "Q: / A:" stay theirs.
    """
    out = [False] * len(units_)
    turn: tuple[str, bool, bool] | None = None  # the open turn: its speaker, another's?, its label alone on its line?
    pending: list[int] = []  # paragraphs after another speaker's turn: theirs if a person speaks next
    for i, u in enumerate(units_):
        new_block = i == 0 or u.block != units_[i - 1].block
        if i == 0 or u.section != units_[i - 1].section:
            turn, pending = None, []
        other = cues.OTHER_SPEAKER.match(u.norm)
        label = other or cues.SPEAKER.match(u.norm) or cues.PERSON.match(u.norm)
        if label:
            speaker = label.group(1) if label.groups() else label.group(0)
            if turn and pending and (other or cues.PERSON.match(u.norm)) and speaker != turn[0]:
                for j in pending:
                    out[j] = True
            turn, pending = (speaker, bool(other), bool(other) and not u.norm[label.end():].strip()), []
            out[i] = turn[1]
        elif turn and turn[2]:  # under a label on its own line
            out[i] = True
        elif new_block or pending:
            if turn and turn[1]:
                pending.append(i)
        else:  # the rest of a labelled paragraph
            out[i] = bool(turn and turn[1])
    for i, u in enumerate(units_):
        if u.quoted or not u.norm.rstrip().endswith(":") or not cues.REPORTING.search(u.norm) \
                or _NOT_A_SOURCES_ANSWER.search(u.norm):
            continue
        before = units_[i - 1].norm if i else ""
        if not (cues.SOURCE.search(u.norm) or cues.OTHER_SPEAKER.match(u.norm)
                or _ITS.search(u.norm) and cues.SOURCE.search(before)):
            continue
        j = i + 1
        while j < len(units_) and units_[j].quoted:
            out[j] = True
            j += 1
    return out
