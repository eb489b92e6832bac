"""Batch throughput on a Dask cluster against the local pool (issue 14 point 5: the per-submission
overhead of `grader batch --scheduler`; target: the cluster within 10 % of the local pool, a
throughput ratio cluster/local >= 0.90).

Generates SUBMISSIONS exercise-3 submissions with bench_batch.make_submissions (default 120): one of
each known mistake in tests/corpus/exercise3, every hostile case in tests/hostile/exercise3, the rest
correct. The hostile cases are kept: they are what the cluster path must carry exactly as the local
pool does (a 100 MB print, a judge's worker crashed, a jammed sandbox template, forged replies), and
they cost both sides the same time limits; they also make the timings somewhat noisier.

For each K in --workers (default 1 and 2), starts a real Dask cluster on loopback as the README tells
users to, as subprocesses of this script (`dask scheduler --host 127.0.0.1 --port 0 --scheduler-file
F --no-dashboard`, `dask worker --scheduler-file F --nworkers K --nthreads 1 --no-dashboard`), waits
for its K workers, imports torch on them and grades an untimed warm-up batch of 2K correct
submissions (a worker's first grading imports the grader's modules), and prints that one-time start
apart: a cluster's workers stay up from batch to batch, so their start is a fixed cost of the
cluster, not one per submission. Then times, as subprocesses side by side, `grader batch exercise3
SUBS --jobs K --seed 1` (the local pool, which starts its K workers, torch included, in every batch)
and `grader batch exercise3 SUBS --scheduler ADDRESS --seed 1` on that cluster (its time includes the client's connect
and the worker plugin's set-up: digest, bubblewrap check, judges opened, paid on every batch), in
alternating order (local, cluster, cluster, local, ...) so that drift of the shared machine favours
neither side. While the local pool runs, the cluster is paused (SIGSTOP to its process groups): idle,
a 2-worker cluster took 3.1 CPU-seconds in 20 s here (heartbeats, the workers' profiler), 8 % of
the machine taken from the local side only; its scheduler runs with Dask's worker-ttl off so that a
long pause drops no worker (a setting that only matters for silent workers). Prints every run, the medians' throughputs (submissions/s), their ratio against the
target and the difference per submission, and the load average before and after (the 2 cores are
shared: a busy machine makes every number noisy).

Checks every run's gradebook (gradebook.sqlite, table ``grades``): a row per submission with the
expected outcome (bench_batch.problems_of: full marks, or the case's expected.toml), and the same
students with the same status and score as the first local run of the same K. Prints what disagrees
and exits 1 if anything does (a batch that fails stops the bench with its output's end, exit 2).

Run: python bench/bench_cluster.py [--submissions 120] [--repeats 2] [--workers 1 2]
"""
from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import signal
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import IO
from pathlib import Path

from bench_batch import ROOT, make_submissions, problems_of
from distributed import Client

from grader.corpus import Case

BIN = Path(sys.executable).parent  # the venv's dask and grader executables
#: The issue's target: cluster throughput / local pool throughput.
TARGET_RATIO = 0.90
#: Seconds a cluster may take to come up (scheduler file written, K workers joined, torch imported).
START_TIMEOUT_S = 180.0
#: Seconds one batch may take before the bench gives up on it.
BATCH_TIMEOUT_S = 3600.0


@dataclass
class Cluster:
    """A running Dask cluster of this bench (see :func:`cluster`)."""

    address: str  # the scheduler's, tcp://127.0.0.1:PORT
    workers: int
    processes: list[subprocess.Popen]  # each the leader of its process group
    start_s: float = 0.0  # seconds from the scheduler's spawn to its workers up with torch imported

    @contextlib.contextmanager
    def paused(self) -> Iterator[None]:
        """Its processes stopped (SIGSTOP to their groups) meanwhile: idle, a scheduler, its nannies
        and workers still take CPU (heartbeats, the workers' profiler), which would slow only the side
        timed meanwhile. On leaving they go on (SIGCONT), and all the workers are checked to be back."""
        for process in self.processes:
            os.killpg(process.pid, signal.SIGSTOP)
        try:
            yield
        finally:
            for process in self.processes:
                os.killpg(process.pid, signal.SIGCONT)
        with Client(self.address, timeout=30, set_as_default=False) as client:
            client.wait_for_workers(self.workers, timeout=30)


@contextlib.contextmanager
def cluster(folder: Path, workers: int) -> Iterator[Cluster]:
    """A Dask scheduler and ``workers`` worker processes on loopback, as subprocesses in their own
    process groups (logs in ``folder``), torch imported on every worker. All of them are killed on
    leaving, also on an error or Ctrl-C. The scheduler never drops a worker for silence
    (``worker-ttl`` off), so a worker paused with it (:meth:`Cluster.paused`) stays in."""
    scheduler_file = folder / f"scheduler-{workers}.json"
    started: list[tuple[subprocess.Popen, IO[bytes]]] = []

    def spawn(name: str, *args: str, env: dict[str, str] | None = None) -> subprocess.Popen:
        log = open(folder / f"{name}-{workers}.log", "wb")  # noqa: SIM115 - closed in _stop
        started.append((subprocess.Popen([str(BIN / "dask"), *args], stdout=log, stderr=subprocess.STDOUT,
                                         start_new_session=True, env=env), log))
        return started[-1][0]

    try:
        start = time.perf_counter()
        scheduler = spawn("scheduler", "scheduler", "--host", "127.0.0.1", "--port", "0",
                          "--scheduler-file", str(scheduler_file), "--no-dashboard",
                          env=dict(os.environ, DASK_DISTRIBUTED__SCHEDULER__WORKER_TTL="None"))
        address = _wait_for_address(scheduler_file, scheduler, folder / f"scheduler-{workers}.log")
        spawn("worker", "worker", "--scheduler-file", str(scheduler_file), "--nworkers", str(workers),
              "--nthreads", "1", "--no-dashboard")
        with Client(address, timeout=START_TIMEOUT_S, set_as_default=False) as client:
            client.wait_for_workers(workers, timeout=START_TIMEOUT_S)
            client.run(exec, "import torch")  # what the first batch's plugin set-up would otherwise pay
        yield Cluster(address, workers, [process for process, _ in started], time.perf_counter() - start)
    finally:
        for process, log in reversed(started):  # workers first, then the scheduler
            _stop(process, log)


def _wait_for_address(scheduler_file: Path, scheduler: subprocess.Popen, log: Path) -> str:
    """The scheduler's address, once it has written its scheduler file."""
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        if scheduler.poll() is not None:
            raise SystemExit(f"the Dask scheduler exited with status {scheduler.returncode}:\n"
                             f"{log.read_text(errors='replace')[-3000:]}")
        with contextlib.suppress(OSError, ValueError, KeyError):
            return json.loads(scheduler_file.read_text())["address"]
        time.sleep(0.1)
    raise SystemExit(f"the Dask scheduler wrote no {scheduler_file} within {START_TIMEOUT_S:g} s")


def _stop(process: subprocess.Popen, log: IO[bytes]) -> None:
    """SIGTERM to the process's group, SIGKILL after 10 s."""
    for sig, wait in ((signal.SIGTERM, 10), (signal.SIGKILL, 5)):
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, sig)
        with contextlib.suppress(subprocess.TimeoutExpired):
            process.wait(wait)
            break
    log.close()


def time_batch(subs: Path, out: Path, how: list[str]) -> float:
    """Seconds that ``grader batch exercise3 SUBS --out OUT --seed 1 HOW...`` takes, as a subprocess.
    A batch that fails ends the bench (exit 2) with the end of its output."""
    start = time.perf_counter()
    done = subprocess.run([str(BIN / "grader"), "batch", "exercise3", str(subs), "--out", str(out), "--seed", "1",
                           *how], capture_output=True, text=True, timeout=BATCH_TIMEOUT_S)
    seconds = time.perf_counter() - start
    if done.returncode != 0:
        print(f"grader batch {' '.join(how)} exited {done.returncode}:\n{(done.stdout + done.stderr)[-3000:]}")
        sys.exit(2)
    return seconds


def gradebook(out: Path) -> dict[str, tuple]:
    """student -> (status, score, max_score) from OUT/gradebook.sqlite."""
    with contextlib.closing(sqlite3.connect(out / "gradebook.sqlite")) as db:
        return {s: (st, sc, mx) for s, st, sc, mx in db.execute("SELECT student, status, score, max_score FROM grades")}


def disagreements(label: str, expected: dict[str, Case | None], out: Path, reference: dict[str, tuple]) -> list[str]:
    """What is wrong with the run in ``out``: a missing or extra row, an unexpected outcome, or a
    status or score other than ``reference``'s (the first local run of the same K)."""
    rows = gradebook(out)
    found = [f"{label}: {s}: no row" for s in sorted(expected.keys() - rows.keys())]
    found += [f"{label}: {s}: a row for no submission" for s in sorted(rows.keys() - expected.keys())]
    for student in sorted(expected.keys() & rows.keys()):
        found += [f"{label}: {student}: {p}" for p in problems_of(expected[student], rows[student],
                                                                 out / "results" / f"{student}.json")]
        if student in reference and rows[student][:2] != reference[student][:2]:
            found.append(f"{label}: {student}: {rows[student][0]} {rows[student][1]:g}, the first local run "
                         f"{reference[student][0]} {reference[student][1]:g}")
    return found


def bench_workers(workers: int, subs: Path, folder: Path, expected: dict[str, Case | None],
                  repeats: int) -> tuple[float, float, list[str]]:
    """Times local pool and cluster with ``workers`` workers; returns their median seconds and the
    disagreements found."""
    seconds: dict[str, list[float]] = {"local": [], "cluster": []}
    found: list[str] = []
    reference: dict[str, tuple] = {}
    warm_up = folder / f"warm-up-{workers}"
    for i in range(2 * workers):
        shutil.copytree(ROOT / "solutions" / "exercise3", warm_up / f"correct_{i}")
    with cluster(folder, workers) as dask:
        warm_s = time_batch(warm_up, folder / f"out-{workers}-warm-up", ["--scheduler", dask.address])
        print(f"K={workers}: Dask scheduler and {_workers(workers)} at {dask.address} up, torch imported, in "
              f"{dask.start_s:.1f} s; a warm-up batch of {2 * workers} submissions (each worker's first grading "
              f"imports the grader's modules) {warm_s:.1f} s. Once per cluster, not per batch: its workers serve "
              "batch after batch", flush=True)
        how = {"local": ["--jobs", str(workers)], "cluster": ["--scheduler", dask.address]}
        for repeat in range(repeats):
            for side in ("local", "cluster") if repeat % 2 == 0 else ("cluster", "local"):
                out = folder / f"out-{workers}-{side}-{repeat}"
                with dask.paused() if side == "local" else contextlib.nullcontext():
                    took = time_batch(subs, out, how[side])
                seconds[side].append(took)
                label = f"K={workers} {side} run {len(seconds[side])}"
                print(f"  {label:<20} {took:6.1f} s = {len(expected) / took:5.2f} submissions/s", flush=True)
                if side == "local" and not reference:
                    reference = gradebook(out)
                found += disagreements(label, expected, out, reference)
    return statistics.median(seconds["local"]), statistics.median(seconds["cluster"]), found


def _workers(count: int) -> str:
    return f"{count} worker{'s' if count != 1 else ''}"


def load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--submissions", type=int, default=120,
                        help="at least the corpus's and hostile cases' count (67); the rest are correct")
    parser.add_argument("--repeats", type=int, default=2, help="runs of each side per K, in alternating order")
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2], help="the K to measure")
    args = parser.parse_args()
    print(f"load average before: {load()}")
    with tempfile.TemporaryDirectory(prefix="bench-cluster-") as tmp:
        subs = Path(tmp) / "subs"
        subs.mkdir()
        expected = make_submissions(subs, args.submissions)
        n = len(expected)
        print(f"{n} exercise-3 submissions ({sum(s.startswith('correct_') for s in expected)} correct, "
              f"{sum(s.startswith('wrong_') for s in expected)} known mistakes, "
              f"{sum(s.startswith('hostile_') for s in expected)} hostile); {args.repeats} run(s) of each side per K")
        medians, found = {}, []
        for workers in args.workers:
            local_s, cluster_s, wrong = bench_workers(workers, subs, Path(tmp), expected, args.repeats)
            medians[workers] = local_s, cluster_s
            found += wrong
    print(f"load average after: {load()}")
    for workers, (local_s, cluster_s) in medians.items():
        ratio = local_s / cluster_s
        print(f"K={workers} (medians): local pool --jobs {workers}: {n / local_s:.2f} submissions/s; Dask cluster, "
              f"{_workers(workers)}: {n / cluster_s:.2f} submissions/s; ratio cluster/local {ratio:.2f} "
              f"(target >= {TARGET_RATIO:.2f}: {'met' if ratio >= TARGET_RATIO else 'NOT met'}); "
              f"{(cluster_s - local_s) / n * 1000:+.0f} ms per submission on the cluster")
    runs = len(medians) * 2 * args.repeats
    print(f"gradebooks: {runs} runs of {n} submissions; "
          + ("every row has the expected outcome and the local runs' status and score" if not found
             else f"{len(found)} disagreement(s):\n  " + "\n  ".join(found)))
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
