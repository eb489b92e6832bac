"""Clause subjects that name something outside the lesson: "without residuals, *pancakes* stay at the unigram
level", "*the lettuces* get their own weights", "*the choir* runs several heads in parallel" (issue 11: the right
words in a sentence about something else earn nothing; :mod:`.assertions` gives such a clause the stance
``foreign``).

A subject is a noun phrase that opens a sub-clause and comes right before its verb: an optional opener ("and",
"so", "because", ...), an optional setting of time or place ("on Tuesday", "in the garage"), an optional determiner,
at most two modifiers, then the noun, then its verb (adverbs between are skipped: "pancakes *then* stay").

- **Plural**: a plural noun after "the", "these", "all", "two", ... (or none), before a verb a plural subject takes
  (an auxiliary or modal, or the base or past form of a verb of the domain, :data:`.sentences.VERB_BASES`). The noun
  is foreign when it is none of :data:`PLURALS` (the lesson's plural nouns, its picture's people, general nouns), no
  abstract noun ("-tion", "-ity", ...), no verb's -s form and no domain or picture word
  (:func:`.topic.has_domain_word`).
- **Singular**: a noun after "the", "my", "a", "this", ... before a verb a singular subject takes ("is", "has",
  "runs", "gave"). The noun is foreign when it is also no general word (:func:`.vocabulary.is_general`) and its
  stem is not among the words answers on this lesson use (:func:`.genre.lesson_words`): "my uncle", "the city
  council", not "the model", "the author", "the whole panel".
- **A scene elsewhere**: a setting with its determiner whose noun is foreign ("at the bakery the heads run ...");
  a name is no scene ("in PRE the residual addition ...").

A possessive of the picture's people before the noun keeps the phrase the lesson's ("the lawyers' memos are stapled
together"). The nouns of a picture the student states (:func:`pictured`: "a panel of experts" after "like", "the lens
is its own query, key and value projections") are no foreign subject either: :func:`.concepts.find` lets them pass.

Nothing is guessed from a word's "-s" alone: the plural must stand where a subject stands and be followed by a
verb, so "the run collapses" and "the model copes with it" have no plural subject (what follows "collapses" and
"copes" is no verb), and "each head attends to the tokens" none either ("each" is singular).
"""
from __future__ import annotations

import re
from functools import lru_cache

from . import sentences
from .read import FUNCTION_WORDS
from .vocabulary import COMPARING, PICTURE, is_general

#: Plural nouns a clause about the lesson may have as its subject (beyond the anchors of :mod:`.topic`).
PLURALS = frozenset("""
heads tokens layers blocks weights models vectors matrices queries keys values projections outputs inputs scores
embeddings dimensions parameters gradients residuals connections norms networks transformers words positions
sequences parts features activations units neurons updates steps losses predictions masks entries rows columns
elements numbers patterns relationships relations roles subspaces channels signals paths sentences texts
characters letters frequencies batches epochs iterations experiments runs curves plots rates levels copies
slices chunks pieces results distributions probabilities representations sums products shortcuts additions
images pixels filters states functions equations formulas settings datasets logits encoders decoders
sublayers sub-layers attentions bits bytes flops costs operations computations multiplications errors
people students things others ones persons readers members teams panels crews squads boards juries lawyers reviewers colleagues experts workers
analysts specialists teammates proofreaders notes readings researchers authors engineers designers humans users
we they both all many most some few several these those
components modules pieces items parts materials sources references resources perspectives views ideas concepts
aspects details methods approaches techniques tricks ways kinds types sorts cases examples questions answers terms
jobs duties specialties specialities
names nouns verbs pronouns adjectives adverbs subjects objects clauses phrases languages tasks problems issues
papers articles books slides lectures notebooks tutorials libraries tools frameworks implementations versions
variants systems architectures designs facts claims statements options choices differences similarities benefits
advantages downsides drawbacks limits reasons effects changes gains savings amounts groups sets pairs lists arrays
tensors shapes axes indices ids labels tags targets samples documents files lines strings calls loops threads
gpus cpus cores machines computers devices brains eyes ears hands minds humans children kids parents teachers
friends classmates beginners practitioners scientists companies labs sides ends directions neighbours neighbors
contexts meanings topics subjects points numbers digits values figures tables graphs diagrams pictures analogies
branches streams highways lanes routes circuits stages passes trials seeds configurations setups schedules warmups
warm-ups spikes explosions terms factors jacobians biases gains scales nets ffns mlps cnns rnns lstms gpts berts
""".split())
#: Determiners a plural subject may open with; a singular one ("a", "each", "this") rules a plural out.
_DETERMINERS = frozenset("the these those all some many most our their my your its two three four several both "
                         "other such no".split())
_SINGULAR = frozenset("a an each every this that one another".split())
_OPENERS = frozenset("and but so then because since when while if that which where though although thus hence "
                     "yet or also".split())
#: Verbs a plural subject takes besides the domain's own: auxiliaries and modals.
_PLURAL_AUX = frozenset("are were have had do did can could will would shall should may might must need".split())
_ADVERBS = frozenset("also only just still often always never then all both together simply really actually "
                     "basically now again already even soon quickly slowly".split())
#: Adverbs that end in "s" and could pass for a plural noun before a verb ("the heads *always* get ...").
_S_ADVERBS = frozenset("always sometimes perhaps afterwards towards besides nowadays thus whereas backwards forwards "
                       "upwards downwards sideways anyways regardless".split())
#: Adverbs skipped between a subject and its verb ("pancakes *then* stay", "the pancakes *sometimes* went").
_SKIPPED = _ADVERBS | _S_ADVERBS
#: The lesson's runs named by what they lack: "*no-res* only learned ..." is no foreign plural.
_RUN_NAME = re.compile(r"no-?(?:res|skip)|non-?residual")
_ABSTRACT = re.compile(r"(?:tions|sions|ities|nesses|ments|ances|ences|isms|ships|ings|ures|ics|ogies|ives|ors|ists)$")
_WORD = re.compile(r"[a-z][\w'-]*")


def _plural_verb(word: str) -> bool:
    """Whether ``word`` is a verb form a plural subject takes ("are", "stay", "got"; not "stays")."""
    if word in _PLURAL_AUX:
        return True
    kind, _ = sentences.verb_kind(word)
    return kind in ("base", "past")


def _foreign_plural(word: str) -> bool:
    """Whether ``word`` is a plural noun outside the lesson and its picture."""
    from .topic import has_domain_word  # topic imports nothing of this module; import here keeps the layers clear

    if (len(word) < 4 or not word.endswith("s") or word.endswith(("ss", "us", "is", "'s")) or word in PLURALS
            or word in FUNCTION_WORDS or word in _S_ADVERBS or _ABSTRACT.search(word)
            or _RUN_NAME.match(word)):
        return False
    kind, _ = sentences.verb_kind(word)
    return kind is None and not has_domain_word(word) and not has_domain_word(word[:-1])


#: Determiners a singular subject may open with ("*the* choir runs", "*my* uncle gave each head ...").
_SINGULAR_DETERMINERS = frozenset("the my our his her their your a an this".split())
#: Verbs a singular subject takes besides the domain's own -s and past forms.
_SINGULAR_AUX = frozenset("is was has had does did can could will would shall should may might must".split())


def _singular_verb(word: str) -> bool:
    """Whether ``word`` is a verb form a singular subject takes ("is", "runs", "gave"; not "run")."""
    if word in _SINGULAR_AUX:
        return True
    kind, _ = sentences.verb_kind(word)
    return kind in ("s", "past")


def _foreign_singular(word: str) -> bool:
    """Whether ``word`` is a singular noun outside the lesson, its picture and the words answers on it use."""
    from .topic import has_domain_word
    from .genre import lesson_words, stem

    if (len(word) < 3 or word in FUNCTION_WORDS or word in PLURALS or word + "s" in PLURALS or is_general(word)
            or PICTURE.fullmatch(word) or _RUN_NAME.match(word) or not word.isalpha()):
        return False
    kind, _ = sentences.verb_kind(word)
    return kind is None and not has_domain_word(word) and stem(word) not in lesson_words()


def _lesson_modifier(word: str) -> bool:
    """Whether ``word``, before a noun, is the possessive of one of the picture's people ("the *lawyers'* memos",
    "the *reviewer's* notes"): the phrase is the lesson's picture."""
    base = re.sub(r"'s?$", "", word)
    return base != word and (base in PLURALS or bool(PICTURE.fullmatch(base)))


def _noun_before_verb(toks, i: int, np_start: int, noun, verb, first_may_be_function_word: bool
                      ) -> tuple[tuple[int, int], ...]:
    """The subject whose noun (``noun(word)``) is one of ``toks[i:i+3]`` (at most two modifiers before it) and comes
    right before its verb (``verb(word)``, adverbs between skipped), as :func:`foreign_subjects` returns it."""
    for j in range(i, min(i + 3, len(toks))):
        word = toks[j][0]
        if word in FUNCTION_WORDS and (j > i or not first_may_be_function_word):
            return ()
        k = j + 1
        while k < len(toks) and toks[k][0] in _SKIPPED:
            k += 1
        if k < len(toks) and noun(word) and verb(toks[k][0]):
            return ((np_start, toks[j][2]),)
        if _lesson_modifier(word):
            return ()  # "the lawyers' memos": a phrase of the lesson's picture
    return ()


#: Prepositions that open a clause's setting of time or place ("*on Tuesday* the choir ...", "*in the garage* my
#: uncle ...").
_SETTING = frozenset("on in at during after before since until by".split())


def _after_setting(toks, i: int) -> int:
    """The index of the subject after a setting of at most three words that opens the clause at ``toks[i]`` ("on
    tuesday", "in the garage"), up to a determiner; ``i`` when there is none."""
    if i >= len(toks) or toks[i][0] not in _SETTING:
        return i
    for k in range(i + 2, min(i + 5, len(toks))):
        if toks[k][0] in _DETERMINERS or toks[k][0] in _SINGULAR_DETERMINERS:
            return k if toks[k - 1][0] not in FUNCTION_WORDS else i
    return i


@lru_cache(maxsize=4096)
def foreign_subjects(text: str, start: int = 0, end: int | None = None) -> tuple[tuple[int, int], ...]:
    """The noun phrases (start, end offsets into ``text``) in ``text[start:end]`` that open it, name something foreign
    and come right before their verb, or the scene elsewhere that opens it (see the module docstring): at most one, as
    a tuple (empty: none)."""
    end = len(text) if end is None else end
    toks = [(m.group(0), m.start(), m.end()) for m in _WORD.finditer(text, start, end)]
    i = 0
    while i < len(toks) and toks[i][0] in _OPENERS:
        i += 1
    at = _after_setting(toks, i)
    if at > i + 2 and (_foreign_singular(toks[at - 1][0]) or _foreign_plural(toks[at - 1][0])):
        return ((toks[i][1], toks[at - 1][2]),)  # "at the bakery the heads ...": a scene elsewhere (a name is no
        # scene: "in PRE the residual addition ...")
    i = at
    np_start = toks[i][1] if i < len(toks) else end
    if i < len(toks) and toks[i][0] in _SINGULAR_DETERMINERS:
        found = _noun_before_verb(toks, i + 1, np_start, _foreign_singular, _singular_verb, False)
        if found:
            return found
    if i < len(toks) and toks[i][0] in _SINGULAR:
        return ()
    if i < len(toks) and toks[i][0] in _DETERMINERS:
        i += 1
    return _noun_before_verb(toks, i, np_start, _foreign_plural, _plural_verb, True)


#: "the lens *is* its own ...", "that backward trace *is* the gradient": a noun set equal to something.
_MAPPED = re.compile(r"\b([a-z][a-z'-]{2,})\s+(?:is|are|was|were|=|stands? for|represents?|means?)\s+([^,;:.!?()]*)")

@lru_cache(maxsize=256)
def pictured(norms: tuple[str, ...]) -> frozenset[str]:
    """The nouns an answer sets equal to a term of the lesson ("the lens is its own query, key and value
    projections", "that backward trace is the gradient") or compares with ("a panel of experts" after "like"):
    the student's own picture, whose nouns are no foreign subject ("the whole panel costs about one wide head").
    An answer that never speaks of the model in sentences of its own (:func:`.worlds.inside_another_world`)
    pictures nothing, as for :mod:`.pictures`.

    Args:
        norms: the answer's sentences, normalised (:func:`.read.normalise`).

    Returns:
        The nouns (singular or plural, as written); empty when the answer pictures nothing.
    """
    from .topic import has_domain_word
    from .worlds import entangled_share, inside_another_world

    if inside_another_world(*entangled_share(list(norms))):
        return frozenset()  # nonsense that says "the hoses are the residual connections" pictures nothing
    out = set()
    for norm in norms:
        for m in _MAPPED.finditer(norm):
            noun = m.group(1)
            if has_domain_word(m.group(2)) and not has_domain_word(noun) and not _not_a_picture(noun):
                out.add(noun)
        for m in COMPARING.finditer(norm):
            out.update(w for w in _WORD.findall(norm, m.end(), m.end() + 60)[:6] if w not in FUNCTION_WORDS)
    return frozenset(out)


#: Singular subjects and scenes elsewhere are read as foreign only in an answer whose content words are at least this
#: share foreign to answers on this lesson (:func:`.genre.foreign_share`) and that pictures nothing: a genuine answer
#: names its sources and tools as subjects ("the video says ...", "in the homework the heads ..."), which no word list
#: holds. Chosen on tests/prose's dev split (2026-12-07): 1 of its 37 genuine answers without a picture reaches it,
#: 79 of its 86 nonsense answers do.
FOREIGN_WORDS_GATE = 0.14


@lru_cache(maxsize=256)
def read_elsewhere(norms: tuple[str, ...]) -> bool:
    """Whether an answer's singular subjects and scenes elsewhere are read as foreign (:data:`FOREIGN_WORDS_GATE`).

    Args:
        norms: the answer's sentences, normalised (:func:`.read.normalise`).
    """
    from .genre import foreign_share

    return not pictured(norms) and foreign_share(list(norms))[0] >= FOREIGN_WORDS_GATE


def _not_a_picture(word: str) -> bool:
    """Words set equal to a term that picture nothing of the student's own: function words ("that is why", "there
    are"), general words ("the difference is ..."), the lesson's own picture ("each person is a head")."""
    return (word in FUNCTION_WORDS or word in {"itself", "below", "above", "here", "what", "why", "how"}
            or is_general(word) or bool(PICTURE.fullmatch(word)))


def noun_of(text: str, start: int, end: int) -> str:
    """The last word of the subject ``text[start:end]`` (its noun)."""
    found = _WORD.findall(text, start, end)
    return found[-1] if found else ""

