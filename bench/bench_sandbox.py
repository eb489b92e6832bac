"""Where a correct exercise-3 submission's time goes, per component, with the sandbox start measured
side by side against the way it used to start (issue 13: take the sandbox's start off the
per-submission path).

- baseline start: a fresh bubblewrap running a fresh ``python -I -S`` that imports NumPy (what every
  sandbox cost before the template process), timed to exit;
- template start: a :class:`grader.sandbox.Sandbox` forked by the judge's template process, started,
  one call answered, closed (copy, namespaces, uid, limits, kill and teardown included);
- a whole grading: ``Judge.grade`` of the reference solution (judge CPU: this process; machine CPU:
  every process, from /proc/stat, so the sandbox and the kernel's work count);
- a batch worker's extras: the JSON, Gradescope JSON and HTML report written per submission.

Machine CPU is read from /proc/stat around each loop (plus a short pause for the kernel's deferred
namespace teardown), so it counts other load on the machine too: run it on an idle machine.

Run: python bench/bench_sandbox.py [--n 60]
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from grader import batch, exercises, judge
from grader.sandbox import Sandbox, bubblewrap_works
from grader.sandbox.isolation import package_dirs, scrubbed_env, site_packages, template_command

ROOT = Path(__file__).resolve().parent.parent
SOLUTION = ROOT / "solutions" / "exercise3"
TICK = 0.01  # /proc/stat counts in 1/100 s
PAUSE = 0.5  # s after a loop, for deferred work (namespace teardown) to show up


def _busy() -> int:
    fields = [int(v) for v in open("/proc/stat").readline().split()[1:]]
    return fields[0] + fields[1] + fields[2] + fields[5] + fields[6]  # user nice system irq softirq


def measure(n: int, step) -> tuple[float, float, float]:
    """(wall ms, this process's CPU ms, machine CPU ms) per call of ``step``."""
    busy, wall, cpu = _busy(), time.monotonic(), time.process_time()
    for _ in range(n):
        step()
    wall, cpu = time.monotonic() - wall, time.process_time() - cpu
    time.sleep(PAUSE)
    machine = (_busy() - busy) * TICK
    return 1000 * wall / n, 1000 * cpu / n, 1000 * machine / n


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=60)
    args = parser.parse_args()
    ex = exercises.load("exercise3")
    bwrap = bubblewrap_works()
    rows = []

    with tempfile.TemporaryDirectory() as tmp:
        python = [sys.executable, "-I", "-S", "-c",
                  f"import sys; sys.path.extend({json.dumps(site_packages())}); import numpy"]
        cmd = template_command(Path(tmp), python, package_dirs(tuple(ex.forbidden_imports))) if bwrap else python
        old = measure(args.n, lambda: subprocess.run(cmd, env=scrubbed_env(), check=True))
    rows.append(("baseline start: fresh bwrap + python + numpy", old))

    def sandbox_round() -> None:
        with Sandbox(ex, SOLUTION) as sandbox:
            sandbox.call("softmax", np.zeros(3))

    sandbox_round()  # the template starts once per judge process
    new = measure(args.n, sandbox_round)
    rows.append(("template start + one call + close", new))

    with judge.Judge(ex) as session:
        session.grade(SOLUTION, seed=1)  # torch and the references, once per judge
        whole = measure(args.n, lambda: session.grade(SOLUTION, seed=1))
        result = session.grade(SOLUTION, seed=1)
    rows.append(("Judge.grade, correct submission", whole))

    with tempfile.TemporaryDirectory() as tmp:
        outputs = measure(args.n, lambda: batch._write_outputs(Path(tmp), "alice", result))
    rows.append(("batch outputs (JSON, Gradescope, HTML)", outputs))

    print(f"isolation: {'bubblewrap' if bwrap else 'none (fallback)'}; {args.n} rounds each; per submission:")
    print(f"{'component':48} {'wall ms':>9} {'judge CPU ms':>13} {'machine CPU ms':>15}")
    for name, (wall, cpu, machine) in rows:
        print(f"{name:48} {wall:9.1f} {cpu:13.1f} {machine:15.1f}")
    print(f"sandbox start, baseline / template: {old[0] / new[0]:.1f}x wall, {old[2] / new[2]:.1f}x machine CPU")


if __name__ == "__main__":
    main()
