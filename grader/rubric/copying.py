"""Step 5, copying: how much of an answer is found in one copy source, and where.

Method (our own code; why not ``copydetect``: it fingerprints *code* tokenised by Pygments, with no stop
words, stemming or synonyms, and reads files, so a prose copy with words swapped or sentences reordered
slips past it, and its slices point into the raw text, not into content words):

1. content words and winnowed k-grams of both texts (:mod:`.fingerprint`); against one source every
   k-gram is compared, not only the fingerprints;
2. **sentence containment**: a sentence of the answer with at least ``sentence_min_words`` distinct
   content words counts as copied when at least ``containment`` of them are in one sentence (or two
   consecutive sentences) of the source, which is itself mostly made of them (``reverse``), and a
   neighbouring sentence matches too: reordered clauses and swapped words outside the synonym table;
3. **share**: the share of the answer's content words inside matched passages of at least
   ``passage_min_words`` words, in [0, 1]; passages are kept as (answer span, source span) pairs of
   character offsets, for display.

Points scale with the share (:meth:`CopySettings.factor`), no cliff: see ``[copying]`` in rubric.toml.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from .fingerprint import SYNONYMS, Text, Token, plain_text, prepare, winnow

__all__ = ["SYNONYMS", "CopySettings", "CopyVerdict", "Match", "Passage", "Text", "Token", "best_source", "compare",
           "judge_copy", "plain_text", "prepare", "rubric_text", "winnow"]


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
    said = (f"the answer is {'mostly' if match.share >= 0.5 else 'partly'} copied from {match.source}: {match.share:.0%} of its content words are in "
            f"passages found there (e.g. {shown}), so its points count {factor:.0%}")
    if match.share >= (settings.rubric_review if match.source == rubric_name else settings.review):
        verdict.review = f"copied from {match.source} ({match.share:.0%} of its content words)"
    if factor == 0.0:  # nothing of the writer's own counts: not an answer of their own
        verdict.problem = said
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
