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
      "I believe"; double negations are not cancelled ("it is not true that heads do not ...": negated).
``doubted``
    "*I do not believe that* heads run in parallel", "*I doubt* heads ...", "*nobody has shown that* d_model is
    split", "*it is unclear whether* ...", "*I am not sure that* ...".
    A *distancing* sentence of the same paragraph, with no domain word of its own, makes the last contrast
    segment of the sentence before it doubted ("... . *I have my doubts.*", "*Maybe.*", "*That is their claim,
    not mine.*", "*I leave that to the lecturer.*"); one that says "any/all of this" reaches every earlier
    sentence of the paragraph ("*I have not checked any of this.*"). A distancing clause after "but" or ";"
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
    (definite, named). "They say" counts as vague others: heads and tokens do not say or claim.
``question``
    the clause ends with "?" ("do heads run in parallel?"), or is a "whether" complement
    ("I wonder *whether* heads share weights").
``supposed``
    the antecedent of a conditional ("*if* the heads ran one after another, ...", "*unless* ...",
    "*suppose* ...", "*imagine* ...", "*assuming* ..."), and the consequent of an "if" in the same sentence
    when it is counterfactual ("..., the layer *would* be slower", "could have", "might"). The antecedent
    of a general rule whose consequent is asserted ("if you add heads, the width of each head shrinks") is
    marked ``rule=True``: evidence may use it when another of its pieces is asserted in that sentence.
``refuted``
    the next sentence of the paragraph refutes this one ("... . *That is wrong.*", "*This is a myth.*",
    "*They don't.*"), or a clause of the same sentence does ("..., *which is wrong*", "... *but that is false*").
    Only the last contrast segment of the refuted sentence is refuted.
``framed``
    presented as an error: "*a common misconception is that* ...", "*it is a myth that* ...", "*people
    wrongly believe* ...", "*contrary to popular belief*, heads split d_model" (the belief phrase is
    framed, what follows the comma is asserted).

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

#: Stances in order of precedence (a clause under several cues shows the first).
STANCES = ("refuted", "framed", "attributed", "doubted", "question", "supposed", "negated", "asserted")


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


_SEGMENT = re.compile(r";|:|\?|\b(?:but|however|whereas|while|although|though|in fact|actually|in reality)\b"
                      r"|\binstead\b(?! of\b)")
_SUBCLAUSE = re.compile(r"[,()]|\s-\s|\b(?:and|or|so|because|since|which|who|that|when|as|thus|hence|then)\b")
_NOT_NEGATION = re.compile(r"\bnot (?:only|just|merely)\b|\bno (?:more|less|fewer) than\b|\bno matter\b|"
                           r"\bwhether or not\b|\bno doubt\b|\bnothing but\b|\bnot least\b")
_VERBAL = re.compile(r"\b(?:not|never|nor|neither|nobody|no one|no-one|none|nothing|no longer)\b")
_PHRASAL = re.compile(r"\b(?:no|without|instead of|rather than)\b")
#: Words that deny a thing's role rather than negating a verb: they cover their whole sub-clause, subject included
#: ("warm-up *is irrelevant* to it", "the additions *make no difference*", "a layer norm leaves the gradient
#: *untouched*": the cue is the last word, so evidence that spells "untouched" owns it).
_DENIAL = re.compile(
    r"\b(?:is|are|was|were|be|being|been|seems?|seemed|becomes?|became|remains?|remained)\s+(?:(?:completely|entirely|"
    r"totally|quite|largely|simply|just|really|actually|mostly|basically)\s+)?(?:irrelevant|unnecessary|unneeded|"
    r"superfluous|pointless|redundant|unimportant|immaterial|no different|not (?:needed|necessary|required|important|"
    r"essential|relevant|involved)|of no (?:importance|consequence|use))\b"
    r"|\b(?:has|have|had)\s+(?:nothing|little)\s+to do with\b|\bplay(?:s|ed)?\s+(?:no|little)\s+(?:role|part)\b"
    r"|\bmak(?:es?|ing)\s+(?:no|little)\s+difference\b|\bmade\s+(?:no|little)\s+difference\b"
    r"|\b(?:does|do|did)\s+not\s+(?:matter|make (?:a|any) difference)\b"
    r"|\bleav(?:es?|ing)\b(?:\s+[\w'-]+){1,5}?\s+(?P<left>untouched|unchanged|unaffected|alone)\b")
_NP_STOP = re.compile(r"(?:is|are|was|were|be|been|has|have|had|do|does|did|can|could|will|would|must|should|"
                      r"may|might|shall|gets?|needs?)$")
_NP_NEW = re.compile(r"(?:every|each|all|both|it|they|he|she|we|you|this)$")

_I = r"(?:i|we)(?: personally)?"
#: Vague others (people, not heads or tokens) whose word a student may only report.
_WHO = (r"(?:people|folks|authors|students|sources|blogs?|blog posts|posts|tutorials|articles|websites|sites|videos|"
        r"researchers|writers|commentators|textbooks|books|papers|engineers|experts|users|friends|colleagues|"
        r"classmates|fans|critics|beginners|newcomers|practitioners)")
_OFTEN = r"(?: also| often| sometimes| usually| commonly| even| still| all)?"
_SAY = (r"(?:say|says|said|claim|claims|claimed|think|thinks|believe|believes|argue|argues|assume|assumes|suggest|"
        r"suggests|insist|insists|reckon|reckons|maintain|maintains|state|states|write|writes|wrote|expect|expects|"
        r"imagine|imagines|suppose|supposes)")
_FRAMES: tuple[tuple[str, re.Pattern], ...] = tuple((stance, re.compile(p)) for stance, p in (
    ("framed", r"\b(?:a|one|the|another) (?:very )?(?:common |popular |frequent |widespread |classic |typical |"
               r"usual )?(?:misconception|myth|mistake|error|fallacy|misunderstanding|confusion|trap|pitfall)"
               r"s? (?:is|are|was)\b(?: that\b| to think\b)?"),
    ("framed", r"\b(?:it|this) is (?:a |an )?(?:common |popular |widespread )?(?:myth|misconception|mistake|"
               r"error|fallacy) (?:that|to (?:think|say|believe))\b"),
    ("framed", r"\b(?:wrongly|mistakenly|incorrectly|falsely|erroneously) (?:believe|believes|think|thinks|"
               r"assume|assumes|say|says|claim|claims|imagine|imagines)\b(?: that\b)?"),
    ("framed", r"\bcontrary to (?:popular belief|common belief|what (?:many|most|some) (?:people )?"
               r"(?:think|believe|assume|say))\b"),
    ("negated", r"\b(?:it|this) is (?:not|never) (?:true|the case|correct|right|so) that\b|\bit is (?:false|"
                r"wrong|incorrect|untrue) (?:that|to say)\b|\bnot the case that\b"),
    ("doubted", rf"\b{_I} (?:do not|did not|can not|would not|no longer) (?:believe|think|buy|accept|agree)\b"
                r"(?: that\b)?"),
    ("doubted", rf"\b{_I} (?:doubt|question)\b(?: that\b| whether\b)?|\bi am (?:not (?:sure|certain|convinced)|"
                r"unsure|unconvinced|sceptical|skeptical)\b(?: (?:that|whether|if)\b)?|\bnot sure (?:that|whether|"
                r"if)\b"),
    ("doubted", r"\b(?:nobody|no one|no-one|no study|no paper|no one ever) (?:has |have )?(?:ever )?(?:shown|"
                r"proved|proven|demonstrated|established|confirmed)\b(?: that\b)?"),
    ("doubted", r"\bit is (?:unclear|not clear|uncertain|doubtful|debatable|not obvious|not known|unknown|"
                r"an open question)\b(?: (?:whether|if|that)\b)?"),
    ("attributed", rf"\b(?:some|many|a few|few|several|most|certain|various)(?: (?:of (?:the|my|our) )?{_WHO})?{_OFTEN} "
                   rf"{_SAY}\b(?: that\b)?"),
    ("attributed", rf"(?<!\bthe )(?<!\bthese )(?<!\bthose )\b(?:others|someone|somebody|many people|most people|"
                   rf"{_WHO}){_OFTEN} {_SAY}\b(?: that\b)?"),
    ("attributed", rf"\bthey{_OFTEN} (?:say|says|claim|claims|believe|argue|insist|reckon|maintain|tell us)\b(?: that\b)?"),
    ("attributed", r"\bit (?:is|was|has been|gets) (?:also )?(?:often |commonly |sometimes |widely |frequently |usually )?"
                   r"(?:said|claimed|believed|thought|assumed|argued|suggested|rumou?red|reported)\b(?: that\b)?"),
    ("attributed", r"\b(?:apparently|supposedly|allegedly|reportedly|purportedly|rumou?r has it|so they say|so i am told|"
                   r"i (?:have )?heard|i read somewhere)\b(?: that\b)?"),
    ("attributed", rf"\baccording to (?:(?:some|many|a few|several|certain|various|its|their|his|her|my|our) )?"
                   rf"(?:{_WHO}|others|someone|somebody|rumou?r|popular|folk|the internet|online|hearsay)\b"
                   r"|\baccording to some\b"),
    ("attributed", r"\b(?:one|you|someone|a student|a reader) (?:might|may|could|would) (?:think|say|assume|"
                   r"expect|believe|guess|imagine|suppose)\b(?: that\b)?|\bit is (?:\w+ )?tempting to (?:think|say|assume|"
                   r"believe)\b(?: that\b)?"),
    ("question", r"\bwhether\b"),
))
_CONDITION = re.compile(r"\b(?:if|unless|suppose|supposing|imagine|assuming|assume that|in case|provided that|"
                        r"as if|what if)\b")
_COUNTERFACTUAL = re.compile(r"\b(?:would|could|might|would have|could have|might have)\b")
_REFUTE_NEXT = re.compile(
    r"^(?:but |and |yet )?(?:this|that|it|which|the (?:idea|claim|belief)) (?:is|was|would be|is simply|is just) "
    r"(?:wrong|false|incorrect|untrue|mistaken|a myth|a misconception|a mistake|not (?:true|correct|right|so|"
    r"the case|how it works))\b|^(?:wrong|false|untrue|not (?:true|so)|nope|no)\s*[,.!:;]|"
    r"^(?:they|it|this|that|he|she) (?:do|does|did|is|are) not\s*(?:[,.!:;]|$|because\b)")
#: A sentence (or a clause after "but") that distances the student from what came before it.
_DISTANCE = re.compile(
    r"(?:^|[;:]\s*|\b(?:but|yet|though|and|still|then again)\s+)(?:"
    r"(?:i(?: am|'m) (?:not (?:so |entirely |completely |really |at all |fully )?(?:sure|certain|convinced)|unsure|"
    r"unconvinced|sceptical|skeptical|doubtful)|i have (?:my |some |serious |real |strong )?doubts)"
    r"(?=\s*(?:[.!,;]|$|(?:about|of) (?:it|that|this|them|these|those|all (?:of )?this)\b|(?:that|if|whether) (?:it|this|"
    r"that|they|these|those) (?:is|are|was|were|holds?|works?)\b|(?:it|this|that|they) (?:is|are|was|were|holds?)\b|"
    r"either way|at all|yet))|"
    r"i (?:doubt|question) (?:it|that|this|them|these|those)\b|i (?:do not|did not) (?:buy|believe|trust) (?:it|that|this|them)\b|"
    r"(?:that|this|it) is (?:only |just )?(?:their|his|her|the authors'|other people's) (?:claim|view|opinion|idea|story|theory)|"
    r"i would not (?:commit|bet|swear|vouch|rely|put money)|i have not (?:checked|verified|confirmed|tested|looked)|"
    r"i (?:can not|could not) (?:confirm|verify|check|vouch|say for sure)|i do not (?:really )?know\b|"
    r"i (?:will |would |shall )?leave (?:that|this|it|the rest) to|(?:that|this) is (?:what|how) (?:they|people|some|"
    r"others) (?:say|claim|think|believe|see it)|(?:maybe|perhaps|possibly|who knows|not sure|no idea|hard to say|"
    r"or not)\s*[.!?]*$)")
#: A distancing sentence that reaches every sentence of its paragraph before it, not just the last one.
_DISTANCE_ALL = re.compile(r"\b(?:any|all|none|most|each) of (?:this|that|these|those|it|them)\b|\ball (?:of )?this\b|"
                           r"\bthese (?:claims|statements|ideas|things|points|views)\b")


def distancing(sentence: str) -> str:
    """How far a distancing sentence reaches back: ``"previous"`` (the last contrast segment of the sentence
    before it), ``"paragraph"`` (every earlier sentence of its paragraph: "I have not checked any of this"),
    or ``""`` (it does not distance).

    A sentence distances when it says the student does not stand behind something ("I have my doubts",
    "That is their claim, not mine", "Maybe.", "I leave that to the lecturer") and has no domain word of its
    own: "I am not sure about the exact numbers, but each head has 64 dimensions" states something itself.
    """
    from .topic import has_domain_word  # topic does not import this module; import here keeps the layers clear

    if not _DISTANCE.search(sentence.strip()) or has_domain_word(sentence):
        return ""
    return "paragraph" if _DISTANCE_ALL.search(sentence) else "previous"


_REFUTE_SAME = re.compile(r"^\s*(?:and |but )?(?:that|this|which|it) (?:is|was) (?:simply |just )?(?:wrong|false|"
                          r"incorrect|untrue|a myth|a misconception|a mistake|not (?:true|correct|right))\b")


def _segments(text: str) -> list[tuple[int, int]]:
    """Contrast segments: spans between ";", ":", "?", "but", "however", ... (the marker starts the next)."""
    cuts = [0]
    for m in _SEGMENT.finditer(text):
        cut = m.end() if m.group(0) in ";:?" else m.start()
        if cut > cuts[-1]:
            cuts.append(cut)
    cuts.append(len(text))
    return [(a, b) for a, b in zip(cuts, cuts[1:]) if text[a:b].strip()]


def _subclauses(text: str, start: int, end: int) -> list[tuple[int, int]]:
    """Sub-clauses of one segment (the scope of a verbal negation)."""
    cuts = [start]
    for m in _SUBCLAUSE.finditer(text, start, end):
        if m.start() > cuts[-1]:
            cuts.append(m.start())
    cuts.append(end)
    return [(a, b) for a, b in zip(cuts, cuts[1:]) if text[a:b].strip()]


def _np_end(text: str, start: int, limit: int) -> int:
    """End of the noun phrase that starts at ``start`` (stops at a verb, a new subject, 6 words, or ``limit``)."""
    end = start
    for i, m in enumerate(re.finditer(r"\S+", text[start:limit])):
        word = m.group(0).strip(".,!?\"'")
        if i >= 6 or _NP_STOP.match(word) or (i and _NP_NEW.match(word)):
            break
        end = start + m.end()
    return end


def _negations(text: str, seg: tuple[int, int], subs: list[tuple[int, int]]) -> list[Cue]:
    """Negation cues of one segment, each with its scope (see the module docstring)."""
    blocked = [(m.start(), m.end()) for m in _NOT_NEGATION.finditer(text, *seg)]
    out = []
    for pattern, verbal in ((_VERBAL, True), (_PHRASAL, False)):
        for m in pattern.finditer(text, *seg):
            if any(a <= m.start() < b for a, b in blocked):
                continue
            sub = next(s for s in subs if s[0] <= m.start() < s[1])
            opens = not text[sub[0]:m.start()].strip(" ,(-")
            if verbal or (m.group(0) == "no" and opens):
                scope = (m.start(), sub[1])  # the predicate; the subject before it is shared with what follows
                after = text[sub[1]:seg[1]].lstrip(" ,")
                if re.match(r"(?:that|whether|if)\b", after):  # a negated matrix clause governs its complement
                    scope = (m.start(), seg[1])
            else:
                word = re.match(r"\S+", text[m.end():sub[1]].lstrip())
                scope = (m.start(), _np_end(text, m.end(), sub[1]) if word else m.end())
            out.append(Cue("negated", m.start(), m.end(), *scope))
    for m in _DENIAL.finditer(text, *seg):  # a denied role: the subject is denied too
        if any(a <= m.start() < b for a, b in blocked):
            continue
        sub = next(s for s in subs if s[0] <= m.start() < s[1])
        own = m.span("left") if m.group("left") else m.span()
        out.append(Cue("negated", *own, sub[0], max(sub[1], m.end())))
    return out


def _frames(text: str, seg: tuple[int, int], next_seg: tuple[int, int] | None) -> list[Cue]:
    out = []
    for stance, pattern in _FRAMES:
        for m in pattern.finditer(text, *seg):
            end = seg[1]
            if stance == "framed" and m.group(0).startswith("contrary"):
                comma = text.find(",", m.end(), seg[1])
                end = comma if comma >= 0 else m.end()
            elif next_seg and not text[m.end():seg[1]].strip(" :"):
                end = next_seg[1]  # "a common misconception is: ..."
            out.append(Cue(stance, m.start(), m.end(), m.start(), end))
    return out


def _conditions(text: str, segs: list[tuple[int, int]]) -> list[Cue]:
    out = []
    for seg in segs:
        for m in _CONDITION.finditer(text, *seg):
            stop = re.compile(r",|\bthen\b").search(text, m.end(), seg[1])
            ante_end = stop.start() if stop else seg[1]
            rest = [(ante_end, seg[1])] if ante_end < seg[1] else []
            rest += [(seg[0], m.start())] if text[seg[0]:m.start()].strip(" ,") else []
            counterfactual = [r for r in rest if _COUNTERFACTUAL.search(text, *r)]
            out.append(Cue("supposed", m.start(), m.end(), m.start(), ante_end,
                           rule=bool(rest) and not counterfactual and not m.group(0).startswith(("imagine", "suppos"))))
            out += [Cue("supposed", m.start(), m.end(), a, b) for a, b in counterfactual]
    return out


@lru_cache(maxsize=4096)
def clauses(sentence: str, following: str = "", retracted: bool = False) -> tuple[Clause, ...]:
    """The clauses of one normalised sentence, in order, each with its stance and the cues covering it.

    Args:
        sentence: one sentence as :func:`.read.normalise` returns it.
        following: the next sentence of the same paragraph ("" if none): it may refute this one or
            distance the student from its last segment (:func:`distancing`).
        retracted: a later sentence of the paragraph distances the student from all of it ("doubted").

    Returns:
        Clauses that tile ``sentence`` (whitespace-only pieces left out); ``Clause.text`` is the
        clause's characters, ``Clause.stance`` one of :data:`STANCES`.
    """
    text = sentence
    segs = _segments(text)
    cues: list[Cue] = []
    for i, seg in enumerate(segs):
        subs = _subclauses(text, *seg)
        cues += _negations(text, seg, subs)
        cues += _frames(text, seg, segs[i + 1] if i + 1 < len(segs) else None)
        if text[seg[0]:seg[1]].rstrip().endswith("?"):
            cues.append(Cue("question", seg[1] - 1, seg[1], seg[0], seg[1]))
        if i and _REFUTE_SAME.match(text[seg[0]:seg[1]].lstrip(" ,;:")):
            prev = segs[i - 1]
            cues.append(Cue("refuted", seg[0], seg[1], *prev))
        if i and distancing(text[seg[0]:seg[1]]):  # "..., but I am not convinced"
            cues.append(Cue("doubted", seg[0], seg[1], *segs[i - 1]))
        for a, b in subs[1:]:
            if re.match(r"which (?:is|was) (?:wrong|false|incorrect|untrue|a myth|not true)\b", text[a:b]):
                cues.append(Cue("refuted", a, b, seg[0], a))
    cues += _conditions(text, segs)
    if segs and _REFUTE_NEXT.match(following.strip()):
        cues.append(Cue("refuted", len(text), len(text), *segs[-1]))
    elif segs and distancing(following):
        cues.append(Cue("doubted", len(text), len(text), *segs[-1]))
    if retracted:
        cues.append(Cue("doubted", len(text), len(text), 0, len(text)))
    cuts = sorted({0, len(text)} | {c for q in cues for c in (q.scope_start, q.scope_end) if 0 <= c <= len(text)}
                  | {c for seg in segs for c in seg})
    out = []
    for a, b in zip(cuts, cuts[1:]):
        if not text[a:b].strip():
            continue
        covering = tuple(q for q in cues if q.covers(a, b))
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
