"""Batch grading: zips as LMS exports them, refusals for one student only, isolation between
students, outputs (gradebook, CSV, Gradescope JSON, overview), and kill-then-resume."""
import contextlib
import csv
import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import pytest

from conftest import ROOT
from grader import batch, scratch
from grader.sandbox.template import UID_BASE, UID_COUNT

SOLUTION = ROOT / "solutions" / "exercise3" / "attention.py"
SKELETON = ROOT / "exercises" / "exercise3" / "skeleton" / "attention.py"


def _folder(base: Path, student: str, source: Path = SOLUTION, text: str | None = None) -> Path:
    folder = base / student
    folder.mkdir(parents=True)
    if text is None:
        shutil.copy(source, folder / "attention.py")
    else:
        (folder / "attention.py").write_text(text)
    return folder


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    """One batch over a mix of good, bad, zipped and hostile submissions (graded once)."""
    subs = tmp_path_factory.mktemp("subs")
    out = tmp_path_factory.mktemp("out")
    _folder(subs, "alice")
    _folder(subs, "bob", SKELETON)
    # An LMS export: files nested two folders deep, with macOS junk beside them.
    with zipfile.ZipFile(subs / "carol.zip", "w") as z:
        z.write(SOLUTION, "carol_12345/exercise3/attention.py")
        z.writestr("__MACOSX/carol_12345/exercise3/._attention.py", b"\x00\x05junk")
    with zipfile.ZipFile(subs / "dan.zip", "w") as z:
        z.writestr("../../escape.py", "x = 1\n")
    with zipfile.ZipFile(subs / "erin.zip", "w") as z:
        z.writestr("/etc/attention.py", "x = 1\n")
    with zipfile.ZipFile(subs / "fay.zip", "w") as z:
        link = zipfile.ZipInfo("attention.py")
        link.external_attr = 0o120777 << 16
        z.writestr(link, str(SOLUTION))
    with zipfile.ZipFile(subs / "gus.zip", "w", compression=zipfile.ZIP_DEFLATED) as z:
        z.writestr("attention.py", b"#" * (120 * 1024 * 1024))
    # Mallory tries to read Alice's files and the reference solution, and reports her uid.
    spy = (
        "import os\n"
        f"for target in [{str(subs / 'alice' / 'attention.py')!r}, {str(SOLUTION)!r}, "
        f"{str(ROOT / 'exercises' / 'exercise3' / 'tests' / 'hidden')!r}]:\n"
        "    try:\n"
        "        data = open(target).read() if os.path.isfile(target) else os.listdir(target)\n"
        "        print('LEAKED', target, len(data))\n"
        "    except OSError as exc:\n"
        "        print('BLOCKED', type(exc).__name__)\n"
        "print('UID', os.getuid())\n"
        "print('CORES', ','.join(map(str, sorted(os.sched_getaffinity(0)))))\n"
    )
    _folder(subs, "mallory", text=spy + SOLUTION.read_text())
    # Ivy's error message holds lone surrogates: once it crashed the report writer, and the gradebook
    # said "grader error" while results/ held a score.
    _folder(subs, "ivy", text=SOLUTION.read_text() + "\n\ndef softmax(x, axis=-1):\n"
                              "    raise ValueError('bad \\udcff')\n")
    batch.run("exercise3", subs, out, jobs=2, seed=11)
    con = sqlite3.connect(out / "gradebook.sqlite")
    names = ["student", "status", "score", "max_score", "error"]
    rows = {row[0]: dict(zip(names, row)) for row in con.execute(f"SELECT {', '.join(names)} FROM grades")}
    con.close()
    return out, rows


def test_every_student_gets_a_row_with_the_right_outcome(graded):
    out, rows = graded
    assert sorted(rows) == ["alice", "bob", "carol", "dan", "erin", "fay", "gus", "ivy", "mallory"]
    assert (rows["alice"]["status"], rows["alice"]["score"], rows["alice"]["max_score"]) == ("graded", 24, 24)
    assert (rows["bob"]["status"], rows["bob"]["score"]) == ("graded", 0)
    assert (rows["carol"]["status"], rows["carol"]["score"]) == ("graded", 24)  # nested zip + __MACOSX
    assert (rows["mallory"]["status"], rows["mallory"]["score"]) == ("graded", 24)


def test_text_no_encoder_accepts_is_made_safe_and_every_output_agrees(graded):
    """A lone surrogate from the sandbox arrives as U+FFFD: the gradebook, the JSON result, the Gradescope
    file and the report all exist and agree, and no temp file is left."""
    out, rows = graded
    ivy = rows["ivy"]
    assert ivy["status"] == "graded" and ivy["error"] == "" and 0 < ivy["score"] < 24
    result = json.loads((out / "results" / "ivy.json").read_text(encoding="utf-8"))
    assert result["score"] == ivy["score"]
    assert json.loads((out / "gradescope" / "ivy" / "results.json").read_text())["score"] == ivy["score"]
    feedback = [c["feedback"] for c in result["checks"] if "bad" in c["feedback"]]
    assert feedback and all("raised ValueError: bad \ufffd" in f for f in feedback)
    assert "raised ValueError: bad \ufffd" in (out / "reports" / "ivy.html").read_text(encoding="utf-8")
    assert list(out.rglob("*.tmp")) == []


@pytest.mark.parametrize("student, words", [
    ("dan", "unsafe path '../../escape.py'"),
    ("erin", "unsafe path '/etc/attention.py'"),
    ("fay", "symbolic link"),
    ("gus", "zip bomb"),
])
def test_bad_zips_are_refused_for_that_student_only(graded, student, words):
    _, rows = graded
    assert rows[student]["status"] == "refused"
    assert words in rows[student]["error"]


def test_a_submission_cannot_read_other_students_or_the_solutions(graded):
    out, _ = graded
    result = json.loads((out / "results" / "mallory.json").read_text())
    assert "LEAKED" not in result["output"]
    assert result["output"].count("BLOCKED") == 3
    if result["isolation"].startswith("bubblewrap"):
        uid = int(result["output"].split("UID")[1].split()[0])
        assert uid in range(UID_BASE, UID_BASE + UID_COUNT)  # dropped from root to a sandbox uid of its own


def test_a_worker_and_the_code_it_runs_stay_on_one_core(graded):
    """Each local worker is pinned to a core of its own (grader.executors.local.pin_to_core), and the
    student's code, forked from the worker's template, inherits that core."""
    out, _ = graded
    output = json.loads((out / "results" / "mallory.json").read_text())["output"]
    cores = [int(c) for c in output.split("CORES")[1].split()[0].split(",")]
    assert len(cores) == 1 and cores[0] in os.sched_getaffinity(0)


def test_outputs_csv_gradescope_reports_and_overview(graded):
    out, _ = graded
    with open(out / "grades.csv", newline="") as fh:
        table = list(csv.DictReader(fh))
    by_student = {r["student"]: r for r in table}
    assert by_student["alice"]["score"] == "24" and by_student["alice"]["test_mha_parity[B2_T9_d48_h6_causal]"] == "0.5"
    assert by_student["gus"]["status"] == "refused" and "zip bomb" in by_student["gus"]["error"]
    gs = json.loads((out / "gradescope" / "alice" / "results.json").read_text())
    assert gs["score"] == 24 and len(gs["tests"]) == 39
    visibility = {t["name"].split("[test_")[1].split("]")[0].split("[")[0]: t["visibility"] for t in gs["tests"]}
    assert visibility["mha_shape"] == "visible" and visibility["mha_parity"] == "after_published"
    assert sum(t["max_score"] for t in gs["tests"]) == 24
    index = (out / "index.html").read_text()
    for student in ("alice", "bob", "carol", "mallory"):
        assert f'href="reports/{student}.html"' in index and (out / "reports" / f"{student}.html").is_file()
    assert index.count("data:image/png;base64,") == 2  # histogram and pass rates, embedded


def test_existing_gradebook_needs_resume(graded, tmp_path):
    out, _ = graded
    from click import ClickException

    with pytest.raises(ClickException, match="--resume"):
        batch.run("exercise3", tmp_path, out)


def _rows(db: Path) -> dict:
    con = sqlite3.connect(db)
    try:
        return {s: (st, sc, mx) for s, st, sc, mx in con.execute("SELECT student, status, score, max_score FROM grades")}
    finally:
        con.close()


def test_killed_batch_resumes_to_the_same_gradebook(tmp_path):
    subs = tmp_path / "subs"
    for i in range(6):
        _folder(subs, f"s{i}", SOLUTION if i % 2 == 0 else SKELETON)
    cmd = [sys.executable, "-m", "grader", "batch", "exercise3", str(subs), "--jobs", "1", "--seed", "5"]
    # Uninterrupted run.
    subprocess.run(cmd + ["--out", str(tmp_path / "full")], check=True, capture_output=True, timeout=300)
    # Interrupted run: SIGKILL the whole process group once two grades are in.
    killed = tmp_path / "killed"
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    env = dict(os.environ, TMPDIR=str(scratch))
    proc = subprocess.Popen(cmd + ["--out", str(killed)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True, env=env)
    deadline = time.monotonic() + 240
    while time.monotonic() < deadline:
        with contextlib.suppress(sqlite3.OperationalError):  # the file exists before its table
            if (killed / "gradebook.sqlite").exists() and len(_rows(killed / "gradebook.sqlite")) >= 2:
                break
        time.sleep(0.05)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    partial = _rows(killed / "gradebook.sqlite")
    assert 2 <= len(partial) < 6
    assert list(scratch.glob("grader-worker-*"))  # SIGKILL leaves the worker's folder behind ...
    resumed = subprocess.run(cmd + ["--out", str(killed), "--resume"], check=True, capture_output=True,
                             text=True, timeout=300, env=env)
    assert list(scratch.glob("grader-worker-*")) == []  # ... and the next batch removes it
    assert f"{len(partial)} already graded, {6 - len(partial)} to grade" in resumed.stdout
    full = _rows(tmp_path / "full" / "gradebook.sqlite")
    assert _rows(killed / "gradebook.sqlite") == full
    assert {s: v[1] for s, v in full.items()} == {
        "s0": 24, "s1": 0, "s2": 24, "s3": 0, "s4": 24, "s5": 0}


def _processes_with_env(key: str, value: str) -> list[int]:
    """Pids of this machine's processes whose environment has ``key=value`` (read from /proc)."""
    found = []
    for environ in Path("/proc").glob("[0-9]*/environ"):
        try:
            if f"{key}={value}".encode() in environ.read_bytes().split(b"\0"):
                found.append(int(environ.parent.name))
        except OSError:
            continue
    return found


def test_a_terminated_batch_leaves_no_worker_and_no_temp_folder(tmp_path):
    """SIGTERM to the batch process alone (as `timeout` or a scheduler sends it): its workers would
    block forever on the pool's pipes; they must notice, stop the student's code and clean up."""
    subs, scratch = tmp_path / "subs", tmp_path / "tmp"
    scratch.mkdir()
    for i in range(8):
        _folder(subs, f"s{i}", SOLUTION)
    out = tmp_path / "out"
    proc = subprocess.Popen([sys.executable, "-m", "grader", "batch", "exercise3", str(subs), "--out", str(out)],
                            env=dict(os.environ, TMPDIR=str(scratch)), stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 240
    while time.monotonic() < deadline:  # until the first grade is in
        with contextlib.suppress(sqlite3.OperationalError):  # the file exists before its table
            if (out / "gradebook.sqlite").exists() and _rows(out / "gradebook.sqlite"):
                break
        time.sleep(0.05)
    proc.terminate()
    proc.wait()
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline and _processes_with_env("TMPDIR", str(scratch)):
        time.sleep(0.2)
    assert _processes_with_env("TMPDIR", str(scratch)) == []
    assert sorted(p.name for p in scratch.iterdir() if not p.name.startswith("grader-matplotlib")) == []


def test_overrides_merge_into_gradebook_csv_and_report(tmp_path):
    subs, out = tmp_path / "subs", tmp_path / "out"
    _folder(subs, "bob", SKELETON)
    batch.run("exercise3", subs, out, jobs=1, seed=2)
    decisions = tmp_path / "overrides.csv"
    decisions.write_text("student,check,points,comment\n"
                         "bob,test_softmax_small,1,\"softmax idea right on paper, code not handed in\"\n")
    batch.run("exercise3", subs, out, jobs=1, resume=True, overrides=decisions)
    assert _rows(out / "gradebook.sqlite")["bob"] == ("graded", 1.0, 24.0)
    with open(out / "grades.csv", newline="") as fh:
        row = next(csv.DictReader(fh))
    assert (row["score"], row["test_softmax_small"]) == ("1", "1")
    assert "softmax idea right on paper" in (out / "reports" / "bob.html").read_text()


def test_duplicate_and_unsafe_ids_are_refused_not_overwritten(tmp_path):
    from grader.lms import discover

    subs = tmp_path / "subs"
    _folder(subs, "bob")
    with zipfile.ZipFile(subs / "Bob.zip", "w") as z:
        z.write(SKELETON, "attention.py")
    _folder(subs, "x" * 120)
    _folder(subs, "ana")
    found = {s.student: s.problem for s in discover(subs).submissions}
    assert found["ana"] == ""
    assert "Bob.zip and bob/ have the same student id" in found["Bob"] and "bob" not in found
    assert "1 to 100 printable characters" in found["x" * 120]


def test_damaged_zip_is_refused_with_a_message(tmp_path):
    from grader.lms.unpack import RefusedSubmission, safe_extract

    good = tmp_path / "good.zip"
    with zipfile.ZipFile(good, "w", compression=zipfile.ZIP_DEFLATED) as z:
        z.writestr("attention.py", bytes(range(256)) * 4 + "".join(f"x{i} = {i * i}\n" for i in range(500)).encode())
    data = bytearray(good.read_bytes())
    data[200:240] = b"\xff" * 40  # inside the compressed stream of the only member (the header is ~42 bytes)
    bad = tmp_path / "bad.zip"
    bad.write_bytes(bytes(data))
    with pytest.raises(RefusedSubmission, match="damaged, encrypted or uses an unsupported compression"):
        safe_extract(bad, tmp_path / "out")


def test_csv_cells_cannot_start_a_formula():
    from grader.gradebook import _cell

    assert [_cell(t) for t in ("=HYPERLINK(1)", "+1", "-2", "@x", "ada")] == [
        "'=HYPERLINK(1)", "'+1", "'-2", "'@x", "ada"]


def test_scratch_folders_are_judged_by_their_lock_not_a_pid(tmp_path, monkeypatch):
    """A worker's scratch folder is removed only once no process holds its lock: a live worker in
    another PID namespace (whose pid means nothing here) keeps its folder; a dead one's goes."""
    import tempfile

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    live, dead = tmp_path / "grader-worker-live", tmp_path / "grader-worker-dead"
    for folder in (live, dead):
        folder.mkdir()
        (folder / scratch.LOCK).touch()
        (folder / "copy.py").write_text("x = 1\n")
    hold = ("import fcntl, os, sys, time\n"
            f"fd = os.open({str(live / scratch.LOCK)!r}, os.O_RDWR)\n"
            "fcntl.flock(fd, fcntl.LOCK_EX)\nprint('locked', flush=True)\ntime.sleep(60)\n")
    other_namespace = (["unshare", "--pid", "--fork", "--kill-child"] if shutil.which("unshare") and os.getuid() == 0
                       else [])
    holder = subprocess.Popen([*other_namespace, sys.executable, "-c", hold], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "locked"
        batch._remove_stale_scratch()
        assert live.is_dir() and (live / "copy.py").is_file()
        assert not dead.exists()
    finally:
        holder.kill()
        holder.wait()
    deadline = time.monotonic() + 5  # the holder (in its own PID namespace) is being killed
    while live.exists() and time.monotonic() < deadline:
        batch._remove_stale_scratch()
        time.sleep(0.05)
    assert not live.exists()


def test_an_output_that_cannot_be_written_is_that_students_grader_error(tmp_path):
    """A folder where alice's report goes (a full disk would do as well): alice is a grader error,
    bob is graded, the batch ends normally with its CSV."""
    subs, out = tmp_path / "subs", tmp_path / "out"
    _folder(subs, "alice")
    _folder(subs, "bob")
    (out / "reports" / "alice.html").mkdir(parents=True)
    batch.run("exercise3", subs, out, jobs=1, seed=2)
    rows = _rows(out / "gradebook.sqlite")
    assert (rows["alice"][0], rows["bob"][:2]) == ("grader_error", ("graded", 24))
    con = sqlite3.connect(out / "gradebook.sqlite")
    (error,), = con.execute("SELECT error FROM grades WHERE student = 'alice'")
    con.close()
    assert error.startswith("could not write the outputs: [Errno 21] Is a directory")
    assert (out / "grades.csv").read_text().splitlines()[1].startswith("alice,,")
