"""Batch throughput on exercise 3 against the obvious alternative (issue: >= 5 submissions/s
with --jobs 2 over 200 submissions, and >= 5x a fresh pytest process per submission).

Generates SUBMISSIONS submissions (default 200): mostly correct, one of each known mistake in
tests/corpus/exercise3 and the quick hostile cases in tests/hostile/exercise3 (plus one
infinite loop), grades them with `grader batch --jobs 2`, then times the baseline (a fresh
`pytest` process per submission that imports the student's module and torch, two at a time)
on a sample of them. Prints both rates, their ratio, and checks that every submission has a
gradebook row with the expected score (full marks for correct ones, less for the others).

Run: python bench/bench_batch.py [--submissions 200] [--baseline-sample 30]
"""
from __future__ import annotations

import argparse
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SLOW_HOSTILE = {"import_time_loop", "swallowing_loop", "setsid_grandchild", "prints_100mb", "memory_bomb"}


def make_submissions(folder: Path, total: int) -> dict[str, bool]:
    """Write the submissions; returns student -> True when it should get full marks."""
    wrong = sorted((ROOT / "tests" / "corpus" / "exercise3").glob("*/attention.py"))
    hostile = [p for p in sorted((ROOT / "tests" / "hostile" / "exercise3").glob("*/"))
               if p.name not in SLOW_HOSTILE]
    expected = {}
    for i, case in enumerate(wrong):
        shutil.copytree(case.parent, folder / f"wrong_{i:03d}_{case.parent.name}")
        expected[f"wrong_{i:03d}_{case.parent.name}"] = False
    for i, case in enumerate(hostile):
        name = f"hostile_{i:03d}_{case.name}"
        shutil.copytree(case, folder / name)
        full = "full_marks = true" in (case / "expected.toml").read_text()
        expected[name] = full
    i = 0
    while len(expected) < total:
        name = f"correct_{i:03d}"
        shutil.copytree(ROOT / "solutions" / "exercise3", folder / name)
        expected[name] = True
        i += 1
    return expected


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
        rows = dict(((s, (st, sc, mx)) for s, st, sc, mx in sqlite3.connect(out / "gradebook.sqlite").execute(
            "SELECT student, status, score, max_score FROM grades")))
        wrong = [s for s, full in expected.items()
                 if s not in rows or (rows[s][1] == rows[s][2]) != full or rows[s][0] == "grader_error"]
        # The baseline on a sample with the same mix as the batch (correct ones dominate).
        sample = sorted(expected)[:: max(1, len(expected) // args.baseline_sample)][: args.baseline_sample]
        base_s = baseline(subs, sample)
    batch_rate = len(expected) / batch_s
    base_rate = len(sample) / base_s
    print(f"grader batch --jobs 2: {len(expected)} submissions in {batch_s:.1f} s = {batch_rate:.2f} submissions/s "
          f"(target >= 5)")
    print(f"baseline (fresh pytest per submission, 2 at a time): {len(sample)} in {base_s:.1f} s = "
          f"{base_rate:.2f} submissions/s")
    print(f"ratio: {batch_rate / base_rate:.1f}x (target >= 5x)")
    print(f"gradebook: {len(rows)} rows for {len(expected)} submissions; "
          f"{len(expected) - len(wrong)} with the expected outcome; unexpected: {wrong or 'none'}")


if __name__ == "__main__":
    main()
