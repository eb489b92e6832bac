"""Step 1, read: decode an answer file, split its markdown into blocks, normalise text for matching."""
from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

from . import cues


_COMMENT = re.compile(r"<!--.*?(?:-->|\Z)", re.S)
_HEADING = re.compile(r"^\s{0,3}#{1,6}\s+(.*?)\s*#*\s*$")
_SETEXT = re.compile(r"^\s{0,3}(=+|-{3,})\s*$")
_BULLET = re.compile(r"^\s*(?:[-*+•]|\d{1,3}[.)])\s+")
_FENCE = re.compile(r"^\s*(```|~~~)")


@dataclass
class Block:
    """A paragraph or a bullet item, with the number of the section it sits in (0 before any heading)."""

    section: int
    text: str
    quoted: bool = False  # a blockquote line ("> ...") or a fenced one: set apart, maybe another's words (.reported)


def read_text(data: bytes) -> str:
    """Decode an answer file: UTF-8 (with or without BOM), else Latin-1 (which never fails)."""
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        return data.decode("latin-1")


def blocks(markdown: str) -> tuple[list[Block], list[str]]:
    """Split markdown into text blocks and the list of headings; comments and headings are dropped."""
    text = _COMMENT.sub(" ", markdown.replace("\r\n", "\n").replace("\r", "\n"))
    out: list[Block] = []
    headings: list[str] = []
    current: list[str] = []
    section = 0
    in_fence = False
    quoted = False
    in_html_quote = False  # between <blockquote> and </blockquote>: set apart as "> ..." is

    def flush():
        nonlocal quoted
        joined = _strip_inline(" ".join(s.strip() for s in current).strip())
        if joined:
            out.append(Block(section, joined, quoted))
        current.clear()
        quoted = False

    raw_lines = text.split("\n")
    for i, line in enumerate(raw_lines):
        if _FENCE.match(line):
            flush()
            in_fence = not in_fence
            continue
        if in_fence:  # code or formulas: one block per line, set apart as a quote is (.reported)
            flush()
            current.append(line)
            quoted = True
            flush()
            continue
        if _HTML_QUOTE_OPEN.search(line) and _closed_later(raw_lines, i):
            flush()
            in_html_quote = True  # an opening tag never closed (before a heading) sets nothing apart
        closes = bool(_HTML_QUOTE_CLOSE.search(line))
        if in_html_quote and closes and not _HTML_QUOTE_CLOSE.sub("", _HTML_QUOTE_OPEN.sub("", line)).strip():
            flush()  # a line with only the closing tag
            in_html_quote = False
            continue
        heading = _HEADING.match(line)
        if heading and _turn_label(heading.group(1)):  # "#### ChatGPT:": a chat's turn set as a heading
            flush()
            line, heading = heading.group(1), None
        nxt = raw_lines[i + 1] if i + 1 < len(raw_lines) else ""
        if heading or (line.strip() and _SETEXT.match(nxt) and not _BULLET.match(line) and not current):
            flush()
            headings.append((heading.group(1) if heading else line).strip())
            section += 1
            continue
        if _SETEXT.match(line) and headings and not current:
            continue
        if not line.strip() or re.match(r"^\s*(\|?\s*:?-{3,}:?\s*)+\|?\s*$", line):
            flush()
            continue
        if _BULLET.match(line) or line.lstrip().startswith(">"):
            flush()
            quoted = line.lstrip().startswith(">")
            line = _BULLET.sub("", line.lstrip("> "))
        if line.strip().startswith("|"):  # a table row: one block, cells separated
            flush()
            current.append(" ; ".join(c.strip() for c in line.strip().strip("|").split("|")))
            flush()
            continue
        if len(current) == 1 and _title_line(current[0], line) or current and _turn_label(line):
            flush()  # a title line above its paragraph; a transcript's turn on a line of its own ("ChatGPT: ...")
        current.append(line)
        quoted = quoted or in_html_quote
        if in_html_quote and closes:
            flush()
            in_html_quote = False
    flush()
    return out, headings


def _turn_label(line: str) -> bool:
    """Whether a line opens with a speaker's label of a chat (:data:`.cues.OTHER_SPEAKER`, :data:`_CHAT_PERSON`:
    "ChatGPT: ...", "Me: ..."): a turn, even on the next line of the same paragraph."""
    head = line.lstrip(" \t>*_#[")[:40]
    if ":" not in head and len(line) > 40:  # a label ends with a colon early, or is a short line of its own
        return False
    norm = normalise(_strip_inline(line))
    return bool(cues.OTHER_SPEAKER.match(norm) or cues.OTHER_SPEAKER_ALONE.match(norm) or _CHAT_PERSON.match(norm))


def _closed_later(lines: list[str], i: int) -> bool:
    """Whether the ``<blockquote>`` opened on line ``i`` is closed before the next heading or the end."""
    for line in lines[i:]:
        if _HTML_QUOTE_CLOSE.search(line):
            return True
        if _HEADING.match(line) and line is not lines[i]:
            return False
    return False


#: A person's label in a chat with a chatbot ("Me:", "You said:", "User:"); a tutor's dialogue ("Student: Yes.") keeps
#: its lines in one paragraph, where a question and its answer are read together.
_CHAT_PERSON = re.compile(r"(?:me|you|user|human)(?: (?:said|asked|wrote))?\s*:")


_HTML_QUOTE_OPEN = re.compile(r"<blockquote\b[^>]*>", re.I)
_HTML_QUOTE_CLOSE = re.compile(r"</blockquote\s*>", re.I)


#: A title line above a paragraph: "Re: Why several heads", "Multi-head attention in one picture" (no final mark).
_TITLE_MAX_WORDS = 10


def _title_line(line: str, nxt: str) -> bool:
    """Whether ``line``, the first line of a paragraph followed by ``nxt``, is a title of its own (a forum post's
    "Re: ..." line, a title without a heading mark) and not the first line of hard-wrapped prose: it has at most
    :data:`_TITLE_MAX_WORDS` words, starts with a capital, ends with no punctuation, is shorter than 80 % of the next
    line (wrapped prose fills its lines), and the next line starts with a capitalised word (not a symbol such as
    "W_O" or "BERT", which wrapped prose may carry to a new line). Its words would otherwise open the paragraph's
    first sentence and be quoted with it."""
    line, nxt = line.strip(), nxt.strip()
    if re.match(r"(?i)re:\s", line) and len(line.split()) <= 2 * _TITLE_MAX_WORDS:
        return True
    return (len(line.split()) <= _TITLE_MAX_WORDS and line[:1].isupper()
            and not re.search(r"[.,;:!?\-—–(\[]$", line)
            and len(line) < 0.8 * len(nxt) and bool(re.match(r"[A-Z][a-z]+\b", nxt)))


def _strip_inline(text: str) -> str:
    """Remove inline markdown (emphasis, code ticks, links, images, HTML tags); keep the words."""
    text = re.sub(r"!\[([^\]]*)\]\([^)]*\)", r"\1", text)
    # a bracket right after a word is indexing in code, no link: "x = heads[i](x)"
    text = re.sub(r"(?<![\w\]])\[([^\]]+)\]\([^)]*\)", r"\1", text)
    text = re.sub(r"</?[a-zA-Z][^>]*>", " ", text)
    text = text.replace("**", "").replace("__", "").replace("`", "")
    text = re.sub(r"(?<![\w*])\*(?=\S)([^*]+?)(?<=\S)\*(?![\w*])", r"\1", text)
    return re.sub(r"\s+", " ", text).strip()


# --------------------------------------------------------------------------- 2. normalise

_CHAR_MAP = {
    "\u2018": "'", "\u2019": "'", "\u201a": "'", "\u201b": "'", "\u2032": "'",
    "\u201c": '"', "\u201d": '"', "\u201e": '"', "\u00ab": '"', "\u00bb": '"',
    "\u2212": "-", "\u00d7": " x ", "\u00f7": " / ", "\u2044": "/", "\u2215": "/",
    "\u2248": " approximately ", "\u2243": " approximately ", "\u223c": " approximately ",
    "\u2192": " -> ", "\u2190": " <- ", "\u21d2": " => ", "\u2194": " <-> ", "\u27f6": " -> ",
    "\u2264": " <= ", "\u2265": " >= ", "\u2260": " != ", "\u2208": " in ", "\u00b7": " ", "\u22c5": " ",
    "\u2026": "...", "\u221e": " infinity ", "\u221a": " sqrt ", "\u2211": " sum ",
}
_LATEX = [
    (re.compile(r"\\(?:text|mathrm|mathbf|mathit|operatorname|textbf|textit|mathsf|boldsymbol)\s*\{([^{}]*)\}"), r"\1"),
    (re.compile(r"\\sqrt\s*\{([^{}]*)\}"), r" sqrt \1 "),
    (re.compile(r"\\frac\s*\{([^{}]*)\}\s*\{([^{}]*)\}"), r"\1 / \2"),
    (re.compile(r"\\(?:top|intercal)\b"), "T"),
    (re.compile(r"\\infty\b"), " infinity "),
    (re.compile(r"\\(?:le|leq)\b"), " <= "),
    (re.compile(r"\\(?:ge|geq)\b"), " >= "),
    (re.compile(r"\\(?:approx|sim)\b"), " approximately "),
    (re.compile(r"\\(?:to|rightarrow)\b"), " -> "),
    (re.compile(r"\\(?:times)\b"), " x "),
    (re.compile(r"\\(?:left|right|big|Big|bigg|Bigg)\b"), ""),
    (re.compile(r"\\[a-zA-Z]+"), " "),
    (re.compile(r"[_^]\s*\{([^{}]*)\}"), r"_\1"),
]


def normalise(text: str) -> str:
    """The matching form of a sentence: NFKC, lower case, plain quotes/dashes, LaTeX and markup gone.

    ``W^O`` and ``W_{O}`` both become ``w_o``; ``d_{model}`` becomes ``d_model``; "doesn't" (and "doesnt") becomes
    "does not"; full-width letters, superscripts and ligatures fold to ASCII where Unicode says so.
    Letters of every script are kept.
    """
    text = unicodedata.normalize("NFKC", text)
    text = "".join(_CHAR_MAP.get(ch, ch) for ch in text
                   if unicodedata.category(ch) not in ("Cf", "Cc") or ch in "\n\t")
    text = "".join("-" if unicodedata.category(ch) == "Pd" else ch for ch in text)
    text = text.replace("$", " ")
    for _ in range(3):  # nested commands: \frac{..}{\sqrt{..}}
        before = text
        for pattern, repl in _LATEX:
            text = pattern.sub(repl, text)
        if text == before:
            break
    text = text.replace("{", " ").replace("}", " ").replace("\\", " ")
    text = re.sub(r"(?<=\w)\^(?=\w)", "_", text)
    text = text.casefold()
    text = re.sub(r"\bwon't\b", "will not", text)
    text = re.sub(r"\bcan't\b|\bcannot\b", "can not", text)
    text = re.sub(r"(\w)n't\b", r"\1 not", text)
    # the same contractions typed without the apostrophe, as in chat and notes ("the residual doesnt carry ...")
    text = re.sub(r"\b(do|does|did|is|are|was|were|has|have|had|could|would|should)nt\b", r"\1 not", text)
    text = re.sub(r"\bcant\b", "can not", text)
    text = re.sub(r"\s+", " ", text)
    return text.strip()


_WORD = re.compile(r"[^\W_]+(?:[-_'][^\W_]+)*")
FUNCTION_WORDS = frozenset("""
a an the of to in on at by for with from into onto over under between among across through about as than
and or but nor so if then that this these those which who whom whose what when where while because since
although though is are was were be been being am has have had having do does did can could will would
shall should may might must it its they them their he she his her we our us you your i me my not no never
each every all any some only also just there here how why such same other another both either neither up
out its itself themselves very much many most more less few
""".split())


def words(text: str) -> list[str]:
    """The words of a text (letters and digits of any script; ``d_model`` and ``multi-head`` are one word)."""
    return _WORD.findall(text)


def function_share(tokens: list[str]) -> float:
    """Share of English function words ("the", "is", "each", ...) among ``tokens`` (0 for none)."""
    return sum(t.casefold() in FUNCTION_WORDS for t in tokens) / len(tokens) if tokens else 0.0

