"""A real Dask cluster on loopback for the tests: a ``dask scheduler`` and ``dask worker`` processes,
started with the commands README gives (``--nthreads 1``), stopped with their process groups.
(bench/bench_cluster.py starts its own: it also pauses the cluster while the local side is timed.)"""
from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

BIN = Path(sys.executable).parent


class Cluster:
    """A scheduler (``dask scheduler``) and worker processes (``dask worker --nworkers N``) on 127.0.0.1.

    Args:
        folder: where the scheduler file and the logs go.
        workers: worker processes started with the scheduler (more with :meth:`add_workers`).
        allowed_failures: the scheduler's ``distributed.scheduler.allowed-failures`` (Dask's default: 3).
    """

    def __init__(self, folder: Path, workers: int = 2, allowed_failures: int = 3):
        self.folder = Path(folder)
        self.folder.mkdir(parents=True, exist_ok=True)
        self.procs: list[subprocess.Popen] = []
        self.file = self.folder / "scheduler.json"
        self.file.unlink(missing_ok=True)
        env = dict(os.environ, DASK_DISTRIBUTED__SCHEDULER__ALLOWED_FAILURES=str(allowed_failures))
        self.scheduler = self._start([str(BIN / "dask"), "scheduler", "--host", "127.0.0.1", "--port", "0",
                                      "--scheduler-file", str(self.file), "--no-dashboard"], "scheduler", env)
        deadline = time.monotonic() + 60
        while not self.file.exists() and time.monotonic() < deadline:
            time.sleep(0.1)
        time.sleep(0.2)  # the file is written whole, but give it a moment
        self.address = json.loads(self.file.read_text())["address"]
        self.expected = 0
        if workers:
            self.add_workers(workers)

    def _start(self, cmd: list[str], name: str, env: dict | None = None) -> subprocess.Popen:
        log = open(self.folder / f"{name}-{len(self.procs)}.log", "wb")
        proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, env=env or os.environ.copy(),
                                start_new_session=True)
        log.close()
        self.procs.append(proc)
        return proc

    def add_workers(self, n: int, env: dict | None = None, wait: bool = True) -> subprocess.Popen:
        """Start ``dask worker ADDRESS --nworkers n --nthreads 1`` (under a nanny, which restarts a
        killed worker); with ``wait``, until the scheduler counts them."""
        proc = self._start([str(BIN / "dask"), "worker", self.address, "--nworkers", str(n), "--nthreads", "1",
                            "--no-dashboard", "--local-directory", str(self.folder / "workers")],
                           "worker", env)
        self.expected += n
        if wait:
            self.wait_for_workers(self.expected)
        return proc

    def wait_for_workers(self, n: int, timeout: float = 120) -> None:
        from distributed import Client

        with Client(self.address, timeout=30, set_as_default=False) as client:
            client.wait_for_workers(n, timeout=timeout)

    def kill_scheduler(self) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.scheduler.pid, signal.SIGKILL)
        self.scheduler.wait()

    def close(self) -> None:
        """Stop every process (workers first), each with its process group."""
        for proc in reversed(self.procs):
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGTERM)
        for proc in reversed(self.procs):
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()

    def __enter__(self) -> Cluster:
        return self

    def __exit__(self, *exc) -> None:
        self.close()
