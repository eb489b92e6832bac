"""Step 4, concepts: where a rubric line's (or a misconception's) evidence matches in the answer's sentences."""
from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from .assertions import Clause, Cue, asserted
from .spec import Evidence
from .scopes import PRONOUN, back, candidates, retracted, scope_clauses, word_index
from .sentences import Unit
from .subjects import noun_of, pictured, read_elsewhere
from .mixing import bound_and_mixed, mixing_paragraph
from .relations import clashes_as_written, salad_as_written
from .topic import anchored, foreign_agents, mapped, misused, strong_beyond, topical
from .worlds import bridges, unquoted


@dataclass
class Hit:
    """Where a piece of evidence matched: the sentence(s) and the span in the normalised text."""

    units: tuple[Unit, ...]
    start: int
    end: int

    @property
    def quote(self) -> str:
        return " ".join(u.display for u in self.units)


_FOIL = re.compile(r"\b(?:unlike|as opposed to|in contrast (?:to|with)|by contrast (?:to|with)|compared (?:with|to)|"
                   r"in comparison (?:to|with)|contrary to|rather than|instead of|not|versus|vs\.?)"
                   r"(?: (?:in|by|for|with|to|of|the|a|an|like))*\s*$")


def _mentions(ev: Evidence, text: str) -> list[tuple[int, bool]]:
    """Mentions of ``ev.about`` (True) and ``ev.rivals`` (False) in ``text``, in order, leaving out foils: a mention
    after "unlike", "as opposed to", "compared with", "rather than", "not", ... (:data:`_FOIL`), and one inside
    commas or brackets right after another mention ("BERT, which came after GPT, ...", "GPT (like BERT) ...")."""
    found = sorted([(m.start(), m.end(), True) for m in ev.about.finditer(text)]
                   + [(m.start(), m.end(), False) for m in (ev.rivals.finditer(text) if ev.rivals else ())])
    out: list[tuple[int, bool]] = []
    last_end = -1
    for start, end, is_about in found:
        if _FOIL.search(text, max(0, start - 40), start):
            continue
        if last_end >= 0 and _aside(text, last_end, start):
            continue
        out.append((start, is_about))
        last_end = end
    return out


def _aside(text: str, subject_end: int, at: int) -> bool:
    """Whether ``at`` lies in a comma or bracket aside that opens right after the mention ending at ``subject_end``
    and closes later: "bert*, which came after gpt,* sees ..." (not "bert sees all, gpt, by contrast, ...")."""
    gap = text[subject_end:at]
    opener = re.match(r"(?:'s)?\s*([,(])", gap)
    if not opener:
        return False
    close = ")" if opener.group(1) == "(" else ","
    return close not in gap[opener.end():] and close in text[at:]


def _said_of(ev: Evidence, text: str, at: int, previous: str) -> bool:
    """Whether the property at ``at`` is said of ``ev.about`` (nearest mention wins, see :class:`Evidence`; a
    mention that is only compared with, :func:`_mentions`, is no candidate). A mention that holds the property's
    first word decides first: in "a bidirectional model would not fit GPT", "bidirectional" names the rival."""
    for pattern, is_about in ((ev.rivals, False), (ev.about, True)):  # "a *bidirectional* model like RoBERTa"
        if pattern is not None and any(m.start() <= at < m.end() for m in pattern.finditer(text)):
            return is_about
    mentions = _mentions(ev, text)
    before = [is_about for pos, is_about in mentions if pos < at]
    if before:
        return before[-1]
    after = [is_about for pos, is_about in mentions if pos > at]
    if after:
        return after[0]
    if _DEFINITION.match(text):  # "a head is one attention pattern: ..." is said of any head, not the last model named
        return False
    prev = _mentions(ev, previous)
    return bool(prev) and prev[-1][1]


#: A sentence that defines a general thing ("a head is one attention pattern: ...", "an attention grid is a table
#: ..."): what it says is of every such thing, not of the model the sentence before it named.
_DEFINITION = re.compile(r"(?:a|an) (?:[\w-]+ ){0,2}?[\w-]+ (?:is|means) (?:one|a|an|just|simply|basically)\b")


#: A negation before one of these states a bound, not a denial: "can not get *below* the unigram level".
_BOUND = re.compile(r"\b(?:below|beyond|past|under|above|over|more than|better than|further than|lower than|"
                    r"less than|other than|except|apart from|anything but)\b")


def _owner(ev: Evidence, text: str, combo) -> callable:
    """Which negation cues belong to the evidence: those its patterns spell (and, with ``negatable = false``,
    any inside a piece's own matched text, where the pattern asked for it, or one that states a bound before a
    piece: "does not learn *more than* letter frequencies"; not a negation between the pieces otherwise)."""

    def owned(cue: Cue) -> bool:
        if cue.stance != "negated":
            return False
        if not ev.negatable and any(s <= cue.start and cue.end <= e or  # inside a piece, or a bound before one
                                    (cue.end <= s and cue.covers(s, e) and _BOUND.search(text, cue.end, s))
                                    for s, e in combo):
            return True
        for pattern, (s, e) in zip(ev.patterns, combo):
            if s <= cue.start and cue.end <= e:  # does the pattern still match without the cue's words?
                blanked = text[:cue.start] + "q" * (cue.end - cue.start) + text[cue.end:]
                if not pattern.match(blanked, s, e):  # within its own span: not by reaching a later alternative
                    return True
        return False
    return owned


def _denied_around(ev: Evidence, text: str, found: tuple[Clause, ...], combo, owned) -> bool:
    """Whether a stretch the student does not assert lies in the combination's span and itself holds a match of
    one of the evidence's patterns: the pieces were picked around a denied statement of the concept ("post-norm
    does *not put a normalisation in the gradient's way*: a layer norm on the stream leaves ..."). Cues the
    evidence owns ("*without residuals* every block ...") and rule antecedents do not count."""
    start, end = min(s for s, _ in combo), max(e for _, e in combo)
    cues = {q for c in found for q in c.cues if q.covers(start, end) and not q.rule and not owned(q)}
    for q in cues:
        for pattern in ev.patterns:
            if any(q.scope_start <= m.start() and m.end() <= q.scope_end and (m.start(), m.end()) not in combo
                   for m in pattern.finditer(text)):
                return True
    return False


def _asserted_match(pattern: re.Pattern, text: str, found: tuple[Clause, ...], condition: bool = False) -> bool:
    """Whether ``pattern`` matches somewhere in ``text`` in an asserting clause (for ``unless``). A negation the
    pattern itself spells is its own, as for evidence (:func:`_owner`): "which is *not the same as* causal masking"
    and "there is *no rule* saying ..." are asserted matches of patterns that say "not the same as", "no rule".
    With ``condition`` (a misconception's own correct senses), a match inside a condition counts too
    (:func:`_conditioned`)."""
    for m in pattern.finditer(text):
        def owned(cue: Cue, m: re.Match = m) -> bool:
            if cue.stance != "negated" or not (m.start() <= cue.start and cue.end <= m.end()):
                return False
            blanked = text[:cue.start] + "q" * (cue.end - cue.start) + text[cue.end:]
            return not pattern.match(blanked, m.start(), m.end())
        if asserted(found, [(m.start(), m.end())], owned=owned) \
                or condition and _conditioned(text, found, m.start(), m.end(), owned):
            return True
    return False


#: A condition that concedes rather than restricts: "post-norm is more stable *even if* you skip the warm-up".
_CONCESSIVE = re.compile(r"\b(?:even if|even when|even though|whether or not|regardless)\b")


def _conditioned(text: str, found: tuple[Clause, ...], start: int, end: int, owned) -> bool:
    """Whether the span lies in a condition or supposition and under no other cue: "post-norm is more stable *if
    you warm up*" restricts the claim to the correct sense ``unless`` names, as an asserted match would."""
    covering = [c for clause in found if clause.start < end and start < clause.end
                for c in clause.cues if not owned(c) and c.covers(start, end)]
    return bool(covering) and all(c.stance == "supposed"
                                  and not _CONCESSIVE.search(text[max(0, c.start - 12):c.end + 1]) for c in covering)


def _only_bare_terms(scope: tuple[Unit, ...], norms: tuple[str, ...], combo) -> bool:
    """Every matched piece lies in a unit of terms with nothing relating them (:attr:`.sentences.Unit.bare_terms`):
    "heads parallel qkv W_O concat" asserts nothing, whatever its neighbour says."""
    lo, holding = 0, []
    for unit, norm in zip(scope, norms):
        if any(lo <= s < lo + len(norm) for s, _ in combo):
            holding.append(unit)
        lo += len(norm) + 1
    return bool(holding) and all(u.bare_terms for u in holding)


def _in_domain(scope: tuple[Unit, ...], norms: tuple[str, ...], combo, units_: list[Unit],
               index: dict[int, int]) -> bool:
    """The matched words are meant in the lesson's sense (see :mod:`.topic`)."""
    text = " ".join(norms)
    if any(misused(text, s, e) for s, e in combo):
        return False
    salad = salad_as_written(tuple(u.display for u in units_))  # as review reads it: not a picture's
    # nouns read as the heads
    lo = 0
    for unit, norm in zip(scope, norms):  # a sentence holding a piece that binds a term to a foreign thing and mixes
        # in more, or that joins terms in a relation the model does not have, in an answer of such relations
        if any(lo <= s < lo + len(norm) for s, _ in combo) and \
                (bound_and_mixed(norm) or salad and clashes_as_written(unit.display)):
            return False
        lo += len(norm) + 1
    paragraph = [v.norm for v in units_ if v.block == scope[0].block]
    starts = [sum(len(n) + 1 for n in norms[:k]) for k in range(len(norms))]
    local = {n: [(s - lo, e - lo) for s, e in combo if lo <= s < lo + len(n)] for n, lo in zip(norms, starts)}
    holding = tuple(n for n in norms if local[n])  # the sentences holding a piece; a neighbour's anchors do not help
    if mixing_paragraph(paragraph, holding) and not any(strong_beyond(n, local[n]) for n in holding):
        return False  # among sentences of pasta and ovens, "the sauce stays at the unigram level U"
    if len(norms) == 2:  # a pair: the sentence holding a piece is not anchored by its neighbour's words alone,
        # unless the neighbour after it bridges from the picture to the model ("... the chief writes one report. In
        # the model that is the concatenation ...": the picture's sentence is the analogy the bridge explains)
        cut = len(norms[0]) + 1
        for k, n in enumerate(norms):
            if local[n] and _agents(n) and not anchored(n, local[n])[0] and not (k == 0 and bridges(norms[1])):
                return False
    beyond, some = anchored(text, list(combo))
    if beyond or any(topical(n) == "analogy" and mapped(n) for n in norms):
        return True
    first, last = index[id(scope[0])], index[id(scope[-1])]
    before, after = max(first - 1, 0), last + 1
    while before and units_[before].norm.rstrip().endswith("?") and first - before < 3:
        before -= 1  # a short question between (a dialogue's "and in the forward pass?") keeps the topic going
    while after < len(units_) - 1 and units_[after].norm.rstrip().endswith("?") and after - last < 3:
        after += 1
    near = [v for v in units_ if v.block == scope[0].block] + units_[before:after + 1]
    # a keyword-list item is a fragment: its list (capped anyway) vouches for it; a sentence whose actors are
    # foreign ("nobody assigns the cooks their jobs") is about something else, whatever its paragraph
    if any(_agents(_after_likeness(n, local[n])) for n in norms):
        return False
    if first and PRONOUN.match(norms[0]) and units_[first - 1].block == scope[0].block \
            and _agents(units_[first - 1].norm):  # "they" are the cooks of the sentence before
        return False
    return (some or scope[0].list_item) and any(v.section == scope[0].section and v not in scope and topical(v.norm) == "domain"
                        for v in near)


#: A leading likeness: "like a team leader telling one reader to check the dates, ..." (the picture, then the model).
_LIKENESS = re.compile(r"(?:just |much |a bit )?(?:like|as with|similar to)\b[^,;:]{3,160},\s+")


def _after_likeness(norm: str, pieces: list[tuple[int, int]]) -> str:
    """The sentence after a leading likeness when every matched piece lies after it ("like a team leader telling one
    reader to check the dates, the engineers give each head its task": the picture's actors are the likeness's, the
    claim is the main clause's), else the sentence."""
    m = _LIKENESS.match(norm)
    return norm[m.end():] if m and pieces and all(s >= m.end() for s, _ in pieces) else norm


def _agents(norm: str) -> list[str]:
    """:func:`.topic.foreign_agents` of a sentence, its quoted examples left out: in "one head links an adjective
    to its noun (in 'the old red car')" the car is a token of the example, no actor (:func:`.worlds.unquoted`)."""
    return foreign_agents(unquoted(norm))


def find(ev: Evidence, units_: list[Unit], *, denied: bool = False,
         skip: Callable[[tuple[Unit, ...]], bool] | None = None, as_own: bool = False, notes: bool = False
         ) -> Hit | None:
    """The first place where ``ev`` matches as an assertion, said of the right thing, or None.

    Every matched piece must lie in asserting clauses (:mod:`.assertions`): a negated, doubted,
    attributed, questioned, supposed, refuted or framed match earns nothing (a line) and costs nothing
    (a misconception); a negation the pattern itself spells is the evidence's own. ``unless`` and
    ``unless_near`` cancel only where they are asserted ("no mixing between tokens" does not cancel
    "the MLP works on each token"). The matched words must be meant in the lesson's sense
    (:mod:`.topic`): "each head of lettuce has its own weights" matches nothing. A sentence opening with
    "they" is also read with the previous sentence's simple plural subject in its place
    (:func:`.scopes.resolve_leading`); the hit's offsets are then those of the pronoun in the unit's own text.

    Args:
        denied: look for the opposite: the first place where ``ev`` matches in the lesson's sense but is
            *not* asserted (denied, doubted, asked, ...), e.g. "the heads do not run in parallel", where the
            last piece (the predicate) is not asserted (in "it does not loop over the heads, so the heads run in
            parallel" it is). The review step
            uses it to find a concept earned in one sentence and denied in another.
        skip: sentences (scopes) not to look in: the judge passes those about something else
            (:mod:`.elsewhere`) when it looks again for an error said of the lesson's model.
        as_own: read another speaker's words the answer reports (:mod:`.reported`) as the student's: the judge
            uses it to tell a student that a point stands only in a chatbot's turn they pasted.
        notes: read units of bare terms too (:attr:`.sentences.Unit.bare_terms`): an error written as notes ("BERT
            causal, GPT bidirectional") is still the student's error, where bare terms earn no line.
    """
    index = {id(u): i for i, u in enumerate(units_)}
    retractions = retracted(units_, reported_too=not as_own)
    own_nouns = pictured(tuple(u.norm for u in units_))
    elsewhere = read_elsewhere(tuple(u.norm for u in units_ if u.prose))
    for scope, norms, shift in candidates(units_, ev.sentences):
        if skip is not None and skip(scope):
            continue
        text = " ".join(norms)
        per_pattern = [[(m.start(), m.end()) for m in p.finditer(text)] for p in ev.patterns]
        if not all(per_pattern):
            continue
        found = scope_clauses(scope, norms, units_, index, retractions)
        if any(_asserted_match(p, text, found, p in ev.common_unless) for p in ev.unless):
            continue
        for combo in _combinations(per_pattern):
            if _overlap(combo):
                continue
            start, end = min(s for s, _ in combo), max(e for _, e in combo)
            if ev.within:
                if word_index(text, end - 1) - word_index(text, start) > ev.within:
                    continue
            if any(asserted(found, [(start + m.start(), start + m.end())])
                   for p in ev.unless_near for m in p.finditer(text[start:end])):
                continue
            owned = _owner(ev, text, combo)
            owned = _pictured_too(owned, text, own_nouns, elsewhere)  # the answer's picture, its sources
            around = _denied_around(ev, text, found, combo, owned)
            said = asserted(found, list(combo), owned=owned) and not around
            if said == denied:
                continue
            if denied and asserted(found, list(combo), owned=lambda q: owned(q) or q.stance == "foreign") \
                    and not around:
                continue  # said of something else ("the lettuces run in parallel") is no denial
            if denied and not around and asserted(found, [max(combo, key=lambda span: span[1])], owned=owned):
                continue  # a denial denies the last piece, the predicate: not "doesn't loop over the heads: ... the
                # heads are parallel"
            if not notes and _only_bare_terms(scope, norms, combo):
                continue  # terms side by side earn no line (an error in notes is still the student's)
            if not _in_domain(scope, norms, combo, units_, index):
                continue
            if ev.about is not None:
                i = index[id(scope[0])]
                previous = (units_[i - 1].norm if i > 0 and units_[i - 1].section == scope[0].section
                            and not scope[0].list_item and not units_[i - 1].list_item else "")
                if not _said_of(ev, text, combo[-1][0], previous):
                    continue
            return Hit(scope, back(shift, start), back(shift, end, end=True))
    return None


def _pictured_too(owned, text: str, nouns: frozenset[str], elsewhere: bool):
    """``owned``, and a foreign-subject cue that this answer does not read as foreign: a plural noun it pictures
    (:func:`.subjects.pictured`), or any singular subject or scene unless the answer is read as elsewhere
    (:func:`.subjects.read_elsewhere`): in an answer with a picture, "the chief writes one report" is the picture's
    (beside "one detective is one head"); in a plain one, "the video says ..." is its source."""
    def passes(q) -> bool:
        noun = noun_of(text, q.start, q.end)
        return noun in nouns or not elsewhere and (not noun.endswith("s") or noun.endswith(("ss", "us", "is")))

    return lambda q: owned(q) or (q.stance == "foreign" and passes(q))


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
