"""Bare noun phrases: nouns that stand without an article ("so **bakers** need a warm-up", "past **traffic
lights**", "**post-norm toasters** at a high learning rate"), for :func:`.topic.foreign_nouns`.

A *run* is a stretch of content words (no function word, preposition, verb form or clause mark). It is a bare noun
phrase, headed by its last word, when

- it follows a preposition ("past traffic lights", "before concerts"), or opens a clause (the sentence's start, a
  comma, "so", "and", "because", ...) and a verb form follows it ("orchestras need"), or follows a verb form
  ("burn toasters"): its head must then be plural ("traffic lights", not "often", "instead", "messy"), since a bare
  singular there is as often an adjective or an adverb;
- or it starts with a lesson term used as a compound modifier ("post-norm toasters", "residual gravy"), one that
  can stand before a noun (hyphenated, adjective-like or plural), not after an article ("the gradient straight"); a plural modifier needs a plural head ("heads parallel" is notes).

A head ending in -s after a singular noun is read as a verb ("the loss spikes", "training diverges"); after an
adjective, a hyphenated or a plural modifier it is a noun ("residual winds", "post-norm toasters"). Which heads are
foreign is decided by the caller's predicates (the lesson's and general words), never by a list of foreign words.
"""
from __future__ import annotations

import re
from typing import Callable

from .read import FUNCTION_WORDS
from .sentences import verb_form

#: Words that take a noun phrase after them (those of :data:`.topic` and a few that are not in FUNCTION_WORDS).
PREPOSITIONS = frozenset("of to in on at by for with from into onto over under between among across through "
                         "about as than like after before during within without per via past around behind "
                         "toward towards along beyond near inside outside until against despite upon throughout "
                         "except".split())
#: Words after which a new clause, hence a new subject, begins.
_CLAUSE = frozenset("so and but because while when then if since whereas or that which where though although".split())
_TOKEN = re.compile(r"[^\W\d_][\w'-]*|[,;:.!?()]")
_ADJECTIVE_LIKE = re.compile(r"(?:al|ive|ous|ic|ful|able|ible|ent|ant|ary)$")


def _plural(word: str) -> bool:
    return len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is"))


def _noun(word: str) -> bool:
    """Not an adverb or comparative by its ending ("backwards", "narrower")."""
    return not word.endswith(("wards", "er", "ly"))


def _stop(tok: str) -> bool:
    return tok in FUNCTION_WORDS or tok in PREPOSITIONS or tok in _CLAUSE or verb_form(tok) \
        or not tok[0].isalpha() or tok.endswith("ly")


def _runs(tokens: list[str]):
    """(start, end) of each run of content words in ``tokens``."""
    i = 0
    while i < len(tokens):
        if _stop(tokens[i]):
            i += 1
            continue
        j = i
        while j < len(tokens) and not _stop(tokens[j]):
            j += 1
        yield i, j
        i = j


def _modifies(word: str) -> bool:
    """A word that can stand before a noun: hyphenated, adjective-like or plural ("post-norm", "residual",
    "heads"); a singular noun before a word is as often a subject before its verb ("the rate burns")."""
    return "-" in word or bool(_ADJECTIVE_LIKE.search(word)) or _plural(word)


def _head(run: list[str]) -> tuple[list[str], str]:
    """A run and its head, a trailing -s word after a singular noun cut off as a verb ("the loss spikes")."""
    if len(run) > 1 and run[-1].endswith("s") and not _modifies(run[-2]):
        run = run[:-1]
    return run, run[-1]


def bare_heads(sentence: str, general: Callable[[str], bool], domain: Callable[[str], bool]) -> list[str]:
    """Heads of the bare noun phrases of a normalised sentence that are neither ``general`` (a lesson, general,
    adjective or abstract word) nor ``domain``, in order, possessive "'s" dropped (see the module docstring).
    ``general`` and ``domain`` take one lower-case word; a plural is also tried in its singular."""
    def known(word: str) -> bool:
        return any(general(w) or domain(w) for w in {word, word[:-1] if _plural(word) else word})

    tokens = _TOKEN.findall(sentence)
    out: list[str] = []
    for i, j in _runs(tokens):
        run, head = _head([re.sub(r"'s?$", "", t) for t in tokens[i:j]])
        before = tokens[i - 1] if i else "."
        after = tokens[j] if j < len(tokens) else "."
        opens = (before in _CLAUSE or before in tuple(",;:.!?(")) and verb_form(after)
        placed = before in PREPOSITIONS or opens or verb_form(before) and not before.endswith("ing")  # not "learning"
        compound = len(run) > 1 and domain(run[0]) and _modifies(run[0]) and (
            before not in FUNCTION_WORDS or before in PREPOSITIONS or before in _CLAUSE)  # not "the gradient straight"
        compound = compound and (_plural(head) or not _plural(run[0]))  # not "heads parallel"
        if not known(head) and head not in out and _noun(head) and (compound or placed and _plural(head)):
            out.append(head)
    return out


def compound_head(text: str, start: int, general: Callable[[str], bool], domain: Callable[[str], bool]) -> str:
    """The foreign head of a bare compound that a lesson term opens at ``start`` in ``text`` ("post-norm
    toasters at ...": "toasters"; "post-norm transformers need", "the gradient straight to": ""), by the rules of
    :func:`bare_heads` (the word before ``start`` counts: after "the" there is no bare compound)."""
    before = _TOKEN.findall(text[:start])[-1:]
    tokens = _TOKEN.findall(text[start:])
    first = next(_runs(tokens), None)
    if not first or first[0] != 0 or first[1] < 2:
        return ""
    run, head = _head([re.sub(r"'s?$", "", t) for t in tokens[:first[1]]])
    return head if len(run) > 1 and head in bare_heads(" ".join(before + tokens), general, domain) else ""
