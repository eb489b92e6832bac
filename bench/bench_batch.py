"""Batch throughput on exercise 3 against the obvious alternative (issue 13: >= 25x a fresh pytest
process per submission, with --jobs 2 over 200 submissions; an earlier issue asked for >= 5/s).

Generates SUBMISSIONS submissions (default 200): mostly correct, one of each known mistake in
tests/corpus/exercise3 and every hostile case in tests/hostile/exercise3 (infinite loops, fork
and memory bombs, 100 MB of output, ...), grades them with `grader batch --jobs 2`, then times the baseline (a fresh
`pytest` process per submission that imports the student's module and torch, two at a time)
on a sample of them. Prints both rates, their ratio, and checks that every submission has a
gradebook row with the expected outcome: full marks for correct ones (and hostile ones marked
``full_marks``), and for the others what their expected.toml says (the failing checks, the named
mistake, the message), checked with ``grader.corpus.verify`` on the stored result.

Run: python bench/bench_batch.py [--submissions 200] [--baseline-sample 30]
"""
from __future__ import annotations

import argparse
import json
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time
import tomllib
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from grader import corpus
from grader.corpus import Case
from grader.results import SubmissionResult

ROOT = Path(__file__).resolve().parent.parent


def make_submissions(folder: Path, total: int) -> dict[str, Case | None]:
    """Write the submissions; returns student -> its known-mistake or hostile case (None: correct)."""
    expected: dict[str, Case | None] = {}
    for kind, cases in (("wrong", corpus.cases("exercise3")), ("hostile", corpus.cases("exercise3", kind="hostile"))):
        for i, case in enumerate(cases):
            name = f"{kind}_{i:03d}_{case.name}"
            shutil.copytree(case.folder, folder / name, ignore=shutil.ignore_patterns("expected.toml"))
            expected[name] = case
    i = 0
    while len(expected) < total:
        shutil.copytree(ROOT / "solutions" / "exercise3", folder / f"correct_{i:03d}")
        expected[f"correct_{i:03d}"] = None
        i += 1
    return expected


def problems_of(case: Case | None, row: tuple, result_json: Path) -> list[str]:
    """What contradicts the expected outcome: full marks for correct submissions and hostile ones
    marked ``full_marks``; for the others what their expected.toml says (mistake named, message)."""
    status, score, max_score = row
    if status != "graded":
        return [f"status {status}"]
    full = case is None or tomllib.loads((case.folder / "expected.toml").read_text()).get("full_marks", False)
    if full:
        return [] if score == max_score else [f"{score:g}/{max_score:g}, expected full marks"]
    result = SubmissionResult.from_dict(json.loads(result_json.read_text()))
    return corpus.verify(case, result)


def baseline(folder: Path, students: list[str]) -> float:
    """Seconds to grade ``students`` with a fresh pytest process each, two at a time."""
    env_base = {"PYTHONPATH": f"{ROOT / 'bench'}:{ROOT}", "PATH": "/usr/bin:/bin"}

    def one(student: str) -> None:
        env = dict(env_base, BASELINE_SUBMISSION=str(folder / student))
        subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "baseline_plugin", "-p", "no:cacheprovider",
                        "--import-mode=importlib", f"--rootdir={ROOT}", "-o", "addopts=",
                        str(ROOT / "exercises" / "exercise3" / "tests")],
                       env=env, capture_output=True, timeout=300, cwd=ROOT)

    start = time.perf_counter()
    with ThreadPoolExecutor(2) as pool:
        list(pool.map(one, students))
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--submissions", type=int, default=200)
    parser.add_argument("--baseline-sample", type=int, default=30)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        subs, out = Path(tmp) / "subs", Path(tmp) / "out"
        subs.mkdir()
        expected = make_submissions(subs, args.submissions)
        grader = Path(sys.executable).with_name("grader")
        start = time.perf_counter()
        subprocess.run([str(grader), "batch", "exercise3", str(subs), "--out", str(out), "--jobs", "2",
                        "--seed", "1"], check=True, stdout=subprocess.DEVNULL)
        batch_s = time.perf_counter() - start
        finished = time.time()
        written = sorted(p.stat().st_mtime for p in (out / "results").glob("*.json"))
        ends = (written[0] - (finished - batch_s), finished - written[-1]) if written else (0.0, 0.0)
        book = sqlite3.connect(out / "gradebook.sqlite")
        rows = dict(((s, (st, sc, mx)) for s, st, sc, mx in book.execute(
            "SELECT student, status, score, max_score FROM grades")))
        durations = dict(book.execute("SELECT student, duration FROM grades"))
        wrong = {s: problems for s, case in expected.items()
                 if (problems := (["no row"] if s not in rows else
                                  problems_of(case, rows[s], out / "results" / f"{s}.json")))}
        # The baseline on a sample of the correct and known-mistake submissions, in the batch's
        # proportions. Hostile ones are left out: a plain pytest has no per-call time limit, so an
        # infinite loop would hang it (leaving them out flatters the baseline, not the batch).
        calm = sorted(s for s in expected if not s.startswith("hostile_"))
        sample = calm[:: max(1, len(calm) // args.baseline_sample)][: args.baseline_sample]
        base_s = baseline(subs, sample)
    batch_rate = len(expected) / batch_s
    base_rate = len(sample) / base_s
    print(f"grader batch --jobs 2: {len(expected)} submissions in {batch_s:.1f} s = {batch_rate:.2f} submissions/s")
    print(f"baseline (fresh pytest per submission, 2 at a time): {len(sample)} in {base_s:.1f} s = "
          f"{base_rate:.2f} submissions/s")
    print(f"ratio: {batch_rate / base_rate:.1f}x (target >= 25x)")
    # Where the batch's time went: the workers' grading seconds by kind (two workers share two cores),
    # and the batch process alone before the first result and after the last.
    for kind in ("correct", "wrong", "hostile"):
        mine = [d for s, d in durations.items() if s.startswith(kind + "_")]
        if mine:
            print(f"  {kind}: {len(mine)} submissions, {sum(mine):.1f} s of grading in all, "
                  f"{1000 * sum(mine) / len(mine):.0f} ms each on average")
    print(f"  before the first result: {ends[0]:.1f} s (workers start, torch, checks collected); "
          f"after the last: {ends[1]:.1f} s (CSV, overview)")
    print(f"gradebook: {len(rows)} rows for {len(expected)} submissions; "
          f"{len(expected) - len(wrong)} with the expected outcome (full marks, or the case's expected.toml: "
          f"failing checks, named mistake, message); unexpected: {wrong or 'none'}")


if __name__ == "__main__":
    main()
