"""Step 5, copying: how much of an answer is found in one copy source, and where.

Method (our own code; why not ``copydetect``: it fingerprints *code* tokenised by Pygments, with no stop
words, stemming or synonyms, and reads files, so a prose copy with words swapped or sentences reordered
slips past it, and its slices point into the raw text, not into content words):

1. **Content words.** The text's words are folded (NFKC, case), stemmed (Snowball's English stemmer,
   the ``snowballstemmer`` package), common phrases and synonyms of this topic mapped to one word
   (:data:`SYNONYMS`: "glued together", "stitched" and "concatenated" all become ``concaten``), and
   function words dropped. Each kept word remembers its characters in the text, for display.
2. **Winnowing** (Schleimer, Wilkerson and Aiken, "Winnowing: local algorithms for document
   fingerprinting", SIGMOD 2003) over ``k``-grams of content words: every k-gram is hashed, and in each
   window of ``window`` consecutive hashes the smallest is kept as a fingerprint. Any shared run of at
   least ``window + k - 1`` content words shares a fingerprint; :attr:`Text.fingerprint` is what a batch
   compares between every pair (:mod:`grader.rubric.peers`). Against one source all k-grams are compared.
3. **Sentence containment.** A sentence of the answer with at least ``sentence_min_words`` distinct
   content words counts as copied when at least ``containment`` of them are in one sentence (or two
   consecutive sentences) of the source: reordered clauses and swapped words outside the table.
4. **Share.** The share of the answer's content words inside matched passages, in [0, 1]; passages are
   kept as (answer span, source span) pairs of character offsets for display.

Points scale with the share (:meth:`CopySettings.factor`), no cliff: see ``[copying]`` in rubric.toml.
"""
from __future__ import annotations

import math
import re
import unicodedata
import zlib
from dataclasses import dataclass, field
from functools import lru_cache

import snowballstemmer

from .read import FUNCTION_WORDS, blocks
from .sentences import split_sentences

#: canonical word -> the words and phrases of this topic that mean the same (stemmed on import).
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
class CopySettings:
    """The ``[copying]`` table of a rubric (see its comments there); shares are of content words."""

    sources: tuple[str, ...] = ()
    rubric_source: bool = True
    k: int = 4
    window: int = 4
    sentence_min_words: int = 5
    containment: float = 0.8
    reverse: float = 0.6
    min_words: int = 20
    passage_min_words: int = 6
    free_share: float = 0.15
    zero_share: float = 0.85
    review: float = 0.2
    rubric_free_share: float = 0.5
    rubric_zero_share: float = 0.9
    rubric_review: float = 0.5
    peer_share: float = 0.4
    peer_min_words: int = 30

    @classmethod
    def from_table(cls, table: dict, where: str) -> CopySettings:
        """Read ``[copying]``; unknown keys are an error naming ``where`` (ValueError)."""
        known = set(cls.__dataclass_fields__)
        unknown = sorted(set(table) - known)
        if unknown:
            raise ValueError(f"{where}: [copying] has unknown keys {unknown} (known: {sorted(known)})")
        kw = {k: (tuple(v) if k == "sources" else type(getattr(cls, k))(v)) for k, v in table.items()}
        out = cls(**kw)
        if not 0 <= out.free_share < out.zero_share <= 1:
            raise ValueError(f"{where}: [copying] needs 0 <= free_share < zero_share <= 1")
        return out

    def factor(self, share: float, rubric: bool = False) -> float:
        """Share of the concept points kept: 1 up to ``free_share``, linear down to 0 at ``zero_share``
        (``rubric_free_share`` and ``rubric_zero_share`` for the rubric's own phrases)."""
        lo, hi = (self.rubric_free_share, self.rubric_zero_share) if rubric else (self.free_share, self.zero_share)
        if share <= lo:
            return 1.0
        if share >= hi:
            return 0.0
        return (hi - share) / (hi - lo)


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


@dataclass
class Passage:
    """A matched stretch: characters of the answer and of the source, and its content words."""

    answer_start: int
    answer_end: int
    source_start: int
    source_end: int
    words: int
    answer: str = ""
    source: str = ""


@dataclass
class Match:
    """The answer against its closest source: ``share`` of its content words in ``passages``."""

    share: float = 0.0
    source: str = ""
    passages: list[Passage] = field(default_factory=list)


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


def compare(a: Text, b: Text, settings: CopySettings) -> tuple[float, list[Passage]]:
    """Share of ``a``'s content words found in ``b``, and the passages (spans into ``a.plain`` and ``b.plain``).

    Answers with fewer than ``settings.min_words`` content words are too short to call copied (0.0).
    """
    n = len(a.tokens)
    if n < settings.min_words or not b.tokens:
        return 0.0, []
    pairs: dict[int, int] = {}  # token of a -> token of b it was matched to
    where: dict[int, list[int]] = {}
    for j, h in enumerate(b.hashes):
        where.setdefault(h, []).append(j)
    k = settings.k
    for i, h in enumerate(a.hashes):  # every shared k-gram (continuing the previous match where it can)
        starts = where.get(h)
        if not starts:
            continue
        prev = pairs.get(i - 1)
        j = next((s for s in starts if prev is not None and s == prev + 1), starts[0])
        for d in range(k):
            pairs.setdefault(i + d, j + d)
    if settings.containment <= 1:
        _match_sentences(a, b, settings, pairs)
    passages = [p for p in _passages(a, b, pairs) if p.words >= settings.passage_min_words]
    return min(sum(p.words for p in passages) / n, 1.0), passages


def _match_sentences(a: Text, b: Text, settings: CopySettings, pairs: dict[int, int]) -> None:
    """Add to ``pairs`` the words of ``a``'s sentences whose content words are mostly in one place of ``b``.

    A lone sentence said like the source is how a fact is usually said; a copy runs on: a sentence counts
    only next to another that matches (this way or by its k-grams, for at least half its words).
    """
    b_sets = [b.sentence_set(s) for s in range(len(b.sentences))]
    holding: dict[str, set[int]] = {}
    for t, words in enumerate(b_sets):
        for w in words:
            holding.setdefault(w, set()).add(t)
    found: dict[int, tuple[int, int]] = {}
    for s, idx in enumerate(a.sentences):
        mine = a.sentence_set(s)
        if len(mine) < settings.sentence_min_words or all(i in pairs for i in idx):
            continue
        best, best_t, best_w = 0.0, -1, 1
        near = set().union(*(holding.get(w, ()) for w in mine))
        for t in sorted(near | {t - 1 for t in near if t > 0}):  # sentences (or pairs) that hold some of its words
            for w in (1, 2):
                if t + w > len(b_sets):
                    continue
                theirs = b_sets[t] | b_sets[t + 1] if w == 2 else b_sets[t]
                shared = len(mine & theirs)
                if shared / len(mine) >= settings.containment and shared / len(theirs) >= settings.reverse:
                    score = shared / len(mine | theirs)
                    if score > best:
                        best, best_t, best_w = score, t, w
        if best_t >= 0:
            found[s] = (best_t, best_w)
    kgram = {s for s, idx in enumerate(a.sentences) if sum(i in pairs for i in idx) >= len(idx) / 2}
    for s, (best_t, best_w) in found.items():
        if not ({s - 1, s + 1} & (set(found) | kgram)):
            continue
        idx = a.sentences[s]
        span = b.sentences[best_t] + (b.sentences[best_t + 1] if best_w == 2 else ())
        first: dict[str, int] = {}
        for j in span:
            first.setdefault(b.tokens[j].canon, j)
        for i in idx:  # an unmatched word inside a matched sentence is part of the passage (-1: no partner)
            pairs.setdefault(i, first.get(a.tokens[i].canon, -1))


def _passages(a: Text, b: Text, pairs: dict[int, int], gap: int = 2) -> list[Passage]:
    """Runs of matched words of ``a`` (gaps of at most ``gap`` words inside a run) with the span of ``b``
    they were matched to."""
    out: list[Passage] = []
    run: list[int] = []
    for i in sorted(pairs):
        if run and (i - run[-1] > gap + 1 or a.tokens[i].sentence - a.tokens[run[-1]].sentence > 1
                    or "\n" in a.plain[a.tokens[run[-1]].end:a.tokens[i].start]):  # one paragraph each
            out.append(_passage(a, b, run, pairs))
            run = []
        run.append(i)
    if run:
        out.append(_passage(a, b, run, pairs))
    return out


def _passage(a: Text, b: Text, run: list[int], pairs: dict[int, int]) -> Passage:
    theirs = [pairs[i] for i in run if pairs[i] >= 0]
    lo, hi = (min(theirs), max(theirs)) if theirs else (0, -1)
    if theirs and hi - lo > 3 * len(run):  # scattered: keep the densest part, around the median
        mid = sorted(theirs)[len(theirs) // 2]
        near = [j for j in theirs if abs(j - mid) <= 2 * len(run)]
        lo, hi = min(near), max(near)
    a0, a1 = a.tokens[run[0]].start, a.tokens[run[-1]].end
    b0, b1 = (b.tokens[lo].start, b.tokens[hi].end) if theirs else (0, 0)
    return Passage(a0, a1, b0, b1, len(run), a.plain[a0:a1], b.plain[b0:b1])


def best_source(plain: str, sources: dict[str, str], settings: CopySettings) -> Match:
    """The source (name -> plain text) that holds the largest share of ``plain``'s content words."""
    mine = prepare(plain, settings.k, settings.window)
    best = Match()
    for name, text in sorted(sources.items()):
        share, passages = compare(mine, prepare(text, settings.k, settings.window), settings)
        if share > best.share:
            best = Match(share, name, passages)
    return best


def factor_budget(earned: float, factor: float) -> float:
    """Whole points of ``earned`` kept at ``factor`` (rounded to the nearest point, halves up)."""
    return math.floor(earned * factor + 0.5 + 1e-9)



@dataclass
class CopyVerdict:
    """What copying means for one answer: the closest source's :class:`Match`, the points' factor, and what
    to say: ``problem`` (from ``review`` on: not the student's own sentences), ``note`` (a smaller share
    that still lowers the points), ``review`` (the reason a person should read it)."""

    match: Match
    factor: float = 1.0
    problem: str = ""
    note: str = ""
    review: str = ""


def judge_copy(settings: CopySettings, plain: str, sources: dict[str, str], rubric_name: str = "the rubric"
               ) -> CopyVerdict:
    """Measure ``plain`` (an answer's prose, :func:`plain_text`) against ``sources`` (name -> markdown).

    The verdict is the source that costs the most points (then the largest share). The rubric's own phrases
    (``rubric_name``) state the facts in plain words, so a correct, concise answer shares up to about 45 %
    of its content words with them (tests/exercise1_answers): they have their own, higher thresholds.
    """
    verdict = CopyVerdict(Match())
    for name, text in sorted(sources.items()):
        match = best_source(plain, {name: plain_text(text)}, settings)
        factor = settings.factor(match.share, rubric=name == rubric_name)
        if (factor, -match.share) < (verdict.factor, -verdict.match.share):
            verdict = CopyVerdict(match, factor)
    match, factor = verdict.match, verdict.factor
    if factor >= 1.0:
        return verdict
    shown = "; ".join(f'"{_clip(p.answer)}"' for p in sorted(match.passages, key=lambda p: -p.words)[:2])
    said = (f"the answer is partly copied from {match.source}: {match.share:.0%} of its content words are in "
            f"passages found there (e.g. {shown}), so its concept points count {factor:.0%}")
    if match.share >= (settings.rubric_review if match.source == rubric_name else settings.review):
        verdict.problem = said
        verdict.review = f"copied from {match.source} ({match.share:.0%} of its content words)"
    else:
        verdict.note = said
    return verdict


def _clip(text: str, limit: int = 120) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[:limit - 1] + "…"


def rubric_text(rubric) -> str:
    """The rubric's own phrases as one source: every concept, misconception statement and hint, a line each."""
    strings = [x for line in rubric.lines for x in (line.concept, line.hint)]
    strings += [x for m in rubric.misconceptions for x in (m.statement, m.hint)]
    return "\n\n".join(strings)
