"""Part of step 4, concepts: the sentences a piece of evidence is matched in, and how their clauses stand in context.

:func:`candidates` gives the scopes (each sentence; a sentence whose leading "they" / "it" stands for the previous
sentence's subject, read with that subject in its place, :func:`resolve_leading`; a sentence whose "they" after a
belief frame's contrast stands for the belief's subject, :func:`resolve_after_frame`; and with ``sentences = 2`` each
pair of neighbours). :func:`scope_clauses` gives a scope's clauses (:mod:`.assertions`) read in their context: the
next sentence, which may refute or distance; a question the next sentence answers (:func:`_answers`), which then
states its topic; a later sentence that takes it back, or another speaker's words the answer reports
(:func:`retracted`).
"""
from __future__ import annotations

import re
from collections import Counter

from . import cues
from .assertions import Clause, Cue, clauses, distancing
from .read import FUNCTION_WORDS
from .reported import reported
from .sentences import Unit


def candidates(units_: list[Unit], sentences: int):
    """Scopes to search, each with the normalised text of its units and the substitution made (or None):
    each unit, then each unit whose leading "they" stands for the previous sentence's subject, read with the
    subject in its place (:func:`resolve_leading`), and with ``sentences=2`` each pair of neighbours in one block (or
    across a paragraph break, when the second paragraph opens by continuing the first: :data:`_CONTINUES`)."""
    for u in units_:
        yield (u,), (u.norm,), None
    for u, v in zip(units_, units_[1:]):
        if v.block == u.block and not (u.list_item or v.list_item):
            resolved = resolve_leading(u.norm, v.norm)
            if resolved:
                yield (v,), (resolved[0],), resolved[1:]
    for u in units_:
        resolved = resolve_after_frame(u.norm)
        if resolved:
            yield (u,), (resolved[0],), resolved[1:]
    if sentences >= 2:  # single sentences first: the shortest quote wins; list items never pair up
        for u, v in zip(units_, units_[1:]):
            joined = v.block == u.block or v.section == u.section and _CONTINUES.match(v.norm)
            if joined and not (u.list_item or v.list_item):
                yield (u, v), (u.norm, v.norm), None


#: A paragraph that opens by continuing the one before ("The second is that ...", "On top of that, ..."): its first
#: sentence pairs with the last sentence before it.
_CONTINUES = re.compile(r"(?:the (?:second|other|next|third) (?:reason|thing|problem|effect|point|part)? ?(?:is|was)\b|"
                        r"second(?:ly)?,|third(?:ly)?,|also,|on top of (?:that|this)|worse(?:,| still)|moreover|"
                        r"furthermore|in addition|besides(?:,| that)|that is (?:why|how)|this is (?:why|how)|"
                        r"as a result|because of (?:this|that))")
#: A leading plural pronoun that may stand for the previous sentence's subject ("they", "these are").
PRONOUN = re.compile(r"(?:(?:and|but|so|yet|instead|rather),? )?(?:(?:each|all|both|some|none|most) of )?"
                     r"(?P<p>they|them|(?:these|those)(?= (?:are|were|do|does|did|can|could|will|would|must|all|each|"
                     r"also|both|only|not|never|then|still|just|run|work|have)\b))\b")
_SUBJECT = re.compile(r"(?:(?:in|for|within|inside|with) [^,]{1,40}, )?((?:(?:the|these|those|all|all the|several|"
                      r"multiple|many|both|its|their|\d+|h) )?(?:[\w-]+ ){0,2}?[\w-]+s) (?=(?:are|were|do|does|did|"
                      r"can|could|will|would|must|should|may|might|all|each|also|both|only|never|not|then|still|run|"
                      r"work|have|read|see|look|attend|compute|learn|split|share|use|get|operate|process|act|differ|"
                      r"produce|focus|speciali[sz]e|capture|track)\b)")


#: A leading "it" that stands for something: not the dummy "it" of "it is important to ...", "it seems ...".
_IT = re.compile(r"(?:(?:and|but|so|yet|then|instead),? )?(?P<p>it)\b(?! (?:is|was) (?:\w+ )?(?:important|clear|easy|"
                 r"hard|possible|impossible|true|false|worth|known|likely|unlikely|useful|necessary|interesting|natural|"
                 r"surprising|tempting|common|fair|obvious|enough)\b)(?! (?:seems|seemed|turns out|turned out|means|meant|"
                 r"follows|appears|appeared|helps|is said|was said|is thought|is often|matters|depends)\b)")
#: The simple singular subject that opens a sentence, before a verb a singular subject takes: "the layer has",
#: "the MLP works", "layer norm keeps".
_SUBJECT_ONE = re.compile(r"(?:(?:in|for|within|inside|with) [^,]{1,40}, )?((?:(?:the|this|that|its|our|each|every) )"
                          r"(?:[\w-]+ ){0,2}?[\w-]+|attention|self-attention|layer ?norm|multi-head attention) "
                          r"(?=(?:is|was|has|had|does|did|can|could|will|would|must|should|may|might|also|only|never|"
                          r"not|then|still|just|always|\w+s)\b)")


def resolve_leading(previous: str, sentence: str) -> tuple[str, int, int, int] | None:
    """``sentence`` with a leading "they" ("but they", "each of them", "these are") replaced by the simple
    plural subject that opens ``previous`` ("the heads are not sequential. they run in parallel"), or a
    leading "it" by its simple singular subject ("the layer has several heads. it runs them one at a time";
    not the dummy "it is important to ..."), for matching only; None when either is missing or the subject is
    not simple (a determiner, up to two modifiers and a noun, no function word: "some people" or "nobody" are
    left alone).

    Returns:
        (resolved text, pronoun start, pronoun end, subject length): offsets of the pronoun in ``sentence``.
    """
    pronoun, subject = PRONOUN.match(sentence), _SUBJECT.match(previous)
    if not pronoun:
        if any(p.match(sentence) for _, p in cues.FRAMES):
            return None  # a frame's dummy "it": "it is a myth that ...", "it is wrong to say that ..." (read with a
            # subject in its place, "attention is a myth that ...", the frame would be lost)
        pronoun, subject = _IT.match(sentence), _SUBJECT_ONE.match(previous)
        if subject and any(w.endswith("s") and not w.endswith("ss") for w in subject.group(1).split()[1:]):
            return None  # a plural noun ("the heads") or a verb's -s form is no singular subject
    if not pronoun or not subject:
        return None
    words_ = subject.group(1).split()
    if any(w in FUNCTION_WORDS for w in words_[1:]) or words_[-1] in FUNCTION_WORDS or words_[-1].endswith("ss"):
        return None
    p0, p1 = pronoun.span("p")
    return sentence[:p0] + subject.group(1) + sentence[p1:], p0, p1, len(subject.group(1))


#: The belief's simple plural subject, with its determiner: "the heads", "all 8 heads", "the attention heads".
_BELIEF_SUBJECT = re.compile(r"((?:the|these|those|all|all the|several|multiple|many|both|\d+|all \d+|h) (?:[\w-]+ ){0,2}?"
                             r"[\w-]+s) (?=[a-z])")
#: The contrast after the belief, then the writer's "they": ", but they", "; they", ", yet in fact they".
_CONTRAST_THEY = re.compile(r"(?:, but|; but|;|, yet|, whereas|, while|, though|, although)(?:,? (?:in fact|actually|"
                            r"really|in reality),?)? (?P<p>they)\b")


def resolve_after_frame(sentence: str) -> tuple[str, int, int, int] | None:
    """``sentence`` with the "they" after the contrast of a belief frame (an attribution that opens it) replaced by the
    belief's simple plural subject ("you might think the heads take turns, but *they* run in parallel" is read with
    "the heads" in its place), for matching only; None without a frame, a simple subject right after it or such a
    "they".

    Returns:
        (resolved text, pronoun start, pronoun end, subject length), as :func:`resolve_leading`.
    """
    if not _CONTRAST_THEY.search(sentence):
        return None
    # the belief frame is the attribution cue that opens the sentence (.cues: "you might think", "many people assume
    # that", "it is tempting to think")
    frame = next((q for c in clauses(sentence) for q in c.cues if q.stance == "attributed" and q.start == 0), None)
    subject = frame and _BELIEF_SUBJECT.match(sentence, frame.end + 1)
    if not subject:
        return None
    they = _CONTRAST_THEY.search(sentence, subject.end())
    words_ = re.sub(r"^all (?:the )?", "", subject.group(1)).split()
    if not they or any(w in FUNCTION_WORDS for w in words_[1:]) or words_[-1].endswith("ss"):
        return None
    p0, p1 = they.span("p")
    return sentence[:p0] + subject.group(1) + sentence[p1:], p0, p1, len(subject.group(1))


def back(shift: tuple[int, int, int] | None, at: int, end: bool = False) -> int:
    """An offset in a resolved text mapped back to the unit's own text (the subject maps onto the pronoun:
    a start inside it to the pronoun's start, an ``end`` inside it to the pronoun's end)."""
    if not shift:
        return at
    p0, p1, length = shift
    return at if at < p0 else (p1 if end else p0) if at < p0 + length else at - length + (p1 - p0)


def word_index(text: str, offset: int) -> int:
    return len(text[:offset].split())


#: A mention right after one of these is the thing compared with, not the subject: "BERT, *unlike GPT*, ...".
#: :func:`retracted` of the unit lists seen last: ``find`` asks for it once per piece of evidence, on the same units.
_RETRACTED: dict[tuple, list[bool]] = {}


def retracted(units_: list[Unit], *, reported_too: bool = True) -> list[bool]:
    """:func:`_retracted`, remembered for the last unit lists (keyed by what it reads of each unit)."""
    key = (reported_too, *((u.norm, u.section, u.block, u.list_item, u.quoted) for u in units_))
    if key not in _RETRACTED:
        if len(_RETRACTED) >= 64:
            _RETRACTED.clear()
        _RETRACTED[key] = _retracted(units_, reported_too=reported_too)
    return _RETRACTED[key]


def _retracted(units_: list[Unit], *, reported_too: bool = True) -> list[bool]:
    """For each unit, whether the student does not stand behind it: another speaker's words they report
    (:func:`.reported.reported`), or a sentence a later one takes back (:func:`.assertions.distancing`): one that reaches its
    paragraph ("None of that is true.") in the same block, one that reaches the answer ("Everything I wrote above
    is false.") anywhere after it. List items retract nothing.

    A label that calls what follows false ("Wrong claims:", "Myths:", :data:`.cues.FALSE_LABEL`) reaches the list
    under it: each following one-sentence block (a bullet) or list item of its section, up to a block of several
    sentences, a new section, or a sentence that opens with a contrast ("In reality, ...", "But ...")."""
    # a chatbot's turn or quoted answer is its claim (.reported), unless asked to read it as the student's
    out = reported(units_) if reported_too else [False] * len(units_)
    per_block = Counter(u.block for u in units_)
    label: int | None = None  # section of the open label
    for i, u in enumerate(units_):
        if cues.FALSE_LABEL.match(u.norm.strip()):
            label = u.section
        elif label is not None:
            ends = u.section != label or (per_block[u.block] > 1 and not u.list_item) \
                or cues.SEGMENT.match(u.norm.lstrip())
            if ends:
                label = None
            else:
                out[i] = True
    answer = False
    paragraph: set[int] = set()
    for i in range(len(units_) - 1, -1, -1):
        u = units_[i]
        if u.list_item:
            continue
        out[i] = out[i] or answer or u.block in paragraph
        reach = distancing(u.norm)
        answer = answer or reach == "answer"
        if reach == "paragraph":
            paragraph.add(u.block)
    return out


def scope_clauses(scope: tuple[Unit, ...], norms: tuple[str, ...], units_: list[Unit], index: dict[int, int],
             retractions: list[bool]) -> tuple[Clause, ...]:
    """The clauses of a scope (one sentence or two joined by a space, ``norms`` their texts), offsets into the
    joined text; ``retractions`` from :func:`retracted`."""
    out: list[Clause] = []
    offset = 0
    for u, norm in zip(scope, norms):
        i = index[id(u)]
        nxt = units_[i + 1] if i + 1 < len(units_) else None
        following = nxt.norm if nxt and nxt.block == u.block and not nxt.list_item else _reply(units_, i)
        answered = len(scope) == 2 and u is scope[0] and norm.endswith("?") \
            and _answers(norm, cues.SPEAKER.sub("", scope[1].norm, count=1))
        retracted = retractions[i]
        for c in clauses(norm, following, retracted):  # a question answered by the next sentence sets its topic
            out.append(Clause(c.start + offset, c.end + offset, c.text, c.stance, tuple(
                Cue(q.stance, q.start + offset, q.end + offset, q.scope_start + offset, q.scope_end + offset, q.rule)
                for q in c.cues if not (answered and q.stance == "question"))))
        offset += len(norm) + 1
    return tuple(out)


def _answers(question: str, reply: str) -> bool:
    """Whether ``reply`` answers ``question`` so that the question states what it asks: any reply but a denial does
    ("why does post-norm fail? the norm sits on the path", "does the gradient reach block 1? through the additions, it
    does"); a yes/no question ("would a warm-up have saved it?") is not answered by a reply that gives no answer
    either ("i did not try it", "hard to say", "maybe") or denies it ("it did not in my runs")."""
    if re.match(r"(?:no|not|never|nope|wrong|definitely not|certainly not|of course not|absolutely not)\b", reply):
        return False
    if _UNSURE.match(reply):
        return False
    if _YES_IN.search(reply):  # "it is not hard to see: yes, ...", "yes, although I am not sure how to prove it"
        return True
    return not (cues.YES_NO_OPEN.match(question) and (_NO_ANSWER.match(reply) or _UNSURE.search(reply)))


#: A reply that says the writer could not tell ("that is the part I could not work out", "I'm honestly not sure").
_UNSURE = re.compile(r"\bi (?:could|can) not (?:decide|tell|say|work|figure|see)\b|\bnot sure\b|\bno idea\b|\bi do not know\b")
#: A yes in a reply, at its start or after a colon, comma or "but": the question is answered.
_YES_IN = re.compile(r"(?:^|[:;,]\s*|\bbut\s+)(?:yes|yeah|yep|indeed)\b")
#: A reply to a yes/no question that gives no yes: a denial, a doubt, or "I did not try it" (with :data:`_UNSURE`).
_NO_ANSWER = re.compile(r"(?:well,? |hmm,? |honestly,? )?(?:i (?:did|do|have|had) not\b|i (?:am|was) not sure\b|"
                        r"(?:it|they|this|that) (?:did|does|do|is|are|was|were|would|will|can|could) not"
                        r"(?:\s*[.,;:!?]|\s+(?:in|for|seem|appear|as far|really|always|quite)\b|$)|"
                        r"(?:it is |that is |this is )?(?:hard|impossible|difficult) to (?:say|tell)\b|who knows\b|maybe\b|"
                        r"perhaps\b|possibly\b|unclear\b|"
                        r"(?:that|this|it) is (?:unclear|not clear|an open question)\b)")


def _reply(units_: list[Unit], i: int) -> str:
    """The next turn of a written dialogue when unit ``i`` ends one speaker's turn and the next unit opens another's
    (each turn its own paragraph: "Student: ..." then "Tutor: Not if ..."), its label left out, so that the reply
    may refute the last sentence of the turn before it as a next sentence does (:data:`.cues.REFUTE_NEXT`); else
    ""."""
    nxt = units_[i + 1] if i + 1 < len(units_) else None
    if nxt is None or nxt.list_item or nxt.block == units_[i].block:
        return ""
    first = i
    while first and units_[first - 1].block == units_[i].block:
        first -= 1
    mine, theirs = cues.SPEAKER.match(units_[first].norm), cues.SPEAKER.match(nxt.norm)
    if not mine or not theirs or mine.group(1) == theirs.group(1):
        return ""
    return nxt.norm[theirs.end():]
