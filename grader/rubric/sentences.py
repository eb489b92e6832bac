"""Step 2, sentences: the blocks of an answer cut into sentence units (a bare keyword list into its items)."""
from __future__ import annotations

import re
from dataclasses import dataclass

from .spec import Rubric
from .read import Block, function_share, normalise, words

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


def units(rubric: Rubric, blocks_: list[Block]) -> tuple[list[Unit], int, bool]:
    """All sentence units, up to ``rubric.max_words`` words; also the total words and whether cut."""
    out: list[Unit] = []
    total = 0
    cut = False
    for b, block in enumerate(blocks_):
        for sentence in split_sentences(block.text):
            pieces = [sentence]
            toks = words(sentence)
            items = [p for p in re.split(r"\s*[,;|]\s*", sentence) if p.strip()]
            if (len(items) >= rubric.list_min_items
                    and function_share(toks) < rubric.list_max_function_share):
                pieces = items  # a bare keyword list: its items never co-occur
            for piece in pieces:
                n = len(words(normalise(piece)))
                if total + n > rubric.max_words:
                    cut = True
                    keep = rubric.max_words - total
                    if keep <= 0:
                        total += n
                        continue
                    piece = " ".join(piece.split()[:keep])
                total += n
                unit = _make_unit(rubric, piece, block.section, b, list_item=len(pieces) > 1)
                if unit.norm:
                    out.append(unit)
    return out, total, cut


#: An arrow of notes ("residuals -> gradient highway"); normalise turns "→" and "⇒" into these.
_ARROW = re.compile(r"(?:-|=)>")


def _make_unit(rubric: Rubric, display: str, section: int, block: int, list_item: bool = False) -> Unit:
    norm = normalise(display)
    toks = words(norm)
    prose = (not list_item and len(toks) >= rubric.sentence_min_words
             and function_share(toks) >= rubric.sentence_min_function_share
             and len(_ARROW.findall(norm)) < 2)  # "a -> b -> c" is notes in arrows, not a sentence
    return Unit(display=display, norm=norm, section=section, block=block, list_item=list_item, prose=prose)

