"""Speed of the student's command and of the sandbox (issue: `grade exercise3` < 4 s wall).

Measures, on this machine:
1. `grade exercise3 solutions/exercise3` end to end in a new process (torch import included),
   several runs: min / median / max wall seconds;
2. the sandbox's own overhead: start (process + NumPy import + loading the submission) and the
   round trip of one call, against calling the same function directly in this process;
3. that the sandbox process does not import torch.

Run: python bench/bench_grade.py [--runs 5]
"""
from __future__ import annotations

import argparse
import importlib.util
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from grader import exercises  # noqa: E402
from grader.sandbox import bubblewrap_works  # noqa: E402
from grader.sandbox import Sandbox  # noqa: E402

TARGET_S = 4.0


def time_grade(runs: int) -> list[float]:
    grade = Path(sys.executable).with_name("grade")
    times = []
    with tempfile.TemporaryDirectory() as tmp:
        for _ in range(runs):
            start = time.perf_counter()
            proc = subprocess.run([str(grade), "exercise3", str(ROOT / "solutions" / "exercise3"),
                                   "--report", str(Path(tmp) / "r.html")], capture_output=True, text=True)
            times.append(time.perf_counter() - start)
            if proc.returncode != 0:
                sys.exit(f"grade failed (exit {proc.returncode}):\n{proc.stdout}\n{proc.stderr}")
    return times


def time_sandbox(use_bubblewrap: bool, calls: int = 300) -> dict[str, float]:
    exercise = exercises.load("exercise3")
    solution = ROOT / "solutions" / "exercise3"
    spec = importlib.util.spec_from_file_location("reference_attention", solution / "attention.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 16, 48))
    w_qkv, b_qkv = rng.standard_normal((144, 48)), rng.standard_normal(144)
    w_out, b_out = rng.standard_normal((48, 48)), rng.standard_normal(48)
    args = (x, w_qkv, b_qkv, w_out, b_out, 6)

    start = time.perf_counter()
    for _ in range(calls):
        module.multi_head_attention(*args, causal=True)
    direct = (time.perf_counter() - start) / calls

    with Sandbox(exercise, solution, use_bubblewrap=use_bubblewrap) as sandbox:
        start = time.perf_counter()
        sandbox.has_function("softmax")
        started = time.perf_counter() - start
        start = time.perf_counter()
        for _ in range(calls):
            sandbox.call("multi_head_attention", *args, causal=True)
        via = (time.perf_counter() - start) / calls
    with tempfile.TemporaryDirectory() as probe_dir:
        (Path(probe_dir) / "attention.py").write_text(
            "import sys\ndef loaded_modules():\n    return sorted(sys.modules)\n")
        with Sandbox(exercise, Path(probe_dir), use_bubblewrap=use_bubblewrap) as probe:
            modules = probe.call("loaded_modules")
    return {"start_s": started, "direct_ms": direct * 1e3, "sandbox_ms": via * 1e3,
            "overhead_ms": (via - direct) * 1e3, "modules": len(modules),
            "torch_imported": any(m == "torch" or m.startswith("torch.") for m in modules)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()

    times = time_grade(args.runs)
    print(f"grade exercise3 (reference solution), {args.runs} runs: min {min(times):.2f} s, "
          f"median {statistics.median(times):.2f} s, max {max(times):.2f} s  (target < {TARGET_S:g} s)")
    modes = [True, False] if bubblewrap_works() else [False]
    for bw in modes:
        r = time_sandbox(bw)
        name = "bubblewrap" if bw else "plain process"
        print(f"sandbox ({name}): start + NumPy import + load {r['start_s'] * 1e3:.0f} ms; "
              f"multi_head_attention (2, 16, 48) call {r['sandbox_ms']:.3f} ms vs {r['direct_ms']:.3f} ms "
              f"in-process: overhead {r['overhead_ms']:.3f} ms per call; "
              f"torch imported in the sandbox: {r['torch_imported']} ({r['modules']} modules loaded)")
    verdict = "OK" if statistics.median(times) < TARGET_S else "TOO SLOW"
    print(f"verdict: {verdict}")


if __name__ == "__main__":
    main()
