"""Step 2, sentences: the blocks of an answer cut into sentence units (a bare keyword list into its items)."""
from __future__ import annotations

import re
from dataclasses import dataclass

from .spec import Rubric
from .read import FUNCTION_WORDS, Block, function_share, normalise, words

_ABBREV = re.compile(r"(?:\b(?:e\.g|i\.e|etc|vs|al|fig|eq|approx|cf|resp|no|ca|viz|incl|mr|mrs|dr|prof|st|sec)|(?:^|\s)[a-z])\.$",
                     re.I)
_SENTENCE_END = re.compile(r"(?<=[.!?])[\"')\]]*\s+(?=\S)")


@dataclass
class Unit:
    """A sentence (or a list item): the text shown to people and the normalised text matched."""

    display: str
    norm: str
    section: int
    block: int
    list_item: bool = False
    prose: bool = False


def split_sentences(text: str) -> list[str]:
    """Sentences of one block: split after . ! ? unless it ends an abbreviation like "e.g."."""
    pieces, current = [], ""
    for piece in _SENTENCE_END.split(text):
        current = f"{current} {piece}".strip() if current else piece
        if not _ABBREV.search(current.rstrip("\"')]")):
            pieces.append(current)
            current = ""
    if current:
        pieces.append(current)
    return [p.strip() for p in pieces if p.strip()]


#: Characters read per word of ``max_words``: no real word is longer, so a 1 MB "word" is cut, not normalised.
CHARS_PER_WORD = 32


def units(rubric: Rubric, blocks_: list[Block]) -> tuple[list[Unit], int, bool]:
    """All sentence units, up to ``rubric.max_words`` words; also the total words and whether cut.

    Text past the cut is only counted (words of the raw text, :func:`.read.words`), never normalised; a sentence
    longer than ``CHARS_PER_WORD`` characters per word still to read is cut at a space first, so the work is
    bounded by ``max_words`` whatever the input (the total may then differ by a few words from a full count:
    "doesn't" counts one word raw, two normalised).
    """
    out: list[Unit] = []
    total = 0
    cut = False
    for b, block in enumerate(blocks_):
        for sentence in split_sentences(block.text):
            room = rubric.max_words - total
            if room <= 0:
                total += len(words(sentence))
                cut = cut or total > rubric.max_words
                continue
            rest = ""
            if len(sentence) > room * CHARS_PER_WORD:
                at = sentence.rfind(" ", 0, room * CHARS_PER_WORD)
                at = at if at > 0 else room * CHARS_PER_WORD
                sentence, rest = sentence[:at], sentence[at:]
                if re.match(r"\w", rest) and re.search(r"\w$", sentence):  # cut inside a word: counted once
                    rest = re.sub(r"^\w+", "", rest)
                cut = True
            pieces = [sentence]
            toks = words(sentence)
            items = [p for p in re.split(r"\s*[,;|]\s*", sentence) if p.strip()]
            if (len(items) >= rubric.list_min_items
                    and function_share(toks) < rubric.list_max_function_share):
                pieces = items  # a bare keyword list: its items never co-occur
            for piece in pieces:
                if total >= rubric.max_words:
                    total += len(words(piece))
                    cut = True
                    continue
                n = len(words(normalise(piece)))
                if total + n > rubric.max_words:
                    cut = True
                    keep = rubric.max_words - total
                    piece = " ".join(piece.split()[:keep])
                total += n
                unit = _make_unit(rubric, piece, block.section, b, list_item=len(pieces) > 1)
                if unit.norm:
                    out.append(unit)
            total += len(words(rest))  # what the character cut left unread
    return out, total, cut


#: An arrow of notes ("residuals -> gradient highway"); normalise turns "→" and "⇒" into these.
_ARROW = re.compile(r"(?:-|=)>")


#: Coordinating words that join keywords as well as clauses ("heads parallel and own query and concat W_O").
CONJUNCTIONS = frozenset({"and", "or", "so", "then", "plus", "nor"})


def sentence_share(tokens: list[str]) -> float:
    """Share of function words among ``tokens`` (0 for none), where coordinating conjunctions
    (:data:`CONJUNCTIONS`) count at most as often as the other function words: a conjunction joins phrases
    that have articles, prepositions or verbs of their own ("residual connections and layer norms wrap
    attention and the MLP": (1 + 1) / 10), not bare keywords ("heads parallel and own query key value and
    concat W_O and MLP per token": 0)."""
    if not tokens:
        return 0.0
    folded = [t.casefold() for t in tokens]
    joins = sum(t in CONJUNCTIONS for t in folded)
    others = sum(t in FUNCTION_WORDS and t not in CONJUNCTIONS for t in folded)
    return (others + min(joins, others)) / len(tokens)


def _make_unit(rubric: Rubric, display: str, section: int, block: int, list_item: bool = False) -> Unit:
    norm = normalise(display)
    toks = words(norm)
    prose = (not list_item and len(toks) >= rubric.sentence_min_words
             and sentence_share(toks) >= rubric.sentence_min_function_share
             and len(_ARROW.findall(norm)) < 2)  # "a -> b -> c" is notes in arrows, not a sentence
    return Unit(display=display, norm=norm, section=section, block=block, list_item=list_item, prose=prose)
