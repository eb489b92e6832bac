"""Step 3b, reported speech: sentences that are someone else's words, which the student only reports.

A teacher reads a chatbot's turn in a pasted transcript, or a chatbot's answer quoted under "This is what it
answered:", as the chatbot's claim, not the student's (tests/prose/LABELLING.md: what is attributed to others earns
nothing, and a misconception said there costs nothing). The sentence-level cue does the same inside one sentence
("ChatGPT told me that ...", :data:`.cues.FRAMES`); this step reaches the sentences a speaker label or a quote
carries. Only sources with no authority count (:data:`.cues.SOURCE`, :data:`.cues.OTHER_SPEAKER`): a quote of the
paper or the lecture is cited, and stays the student's.
"""
from __future__ import annotations

from . import cues
from .sentences import Unit


def reported(units_: list[Unit]) -> list[bool]:
    """For each unit, whether it is another speaker's words that the student reports.

    - A transcript turn whose label names a chatbot or a friend ("ChatGPT: ...", "**AI:** ..."): its paragraph,
      and the unlabelled paragraphs after it in the same section when a later paragraph opens another speaker's
      turn (a long reply runs over several paragraphs; after the last turn, or between two turns of the same
      speaker, the student speaks).
    - A blockquote ("> ...") right after a sentence that ends with ":" and says such a source answered
      ("I asked an AI assistant. This is what it answered:"): every quoted unit up to the first unquoted one.

    The student's own turns ("Me:", "Student:", "A:") and a self-made "Q: / A:" stay theirs.
    """
    out = [False] * len(units_)
    turn: tuple[str, bool] | None = None  # the open turn: its speaker, and whether another speaker's
    pending: list[int] = []  # unlabelled paragraphs after another speaker's turn: theirs if a new speaker follows
    for i, u in enumerate(units_):
        new_block = i == 0 or u.block != units_[i - 1].block
        if i == 0 or u.section != units_[i - 1].section:
            turn, pending = None, []
        other = cues.OTHER_SPEAKER.match(u.norm)
        label = other or cues.SPEAKER.match(u.norm)
        if label:
            if turn and pending and label.group(1) != turn[0]:
                for j in pending:
                    out[j] = True
            turn, pending = (label.group(1), bool(other)), []
            out[i] = turn[1]
        elif new_block or pending:
            if turn and turn[1]:
                pending.append(i)
        else:  # the rest of a labelled paragraph
            out[i] = bool(turn and turn[1])
    for i, u in enumerate(units_):
        if u.quoted or not u.norm.rstrip().endswith(":") or not cues.REPORTING.search(u.norm):
            continue
        paragraph = " ".join(x.norm for x in units_ if x.block == u.block)
        if not cues.SOURCE.search(paragraph):
            continue
        j = i + 1
        while j < len(units_) and units_[j].quoted:
            out[j] = True
            j += 1
    return out
