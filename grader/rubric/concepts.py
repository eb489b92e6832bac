"""Step 4, concepts: where a rubric line's (or a misconception's) evidence matches in the answer's sentences."""
from __future__ import annotations

import re
from dataclasses import dataclass

from .model import Evidence
from .sentences import Unit


_NEGATION = re.compile(r"\b(?:not|no|never|nor|neither|without|none|nobody|nothing|instead of|rather than)\b")
_FRAMING = re.compile(r"\b(?:misconceptions?|myths?|wrongly|mistaken(?:ly)?|mistakes?|incorrect(?:ly)?|false|untrue|"
                      r"tempting|one might think|people (?:often )?(?:think|say|believe)|contrary to|a common error|"
                      r"is wrong|are wrong|not true)\b")
_REFUTATION = re.compile(r"^(?:(?:but )?(?:this|that|it) is (?:wrong|false|incorrect|not (?:true|correct|right|how|so))|"
                         r"(?:they|it|this|that|he|she) (?:do|does|is|are) not\b|wrong|false|not so|no[,.!])")
_CLAUSE_BREAK = re.compile(r"[,;:()\u2014.!?]|\s-\s")


@dataclass
class Hit:
    """Where a piece of evidence matched: the sentence(s) and the span in the normalised text."""

    units: tuple[Unit, ...]
    start: int
    end: int

    @property
    def quote(self) -> str:
        return " ".join(u.display for u in self.units)


def _before_negated(text: str, start: int, n_words: int = 3) -> bool:
    """A negation among the ``n_words`` words before ``start``, within the same clause."""
    before = text[:start]
    cut = max((m.end() for m in _CLAUSE_BREAK.finditer(before)), default=0)
    window = " ".join(before[cut:].split()[-n_words:])
    return bool(_NEGATION.search(window))


def _candidates(units_: list[Unit], sentences: int):
    """Scopes to search: each unit, and with ``sentences=2`` each pair of neighbours in one block."""
    for u in units_:
        yield (u,), u.norm
    if sentences >= 2:  # single sentences first: the shortest quote wins; list items never pair up
        for u, v in zip(units_, units_[1:]):
            if v.block == u.block and not (u.list_item or v.list_item):
                yield (u, v), f"{u.norm} {v.norm}"


def _span_ok(ev: Evidence, text: str, spans: list[tuple[int, int]], strict_negation: bool) -> bool:
    start, end = min(s for s, _ in spans), max(e for _, e in spans)
    if any(p.search(text[start:end]) for p in ev.unless_near):
        return False
    if ev.negatable:
        if _before_negated(text, start):
            return False
        if strict_negation:
            if _NEGATION.search(text[start:end]):
                return False
        else:  # only the gaps between the patterns' matches
            ordered = sorted(spans)
            for (_, e1), (s2, _) in zip(ordered, ordered[1:]):
                if s2 > e1 and _NEGATION.search(text[e1:s2]):
                    return False
    return True


def _word_index(text: str, offset: int) -> int:
    return len(text[:offset].split())


def _said_of(ev: Evidence, text: str, at: int, previous: str) -> bool:
    """Whether the property at ``at`` is said of ``ev.about`` (nearest mention wins, see :class:`Evidence`)."""
    mentions = sorted([(m.start(), True) for m in ev.about.finditer(text)]
                      + [(m.start(), False) for m in (ev.rivals.finditer(text) if ev.rivals else ())])
    before = [is_about for pos, is_about in mentions if pos < at]
    if before:
        return before[-1]
    after = [is_about for pos, is_about in mentions if pos > at]
    if after:
        return after[0]
    prev = sorted([(m.start(), True) for m in ev.about.finditer(previous)]
                  + [(m.start(), False) for m in (ev.rivals.finditer(previous) if ev.rivals else ())])
    return bool(prev) and prev[-1][1]


def find(ev: Evidence, units_: list[Unit], *, strict_negation: bool = False) -> Hit | None:
    """The first place where ``ev`` matches, or None.

    Args:
        strict_negation: misconceptions use True: a negation anywhere in the matched span, a framing
            word in the sentence ("a common misconception is ...") or a refutation at the start of the
            next sentence ("That is wrong.") makes the statement a denial.
    """
    index = {id(u): i for i, u in enumerate(units_)}
    for scope, text in _candidates(units_, ev.sentences):
        if any(p.search(text) for p in ev.unless):
            continue
        per_pattern = [[(m.start(), m.end()) for m in p.finditer(text)] for p in ev.patterns]
        if not all(per_pattern):
            continue
        for combo in _combinations(per_pattern):
            if _overlap(combo):
                continue
            if ev.within:
                first = _word_index(text, min(s for s, _ in combo))
                last = _word_index(text, max(e for _, e in combo) - 1)
                if last - first > ev.within:
                    continue
            if not _span_ok(ev, text, list(combo), strict_negation):
                continue
            if ev.about is not None:
                i = index[id(scope[0])]
                previous = (units_[i - 1].norm if i > 0 and units_[i - 1].section == scope[0].section
                            and not scope[0].list_item and not units_[i - 1].list_item else "")
                if not _said_of(ev, text, combo[-1][0], previous):
                    continue
            if strict_negation and _denied(text, units_, index[id(scope[-1])]):
                continue
            return Hit(scope, min(s for s, _ in combo), max(e for _, e in combo))
    return None


def _combinations(per_pattern: list[list[tuple[int, int]]], limit: int = 2000):
    """Every choice of one match per pattern (bounded: answers are short)."""
    combos: list[tuple[tuple[int, int], ...]] = [()]
    for options in per_pattern:
        combos = [c + (o,) for c in combos for o in options][:limit]
    return combos


def _overlap(combo) -> bool:
    """Two patterns matched the same words (each pattern must be its own piece of evidence)."""
    ordered = sorted(combo)
    return any(s2 < e1 for (_, e1), (s2, _) in zip(ordered, ordered[1:]))


def _denied(text: str, units_: list[Unit], last: int) -> bool:
    if _FRAMING.search(text):
        return True
    nxt = units_[last + 1] if last + 1 < len(units_) else None
    return bool(nxt and nxt.block == units_[last].block and _REFUTATION.search(nxt.norm))

