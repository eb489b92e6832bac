"""Part of step 4, concepts: a picture of the student's own, read as the heads it stands for.

The lesson explains multi-head attention with a team reading one contract, and the rubric knows that picture's
words (a person, a reviewer, the notes). A student may explain with a picture of their own and say so once:
"think of the heads as chefs in one kitchen", "each head is like a reporter", "the musicians are the heads".
From then on the student's sentences speak of the heads in that picture's words: "all the chefs work at the same
time on the same order", "one reporter follows which noun 'it' refers to". A teacher reads them as sentences
about the heads; so does the rubric, through :func:`read_as_heads`, which gives the matching step each such
sentence with the picture's noun replaced by "head" / "heads", and the sentence that states the mapping with it
replaced by the lesson picture's "person" (the text shown to people is unchanged).

Only a stated mapping counts (:func:`own_picture`): a noun set equal to the heads by "think of / imagine / picture
the heads as X", "each head is (like) a X", "the heads are (like) the X", "the X are (like) the heads", "X = head".
A sentence that sets the picture against the model keeps its words: one that says where the picture breaks ("the
picture fails here: each chef gets a part of the order", "in a real kitchen", "unlike heads, chefs take turns"),
and the sentence after it in the same paragraph, or one that names the heads themselves with a word that sets them
apart ("the chefs take turns, but the heads do not"). What the picture's world does unlike the model is no claim
about the heads: read as one, it would be a named error the answer does not make.

The noun must be no word of the lesson (no domain or general word: "the heads are the *parts* that ...", "each
head is a *function*" map nothing). Exercise 4's pictures are of other parts: "think of the residual stream as a
river and every sub-layer as a mill", "each sub-layer is a service station", "the coach's feedback, i.e. the
gradient". :func:`part_pictures` finds such stated mappings onto the residual stream, the blocks and the gradient
(:data:`PARTS`), and :func:`read_as_parts`
reads the picture's noun as the part everywhere but in the sentence that states it ("going upstream the gradient is
shrunk by every mill" is read "... by every block").

An answer that never speaks of the model in sentences of its own
(:func:`.worlds.entangled_share` over its threshold: nonsense that says "the kittens are called the heads")
keeps its words as they are.
"""
from __future__ import annotations

import re
from dataclasses import replace

from . import sentences, vocabulary, worlds
from .read import FUNCTION_WORDS
from .sentences import Unit

_DET = r"(?:(?:a|an|the|our|my|your|some|several|many|different|separate|individual|little|small|one)\s+)"
_HEAD = r"(?:(?:each|every|a|one|the|all the|these|several|multiple)\s+)?(?:attention\s+)?heads?"
_NOUN = r"(?P<noun>(?!(?:one|two|three|four|five|six|seven|eight|nine|ten)\b)[a-z][a-z'-]{2,})"
#: The mappings that say a noun stands for the heads (a determiner or "like" before the noun, but after "as"). The verb
#: agrees with the heads ("each head is a reporter", "the heads are chefs"): in "sharing keys across heads is a later
#: efficiency trick" the heads are not the subject.
_MAPPINGS = [re.compile(p) for p in (
    rf"\b(?:think of|imagine|picture|see|treat|view)\s+{_HEAD}\s+as\s+(?:being\s+)?(?:like\s+)?{_DET}*(?:\w+\s+)?"
    rf"{_NOUN}",
    rf"\b(?:{_HEAD}(?<=head)\s+(?:is|acts as|works as|behaves like)|{_HEAD}(?<=heads)\s+(?:are|act as|work as|behave "
    rf"like))\s+(?:just\s+|basically\s+|"
    rf"kind of\s+|sort of\s+)?(?:like\s+{_DET}*|{_DET}+)(?:\w+\s+)?{_NOUN}",
    rf"\b(?:the|our|my|your|these|those|each|every|one|a|an)\s+(?:\w+\s+)?{_NOUN}"
    rf"(?:\s+(?:at|in|of|on|from|with)\s+(?:the|a|an|each|every|our|my|their|his|her)\s+[a-z'-]+)?"
    rf"(?:\s+(?:who|that|[a-z]+ing)\b(?:\s+[^\s,;:.]+){{2,7}}?)?\s+"  # "each reporter *covering one angle* is a head"
    rf"(?:are|is|=|stand for|stands for|play|plays)\s+"
    rf"(?:like\s+)?(?:the\s+(?:role|part)\s+of\s+)?(?:the\s+|a\s+|an\s+|one\s+|each\s+)?(?:attention\s+)?"
    rf"(?:heads\b|head\b(?!\s+of\b))",  # not "the head of the team"
    rf"\b{_NOUN}\s*=\s*{_HEAD}\b",
)]
#: Words after the noun that show it is no noun of a picture ("a head is one of ...", "the heads are the same").
_NOT_A_PICTURE = frozenset("one part parts way ways kind sort set group number piece pieces thing things same "
                           "reason key keys point idea".split())


def _no_noun(word: str) -> bool:
    """Whether a word after a mapping's "as" or "like" is no noun ("the heads are a lot *like* filters", "imagine
    the heads as working *together*"): a function word, an adverb or a word of comparing."""
    return (word in FUNCTION_WORDS or word in sentences.ADVERBS or word.endswith("ly")
            or word in ("like", "unlike", "alike", "together", "apart", "alone"))


def _forms(noun: str) -> tuple[str, str]:
    """(singular, plural) of a noun as English usually spells them ("chef": chef, chefs; "committee": ...)."""
    if noun.endswith("ies") and len(noun) > 4:
        return noun[:-3] + "y", noun
    if noun.endswith(("ches", "shes", "sses", "xes")):
        return noun[:-2], noun
    if noun.endswith("s") and not noun.endswith("ss"):
        return noun[:-1], noun
    if re.search(r"[^aeiou]y$", noun):
        return noun, noun[:-1] + "ies"
    if noun.endswith(("ch", "sh", "ss", "x")):
        return noun, noun + "es"
    return noun, noun + "s"


#: A group whose members are the picture ("a *squad* of detectives", "a *team* of chefs"): the members count.
_MEMBERS = re.compile(r"\s+of\s+(?:(?:the|a|an|its|their|our|my|\w+ing)\s+)?([a-z][a-z'-]{2,})")
_GROUPS = frozenset("squad team group crew panel bunch set band gang staff troop committee room pack board".split())


def _noun_elsewhere(forms: tuple[str, str], norms: list[str]) -> bool:
    """Whether the answer uses the plural of ``forms`` ("detectives"): adjectives have none ("differents")."""
    pattern = re.compile(rf"\b{re.escape(forms[1])}\b")
    return any(pattern.search(n) for n in norms)


def _stated(norm: str, forms: tuple[str, str]) -> tuple[int, int] | None:
    """Where a sentence sets the picture's noun equal to a head, either way round ("so a detective is a head",
    "think of the heads as a squad of detectives"): the (start, end) of that mapping, which earns it as written;
    None when the sentence states none."""
    noun = rf"\b(?:{re.escape(forms[0])}|{re.escape(forms[1])})\b"
    link = r"\W+(?:\w+\W+){0,8}?(?:is|are|=|as|like|stands? for|plays?|means?)\W+(?:\w+\W+){0,4}?"
    m = re.search(noun + link + r"heads?\b", norm) or re.search(r"\bheads?\b" + link + noun, norm)
    return m.span() if m else None


def _states(norm: str, forms: tuple[str, str]) -> bool:
    """Whether a sentence sets the picture's noun equal to a head (:func:`_stated`)."""
    return _stated(norm, forms) is not None


def _mapping(norm: str, norms: list[str] = ()) -> tuple[str, str] | None:
    """The noun (singular, plural) a sentence maps onto the heads, or None. A noun spelled like an adjective
    ("detective", "servant") counts when the answer also uses it as a noun (``norms``: its sentences)."""
    for pattern in _MAPPINGS:
        for m in pattern.finditer(norm):
            noun = m.group("noun")
            members = _MEMBERS.match(norm, m.end("noun"))
            if noun in _GROUPS and members:
                noun = members.group(1)
            forms = _forms(noun)
            if _no_noun(noun):
                continue
            if any(w in _NOT_A_PICTURE or w in vocabulary.ADJECTIVES or vocabulary.is_domain_word(w) for w in (noun, forms[0])):
                continue
            if any(vocabulary.is_general(w) for w in (noun, forms[0])) and not _noun_elsewhere(forms, norms):
                continue  # spelled like an adjective or an abstract noun ("detective", "station"): a noun if plural too
            return forms
    return None


def own_picture(norms: list[str]) -> tuple[str, str] | None:
    """The noun (singular, plural) an answer maps onto the heads, or None.

    Args:
        norms: the normalised sentences of the answer, in order; the first mapping found counts.
    """
    return next((p for p in (_mapping(n, norms) for n in norms) if p), None)


#: A sentence that says where the picture breaks ("the analogy fails here", "in a real kitchen", "unlike the heads")
#: speaks of the picture's own world, not of the heads, and so may the sentence after it. (The word gap is spelled
#: [^\s], not \S: the rubrics' word-gap term is spelled with \S, and no shipped file may hold a rubric string, so
#: tests/test_release.py can check that rule by plain text search.)
_LIMIT = re.compile(r"\b(?:picture|analogy|metaphor|comparison)\b(?:\s+[^\s]+){0,8}?\s+(?:breaks?|broke|"
                    r"fails?|falls? (?:apart|short|down)|stops?|misleads?|misleading|is wrong|goes wrong|limits?|"
                    r"limitations?|differs? from|does not (?:fit|hold|work)|is not (?:quite|perfect|exact))\b|"
                    r"\b(?:unlike|whereas|in reality|in real life|real-(?:life|world)|(?:in|at|from) (?:a|an|the) "
                    r"(?:real|actual))\b")
#: A word that sets the heads apart from the picture in a sentence naming both ("the chefs take turns, *but* the
#: heads do not", "each chef gets part of the order, *while* every head sees all the tokens"); a bare "not" does
#: not ("each chef has their own recipe cards, not shared with other heads" is the picture read as the heads).
_APART = re.compile(r"\b(?:but|while|whereas|instead|rather than|unlike|different from|differs? from)\b")


def _sets_apart(norm: str, forms: tuple[str, str]) -> bool:
    """Whether a sentence says where the picture breaks (:data:`_LIMIT`, or "real chefs": the picture's own world),
    or names the heads themselves (not the picture's own "head chef") and sets them apart from it (:data:`_APART`)."""
    noun = rf"(?:{re.escape(forms[0])}|{re.escape(forms[1])})\b"
    heads = rf"\b(?:heads?|the model|the transformer)\b(?! {noun})"
    real = rf"\b(?:real|actual|human)\s+(?:[a-z-]+\s+)?{noun}"  # "real chefs", "an actual pastry chef"
    return bool(_LIMIT.search(norm) or re.search(real, norm) or (_APART.search(norm) and re.search(heads, norm)))


def read_as_heads(units_: list[Unit], picture: tuple[str, str] | None) -> list[Unit]:
    """``units_`` with the picture's noun read as "head" / "heads" in the matched text (``norm``), or as "person" /
    "persons" in a sentence that states the mapping ("so a detective is a head": the student's picture stands for
    the lesson's, and earns its mapping as the lesson's would); a unit without the noun is returned as it is.
    "head chef" and the like keep their noun (the head of the picture is another part)."""
    if picture is None:
        return units_
    singular, plural = picture
    pattern = re.compile(rf"(?<!\bhead )\b(?:({re.escape(plural)})|({re.escape(singular)}))\b(?!-)")
    out = []
    prev, prev_limit = None, False  # the sentence before, and whether it says where the picture breaks
    for u in units_:
        carried = prev_limit and (prev.section, prev.block) == (u.section, u.block)
        prev, prev_limit = u, bool(_LIMIT.search(u.norm))
        if (carried or _sets_apart(u.norm, picture)) and pattern.search(u.norm) and not _states(u.norm, picture):
            out.append(u)  # the picture set against the model ("unlike heads, chefs take turns"): its own words
            continue
        stated = _stated(u.norm, picture)
        # the mapping: the picture's noun in it is read as the lesson's picture, a person; elsewhere in the
        # sentence as the heads ("each chef is a head, and the chefs take turns" says the heads take turns)
        norm = pattern.sub(lambda m: ("person" if stated and stated[0] <= m.start() < stated[1] else "head")
                           + ("s" if m.group(1) else ""), u.norm)
        out.append(u if norm == u.norm else replace(u, norm=norm))
    return out


#: Model parts other than the heads that a picture of the student's own may stand for (exercise 4's pictures: "the
#: residual stream is the motorway", "each sub-layer is a service station", "think of the residual stream as a river
#: and every sub-layer as a mill"): the words naming the part, and what the picture's noun is read as.
PARTS = ((r"residual streams?|residual connections?|skip connections?|residual paths?|residuals", ("residual stream",
                                                                                          "residual streams")),
         (r"sub-?layers?|blocks?", ("block", "blocks")),
         (r"gradients?|error signal|learning signal", ("gradient", "gradients")))
_PART = "(?P<part>" + "|".join(p for p, _ in PARTS) + ")"
_PRE = r"(?P<pre>[a-z][a-z'-]+\s+)?"
_PART_MAPPINGS = [re.compile(p) for p in (
    rf"\b(?:think of|imagine|picture|see|view)\s+(?:the\s+|each\s+|every\s+|a\s+|an\s+)?{_PART}\s+as\s+(?:like\s+)?"
    rf"{_DET}*{_PRE}{_NOUN}",
    rf"\b(?:think of|imagine|picture)\b.*\band\s+(?:the\s+|each\s+|every\s+|a\s+|an\s+)?{_PART}\s+as\s+{_DET}+"
    rf"{_PRE}{_NOUN}",
    rf"\b(?:the|each|every|a|an)\s+{_PART}\s+(?:is|are|acts? as|works? as)\s+(?:just\s+|basically\s+|kind of\s+|"
    rf"sort of\s+)?(?:like\s+{_DET}*|{_DET}+){_PRE}{_NOUN}",
    rf"\b(?:the|each|every|a|an|one)\s+{_PRE}{_NOUN}\s+(?:is|are|=|stands? for)\s+(?:like\s+)?"
    rf"(?:the\s+|a\s+|an\s+|one\s+|each\s+)(?:[a-z-]+\s+)?{_PART}\b",
    rf"\b{_NOUN},?\s+(?:i\.e\.?|that is),?\s+(?:the\s+)?{_PART}\b",
    rf"\b{_NOUN}\s+\((?:the\s+|an?\s+|no\s+)?(?:[a-z-]+\s+){{0,3}}{_PART}\)",
)]
#: A noun described as what training sends back through the model is the gradient, with no "i.e." needed: "the 'you
#: were wrong, change this' message that training sends backwards", "the note which the loss passes back"; not "the
#: ball that training passes back to the keeper" (training sends; the loss or backprop may pass or carry).
_DESCRIBED_GRADIENT = re.compile(
    rf"\b{_NOUN}\s+(?:that|which)\s+(?:(?:training|learning)\s+sends\s+back|(?:the loss|the optimi[sz]er|back-?prop\w*|"
    r"the backward pass)\s+(?:sends?|passes|pushes|carries|propagates)\s+back)(?:wards?)?\b")
#: Words of the lesson's own account that no picture of a part may take: "the residual stream is a path".
_NOT_A_PART_PICTURE = frozenset("""
path paths route routes line lines copy copies sum sums addition additions correction corrections signal signals
information input inputs output outputs result results version versions identity term terms factor factors product
products map maps function functions number numbers loss level levels model models network networks stack stacks
chain chains series sequence sequences step steps way ways
""".split())


def _part_noun(m: re.Match, norms: list[str]) -> tuple[str, str] | None:
    """The picture's noun (singular, plural) of a part mapping, or None when it is no noun of a picture (tried as
    matched, then the word before it: "as a river and ..." is "river")."""
    noun, pre = m.group("noun"), (m.groupdict().get("pre") or "").strip()
    candidates = (noun, pre) if _no_noun(noun) else (noun,)
    for noun in candidates:
        if not noun or _no_noun(noun):
            continue
        forms = _forms(noun)
        if any(w in _NOT_A_PICTURE or w in _NOT_A_PART_PICTURE or w in vocabulary.ADJECTIVES or vocabulary.is_domain_word(w)
               for w in (noun, forms[0])):
            continue
        if any(vocabulary.is_general(w) for w in (noun, forms[0])) and not _noun_elsewhere(forms, norms):
            continue
        return forms
    return None


def part_pictures(norms: list[str]) -> dict[tuple[str, str], tuple[str, str]]:
    """The nouns an answer maps onto model parts other than the heads (:data:`PARTS`): picture noun forms -> the part's
    (singular, plural); the first mapping of a noun counts. Args: norms, the normalised sentences in order."""
    out: dict[tuple[str, str], tuple[str, str]] = {}
    for norm in norms:
        for pattern in _PART_MAPPINGS:
            for m in pattern.finditer(norm):
                forms = _part_noun(m, norms)
                part = next((words for p, words in PARTS if re.fullmatch(p, m.group("part"))), None)
                if forms and part and forms not in out:
                    out[forms] = part
    return described_parts(norms) | out


def described_parts(norms: list[str]) -> dict[tuple[str, str], tuple[str, str]]:
    """The nouns an answer describes as a part (:data:`_DESCRIBED_GRADIENT`), as :func:`part_pictures` gives them;
    a description names what the noun does in the model, so it holds even where the answer's other words are
    everyday ones (:func:`matching_units`)."""
    out: dict[tuple[str, str], tuple[str, str]] = {}
    for norm in norms:
        for m in _DESCRIBED_GRADIENT.finditer(norm):
            forms = _part_noun(m, norms)
            if forms and forms not in out:
                out[forms] = PARTS[-1][1]
    return out


def read_as_parts(units_: list[Unit], pictures: dict[tuple[str, str], tuple[str, str]]) -> list[Unit]:
    """``units_`` with each picture noun of :func:`part_pictures` read as the part it stands for, in the matched text
    only; the sentence that states a mapping and a sentence that sets the picture apart keep their words."""
    if not pictures:
        return units_
    readings = [(re.compile(rf"(?<![\w-])(?:({re.escape(plural)})|({re.escape(singular)}))(?![\w-])"), one, many)
                for (singular, plural), (one, many) in pictures.items()]
    out = []
    for u in units_:
        norm = u.norm
        if not _LIMIT.search(norm) and not any(p.search(norm) for p in (*_PART_MAPPINGS, _DESCRIBED_GRADIENT)):
            for pattern, one, many in readings:
                norm = pattern.sub(lambda m, one=one, many=many: many if m.group(1) else one, norm)
        out.append(u if norm == u.norm else replace(u, norm=norm))
    return out


def matching_units(units_: list[Unit]) -> list[Unit]:
    """The units the concepts and misconceptions are matched in: :func:`read_as_heads` with the answer's
    :func:`own_picture`, then :func:`read_as_parts` with its :func:`part_pictures`; when the answer says everything
    inside another world (:func:`.worlds.entangled_share`), only with the parts it describes (:func:`described_parts`).
    """
    norms = [u.norm for u in units_]
    if worlds.inside_another_world(*worlds.entangled_share(norms)):
        return read_as_parts(units_, described_parts(norms))
    return read_as_parts(read_as_heads(units_, own_picture(norms)), part_pictures(norms))
