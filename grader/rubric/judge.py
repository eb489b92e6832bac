"""Step 6, judge: the whole answer (length, keyword list, language, copying, cap, review) and its total."""
from __future__ import annotations

import math
import re
import time
import unicodedata
from dataclasses import dataclass, field

from .concepts import Hit, find
from .elsewhere import about_elsewhere
from .copying import Passage, judge_copy
from .pictures import matching_units
from .reported import reported
from .spec import Rubric
from .read import blocks, function_share, words
from .review import route
from .sentences import Unit, units


@dataclass
class LineResult:
    """One rubric line for one answer."""

    id: str
    points: float
    earned: bool  # evidence for every part was found
    counted: bool  # earned and within the cap
    quotes: list[str] = field(default_factory=list)
    missing_parts: list[str] = field(default_factory=list)
    contradicted_by: str = ""  # id of a misconception the answer makes that loses this line ("" when none)
    reported_only: str = ""  # not earned, but found in another speaker's words the answer reports (.reported)

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
    counted: bool = True  # False when copying leaves too few points for this one (the answer is partly copied)


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
    copy_overlap: float  # share of the answer's content words found in copy_source, in [0, 1] (.copying)
    copy_source: str  # "" when nothing was compared; "the rubric" for the rubric's own phrases
    needs_review: list[str]
    total: float
    max_total: float
    seconds: float
    confidence: float = 1.0  # 1 - the largest penalty of the review reasons (.review explains it)
    copy_passages: list[Passage] = field(default_factory=list)  # (answer span, source span) pairs, for display
    copy_factor: float = 1.0  # share of the concept points kept for copying (rubric.toml [copying])
    cap_points: float = 0.0  # most points counted ( = max_total when no cap applies)

    @property
    def substantive(self) -> bool:
        return not self.problems

    def misconception_counts(self, m: MisconceptionResult) -> bool:
        """Whether misconception ``m`` earns its point (the exercise's check passes)."""
        return self.substantive and m.applies and not m.found and m.counted


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
    read_words = sum(len(words(u.norm)) for u in units_)  # at most max_words: what was read
    prose_share = sum(len(words(u.norm)) for u in units_ if u.prose) / read_words if read_words else 0.0

    matched = matching_units(units_)  # a picture of the student's own read as the heads it stands for
    others = sum(reported(units_))  # sentences that are another speaker's words (.reported)
    lines: dict[str, LineResult] = {}
    for line in rubric.lines:
        found: dict[str, Hit] = {}
        for ev in line.evidence:
            if ev.part not in found:
                hit = find(ev, matched)
                if hit:
                    found[ev.part] = hit
        missing = [p for p in line.parts if p not in found]
        quotes = list(dict.fromkeys(h.quote for h in found.values()))
        lines[line.id] = LineResult(line.id, line.points, earned=not missing, counted=not missing,
                                    quotes=quotes, missing_parts=missing)
        if missing and others:  # said only by a chatbot or a friend whose words the answer reports
            theirs = next((h for h in (find(ev, matched, as_own=True) for ev in line.evidence) if h), None)
            lines[line.id].reported_only = theirs.quote if theirs else ""

    earned_questions = {x.question for x in rubric.lines if lines[x.id].earned}
    misconceptions, elsewhere_reasons = {}, []

    def elsewhere(scope) -> bool:
        return bool(about_elsewhere(" ".join(u.display for u in scope), rubric.elsewhere))

    for m in rubric.misconceptions:
        hit, by = _first_hit(m, matched)
        other = about_elsewhere(hit.quote, rubric.elsewhere) if hit else ""
        if other:  # about another model, an output head or the rubric's own elsewhere: it does not single the error
            # out; look again in the sentences about the lesson's model, and ask a person if none says it
            guarded = hit
            hit, by = _first_hit(m, matched, skip=elsewhere)
            if hit is None:
                elsewhere_reasons.append(f"unsure: a sentence reads like the error that {m.statement}, but it speaks "
                                         f"of {other}, which is not what the error is about; the error is not named: "
                                         f"\"{guarded.quote}\"")
        misconceptions[m.id] = MisconceptionResult(m.id, m.points, applies=m.question in earned_questions,
                                                   found=hit is not None, quote=hit.quote if hit else "")
        for line_id in _lost(m, hit, by, matched, elsewhere if other else None):  # a confident error loses the
            # concept it contradicts
            lines[line_id].earned = lines[line_id].counted = False
            lines[line_id].contradicted_by = lines[line_id].contradicted_by or m.id

    problems, notes, review = [], [], list(dict.fromkeys(elsewhere_reasons))
    lo, hi = rubric.suggested
    if n_words == 0:
        problems.append("the answer is empty: write your explanation under the headings of the template")
    elif n_words < rubric.min_words:
        problems.append(f"the answer is far too short ({n_words} words; write about {lo}-{hi}, "
                        f"at least {rubric.min_words})")
    if others:
        notes.append(f"{others} sentence{'s' if others > 1 else ''} of your answer {'are' if others > 1 else 'is'} "
                     "someone else's words that you report (a chatbot's turn of a transcript, or an answer you quote): "
                     "they earn nothing; explain in your own words")
    if markdown.count("<!--") > markdown.count("-->"):
        notes.append("an HTML comment opened with <!-- is never closed with -->, so everything after it was "
                     "ignored: close the comment")
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
    # Copying: the concept points scale down with the copied share (no cliff), and so do the misconception points
    # (below); from `review` on, flagged. Lines earned in copied passages are the first not counted.
    plain = "\n".join(b.text for b in blocks_)  # the answer's prose (.copying.plain_text), as far as it was read
    if cut:
        plain = _first_words(plain, rubric.max_words)
    copied = judge_copy(rubric.copying, plain, copy_sources or {})
    overlap, source = copied.match.share, copied.match.source
    problems += [copied.problem] if copied.problem else []
    notes += [copied.note] if copied.note else []
    review += [copied.review] if copied.review else []
    earned_points = sum(x.points for x in rubric.lines if lines[x.id].earned)
    budget = rubric.cap_points if cap_reason else rubric.max_total
    copy_budget = math.floor(earned_points * copied.factor + 0.5 + 1e-9)
    if copy_budget < min(budget, earned_points):
        budget, cap_reason = copy_budget, cap_reason or copied.problem or copied.note
    cap_points = budget if cap_reason else rubric.max_total
    if cap_reason:  # count earned lines up to the cap: own words first, then those in copied passages
        spans = [(p.answer_start, p.answer_end) for p in copied.match.passages]
        order = sorted(rubric.lines, key=lambda x: _in_passages(lines[x.id].quotes, plain, spans))
        for line in order:
            result = lines[line.id]
            if result.earned:
                result.counted = budget >= line.points
                budget -= line.points if result.counted else 0

    total = sum(r.score for r in lines.values())
    assessment = Assessment(
        words=n_words, prose_share=prose_share, lines=lines, misconceptions=misconceptions, problems=problems,
        notes=notes, cap_reason=cap_reason, copy_overlap=overlap, copy_source=source, needs_review=review,
        total=0.0, max_total=rubric.max_total, seconds=0.0, copy_passages=copied.match.passages,
        copy_factor=copied.factor, cap_points=cap_points)
    # Copying scales the misconception points as it scales the concept points, with no cliff (rubric.toml [copying];
    # rounded to whole misconception points: exercise 4's are 0.5 each)
    avoided = [m for m in misconceptions.values() if m.points and assessment.misconception_counts(m)]
    unit = min((m.points for m in avoided), default=1.0)
    m_budget = unit * math.floor(sum(m.points for m in avoided) / unit * copied.factor + 0.5 + 1e-9)
    for m in avoided:
        m.counted = m_budget >= m.points
        m_budget -= m.points if m.counted else 0
    total += sum(m.points for m in misconceptions.values() if assessment.misconception_counts(m))
    assessment.total = total
    if abs(total - rubric.pass_mark) <= rubric.review_band and n_words:
        review.append(f"borderline total {total:g}/{rubric.max_total:g}: within {rubric.review_band:g} of the "
                      f"pass mark {rubric.pass_mark:g}")
    assessment.confidence, more = route(rubric, markdown, units_, assessment, matched)  # confidence and review
    review.extend(more)
    assessment.seconds = time.perf_counter() - started
    return assessment


def _first_words(text: str, n: int) -> str:
    """``text`` up to the end of its ``n``-th word (its line breaks kept)."""
    ends = [m.end() for m, _ in zip(_WORD_RUN.finditer(text), range(n))]
    return text[:ends[-1]] if len(ends) == n else text


_WORD_RUN = re.compile(r"\S+")


def _in_passages(quotes: list[str], plain: str, spans: list[tuple[int, int]]) -> bool:
    """Whether every quote of a line lies mostly inside the copied spans of ``plain`` (False without quotes)."""
    if not quotes or not spans:
        return False
    for q in quotes:
        at = plain.find(q)
        if at < 0:
            return False
        inside = sum(max(0, min(at + len(q), b) - max(at, a)) for a, b in spans)
        if inside < 0.5 * len(q):
            return False
    return True


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


def _first_hit(m, matched: list, skip=None) -> tuple:
    """(the first place misconception ``m`` is said, the evidence that found it), or (None, None)."""
    for ev in m.evidence:
        hit = find(ev, matched, skip=skip, notes=True)
        if hit is not None:
            return hit, ev
    return None, None


def _lost(m, hit, by, matched: list, skip) -> list[str]:
    """The lines misconception ``m`` loses, found at ``hit`` by evidence ``by``: its ``loses``, or, when ``by`` gives
    its own (a wording of the error that contradicts less: "it overfits: it memorises the letter counts"), that, and
    the misconception's ``loses`` too if the error is also said in another sentence ("... It memorises the training
    windows.")."""
    if hit is None:
        return []
    if by.loses is None:
        return list(m.loses)

    def elsewhere(scope) -> bool:
        return any(u in hit.units for u in scope) or (skip is not None and skip(scope))
    again = any(find(ev, matched, skip=elsewhere, notes=True) is not None for ev in m.evidence if ev.loses is None)
    return list(m.loses) if again else list(by.loses)

