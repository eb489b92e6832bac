"""Part of step 6, judge: how sure the automatic grade is, and why a person should read the answer.

Every reason to read an answer has a *penalty* in [0, 1], and::

    confidence = 1 - (the largest penalty)      # 1.0 when there is no reason at all

so a confidence is always explained by one named reason, and a teacher who sorts by confidence reads
the answers with the strongest reason first. The penalties (:data:`PENALTY`):

=================  =======  ================================================================================
reason             penalty  when
=================  =======  ================================================================================
copied             0.8      mostly copied from a copy source (the copying step says so)
other language     0.7      a paragraph (or the whole answer) does not read as English
off-topic          0.6      over 30 % of the words in sentences on neither the model nor the picture (.topic)
nonsense           0.6      over 45 % of the words in sentences mixing the lesson's terms with two or more
                            unrelated nouns ("the residual of the soup", .mixing.mixed_share), or over 55 %
                            in sentences laying the lesson's terms over another world ("the residual
                            connections are the hoses", "head of lettuce", .worlds.world_share), or over 80 %
                            of the words that use the lesson's terms in sentences that also name a foreign
                            thing (.worlds.entangled_share), or the terms told as the characters of a story
                            (he, she, "BERT, who ...": 5 or more, over 2 per 100 words, .worlds.characters),
                            or written as another kind of text: a letter's, a speech's, an advert's conventions
                            and many words foreign to answers on this lesson (.genre), or the lesson's terms said
                            mostly among foreign things with 20 % or more foreign words and few comparisons
                            (:data:`FOREIGN_WORLD_SHARE`), or the lesson's terms joined in relations the model
                            does not have ("the layer norm's letter frequencies", "its query is the MLP": a word
                            salad, .relations)
contradiction      0.5      a concept earned and denied in another sentence, or a misconception made on a
                            question where a concept is earned
error named        0.5      a misconception (or a 0-point named error) found on a question that earns nothing
reported           0.5      at least :data:`REPORTED_SHARE` of the words are another speaker's, reported (a
                            chatbot's turn of a pasted transcript, a chatbot's answer quoted: .reported), or a
                            line is found only in such words
borderline         0.5      the total is within ``review_band`` of the pass mark
keywords           0.5      mostly keywords (capped)
partly copied      0.4      a share of the answer is found in a copy source, below "copied"
unsure             0.4      a sentence speaks of what a misconception is about (its ``near`` patterns: "the
                            FFN ... the positions ... blended") and neither the error nor the line it opposes
                            was found in it (:func:`unread_near`): an error in words no evidence knows; or
                            the exercise's learned error model (.error_model) finds a sentence the rubric did
                            not read likely to state a known mistake (:func:`model_routed`; nothing is named)
other              0.5      any other reason a step gives (matched by its first words, see :func:`penalty_of`)
=================  =======  ================================================================================

The reasons are plain sentences (``Assessment.needs_review``); the judge lifts them into
``SubmissionResult.needs_review``. Reasons given by other steps (copying, keyword list, the whole-answer
language test in :mod:`.judge`) are scored by :func:`penalty_of`.
"""
from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path

from .assertions import clauses
from .concepts import find
from .reported import reported
from .spec import Rubric
from .sentences import Unit
from .structure import AnswerSpec, foreign_paragraphs, load_spec
from . import cues, error_model, genre, mixing, relations, topic, worlds

PENALTY = {"copied": 0.8, "other language": 0.7, "off-topic": 0.6, "nonsense": 0.6, "contradiction": 0.5, "error named": 0.5,
           "reported": 0.5, "borderline": 0.5, "keywords": 0.5, "partly copied": 0.4, "unsure": 0.4, "other": 0.5}
#: First words of the reasons other steps give, and their kind (checked in this order).
_KIND_OF_REASON = (("partly copied", "partly copied"), ("copied", "copied"), ("mostly keywords", "keywords"),
                   ("the answer may not be in english", "other language"), ("borderline", "borderline"),
                   ("unsure", "unsure"))
#: Off-topic: more than this share of the answer's words stand in off-topic sentences (:func:`.topic.topical`).
OFF_TOPIC_SHARE = 0.3
#: Nonsense: more than this share of the words stand in sentences mixing lesson terms with unrelated nouns
#: (:func:`.mixing.mixed_share`; genuine answers of tests/prose's dev split reach 0.32, the nonsense ones 0.66).
MIXED_SHARE = 0.45
#: ... counted over at least this many sentences (a short answer is judged by its length instead).
OFF_TOPIC_MIN_SENTENCES = 4
#: ... and nonsense over at least this many (exercise 4's explanations are short; one odd sentence is not enough).
MIXED_MIN_SENTENCES = 2
#: Nonsense too: more than this share of the words in sentences laying the lesson's terms over another world
#: (:func:`.worlds.world_share`; genuine dev answers reach 0.47).
WORLD_SHARE = 0.55
#: Nonsense in another world's words: more than this share of what the answer says with the lesson's terms is said
#: in sentences naming foreign things (:func:`.worlds.entangled_share`, below its own threshold) and at least this
#: share of its content words are foreign to answers on this lesson (:func:`.genre.foreign_share`): a job advert
#: whose benefits are "an MLP (Meal and Lunch Plan)" and "a residual connection to the pension scheme". Chosen on
#: tests/prose's dev split (round n, 2026-12-07), where no genuine answer that was not flagged already reaches both;
#: genuine dev answers reach 0.36 of foreign words (an analogy of their own) but then say most of it apart from it.
FOREIGN_WORLD_ENTANGLED = 0.6
FOREIGN_WORLD_SHARE = 0.2
#: ... unless at least this share of its term sentences compare or bridge to the model (:func:`.worlds.compared_share`:
#: "just as each head has its own ...", "that is the concatenation followed by W_O"): a kitchen carried through and
#: mapped back sentence by sentence is the student's analogy (a review found one at 0.42; dev nonsense reaches 0.25).
FOREIGN_WORLD_COMPARED = 1 / 3
#: Reported: at least this share of the words stand in sentences that are another speaker's (.reported); they earn
#: nothing, and a teacher decides whether the student pasted a chatbot's answer or meant it as their own.
REPORTED_SHARE = 0.25


def penalty_of(reason: str) -> float:
    """The penalty of a reason given as text: by its kind (its first words), else ``PENALTY["other"]``."""
    low = reason.casefold()
    for start, kind in _KIND_OF_REASON:
        if low.startswith(start):
            return PENALTY[kind]
    return PENALTY["other"]


def confidence(reasons: list[str], penalties: dict[str, float] | None = None) -> float:
    """``1 - max(penalty)`` over ``reasons`` (1.0 for none); ``penalties`` gives a reason's own penalty."""
    penalties = penalties or {}
    return min(1.0, max(0.0, 1.0 - max((penalties.get(r, penalty_of(r)) for r in reasons), default=0.0)))


@lru_cache(maxsize=8)
def _spec(rubric_path: Path) -> AnswerSpec | None:
    path = Path(rubric_path).parent / "exercise.toml"
    return load_spec(path) if path.is_file() else None


#: A sentence about the model *without* a part ("without residuals, the gradient can not reach the first
#: block", "otherwise the output would never be normalised", "in a plain stack ...") or about the other placement
#: ("post-norm: the gradient's path is not direct anymore") states a concept's contrapositive, not its denial: it
#: is no contradiction.
_COUNTERFACTUAL = re.compile(r"\b(?:without|if|unless|otherwise|remov\w*|drop\w*|delet\w*|absence|post-?norm|"
                             r"plain (?:stack|network|deep)|no[- ](?:residual|skip|shortcut|identity|norm|layer norm|"
                             r"mask)\w*)\b")


#: The other configuration named: the sentence after one that names it, in its paragraph, may go on about it.
_OTHER_CONFIGURATION = re.compile(r"\b(?:post-?norm|post-?ln|without (?:the )?(?:residual|skip)|no[- ]?(?:residual|res|skip)"
                                  r"s?\b|plain (?:stack|network|deep))")


#: The model's own configuration named again: what follows is said of it ("with the skips", "pre-norm", "the residual run").
_OWN_CONFIGURATION = re.compile(r"\b(?:with (?:the )?(?:residual|skip)|pre-?norm|pre-?ln|(?:the )?residual (?:run|model|"
                                r"stream|connections?|path))")
_FIRST_PERSON = re.compile(r"\b(?:i|we|my|our|me|us)\b")


#: Negations that only say something is absent ("there is no clean path", "without a mask"): said of another
#: configuration (post-norm, a model without residuals), they restate a concept's converse; never a denial.
_ABSENCE = frozenset({"no", "without", "none", "nothing", "nobody", "neither", "nor"})


def _absence_only(hit) -> bool:
    """Whether every cue that makes ``hit``'s match not asserted is an absence word (:data:`_ABSENCE`)."""
    norm = hit.units[0].norm
    cues = [q for c in clauses(norm) if c.stance != "asserted" and c.start < hit.end and hit.start < c.end
            for q in c.cues]
    return bool(cues) and all(norm[q.start:q.end].strip() in _ABSENCE for q in cues)


def denied_lines(rubric: Rubric, units_: list[Unit], earned: dict[str, list[str]]) -> dict[str, str]:
    """Earned lines that another sentence denies: line id -> the denying sentence.

    A sentence denies a line when one of the line's one-sentence pieces of evidence matches it in the
    lesson's sense but not as an assertion (:func:`.concepts.find` with ``denied=True``: "the heads do not
    run in parallel" after "several heads run in parallel"). The sentences that earned the line are not
    looked at, nor are counterfactual sentences (:data:`_COUNTERFACTUAL`), nor another speaker's words the answer
    reports (:func:`.reported.reported`: a classmate's question in a dialogue denies nothing).
    """
    out = {}
    others = {id(u) for u, r in zip(units_, reported(units_)) if r}
    # a sentence after one about the other configuration, in its paragraph and before one that names the model's own
    # again, goes on about it ("Post-norm puts the norm on the stream. The backward signal no longer has the identity
    # route ..."), unless the student speaks for themselves ("... I no longer believe the residual path carries the
    # gradient": a concept taken back)
    after_other, about_other, block = set(), False, None
    for u in units_:
        if u.block != block or _OWN_CONFIGURATION.search(u.norm):
            about_other, block = False, u.block
        elif about_other and not _FIRST_PERSON.search(u.norm):
            after_other.add(id(u))
        about_other = about_other or bool(_OTHER_CONFIGURATION.search(u.norm))
    for line in rubric.lines:
        quotes = earned.get(line.id)
        if quotes is None:
            continue
        for ev in line.evidence:
            if ev.sentences != 1:
                continue
            pool = [u for u in units_ if not any(u.display in q for q in quotes) and not _COUNTERFACTUAL.search(u.norm)
                    and id(u) not in others and id(u) not in after_other]
            hit = find(ev, pool, denied=True)
            if hit is not None and not _absence_only(hit):
                out[line.id] = hit.units[0].display
                break
    return out


def unread_near(rubric: Rubric, units_: list[Unit], a) -> dict:
    """The misconceptions an answer speaks of without the rubric reading what it says (each with the sentence): a
    sentence asserts every pattern of the misconception's ``near`` ("the MLP ... the tokens ... mix"), and neither
    the misconception nor a line it ``opposes`` was found in that sentence. An error told in words no evidence
    knows ("the FFN is where the positions get blended") lands here instead of passing unnoticed.

    Args:
        rubric: the compiled rubric; units_: the units the concepts were matched in; a: the assessment so far.

    Returns:
        {misconception: the sentence}, in the rubric's order; empty when every such sentence was read.
    """
    out = {}
    for m in rubric.misconceptions:
        if m.near is None or a.misconceptions[m.id].found:
            continue
        hit = find(m.near, units_)
        if hit is None:
            continue
        read = {q for line_id in m.opposes for q in a.lines[line_id].quotes}
        if hit.quote not in read:
            out[m] = hit.quote
    return out


#: At most this many sentences of one answer are quoted by the error model's reason (the likeliest first).
MODEL_QUOTES = 2


def model_routed(rubric: Rubric, units_: list[Unit], a) -> list[str]:
    """The sentences the exercise's error model (:mod:`.error_model`, none when the rubric has no model file) sends
    to a person, highest score first, at most :data:`MODEL_QUOTES` (the last says how many more): prose of the
    student's own (not a quotation) that is not the quote of an error the rubric names (that one is read already). A
    sentence that earns a line is scored too: it may make an error beside the concept it states ("like running 8 full
    copies of single-head attention side by side, each at the model's full size"), and the threshold was chosen with
    every sentence of the development answers scored (bench/train_error_model.py). A model file that cannot be read
    gives one reason instead (the grade is unchanged)."""
    model, broken = error_model.loaded(rubric.path)
    if broken:
        return [f"grader: the error model could not be read, so no sentence was checked by it ({broken})"]
    if model is None:
        return []
    read = {r.quote for r in a.misconceptions.values() if r.found}
    out = []
    for u in units_:
        if u.prose and not u.quoted and not any(u.display in q for q in read):
            p = model.probability(u.display)
            if p > model.threshold:
                out.append((p, u.display))
    reasons = [f"unsure: a sentence reads like one of the lesson's known mistakes, in words the rubric does not read "
               f"as one (a learned model's guess; no error is named and no point taken): \"{quote}\""
               for _, quote in sorted(out, key=lambda x: -x[0])[:MODEL_QUOTES]]
    if (more := len(out) - len(reasons)) > 0:
        reasons[-1] += f" (and {more} more sentence{'s' if more > 1 else ''})"
    return reasons


def route(rubric: Rubric, markdown: str, units_: list[Unit], a, matched: list[Unit] | None = None
          ) -> tuple[float, list[str]]:
    """The reasons this step adds for assessment ``a`` (an :class:`~.judge.Assessment` with lines,
    misconceptions, words and total filled), and the confidence over all of ``a.needs_review`` plus them.
    ``matched``: the units the concepts were matched in (:func:`.pictures.matching_units`; ``units_`` when None),
    where denials are looked for and the off-topic share is measured too (a sentence of the student's own picture is
    about the heads); the nonsense measures read the student's own words (``units_``).

    Returns:
        (confidence in [0, 1], the new reasons, to append to ``a.needs_review``).
    """
    own: dict[str, float] = {}
    earned = {k: r.quotes for k, r in a.lines.items() if r.earned}
    concepts = {x.id: x.concept.strip().rstrip(".") for x in rubric.lines}  # what the reader sees, not the line id
    for line_id, sentence in denied_lines(rubric, matched or units_, earned).items():
        own[f"contradiction: the concept \"{concepts[line_id]}\" is earned, but another sentence denies it: "
            f"\"{sentence}\""] = \
            PENALTY["contradiction"]
    questions = {x.id: x.question for x in rubric.lines}
    for m in rubric.misconceptions:
        r = a.misconceptions[m.id]
        on_q = sorted(k for k in earned if questions[k] == m.question)
        if r.found and on_q:
            own[f"contradiction: question {m.question} earns points for {len(on_q)} concept{'s' if len(on_q) > 1 else ''} "
                f"but also says that {m.statement}"] = PENALTY["contradiction"]
        elif r.found:  # a named error is a claim about the student: a person confirms it
            own[f"error named: the answer says that {m.statement}"] = PENALTY["error named"]
    for m, quote in unread_near(rubric, matched or units_, a).items():
        own[f"unsure: a sentence speaks of whether {m.statement}, in words the rubric reads neither as that error "
            f"nor as its right version: \"{quote}\""] = PENALTY["unsure"]
    for reason in model_routed(rubric, units_, a):
        own[reason] = PENALTY["unsure"] if reason.startswith("unsure") else PENALTY["other"]
    said = [u for u, r in zip(units_, reported(units_)) if r]
    n_words = sum(len(u.norm.split()) for u in units_)
    lost = [k for k, r in a.lines.items() if r.reported_only]  # points said only in those words
    if said and (lost or sum(len(u.norm.split()) for u in said) >= REPORTED_SHARE * n_words):
        own[f"reported: {len(said)} sentence{'s' if len(said) > 1 else ''} ("
            f"{sum(len(u.norm.split()) for u in said) / n_words:.0%} of the words) {'are' if len(said) > 1 else 'is'} "
            f"a chatbot's or another "
            f"person's words that the answer reports (a transcript turn or a quote), and earn nothing: "
            f"\"{said[0].display}\""] = PENALTY["reported"]
    declared = next((u.display for u in units_ if cues.DECLARED.match(u.norm)), "")
    if declared:
        own[f"reported: the answer names a chatbot as its source: \"{declared}\""] = PENALTY["reported"]
    spec = _spec(rubric.path)
    already_language = any(penalty_of(r) == PENALTY["other language"] for r in a.needs_review)
    if spec is not None and not already_language:
        foreign = foreign_paragraphs(markdown, spec)
        if foreign:
            where = ", ".join(f"{i} ({lang})" for i, _, lang in foreign)
            own[f"other language: paragraph{'s' if len(foreign) > 1 else ''} {where} not in English"] = \
                PENALTY["other language"]
    sentences = [u.norm for u in units_ if u.prose]
    share = topic.off_topic_share([u.norm for u in (matched or units_) if u.prose])  # the student's picture is on it
    if len(sentences) >= OFF_TOPIC_MIN_SENTENCES and share > OFF_TOPIC_SHARE:
        own[f"off-topic: {share:.0%} of the words are in sentences about neither the model nor the lesson's "
            "picture (nonsense or another topic?)"] = PENALTY["off-topic"]
    mixed = mixing.mixed_share(sentences)
    world = worlds.world_share(sentences) if len(sentences) >= MIXED_MIN_SENTENCES else 0.0
    if len(sentences) >= MIXED_MIN_SENTENCES and mixed > MIXED_SHARE:
        own[f"nonsense?: {mixed:.0%} of the words are in sentences that mix the lesson's terms with unrelated "
            f"things ({', '.join(mixing.mixed_words(sentences))})"] = PENALTY["nonsense"]
    elif world > WORLD_SHARE:
        own[f"nonsense?: {world:.0%} of the words are in sentences that mix the lesson's terms with unrelated "
            f"things, mapping them onto another world ({', '.join(worlds.world_words(sentences))})"] = \
            PENALTY["nonsense"]
    else:
        entangled, n_terms = worlds.entangled_share([u.norm for u in units_])
        if worlds.inside_another_world(entangled, n_terms):
            own[f"nonsense?: {entangled:.0%} of what the answer says with the lesson's terms is said in sentences "
                f"about other things ({', '.join(worlds.entangled_words([u.norm for u in units_]))}), never of "
                "the model on its own"] = PENALTY["nonsense"]
        elif worlds.told_as_a_story(sentences):
            n, rate = worlds.characters(sentences)
            own[f"nonsense?: the answer tells the lesson's terms as the characters of a story ({n} times he, she "
                f"or who, {rate:.1f} per 100 words)"] = PENALTY["nonsense"]
        elif reason := genre.written_as_another_genre(markdown, sentences):
            own[reason] = PENALTY["nonsense"]
        elif n_terms >= worlds.ENTANGLED_MIN_SENTENCES and entangled > FOREIGN_WORLD_ENTANGLED and \
                (foreign := genre.foreign_share(sentences))[0] >= FOREIGN_WORLD_SHARE and \
                worlds.compared_share([u.norm for u in units_]) < FOREIGN_WORLD_COMPARED:
            own[f"nonsense?: {entangled:.0%} of what the answer says with the lesson's terms is said in sentences "
                f"about other things, and {foreign[0]:.0%} of its content words are foreign to answers on this lesson "
                f"({', '.join(foreign[1][:6])})"] = PENALTY["nonsense"]
        elif salad := relations.word_salad(tuple(u.norm for u in units_)):  # list items too: a salad in bullets
            shown = " ".join(u.display for u in units_)  # the student's own casing where the words are the same
            quoted = ", ".join(f'"{m.group(0) if (m := re.search(re.escape(c), shown, re.I)) else c}"'
                               for c in salad[:4])
            own[f"nonsense?: a word salad? the answer joins the lesson's terms in {len(salad)} relations the model "
                f"does not have ({quoted})"] = PENALTY["nonsense"]
    reasons = list(own)
    return confidence(list(a.needs_review) + reasons, own), reasons
