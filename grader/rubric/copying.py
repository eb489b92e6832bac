"""Step 5, copying: how much of an answer is found in a copy source."""
from __future__ import annotations

from functools import lru_cache

from .read import blocks, normalise, words


def shingles(text: str, n: int) -> set[tuple[str, ...]]:
    """The set of ``n``-word sequences of a normalised text."""
    toks = words(text)
    return {tuple(toks[i:i + n]) for i in range(len(toks) - n + 1)}


def copy_overlap(body: str, sources: dict[str, str], n: int) -> tuple[float, str]:
    """Largest share of the answer's ``n``-word phrases found in one source, and that source's name.

    Answers with fewer than 10 phrases are too short to call copied (0.0 is returned).
    """
    mine = shingles(body, n)
    if len(mine) < 10:
        return 0.0, ""
    best, name = 0.0, ""
    for source, text in sorted(sources.items()):
        theirs = _source_shingles(text, n)
        share = len(mine & theirs) / len(mine)
        if share > best:
            best, name = share, source
    return best, name


@lru_cache(maxsize=16)
def _source_shingles(text: str, n: int) -> frozenset:
    blocks_, _ = blocks(text)
    return frozenset(shingles(" ".join(normalise(b.text) for b in blocks_), n))

