"""Nonsense written as a mapping onto another world (issue 11): the lesson's terms laid over a garden, a library
or an orchestra ("the residual connections are the hoses looped around the beds", "each head of lettuce has its
own query, key and value projections", "in our orchestra the residual stream is the corridor behind the stage").

:func:`.mixing.mixed_sentences` lets such sentences pass as the student's own analogy: a term set equal to a
thing ("X is the Y") compares. An answer that only ever does that, and never says it compares, is another
world explained with the lesson's words. A sentence is *foreign-world* (:func:`world_sentences`) when it

- mixes the lesson's terms with two or more foreign nouns (:func:`.mixing.mixed_sentences`), or
- binds a lesson term to a foreign noun ("head of lettuce", "layer norm of carpet", "the head librarian",
  :func:`.topic.misused`) and names a foreign noun (:func:`.mixing.foreign_nouns`), or
- sets a lesson term equal to a foreign noun ("the residual connections are **the hoses**", "the post-norm is
  **the conductor**") with no word that says it compares (like, imagine, think of, analogy, ...).

:func:`world_share` is the share of an answer's words in such sentences, for review routing only (a flag, no
score change).

An answer can also say that it maps ("the eight kittens are called the heads", "Mum says each shopper is a head")
and then never leave the other world: "each kitten has its own Query", "the MLP, the blender that mashes every
token". A genuine analogy also speaks of the model in sentences of its own ("a head likewise has its own query,
key and value matrices"). :func:`entangled_share` is the share of the words of the sentences that use the
lesson's terms that are in sentences also naming a foreign noun or verb (:func:`foreign_verbs`: "the MLP
*poaches* each token", "each head *caulks* its own query"), whatever they say about comparing. No list of foreign words: foreign nouns are those that are no lesson, picture or general word.
On tests/prose's dev split genuine answers reach 0.47 (exercise 1) and 0.38 (exercise 4) in :func:`world_share`. The lesson's own picture (a team, a person is a head, the notes) is never foreign.
"""
from __future__ import annotations

import re

from . import mixing, sentences, topic, vocabulary
from .read import FUNCTION_WORDS, words

#: Words that say a sentence compares, so its foreign nouns are the student's picture, not another world.
_EXPLICIT = re.compile(r"\b(?:like|as if|as though|just as|similar(?:ly)? to|resembl\w*|think of|imagine|"
                       r"analog\w*|metaphor\w*|compar\w*|in the same way)\b")

#: Where the clause that says what a term is ends ("the residual connections are the cables that loop around the
#: stage, and ..."): punctuation, or a quote (quoted words are examples: "the cat sat on the mat").
_PHRASE_END = re.compile(r"[,;:.!?()\"“”]|\s'|'\s")


def mapped_onto(sentence: str) -> str:
    """The foreign noun a lesson term is set equal to ("the residual connections are the hoses" -> "hoses"), or
    "" when the sentence sets no term equal to a foreign thing."""
    for m in vocabulary.IS_A.finditer(sentence):
        before = " ".join(sentence[:m.start()].split()[-3:])
        if not (vocabulary.STRONG.search(before) or vocabulary.WEAK.search(before)):
            continue
        phrase = _PHRASE_END.split(sentence[m.start():], maxsplit=1)[0]
        nouns = [n for n in mixing.foreign_nouns(phrase) if not (n.endswith("s") and vocabulary.is_general(n[:-1]))]
        if nouns:
            return nouns[0]
    return ""


#: A quoted stretch of text ("in 'the chef cooked the pasta', a head links 'cooked' to 'chef'"): an example of the
#: tokens being processed, whose words are no things of another world. Single quotes only when they open after no
#: letter and close before none (not the possessive "heads' outputs").
_QUOTED = re.compile(r"\"[^\"]{1,80}\"|(?<![\w'])'[^']{1,80}'(?![\w'])")


#: What introduces a quoted example sentence: "in 'the chef cooked the pasta', ...", "e.g. '...'", "the sentence '...'".
_EXAMPLE_BEFORE = re.compile(r"(?:\bin|\be\.g\.?|\bfor (?:example|instance)|\bsuch as|\blike|\b(?:sentence|phrase|"
                             r"text|input|prompt|example)s?|:)\s*$")


def _example(norm: str, m: re.Match) -> bool:
    """Whether a quoted stretch is an example of the tokens being processed: one or two words (a token: "links
    'cooked' to 'chef'"), or a longer one introduced as an example (:data:`_EXAMPLE_BEFORE`). Quotes around any
    other text do not hide it ("the 'garden hose' of the residual stream" still names a hose)."""
    return len(m.group(0)[1:-1].split()) <= 2 or bool(_EXAMPLE_BEFORE.search(norm, 0, m.start()))


def unquoted(norm: str) -> str:
    """``norm`` with the text of its quoted examples left out (the quotes stay, empty): what it says, not its
    examples (:func:`_example`)."""
    return _QUOTED.sub(lambda m: m.group(0)[0] * 2 if _example(norm, m) else m.group(0), norm)


def world_sentences(norms: list[str]) -> list[str]:
    """For each normalised sentence, why it lays the lesson's terms over another world: ``"mixed"``, ``"bound"``,
    ``"mapped"``, or "" (see the module docstring). Quoted examples do not count (:func:`unquoted`)."""
    out = []
    norms = [unquoted(n) for n in norms]
    for norm, mixed in zip(norms, mixing.mixed_sentences(norms)):
        nouns = mixing.foreign_nouns(norm)
        if mixed:
            out.append("mixed")
        elif nouns and topic.misused(norm, 0, len(norm)):
            out.append("bound")
        elif not _EXPLICIT.search(norm) and mapped_onto(norm):
            out.append("mapped")
        else:
            out.append("")
    return out


def world_share(norms: list[str]) -> float:
    """Share of the words (0-1) in foreign-world sentences (:func:`world_sentences`); 0 for an empty answer."""
    total = sum(len(words(s)) for s in norms)
    odd = sum(len(words(s)) for s, why in zip(norms, world_sentences(norms)) if why)
    return odd / total if total else 0.0


def world_words(norms: list[str], limit: int = 6) -> list[str]:
    """The foreign nouns of an answer's foreign-world sentences, in order, without repeats, at most ``limit``."""
    out: list[str] = []
    for norm, why in zip(norms, world_sentences(norms)):
        if why:
            out += [n for n in mixing.foreign_nouns(unquoted(norm)) if n not in out]
    return out[:limit]


def foreign_verbs(sentence: str) -> list[str]:
    """Verbs of a normalised sentence that are no verb of the lesson or of explanations
    (:data:`.sentences.VERB_BASES`, :data:`GENERAL_VERBS`), nor a domain, general or abstract word: a word in a verb's place, that is an
    -s or -ed form after a subject (a domain word or a pronoun, adverbs skipped) before an object or a
    preposition ("the mlp *poaches* each token", "layer norm *kneads* the stream"), or an -ed form after an
    auxiliary ("the outputs are *braised* together"). In order, with repeats."""
    tokens = sentences._TOKEN.findall(sentence)
    out = []
    for i, tok in enumerate(tokens):
        if len(tok) < 4 or not tok.isalpha() or any(_known(w) for w in _stems(tok)):
            continue
        j = i - 1
        while j >= 0 and (tokens[j] in sentences.ADVERBS or tokens[j].endswith("ly")):
            j -= 1
        before = tokens[j] if j >= 0 else ""
        after = tokens[i + 1] if i + 1 < len(tokens) else "."
        if before in sentences.AUXILIARIES:
            if tok.endswith("ed"):
                out.append(tok)
        elif (before in sentences.SUBJECT_PRONOUNS or (vocabulary.is_domain_word(before) and before not in FUNCTION_WORDS)) \
                and re.search(r"[^su]s$|ed$", tok) and (after in sentences.OBJECT_STARTS or after in vocabulary.PREPOSITIONS):
            out.append(tok)
    return out


#: General verbs of explanations, base forms (besides the lesson's, :data:`.sentences.VERB_BASES`): never a verb
#: from another world. Not used by the verb test of :mod:`.sentences`, where many are as often nouns (mask, test).
GENERAL_VERBS = frozenset("""
accept achieve adjust affect agree aim amplify appear argue arise assign assume attach base become behave
believe blur boost catch cause claim clarify collapse complete conflict confuse consolidate construct continue
cover damage deal degrade deliver demonstrate deserve destroy develop dilute diminish discover distinguish
distribute dominate drive emphasise emphasize encourage enter establish estimate evaluate exchange execute expand
expect explore expose extend extract fail fall feel fill fix flatten focus format gain glue grab guarantee guess
hand handle highlight hope identify illustrate indicate influence inform initialise initialize inject insert
inspect introduce invent isolate justify label land last leave lift limit live manage mark match mirror mislead
mask modify motivate name notice offer open organise organize own place point prepare present preserve promise
propagate propose prove prune publish raise realise realize recall recognise recognize reconcile record recover
refine reflect remix remove replace report rescue reset resolve respond restore result retain reveal rise save
scan scramble search settle shape simplify slip solve sound speak spend spot spread squeeze strengthen stretch
struggle succeed suffer suggest supply support survive swap switch teach test throw tie trace translate transpose
treat trust tune tweak unify verify wait warn weaken win wish wonder worry yield zoom
""".split())
#: An answer says what it says with the lesson's terms inside another world when more than this share of the words
#: of its term sentences, over at least ENTANGLED_MIN_SENTENCES of them, are in sentences that also name a foreign
#: thing (:func:`entangled_share`; genuine dev answers reach 0.77): review flags it "nonsense?".
ENTANGLED_SHARE = 0.8
ENTANGLED_MIN_SENTENCES = 3
_PREFIX = re.compile(r"^(?:pre|re|un|over|under|sub|de|mis|out|up|co|inter|multi|self)-?(?=\w{3})")
_MAKE_VERB = re.compile(r"(?<=\w{3})(?:is|iz)e?$")


def _stems(word: str) -> list[str]:
    """``word`` and what it may be an -s or -ed form of ("braised": braise, brais; "tacks": tack)."""
    forms = [word]
    if word.endswith("ed"):
        forms += [word[:-1], word[:-2], word[:-3]]
    elif word.endswith("s"):
        forms += [word[:-1], word[:-2]]
    out = list(forms)
    for w in forms:  # "pretrained", "recomputes", "tokenized": a prefix or -ise/-ize on a known word
        bare = _PREFIX.sub("", w)
        out += [bare, _MAKE_VERB.sub("", bare)]
    return out


def _known(word: str) -> bool:
    """A word of the lesson or of explanations: a function, domain, general or abstract word, an adverb, or a verb
    of :data:`.sentences.VERB_BASES` or :data:`GENERAL_VERBS` (adjective endings do not count here: "braised" is no adjective)."""
    return (word in FUNCTION_WORDS or sentences.verb_kind(word)[0] is not None or word in GENERAL_VERBS
            or vocabulary.is_domain_word(word)
            or word in vocabulary.GENERIC or word in vocabulary.ADJECTIVES or bool(vocabulary.ABSTRACT.search(word))
            or word.endswith(("ly", "wards")))


#: Words that bridge from a picture to the model: a sentence that uses one and then names the model in its own
#: terms ("each detective files what they find, *which in the model is* each head's own W_Q, W_K, W_V") speaks of
#: the model, whatever else it names.
_BRIDGE = re.compile(r"\b(?:in the (?:real |actual )?(?:model|transformer|network|mechanism|layer)|in a (?:real )?"
                     r"(?:model|transformer|network)|in (?:real )?transformers|i\.e\.?|that is,|in other words|"
                     r"in model terms|technically|mathematically|corresponds? to|stands? for|maps? (?:on)?to|"
                     r"which is (?:the|each|a|its)|(?:this|that) is (?:the|each|a|its|what|how|why|exactly))")


def bridges(sentence: str) -> bool:
    """Whether a normalised sentence bridges from a picture to the model: :data:`_BRIDGE` before a strong term,
    where what follows the bridge speaks of the model in its own terms to the end of the sentence ("..., which in
    the model is each head's own W_Q, W_K and W_V") or of its parenthesis ("(that is the concatenation)"), or states
    what stands for what ("in the model each head is one musician"). "In the model the kitten chases the pronoun in
    the cage" or "technically our MLP visits each token in the hutch" bridge to nothing: the other world goes on."""
    for m in _BRIDGE.finditer(sentence):
        after = unquoted(sentence[m.end():])
        if not vocabulary.STRONG.search(after):
            continue
        if not mixing.foreign_nouns(after) or mapped_onto(after):
            return True
        inner = after.split(")", 1)[0]
        if sentence[:m.start()].rstrip().endswith("(") and ")" in after and vocabulary.STRONG.search(inner) \
                and not mixing.foreign_nouns(inner):
            return True
    return False


#: Foreign verbs only count in an answer that names foreign nouns in at least this share of its term sentences: a
#: vivid verb ("the MLP *chews* on each token", "BERT *peeks* both ways") in an answer that otherwise names only the
#: model's things is the student's style, not another world. (Dev nonsense: 0.5 and more; genuine answers without
#: an analogy: 0.) The cost: nonsense told with foreign verbs alone, every noun the model's ("the MLP poaches each
#: token", "each head moors its own W_Q"), is no longer flagged by this; it is as vivid as a genuine answer's style.
VERB_WORLD_SHARE = 1 / 3


def _entangled(norm: str, verbs: bool = True) -> list[str]:
    """The foreign nouns and verbs (only nouns unless ``verbs``) of a sentence that uses a lesson term (any sense)
    and does not bridge to the model (:func:`bridges`); [] for any other."""
    if not _term_sentence(norm) or bridges(norm):
        return []
    norm = unquoted(norm)  # quoted examples ("'cooked' to 'chef'") are tokens, not things of another world
    return mixing.foreign_nouns(norm) + (foreign_verbs(norm) if verbs else [])


def _term_sentence(norm: str) -> bool:
    return bool(vocabulary.STRONG.search(norm) or vocabulary.WEAK.search(norm))


def _verbs_count(norms: list[str]) -> bool:
    """Whether foreign verbs count in an answer (:data:`VERB_WORLD_SHARE` of its term sentences name foreign
    nouns)."""
    terms = [n for n in norms if _term_sentence(n)]
    return bool(terms) and sum(1 for n in terms if _entangled(n, verbs=False)) >= VERB_WORLD_SHARE * len(terms)


def entangled_share(norms: list[str]) -> tuple[float, int]:
    """How much of what an answer says with the lesson's terms it says inside another world.

    Args:
        norms: the normalised sentences of an answer (every unit, prose or not).

    Returns:
        (the share, 0-1, of the words of the sentences that use a lesson term (:data:`.vocabulary.STRONG` or
        :data:`.vocabulary.WEAK`, any sense) that are in sentences also naming a foreign noun
        (:func:`.mixing.foreign_nouns`) or verb (:func:`foreign_verbs`, only when :data:`VERB_WORLD_SHARE` of
        the term sentences name foreign nouns) and not bridging to the model (:func:`bridges`); the number of such
        term sentences).
        (0.0, 0) when no sentence uses a term. On tests/prose's dev split genuine answers reach 0.77 (exercise 1,
        a newsroom carried through) and 0.80 (exercise 4, a bucket brigade) but for one weak answer told as a relay
        race (1.0); nonsense is at 0.79-1.0 but for one of 27 (0.72).
    """
    total = odd = n = 0
    verbs = _verbs_count(norms)
    for norm in norms:
        if not _term_sentence(norm):
            continue
        size = len(words(norm))
        total, n = total + size, n + 1
        if _entangled(norm, verbs):
            odd += size
    return (odd / total if total else 0.0), n


def compared_share(norms: list[str]) -> float:
    """The share (0-1) of an answer's term sentences (those that use a lesson term) that say they compare
    (:data:`.vocabulary.COMPARING`: "just as", "likewise") or bridge to the model (:func:`bridges`); 0.0 when none
    uses a term."""
    terms = [n for n in norms if _term_sentence(n)]
    return sum(bool(vocabulary.COMPARING.search(n) or bridges(n)) for n in terms) / len(terms) if terms else 0.0


def entangled_words(norms: list[str], limit: int = 6) -> list[str]:
    """The foreign nouns and verbs of the term sentences that :func:`entangled_share` counts, in order, without
    repeats (within a sentence too: "one head chases the carrot, another chases the pronoun")."""
    out: list[str] = []
    verbs = _verbs_count(norms)
    for norm in norms:
        for w in _entangled(norm, verbs):
            if w not in out:
                out.append(w)
    return out[:limit]


def inside_another_world(share: float, n_terms: int) -> bool:
    """Whether :func:`entangled_share`'s result says the answer never speaks of the model on its own."""
    return n_terms >= ENTANGLED_MIN_SENTENCES and share > ENTANGLED_SHARE


#: A character of a story: a personal pronoun (he, she, his, her, ...) or "who"/"whose" right after one of the
#: lesson's terms ("attention head 7, *who* died peacefully", "bert, *who* could see in both directions").
_CHARACTER = re.compile(r"\b(?:he|she|him|his|her|hers|himself|herself)\b|(?:" + vocabulary.STRONG.pattern + "|"
                        + vocabulary.WEAK.pattern + r")(?:\s+\d+)?,?\s+(?:who|whom|whose)\b")
#: An answer tells the lesson's terms as the characters of a story (an obituary, a fairy tale, a wedding toast)
#: when it names characters (:data:`_CHARACTER`) at least CHARACTERS_MIN times and at more than this rate per 100
#: words. On tests/prose's dev split genuine answers reach 4 and 0.97 (a picture of people carried through);
#: the dev nonsense told as a story 2.6-5.8.
CHARACTER_RATE = 2.0
CHARACTERS_MIN = 5


def characters(norms: list[str]) -> tuple[int, float]:
    """How often an answer speaks of characters (:data:`_CHARACTER`): (the count, the count per 100 words).

    Args:
        norms: the normalised sentences of an answer.

    Returns:
        (0, 0.0) for an empty answer. A technical explanation seldom says "he" or "she": the lesson's picture is a
        team, and its people are told in the plural ("the reviewers", "each of them").
    """
    n = sum(len(_CHARACTER.findall(norm)) for norm in norms)
    total = sum(len(words(norm)) for norm in norms)
    return n, (100 * n / total if total else 0.0)


def told_as_a_story(norms: list[str]) -> bool:
    """Whether an answer tells the lesson's terms as characters (:func:`characters` over both thresholds)."""
    n, rate = characters(norms)
    return n >= CHARACTERS_MIN and rate > CHARACTER_RATE
