"""The rubric as data: ``rubric.toml`` read and compiled (lines, misconceptions, thresholds).

Pattern syntax: Python regular expressions over the normalised, lower-case text (:func:`.read.normalise`),
with ``{name}`` replaced by ``[terms]`` entries (``{w3}`` = up to three words in between, ...).
The rubric stays with the judge: it is never shipped to students (``grader.release``).
"""
from __future__ import annotations

import math
import re
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import click

if TYPE_CHECKING:  # imported at run time only where needed (copying -> sentences -> spec)
    from .copying import CopySettings


class RubricError(click.ClickException):
    """``rubric.toml`` is wrong (a course-author error); the message names the file and the entry."""


# --------------------------------------------------------------------------- the rubric as data

@dataclass(frozen=True)
class Evidence:
    """One way to earn (a part of) a line, or to commit a misconception.

    Attributes:
        patterns: every one must match inside the same scope.
        within: ``0`` = one sentence; ``n > 0`` = all matches within ``n`` words of each other.
        sentences: 1, or 2 to let the patterns spread over two consecutive sentences of one paragraph.
        unless: a match anywhere in the sentence cancels the evidence (a misconception's own ``unless`` list is added
            to each of its evidence, unless the entry says ``common_unless = false``: its words then single out
            the error whatever reason the sentence gives).
        unless_near: a match inside the matched span cancels it.
        negatable: how negations inside the matched span count (:mod:`.assertions` gives their scope).
            ``True``: a negation whose scope covers a matched piece cancels it, unless the pattern itself
            spells the cue (it no longer matches with the cue's words blanked out). ``False``: besides,
            every negation cue inside a piece's own matched text belongs to the evidence (the pattern says
            "not" in a gap); a negation between the pieces still cancels ("without residuals the blocks do
            *not have to carry the whole signal*"). Doubt, attribution, questions, suppositions, refutation
            and framing cancel either way. Either way, a combination of pieces picked around a stretch the
            student does not assert, which itself holds a match of one of the patterns, earns nothing
            (:func:`.concepts.find`).
        about, rivals: the thing the property must be said of: the nearest mention of ``about`` or
            ``rivals`` before the property (else after it, else in the previous sentence) must be ``about``.
        part: lines with several parts are earned only when every part has evidence.
        loses: a misconception's evidence only: the lines this wording of the error contradicts, in place of the
            misconception's ``loses`` (None: the misconception's), unless the error is also said in another
            sentence. "It overfits: it memorises the letter counts" names the error but states the letter
            frequencies the misconception otherwise loses (tests/prose/LABELLING.md: "a confident error loses the
            concept it contradicts"; :func:`.judge._lost`).
    """

    patterns: tuple[re.Pattern, ...]
    within: int = 0
    sentences: int = 1
    unless: tuple[re.Pattern, ...] = ()
    unless_near: tuple[re.Pattern, ...] = ()
    common_unless: tuple[re.Pattern, ...] = ()  # those of ``unless`` that are the misconception's own: also in a condition
    negatable: bool = True
    about: re.Pattern | None = None
    rivals: re.Pattern | None = None
    part: str = ""
    loses: tuple[str, ...] | None = None


@dataclass(frozen=True)
class Line:
    """A rubric line: a concept worth ``points``."""

    id: str
    question: int
    points: float
    concept: str
    hint: str
    evidence: tuple[Evidence, ...]

    @property
    def parts(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(e.part for e in self.evidence))


@dataclass(frozen=True)
class Misconception:
    """A wrong statement; its point is given to a substantive answer that does not make it."""

    id: str
    question: int
    points: float
    statement: str
    hint: str
    evidence: tuple[Evidence, ...]
    #: Ids of the lines this error contradicts: an answer that makes it does not earn them, however well it states
    #: them elsewhere (tests/prose/LABELLING.md: "a confident error loses the concept it contradicts").
    loses: tuple[str, ...] = ()
    #: Where the answer speaks of what this error is about (``[misconception.near]``: every pattern in one asserted
    #: sentence, e.g. the MLP, the tokens and a word of mixing) without the error or the line it ``opposes`` found
    #: in that sentence: the rubric could not read it either way, and review asks a person (.review).
    near: Evidence | None = None
    #: The lines that state the right version (default: ``loses``); a ``near`` sentence that earns one is read.
    opposes: tuple[str, ...] = ()


@dataclass(frozen=True)
class Rubric:
    """Everything in ``rubric.toml``, compiled."""

    path: Path
    lines: tuple[Line, ...]
    misconceptions: tuple[Misconception, ...]
    questions: dict[int, str]
    pass_mark: float
    review_band: float
    cap: float
    min_words: int
    max_words: int
    suggested: tuple[int, int]
    min_prose_share: float
    sentence_min_words: int
    sentence_min_function_share: float
    list_min_items: int
    list_max_function_share: float
    copy_sources: tuple[str, ...]
    copying: CopySettings  # the [copying] table: method, thresholds, the points' factor (.copying)
    not_english_function_share: float
    #: [naming] elsewhere: what a sentence may be about that none of this exercise's errors is (exercise 1: training
    #: and analysis, its errors being about the forward computation); such a sentence names no error (.elsewhere)
    elsewhere: tuple[re.Pattern, ...] = ()

    @property
    def max_total(self) -> float:
        return sum(x.points for x in self.lines) + sum(m.points for m in self.misconceptions)

    @property
    def cap_points(self) -> float:
        """Most points a keyword list or a copied answer can get (rounded down to whole points)."""
        return math.floor(self.cap * self.max_total + 1e-9)


def _structure(path: Path) -> dict:
    """The structural numbers (length, sentences, language) from the public ``exercise.toml`` next to the
    rubric: its ``[answer]`` table, which the public checks read too (:mod:`.structure`)."""
    from .structure import load_spec  # structure -> sentences -> spec: imported when needed

    spec = load_spec(path.parent / "exercise.toml")
    return dict(min_words=spec.min_words, max_words=spec.max_words, suggested=spec.suggested,
                min_prose_share=spec.min_prose_share, sentence_min_words=spec.sentence_min_words,
                sentence_min_function_share=spec.sentence_min_function_share, list_min_items=spec.list_min_items,
                list_max_function_share=spec.list_max_function_share,
                not_english_function_share=spec.min_function_share)


def _copying(table: dict, path: Path) -> CopySettings:
    from .copying import CopySettings  # copying -> sentences -> spec: imported when needed

    return CopySettings.from_table(table, str(path))


def load(path: Path) -> Rubric:
    """Read and compile a rubric file.

    Raises:
        RubricError: unreadable TOML, a missing field, or a regular expression that does not compile;
            the message names the file and the line or misconception.
        AnswerSpecError: the ``exercise.toml`` next to the rubric has no valid ``[answer]`` table.
    """
    path = Path(path)
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise RubricError(f"cannot read rubric {path}: {exc}") from exc
    terms = {k: str(v) for k, v in data.get("terms", {}).items()}

    def expand(pattern: str, where: str, seen: tuple[str, ...] = ()) -> str:
        """``pattern`` with every ``{term}`` replaced, terms inside terms too (a term may be built of others)."""
        unknown = sorted({name for name in re.findall(r"\{([A-Za-z_]\w*)\}", pattern) if name not in terms})
        if unknown:  # a typo would otherwise match the braces literally, i.e. never
            raise RubricError(f"{path}: {where}: pattern {pattern!r} uses {', '.join('{' + n + '}' for n in unknown)}, "
                              f"which [terms] does not define (defined: {', '.join(sorted(terms))})")

        def term(m: re.Match) -> str:
            name = m.group(1)
            if name in seen:
                raise RubricError(f"{path}: {where}: term {{{name}}} uses itself ({' -> '.join(seen + (name,))})")
            return expand(terms[name], f"[terms] {name}", seen + (name,))

        return re.sub(r"\{([A-Za-z_]\w*)\}", term, pattern)

    def compile_(pattern: str, where: str) -> re.Pattern:
        expanded = expand(pattern, where)
        try:
            return re.compile(expanded)
        except re.error as exc:
            raise RubricError(f"{path}: {where}: bad pattern {pattern!r}: {exc}") from exc

    def evidence(entries, where: str, common_unless=()) -> tuple[Evidence, ...]:
        """The compiled ``[[...evidence]]`` entries; ``common_unless``: the misconception's own ``unless``, which
        cancels each of its evidence (a correct sense of its words: "the tokenizer splits the text")."""
        if not entries:
            raise RubricError(f"{path}: {where} has no [[...evidence]]")
        out = []
        for i, e in enumerate(entries, 1):
            w = f"{where}, evidence {i}"
            if "all" not in e:
                raise RubricError(f"{path}: {w} has no 'all' list of patterns")
            within = e.get("within", "sentence")
            if not isinstance(e.get("common_unless", True), bool):
                raise RubricError(f"{path}: {w}: common_unless must be true or false")
            common = tuple(compile_(p, w) for p in common_unless) if e.get("common_unless", True) else ()
            out.append(Evidence(
                patterns=tuple(compile_(p, w) for p in e["all"]),
                within=0 if within == "sentence" else int(within),
                sentences=int(e.get("sentences", 1)),
                unless=tuple(compile_(p, w) for p in e.get("unless", ())) + common,
                common_unless=common,
                unless_near=tuple(compile_(p, w) for p in e.get("unless_near", ())),
                negatable=bool(e.get("negatable", True)),
                about=compile_(e["about"], w) if "about" in e else None,
                rivals=compile_(e["rivals"], w) if "rivals" in e else None,
                part=str(e.get("part", "")),
                loses=tuple(e["loses"]) if "loses" in e else None,
            ))
        return tuple(out)

    try:
        grading, copying = data["grading"], data["copying"]
        lines = tuple(
            Line(id=x["id"], question=int(x["question"]), points=float(x["points"]), concept=x["concept"],
                 hint=x["hint"], evidence=evidence(x.get("evidence"), f"line {x['id']!r}"))
            for x in data["line"])
        misconceptions = tuple(
            Misconception(id=x["id"], question=int(x["question"]), points=float(x["points"]),
                          statement=x["statement"], hint=x["hint"],
                          evidence=evidence(x.get("evidence"), f"misconception {x['id']!r}", x.get("unless", ())),
                          loses=tuple(x.get("loses", ())),
                          near=evidence([x["near"]], f"misconception {x['id']!r}, near")[0] if "near" in x else None,
                          opposes=tuple(x.get("opposes", x.get("loses", ()))))
            for x in data.get("misconception", ()))
        ids = [x.id for x in lines] + [m.id for m in misconceptions]
        if len(set(ids)) != len(ids):
            raise RubricError(f"{path}: duplicate ids: {sorted({i for i in ids if ids.count(i) > 1})}")
        for m in misconceptions:
            for field, ids_ in (("loses", m.loses), ("opposes", m.opposes),
                                *(("evidence loses", ev.loses) for ev in m.evidence if ev.loses)):
                unknown = sorted(set(ids_) - {x.id for x in lines})
                if unknown:
                    raise RubricError(f"{path}: misconception {m.id!r} {field} {unknown}, which are not line ids: "
                                      f"use the id of a [[line]]")
        return Rubric(
            path=path, lines=lines, misconceptions=misconceptions,
            questions={int(k): v for k, v in data.get("questions", {}).items()},
            pass_mark=float(grading["pass_mark"]), review_band=float(grading["review_band"]),
            cap=float(grading["cap"]),
            copy_sources=tuple(copying.get("sources", ())), copying=_copying(copying, path),
            elsewhere=tuple(compile_(p, "[naming] elsewhere") for p in data.get("naming", {}).get("elsewhere", ())),
            **_structure(path),
        )
    except KeyError as exc:
        raise RubricError(f"{path}: missing field {exc}") from exc
    except (TypeError, ValueError) as exc:
        raise RubricError(f"{path}: {exc}") from exc

