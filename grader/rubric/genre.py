"""Part of step 6, judge: an answer written as another kind of text (issue 11's nonsense, in a genre's clothes).

The lesson's content can be told, even correctly, inside a text that is about something else: a cover letter from
an attention head applying for a job, a wedding toast, a sermon, a press release, a flat-pack manual, a love letter
to the residual stream. Such an answer names few foreign things per sentence, so the measures of :mod:`.topic` and
:mod:`.worlds` pass it. Two things give it away together:

1. **Conventions of another kind of text** (:data:`CONVENTIONS`): a salutation or sign-off line ("Dear Hiring
   Manager,", "Yours sincerely,"), the formulas of a speech or ceremony ("ladies and gentlemen", "raise your
   glasses"), of an advert or announcement ("for immediate release", "use code ..."), of social media (hashtags,
   emoji, "lol"), of a story ("once upon a time"), of a formal document (an all-capitals title line, "Clause 3",
   "Section 7.3"), a model part that speaks as "I" or is spoken to ("I am an attention head", "My dearest
   Residual"), or lines labelled by words foreign to the lesson (a schedule's "Monday:", a recipe's "Ingredients:",
   a script's speakers; :func:`foreign_labels`). Each is a convention of a genre, not a word of a topic: the cover
   letter's job and the toast's couple are never listed.
2. **Words foreign to answers on this lesson** (:func:`foreign_share`): the share of the answer's content words
   whose stem is not in :data:`LESSON_WORDS`, the stems used by at least three of the labelled genuine answers
   of tests/prose's dev split (built by ``bench/lesson_words.py``; test and held-out answers are never read).

A genuine answer may have either: an email to a classmate opens with "Hi Tomás," and a talk with "Good morning
everyone", and an answer built on an analogy of its own uses many foreign words. Only both together raise the
flag (:func:`written_as_another_genre`; a letter's form or a title line in capitals, which genuine answers have too,
needs more foreign words than a speech's or an advert's formulas), for review routing only: no score changes.

Measured with ``bench/prose_agreement.py`` (README of exercise 1).
"""
from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path

import snowballstemmer

from .read import FUNCTION_WORDS, words
from . import vocabulary, worlds

#: Where the lesson's vocabulary is kept (one stem per line, ``#`` comments), written by bench/lesson_words.py.
LESSON_WORDS_FILE = Path(__file__).with_name("lesson_words.txt")
#: Conventions a genuine answer may well have: a letter's (an email to a classmate, a letter to one's past self), a
#: document's layout (a title line in capitals) and an informal post's marks ("lol", an emoji: held-out set heldout1
#: has a genuine Reddit-style answer with "lol"; made weak after that set was read, disclosed in the README of
#: exercise 1); a review's, a match report's or a recipe's formulas, which a genuine answer borrows as a joke ("pre-norm
#: gets 5/5 stars", a football analogy's "final whistle": a review of 2026-12-07 wrote 46 such answers). With only
#: these the answer needs more foreign words.
WEAK = frozenset({"a letter's salutation", "a letter's sign-off", "a formal document's layout", "social media's marks",
                  "lines labelled by foreign words", "a review's formulas", "a match report's formulas",
                  "a recipe's formulas"})
#: The share of content words foreign to the lesson that raises the flag, with a convention of :data:`WEAK` only and
#: with any other (measured leaving each answer out of the vocabulary, bench/prose_agreement.py: dev-split genuine
#: answers with a convention reach 0.10, a letter to one's past self; the dev split's frames reach down to 0.10).
#: No genuine dev answer has a convention outside :data:`WEAK`; a podcast advert of 59 content words fell from 0.10
#: to 0.085 when the fifth round of exercise 4's dev answers (analogies) made "stall" a lesson word, so the
#: threshold with such a convention was lowered from 0.08 to 0.06 (the median genuine dev answer is at 0.03-0.05).
FOREIGN_SHARE_WEAK = 0.14
FOREIGN_SHARE = 0.06
#: Fewer content words than this are not judged (a short answer is judged by its length).
MIN_CONTENT_WORDS = 40

_STEMMER = snowballstemmer.stemmer("english")
_NOT_DOMAIN = r"(?!(?:MLP|FFN|GPT|BERT|QKV|LN|RNN|LSTM|CNN|NLP|API|GPU|CPU|TL;DR|FAQ)\b)"
#: Conventions of other kinds of text, by the name shown to a person. Read on the answer's lines, headings left out.
CONVENTIONS: dict[str, re.Pattern] = {k: re.compile(v, re.I | re.M) for k, v in {
    "a letter's salutation": r"^\W*(?:dear|dearest|my dear\w*|to whom it may concern|greetings)\b",
    "a letter's sign-off": r"^\W*(?:yours (?:sincerely|faithfully|truly|ever|always)|sincerely|forever yours|"
                           r"(?:with |all my )?love|with (?:love|best wishes|gratitude)|(?:kind |best |warm )?regards|"
                           r"best wishes|xoxo|hugs and kisses)\b[^\n]{0,40}$",
    "a speech's formulas": r"\b(?:ladies and gentlemen|brothers and sisters|dearly beloved|we are gathered|"
                           r"welcome (?:aboard|to (?:the|our) \w+ (?:of|at|on))|raise (?:your|a|our) glass\w*|"
                           r"(?:propose|make) a toast|let us pray|amen\b|god bless|in loving memory|rest in peace|"
                           r"thank you (?:all )?for (?:flying|choosing|coming|your attention))",
    "an advert's or announcement's formulas": r"\b(?:for immediate release|media contact|"
                                              r"brought to you by|sponsored by|use (?:the )?code|\d+ ?% off|"
                                              r"order (?:now|today)|buy (?:now|today)|for sale\b|call now|"
                                              r"customer service|our customers|viewing by appointment|"
                                              r"free (?:shipping|delivery|trial)|limited[- ]time|"
                                              r"(?:thrilled|excited|proud|delighted) to (?:announce|share|introduce))",
    "a review's formulas": r"\b(?:[0-5](?:\.5)?|one|two|three|four|five) ?(?:/ ?5|out of (?:5|five)) stars?\b|"
                           r"\bwould (?:definitely |happily )?(?:buy|order) (?:it |them |this )?again\b|"
                           r"\bvalue for money\b",
    "a match report's formulas": r"^\W*(?P<score>(?-i:[A-Z][\w.'’-]*(?: [A-Z][\w.'’-]*)*) \d{1,2}, (?-i:[A-Z][\w.'’-]*"
                                 r"(?: [A-Z][\w.'’-]*)*) \d{1,2})(?=\s*(?:[.!]|$))|\b(?:man|player) of the match\b|"
                                 r"\bstoppage time\b|\b(?:opening|final) whistle\b",
    "a recipe's formulas": r"\bseason to taste\b|\buntil golden\b|\b\d+ ?(?:g|grams|ml|tbsp|tsp) of\b|\bgrams of\b|"
                           r"^\W*ingredients\W*:|(?<=[.!] )ingredients\W*:|\(serves (?:\d+|two|four|six|eight)\b",
    "social media's marks": r"#[^\W\d_]\w+[^\n]*#[^\W\d_]\w+|[\U0001F300-\U0001FAFF\u2600-\u27BF]|"
                            r"\b(?:lol|lmao|omg|tbh|ngl|brb|ur)\b",
    "a story's formulas": r"\b(?:once upon a time|happily ever after|long,? long ago|in a (?:land|kingdom) far)\b|"
                          r"^\W*the end\W*$",
    "a formal document's layout": r"^(?-i:" + _NOT_DOMAIN + r"[A-Z][A-Z'’&]{2,}(?:[ \t:#—–-]+[A-Z0-9'’&.]+)++)"
                                  r"[^\na-z(]*(?:\([^)\n]*\)[^\na-z]*)?$|^\W*(?:clause|section|article|schedule|annex) \d",
    "a model part speaking or spoken to": r"\b(?:i am|i'm|i was|i've been|i work as|i serve as) (?:an?|the|one|your) "
                                          r"(?:[\w-]+ )?(?:attention head|head|layer|block|model|mlp|token|neuron|"
                                          r"residual connection|transformer|causal mask|projection)\b|"
                                          r"^\W*(?:dear|dearest|my dear\w*|oh|o) (?:[\w-]+ ){0,2}(?:residual|heads?|"
                                          r"model|gpt|bert|transformer|attention|mlp|layer norm|tokens?|gradient)\b",
}.items()}
_HEADING_LINE = re.compile(r"^\s{0,3}#{1,6}\s.*$", re.M)
#: A fenced block (a log, code, a config): its lines are no layout of the answer's own.
_FENCED = re.compile(r"^\s{0,3}(`{3,}|~{3,}).*?^\s{0,3}\1[^\n]*$", re.M | re.S)
#: A line that opens with a short label (one to three words, maybe a list number, emphasis or a parenthesis) and a
#: colon: "Monday:", "**Ingredients:**", "1. Leg day:", "*Monday* (week 3):". Not a dash: prose sets asides off with
#: dashes ("In hindsight — ..."), and a hard-wrapped line's first words are no label.
_LINE_LABEL = re.compile(r"^[ \t>]*(?:[-*+][ \t]+|\d{1,2}[.)][ \t]+)?[*_]{0,2}([^\W\d_][\w'’-]*(?: [\w'’-]+){0,2})"
                         r"[*_]{0,2}(?: \([^)\n]{0,20}\))?[*_]{0,2}[ \t]*:[*_]{0,2}(?:[ \t]|$)", re.M)
#: Labels that mark the parts of any explanation, a lab report's or a note's, not another kind of text: an honest
#: answer may well be laid out "Observation: / Hypothesis: / Conclusion:" or "Takeaway: / Caveat:" (a red team of
#: 2026-12-06 found these taken for another genre's layout).
_DISCOURSE_LABELS = frozenset("""
observation observations hypothesis hypotheses conclusion conclusions claim claims evidence reasoning symptom symptoms
diagnosis intuition formally informally takeaway takeaways caveat caveats edit ps recap aside summary tldr note notes
update result results method methods analysis explanation answer question problem solution example examples
definition idea setup context background motivation goal bottom line short version long first second third finally
part step reason reasons cause fix remedy prediction expectation guess check verdict lesson lessons moral upshot
disclaimer warning tip hint correction source sources reference references thanks addendum footnote comment comments
interpretation discussion findings finding data aim aims outcome outcomes procedure experiment observed expected
actual why how what intro introduction overview
""".split())
#: Distinct labels foreign to the lesson that make a layout of another kind of text (a schedule's days, a recipe's
#: "Ingredients:" and "Method:", a script's or a chat's speakers). A genuine dev-split answer has at most one
#: ("Re:", "Notation:", "A confession:"); measured with bench/prose_agreement.py.
MIN_FOREIGN_LABELS = 2


@lru_cache(maxsize=1)
def lesson_words() -> frozenset[str]:
    """The stems of :data:`LESSON_WORDS_FILE` (empty when the file is missing: then nothing is foreign)."""
    if not LESSON_WORDS_FILE.is_file():
        return frozenset()
    lines = LESSON_WORDS_FILE.read_text(encoding="utf-8").splitlines()
    return frozenset(w.strip() for w in lines if w.strip() and not w.startswith("#"))


def stem(word: str) -> str:
    """The stem a word is compared by (Snowball's English stemmer, possessive "'s" dropped, case folded)."""
    return _STEMMER.stemWord(re.sub(r"['’]s$", "", word.casefold()))


def content_words(norms: list[str]) -> list[str]:
    """The content words of normalised sentences: no function word, no number, no quoted example."""
    out = []
    for norm in norms:
        for w in words(worlds.unquoted(norm)):
            low = w.casefold()
            if low not in FUNCTION_WORDS and low[:1].isalpha() and len(low) > 1:
                out.append(low)
    return out


def _lesson_word(word: str, stems: frozenset[str]) -> bool:
    return stem(word) in stems or bool(vocabulary.STRONG.fullmatch(word) or vocabulary.WEAK.fullmatch(word))


def foreign_share(norms: list[str]) -> tuple[float, list[str]]:
    """The share of the content words of ``norms`` whose stem is not a lesson word, and those words (first seen
    first, each once). (0.0, []) when there are fewer than :data:`MIN_CONTENT_WORDS` or no vocabulary."""
    vocabulary = lesson_words()
    content = content_words(norms)
    if not vocabulary or len(content) < MIN_CONTENT_WORDS:
        return 0.0, []
    foreign = [w for w in content if not _lesson_word(w, vocabulary)]
    return len(foreign) / len(content), list(dict.fromkeys(foreign))


def conventions(markdown: str) -> dict[str, str]:
    """The conventions of other kinds of text found in an answer (:data:`CONVENTIONS`): name -> the text found.

    Headings and fenced blocks are left out: the exercise's own headings are not a document's layout, nor is a
    pasted log ("Device: cpu")."""
    body = _HEADING_LINE.sub("", _FENCED.sub("", markdown.replace("\r\n", "\n")))
    out = {}
    for name, pattern in CONVENTIONS.items():
        m = next((m for m in pattern.finditer(body) if (name != _TITLE or _foreign_title(m.group(0)))
                  and not (m.groupdict().get("score") and _names_lesson_words(m.group("score")))), None)
        if m:
            out[name] = " ".join(m.group(0).split()).lstrip("(")[:40]
    labels = foreign_labels(body)
    if len(labels) >= MIN_FOREIGN_LABELS:
        out["lines labelled by foreign words"] = ", ".join(labels[:4])[:40]
    return out


_TITLE = "a formal document's layout"


def _names_lesson_words(score: str) -> bool:
    """Whether a score line names parts of the lesson or of a report rather than teams ("Layer 4, Head 11", "Pre-Norm 4,
    Post-Norm 1", "Exercise 1, Part 2" are no match; "United 3, City 1" is)."""
    text = score.casefold()
    return bool(vocabulary.STRONG.search(text) or vocabulary.WEAK.search(text) or _REPORT_PARTS.search(text))


#: The numbered parts of an exercise, a report or a run, which a line may list as "Run 1, Seed 3".
_REPORT_PARTS = re.compile(r"\b(?:exercises?|parts?|questions?|tasks?|steps?|epochs?|runs?|seeds?|figures?|fig|tables?|"
                           r"sections?|chapters?|versions?|v|lines?|rows?|columns?|cells?|iterations?|trials?|"
                           r"experiments?|configs?|configurations?|settings?|cases?|examples?)\b")


def _foreign_title(line: str) -> bool:
    """Whether a title line has a content word foreign to the lesson ("WEEK 3 — HEAD DAY",
    "FOR IMMEDIATE RELEASE"; not "RUN 2: NO RESIDUALS (3.291)" nor "WHY POST-NORM FAILS", a report's own titles);
    "Clause 2." and "Section 7.3" count whatever follows."""
    content = [w for w in re.findall(r"[^\W\d_][\w-]*", line.casefold())
               if w not in FUNCTION_WORDS and w not in ("vs", "versus") and len(w) > 1
               and not any(c.isdigit() for c in w)]
    vocabulary = lesson_words()
    if not content or re.match(r"^\W*(?:clause|section|article|schedule|annex) \d", line, re.I):
        return True
    return any(not _lesson_word(w, vocabulary) for w in content)


def foreign_labels(markdown: str) -> list[str]:
    """The distinct line labels of ``markdown`` (:data:`_LINE_LABEL`) whose content words are all foreign to the
    lesson (none in :data:`LESSON_WORDS_FILE`), casefolded, first seen first: ["monday", "tuesday"] for a
    training plan told day by day. Empty when there is no vocabulary."""
    vocabulary = lesson_words()
    out: list[str] = []
    for m in _LINE_LABEL.finditer(markdown):
        label = " ".join(m.group(1).split()).casefold()
        content = [w for w in re.findall(r"[^\W\d_]+", label) if w not in FUNCTION_WORDS and len(w) > 1]
        if vocabulary and content and not any(_lesson_word(w, vocabulary) or w in _DISCOURSE_LABELS for w in content) \
                and label not in out:
            out.append(label)
    return out


def written_as_another_genre(markdown: str, norms: list[str]) -> str:
    """A review reason when the answer bears another genre's conventions and many foreign words, else "".

    Args:
        markdown: the answer as written; norms: its prose sentences, normalised (:func:`.read.normalise`).
    """
    found = conventions(markdown)
    if not found:
        return ""
    share, foreign = foreign_share(norms)
    if share < (FOREIGN_SHARE_WEAK if set(found) <= WEAK else FOREIGN_SHARE):
        return ""
    shown = "; ".join(f"{name}: \"{text}\"" for name, text in found.items())
    return (f"nonsense?: written as another kind of text ({shown}), and {share:.0%} of its content words are foreign "
            f"to answers on this lesson ({', '.join(foreign[:6])})")
