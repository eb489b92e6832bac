"""Write grader/rubric/lesson_words.txt: the stems answers on this lesson use (for grader/rubric/genre.py).

A stem is a lesson word when at least ``--min-answers`` (3) labelled answers of the **dev** split use it, among the
genuine and confident-error answers of tests/prose/exercise1 and tests/prose/exercise4 (test splits and held-out
sets are never read; nor are the controls written to look like nonsense, :data:`CONTROL_SOURCE`). Words are read as
the judge reads them: prose sentences, quoted examples left out.

Run: python bench/lesson_words.py [--min-answers 3] [--check]
(``--check`` exits 1 when the file is not what this script would write.)
"""
from __future__ import annotations

import argparse
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from grader import rubric  # noqa: E402
from grader.rubric import genre  # noqa: E402
from grader.rubric.read import blocks  # noqa: E402
from grader.rubric.sentences import units  # noqa: E402
from prose_agreement import RUBRICS, labelled  # noqa: E402

HEADER = ("# Stems used by at least {n} labelled genuine or confident-error answers of tests/prose's dev split\n"
          "# (exercise1 and exercise4); written by bench/lesson_words.py, read by grader/rubric/genre.py.\n")


#: The genuine controls of the nonsense rounds (labels_n.toml, labels_o.toml of 2026-12-07) were written to look like
#: nonsense on the surface (personal registers, kitchens, recipes, sources cited): their words say nothing of the words
#: students use on this lesson, and they made a kitchen recipe's "cook", "plate" and "recipe" lesson words (a review of
#: 2026-12-07).
CONTROL_SOURCE = "written for the control set"


def answer_stems(exercise: str) -> list[set[str]]:
    """One set of content-word stems per dev-split genuine or confident-error answer of ``exercise``."""
    rub = rubric.load(RUBRICS[exercise])
    out = []
    for _, entry, text in labelled(exercise):
        if entry["split"] != "dev" or entry.get("kind", "genuine") not in ("genuine", "confident_error") \
                or entry.get("source") == CONTROL_SOURCE:
            continue
        units_, _, _ = units(rub, blocks(text)[0])
        out.append({genre.stem(w) for w in genre.content_words([u.norm for u in units_ if u.prose])})
    return out


def build(min_answers: int) -> str:
    """The file's text: the header, then the stems used by ``min_answers`` or more answers, sorted."""
    counts: Counter[str] = Counter()
    for exercise in ("exercise1", "exercise4"):
        for stems in answer_stems(exercise):
            counts.update(stems)
    kept = sorted(s for s, n in counts.items() if n >= min_answers)
    return HEADER.format(n=min_answers) + "\n".join(kept) + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--min-answers", type=int, default=3)
    parser.add_argument("--check", action="store_true")
    args = parser.parse_args()
    text = build(args.min_answers)
    if args.check:
        same = genre.LESSON_WORDS_FILE.is_file() and genre.LESSON_WORDS_FILE.read_text(encoding="utf-8") == text
        print("up to date" if same else f"{genre.LESSON_WORDS_FILE} is stale: run bench/lesson_words.py")
        return 0 if same else 1
    genre.LESSON_WORDS_FILE.write_text(text, encoding="utf-8")
    print(f"{genre.LESSON_WORDS_FILE}: {text.count(chr(10)) - 2} stems")
    return 0


if __name__ == "__main__":
    sys.exit(main())
