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
   binds a term so and names two or more foreign concrete nouns (:func:`foreign_nouns`: heads of noun phrases
   after an article, possessive or "of" that are no domain, picture, general, adjective or abstract word)
   earns nothing (:func:`bound_and_mixed`). :func:`mixed_share` measures, for review routing, the share of an
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

_STRONG = re.compile(
    r"\b(?:(?:self-|multi-head |masked )?attention|attends?|attending|attended|transformers?|tokens?|embeddings?|"
    r"d_model|d_k|d_v|d_head|softmax|quer(?:y|ies)|mlps?|ffns?|feed-?forward|w_?[oqkv]|w_i_[qkv]|"
    r"layer ?norm\w*|encoders?|decoders?|logits?|gradients?|backprop\w*|concatenat\w*|vectors?|matri(?:x|ces)|"
    r"subspaces?|multi-head|qkv|causal\w*|bidirectional|unigrams?|bigrams?|learning rate|warm-?ups?|"
    r"post-?norm|pre-?norm|head_i|head_\d+|positional|(?:letter|character)[- ]frequenc\w*|cross-?entropy|jacobians?|"
    r"residual (?:connections?|streams?)|skip[- ]connections?|(?:train(?:ing)?|validation|val) loss(?:es)?)\b")
_WEAK = re.compile(
    r"\b(?:gpt\S*|bert\S*|heads?|layers?|blocks?|residuals?|models?|weights?|keys?|values?|projections?|masks?|masked|norms?|"
    r"networks?|neural|training|trained|parameters?|positions?|sequences?|dimensions?|width|outputs?|inputs?|"
    r"skip|stream|loss|sublayers?|sub-layers?|linear|normali[sz]\w*|compute|flops)\b")
_NAME = re.compile(r"\b(?:gpt\S*|bert\S*)")
#: Words that make a model's name mean the model (as does any strong anchor): "BERT reads the whole sentence".
_NAME_CONTEXT = re.compile(
    r"\b(?:models?|masks?|masked|sentences?|sequences?|texts?|words?|context|inputs?|pre-?train\w*|trained|training|"
    r"fine-?tun\w*|language|predict\w*|generat\w*|classif\w*|parameters?|heads?|layers?|weights?|blocks?|"
    r"positions?|gpt\S*|bert\S*)\b")
_PICTURE = re.compile(
    r"\b(?:persons?|people|team|teams|members?|lawyers?|readers?|reviewers?|colleagues?|experts?|associates?|"
    r"teammates?|workers?|analysts?|proofreaders?|committee|contracts?|notes?|picture|analogy|metaphor|"
    r"everyone|everybody|specialists?)\b")
_MAPS = re.compile(r"\b(?:is|are|=|corresponds?|plays?|stands? for|represents?|acts? as|maps?|mapped|becomes?|"
                   r"equals?|like|as|means?)\b|->|=")
#: Nouns that may follow "of" after a domain word without leaving the domain (besides anchors and picture words).
_DOMAIN_NOUNS = frozenset("""
size width sentence sentences text word words computation computations signal information data number numbers
feature features space input inputs output outputs result results pattern patterns relation relations
relationship relationships dimension dimensions part parts slice slices chunk chunks piece pieces them it each
all one two three four eight twelve h n x f i layer stack copies copy work cost compute point job jobs role roles
score scores probability probabilities distribution distributions representation representations activation
activations context meaning sum sums product products average mixture combination speed memory
run runs table experiment experiments step steps curve curves plot plots schedule rate rates level levels depth
character characters letter letters frequency frequencies corpus batch batches epoch epochs iteration iterations
baseline seed seeds path paths way route direction scale magnitude variance mean noise start end update updates
connection connections addition additions shortcut shortcuts image images pixel pixels filter filters state states
bottleneck gelu relu cnn rnn lstm code function functions equation equations formula grader setting settings dataset
identity branch branches pass passes trunk grad grads optimiser optimizer adam plateau prediction predictions error errors
future check factor factors derivative derivatives term terms plus init char chars
""".split())
_OF = re.compile(r"\s+of\s+(?:(?:the|a|an|this|that|these|those|his|her|their|its|our|some|every|each|all|one)\s+)*"
                 r"([^\W\d_][\w'-]*)")
_AFTER = re.compile(r"\s+([^\W\d_][\w'-]*)")


def _is_domain_word(word: str) -> bool:
    word = re.sub(r"'s?$", "", word)
    return bool(_STRONG.fullmatch(word) or _WEAK.fullmatch(word) or _PICTURE.fullmatch(word)) \
        or word in _DOMAIN_NOUNS or word in FUNCTION_WORDS


_COMPOUND_OF = re.compile(r"\s+(?!of\b)([^\W\d_][\w-]*)(?=\s+of\s)")
#: An apposition closed by a comma: "post-norm*, the neighbour's fence,*", "the transformer*, a toy robot from 1984,*".
_APPOSITION = re.compile(r"\s*,\s+(?:the|a|an|my|your|his|her|their|our|its|this|that)\s+([^,;:.!?()]{1,60}?)\s*,")


def _apposed(text: str, end: int) -> str:
    """The head noun of an apposition right after ``end`` that names a foreign thing ("" if none)."""
    m = _APPOSITION.match(text, end)
    if not m:
        return ""
    head = ""
    for w in m.group(1).split()[:5]:
        if w in _PREPOSITIONS or w in FUNCTION_WORDS:
            break
        head = re.sub(r"'s?$", "", w)
    return "" if not head or _general(head) else head


def _foreign_noun_at(text: str, at: int) -> bool:
    """Whether the noun phrase starting at ``at`` names a foreign thing: its adjectives are skipped ("of the
    *different* positions" is about positions), and a domain word anywhere among its first words counts."""
    for w in text[at:].split()[:4]:
        w = re.sub(r"[^\w'-]+$", "", w)
        if _is_domain_word(w):
            return False
        if not (w in _ADJECTIVES or _ADJECTIVE.search(w) or w in ("other", "different", "various", "many")):
            return True
    return False


def foreign(text: str, start: int, end: int) -> bool:
    """Whether the domain word ``text[start:end]`` is bound to a foreign noun: the head of an "of" phrase
    ("head of lettuce"; a domain noun may come between: "unigram level of the pond"), "head" before a noun
    ("head chef"), or an apposition ("post-norm, the neighbour's fence,"; "the transformer, a toy robot,")."""
    word = text[start:end]
    of = _OF.match(text, end)
    compound = _COMPOUND_OF.match(text, end)
    if not of and compound and compound.group(1) not in FUNCTION_WORDS and _is_domain_word(compound.group(1)):
        of = _OF.match(text, compound.end())
    if of and _foreign_noun_at(text, of.start(1)):
        return True
    if _apposed(text, end):
        return True
    if word == "head":
        nxt = _AFTER.match(text, end)
        if nxt:
            after = nxt.group(1)
            if not _is_domain_word(after) and not re.search(r"(?:s|ed|ing|ly)$", after):
                return True
    return False


#: Nouns about the lesson itself or too general to name a foreign thing ("the paper", "the same", "the rest").
_GENERIC = frozenset("""
lecture lecturer lectures teacher professor lesson class course paper papers article book textbook slides figure diagram example
examples picture analogy question answer exercise author authors end rest way idea point case time start
beginning top bottom thing things difference reason
noun nouns pronoun pronouns verb verbs subject subjects object objects adjective adjectives adverb clause phrase
grammar syntax meaning name names term terms date dates detail details kind kinds type types order
lot bit bunch couple number part parts sort form set pair series variety range amount amounts day days history
middle past year years others root
source story design trick problem downside upside limit maximum minimum price step findings result standard
variant variants version versions placement setup choice method approach recipe model one ones designers engineers
""".split())
#: Words that lead to the noun of a phrase rather than being it ("the same input", "the learned weights").
_ADJECTIVES = frozenset("""
same whole previous next first last full entire exact main usual final new old most left right big small large
wide narrow long short high low good bad key real true false only basic simple important few several original
own single second third fourth later earlier larger smaller deeper higher lower bigger longer shorter wider better
worse modern nice neat cheap early earliest late latest overall latter former upper inner outer extra other plain raw pure
clear strong weak tiny huge average random mere sheer
""".split())
_ADJECTIVE = re.compile(r"(?:ed|ing|al|ive|ous|ic|ful|able|ible|ent|ant|ary|est)$")
#: Words that are no noun where a phrase's head would stand ("the gradient *back*", "the *backward* pass").
_PARTICLES = frozenset("back down up out away forward forwards backward backwards along around off too".split())
_PREPOSITIONS = frozenset("of to in on at by for with from into onto over under between among across through "
                          "about as than like after before during within without per via".split())
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
        if before and before[-1].strip(",;:()") in _PREPOSITIONS:
            continue
        head, at = "", m.end()
        for _ in range(3):  # adjectives ("the learned", "the big") lead to the noun
            w = _NEXT_WORD.match(text, at)
            if not w or w.group(1) in FUNCTION_WORDS:
                break
            head, at = re.sub(r"'s?$", "", w.group(1)), w.end()
            if not (head in _ADJECTIVES or _ADJECTIVE.search(head) and not (_is_domain_word(head)
                                                                           and _ends_phrase(text, at))) \
                    or text[at:at + 1] in tuple(".,;:!?()"):
                break
        if head in ADVERBS or head in _PARTICLES:
            continue  # "the backward pass", "passes the gradient back": no noun at all
        of = _OF.match(text, at)
        if head and not (head in _GENERIC or head in _ADJECTIVES or _ADJECTIVE.search(head) or _is_domain_word(head)
                         or (of and _is_domain_word(of.group(1)))):
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
    if first in FUNCTION_WORDS or first in ADVERBS or first in _PARTICLES:
        return True
    w2 = _NEXT_WORD.match(text, w1.end())
    if verb_kind(first)[0] is None:  # a verb the list does not know, before its object ("shapes them")
        return first.endswith(("s", "ed")) and bool(w2) and w2.group(1) in FUNCTION_WORDS
    return not (w2 and verb_kind(w2.group(1))[0] is not None)


_ABSTRACT = re.compile(r"(?<=\w{3})(?:tion|sion|ity|ness|ment|ance|ence|ism|ship|ing|ure|ics|ogy|hood)$|[0-9]")


def _general(word: str) -> bool:
    """Not a foreign thing: a domain, picture or general word, an adjective, or an abstract noun ("-tion", "-ity")."""
    return (word in _GENERIC or word in _ADJECTIVES or bool(_ADJECTIVE.search(word)) or _is_domain_word(word)
            or bool(_ABSTRACT.search(word)) or len(word) < 3 or "-" in word or word.endswith(("ly", "wise")))


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


_IS_A = re.compile(r"\b(?:is|are|=|becomes?)\s+(?:just |simply |basically )?(?:a|an|one|the|like|our|my)\s")


def _compares(sentence: str) -> bool:
    """A comparison, the lesson's picture, or a lesson term set equal to a thing ("each head is a musician")."""
    if _COMPARES.search(sentence) or mapped(sentence) or _PICTURE.search(sentence):
        return True
    return any(_STRONG.search(" ".join(sentence[:m.start()].split()[-3:])) or
               _WEAK.search(" ".join(sentence[:m.start()].split()[-3:])) for m in _IS_A.finditer(sentence))


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
            if not w or (w.group(1) in FUNCTION_WORDS and w.group(1) not in _LEADING) or w.group(1) in _PREPOSITIONS:
                break  # "try this *after* a warm-up": no noun
            word = w.group(1)
            head, at = re.sub(r"'s?$", "", word), at + w.end()
            if word.endswith("'s") and not _general(head) and head not in out:
                out.append(head)  # "the neighbour's fence": the owner is a thing too
            nxt = re.match(r" ([^\W\d_][\w'-]*)", sentence[at:])
            modifier = head in _ADJECTIVES or head in _LEADING or (_ADJECTIVE.search(head) and not _is_domain_word(head)) \
                or word.endswith("'s") or "-" in head \
                or bool(nxt and _is_domain_word(nxt.group(1)) and nxt.group(1) not in FUNCTION_WORDS)
            if not modifier or not nxt:  # "the dot product", "a two-layer network": the noun comes next
                break
            at += 1
        if head and head not in _LEADING and head not in _FIXED and not _general(head) and head not in out:
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
        uses_terms = bool(_STRONG.search(norm) or _WEAK.search(norm))
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


def strong_beyond(text: str, spans: list[tuple[int, int]]) -> bool:
    """Whether ``text`` has a strong domain anchor (attention, token, gradient, learning rate ...) meant in the
    lesson's sense outside the stretch from the first matched span to the last (offsets into ``text``): in "stays
    at the unigram level U" matched by "stays" and "at U", "unigram" is the concept's own word, no anchor."""
    if not spans:
        return False
    lo, hi = min(s for s, _ in spans), max(e for _, e in spans)
    return any(m.end() <= lo or hi <= m.start() for m in _anchors(text, _STRONG))


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


def misused(text: str, start: int, end: int) -> list[str]:
    """The domain words inside ``text[start:end]`` that are bound to a foreign noun (empty: none)."""
    return [m.group(0) for pattern in (_STRONG, _WEAK) for m in pattern.finditer(text, start, end)
            if foreign(text, m.start(), m.end())]


def _anchors(text: str, pattern: re.Pattern) -> list[re.Match]:
    """Domain words of ``pattern`` in ``text`` meant in the lesson's sense: not bound to a foreign noun, and a
    model's name (BERT, GPT) only next to a word about models or text ("Bert looks both ways" is a person)."""
    found = [m for m in pattern.finditer(text) if not foreign(text, m.start(), m.end())]
    if pattern is _WEAK and any(_NAME.fullmatch(m.group(0)) for m in found):
        context = _STRONG.search(text) or _NAME_CONTEXT.search(_NAME.sub(" ", text, count=1))
        found = [m for m in found if context or not _NAME.fullmatch(m.group(0))]
    return found


def has_domain_word(text: str) -> bool:
    """Whether ``text`` has any domain word in the lesson's sense (strong or weak anchor)."""
    return bool(_anchors(text, _STRONG) or _anchors(text, _WEAK))


def anchored(text: str, spans: list[tuple[int, int]]) -> tuple[bool, bool]:
    """Whether ``text`` is anchored in the domain (a strong anchor, or two weak ones of which one lies beyond
    the matched ``spans``), and whether it has any domain word at all.

    Weak words do not vouch for themselves: in "the farmer stacks blocks" only the matched "blocks" is
    a domain word.
    """
    def outside(m: re.Match) -> bool:
        return not any(s < m.end() and m.start() < e for s, e in spans)

    strong, weak = _anchors(text, _STRONG), _anchors(text, _WEAK)
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
    weak = len(_anchors(sentence, _WEAK))
    if lesson and weak:
        weak += len(_anchors(sentence, _LESSON))
    if _anchors(sentence, _STRONG) or (weak >= 2 and not _misuses(sentence)):
        return "domain"
    if _PICTURE.search(sentence):
        return "analogy"
    return "off-topic"


@lru_cache(maxsize=4096)
def mapped(sentence: str) -> bool:
    """Whether a sentence maps the lesson's picture onto the model ("each person is a head", "notes = W_O")."""
    picture = [m.start() for m in _PICTURE.finditer(sentence)]
    domain = [m.start() for m in (_anchors(sentence, _STRONG) + _anchors(sentence, _WEAK))]
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
