"""Whether a named error is right: single sentences labelled before the grader read them (issue 11).

Reads ``tests/prose/sentences/*.toml``: each ``[[sentence]]`` has ``q`` (1, 2, 3: the question of exercise 1 it
stands in; ``"ex4"``: exercise 4's explanation), ``topic`` (the error it is about), ``error`` (true when the
sentence makes that error) and ``text``. A sentence is graded inside a neutral answer (:func:`named`), and the
errors it adds to that answer's are what the grader names.

Per file it prints:

- false names: correct sentences (``error = false``) that get any error named, the wrong diagnoses the
  developers' guide ranks worse than none;
- recall: error sentences whose own error is named;
- unsure: correct sentences that ask a person ("unsure" review flag), a cost in teacher time, not a wrong name.

Files named ``dev_*`` may be tuned on; ``heldout_*`` were written by a writer who never saw the rubric or the
grader, and are never tuned on.

Run: python bench/named_errors.py [--show] [--show-heldout]
"""
from __future__ import annotations

import argparse
import sys
import tomllib
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from grader import rubric  # noqa: E402

SENTENCES = ROOT / "tests/prose/sentences"
HEADINGS = ("## 1. Multi-head attention: a team reading one contract", "## 2. The transformer block around it",
            "## 3. Quick check: BERT vs GPT at the attention level")
#: Exercise 1's neutral answer, one correct sentence per question; the tested sentence replaces its question's.
NEUTRAL = ("Several heads run in parallel on the same tokens.", "The MLP works on each token on its own.",
           "BERT attends both ways; GPT uses a causal mask.")
#: A sentence of the lesson's own topic that stands before the tested one in its section, as the rest of a real
#: answer does: a sentence alone in its section has no neighbours to show that its words are meant in the lesson's
#: sense (grader/rubric/concepts.py, _in_domain), which no real answer lacks. It asserts nothing a line or an
#: error reads.
CONTEXT = ("Multi-head attention is the core of every transformer layer.",
           "A transformer block has two sub-layers.",
           "Both models are stacks of transformer blocks.")
#: Exercise 4's neutral explanation; the tested sentence is appended to it.
NEUTRAL_EX4 = ("Without residuals every block has to pass the whole signal on, and the gradient has no direct path to "
               "the first blocks, so the model only learns the letter frequencies and its loss stays at U. In post-norm "
               "the layer norm sits on the residual stream, so the gradient must cross every normalisation; that is why "
               "the original Transformer needed a learning-rate warm-up.")


@dataclass(frozen=True)
class Judged:
    """One labelled sentence and the errors the grader names for it."""

    file: str
    q: int | str
    topic: str
    error: bool
    text: str
    named: tuple[str, ...]
    unsure: bool

    @property
    def wrong_name(self) -> bool:
        """A name the label does not allow: any name for a correct sentence, another error's for an error."""
        return bool(set(self.named) - ({self.topic} if self.error else set()))

    @property
    def caught(self) -> bool:
        return self.error and self.topic in self.named


@lru_cache(maxsize=None)
def _rubric(exercise: str):
    return rubric.load(ROOT / f"exercises/{exercise}/rubric.toml")


def _assess(q: int | str, sentence: str | None):
    if q == "ex4":
        text = NEUTRAL_EX4 + ("" if sentence is None else " " + sentence)
        return rubric.evaluate(_rubric("exercise4"), text)
    parts = list(NEUTRAL)
    if sentence is not None:
        parts[q - 1] = f"{CONTEXT[q - 1]} {sentence}"
    text = "\n\n".join(f"{h}\n\n{p}" for h, p in zip(HEADINGS, parts)) + "\n"
    return rubric.evaluate(_rubric("exercise1"), text)


@lru_cache(maxsize=None)
def _neutral(q: int | str) -> tuple[frozenset[str], bool]:
    """What the neutral answer alone is found to say (computed once per question)."""
    got, unsure = _found(_assess(q, None))
    return frozenset(got), unsure


def _found(a) -> tuple[set[str], bool]:
    return ({k for k, m in a.misconceptions.items() if m.found},
            any(r.startswith("unsure") for r in a.needs_review))


def named(q: int | str, sentence: str) -> tuple[tuple[str, ...], bool]:
    """The errors the grader names for ``sentence`` beyond those of the neutral answer, and whether it is unsure.

    ``q``: 1, 2 or 3 (exercise 1's question the sentence answers) or ``"ex4"``. Raises ValueError for another q.
    """
    if q not in (1, 2, 3, "ex4"):
        raise ValueError(f"q must be 1, 2, 3 or 'ex4', not {q!r}")
    base, base_unsure = _neutral(q)
    got, unsure = _found(_assess(q, sentence))
    return tuple(sorted(got - base)), unsure and not base_unsure


def judge_file(path: Path) -> list[Judged]:
    """Every sentence of one labelled file, judged. Raises KeyError naming a missing field."""
    rows = []
    for s in tomllib.loads(path.read_text(encoding="utf-8"))["sentence"]:
        names, unsure = named(s["q"], s["text"])
        rows.append(Judged(path.stem, s["q"], s["topic"], bool(s["error"]), s["text"], names, unsure))
    return rows


def files() -> list[Path]:
    return sorted(SENTENCES.glob("*.toml"))


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--show", action="store_true",
                   help="print every wrong name and every missed error of the dev files (dev_*)")
    p.add_argument("--show-heldout", action="store_true",
                   help="print them for the held-out files too (measure only: never tune on what it shows)")
    args = p.parse_args(argv)
    for path in files():
        rows = judge_file(path)
        correct = [r for r in rows if not r.error]
        errors = [r for r in rows if r.error]
        wrong = [r for r in rows if r.wrong_name]
        print(f"{path.stem}: {len(correct)} correct sentences, {sum(r.wrong_name for r in correct)} given a name "
              f"({100 * sum(r.wrong_name for r in correct) / max(1, len(correct)):.0f} %), "
              f"{sum(r.unsure for r in correct)} unsure; "
              f"{len(errors)} errors, {sum(r.caught for r in errors)} named "
              f"({100 * sum(r.caught for r in errors) / max(1, len(errors)):.0f} %)"
              + (f", {sum(r.wrong_name for r in errors)} given another name" if errors else ""))
        if args.show_heldout or (args.show and path.stem.startswith("dev_")):
            for r in wrong:
                print(f"  WRONG [{r.q}] {r.topic} -> {list(r.named)} :: {r.text}")
            for r in errors:
                if not r.caught:
                    print(f"  MISSED [{r.q}] {r.topic} :: {r.text}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
