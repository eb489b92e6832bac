"""Content words and winnowed fingerprints of a text: what :mod:`.copying` and :mod:`.peers` compare.

1. **Content words.** The text's words are folded (NFKC, case), stemmed (Snowball's English stemmer,
   the ``snowballstemmer`` package), common phrases and synonyms of this topic mapped to one word
   (:data:`SYNONYMS`: "glued together", "stitched" and "concatenated" all become ``concaten``), and
   function words dropped. Each kept word remembers its characters in the text, for display.
2. **Winnowing** (Schleimer, Wilkerson and Aiken, "Winnowing: local algorithms for document
   fingerprinting", SIGMOD 2003) over ``k``-grams of content words: every k-gram is hashed, and in each
   window of ``window`` consecutive hashes the smallest is kept as a fingerprint. Any shared run of at
   least ``window + k - 1`` content words shares a fingerprint; :attr:`Text.fingerprint` is what a batch
   compares between every pair (:mod:`grader.rubric.peers`).
"""
from __future__ import annotations

import re
import unicodedata
import zlib
from dataclasses import dataclass
from functools import lru_cache

import snowballstemmer

from .read import FUNCTION_WORDS, blocks
from .sentences import split_sentences

SYNONYMS: dict[str, tuple[str, ...]] = {
    "concatenate": ("concatenation", "join", "glue", "stitch", "combine", "merge", "put back together",
                    "put together", "chain", "append"),
    "parallel": ("simultaneous", "simultaneously", "at the same time", "concurrently", "concurrent",
                 "at once", "in parallel", "side by side", "independently"),
    "split": ("divide", "partition", "cut", "slice", "break up", "carve", "chop", "share out", "spread"),
    "each": ("every", "each one", "individual"),
    "learn": ("train", "trained", "learned", "learnt", "acquire", "discover"),
    "attend": ("attention", "look at", "focus", "pay attention", "look", "see", "consider"),
    "relation": ("relationship", "dependency", "pattern", "connection", "link", "association"),
    "project": ("projection", "linear layer", "linear map", "linear transformation", "weight matrix",
                "matrix", "matrices"),
    "mix": ("blend", "mixing", "recombine", "integrate", "fuse"),
    "cost": ("compute", "computation", "flops", "expense", "expensive", "cheap", "price"),
    "width": ("dimension", "dimensional", "dims", "size", "wide", "narrow"),
    "small": ("smaller", "narrower", "reduced", "lower", "little", "fewer"),
    "later": ("future", "subsequent", "following", "upcoming", "after", "right"),
    "earlier": ("previous", "preceding", "past", "prior", "before", "left", "already"),
    "bidirectional": ("both directions", "both sides", "two-way", "in both direction"),
    "causal": ("autoregressive", "unidirectional", "left-to-right", "one direction", "triangular"),
    "mask": ("hide", "block out", "hidden", "masked", "zero out", "blank out"),
    "mlp": ("feed-forward", "feed forward", "feedforward", "ffn", "fully connected", "fully-connected",
            "multilayer perceptron", "multi-layer perceptron", "perceptron"),
    "layernorm": ("layer norm", "layer normalization", "layer normalisation", "normalization",
                  "normalisation", "normalize", "normalise", "norm"),
    "residual": ("skip", "shortcut", "skip connection", "residual connection", "identity path"),
    "stack": ("pile", "layer", "one on top of another", "on top of each other", "repeat", "repeated"),
    "refine": ("improve", "build on", "polish", "update", "enrich", "sharpen"),
    "person": ("people", "member", "reader", "lawyer", "expert", "colleague", "specialist", "reviewer"),
    "document": ("contract", "text", "passage", "sequence", "sentence"),
    "token": ("word", "position"),
    "note": ("finding", "observation", "report", "summary", "notes"),
    "team": ("group", "committee", "crew", "panel"),
    "use": ("employ", "apply", "utilize", "utilise", "uses"),
    "produce": ("generate", "create", "yield", "give", "output", "result", "return", "emit"),
    "weight": ("parameter", "param"),
    "head": ("attention head",),
    "whole": ("entire", "full", "complete", "all"),
    "model": ("network", "transformer", "net"),
    "same": ("identical", "shared", "the same"),
}

_STEM = snowballstemmer.stemmer("english")
_PIECE = re.compile(r"[^\W_]+(?:_[^\W_]+)*")  # "multi-head" is two words, "d_model" one
#: Words that carry no content (the read step's function words, less the ones that change meaning).
STOP = (FUNCTION_WORDS - {"not", "no", "never", "only", "each", "every", "all", "same", "before",
                          "both", "other"}) | {"also", "like", "just", "e", "g", "i", "ie", "eg", "etc", "via"}


def _stem(word: str) -> str:
    return _STEM.stemWord(word)


@lru_cache(maxsize=1 << 16)
def stem(word: str) -> str:
    """The Snowball (English) stem of ``word`` after NFKC and case folding ("heads", "Head" -> "head")."""
    return _fold(word)


@lru_cache(maxsize=1 << 16)
def _fold(word: str) -> str:  # Snowball in pure Python takes ~50 us a word; a batch's vocabulary is small
    return _stem(unicodedata.normalize("NFKC", word).casefold())


def _build_tables() -> tuple[dict[tuple[str, ...], str], int]:
    table: dict[tuple[str, ...], str] = {}
    for canon, variants in SYNONYMS.items():
        target = _stem(canon)
        for phrase in (canon, *variants):
            words = _PIECE.findall(phrase.casefold())
            table.setdefault(tuple(_stem(w) for w in words), target)
            if len(words) == 1:  # the stemmer leaves some inflections apart ("glue" -> glue, "glued" -> glu)
                w = words[0]
                for form in (w + "s", w + "d", w + "ed", w + "ing", w.rstrip("e") + "ing", w + "es"):
                    table.setdefault((_stem(form),), target)
    return table, max(len(k) for k in table)


_PHRASES, _LONGEST = _build_tables()
_FIRSTS = frozenset(k[0] for k in _PHRASES if len(k) > 1)
_STOP_STEMS = frozenset(_stem(w) for w in STOP)


@dataclass(frozen=True)
class Token:
    """One content word: its canonical stem and its characters ``[start, end)`` in the text."""

    canon: str
    start: int
    end: int
    sentence: int


@dataclass(frozen=True)
class Text:
    """A text prepared for comparison: content words, k-gram hashes, winnowed fingerprint, sentences."""

    plain: str
    tokens: tuple[Token, ...]
    hashes: tuple[int, ...]  # hashes[i]: the k-gram starting at tokens[i]
    fingerprint: frozenset[int]  # the winnowed hashes, plus one hash per sentence's set of content words
    sentences: tuple[tuple[int, ...], ...]  # token indices of each sentence

    def sentence_set(self, s: int) -> frozenset[str]:
        return frozenset(self.tokens[i].canon for i in self.sentences[s])


def plain_text(markdown: str) -> str:
    """The prose of a markdown text: one line per paragraph or bullet, markup, headings and comments gone."""
    return "\n".join(b.text for b in blocks(markdown)[0])


def _hash(words: tuple[str, ...]) -> int:  # CRC-32: stable across processes, fast; a rare collision costs nothing
    return zlib.crc32(" ".join(words).encode())


@lru_cache(maxsize=2048)
def prepare(plain: str, k: int = 3, window: int = 4) -> Text:
    """Content words, k-gram hashes, winnowed fingerprint and sentences of ``plain`` (see the module doc)."""
    raw: list[tuple[str, int, int, int]] = []  # (stem, start, end, sentence)
    sentence = 0
    for line_start, line in _lines(plain):
        for piece in split_sentences(line):
            at = plain.find(piece, line_start)
            at = line_start if at < 0 else at
            for m in _PIECE.finditer(piece):
                raw.append((_fold(m.group()), at + m.start(), at + m.end(), sentence))
            sentence += 1
    tokens: list[Token] = []
    stems = [r[0] for r in raw]
    i = 0
    while i < len(raw):
        n = 1
        if stems[i] in _FIRSTS:  # the longest phrase of the table first, inside one sentence
            n = next((m for m in range(min(_LONGEST, len(raw) - i), 1, -1)
                      if tuple(stems[i:i + m]) in _PHRASES and raw[i][3] == raw[i + m - 1][3]), 1)
        canon = _PHRASES.get(tuple(stems[i:i + n]), stems[i])
        if n > 1 or (canon not in _STOP_STEMS and (len(canon) > 1 or canon.isdigit())):
            tokens.append(Token(canon, raw[i][1], raw[i + n - 1][2], raw[i][3]))
        i += n
    canons = [t.canon for t in tokens]
    hashes = tuple(_hash(tuple(canons[j:j + k])) for j in range(len(canons) - k + 1))
    by_sentence: dict[int, list[int]] = {}
    for j, t in enumerate(tokens):
        by_sentence.setdefault(t.sentence, []).append(j)
    sentences = tuple(tuple(v) for v in by_sentence.values())
    fingerprint = set(winnow(hashes, window))
    fingerprint |= {_hash(("#s", *sorted({canons[j] for j in s}))) for s in sentences if len(set(s)) >= 5}
    return Text(plain, tuple(tokens), hashes, frozenset(fingerprint), sentences)


def _lines(plain: str):
    at = 0
    for line in plain.split("\n"):
        yield at, line
        at += len(line) + 1


def winnow(hashes: tuple[int, ...] | list[int], window: int) -> list[int]:
    """Winnowing's fingerprints: the smallest hash of every window of ``window`` consecutive hashes
    (the rightmost one on a tie, each selected position once). Fewer hashes than a window: all of them."""
    if len(hashes) <= window:
        return list(dict.fromkeys(hashes))
    out, last = [], -1
    for start in range(len(hashes) - window + 1):
        win = hashes[start:start + window]
        low = min(win)
        pos = start + max(i for i, h in enumerate(win) if h == low)
        if pos != last:
            out.append(low)
            last = pos
    return out
