"""Wall time of grading one exercise-4 submission (issue: at most 60 s on this 2-core machine).

Grades the reference solution in this process (torch imported once, as in a batch worker), in quick
mode (no re-training) and in full mode (four re-training runs), and prints the time of every check,
the load average before and after (the machine is shared: a loaded machine is several times slower),
and whether the full grading stayed within the budget.

Run: python bench/bench_exercise4.py [--runs 1] [--quick-only]
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from grader import exercises, judge  # noqa: E402

BUDGET_S = 60.0


def grade_once(quick: bool) -> tuple[float, object]:
    ex = exercises.load("exercise4")
    start = time.perf_counter()
    result = judge.grade(ex, ROOT / "solutions" / "exercise4", seed=1, quick=quick)
    return time.perf_counter() - start, result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("--quick-only", action="store_true")
    args = parser.parse_args()
    import torch  # noqa: F401  (as a batch worker: imported once, before timing)

    modes = [True] if args.quick_only else [True, False]
    worst_full = 0.0
    for quick in modes:
        for i in range(args.runs):
            load = os.getloadavg()[0]
            seconds, result = grade_once(quick)
            after = os.getloadavg()[0]
            print(f"{'quick' if quick else 'full '} run {i + 1}: {seconds:6.1f} s wall, {result.score:g}/{result.max_score:g}"
                  f" points, load average {load:.1f} -> {after:.1f}")
            slow = sorted(result.checks, key=lambda c: -c.duration)[:8]
            print("   slowest checks: " + ", ".join(f"{c.name} {c.duration:.1f} s" for c in slow))
            if not quick:
                worst_full = max(worst_full, seconds)
    if not args.quick_only:
        verdict = "within" if worst_full <= BUDGET_S else "OVER"
        print(f"full grading: {worst_full:.1f} s, {verdict} the {BUDGET_S:g} s budget"
              + ("" if worst_full <= BUDGET_S else " (check the load average: the budget is for an idle machine)"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
