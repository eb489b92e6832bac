"""Step 3, assertions: cut a normalised sentence into clauses and say what each clause does with what it says.

Only what a clause *asserts* earns a rubric line or commits a misconception. :func:`clauses` takes one
sentence in its matching form (:func:`.read.normalise` output) and returns its clauses in order, each
with a ``stance`` and the cues that gave it:

``asserted``
    nothing below applies: "several heads run in parallel".
``negated``
    a negation whose scope covers the clause. Scope is the clause, not a window of words:
    - a verbal negation (not, never, nor, neither, nobody, no one, none, nothing, "no" opening the clause)
      covers its sub-clause from the cue on: "the heads do *not split the tokens between them*". The
      subject before it is not denied: it may serve what follows ("the heads do not run one after
      another but in parallel" asserts "the heads ... in parallel"); evidence whose other piece is in
      the negated predicate is denied all the same;
    - a negation before a "that"/"whether" complement covers the complement too:
      "the paper does *not* say that heads run one after another";
    - "no", "without", "instead of", "rather than" inside a clause cover only their noun phrase:
      "the MLP works on each token with *no mixing between tokens*" asserts the MLP works on each token;
      "*without residuals* every block must carry the whole signal" asserts what every block must do;
    - a denial of a role covers its whole sub-clause, subject included: "*warm-up is irrelevant to it*",
      "is unnecessary", "is not needed", "is no different", "has nothing to do with", "plays no role",
      "makes no difference", "does not matter", "leaves ... untouched/unchanged/unaffected" (the cue is the
      last word: evidence that spells "untouched" owns it, "the residual leaves the gradient untouched");
    - not a negation: "not only", "not just", "no more than", "no less than", "no matter", "whether or not";
    - a negation inside a "that"-clause stays there: "I believe that heads do not share weights" asserts
      "I believe"; double negations are not cancelled ("it is not true that heads do not ...": negated);
    - "hardly", "rarely", "seldom", "scarcely", "fail(s) to", "lack(s)" are verbal negations;
    - a frame that calls what follows false: "*it would be wrong to say that* ...", "*it is false / not true to
      think that* ..." (but "it would be right to say", "it is not wrong to say" assert).
``doubted``
    "*I do not believe that* heads run in parallel", "*I doubt* heads ...", "*nobody has shown that* d_model is
    split", "*it is unclear whether* ...", "*I am not sure that* ...".
    A *distancing* sentence of the same paragraph, with no domain word of its own, makes the last contrast
    segment of the sentence before it doubted ("... . *I have my doubts.*", "*Maybe.*", "*That is their claim,
    not mine.*", "*I leave that to the lecturer.*"); one that says "any/all of this" reaches every earlier
    sentence of the paragraph ("*I have not checked any of this.*"). A retraction ("*None of that is true.*",
    "*I made all of this up.*") reaches its paragraph; one that names the answer ("*Everything I wrote above is
    false.*") reaches every sentence before it (:func:`distancing`). A distancing clause after "but" or ";"
    does the same to the segment before it ("..., *but I am not convinced*"). Doubt that names something
    else keeps the assertion: "I am not sure about the exact numbers, but each head has 64 dimensions" (the
    doubt comes first and the "but" clause states something of its own).
``attributed``
    said by vague others and not endorsed: "*some people say* ...", "*a few sources claim* ...", "*others say*
    ...", "*they also say* ...", "*people also say* ...", "*it is often said that* ...", "*many assume* ...",
    "*one might think* ...", "*it is tempting to think* ...", "*students often believe* ...", "*apparently*
    / *supposedly* / *allegedly* ...", "*according to some blog posts / its fans*, ...". An authority the
    student reports as fact is asserted: "the paper shows that ...", "as Vaswani et al. explain, ...", "in
    the lecture we saw that ...", "according to the original paper, ...", "the authors say that ..."
    (definite, named). "They say" counts as vague others: heads and tokens do not say or claim. One source
    without authority is reported, not endorsed: "*my friend claims* ...", "*ChatGPT told me* ...", "*according
    to a YouTube video*, ..."; a reference work cited plainly is endorsed: "according to Wikipedia, ..." asserts.
``question``
    the clause ends with "?" ("do heads run in parallel?"), or is a "whether" complement
    ("I wonder *whether* heads share weights").
``supposed``
    the antecedent of a conditional ("*if* the heads ran one after another, ...", "*unless* ...",
    "*suppose* ...", "*imagine* ...", "*assuming* ...", an inverted "*had* the heads run ...", "*were* the heads to
    ...", whose consequent is make-believe too), and the consequent of an "if" in the same sentence
    when it is counterfactual ("..., the layer *would* be slower", "could have", "might"); a counterfactual on
    its own ("GPT *could have used* bidirectional attention, but ...", :data:`.cues.COUNTERFACTUAL`). The antecedent
    of a general rule whose consequent is asserted ("if you add heads, the width of each head shrinks") is
    marked ``rule=True``: evidence may use it when another of its pieces is asserted in that sentence.
``refuted``
    the next sentence of the paragraph refutes this one ("... . *That is wrong.*", "*This is a myth.*",
    "*They don't.*"), or a clause of the same sentence does ("..., *which is wrong*", "... *but that is false*").
    Only the last contrast segment of the refuted sentence is refuted. Sarcasm refutes its whole sentence: "*Sure,
    because* the heads share their weights*, right?*", "*As if* the heads ran in parallel.", a next sentence "*Yeah,
    right.*", a closing "..., *yeah right*"; so does a belief given up: "*At first I thought* ..., *but that turned out
    to be wrong*" ("at first I thought", "I once believed" alone: doubted).
``framed``
    presented as an error: "*a common misconception is that* ...", "*it is a myth that* ...", "*people
    wrongly believe* ...", "*contrary to popular belief*, heads split d_model" (the belief phrase is
    framed, what follows the comma is asserted), and a frame after a "that" subject: "*that* heads run in
    parallel *is a myth*", "*the claim that* each head has its own projections *is false* / *does not hold up* / *has
    been debunked*"; a source contradicted ("*contrary to what Karpathy says*, ...": the whole segment; vague others,
    "contrary to what many people think, ...", only frame their belief); "*only a beginner would say that* ...";
    a false label with its item ("*Common misconceptions:* the heads split the tokens").
``supposed`` also covers a wish: "*I wish* heads ran in parallel".
``foreign``
    the sub-clause's subject is a plural noun outside the lesson, right before its verb: "without residuals,
    *pancakes stay at the unigram level*", "*the lettuces get their own weights*" (:mod:`.subjects`).

"but", "however", ";", "whereas", "while", "instead" (not "instead of"), "although", "in fact",
"actually" and ":" start a new *segment* whose stance is its own: "some say heads split the tokens,
*but in fact* they split d_model" asserts the second half. A frame or a "?" covers its own segment only
(a frame ending right before ":" also covers what follows the colon). Within a segment, commas,
brackets, "and", "or", "so", "because", "since", "which", "who", "that", "when", "as" bound sub-clauses
(the scope of a verbal negation).

:func:`asserted` answers the question the matcher asks: are these spans of the sentence asserted, given
the cues the evidence itself spells ("nobody assigns the heads their jobs" owns its "nobody")?
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from . import cues
from .read import FUNCTION_WORDS
from .sentences import verb_kind
from .subjects import foreign_subjects

#: Stances in order of precedence (a clause under several cues shows the first).
STANCES = ("refuted", "framed", "attributed", "doubted", "question", "supposed", "foreign", "negated", "asserted")


@dataclass(frozen=True)
class Cue:
    """Why a stretch of a sentence is not asserted: the stance, the cue's span and the stretch it covers."""

    stance: str
    start: int  # the cue's own characters
    end: int
    scope_start: int  # what it covers
    scope_end: int
    rule: bool = False  # antecedent of a general rule (see module docstring)

    def covers(self, start: int, end: int) -> bool:
        return self.scope_start < end and start < self.scope_end


@dataclass(frozen=True)
class Clause:
    """One clause of a sentence: ``text`` is ``sentence[start:end]``; ``cues`` are every cue covering it."""

    start: int
    end: int
    text: str
    stance: str
    cues: tuple[Cue, ...] = ()


@lru_cache(maxsize=8192)
def distancing(sentence: str) -> str:
    """How far a distancing or retracting sentence reaches back: ``"previous"`` (the last contrast segment of the
    sentence before it), ``"paragraph"`` (every earlier sentence of its paragraph: "I have not checked any of
    this", "None of that is true.", "I made all of this up."), ``"answer"`` (every earlier sentence of the
    answer, in every paragraph: "Everything I wrote above is false.", "None of what I wrote so far is true."),
    or ``""`` (it does not distance).

    A sentence distances when it says the student does not stand behind something ("I have my doubts",
    "That is their claim, not mine", "Maybe.", "I leave that to the lecturer") and has no domain word of its
    own: "I am not sure about the exact numbers, but each head has 64 dimensions" states something itself.
    A retraction (:data:`.cues.RETRACT`) is the whole sentence: "Nothing of this is hard: each head ..." is none.
    """
    from .topic import has_domain_word  # topic does not import this module; import here keeps the layers clear

    sentence = sentence.strip()
    if has_domain_word(sentence):
        return ""
    if cues.RETRACT.match(sentence):
        return "answer" if cues.RETRACT_ANSWER.search(sentence) else "paragraph"
    if not (cues.DISTANCE.search(sentence) or cues.SARCASM_COMMENT.search(sentence)):
        return ""
    return "paragraph" if cues.DISTANCE_ALL.search(sentence) else "previous"


def _segments(text: str) -> list[tuple[int, int]]:
    """Contrast segments: spans between ";", ":", "?", "but", "however", ... (the marker starts the next)."""
    cuts = [0]
    for m in cues.SEGMENT.finditer(text):
        cut = m.end() if m.group(0) in ";:?" else m.start()
        if cut > cuts[-1]:
            cuts.append(cut)
    cuts.append(len(text))
    return [(a, b) for a, b in zip(cuts, cuts[1:]) if text[a:b].strip()]


def _subclauses(text: str, start: int, end: int) -> list[tuple[int, int]]:
    """Sub-clauses of one segment (the scope of a verbal negation)."""
    cuts = [start]
    for m in cues.SUBCLAUSE.finditer(text, start, end):
        if m.start() > cuts[-1]:
            cuts.append(m.start())
    cuts.append(end)
    return [(a, b) for a, b in zip(cuts, cuts[1:]) if text[a:b].strip()]


def _np_end(text: str, start: int, limit: int, predicate_after: bool = True) -> int:
    """End of the noun phrase that starts at ``start`` (stops at a verb, a new subject, 6 words, or ``limit``).
    ``predicate_after``: the phrase is not the clause's subject ("without", "instead of"; not "no gradient reached
    ..."), so an adverb or a past-tense verb after its noun starts the predicate ("the model without residuals *also*
    overfits", "the run without the shortcuts *fell* fast"; not "without *even* a mask", "without the *learned*
    weights")."""
    end, previous = start, ""
    for i, m in enumerate(re.finditer(r"\S+", text[start:limit])):
        word = m.group(0).strip(".,!?\"'")
        if i >= 6 or cues.NP_STOP.match(word) or (i and cues.NP_NEW.match(word)):
            break
        if predicate_after and previous and previous not in FUNCTION_WORDS \
                and (cues.NP_ADVERB.match(word) or verb_kind(word)[0] == "past"):
            break
        end, previous = start + m.end(), word
    return end


#: What follows a consequent with no comma before it when the whole conditional is contrary to fact ("if the heads
#: ran one after another the layer would be slower, *but* they do not", "..., but the model *still* has its blocks");
#: after "so" or "which", or a concession ("..., but the model gets better"), the conditional states a rule.
_CONTRAST = re.compile(r"(?:but|yet|however|whereas|although|though|while)\b(?=.*\b(?:not|never|no|nobody|none|nothing|"
                       r"still|in fact|actually|in reality|really)\b)")
#: A next sentence that corrects a statement with an agreement tag ("..., right? Well, no.", "Actually, no:").
_CORRECTION = re.compile(r"(?:well,? |hmm,? )?(?:no[,.!:;]|nope\b|not (?:quite|really|true|so)\b|wrong\b|false\b|"
                         r"actually,? no\b|actually,? (?:it|they|that|this) (?:does|do|is|are|was|were) not\b|i used to\b|"
                         r"(?:that|this) (?:turns out|is (?:what i|wrong|false|not|the mistake)|was (?:wrong|a mistake)))")
#: Where a governed complement ends: a clause that draws the writer's own conclusion ("..., which is why ...").
_CONCLUSION = re.compile(r",\s*(?:which is why|which means|so that is why|hence|thus|and that is why)\b")


def _negations(text: str, seg: tuple[int, int], subs: list[tuple[int, int]]) -> list[Cue]:
    """Negation cues of one segment, each with its scope (see the module docstring)."""
    blocked = [(m.start(), m.end()) for m in cues.NOT_NEGATION.finditer(text, *seg)]
    out = []
    for pattern, verbal in ((cues.VERBAL, True), (cues.PHRASAL, False)):
        for m in pattern.finditer(text, *seg):
            if any(a <= m.start() < b for a, b in blocked):
                continue
            sub = next(s for s in subs if s[0] <= m.start() < s[1])
            opens = not text[sub[0]:m.start()].strip(" ,(-")
            if verbal or (m.group(0) == "no" and opens):
                scope = (m.start(), sub[1])  # the predicate; the subject before it is shared with what follows
                after = text[sub[1]:seg[1]].lstrip(" ,")
                if re.match(r"(?:that|whether|if)\b", after):
                    # a negated matrix clause governs its complement, up to a clause that draws a conclusion
                    stop = _CONCLUSION.search(text, sub[1], seg[1])
                    scope = (m.start(), stop.start() if stop else seg[1])
            else:
                word = re.match(r"\S+", text[m.end():sub[1]].lstrip())
                scope = (m.start(), _np_end(text, m.end(), sub[1], m.group(0) != "no") if word else m.end())
            out.append(Cue("negated", m.start(), m.end(), *scope))
    for m in cues.FAR_FROM.finditer(text, *seg):  # "far from running in parallel, ...": up to the next comma
        comma = text.find(",", m.end(), seg[1])
        out.append(Cue("negated", m.start(), m.end(), m.start(), comma if comma >= 0 else seg[1]))
    for m in cues.DENIAL.finditer(text, *seg):  # a denied role: the subject is denied too
        if any(a <= m.start() < b for a, b in blocked):
            continue
        sub = next(s for s in subs if s[0] <= m.start() < s[1])
        own = m.span("left") if m.group("left") else m.span()
        out.append(Cue("negated", *own, sub[0], max(sub[1], m.end())))
    return out


def _frames(text: str, seg: tuple[int, int], next_seg: tuple[int, int] | None) -> list[Cue]:
    out = []
    for stance, pattern in cues.FRAMES:
        for m in pattern.finditer(text, *seg):
            if m.groupdict().get("expected") and not cues.GIVEN_UP.search(text, m.end()):
                continue  # an expectation the sentence does not give up is the student's claim
            if m.groupdict().get("said_to") and cues.ENDORSED.search(text, m.end()):
                continue  # "are often said to ..., and that is what they do": the student's claim too
            if stance == "attributed" and cues.AGREED.search(text, m.end()):
                continue  # "the instructor said the heads run in parallel, and that matches my code"
            end = seg[1]
            if stance == "framed" and re.match(r"contrary to (?:popular|common|what (?:many|most|some))", m.group(0)):
                comma = text.find(",", m.end(), seg[1])
                end = comma if comma >= 0 else m.end()
            elif next_seg and not text[m.end():seg[1]].strip(" :"):
                end = next_seg[1]  # "a common misconception is: ..."
            out.append(Cue(stance, m.start(), m.end(), m.start(), end))
    contrary = [q for q in out if q.stance == "framed" and text.startswith("contrary to", q.start) and q.scope_end < seg[1]]
    # "contrary to what many people think, ...": the vague others are the belief contradicted, not the speaker's source
    return [q for q in out if not (q.stance == "attributed" and any(c.start <= q.start < c.scope_end for c in contrary))]


def _conditions(text: str, segs: list[tuple[int, int]]) -> list[Cue]:
    out = []
    for seg in segs:
        for m in cues.CONDITION.finditer(text, *seg):
            stop = re.compile(r",|\bthen\b").search(text, m.end(), seg[1])
            ante_end = stop.start() if stop else seg[1]
            rest = [(ante_end, seg[1])] if ante_end < seg[1] else []
            rest += [(seg[0], m.start())] if text[seg[0]:m.start()].strip(" ,") else []
            make_believe = bool(cues.MAKE_BELIEVE.match(m.group(0)))
            counterfactual = [r for r in rest if make_believe or cues.HYPOTHETICAL_MODAL.search(text, *r)]
            # A consequent with no comma before it lies inside the antecedent's stretch: "if the blocks were removed
            # the model *would* fall back to letter frequencies, but ..." supposes both halves; it states no rule.
            unseparated = bool(cues.HYPOTHETICAL_MODAL.search(text, m.end(), ante_end)) \
                and (not text[ante_end:].strip(" ,.") or bool(_CONTRAST.match(text[ante_end:].lstrip(" ,"))))
            out.append(Cue("supposed", m.start(), m.end(), m.start(), ante_end,
                           rule=bool(rest) and not counterfactual and not unseparated
                           and not m.group(0).startswith(("imagine", "suppos", "let"))))
            out += [Cue("supposed", m.start(), m.end(), a, b) for a, b in counterfactual]
    return out


@lru_cache(maxsize=4096)
def clauses(sentence: str, following: str = "", retracted: bool = False) -> tuple[Clause, ...]:
    """The clauses of one normalised sentence, in order, each with its stance and the cues covering it.

    Args:
        sentence: one sentence as :func:`.read.normalise` returns it.
        following: the next sentence of the same paragraph ("" if none): it may refute this one or
            distance the student from its last segment (:func:`distancing`).
        retracted: a later sentence distances the student from all of it, or takes it back ("doubted";
            :func:`distancing` says how far back a sentence reaches).

    Returns:
        Clauses that tile ``sentence`` (whitespace-only pieces left out); ``Clause.text`` is the
        clause's characters, ``Clause.stance`` one of :data:`STANCES`.
    """
    text = sentence
    segs = _segments(text)
    marks: list[Cue] = []
    for i, seg in enumerate(segs):
        subs = _subclauses(text, *seg)
        marks += _negations(text, seg, subs)
        marks += _frames(text, seg, segs[i + 1] if i + 1 < len(segs) else None)
        trailing = cues.TRAILING_FRAME_END.search(text, *seg)
        if trailing and cues.TRAILING_FRAME_START.match(text, seg[0]):  # "that heads ... is a myth"
            marks.append(Cue("framed", trailing.start(), trailing.end(), seg[0], seg[1]))
        thing = cues.THING_FRAME.search(text, *seg)
        if thing:  # "honestly the heads taking turns thing is a myth"
            marks.append(Cue("framed", thing.start(), thing.end(), seg[0], seg[1]))
        if text[seg[0]:seg[1]].rstrip().endswith("?") and not (cues.TAG_QUESTION.match(text[seg[0]:seg[1]])
                                                               and not _CORRECTION.match(following.strip())):
            marks.append(Cue("question", seg[1] - 1, seg[1], seg[0], seg[1]))
        marks += [Cue("supposed", m.start(), m.end(), seg[0], seg[1]) for m in cues.COUNTERFACTUAL.finditer(text, *seg)]
        if i and cues.REFUTE_SAME.match(text[seg[0]:seg[1]].lstrip(" ,;:")):
            prev = segs[i - 1]
            marks.append(Cue("refuted", seg[0], seg[1], *prev))
        if i and distancing(text[seg[0]:seg[1]]):  # "..., but I am not convinced"
            marks.append(Cue("doubted", seg[0], seg[1], *segs[i - 1]))
        for a, b in subs:  # "without residuals, *pancakes stay at the unigram level*"
            marks += [Cue("foreign", s, e, s, b) for s, e in foreign_subjects(text, a, b)]
        for a, b in subs[1:]:
            if cues.REFUTE_CLAUSE.match(text[a:seg[1]].lstrip(" ,(")):  # "..., which turned out to be false"
                marks.append(Cue("refuted", a, b, seg[0], a))
    marks += _conditions(text, segs)
    if cues.SARCASM_OPEN.match(text) and cues.SARCASM_CLOSE.match(following.strip()) \
            or cues.SARCASM_TAG.match(text):  # "Sure, ... . Right.", "Sure, because ..., right?", "As if ..."
        marks.append(Cue("refuted", len(text), len(text), 0, len(text)))
    label = cues.FALSE_LABEL_INLINE.match(text)
    if label and label.end() < len(text):  # "Common misconceptions: the heads split the tokens."
        marks.append(Cue("framed", 0, label.end(), label.end(), len(text)))
    if segs and text.rstrip().endswith("?") and following.rstrip().endswith("?"):  # a string of questions asks, and
        marks.append(Cue("doubted", len(text), len(text), 0, len(text)))           # no next sentence answers it
    if segs and cues.QUESTION_OPEN.match(text) and text.rstrip().endswith("?"):  # "does X, while Y?": all asked
        marks.append(Cue("question", len(text) - 1, len(text), 0, len(text)))
    if segs and cues.REFUTE_NEXT.match(following.strip()):
        marks.append(Cue("refuted", len(text), len(text), *segs[-1]))
    elif segs and distancing(following):
        marks.append(Cue("doubted", len(text), len(text), *segs[-1]))
    if retracted:
        marks.append(Cue("doubted", len(text), len(text), 0, len(text)))
    cuts = sorted({0, len(text)} | {c for q in marks for c in (q.scope_start, q.scope_end) if 0 <= c <= len(text)}
                  | {c for seg in segs for c in seg})
    out = []
    for a, b in zip(cuts, cuts[1:]):
        if not text[a:b].strip():
            continue
        covering = tuple(q for q in marks if q.covers(a, b))
        stance = min((q.stance for q in covering), key=STANCES.index, default="asserted")
        out.append(Clause(a, b, text[a:b], stance, covering))
    return tuple(out)


def asserted(sentence_clauses: tuple[Clause, ...], spans: list[tuple[int, int]], *,
             owned=lambda cue: False) -> bool:
    """Whether every span (start, end offsets into the sentence) lies only in asserting clauses.

    Args:
        sentence_clauses: :func:`clauses` of the sentence (offsets shifted when two sentences are joined).
        spans: the matched pieces of one piece of evidence.
        owned: tells whether a cue belongs to the evidence itself (a "not" its pattern spells); such a
            cue does not stop the match.

    A rule antecedent ("if you add heads, ...") may hold a piece when another piece is asserted.
    """
    state = []
    for start, end in spans:
        worst = "asserted"
        for clause in sentence_clauses:
            if clause.start < end and start < clause.end:
                for cue in clause.cues:
                    if not owned(cue) and cue.covers(start, end):
                        worst = "rule" if cue.rule and worst == "asserted" else (worst if cue.rule else cue.stance)
        state.append(worst)
    return all(s in ("asserted", "rule") for s in state) and "asserted" in state


def stance_of(sentence: str, phrase: str, following: str = "", retracted: bool = False) -> str:
    """The stance of the first occurrence of ``phrase`` in ``sentence`` (both normalised): for tests and reports.

    Raises:
        ValueError: ``phrase`` is not in ``sentence``.
    """
    at = sentence.index(phrase)
    worst = "asserted"
    for clause in clauses(sentence, following, retracted):
        for cue in clause.cues:
            if cue.covers(at, at + len(phrase)) and STANCES.index(cue.stance) < STANCES.index(worst):
                worst = cue.stance
    return worst
