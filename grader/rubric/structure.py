"""The form of a written answer, judged without the rubric: sections answered, length, sentences, language.

These are the rules of the *public* checks of a written answer (exercise 1's ``answer.md``, exercise 4's
``## Explanation``). They ship to students, so nothing here says what a good answer contains: no concept,
no pattern, no domain word. Their numbers are in the ``[answer]`` table of the exercise's
``exercise.toml`` (public), which the judge's rubric reads too (:func:`grader.rubric.spec.load`), so the
bundle and the judge count words and sentences the same way::

    [answer]
    min_words = 100                  # fewer words: far too short
    max_words = 1200                 # more: far too long (only the first max_words are read)
    suggested = [300, 700]           # said in the README and in the feedback
    section_min_words = 5            # an answered question has at least this many words of its own
    min_prose_share = 0.5            # less of the words in sentences: a keyword list
    sentence_min_words = 6           # a sentence has at least this many words ...
    sentence_min_function_share = 0.2  # ... and this share of function words ("the", "is", "each")
    list_min_items = 4               # a comma-separated run of this many items ...
    list_max_function_share = 0.15   # ... with almost no function words is a keyword list
    min_function_share = 0.08        # judge: a whole answer with fewer English function words is not English
    paragraph_min_words = 12         # shorter paragraphs (a formula, a heading-like line) are not language-tested
"""
from __future__ import annotations

import re
import tomllib
import unicodedata
from dataclasses import dataclass, fields
from pathlib import Path

import click

from .read import FUNCTION_WORDS, blocks, function_share, normalise, words
from .sentences import units


class AnswerSpecError(click.ClickException):
    """The ``[answer]`` table of an ``exercise.toml`` is missing or wrong (a course-author error)."""


@dataclass(frozen=True)
class AnswerSpec:
    """The structural numbers of one exercise's written answer (see the module docstring for each)."""

    min_words: int
    max_words: int
    suggested: tuple[int, int]
    section_min_words: int
    min_prose_share: float
    sentence_min_words: int
    sentence_min_function_share: float
    list_min_items: int
    list_max_function_share: float
    min_function_share: float
    paragraph_min_words: int


def load_spec(path: Path) -> AnswerSpec:
    """The ``[answer]`` table of the ``exercise.toml`` at ``path``.

    Raises:
        AnswerSpecError: the file is unreadable, or the table or one of its fields is missing or not a number;
            the message names the file and the field.
    """
    path = Path(path)
    try:
        table = tomllib.loads(path.read_text(encoding="utf-8"))["answer"]
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise AnswerSpecError(f"cannot read {path}: {exc}") from exc
    except KeyError:
        raise AnswerSpecError(f"{path} has no [answer] table (the structural numbers of the written answer)") from None
    values = {}
    for f in fields(AnswerSpec):
        if f.name not in table:
            raise AnswerSpecError(f"{path}: [answer] has no {f.name}")
        value = table[f.name]
        if f.name == "suggested":
            ok = isinstance(value, list) and len(value) == 2 and all(isinstance(v, int) for v in value)
            value = tuple(value) if ok else value
        else:
            ok = isinstance(value, (int, float)) and not isinstance(value, bool) and value >= 0
            value = (int(value) if f.type == "int" else float(value)) if ok else value
        if not ok:
            raise AnswerSpecError(f"{path}: [answer] {f.name} = {table[f.name]!r} is not a valid number")
        values[f.name] = value
    return AnswerSpec(**values)


# --------------------------------------------------------------------------- sections

_H2 = re.compile(r"^\s{0,3}##\s+(.*?)\s*#*\s*$")
_FENCE = re.compile(r"^\s*(```|~~~)")
_COMMENT = re.compile(r"<!--(.*?)(?:-->|\Z)", re.S)


@dataclass(frozen=True)
class Section:
    """A ``## `` section of a markdown file: its heading and the text under it (to the next ``## ``)."""

    heading: str
    text: str


def sections(markdown: str) -> list[Section]:
    """The ``## `` sections of ``markdown`` in order (text before the first one is not a section).

    Headings inside code fences are text; ``###`` and deeper headings stay inside their section.
    """
    out: list[Section] = []
    heading, body, in_fence = None, [], False
    for line in markdown.replace("\r\n", "\n").replace("\r", "\n").split("\n"):
        if _FENCE.match(line):
            in_fence = not in_fence
        m = None if in_fence else _H2.match(line)
        if m:
            if heading is not None:
                out.append(Section(heading, "\n".join(body)))
            heading, body = m.group(1), []
        elif heading is not None:
            body.append(line)
    if heading is not None:
        out.append(Section(heading, "\n".join(body)))
    return out


def _key(heading: str) -> str:
    return " ".join(words(normalise(heading)))


def _number(heading: str) -> str:
    m = re.match(r"\s*(?:question\s+)?(\d+)\b", heading, re.I)
    return m.group(1) if m else ""


def _match(wanted: Section, position: int, mine: list[Section], template_size: int) -> Section | None:
    """The student's section for the template's ``wanted``: same heading, else same number, else same place."""
    same = [s for s in mine if _key(s.heading) == _key(wanted.heading)]
    if not same and _number(wanted.heading):
        same = [s for s in mine if _number(s.heading) == _number(wanted.heading)]
    if not same and len(mine) == template_size:
        same = [mine[position]]
    return same[0] if same else None


def own_words(section_text: str, prompt_text: str) -> int:
    """Words of a section that are the student's: comments, and paragraphs that are the prompt's text, left out."""
    prompt = normalise(" ".join(_COMMENT.findall(prompt_text)) + " " + _COMMENT.sub(" ", prompt_text))
    n = 0
    for block in blocks(section_text)[0]:
        text = normalise(block.text)
        if text and text not in prompt:
            n += len(words(text))
    return n


def unanswered(answer: str, template: str, spec: AnswerSpec) -> list[str]:
    """The template's ``## `` headings that have no answer (missing, or fewer than ``section_min_words`` own words).

    Args:
        answer: the student's markdown.
        template: the skeleton's markdown; its sections are the questions, its comments the prompts.
    """
    wanted, mine = sections(template), sections(answer)
    out = []
    for i, section in enumerate(wanted):
        found = _match(section, i, mine, len(wanted))
        if found is None:
            out.append(f"'## {section.heading}' is missing")
        elif own_words(found.text, section.text) < spec.section_min_words:
            out.append(f"'## {section.heading}' has no answer of your own")
    return out


# --------------------------------------------------------------------------- length and sentences

def count(markdown: str, spec: AnswerSpec) -> tuple[int, float]:
    """Words of the answer (comments and headings left out) and the share of them in sentences.

    The same count as the judge's: the rubric's sentence step (:func:`grader.rubric.sentences.units`) with
    the spec's thresholds.
    """
    units_, n_words, _ = units(spec, blocks(markdown)[0])
    prose = sum(len(words(u.norm)) for u in units_ if u.prose)
    return n_words, (prose / n_words if n_words else 0.0)


def length_problem(n_words: int, spec: AnswerSpec) -> str:
    """Why the length is wrong ('' when it is right)."""
    lo, hi = spec.suggested
    if n_words == 0:
        return "the answer is empty: write your explanation under the headings of the template"
    if n_words < spec.min_words:
        return f"the answer is far too short ({n_words} words; write about {lo}-{hi}, at least {spec.min_words})"
    if n_words > spec.max_words:
        return (f"the answer is far too long ({n_words} words; about {lo}-{hi} is right): only the first "
                f"{spec.max_words} words are read")
    return ""


# --------------------------------------------------------------------------- language

#: The commonest function words of languages students write in instead of English (none that English shares,
#: see :func:`_foreign`); a paragraph with more of one language's than of English's is in that language.
_OTHER_LANGUAGES = {
    "Portuguese": "o os um uma uns umas de do da dos das em na nas nos que e é são para com por pelo pela não se "
                  "ao cada mais sua seu suas seus isso este esta como também ou entre sobre tem têm já onde",
    "Spanish": "el los la las un una unos unas de del en que y es son para con por se al cada más su sus lo "
               "este esta como también o entre sobre tiene ya donde pero muy",
    "French": "le la les un une des du de et est sont que qui pour dans avec par pas ne se au aux chaque plus "
              "son sa ses ce cette comme aussi ou entre sur mais très où",
    "German": "der die das den dem des ein eine einen einem und ist sind mit für von zu nicht auf im auch jede "
              "jeder jedes sich dass wird werden oder aber wie nur noch",
    "Italian": "il lo gli la le un una di del della dei delle e è che per con non si ogni più sono anche come "
               "o tra sul nella nel questo questa",
}
_FOREIGN = {lang: frozenset(ws.split()) - FUNCTION_WORDS for lang, ws in _OTHER_LANGUAGES.items()}
#: A paragraph is in another language only when that language's function words are at least this share of
#: its words (a keyword list has almost no function words of any language: an "e" or a "di" decides nothing).
MIN_FOREIGN_SHARE = 0.1


def _foreign(tokens: list[str]) -> tuple[str, float]:
    """The other language whose function words are the largest share of ``tokens``, and that share."""
    lowered = [t.casefold() for t in tokens]
    shares = {lang: sum(t in vocab for t in lowered) / len(lowered) for lang, vocab in _FOREIGN.items()}
    lang = max(shares, key=shares.get)
    return lang, shares[lang]


#: A paragraph whose letters are more than this share non-Latin is not English, even when its English half reads
#: as English (every sentence followed by its translation); a Greek letter or a Chinese name in a sentence is far
#: below it.
MAX_NON_LATIN_SHARE = 0.25
#: Letters written by one character per syllable or word (Chinese, Japanese, Korean) weigh this many letters: a
#: translation into Chinese has a quarter of its English original's letters.
SYLLABLE_WEIGHT = 2
_SYLLABIC = ("CJK", "HIRAGANA", "KATAKANA", "HANGUL")


def _syllabic(ch: str) -> bool:
    return ch.isalpha() and unicodedata.name(ch, "").startswith(_SYLLABIC)


#: Inline code (a name, a formula): in any script, so left out of the script count.
_CODE_SPAN = re.compile(r"(?<!`)`([^`\n]+)`(?!`)")


def non_latin_share(text: str) -> float:
    """Share of the letters of ``text`` that are not Latin (0 for no letters); symbols, digits and punctuation
    are not letters, and a Chinese, Japanese or Korean character counts as :data:`SYLLABLE_WEIGHT` letters."""
    latin = other = 0
    for ch in text:
        if ch.isalpha():
            if "LATIN" in unicodedata.name(ch, ""):
                latin += 1
            else:
                other += SYLLABLE_WEIGHT if _syllabic(ch) else 1
    return other / (latin + other) if latin + other else 0.0


def paragraph_language(text: str) -> str:
    """'' when a paragraph reads as English, else what it looks like ("Portuguese", "non-Latin script").

    A per-paragraph function-word test: the share of English function words ("the", "is", "of") against
    that of Portuguese, Spanish, French, German or Italian ones (at least :data:`MIN_FOREIGN_SHARE`). A
    paragraph mostly in a non-Latin script is not English either, nor one whose letters are more than
    :data:`MAX_NON_LATIN_SHARE` non-Latin ("English mixed with a non-Latin script": a sentence and its
    translation). Formulas and technical terms weigh on neither side; ``text`` is a block of
    :func:`.read.blocks` (code ticks gone: :func:`foreign_paragraphs` leaves inline code out first).
    """
    share = non_latin_share(text)
    if share >= 0.5:
        return "non-Latin script"
    if share > MAX_NON_LATIN_SHARE:
        return f"English mixed with a non-Latin script, {share:.0%} of the letters"
    tokens = words(normalise(text))
    if not tokens:
        return ""
    lang, share = _foreign(tokens)
    return lang if share >= MIN_FOREIGN_SHARE and share > function_share(tokens) else ""


def _size(text: str) -> int:
    """Words of a paragraph, where a run of Chinese, Japanese or Korean characters (written without spaces)
    counts one word per two characters."""
    syllabic = sum(_syllabic(ch) for ch in text)
    return len(words(normalise("".join(" " if _syllabic(ch) else ch for ch in text)))) + syllabic // 2


def foreign_paragraphs(markdown: str, spec: AnswerSpec) -> list[tuple[int, str, str]]:
    """Paragraphs (of at least ``paragraph_min_words`` words, :func:`_size`) that do not read as English
    (:func:`paragraph_language`; inline code, a name or formula in any script, is left out).

    Returns:
        (paragraph number from 1, its first words, what it looks like) for each.
    """
    out = []
    shown = blocks(markdown)[0]
    no_code = blocks(_CODE_SPAN.sub("`\u00b7`", markdown))[0]  # a span becomes a dot: the same blocks, in order
    for i, block in enumerate(shown, 1):
        if _size(block.text) < spec.paragraph_min_words:
            continue
        lang = paragraph_language(no_code[i - 1].text if len(no_code) == len(shown) else block.text)
        if lang:
            out.append((i, " ".join(block.text.split()[:6]), lang))
    return out
