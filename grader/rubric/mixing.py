"""Sentences that mix the lesson's terms with unrelated things: "the gradient of the lawn reaches my garden".

A nonsense answer keeps the rubric's words and puts them among things of another world. :func:`foreign_nouns` finds
the concrete nouns of a sentence that are no word of the lesson or of general English (.vocabulary: no list of
foreign words); :func:`mixed_sentences` marks the sentences that use a lesson term beside two or more of them, unless
the sentence compares ("like a library", "think of it as") or maps a picture ("each head is a musician");
:func:`mixed_share` is the share of an answer's words in such sentences, for review routing (.review), and
:func:`bound_and_mixed` says when a sentence's terms earn nothing (.concepts).
"""
from __future__ import annotations

import re

from .read import FUNCTION_WORDS, words
from .sentences import verb_kind
from .topic import mapped, misused
from .vocabulary import ADJECTIVE, ADJECTIVES, IS_A, PICTURE, PREPOSITIONS, STRONG, WEAK, is_domain_word, is_general

#: Where a noun phrase starts: a determiner or possessive (after a preposition too), or "of" before a bare noun.
_NP_START = re.compile(r"\b(?:the|a|an|my|your|his|her|their|our|of|this|these|those|each|every|some|any|on|at|before|"
                       r"after|until|till)\s+")
#: Of the starts of :data:`_NP_START`, those that are as often a pronoun or a preposition before a verb's object
#: ("each adds its output", "this means"): the next word is no noun when it is a verb.
_PRONOUN_START = frozenset("this these those each every some any".split())
#: Function words that lead on to the noun of a phrase ("the same stall", "the other bag").
_LEADING = frozenset("same other another only very".split())
#: Nouns of fixed phrases ("in parallel", "at once", "side by side", "at the same time", "on the other hand").
_FIXED = frozenset("half moment once side front turn least parallel practice fact first last times time end start "
                   "hand whole".split())
#: A sentence that compares: its foreign nouns are the student's picture, not nonsense ("attention is like a
#: library: the query is what you look for, the keys are the labels on the books").
_COMPARES = re.compile(r"\b(?:like|as if|as though|just as|similar(?:ly)? to|resembl\w*|think of|imagine|picture|"
                       r"analog\w*|metaphor\w*|compar\w*|a kind of|a sort of|in the same way|the role of|acts? as|"
                       r"works? as|serves? as|plays? the)\b")


def _compares(sentence: str) -> bool:
    """A comparison, the lesson's picture, or a lesson term set equal to a thing ("each head is a musician")."""
    if _COMPARES.search(sentence) or mapped(sentence) or PICTURE.search(sentence):
        return True
    return any(STRONG.search(" ".join(sentence[:m.start()].split()[-3:])) or
               WEAK.search(" ".join(sentence[:m.start()].split()[-3:])) for m in IS_A.finditer(sentence))


def foreign_nouns(sentence: str) -> list[str]:
    """Concrete nouns of a normalised sentence that name things outside the lesson ("my garden", "of ivy", "the
    neighbour's fence", "a toy robot", "the same stall", "this week", "before sunday"), in order, without repeats:
    the head of each noun phrase after a determiner, "of", this/each/every/some/any (not before a verb: "each
    adds") or a preposition of time (:data:`_NP_START`; adjectives, possessives and same/other lead on, up to 3
    words) that is not a domain, picture or general word, an adjective, an abstract noun or the noun of a fixed
    phrase ("in parallel", "at once"). No list of foreign words: only the lesson's and general ones.
    """
    out: list[str] = []
    for m in _NP_START.finditer(sentence):
        if m.group(0).split()[0] in _PRONOUN_START and _verb_next(sentence, m.end()):
            continue
        head, at = "", m.end()
        for _ in range(3):
            w = re.match(r"([^\W\d_][\w'-]*)", sentence[at:])
            if not w or (w.group(1) in FUNCTION_WORDS and w.group(1) not in _LEADING) or w.group(1) in PREPOSITIONS:
                break  # "try this *after* a warm-up": no noun
            word = w.group(1)
            head, at = re.sub(r"'s?$", "", word), at + w.end()
            if word.endswith("'s") and not is_general(head) and head not in out:
                out.append(head)  # "the neighbour's fence": the owner is a thing too
            nxt = re.match(r" ([^\W\d_][\w'-]*)", sentence[at:])
            modifier = head in ADJECTIVES or head in _LEADING or (ADJECTIVE.search(head) and not is_domain_word(head)) \
                or word.endswith("'s") or "-" in head \
                or bool(nxt and is_domain_word(nxt.group(1)) and nxt.group(1) not in FUNCTION_WORDS)
            if not modifier or not nxt:  # "the dot product", "a two-layer network": the noun comes next
                break
            at += 1
        if head and head not in _LEADING and head not in _FIXED and not is_general(head) and head not in out:
            out.append(head)
    return out


def _verb_next(sentence: str, at: int) -> bool:
    """Whether the word at ``at`` is a verb ("each *adds* its output", "this *means*"): a known verb form, or an
    -s form followed by a function word (its object or a preposition)."""
    w = re.match(r"([^\W\d_][\w'-]*)( [^\W\d_][\w'-]*)?", sentence[at:])
    if not w:
        return False
    word, nxt = w.group(1), (w.group(2) or "").strip()
    return verb_kind(word)[0] is not None or (word.endswith("s") and nxt in FUNCTION_WORDS)


def mixed_sentences(norms: list[str]) -> list[list[str]]:
    """For each normalised sentence of an answer, the foreign nouns it mixes with the lesson's terms ([] when it
    does not mix): a sentence mixes when it uses a lesson term (in any sense: "a layer norm of ivy" counts) and
    names two or more foreign nouns (:func:`foreign_nouns`), unless it compares (like, as if, imagine, think of,
    the role of, ...), speaks of the lesson's picture (a person, team, contract, reviewer, notes) or sets a lesson
    term equal to a thing ("each head is a musician in an orchestra": the student's own analogy, mapped). Nouns of an earlier comparing
    sentence stay the student's picture in later ones, and a later sentence that shares one of them continues it
    ("Attention is like a meeting. In the meeting, the chair ...").
    The lesson's picture (team, contract, lawyers, notes, reviewers) is never foreign.
    """
    pictured: set[str] = set()
    out = []
    for norm in norms:
        nouns = foreign_nouns(norm)
        if _compares(norm) or pictured.intersection(nouns):
            pictured.update(nouns)
            out.append([])
            continue
        nouns = [n for n in nouns if n not in pictured]
        uses_terms = bool(STRONG.search(norm) or WEAK.search(norm))
        out.append(nouns if uses_terms and len(nouns) >= 2 else [])
    return out


def mixed_share(norms: list[str]) -> float:
    """Share of the words (0-1) in sentences that mix the lesson's terms with unrelated things
    (:func:`mixed_sentences`), given the normalised sentences of an answer; 0 for an empty answer. For review
    routing: "sentences mixing the lesson's terms with unrelated things (garden, pond, ivy)"."""
    total = sum(len(words(s)) for s in norms)
    mixed = sum(len(words(s)) for s, nouns in zip(norms, mixed_sentences(norms)) if nouns)
    return mixed / total if total else 0.0


def mixing_paragraph(paragraph: list[str], own: tuple[str, ...]) -> bool:
    """Whether the other sentences of a paragraph (``paragraph``: its normalised sentences; ``own``: those of the
    match) mostly mix the lesson's terms with unrelated things (:func:`mixed_sentences`): at least two others, and
    more than half of them mix. A match there needs a strong anchor of its own (:func:`strong_beyond`): "the sauce
    stays at the unigram level U" among sentences of pasta and ovens is about the sauce."""
    others = [nouns for norm, nouns in zip(paragraph, mixed_sentences(paragraph)) if norm not in own]
    return len(others) >= 2 and 2 * sum(map(bool, others)) > len(others)


def mixed_words(norms: list[str], limit: int = 6) -> list[str]:
    """The foreign nouns of an answer's mixing sentences, in order, without repeats, at most ``limit``."""
    out: list[str] = []
    for nouns in mixed_sentences(norms):
        out += [n for n in nouns if n not in out]
    return out[:limit]


def bound_and_mixed(sentence: str) -> bool:
    """Whether a sentence binds one of its lesson terms to a foreign noun (:func:`foreign`) and also names two or
    more foreign nouns: it is about something else, so none of its words earn ("the original Transformer, a toy
    robot from 1984, needed a warm-up by the fireplace")."""
    return bool(misused(sentence, 0, len(sentence))) and len(foreign_nouns(sentence)) >= 2 \
        and not _compares(sentence)
