"""Step 2, sentences: the blocks of an answer cut into sentence units (a bare keyword list into its items).

A unit is *prose* (a sentence, counted in the answer's prose share) when it has at least ``sentence_min_words``
words, at least ``sentence_min_function_share`` function words (conjunctions counted at most as often as the
others, :func:`sentence_share`), fewer than two arrows, and a verb-like word (:func:`has_verb`). The verb test
is what tells a sentence from a fragment list whose items have articles and prepositions: "- several heads in
parallel on the same tokens", "- own query, key and value projections for each head", "- the outputs of all
heads concatenated, then W_O", "- a causal mask for GPT, none for BERT" are fragments (the labelling guide:
fragments earn nothing; an answer mostly of them is a keyword list). A word is verb-like when it is

1. an auxiliary, modal or copula (:data:`AUXILIARIES`: "each head *is* a reader", "GPT *can* not look
   ahead") or a subject's contraction ("*it's*", "*they're*", "*let's*"; not the possessive "head's");
2. a form of a verb of this domain (:data:`VERB_BASES`, ~210 verbs in every inflection, and
   :data:`IRREGULAR_PAST`) in a verb's place:

   - the -s form after a subject (a pronoun or a content word) or first in a clause: "each head *attends*",
     "the MLP *processes* each token", "| *reads* the whole contract |";
   - the base form after a subject or as a command: "heads *run* in parallel", "*imagine* a team", "*think* of";
   - the past form after a subject and not ending the clause: "the model *learned* a pattern", but not
     "the outputs of all heads *concatenated*, then W_O" nor "roles *learned*, not assigned";
     a regular past form before a preposition is a participle ("heads *computed* in parallel on the same tokens"
     is a fragment) unless its verb takes no object (:data:`INTRANSITIVE`: "the heads *worked* in parallel");
   - the -ing form before its object: "*merging* the notes", "*concatenating* the head outputs";

   bases as often nouns (:data:`NOUN_TOO`: maps, uses, costs, splits) count as -s forms only before an object
   or a content word ("the model *maps* each token", not "attention maps for each head"), as base forms only
   after a plural subject ("heads *split* the work", not "a head split");
3. any word after "I/you/we/they" ("they *meet*"), or an -s/-ed word after another pronoun ("it *deepens*").

"""
from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cached_property

from .spec import Rubric
from .read import FUNCTION_WORDS, Block, function_share, normalise, words

_ABBREV = re.compile(r"(?:\b(?:e\.g|i\.e|etc|vs|al|fig|eq|approx|cf|resp|ca|viz|incl|mr|mrs|dr|prof|st|sec)|"
                     r"(?:^|\s)(?-i:[a-z]))\.$", re.I)
#: An initial ("A. Vaswani", "J. R. R. Tolkien"): a capital letter and a period at the start, after a capitalised
#: word or another initial (:func:`_initial`). A capital after another word ends its sentence: "the run stays at U.
#: Pre-norm ...", "the sum of x and F. Post-norm ..." (the lesson's letters); a small letter never does ("output =
#: F(x) + x. the derivative ...": terse notes go on, as :data:`_ABBREV` reads them).
_INITIAL = re.compile(r"(?:^|\s)([A-Z])\.$")
#: "No." before a number ("No. 5") is short for number; before a word it is the answer no ("Actually no. Without ...").
_NUMBER_ABBREV = re.compile(r"\bno\.$", re.I)


def _initial(end: str) -> bool:
    """Whether ``end`` (a sentence so far) ends with an initial (:data:`_INITIAL`), not a letter ending it."""
    m = _INITIAL.search(end)
    if not m:
        return False
    before = end[:m.start(1)].split()
    return not before or before[-1][0].isupper()


_SENTENCE_END = re.compile(r"(?<=[.!?])([\"')\]]*)\s+(?=\S)")


@dataclass
class Unit:
    """A sentence (or a list item): the text shown to people and the normalised text matched."""

    display: str
    norm: str
    section: int
    block: int
    list_item: bool = False
    prose: bool = False
    quoted: bool = False  # from a Markdown blockquote (.read.Block.quoted)

    @cached_property
    def bare_terms(self) -> bool:
        """Whether the unit is terms side by side and nothing that relates them: no verb (:func:`has_verb`), no function
        word ("each", "in", "of"), no relating word ("per", "own", "via") and no relating sign (= : -> | + ( ),
        e.g. "heads parallel qkv W_O concat". It asserts nothing (tests/prose/LABELLING.md: a bare term earns
        nothing), where "- several heads in parallel on the same tokens", "Q, K, V per head" and "person = head"
        relate their terms."""
        return (not _RELATING_SIGN.search(self.display) and not has_verb(self.norm)
                and not any(t.casefold() in FUNCTION_WORDS or t.casefold() in RELATING_WORDS for t in words(self.norm)))


#: Words that relate the terms of a fragment without being function words (.read.FUNCTION_WORDS).
RELATING_WORDS = frozenset("""per own via vs versus plus minus times instead like unlike without within around after
before behind beside besides along past near inside outside above below beyond during toward towards upon until
despite except throughout""".split())
_RELATING_SIGN = re.compile(r"[=:|+(→⇒←>≈~×*]|->|\bx\b")


def split_sentences(text: str) -> list[str]:
    """Sentences of one block: split after . ! ? unless it ends an abbreviation like "e.g."."""
    pieces, current = [], ""
    parts = _SENTENCE_END.split(text)  # text, closing quotes or brackets, text, ...
    split = [piece + closer for piece, closer in zip(parts[::2], parts[1::2] + [""])]
    for i, piece in enumerate(split):
        current = f"{current} {piece}".strip() if current else piece
        end = current.rstrip("\"')]")
        number = _NUMBER_ABBREV.search(end) and i + 1 < len(split) and split[i + 1][:1].isdigit()  # "No. 5"
        # an ellipsis inside a sentence goes on when a small letter follows: "head_2(head_1(X))...) is not ..."
        trailing = end.endswith("...") and i + 1 < len(split) and split[i + 1][:1].islower()
        if not (_ABBREV.search(end) or _initial(end) or number or trailing):
            pieces.append(current)
            current = ""
    if current:
        pieces.append(current)
    return [p.strip() for p in pieces if p.strip()]


#: Characters read per word of ``max_words``: no real word is longer, so a 1 MB "word" is cut, not normalised.
CHARS_PER_WORD = 32


def units(rubric: Rubric, blocks_: list[Block]) -> tuple[list[Unit], int, bool]:
    """All sentence units, up to ``rubric.max_words`` words; also the total words and whether cut.

    Text past the cut is only counted (words of the raw text, :func:`.read.words`), never normalised; a sentence
    longer than ``CHARS_PER_WORD`` characters per word still to read is cut at a space first, so the work is
    bounded by ``max_words`` whatever the input (the total may then differ by a few words from a full count:
    "doesn't" counts one word raw, two normalised).
    """
    out: list[Unit] = []
    total = 0
    cut = False
    for b, block in enumerate(blocks_):
        for sentence in split_sentences(block.text):
            room = rubric.max_words - total
            if room <= 0:
                total += len(words(sentence))
                cut = cut or total > rubric.max_words
                continue
            rest = ""
            if len(sentence) > room * CHARS_PER_WORD:
                at = sentence.rfind(" ", 0, room * CHARS_PER_WORD)
                at = at if at > 0 else room * CHARS_PER_WORD
                sentence, rest = sentence[:at], sentence[at:]
                if re.match(r"\w", rest) and re.search(r"\w$", sentence):  # cut inside a word: counted once
                    rest = re.sub(r"^\w+", "", rest)
                cut = True
            pieces = [sentence]
            toks = words(sentence)
            items = [p for p in re.split(r"\s*[,;|]\s*", sentence) if p.strip()]
            if (len(items) >= rubric.list_min_items
                    and function_share(toks) < rubric.list_max_function_share):
                pieces = items  # a bare keyword list: its items never co-occur
            for piece in pieces:
                if total >= rubric.max_words:
                    total += len(words(piece))
                    cut = True
                    continue
                n = len(words(normalise(piece)))
                if total + n > rubric.max_words:
                    cut = True
                    keep = rubric.max_words - total
                    piece = " ".join(piece.split()[:keep])
                total += n
                unit = _make_unit(rubric, piece, block.section, b, list_item=len(pieces) > 1, quoted=block.quoted)
                if unit.norm:
                    out.append(unit)
            total += len(words(rest))  # what the character cut left unread
    return out, total, cut


#: An arrow of notes ("residuals -> gradient highway"); normalise turns "→" and "⇒" into these.
_ARROW = re.compile(r"(?:-|=)>")


#: Coordinating words that join keywords as well as clauses ("heads parallel and own query and concat W_O").
CONJUNCTIONS = frozenset({"and", "or", "so", "then", "plus", "nor"})


def sentence_share(tokens: list[str]) -> float:
    """Share of function words among ``tokens`` (0 for none), where coordinating conjunctions
    (:data:`CONJUNCTIONS`) count at most as often as the other function words: a conjunction joins phrases
    that have articles, prepositions or verbs of their own ("residual connections and layer norms wrap
    attention and the MLP": (1 + 1) / 10), not bare keywords ("heads parallel and own query key value and
    concat W_O and MLP per token": 0)."""
    if not tokens:
        return 0.0
    folded = [t.casefold() for t in tokens]
    joins = sum(t in CONJUNCTIONS for t in folded)
    others = sum(t in FUNCTION_WORDS and t not in CONJUNCTIONS for t in folded)
    return (others + min(joins, others)) / len(tokens)


# --------------------------------------------------------------------------- the verb test

#: Auxiliaries, modals and the copula: any one of them makes a clause ("each head is a reader").
AUXILIARIES = frozenset("""
is are was were be been being am has have had having do does did can could will would shall should may might
must
""".split())
#: Words that stand for a subject: a verb form right after one of them is read as a verb ("it helps", "we split").
SUBJECT_PRONOUNS = frozenset("""
i you he she it we they this that these those which who what one each all both some many most few others there
everything nothing something anything everyone someone anyone nobody everybody somebody
""".split())
#: Plural subjects: any content word right after one is read as a verb ("they meet", "we differ").
_PLURAL_PRONOUNS = frozenset("i you we they".split())
#: Words that begin an object: an ambiguous form (:data:`NOUN_TOO`) before one is a verb ("maps each token").
OBJECT_STARTS = frozenset("""
the a an each every its their it them all this these those both his her our your one no some any my many
several multiple two three four more less much enough another other such what how whatever why
""".split())
#: Words a command may follow at the start of a sentence ("so picture a ...", "now imagine ...").
_OPENERS = frozenset("so ok okay and but now then first just please also".split())
#: Adverbs: skipped when looking back from a verb form for its subject ("the heads also run", "each one then adds"),
#: and no noun where a phrase's head would stand (.topic, .pictures, .worlds).
ADVERBS = frozenset("""
also only just still often always never usually then each all both together first simply really actually
basically effectively not now thus therefore instead again already even itself themselves himself herself
""".split())
#: A subject's contracted verb as :func:`.read.normalise` leaves it ("it's", "they're", "we've", "let's").
_CONTRACTED = re.compile(r"^(?:it|that|there|here|what|who|he|she|let|where|how|this|everything)'s$"
                         r"|'(?:re|ve|ll|d|m)$")

#: Verbs of this domain, then general verbs of explanations that are seldom nouns (refine, suggest, reveal), base
#: forms: each in every inflection (:func:`_inflections`) is a verb-like word.
VERB_BASES = frozenset("""
act add aggregate allow apply arrive attend average avoid begin belong blend break bring build calculate call
ask capture carry change check choose collect combine come compare compute concatenate connect consider consist
contain contribute control convert copy correspond cost count create cut decide decode depend describe detect
determine differ divide double drop embed enable encode end ensure exist explain explode express feed find
fit flow focus follow force forget form gather generate get give go grow halve handle happen hear help hide
hold ignore imagine improve include increase involve join keep know lead learn let link listen look lose make
map mask matter mean measure meet merge miss mix move multiply need normalise normalize note notice obtain occur
operate optimise optimize pass pay perform pick picture play predict prefer prevent process produce project
protect provide pull push put reach read receive reduce refer relate rely remain remember repeat represent
require reshape rest return reuse review rotate route run say scale see seem select send serve set share shift show
shrink sit skip slice solve sort specialise specialize split stabilise stabilize stack stand start stay stop
store sum suppose surround take talk tell tend think track train transform travel treat try turn understand
update use vanish vary want watch weigh work wrap write
""".split()) | frozenset("""
achieve affect agree amplify appear argue arise assume believe clarify collapse confuse construct continue degrade
deliver deserve destroy develop dilute diminish discover distinguish distribute dominate emphasise emphasize
encourage establish evaluate execute expand explore extend extract identify illustrate indicate introduce isolate
justify manage modify motivate organise organize prepare preserve propagate propose prove realise realize
recognise recognize reconcile recover refine reflect remove replace resolve respond retain reveal simplify
strengthen succeed suffer suggest survive teach translate unify verify weaken
""".split())
#: Bases whose forms are as often nouns ("attention maps", "the uses", "a split"): their -s form is a verb only
#: before an object or a content word ("maps each token"), their base form only after a plural subject.
NOUN_TOO = frozenset("""
change check copy cost count cut drop end form look map mask need pass process project rest set shift sort split
stack start sum track turn update use
""".split())
#: Irregular past forms and participles (regular ones are made by :func:`_inflections`).
IRREGULAR_PAST = frozenset("""
ran saw seen took taken gave given made kept fed split put got gotten went gone came did done knew known
thought told said found held brought built chose chosen became began begun grew grown led left lost meant
read sent set showed shown stood understood wrote written sat cut let hid hidden broke broken drew drawn
spent paid fell fallen blew blown dealt threw thrown flew flown froze frozen rose risen struck stuck swept spread
shook shaken fought caught taught bought sought won wore worn drove driven rode ridden sank sunk slid spun shot
shut hit hurt lay laid lent felt heard slept swung tore torn woke forgot forgotten beat beaten bit bitten fled
hung learnt leapt lit met mistook overcame sped spelt spilt stung swore undid withdrew arose ate eaten
""".split())


def _inflections(base: str) -> set[str]:
    """``base`` with -s, -ed and -ing, spelled every way English spells them ("map": maps, mapped, mapping)."""
    out = {base}
    if re.search(r"(?:s|sh|ch|x|z|o)$", base):
        out.add(base + "es")
    elif re.search(r"[^aeiou]y$", base):
        out.add(base[:-1] + "ies")
    else:
        out.add(base + "s")
    stem = base[:-1] if base.endswith("e") else base
    if re.search(r"[^aeiou]y$", base):
        out |= {base[:-1] + "ied", base + "ing"}
    else:
        out |= {stem + "ed", stem + "ing"}
    if re.search(r"[^aeiou][aeiou][bdgklmnprtz]$", base):  # a doubled last consonant: mapped, splitting
        out |= {base + base[-1] + "ed", base + base[-1] + "ing"}
    return out


_FORMS: dict[str, tuple[str, str]] = {}  # a form -> (its kind, its base)
for _base in VERB_BASES:
    for _form in _inflections(_base):
        _FORMS.setdefault(_form, ("past" if _form.endswith("ed") else "ing" if _form.endswith("ing")
                                  else "base" if _form == _base else "s", _base))
for _form in IRREGULAR_PAST:
    _FORMS.setdefault(_form, ("past", _form))
#: Bases whose past form before a preposition is a finite verb ("the heads worked in parallel", "the loss dropped to
#: zero"); any other regular past form there is a participle of a fragment ("heads computed in parallel on the
#: same tokens", "outputs concatenated by W_O").
INTRANSITIVE = frozenset("""
act arrive attend belong come consist depend differ drop end exist explode fail flow focus go grow happen listen
look matter move occur operate rely remain rest run sit specialise specialize stand start stay talk tend travel
turn vanish vary wait work
""".split())
_REGULAR_PAST = frozenset(f for f, (k, _) in _FORMS.items() if k == "past" and f.endswith("ed"))
_TOKEN = re.compile(r"[^\W_]+(?:[-_'][^\W_]+)*|[,;:.!?]")  # words and clause marks; brackets are skipped
_CLAUSE_END = frozenset(",;:.!?")
#: Determiners of one thing: after "each head" an ambiguous -s form is a verb ("each head looks at", "a block maps to";
#: "each head maps" can not be a plural noun).
_SINGULAR_DETERMINERS = frozenset("each every a an one another either neither".split())
#: Particles and prepositions after which an unknown -s/-ed word is still a verb ("blows up", "plateaued at").
_PARTICLES = frozenset("up down out off away back at to into onto over".split())


def verb_kind(word: str) -> tuple[str | None, str]:
    """The kind of verb form ``word`` is ("s", "base", "past", "ing"; None for none) and its base."""
    return _FORMS.get(word, (None, ""))


def _subject_before(tokens: list[str], i: int) -> str:
    """The word before ``tokens[i]`` that could be its subject, past adverbs ("heads also run": "heads");
    '' at the start of the clause."""
    j = i - 1
    while j >= 0 and (tokens[j] in ADVERBS or tokens[j].endswith("ly")):
        j -= 1
    return tokens[j] if j >= 0 and tokens[j] not in _CLAUSE_END else ""


def _is_subject(word: str, plural: bool = False) -> bool:
    """A pronoun subject, or a content word (a noun, as far as a word list can tell; plural when asked)."""
    if word in SUBJECT_PRONOUNS:
        return True
    if not word or word in FUNCTION_WORDS:
        return False
    return word.endswith("s") if plural else True


def has_verb(norm: str) -> bool:
    """Whether a normalised sentence has a verb-like word, the test that tells a sentence from a fragment.

    See the module docstring for the rule and its examples.
    """
    tokens = _TOKEN.findall(norm)
    for i, tok in enumerate(tokens):
        if tok in AUXILIARIES or _CONTRACTED.search(tok):
            return True
        kind, base = _FORMS.get(tok, (None, ""))
        before = _subject_before(tokens, i)
        nxt = tokens[i + 1] if i + 1 < len(tokens) else "."
        ambiguous = base in NOUN_TOO
        starts = before == "" or before in _OPENERS  # a clause's first word (a command, or a subject left out)
        object_next = nxt in OBJECT_STARTS or nxt.isdigit()
        singular = i >= 2 and tokens[i - 2] in _SINGULAR_DETERMINERS and before not in FUNCTION_WORDS
        if kind == "s" and (_is_subject(before) or starts) and (
                not ambiguous or object_next or singular or (nxt not in FUNCTION_WORDS and nxt not in _CLAUSE_END)):
            return True  # "each head attends", "the model maps each token"; not "attention maps for each head"
        if kind == "base" and (_is_subject(before, plural=ambiguous) or (starts and (nxt != "of" or tok == "think"))):
            return True  # "heads run", "a norm surrounds": "they mix"; a command "imagine ...", "think of ..."
        if kind == "past" and _is_subject(before) and nxt not in _CLAUSE_END and (
                tok not in _REGULAR_PAST or nxt not in FUNCTION_WORDS or nxt in OBJECT_STARTS or base in INTRANSITIVE):
            return True  # "the model learned a ...", "the loss dropped to"; not "heads computed in parallel on ..."
        if kind == "ing" and object_next:
            return True  # a verb with its object: "merging the notes", "concatenating the head outputs"
        if kind is None and (before in _PLURAL_PRONOUNS and tok not in FUNCTION_WORDS
                             or before in SUBJECT_PRONOUNS and re.search(r"[^su]s$|ed$", tok)):
            return True  # a verb not in the list after a pronoun: "they meet", "it deepens", "this doubled"
        if (kind is None and tok not in FUNCTION_WORDS and re.fullmatch(r"[a-z]{2,}(?:[^aeiosu]s|ed)", tok)
                and _is_subject(before) and (object_next or nxt in _PARTICLES)):
            return True  # a verb not in the list after a noun, before its object: "warm-up lets the gradients
            # settle", "the loss plateaued at", "post-norm wrecks the first updates"
    return False


def _not_arrow_notes(norm: str) -> bool:
    """Whether a unit with arrows still reads as a sentence: "residuals -> gradient highway -> deep nets trainable" is
    notes in arrows (fewer than two arrows pass), but a chain whose links are clauses with verbs of their own ("the grad
    goes through all 12 sub-layers -> shrinks each time -> first blocks get no update") is a sentence written with
    arrows for "so"."""
    links = _ARROW.split(norm)
    return len(links) < 3 or 2 * sum(has_verb(link.strip()) for link in links) > len(links)


def _make_unit(rubric: Rubric, display: str, section: int, block: int, list_item: bool = False,
               quoted: bool = False) -> Unit:
    norm = normalise(display)
    toks = words(norm)
    prose = (not list_item and len(toks) >= rubric.sentence_min_words
             and sentence_share(toks) >= rubric.sentence_min_function_share
             and _not_arrow_notes(norm)
             and has_verb(norm))
    return Unit(display=display, norm=norm, section=section, block=block, list_item=list_item, prose=prose,
                quoted=quoted)
