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
#: "the explanation I gave:", "below is my own:", "she got this from me:", "Xiong et al. (2020) explain it like this:",
#: or one after the source's answer was set aside ("It got the post-norm part wrong, so here is the corrected answer.").
_NOT_A_SOURCES_ANSWER = re.compile(
    r"\b(?:i|we) (?:\w+ )?(?:told|tell|gave|give|wrote|write|said|say|answered|explained|replied|added)\b|"
    r"\bmy (?:own|answer|explanation|reply|words|version|comment|\w+ paragraph)\b|\bmine\b|\bfrom me\b|\bet al\b|"
    r"\(\d{4}\)|\b(?:paper|lecture|lesson|slides|textbook|book|article)\b|"
    r"\b(?:corrected|correct version|settled on|came up with|did not help|was no help)\b")
#: The source as the speaker of the quote: "ChatGPT answered:", "this is what the assistant wrote:" (a few words
#: between), or the source's answer: "ChatGPT's answer:".
_SPEAKS = re.compile(rf"{cues.SOURCE.pattern}(?:\s+\S+){{0,4}}?\s+(?:{cues.SAYING})\b|"
                     rf"{cues.SOURCE.pattern}'s (?:answer|reply|response|output)\b")
#: The source's own pronoun in a sentence that opens its quote ("Its answer:", "This is what it wrote:"), after a
#: or in a sentence that asked the source ("I asked ChatGPT."; not "I did not use ChatGPT.", "I never asked it").
_ITS = re.compile(r"\b(?:it|its)\b")
_ASKED = re.compile(rf"(?<!never )(?<!not )\b(?:asked|used|consulted|tried|queried|prompted|put (?:the|my|this|that) "
                    rf"(?:question|prompt) to)\b(?:\s+\S+){{0,3}}?\s+(?:{cues.SOURCE.pattern}|\b(?:perplexity|le chat)\b)|"
                    rf"{cues.SOURCE.pattern} helped (?:me|us)\b")
#: A friend's or a classmate's turn: a person asking, whose turn is only its own paragraph.
_PERSON_SOURCE = re.compile(r"(?:the |my )?(?:friend|classmate|roommate)\b")
#: A sentence ending in a full stop that introduces what follows: "Below is what came out.", "Here is its answer."
_INTRODUCES = re.compile(r"\b(?:below|following|follows|here is|here's|here are|this is what|this was|this is its|"
                         r"as follows|underneath)\b")
#: What the source gave, in a sentence after one that asked it: "Below is what came out.", "Here is the output:".
_OUTCOME = re.compile(r"\bwhat (?:came out|came back|i got(?: back)?|we got(?: back)?|was returned)\b|"
                      r"\bits (?:result|output|reply|response|answer|explanation)\b|\bthe (?:reply|output) follows\b")


def reported(units_: list[Unit]) -> list[bool]:
    """For each unit, whether it is another speaker's words that the student reports.

    - A transcript turn whose label names a chatbot or a friend ("ChatGPT: ...", "**AI:** ...", "ChatGPT said:" on a
      line of its own), up to the next label: the rest of its paragraph, and the paragraphs after it in the same
      section when the next turn is a person's ("Me:", "You said:", another chatbot's) or when the label stood alone
      on its line (it heads what follows, to the end of the section). A label that names no speaker ("Note:", "In
      short:") ends the turn and leaves the paragraphs before it to the student. A chat that ends on the chatbot
      leaves the paragraphs after its last turn to the student: they are as often the student's own answer.
    - A blockquote ("> ...", or HTML's ``<blockquote>``) or a fence right after a sentence that has such a source
      speak and ends with ":" ("This is what ChatGPT answered:", "I asked ChatGPT. / Its answer:") or introduces
      what follows ("I asked ChatGPT. Below is what came out."): every quoted unit up to the first unquoted one; not
      a quote of the student's own words ("I told her:", "below is my own:") or of a paper.
    - The sentences inside quotation marks that such a sentence opens ('ChatGPT answered: "Each head ... They are
      concatenated."'), up to the closing mark in the same paragraph (with none, the open mark is a typo, or closes
      where the sentence splitter dropped it: the student keeps the words).

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
        other = cues.OTHER_SPEAKER.match(u.norm) or cues.OTHER_SPEAKER_ALONE.match(u.norm)
        label = other or cues.SPEAKER.match(u.norm) or cues.PERSON.match(u.norm)
        if label:
            speaker = (label.group(1) if label.groups() else label.group(0)).strip().rstrip(":").strip()
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
        before = units_[i - 1].norm if i else ""
        if u.quoted or _NOT_A_SOURCES_ANSWER.search(u.norm) or not _source_speaks(u.norm, before):
            continue
        ending = u.norm.rstrip()
        j = i + 1
        if ending.endswith(":") or ending.endswith(".") and _INTRODUCES.search(u.norm):
            while j < len(units_) and units_[j].quoted:  # a blockquote or a fence under the opener
                out[j] = True
                j += 1
        speaks = _SPEAKS.search(u.norm) or cues.OTHER_SPEAKER.match(u.norm) or _ASKED.search(u.norm)
        if u.norm.count('"', speaks.end() if speaks else 0) % 2:  # a quotation mark opened and not closed here
            close = next((k for k in range(j, len(units_)) if units_[k].block == u.block
                          and units_[k].norm.count('"') % 2), None)
            if close is not None:  # the quoted sentences up to the closing mark (none found: a typo, not a quote)
                for k in range(i, close + 1):
                    out[k] = True
    return out


def _source_speaks(norm: str, before: str) -> bool:
    """Whether the sentence ``norm`` (after the sentence ``before``) has a source speak: "ChatGPT answered:", or
    "Its answer:" / "Below is what came out." after "I asked ChatGPT." (normalised)."""
    if _SPEAKS.search(norm) or cues.OTHER_SPEAKER.match(norm):
        return True
    asked_here = _ASKED.search(norm)
    if not (asked_here or _ASKED.search(before)):
        return False
    rest = norm[asked_here.end():] if asked_here else norm
    return bool(cues.REPORTING.search(rest) and _ITS.search(rest) or _OUTCOME.search(rest))
