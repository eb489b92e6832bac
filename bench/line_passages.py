"""Whether a line is read from the many ways students say it: short passages labelled before the grader read them.

Reads ``tests/prose/lines/*.toml``: each ``[[passage]]`` has ``line`` (a line id of exercise 1's or exercise 4's
rubric), ``earns`` (true when a teacher reading the passage inside an answer credits that line, by
tests/prose/LABELLING.md), ``style`` (how it is said: plain, terse, formula, numbers, picture, nonnative, chatty,
list, from_other_side) and ``text`` (one to three sentences). A passage is graded inside a neutral answer that earns
no line on its own (:func:`credited`), so the line is earned by the passage or not at all.

Per file and line it prints:

- recall: passages labelled ``earns = true`` whose line is counted (a miss costs a student a point a teacher gives);
- false credit: passages labelled ``earns = false`` whose line is counted (a point a teacher would not give).

Files named ``dev*`` may be tuned on; ``heldout_*`` were written by writers who never saw the rubric or the grader
and are never tuned on: ``--show`` prints the misses of the dev files only, and nothing prints a held-out passage.

Run: python bench/line_passages.py [--show]
"""
from __future__ import annotations

import argparse
import sys
import tomllib
from collections import defaultdict
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from grader import rubric  # noqa: E402

PASSAGES = ROOT / "tests/prose/lines"
HEADINGS = ("## 1. Multi-head attention: a team reading one contract", "## 2. The transformer block around it",
            "## 3. Quick check: BERT vs GPT at the attention level")
#: Exercise 1's neutral answer: a sentence of the lesson's topic under each heading that earns none of the lines
#: the passages are about (checked by :func:`_neutral_lines`); the passage follows its question's sentence, so it
#: has the neighbour every real answer gives it (grader/rubric/concepts.py reads a sentence's words in the sense
#: of its neighbours).
NEUTRAL_EX1 = ("Multi-head attention is the core of every transformer layer.",
               "A transformer block has two sub-layers.",
               "The two models differ in what their attention may look at.")
#: Exercise 4's neutral opening: on topic, asserting nothing a line reads.
NEUTRAL_EX4 = "I trained the four runs of the exercise and copied their validation losses into the table."


@dataclass(frozen=True)
class Judged:
    """One labelled passage and whether the grader counted its line."""

    file: str
    line: str
    earns: bool
    style: str
    text: str
    credited: bool


@lru_cache(maxsize=None)
def _rubrics() -> dict[str, object]:
    return {ex: rubric.load(ROOT / f"exercises/{ex}/rubric.toml") for ex in ("exercise1", "exercise4")}


@lru_cache(maxsize=None)
def _where(line: str) -> tuple[str, int]:
    """(exercise, question) of ``line``. Raises KeyError for a line neither rubric has."""
    for ex, rub in _rubrics().items():
        for ln in rub.lines:
            if ln.id == line:
                return ex, ln.question
    raise KeyError(f"no rubric has a line {line!r}")


def _answer(exercise: str, question: int, passage: str | None) -> str:
    if exercise == "exercise4":
        return NEUTRAL_EX4 + ("" if passage is None else " " + passage)
    parts = list(NEUTRAL_EX1)
    if passage is not None:
        parts[question - 1] += " " + passage
    return "\n\n".join(f"{h}\n\n{p}" for h, p in zip(HEADINGS, parts)) + "\n"


@lru_cache(maxsize=None)
def _neutral_lines(exercise: str) -> frozenset[str]:
    """The lines the neutral answer alone earns (none is expected)."""
    a = rubric.evaluate(_rubrics()[exercise], _answer(exercise, 1, None))
    return frozenset(k for k, v in a.lines.items() if v.counted)


def credited(line: str, passage: str) -> bool:
    """Whether the grader counts ``line`` for an answer that is the neutral answer plus ``passage``.

    Raises KeyError for an unknown line, and ValueError when the neutral answer alone already earns ``line`` (the
    measurement would mean nothing).
    """
    exercise, question = _where(line)
    if line in _neutral_lines(exercise):
        raise ValueError(f"the neutral answer of {exercise} already earns {line}: change NEUTRAL_*")
    a = rubric.evaluate(_rubrics()[exercise], _answer(exercise, question, passage))
    return bool(a.lines[line].counted)


def judge_file(path: Path) -> list[Judged]:
    """Every passage of one labelled file, judged. Raises KeyError naming a missing field."""
    rows = []
    for p in tomllib.loads(path.read_text(encoding="utf-8"))["passage"]:
        rows.append(Judged(path.stem, p["line"], bool(p["earns"]), str(p.get("style", "")), p["text"],
                           credited(p["line"], p["text"])))
    return rows


def files() -> list[Path]:
    return sorted(PASSAGES.glob("*.toml"))


def summary(rows: list[Judged]) -> dict[str, tuple[int, int, int, int]]:
    """Per line: (earning passages, of them credited, non-earning passages, of them credited)."""
    out: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0, 0])
    for r in rows:
        c = out[r.line]
        if r.earns:
            c[0] += 1
            c[1] += r.credited
        else:
            c[2] += 1
            c[3] += r.credited
    return {k: tuple(v) for k, v in sorted(out.items())}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--show", action="store_true", help="print every miss and false credit of the dev files (dev*)")
    args = p.parse_args(argv)
    for path in files():
        rows = judge_file(path)
        earning = [r for r in rows if r.earns]
        other = [r for r in rows if not r.earns]
        hit = sum(r.credited for r in earning)
        false = sum(r.credited for r in other)
        print(f"{path.stem}: recall {hit} of {len(earning)} ({100 * hit / max(1, len(earning)):.0f} %), "
              f"false credit {false} of {len(other)}")
        for line, (n, c, m, f) in summary(rows).items():
            print(f"  {line:26s} recall {c:3d} of {n:3d}   false credit {f:2d} of {m:2d}")
        if args.show and path.stem.startswith("dev"):
            for r in rows:
                if r.credited != r.earns:
                    print(f"  {'MISSED' if r.earns else 'FALSE '} {r.line} [{r.style}] :: {r.text}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
