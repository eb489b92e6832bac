"""Batch grading on a real Dask cluster (``grader batch --scheduler``): a ``dask scheduler`` and two
``dask worker`` processes on loopback, no mocks. The cluster's gradebook must equal the local pool's for
the same seed; a worker killed mid-submission loses nothing and counts nothing twice; a submission
whose workers keep dying is a grader error; the scheduler going away stops the batch cleanly and
``--resume`` finishes it; workers whose grader or sandbox differ are refused, each with its reason."""
import json
import os
import re
import shutil
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time
import zipfile
from pathlib import Path

import pytest

pytest.importorskip("distributed")
from distributed import Client  # noqa: E402

from conftest import ROOT  # noqa: E402
from dask_cluster import Cluster  # noqa: E402
from grader import batch  # noqa: E402
from test_lms_canvas_moodle import _canvas_download  # noqa: E402

SOLUTION = ROOT / "solutions" / "exercise3" / "attention.py"
SKELETON = ROOT / "exercises" / "exercise3" / "skeleton" / "attention.py"
CORPUS = ROOT / "tests" / "corpus" / "exercise3"
HOSTILE = ROOT / "tests" / "hostile" / "exercise3"
#: A correct submission that takes seconds to grade: long enough to kill its worker mid-grading.
SLOW = "import time\ntime.sleep(1.5)\n" + SOLUTION.read_text()
#: A submission whose grading takes far longer than a poll of the cluster may stall (its every call
#: sleeps 0.5 s, under the 2 s call limit): one that is to be killed each time cannot finish unseen.
SLOWEST = SLOW + textwrap.dedent("""
    def _slowly(f):
        def called(*args, **kwargs):
            time.sleep(0.5)
            return f(*args, **kwargs)
        return called
    for _name, _f in list(globals().items()):
        if callable(_f) and getattr(_f, "__module__", None) == __name__ and not _name.startswith("_"):
            globals()[_name] = _slowly(_f)
""")


def _folder(base: Path, student: str, text: str) -> Path:
    (base / student).mkdir(parents=True)
    (base / student / "attention.py").write_text(text)
    return base / student


def _rows(out: Path) -> dict:
    con = sqlite3.connect(out / "gradebook.sqlite")
    rows = {s: (status, score, error, json.loads(result) if result else None) for s, status, score, error, result
            in con.execute("SELECT student, status, score, error, result FROM grades")}
    con.close()
    return rows


def _checks(result: dict | None) -> dict:
    return {c["name"]: (c["status"], c["max_points"], c["feedback"], c["diagnosis"]) for c in result["checks"]} if result else {}


def _grader(*args: str, env: dict | None = None, timeout: float = 300) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "grader", *args], capture_output=True, text=True, timeout=timeout,
                          env=env)


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    with Cluster(tmp_path_factory.mktemp("cluster"), workers=2) as running:
        yield running


@pytest.fixture(scope="module")
def mixed(tmp_path_factory):
    """Folders, zips as platforms export them, a zip slip, known mistakes, a hostile loop, a surrogate."""
    subs = tmp_path_factory.mktemp("mixed")
    _folder(subs, "alice", SOLUTION.read_text())
    _folder(subs, "bob", SKELETON.read_text())
    with zipfile.ZipFile(subs / "carol.zip", "w") as z:
        z.write(SOLUTION, "carol_12345/exercise3/attention.py")
        z.writestr("__MACOSX/carol_12345/exercise3/._attention.py", b"\x00\x05junk")
    with zipfile.ZipFile(subs / "dan.zip", "w") as z:
        z.writestr("../../escape.py", "x = 1\n")
    for case in ("heads_wrong_join", "layer_norm_unbiased_variance"):
        shutil.copytree(CORPUS / case, subs / case, ignore=shutil.ignore_patterns("expected.toml"))
    shutil.copytree(HOSTILE / "infinite_loop", subs / "loop", ignore=shutil.ignore_patterns("expected.toml"))
    _folder(subs, "ivy", SOLUTION.read_text() + "\n\ndef softmax(x, axis=-1):\n    raise ValueError('bad \\udcff')\n")
    (subs / "gil").mkdir()
    (subs / "gil" / "attention.py").symlink_to(SOLUTION)  # a link out of the submission: refused
    return subs


def test_the_cluster_grades_as_the_local_pool_does(cluster, mixed, tmp_path):
    local = batch.run("exercise3", mixed, tmp_path / "local", jobs=2, seed=5)
    on_cluster = batch.run("exercise3", mixed, tmp_path / "cluster", seed=5, scheduler=cluster.address)
    assert on_cluster.seed == local.seed == 5
    here, there = _rows(tmp_path / "local"), _rows(tmp_path / "cluster")
    assert sorted(there) == sorted(here) == sorted(["alice", "bob", "carol", "dan", "gil", "heads_wrong_join", "ivy",
                                                    "layer_norm_unbiased_variance", "loop"])
    for student, (status, score, error, result) in here.items():
        assert there[student][:3] == (status, score, error), student
        assert _checks(there[student][3]) == _checks(result), student
    # Real values, not only agreement: the lesson's outcomes.
    assert {s: (r[0], r[1]) for s, r in there.items() if s in ("alice", "bob", "carol", "dan", "gil")} == {
        "alice": ("graded", 24), "bob": ("graded", 0), "carol": ("graded", 24), "dan": ("refused", 0),
        "gil": ("refused", 0)}
    assert "symbolic link" in there["gil"][2] and "unsafe path '../../escape.py'" in there["dan"][2]
    assert there["heads_wrong_join"][0] == "graded" and 0 < there["heads_wrong_join"][1] < 24
    assert there["loop"][0] == "graded" and there["loop"][1] < 24
    assert (tmp_path / "cluster" / "grades.csv").read_text() == (tmp_path / "local" / "grades.csv").read_text()
    for student in ("alice", "ivy", "loop"):  # every output of a graded student is written by the client
        for path in (f"results/{student}.json", f"gradescope/{student}/results.json", f"reports/{student}.html"):
            assert (tmp_path / "cluster" / path).is_file(), path
    assert json.loads((tmp_path / "cluster" / "results" / "alice.json").read_text())["score"] == 24
    assert "<html" in (tmp_path / "cluster" / "index.html").read_text().lower()


def test_loose_platform_files_travel_to_the_workers(cluster, tmp_path):
    """A Canvas download's flat files (a submission of several loose files, or one zip) reach the worker."""
    download = _canvas_download(tmp_path / "download")
    (download / "roeann_56789_91234_exercise3.zip").write_bytes(b"not a zip")
    batch.run("exercise3", download, tmp_path / "out", seed=5, scheduler=cluster.address)
    rows = _rows(tmp_path / "out")
    assert {s: (r[0], r[1]) for s, r in rows.items()} == {
        "mullerzoe_12345": ("graded", 24), "smithjohn_23456": ("graded", 0), "doejane_34567": ("graded", 24),
        "leeann_45678": ("graded", 24), "roeann_56789": ("refused", 0)}
    assert rows["roeann_56789"][2].startswith(  # the exported file's name, as a local batch says it
        "roeann_56789_91234_exercise3.zip is not a readable zip file")


def _executing(client: Client, student: str, dead: frozenset[str] = frozenset()) -> list[str]:
    """Addresses of the workers grading ``student`` right now (its task executing, not queued). Only
    workers that hold a grading resource and are not ``dead`` (killed, perhaps still listed) are
    asked: one still setting up (a restarted worker importing torch) answers after seconds, a killed
    one after the connect timeout (30 s), and a poll that waits on them can miss a whole grading."""
    try:  # a worker just killed may still be listed: its answer is an error, skipped
        ready = [address for address, worker in client.scheduler_info()["workers"].items()
                 if address not in dead and any(name.startswith("grader-") for name in worker.get("resources", {}))]
        running = client.run(lambda dask_worker: [ts.key for ts in dask_worker.state.executing], workers=ready,
                             on_error="return") if ready else {}
    except OSError:
        return []
    return [address for address, keys in running.items()
            if isinstance(keys, list) and any(k.startswith(f"grade-{student}-") for k in keys)]


def _kill_workers_grading(client: Client, kills: dict[str, int], timeout: float = 180) -> dict[str, list[str]]:
    """SIGKILL the worker process grading each student of ``kills``, that many times, in whatever order
    the cluster grades them, each once it has been grading for 0.3 s (its sandbox running: a real
    crash comes from grading, not from the task's first instant); returns each student's killed
    workers' addresses, in order."""
    killed: dict[str, list[str]] = {student: [] for student in kills}
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        left = [student for student, n in kills.items() if len(killed[student]) < n]
        if not left:
            return killed
        for student in left:
            dead = frozenset(address for addresses in killed.values() for address in addresses)
            workers = _executing(client, student, dead)
            if not workers:
                continue
            time.sleep(0.3)
            if _executing(client, student, dead)[:1] != workers[:1]:
                continue
            pid = client.run(os.getpid, workers=workers[:1], on_error="return").get(workers[0])
            if isinstance(pid, int):
                os.kill(pid, signal.SIGKILL)
                killed[student].append(workers[0])
        time.sleep(0.05)
    raise AssertionError(f"not every kill happened within {timeout:g} s: {killed}, wanted {kills}")


def _progress(stdout: str) -> list[tuple[int, int]]:
    return [(int(a), int(b)) for a, b in re.findall(r"graded (\d+)/(\d+)", stdout)]


def test_killed_workers_lose_nothing_and_count_nothing_twice(tmp_path):
    """Alice's worker is killed while grading her: she is graded again on the other, once. Bob's
    worker is killed each of the two times he is graded: a grader error, not a 0; whoever waited on
    a killed worker is not blamed (Dask's default allowed-failures, 3, would have let that happen)."""
    subs = tmp_path / "subs"
    _folder(subs, "alice", SLOW)
    _folder(subs, "bob", SLOWEST)
    for i in range(4):
        _folder(subs, f"s{i}", SOLUTION.read_text())
    with Cluster(tmp_path / "cluster", workers=2) as cluster, \
            Client(cluster.address, set_as_default=False) as client:
        job = subprocess.Popen([sys.executable, "-m", "grader", "batch", "exercise3", str(subs), "--out",
                                str(tmp_path / "out"), "--scheduler", cluster.address, "--seed", "3"],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        killed = _kill_workers_grading(client, {"alice": 1, "bob": 2})  # bob: again where it went next
        stdout, stderr = job.communicate(timeout=300)
    assert job.returncode == 0, stderr
    rows = _rows(tmp_path / "out")
    assert {s: (r[0], r[1]) for s, r in rows.items()} == {
        "alice": ("graded", 24), "bob": ("grader_error", 0), **{f"s{i}": ("graded", 24) for i in range(4)}}
    assert rows["bob"][2] == "the Dask workers grading it died 2 times (each while grading it)"
    assert max(_progress(stdout)) == (6, 6) and all(done <= 6 for done, _ in _progress(stdout))
    assert killed["alice"][0] in stdout  # the workers' verdicts were printed before grading
    assert re.search(r"Worker joined: tcp://127\.0\.0\.1:\d+: ready, isolated by bubblewrap", stdout)  # restarted
    grades = (tmp_path / "out" / "grades.csv").read_text().splitlines()
    assert len(grades) == 7 and sum(line.startswith("alice,") for line in grades) == 1


def test_the_scheduler_going_away_stops_the_batch_and_resume_finishes(tmp_path):
    subs = tmp_path / "subs"
    for i in range(6):
        _folder(subs, f"s{i}", SLOW)
    out = tmp_path / "out"
    with Cluster(tmp_path / "first", workers=1) as cluster:
        job = subprocess.Popen([sys.executable, "-m", "grader", "batch", "exercise3", str(subs), "--out", str(out),
                                "--scheduler", cluster.address], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               text=True)
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and not (out.joinpath("results").is_dir() and any(out.joinpath("results").iterdir())):
            time.sleep(0.1)
        cluster.kill_scheduler()
        stdout, stderr = job.communicate(timeout=120)
    assert job.returncode == 1, (stdout, stderr)
    assert "scheduler went away" in stderr and "--resume" in stderr
    graded_first = {s for s, r in _rows(out).items() if r[0] == "graded"}
    assert 1 <= len(graded_first) < 6
    before = {s: (out / "results" / f"{s}.json").stat().st_mtime_ns for s in graded_first}
    with Cluster(tmp_path / "second", workers=1) as cluster:
        done = _grader("batch", "exercise3", str(subs), "--out", str(out), "--scheduler", cluster.address, "--resume")
    assert done.returncode == 0, done.stderr
    assert f"{len(graded_first)} already graded, {6 - len(graded_first)} to grade" in done.stdout
    assert {s: (r[0], r[1]) for s, r in _rows(out).items()} == {f"s{i}": ("graded", 24) for i in range(6)}
    assert {s: (out / "results" / f"{s}.json").stat().st_mtime_ns for s in graded_first} == before


def _without_bubblewrap(tmp_path: Path) -> dict:
    site = tmp_path / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text(textwrap.dedent("""
        import shutil
        _which = shutil.which
        shutil.which = lambda name, *a, **k: None if name == "bwrap" else _which(name, *a, **k)
    """))
    return dict(os.environ, PYTHONPATH=str(site))


def test_workers_with_another_course_or_no_sandbox_are_refused_with_their_reason(tmp_path):
    other = tmp_path / "course"
    shutil.copytree(ROOT / "exercises", other / "exercises", ignore=shutil.ignore_patterns("__pycache__"))
    spec = other / "exercises" / "exercise3" / "exercise.toml"
    spec.write_text(spec.read_text().replace("call_timeout = 2 ", "call_timeout = 3 "))
    subs = tmp_path / "subs"
    _folder(subs, "alice", SOLUTION.read_text())
    with Cluster(tmp_path / "cluster", workers=0) as cluster:
        cluster.add_workers(1, env=dict(os.environ, GRADER_COURSE_ROOT=str(other)))
        cluster.add_workers(1, env=_without_bubblewrap(tmp_path))
        refused = _grader("batch", "exercise3", str(subs), "--out", str(tmp_path / "out"),
                          "--scheduler", cluster.address)
        assert refused.returncode == 2, refused.stderr
        lines = [line for line in refused.stdout.splitlines() if "refused:" in line]
        assert len(lines) == 2 and any(line.endswith(
            "refused: it differs from the client: exercises/ differs; solutions/ differs (missing here). Install "
            "the same grader, course and versions on every worker, and restart workers after changing them")
            for line in lines) and any("bubblewrap does not work here" in line for line in lines), refused.stdout
        assert "no Dask worker may grade" in refused.stderr
        assert not (tmp_path / "out" / "results").exists()
        # Allowed, the worker without bubblewrap grades (and says so); the other course's worker still may not.
        allowed = _grader("batch", "exercise3", str(subs), "--out", str(tmp_path / "out"), "--scheduler",
                          cluster.address, "--allow-unisolated", "--resume")
    assert allowed.returncode == 0, allowed.stderr
    assert "NOT isolated" in allowed.stdout and "it differs from the client" in allowed.stdout
    assert _rows(tmp_path / "out")["alice"][:2] == ("graded", 24)
    assert json.loads((tmp_path / "out" / "results" / "alice.json").read_text())["isolation"] != "bubblewrap"


def test_no_scheduler_at_the_address_is_an_input_error_unless_nothing_is_left(tmp_path):
    subs = tmp_path / "subs"
    _folder(subs, "alice", SOLUTION.read_text())
    done = _grader("batch", "exercise3", str(subs), "--out", str(tmp_path / "out"), "--scheduler",
                   "tcp://127.0.0.1:9", timeout=120)
    assert done.returncode == 2
    assert "no Dask scheduler answered at tcp://127.0.0.1:9" in done.stderr and "dask scheduler" in done.stderr
    assert "Traceback" not in done.stderr
    # Graded locally, a --resume that only rewrites the outputs needs no cluster.
    assert _grader("batch", "exercise3", str(subs), "--out", str(tmp_path / "out"), "--resume").returncode == 0
    again = _grader("batch", "exercise3", str(subs), "--out", str(tmp_path / "out"), "--resume", "--scheduler",
                    "tcp://127.0.0.1:9", timeout=120)
    assert again.returncode == 0, again.stderr
    assert "1 already graded, 0 to grade" in again.stdout and _rows(tmp_path / "out")["alice"][:2] == ("graded", 24)
