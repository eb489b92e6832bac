"""What a sentence is about: the lesson's domain (transformers), the lesson's picture (the team), or neither.

A rubric word earns nothing in its everyday sense: "each head of lettuce has its own weights", "the head
chef has his own keys", "the farmer stacks blocks in parallel", "the residual of the soup is normalised".
Two general rules decide, with no list of foreign words:

1. *Bound to a foreign noun.* A domain word is used in another sense when it is the head of an "of"
   phrase whose noun is not a domain or picture word ("head **of lettuce**", "residual **of the soup**",
   "keys **of the house**"), or when a singular "head" modifies a following noun that is not a domain
   word and not a verb form ("head **chef**", "head **teacher**"; "head attends", "head computes",
   "head dimension" are fine).
2. *Anchored.* A sentence is ``domain`` when it has a strong anchor (attention, token, embedding,
   transformer, d_model, softmax, query, MLP, gradient, ...) or two weak ones (head, layer, block,
   residual, model, weights, keys, values, mask, GPT, BERT, ...), none of them bound to a foreign noun
   (and, for weak ones, none other in the sentence either: "each head of lettuce has its own weights
   and keys" is not made domain by "weights" and "keys");
   ``analogy`` when it speaks of the lesson's picture (a person, team, lawyer, reviewer, contract, notes);
   else ``off-topic``. An analogy sentence counts for a concept only when it maps the picture onto the
   model ("each person is a head"): :func:`mapped`.
3. *Names.* "BERT" and "GPT" are weak anchors only in a sentence that also speaks of models or text (a
   strong anchor, or model, mask, sentence, words, context, input, training, layer, ...): "Bert looks in
   both directions before crossing the street" is a person, whatever the paragraph around it.
4. *Foreign actors.* A sentence that relies on its paragraph (no anchor beyond the matched words) earns
   nothing when a noun phrase after "the/these/his/..." names something outside the lesson (not a domain,
   picture or general word, not after a preposition): "nobody assigns **the cooks** their jobs; they learn
   their roles during training" (:func:`foreign_agents`). The word lists are of the lesson and of general
   words ("the paper", "the same", "the rest"), never of foreign things.
5. *Mixed.* A term is also bound by an apposition ("post-norm**, the neighbour's fence,**", "the transformer**,
   a toy robot from 1984,**") and through one domain noun ("unigram level **of the pond**"). A sentence that
   binds a term so and names two or more foreign concrete nouns (:func:`.mixing.foreign_nouns`: heads of noun phrases
   after an article, possessive or "of" that are no domain, picture, general, adjective or abstract word)
   earns nothing (:func:`.mixing.bound_and_mixed`). :func:`.mixing.mixed_share` measures, for review routing, the share of an
   answer's words in sentences that mix the lesson's terms with two or more foreign nouns; comparisons ("like a
   library", "think of it as"), the lesson's picture and "each head is a musician" are analogies, not mixing.

:func:`anchored` says whether a match has anchors beyond its own words (a match without them needs a
domain sentence in its paragraph and at least one domain word of its own), :func:`topical` gives the flag
of one sentence, :func:`off_topic_share` the share of an answer's words in
off-topic sentences (for review routing), :func:`foreign` whether a matched word is used in another sense.
"""
from __future__ import annotations

import re
from functools import lru_cache

from .read import FUNCTION_WORDS, words
from .sentences import ADVERBS, verb_kind
from .vocabulary import (ADJECTIVE, ADJECTIVES, GENERIC, NAME, NAME_CONTEXT, PARTICLES, PICTURE, PREPOSITIONS, STRONG,
                         WEAK, is_domain_word, is_general)

_MAPS = re.compile(r"\b(?:is|are|=|corresponds?|plays?|stands? for|represents?|acts? as|maps?|mapped|becomes?|"
                   r"equals?|like|as|means?)\b|->|=")
_OF = re.compile(r"\s+of\s+(?:(?:the|a|an|this|that|these|those|his|her|their|its|our|some|every|each|all|one)\s+)*"
                 r"([^\W\d_][\w'-]*)")
_AFTER = re.compile(r"\s+([^\W\d_][\w'-]*)")



_COMPOUND_OF = re.compile(r"\s+(?!of\b)([^\W\d_][\w-]*)(?=\s+of\s)")
#: An apposition closed by a comma: "post-norm*, the neighbour's fence,*", "the transformer*, a toy robot from 1984,*".
_APPOSITION = re.compile(r"\s*,\s+(?:the|a|an|my|your|his|her|their|our|its|this|that)\s+([^,;:.!?()]{1,60}?)\s*,")


#: A verb that makes the stretch between two commas a clause, not an apposition.
_CLAUSE_VERB = re.compile(r"\b(?:is|are|was|were|becomes?|means?|equals?)\b|=")


def _apposed(text: str, end: int) -> str:
    """The head noun of an apposition right after ``end`` that names a foreign thing ("" if none)."""
    m = _APPOSITION.match(text, end)
    if not m or _CLAUSE_VERB.search(m.group(1)):
        return ""  # "a member is a head, the document everyone reads is the sequence, ...": a clause of a list
    head = ""
    for w in m.group(1).split()[:5]:
        if w in PREPOSITIONS or w in FUNCTION_WORDS:
            break
        head = re.sub(r"'s?$", "", w)
    return "" if not head or is_general(head) else head


def _foreign_noun_at(text: str, at: int) -> bool:
    """Whether the noun phrase starting at ``at`` names a foreign thing: its adjectives are skipped ("of the
    *different* positions" is about positions), and a domain word anywhere among its first words counts."""
    for w in text[at:].split()[:4]:
        w = re.sub(r"[^\w'-]+$", "", w)
        if is_domain_word(w):
            return False
        if not (w in ADJECTIVES or ADJECTIVE.search(w) or w in ("other", "different", "various", "many")):
            return True
    return False


def foreign(text: str, start: int, end: int) -> bool:
    """Whether the domain word ``text[start:end]`` is bound to a foreign noun: the head of an "of" phrase
    ("head of lettuce"; a domain noun may come between: "unigram level of the pond"), "head" before a noun
    ("head chef"), or an apposition ("post-norm, the neighbour's fence,"; "the transformer, a toy robot,")."""
    word = text[start:end]
    of = _OF.match(text, end)
    compound = _COMPOUND_OF.match(text, end)
    if not of and compound and compound.group(1) not in FUNCTION_WORDS and is_domain_word(compound.group(1)):
        of = _OF.match(text, compound.end())
    if of and _foreign_noun_at(text, of.start(1)):
        return True
    if _apposed(text, end):
        return True
    if word == "head":
        nxt = _AFTER.match(text, end)
        if nxt:
            after = nxt.group(1)
            # a letter is the head's index ("head k reads the output of head k-1"), no compound
            if not is_domain_word(after) and not re.search(r"(?:s|ed|ing|ly)$", after) \
                    and not re.fullmatch(r"[a-z](?:[-+]\d)?", after):
                return True
    return False


_DETERMINED = re.compile(r"\b(?:the|these|those|his|her|my|your)\b")
_NEXT_WORD = re.compile(r"\s+([^\W\d_][\w'-]*)")


def foreign_agents(text: str) -> list[str]:
    """Nouns that name something outside the lesson where a sentence's actors stand ("nobody assigns **the
    cooks** their jobs", "**the farmer** stacks blocks", "before crossing **the street**"): the last word of a
    noun phrase (up to 3 words) after "the/these/his/..." that is not a domain, picture or general word,
    unless the phrase follows a preposition ("in the lecture") or is bound by "of" to a domain word
    ("the rest of the model"). Empty: none.
    """
    out = []
    for m in _DETERMINED.finditer(text):
        before = text[:m.start()].split()
        if before and before[-1].strip(",;:()") in PREPOSITIONS:
            continue
        head, at = "", m.end()
        for _ in range(3):  # adjectives ("the learned", "the big") lead to the noun
            w = _NEXT_WORD.match(text, at)
            if not w or w.group(1) in FUNCTION_WORDS:
                break
            head, at = re.sub(r"'s?$", "", w.group(1)), w.end()
            if not (head in ADJECTIVES or ADJECTIVE.search(head) and not (is_domain_word(head)
                                                                           and _ends_phrase(text, at))) \
                    or text[at:at + 1] in tuple(".,;:!?()"):
                break
        if head in ADVERBS or head in PARTICLES:
            continue  # "the backward pass", "passes the gradient back": no noun at all
        of = _OF.match(text, at)
        if head and not (head in GENERIC or head in ADJECTIVES or ADJECTIVE.search(head) or is_domain_word(head)
                         or (of and is_domain_word(of.group(1)))):
            out.append(head)
    return out


def _ends_phrase(text: str, at: int) -> bool:
    """Whether a noun phrase ends before offset ``at``: an adverb, a particle or a function word follows, or a verb
    that is no noun before another verb ("the gradient *back*", "the training signal *shapes* them"; not "the
    training *cooks* decide")."""
    w1 = _NEXT_WORD.match(text, at)
    if not w1:
        return True
    first = w1.group(1)
    if first in FUNCTION_WORDS or first in ADVERBS or first in PARTICLES:
        return True
    w2 = _NEXT_WORD.match(text, w1.end())
    if verb_kind(first)[0] is None:  # a verb the list does not know, before its object ("shapes them")
        return first.endswith(("s", "ed")) and bool(w2) and w2.group(1) in FUNCTION_WORDS
    return not (w2 and verb_kind(w2.group(1))[0] is not None)






def strong_beyond(text: str, spans: list[tuple[int, int]]) -> bool:
    """Whether ``text`` has a strong domain anchor (attention, token, gradient, learning rate ...) meant in the
    lesson's sense outside the stretch from the first matched span to the last (offsets into ``text``): in "stays
    at the unigram level U" matched by "stays" and "at U", "unigram" is the concept's own word, no anchor."""
    if not spans:
        return False
    lo, hi = min(s for s, _ in spans), max(e for _, e in spans)
    return any(m.end() <= lo or hi <= m.start() for m in _anchors(text, STRONG))


def misused(text: str, start: int, end: int) -> list[str]:
    """The domain words inside ``text[start:end]`` that are bound to a foreign noun (empty: none)."""
    return [m.group(0) for pattern in (STRONG, WEAK) for m in pattern.finditer(text, start, end)
            if foreign(text, m.start(), m.end())]


def _anchors(text: str, pattern: re.Pattern) -> list[re.Match]:
    """Domain words of ``pattern`` in ``text`` meant in the lesson's sense: not bound to a foreign noun, and a
    model's name (BERT, GPT) only next to a word about models or text ("Bert looks both ways" is a person)."""
    found = [m for m in pattern.finditer(text) if not foreign(text, m.start(), m.end())]
    if pattern is WEAK and any(NAME.fullmatch(m.group(0)) for m in found):
        context = STRONG.search(text) or NAME_CONTEXT.search(NAME.sub(" ", text, count=1))
        found = [m for m in found if context or not NAME.fullmatch(m.group(0))]
    return found


def has_domain_word(text: str) -> bool:
    """Whether ``text`` has any domain word in the lesson's sense (strong or weak anchor)."""
    return bool(_anchors(text, STRONG) or _anchors(text, WEAK))


def anchored(text: str, spans: list[tuple[int, int]]) -> tuple[bool, bool]:
    """Whether ``text`` is anchored in the domain (a strong anchor, or two weak ones of which one lies beyond
    the matched ``spans``), and whether it has any domain word at all.

    Weak words do not vouch for themselves: in "the farmer stacks blocks" only the matched "blocks" is
    a domain word.
    """
    def outside(m: re.Match) -> bool:
        return not any(s < m.end() and m.start() < e for s, e in spans)

    strong, weak = _anchors(text, STRONG), _anchors(text, WEAK)
    beyond = bool(strong) or (len(weak) >= 2 and any(map(outside, weak)) and not _misuses(text))
    return beyond, bool(strong or weak)


def _misuses(text: str) -> bool:
    """A domain word bound to a foreign noun: then weak words alone do not make the text domain."""
    return bool(misused(text, 0, len(text)))


#: Words of exercise 4's account that make a sentence part of an answer on the lesson for the off-topic measure
#: (:func:`off_topic_share`: "it learnt the marginal p(char) and nothing conditional p(char | context)"), but are
#: no anchor for a matched piece: a sentence is not about the model because it speaks of characters.
_LESSON = re.compile(r"\b(?:characters?|chars?|frequenc\w*|shortcuts?|context|nats|entropy|perplexity)\b")


@lru_cache(maxsize=4096)
def topical(sentence: str, lesson: bool = False) -> str:
    """``"domain"``, ``"analogy"`` or ``"off-topic"`` for one normalised sentence (see the module docstring);
    ``lesson``: :data:`_LESSON`'s words count as weak anchors too, beside one of the lesson's own (a novel's
    characters and their shortcuts are no answer on the lesson)."""
    weak = len(_anchors(sentence, WEAK))
    if lesson and weak:
        weak += len(_anchors(sentence, _LESSON))
    if _anchors(sentence, STRONG) or (weak >= 2 and not _misuses(sentence)):
        return "domain"
    if PICTURE.search(sentence):
        return "analogy"
    return "off-topic"


@lru_cache(maxsize=4096)
def mapped(sentence: str) -> bool:
    """Whether a sentence maps the lesson's picture onto the model ("each person is a head", "notes = W_O")."""
    picture = [m.start() for m in PICTURE.finditer(sentence)]
    domain = [m.start() for m in (_anchors(sentence, STRONG) + _anchors(sentence, WEAK))]
    if not picture or not domain:
        return False
    lo, hi = min(picture + domain), max(picture + domain)
    return bool(_MAPS.search(sentence, lo, hi + 1))


def off_topic_share(norms: list[str]) -> float:
    """Share of the words (0-1) that stand in off-topic sentences, given the normalised sentences of an answer.

    0 for an empty answer. judge.py may flag an answer for review when this is high (mostly off-topic
    or nonsense that happens to use the rubric's words).
    """
    counts = [(len(words(s)), topical(s, lesson=True)) for s in norms]
    total = sum(n for n, _ in counts)
    return sum(n for n, t in counts if t == "off-topic") / total if total else 0.0
