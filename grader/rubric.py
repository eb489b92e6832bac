"""Rubric grading of a written answer: transparent rules, no model, no network.

A rubric is a data file (``exercises/NAME/rubric.toml``) of *lines* (a concept worth points, the
evidence that earns it, the hint shown when it is missing) and *misconceptions* (statements that cost
their point when the answer makes them). :func:`evaluate` reads an answer in five small steps:

1. **read** the markdown: drop headings, HTML comments and markup, keep one block per paragraph or bullet;
2. **split** blocks into sentences (a comma-separated keyword list is split into its items);
3. **normalise** each sentence for matching (Unicode NFKC, case, quotes and dashes, LaTeX, contractions);
4. **match** every line's evidence inside one sentence (or a window of words, or two sentences), with
   negation handling ("the heads do *not* split the tokens" is a denial, not a misconception);
5. **judge** the whole answer: empty, far too short or too long, mostly a keyword list, copied from a
   sample answer, not English; cap copied and keyword answers at half marks; flag borderline totals.

Everything is deterministic and takes milliseconds. Each result names the sentence that earned a
point, so a student and an instructor can see why.

Pattern syntax (in ``rubric.toml``): Python regular expressions over the normalised, lower-case text,
with ``{name}`` replaced by ``[terms]`` entries (``{w3}`` = up to three words in between, ...).
"""
from __future__ import annotations

import hashlib
import math
import re
import time
import tomllib
import unicodedata
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

import click


class RubricError(click.ClickException):
    """``rubric.toml`` is wrong (a course-author error); the message names the file and the entry."""


# --------------------------------------------------------------------------- the rubric as data

@dataclass(frozen=True)
class Evidence:
    """One way to earn (a part of) a line, or to commit a misconception.

    Attributes:
        patterns: every one must match inside the same scope.
        within: ``0`` = one sentence; ``n > 0`` = all matches within ``n`` words of each other.
        sentences: 1, or 2 to let the patterns spread over two consecutive sentences of one paragraph.
        unless: a match anywhere in the sentence cancels the evidence.
        unless_near: a match inside the matched span cancels it.
        negatable: a negation just before or inside the span cancels it (``False`` when the pattern
            itself says "not").
        about, rivals: the thing the property must be said of: the nearest mention of ``about`` or
            ``rivals`` before the property (else after it, else in the previous sentence) must be ``about``.
        part: lines with several parts are earned only when every part has evidence.
    """

    patterns: tuple[re.Pattern, ...]
    within: int = 0
    sentences: int = 1
    unless: tuple[re.Pattern, ...] = ()
    unless_near: tuple[re.Pattern, ...] = ()
    negatable: bool = True
    about: re.Pattern | None = None
    rivals: re.Pattern | None = None
    part: str = ""


@dataclass(frozen=True)
class Line:
    """A rubric line: a concept worth ``points``."""

    id: str
    question: int
    points: float
    concept: str
    hint: str
    evidence: tuple[Evidence, ...]

    @property
    def parts(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(e.part for e in self.evidence))


@dataclass(frozen=True)
class Misconception:
    """A wrong statement; its point is given to a substantive answer that does not make it."""

    id: str
    question: int
    points: float
    statement: str
    hint: str
    evidence: tuple[Evidence, ...]


@dataclass(frozen=True)
class Rubric:
    """Everything in ``rubric.toml``, compiled."""

    path: Path
    lines: tuple[Line, ...]
    misconceptions: tuple[Misconception, ...]
    questions: dict[int, str]
    pass_mark: float
    review_band: float
    cap: float
    min_words: int
    max_words: int
    suggested: tuple[int, int]
    min_prose_share: float
    sentence_min_words: int
    sentence_min_function_share: float
    list_min_items: int
    list_max_function_share: float
    copy_sources: tuple[str, ...]
    ngram: int
    copied: float
    copy_review: float
    not_english_function_share: float

    @property
    def max_total(self) -> float:
        return sum(x.points for x in self.lines) + sum(m.points for m in self.misconceptions)

    @property
    def cap_points(self) -> float:
        """Most points a keyword list or a copied answer can get (rounded down to whole points)."""
        return math.floor(self.cap * self.max_total + 1e-9)


def load(path: Path) -> Rubric:
    """Read and compile a rubric file.

    Raises:
        RubricError: unreadable TOML, a missing field, or a regular expression that does not compile;
            the message names the file and the line or misconception.
    """
    path = Path(path)
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise RubricError(f"cannot read rubric {path}: {exc}") from exc
    terms = {k: str(v) for k, v in data.get("terms", {}).items()}

    def compile_(pattern: str, where: str) -> re.Pattern:
        expanded = re.sub(r"\{(\w+)\}", lambda m: terms.get(m.group(1), m.group(0)), pattern)
        try:
            return re.compile(expanded)
        except re.error as exc:
            raise RubricError(f"{path}: {where}: bad pattern {pattern!r}: {exc}") from exc

    def evidence(entries, where: str) -> tuple[Evidence, ...]:
        if not entries:
            raise RubricError(f"{path}: {where} has no [[...evidence]]")
        out = []
        for i, e in enumerate(entries, 1):
            w = f"{where}, evidence {i}"
            if "all" not in e:
                raise RubricError(f"{path}: {w} has no 'all' list of patterns")
            within = e.get("within", "sentence")
            out.append(Evidence(
                patterns=tuple(compile_(p, w) for p in e["all"]),
                within=0 if within == "sentence" else int(within),
                sentences=int(e.get("sentences", 1)),
                unless=tuple(compile_(p, w) for p in e.get("unless", ())),
                unless_near=tuple(compile_(p, w) for p in e.get("unless_near", ())),
                negatable=bool(e.get("negatable", True)),
                about=compile_(e["about"], w) if "about" in e else None,
                rivals=compile_(e["rivals"], w) if "rivals" in e else None,
                part=str(e.get("part", "")),
            ))
        return tuple(out)

    try:
        grading, length = data["grading"], data["length"]
        kw, copying, language = data["keyword_list"], data["copying"], data.get("language", {})
        lines = tuple(
            Line(id=x["id"], question=int(x["question"]), points=float(x["points"]), concept=x["concept"],
                 hint=x["hint"], evidence=evidence(x.get("evidence"), f"line {x['id']!r}"))
            for x in data["line"])
        misconceptions = tuple(
            Misconception(id=x["id"], question=int(x["question"]), points=float(x["points"]),
                          statement=x["statement"], hint=x["hint"],
                          evidence=evidence(x.get("evidence"), f"misconception {x['id']!r}"))
            for x in data.get("misconception", ()))
        ids = [x.id for x in lines] + [m.id for m in misconceptions]
        if len(set(ids)) != len(ids):
            raise RubricError(f"{path}: duplicate ids: {sorted({i for i in ids if ids.count(i) > 1})}")
        return Rubric(
            path=path, lines=lines, misconceptions=misconceptions,
            questions={int(k): v for k, v in data.get("questions", {}).items()},
            pass_mark=float(grading["pass_mark"]), review_band=float(grading["review_band"]),
            cap=float(grading["cap"]),
            min_words=int(length["min_words"]), max_words=int(length["max_words"]),
            suggested=tuple(length["suggested"]),
            min_prose_share=float(kw["min_prose_share"]), sentence_min_words=int(kw["sentence_min_words"]),
            sentence_min_function_share=float(kw["sentence_min_function_share"]),
            list_min_items=int(kw["list_min_items"]), list_max_function_share=float(kw["list_max_function_share"]),
            copy_sources=tuple(copying.get("sources", ())), ngram=int(copying["ngram"]),
            copied=float(copying["copied"]), copy_review=float(copying["review"]),
            not_english_function_share=float(language.get("min_function_share", 0.08)),
        )
    except KeyError as exc:
        raise RubricError(f"{path}: missing field {exc}") from exc
    except (TypeError, ValueError) as exc:
        raise RubricError(f"{path}: {exc}") from exc


# --------------------------------------------------------------------------- 1. read the markdown

_COMMENT = re.compile(r"<!--.*?(?:-->|\Z)", re.S)
_HEADING = re.compile(r"^\s{0,3}#{1,6}\s+(.*?)\s*#*\s*$")
_SETEXT = re.compile(r"^\s{0,3}(=+|-{3,})\s*$")
_BULLET = re.compile(r"^\s*(?:[-*+•]|\d{1,3}[.)])\s+")
_FENCE = re.compile(r"^\s*(```|~~~)")


@dataclass
class Block:
    """A paragraph or a bullet item, with the number of the section it sits in (0 before any heading)."""

    section: int
    text: str


def read_text(data: bytes) -> str:
    """Decode an answer file: UTF-8 (with or without BOM), else Latin-1 (which never fails)."""
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        return data.decode("latin-1")


def blocks(markdown: str) -> tuple[list[Block], list[str]]:
    """Split markdown into text blocks and the list of headings; comments and headings are dropped."""
    text = _COMMENT.sub(" ", markdown.replace("\r\n", "\n").replace("\r", "\n"))
    out: list[Block] = []
    headings: list[str] = []
    current: list[str] = []
    section = 0
    in_fence = False

    def flush():
        joined = " ".join(s.strip() for s in current).strip()
        if joined:
            out.append(Block(section, _strip_inline(joined)))
        current.clear()

    raw_lines = text.split("\n")
    for i, line in enumerate(raw_lines):
        if _FENCE.match(line):
            flush()
            in_fence = not in_fence
            continue
        if in_fence:  # code or formulas: one block per line
            flush()
            current.append(line)
            flush()
            continue
        heading = _HEADING.match(line)
        nxt = raw_lines[i + 1] if i + 1 < len(raw_lines) else ""
        if heading or (line.strip() and _SETEXT.match(nxt) and not _BULLET.match(line) and not current):
            flush()
            headings.append((heading.group(1) if heading else line).strip())
            section += 1
            continue
        if _SETEXT.match(line) and headings and not current:
            continue
        if not line.strip() or re.match(r"^\s*(\|?\s*:?-{3,}:?\s*)+\|?\s*$", line):
            flush()
            continue
        if _BULLET.match(line) or line.lstrip().startswith(">"):
            flush()
            line = _BULLET.sub("", line.lstrip("> "))
        if line.strip().startswith("|"):  # a table row: one block, cells separated
            flush()
            current.append(" ; ".join(c.strip() for c in line.strip().strip("|").split("|")))
            flush()
            continue
        current.append(line)
    flush()
    return out, headings


def _strip_inline(text: str) -> str:
    """Remove inline markdown (emphasis, code ticks, links, images, HTML tags); keep the words."""
    text = re.sub(r"!\[([^\]]*)\]\([^)]*\)", r"\1", text)
    text = re.sub(r"\[([^\]]+)\]\([^)]*\)", r"\1", text)
    text = re.sub(r"</?[a-zA-Z][^>]*>", " ", text)
    text = text.replace("**", "").replace("__", "").replace("`", "")
    text = re.sub(r"(?<![\w*])\*(?=\S)([^*]+?)(?<=\S)\*(?![\w*])", r"\1", text)
    return re.sub(r"\s+", " ", text).strip()


# --------------------------------------------------------------------------- 2. normalise

_CHAR_MAP = {
    "\u2018": "'", "\u2019": "'", "\u201a": "'", "\u201b": "'", "\u2032": "'",
    "\u201c": '"', "\u201d": '"', "\u201e": '"', "\u00ab": '"', "\u00bb": '"',
    "\u2212": "-", "\u00d7": " x ", "\u00f7": " / ", "\u2044": "/", "\u2215": "/",
    "\u2248": " approximately ", "\u2243": " approximately ", "\u223c": " approximately ",
    "\u2192": " -> ", "\u2190": " <- ", "\u21d2": " => ", "\u2194": " <-> ", "\u27f6": " -> ",
    "\u2264": " <= ", "\u2265": " >= ", "\u2260": " != ", "\u2208": " in ", "\u00b7": " ", "\u22c5": " ",
    "\u2026": "...", "\u221e": " infinity ", "\u221a": " sqrt ", "\u2211": " sum ",
}
_LATEX = [
    (re.compile(r"\\(?:text|mathrm|mathbf|mathit|operatorname|textbf|textit|mathsf|boldsymbol)\s*\{([^{}]*)\}"), r"\1"),
    (re.compile(r"\\sqrt\s*\{([^{}]*)\}"), r" sqrt \1 "),
    (re.compile(r"\\frac\s*\{([^{}]*)\}\s*\{([^{}]*)\}"), r"\1 / \2"),
    (re.compile(r"\\(?:top|intercal)\b"), "T"),
    (re.compile(r"\\infty\b"), " infinity "),
    (re.compile(r"\\(?:le|leq)\b"), " <= "),
    (re.compile(r"\\(?:ge|geq)\b"), " >= "),
    (re.compile(r"\\(?:approx|sim)\b"), " approximately "),
    (re.compile(r"\\(?:to|rightarrow)\b"), " -> "),
    (re.compile(r"\\(?:times)\b"), " x "),
    (re.compile(r"\\(?:left|right|big|Big|bigg|Bigg)\b"), ""),
    (re.compile(r"\\[a-zA-Z]+"), " "),
    (re.compile(r"[_^]\s*\{([^{}]*)\}"), r"_\1"),
]


def normalise(text: str) -> str:
    """The matching form of a sentence: NFKC, lower case, plain quotes/dashes, LaTeX and markup gone.

    ``W^O`` and ``W_{O}`` both become ``w_o``; ``d_{model}`` becomes ``d_model``; "doesn't" becomes
    "does not"; full-width letters, superscripts and ligatures fold to ASCII where Unicode says so.
    Letters of every script are kept.
    """
    text = unicodedata.normalize("NFKC", text)
    text = "".join(_CHAR_MAP.get(ch, ch) for ch in text
                   if unicodedata.category(ch) not in ("Cf", "Cc") or ch in "\n\t")
    text = "".join("-" if unicodedata.category(ch) == "Pd" else ch for ch in text)
    text = text.replace("$", " ")
    for _ in range(3):  # nested commands: \frac{..}{\sqrt{..}}
        before = text
        for pattern, repl in _LATEX:
            text = pattern.sub(repl, text)
        if text == before:
            break
    text = text.replace("{", " ").replace("}", " ").replace("\\", " ")
    text = re.sub(r"(?<=\w)\^(?=\w)", "_", text)
    text = text.casefold()
    text = re.sub(r"\bwon't\b", "will not", text)
    text = re.sub(r"\bcan't\b|\bcannot\b", "can not", text)
    text = re.sub(r"(\w)n't\b", r"\1 not", text)
    text = re.sub(r"\s+", " ", text)
    return text.strip()


# --------------------------------------------------------------------------- 3. split into sentences

_WORD = re.compile(r"[^\W_]+(?:[-_'][^\W_]+)*")
_ABBREV = re.compile(r"(?:\b(?:e\.g|i\.e|etc|vs|al|fig|eq|approx|cf|resp|no|ca|viz|incl|mr|mrs|dr|prof|st|sec)|(?:^|\s)[a-z])\.$",
                     re.I)
_SENTENCE_END = re.compile(r"(?<=[.!?])[\"')\]]*\s+(?=\S)")

FUNCTION_WORDS = frozenset("""
a an the of to in on at by for with from into onto over under between among across through about as than
and or but nor so if then that this these those which who whom whose what when where while because since
although though is are was were be been being am has have had having do does did can could will would
shall should may might must it its they them their he she his her we our us you your i me my not no never
each every all any some only also just there here how why such same other another both either neither up
out its itself themselves very much many most more less few
""".split())


def words(text: str) -> list[str]:
    """The words of a text (letters and digits of any script; ``d_model`` and ``multi-head`` are one word)."""
    return _WORD.findall(text)


def function_share(tokens: list[str]) -> float:
    """Share of English function words ("the", "is", "each", ...) among ``tokens`` (0 for none)."""
    return sum(t.casefold() in FUNCTION_WORDS for t in tokens) / len(tokens) if tokens else 0.0


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


def _make_unit(rubric: Rubric, display: str, section: int, block: int, list_item: bool = False) -> Unit:
    norm = normalise(display)
    toks = words(norm)
    prose = (not list_item and len(toks) >= rubric.sentence_min_words
             and function_share(toks) >= rubric.sentence_min_function_share)
    return Unit(display=display, norm=norm, section=section, block=block, list_item=list_item, prose=prose)


# --------------------------------------------------------------------------- 4. match evidence

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


# --------------------------------------------------------------------------- 5. judge the answer

@dataclass
class LineResult:
    """One rubric line for one answer."""

    id: str
    points: float
    earned: bool  # evidence for every part was found
    counted: bool  # earned and within the cap
    quotes: list[str] = field(default_factory=list)
    missing_parts: list[str] = field(default_factory=list)

    @property
    def score(self) -> float:
        return self.points if self.counted else 0.0


@dataclass
class MisconceptionResult:
    """One misconception for one answer: ``found`` quotes the sentence that makes it."""

    id: str
    points: float
    applies: bool  # the answer earns a concept point on the misconception's question
    found: bool
    quote: str = ""


@dataclass
class Assessment:
    """Everything :func:`evaluate` found; ``total`` is what the exercise's checks add up to."""

    words: int
    prose_share: float
    lines: dict[str, LineResult]
    misconceptions: dict[str, MisconceptionResult]
    problems: list[str]  # why the answer is not substantive (empty, too short, keyword list, copied, ...)
    notes: list[str]  # said to the student, not held against them (e.g. "only the first 1200 words were read")
    cap_reason: str  # "" when no cap applies
    copy_overlap: float
    copy_source: str
    needs_review: list[str]
    total: float
    max_total: float
    seconds: float

    @property
    def substantive(self) -> bool:
        return not self.problems

    def misconception_counts(self, m: MisconceptionResult) -> bool:
        """Whether misconception ``m`` earns its point (the exercise's check passes)."""
        return self.substantive and m.applies and not m.found


def evaluate(rubric: Rubric, markdown: str, *, copy_sources: dict[str, str] | None = None) -> Assessment:
    """Grade one answer against ``rubric``.

    Args:
        rubric: the compiled rubric.
        markdown: the answer's text.
        copy_sources: name -> text of sample answers a copy would come from (none: no copy check).
    """
    started = time.perf_counter()
    blocks_, _ = blocks(markdown)
    units_, n_words, cut = units(rubric, blocks_)
    prose_words = sum(len(words(u.norm)) for u in units_ if u.prose)
    prose_share = prose_words / n_words if n_words else 0.0
    body = " ".join(u.norm for u in units_)

    lines: dict[str, LineResult] = {}
    for line in rubric.lines:
        found: dict[str, Hit] = {}
        for ev in line.evidence:
            if ev.part not in found:
                hit = find(ev, units_)
                if hit:
                    found[ev.part] = hit
        missing = [p for p in line.parts if p not in found]
        quotes = list(dict.fromkeys(h.quote for h in found.values()))
        lines[line.id] = LineResult(line.id, line.points, earned=not missing, counted=not missing,
                                    quotes=quotes, missing_parts=missing)

    earned_questions = {x.question for x in rubric.lines if lines[x.id].earned}
    misconceptions = {}
    for m in rubric.misconceptions:
        hit = next((h for h in (find(ev, units_, strict_negation=True) for ev in m.evidence) if h), None)
        misconceptions[m.id] = MisconceptionResult(m.id, m.points, applies=m.question in earned_questions,
                                                   found=hit is not None, quote=hit.quote if hit else "")

    problems, notes, review = [], [], []
    lo, hi = rubric.suggested
    if n_words == 0:
        problems.append("the answer is empty: write your explanation under the headings of the template")
    elif n_words < rubric.min_words:
        problems.append(f"the answer is far too short ({n_words} words; write about {lo}-{hi}, "
                        f"at least {rubric.min_words})")
    if cut:
        notes.append(f"the answer is far too long ({n_words} words; about {lo}-{hi} is right): "
                     f"only the first {rubric.max_words} words were read")
    not_english = _not_english(rubric, units_, n_words)
    few_sentences = n_words >= 10 and prose_share < rubric.min_prose_share
    cap_reason = ""
    if not_english:  # also capped when it has few English sentences: keyword soup without commas lands here
        problems.append(not_english)
        cap_reason = not_english if few_sentences else ""
        review.append(f"the answer may not be in English ({not_english.split('(')[-1].rstrip(')')}): "
                      "a person should read it")
    elif few_sentences:
        reason = (f"the answer is mostly a list of keywords or fragments, not sentences "
                  f"(only {prose_share:.0%} of its words are in sentences)")
        problems.append(reason)
        cap_reason = reason
        review.append(f"mostly keywords ({prose_share:.0%} of the words in sentences): check the cap")
    overlap, source = copy_overlap(body, copy_sources or {}, rubric.ngram)
    if overlap >= rubric.copied:
        reason = f"the answer is mostly copied from {source} ({overlap:.0%} of its {rubric.ngram}-word phrases)"
        problems.append(reason)
        cap_reason = cap_reason or reason
        review.append(f"copied from {source} ({overlap:.0%} of {rubric.ngram}-word phrases)")
    elif overlap >= rubric.copy_review:
        review.append(f"partly copied from {source} ({overlap:.0%} of {rubric.ngram}-word phrases)")

    if cap_reason:  # count earned lines in rubric order up to the cap
        budget = rubric.cap_points
        for line in rubric.lines:
            result = lines[line.id]
            if result.earned:
                result.counted = budget >= line.points
                budget -= line.points if result.counted else 0

    total = sum(r.score for r in lines.values())
    assessment = Assessment(
        words=n_words, prose_share=prose_share, lines=lines, misconceptions=misconceptions, problems=problems,
        notes=notes, cap_reason=cap_reason, copy_overlap=overlap, copy_source=source, needs_review=review,
        total=0.0, max_total=rubric.max_total, seconds=0.0)
    total += sum(m.points for m in misconceptions.values() if assessment.misconception_counts(m))
    assessment.total = total
    if abs(total - rubric.pass_mark) <= rubric.review_band and n_words:
        review.append(f"borderline total {total:g}/{rubric.max_total:g}: within {rubric.review_band:g} of the "
                      f"pass mark {rubric.pass_mark:g}")
    assessment.seconds = time.perf_counter() - started
    return assessment


def _not_english(rubric: Rubric, units_: list[Unit], n_words: int) -> str:
    """A reason when the answer does not look like English prose ('' when it does)."""
    text = " ".join(u.norm for u in units_)
    letters = [ch for ch in text if ch.isalpha()]
    if len(letters) >= 200:
        latin = sum("LATIN" in unicodedata.name(ch, "") for ch in letters)
        if latin / len(letters) < 0.6:
            return f"the answer does not look like English ({1 - latin / len(letters):.0%} of its letters are not Latin)"
    sentences = [u for u in units_ if not u.list_item]
    if n_words >= 40 and sentences:
        mean_len = sum(len(words(u.norm)) for u in sentences) / len(sentences)
        share = function_share(words(text))
        if mean_len >= 8 and share < rubric.not_english_function_share:
            return f"the answer does not look like English (only {share:.0%} English function words)"
    return ""


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


# --------------------------------------------------------------------------- files

def copy_sources_for(rubric: Rubric, root: Path, answer: Path | None = None) -> dict[str, str]:
    """The sample answers listed in the rubric that exist under ``root``, minus ``answer`` itself.

    A file is never a copy of itself, so grading the reference answer does not compare it with itself;
    a missing source (a student's copy of the course has no solutions/) is skipped.
    """
    out = {}
    for rel in rubric.copy_sources:
        path = Path(root) / rel
        if not path.is_file():
            continue
        if answer is not None and answer.exists() and path.resolve() == Path(answer).resolve():
            continue
        out[rel] = read_text(path.read_bytes())
    return out


@lru_cache(maxsize=32)
def _assess_cached(rubric_path: str, digest: str, text: str, sources: tuple[tuple[str, str], ...]) -> Assessment:
    return evaluate(load_cached(rubric_path), text, copy_sources=dict(sources))


@lru_cache(maxsize=8)
def load_cached(rubric_path: str) -> Rubric:
    return load(Path(rubric_path))


#: Bytes of an answer file that are read (far more than ``max_words`` words of any script).
MAX_BYTES = 1_000_000


def assess_file(rubric_path: Path, answer: Path, root: Path) -> Assessment:
    """Evaluate the answer file ``answer`` (cached per content, so every check of a run shares it)."""
    rubric = load_cached(str(Path(rubric_path).resolve()))
    with open(answer, "rb") as f:
        data = f.read(MAX_BYTES)
    text = read_text(data)
    sources = tuple(sorted(copy_sources_for(rubric, root, Path(answer)).items()))
    digest = hashlib.sha256(data).hexdigest()
    return _assess_cached(str(Path(rubric_path).resolve()), digest, text, sources)
