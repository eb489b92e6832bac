"""Copying between the students of one batch: pairs of answers that share passages.

Every answer is prepared once (:func:`.copying.prepare`: content words, winnowed fingerprint); every pair
is compared through the fingerprints (an inverted index from fingerprint to answers, so a pair sharing none
costs nothing), and only pairs sharing at least :data:`MIN_SHARED` fingerprints are measured word by word
(:func:`.copying.compare`, both ways), and only when they share enough of the smaller fingerprint
(:data:`CANDIDATE`). A pair is listed when either student has at least ``peer_share`` of
their content words in passages shared with the other, and the passages hold at least ``peer_min_words``
content words (two short answers that say the same facts the usual way are not a copy).

Policy: peer similarity never lowers points (who copied whom is unknown); both students are flagged for
review, the pair is listed in the class overview with the shared passages side by side, and written to
``similar_answers.csv`` next to the gradebook.
"""
from __future__ import annotations

import csv
import io
from collections import Counter
from dataclasses import dataclass, field
from itertools import combinations
from pathlib import Path

from .copying import CopySettings, Passage, compare, plain_text, prepare

#: Fingerprints a pair must share before its words are compared (one shared phrase is the topic's) ...
MIN_SHARED = 2
#: ... and as a share of the smaller fingerprint, times ``peer_share``: fingerprints see only exact runs
#: of k content words, so a copy with words swapped shares fewer of them than of its words (measured:
#: the hand-swapped copy of tests/test_rubric_copying.py shares 0.4 of its fingerprints for 0.9 of its words).
CANDIDATE = 0.5


@dataclass
class Pair:
    """Two students whose answers share passages; ``share_a`` is the share of ``a``'s content words."""

    a: str
    b: str
    share_a: float
    share_b: float
    passages: list[Passage] = field(default_factory=list)  # answer = a's text, source = b's text
    text_a: str = ""
    text_b: str = ""

    @property
    def share(self) -> float:
        return max(self.share_a, self.share_b)


def similar_pairs(texts: dict[str, str], settings: CopySettings) -> list[Pair]:
    """Pairs of students (``texts``: student -> answer markdown) above ``settings.peer_share``, largest first.

    About 0.3 s for 500 answers of 300-700 words here (fingerprints once, compare fingerprint sets).
    """
    prepared = {s: prepare(plain_text(t), settings.k, settings.window) for s, t in sorted(texts.items()) if t.strip()}
    index: dict[int, list[str]] = {}
    for student, text in prepared.items():
        if len(text.tokens) >= settings.min_words:
            for h in text.fingerprint:
                index.setdefault(h, []).append(student)
    shared: Counter = Counter()
    for students in index.values():
        if len(students) > 1:
            shared.update(combinations(students, 2))
    pairs = []
    for (a, b), n in shared.items():
        smaller = min(len(prepared[a].fingerprint), len(prepared[b].fingerprint))
        if n < MIN_SHARED or n < CANDIDATE * settings.peer_share * smaller:
            continue
        share_a, passages = compare(prepared[a], prepared[b], settings)
        share_b, _ = compare(prepared[b], prepared[a], settings)
        if max(share_a, share_b) >= settings.peer_share and sum(x.words for x in passages) >= settings.peer_min_words:
            pairs.append(Pair(a, b, share_a, share_b, passages, prepared[a].plain, prepared[b].plain))
    return sorted(pairs, key=lambda p: (-p.share, p.a, p.b))


def review_reason(pair: Pair, student: str) -> str:
    """The needs-review reason a pair gives ``student`` (points are not changed)."""
    other, mine = (pair.b, pair.share_a) if student == pair.a else (pair.a, pair.share_b)
    return (f"similar to {other}'s answer ({mine:.0%} of the content words in shared passages): "
            "a person should compare them (points unchanged)")


def to_csv(pairs: list[Pair]) -> str:
    """``similar_answers.csv``: one row per pair, the shared passages joined by `` | ``."""
    fh = io.StringIO(newline="")
    writer = csv.writer(fh)
    writer.writerow(["student_a", "student_b", "share_a", "share_b", "passages", "passages_a", "passages_b"])
    for p in pairs:
        writer.writerow([p.a, p.b, f"{p.share_a:.3f}", f"{p.share_b:.3f}", len(p.passages),
                         " | ".join(_one_line(x.answer) for x in p.passages),
                         " | ".join(_one_line(x.source) for x in p.passages)])
    return fh.getvalue()


def for_overview(pairs: list[Pair], context: int = 80) -> list[dict]:
    """What the overview shows of each pair: both students, the shares, and each passage on both sides
    as (before, match, after) pieces of text, ``context`` characters around the match."""
    out = []
    for p in pairs:
        rows = [(_around(p.text_a, x.answer_start, x.answer_end, context),
                 _around(p.text_b, x.source_start, x.source_end, context)) for x in p.passages]
        out.append({"a": p.a, "b": p.b, "share_a": p.share_a, "share_b": p.share_b, "passages": rows})
    return out


def _around(text: str, start: int, end: int, context: int) -> tuple[str, str, str]:
    line_start = text.rfind("\n", 0, start) + 1
    line_end = text.find("\n", end)
    line_end = len(text) if line_end < 0 else line_end
    before = text[max(line_start, start - context):start]
    after = text[end:min(line_end, end + context)]
    return ("…" + before if start - context > line_start else before, text[start:end],
            after + "…" if end + context < line_end else after)


def _one_line(text: str) -> str:
    return " ".join(text.split())


def batch_pairs(exercise_root: Path, texts: dict[str, str]) -> list[Pair] | None:
    """The similar pairs of a batch of the exercise in ``exercise_root`` (None: the exercise has no rubric)."""
    path = Path(exercise_root) / "rubric.toml"
    if not path.is_file():
        return None
    from .files import load_cached  # files imports the judge, which imports every other step

    return similar_pairs(texts, load_cached(str(path.resolve())).copying)
