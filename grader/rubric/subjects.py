"""Clause subjects that name something outside the lesson: "without residuals, *pancakes* stay at the unigram
level", "*the lettuces* get their own weights" (issue 11: the right words in a sentence about something else earn
nothing; :mod:`.assertions` gives such a clause the stance ``foreign``).

A subject is a noun phrase that opens a sub-clause and comes right before its verb: an optional opener ("and",
"so", "because", ...), an optional determiner ("the", "these", "all", "two", ...), at most two modifiers, then a
plural noun, then a verb a plural subject takes (an auxiliary or modal, or the base or past form of a verb of the
domain, :data:`.sentences.VERB_BASES`; adverbs between are skipped: "pancakes *then* stay"). The noun is foreign
when it is none of :data:`PLURALS` (the lesson's plural nouns, its picture's people, general nouns), no abstract
noun ("-tion", "-ity", ...), no verb's -s form and no domain or picture word (:func:`.topic.has_domain_word`).

Nothing is guessed from a word's "-s" alone: the plural must stand where a subject stands and be followed by a
verb, so "the run collapses" and "the model copes with it" have no plural subject (what follows "collapses" and
"copes" is no verb), and "each head attends to the tokens" none either ("each" is singular).
"""
from __future__ import annotations

import re
from functools import lru_cache

from . import sentences
from .read import FUNCTION_WORDS

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
people students things others ones persons readers members teams lawyers reviewers colleagues experts workers
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


@lru_cache(maxsize=4096)
def foreign_subjects(text: str, start: int = 0, end: int | None = None) -> tuple[tuple[int, int], ...]:
    """The noun phrases (start, end offsets into ``text``) in ``text[start:end]`` that open it, are plural, name
    something foreign and come right before their verb: at most one, as a tuple (empty: none)."""
    end = len(text) if end is None else end
    toks = [(m.group(0), m.start(), m.end()) for m in _WORD.finditer(text, start, end)]
    i = 0
    while i < len(toks) and toks[i][0] in _OPENERS:
        i += 1
    np_start = toks[i][1] if i < len(toks) else end
    if i < len(toks) and toks[i][0] in _SINGULAR:
        return ()
    if i < len(toks) and toks[i][0] in _DETERMINERS:
        i += 1
    for j in range(i, min(i + 3, len(toks))):  # at most two modifiers before the noun
        word = toks[j][0]
        if word in FUNCTION_WORDS and j > i:
            return ()
        k = j + 1
        while k < len(toks) and toks[k][0] in _SKIPPED:
            k += 1
        if k < len(toks) and _foreign_plural(word) and _plural_verb(toks[k][0]):
            return ((np_start, toks[j][2]),)
    return ()
