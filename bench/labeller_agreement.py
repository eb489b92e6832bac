"""How well two people agree on the labelled answers, and the grader with each of them (issue 11).

A grader's agreement with one labeller means little without the labellers' agreement with each other: the
labels of ``tests/prose/SET/labels_*.toml`` were written by one person, and ``tests/prose/second_labels/SET.toml``
by a second who saw neither those labels nor any grader output, by the same guide (``tests/prose/LABELLING.md``).
For every set with second labels this prints, on the answers both labelled:

- first vs second labeller: within 1, MAE, Spearman and QWK on the 0-10 labels (the metrics of
  ``bench/prose_agreement.py``), and per point (a concept or an avoided misconception) the share of answers on
  which both made the same call, with Cohen's kappa (Cohen 1960) of that yes/no call;
- the grader (graded as ``bench/prose_agreement.py`` grades) vs the first labeller, vs the second, and vs the mean
  of both.

Only aggregates are printed: the sets are held out, and their answers are never read to tune the grader.

Run: python bench/labeller_agreement.py
"""
from __future__ import annotations

import sys
import tomllib
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

import prose_agreement as pa  # noqa: E402

SECOND = pa.ROOT / "tests/prose/second_labels"


def second_labels(name: str) -> dict[str, dict]:
    """The second labeller's entries for set ``name`` (empty when there are none)."""
    path = SECOND / f"{name}.toml"
    return tomllib.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}


def cohen_kappa(a: list[bool], b: list[bool]) -> float:
    """Cohen's kappa of two yes/no ratings of the same items (nan when chance agreement is total)."""
    a, b = np.asarray(a, bool), np.asarray(b, bool)
    observed = float((a == b).mean())
    expected = float(a.mean() * b.mean() + (1 - a.mean()) * (1 - b.mean()))
    return (observed - expected) / (1 - expected) if expected < 1 else float("nan")


#: within_1, mae, spearman and qwk of ratings against labels (both on 0-10): the prose bench's own measure.
metrics = pa.agreement_of


def line(label: str, m: dict[str, float]) -> str:
    return (f"  {label:34s} n={m['n']:3d}  within 1: {m['within_1']:.0%}  MAE {m['mae']:.2f}  "
            f"Spearman {m['spearman']:.2f}  QWK {m['qwk']:.2f}")


def main() -> int:
    sets = sorted(p.stem for p in SECOND.glob("*.toml")) if SECOND.is_dir() else []
    if not sets:
        print(f"no second labels in {SECOND}")
        return 1
    for name in sets:
        second = second_labels(name)
        first = {n: e for n, e, _ in pa.labelled(name)}
        both = sorted(set(first) & set(second))
        missing = sorted(set(first) - set(second))
        graded = {g.name: g.score for g in pa.grade_all(name)}
        f = [float(first[n]["label"]) for n in both]
        s = [float(second[n]["label"]) for n in both]
        g = [graded[n] for n in both]
        print(f"{name}: {len(both)} answers labelled twice" + (f" ({len(missing)} once only)" if missing else ""))
        print(line("first vs second labeller", metrics(f, s)))
        print(line("grader vs first labeller", metrics(f, g)))
        print(line("grader vs second labeller", metrics(s, g)))
        print(line("grader vs the mean of both", metrics((np.array(f) + np.array(s)) / 2, g)))
        ids = sorted({p for n in both for e in (first[n], second[n]) for p in str(e.get("points", "")).split()})
        for point in ids:
            a = [point in str(first[n].get("points", "")).split() for n in both]
            b = [point in str(second[n].get("points", "")).split() for n in both]
            same = float(np.mean(np.asarray(a) == np.asarray(b)))
            print(f"    {point:28s} same call {same:.0%}  kappa {cohen_kappa(a, b):.2f}  "
                  f"(first {sum(a)}, second {sum(b)})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
