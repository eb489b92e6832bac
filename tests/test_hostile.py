"""Hostile and broken submissions for exercise 3: each loses points with a clear message, none breaks
the grader, hangs it, or leaves a process behind.

The cases are folders ``tests/hostile/exercise3/CASE/`` in the corpus format of
:mod:`grader.corpus` (``attention.py`` + ``expected.toml``). One extra key is read here, not by
``corpus.py``: ``full_marks = true`` marks a *correct* solution wrapped in something hostile
(warnings on stderr, 100 MB of output, a BOM, shadowing ``numpy.py``, ...): it must get every point,
where :func:`grader.corpus.verify` would demand a lost point.

Every case is graded in this process (``grade3``) under bubblewrap, and then:

- no grader error, and ``corpus.verify`` finds nothing (or: full marks);
- the result survives JSON (the output may have held invalid UTF-8 or NUL bytes);
- no process is left: no new descendant of this process (the judge's long-lived template processes
  aside; their jobs count), and no process of a sandbox uid in this PID namespace;
- the judge's peak memory grows by less than 100 MB (a reply must be refused before it is buffered);
- case-specific facts the score cannot show (nothing written outside the sandbox's private folders,
  nothing read, no connection accepted, output capped once per submission, unencodable text made safe).

Further tests pin what no single case shows: concurrent sandboxes get distinct uids (a thread pool
next to a sandbox holding its process limit), a template that cannot end a job is replaced, a Python
under /tmp stays visible below a job's own /tmp, and the seccomp filter refuses keyrings, memfds and
user namespaces while threads, fork and exec work.

Without bubblewrap these cases are skipped: the fallback has no file-system or network isolation,
so several of them would (rightly) get through, and it runs student code as the grader's user.
"""
from __future__ import annotations

import json
import os
import socket
import time
import tomllib
from pathlib import Path

import numpy as np
import pytest

from conftest import ROOT
from grader import corpus
from grader.report import render_html
from grader.sandbox import bubblewrap_works
from grader.sandbox import Sandbox, SubmissionError, template

CASES = corpus.cases("exercise3", kind="hostile")
SANDBOX_UIDS = range(61000, 62000)  # grader.sandbox.template.claim_uid hands these out
#: Longer than any honest grading of one case (timeouts are 2 s per call in exercise 3); far shorter than the
#: 60 s a hanging grader would wait for setsid_grandchild's sleeping grandchildren.
MAX_SECONDS = 30.0
TIMES: dict[str, float] = {}

needs_bubblewrap = pytest.mark.skipif(not bubblewrap_works(), reason="hostile cases need bubblewrap")


def _expected(case: corpus.Case) -> dict:
    return tomllib.loads((case.folder / "expected.toml").read_text(encoding="utf-8"))


# ------------------------------------------------------------------------------ processes

def _processes() -> dict[int, tuple[int, int, int, str]]:
    """pid -> (parent pid, real uid, PID-namespace depth as seen from here, "name state start")."""
    table = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            status = Path("/proc", entry, "status").read_text()
            start = Path("/proc", entry, "stat").read_text().rsplit(")", 1)[1].split()[19]
        except (OSError, IndexError):  # it ended meanwhile
            continue
        fields = dict(line.split(":", 1) for line in status.splitlines() if ":" in line)
        table[int(entry)] = (int(fields["PPid"]), int(fields["Uid"].split()[0]),
                             len(fields.get("NSpid", entry).split()),
                             f"{fields['Name'].strip()} {fields['State'].strip()} started at tick {start}")
    return table


def _templates(table: dict) -> set[int]:
    """The judge's template processes (grader.sandbox.template), which live as long as the judge: the
    bwrap processes and the template itself; its children (the jobs) are not in this set."""
    keep = set()
    for t in template._templates.values():
        level = {t.proc.pid}
        for _ in range(3 if t.bubblewrap else 1):  # bwrap, bwrap's PID 1, the template
            keep |= level
            level = {pid for pid, row in table.items() if row[0] in level}
    return keep


def _suspects() -> dict[int, str]:
    """Processes a grading may have left: our descendants, and sandbox-uid processes in our PID namespace,
    except the long-lived template processes."""
    me = os.getpid()
    table = _processes()
    found = {}
    templates = _templates(table)
    for pid, (ppid, uid, depth, what) in table.items():
        if pid in templates:
            continue
        ancestors, p = set(), ppid
        while p > 1 and p in table and p not in ancestors:
            ancestors.add(p)
            p = table[p][0]
        if pid != me and (ppid == me or me in ancestors or (uid in SANDBOX_UIDS and depth == 1)):
            found[pid] = f"pid {pid} uid {uid}: {what}"
    return found


def _left_behind(before: dict[int, str], seconds: float = 3.0) -> list[str]:
    """Suspects that were not there ``before`` (other tests of this session may own children, e.g.
    multiprocessing's resource tracker), after waiting up to ``seconds`` for them to go."""
    deadline = time.monotonic() + seconds
    while True:
        new = sorted(what for pid, what in _suspects().items() if before.get(pid) != what)
        if not new or time.monotonic() > deadline:
            return new
        time.sleep(0.05)


# ------------------------------------------------------------------------------ case-specific facts

HOST_PORT = 47391  # the network case connects here (and to the abstract socket below)
ABSTRACT = b"\0grader-hostile-network-test"
FAKE_MARK = "written by the submission"  # in every file writes_fake_result writes
FAKE_NAMES = ["results.json", "report.json", "exercise3.json", "grades.csv", "exercise3.html"]


class _Listeners:
    """The host's end of the network case: a TCP port on 127.0.0.1 and an abstract unix socket."""

    def __init__(self):
        self.sockets = []
        for family, address in [(socket.AF_INET, ("127.0.0.1", HOST_PORT)), (socket.AF_UNIX, ABSTRACT)]:
            s = socket.socket(family, socket.SOCK_STREAM)
            try:
                s.bind(address)
            except OSError:  # busy: someone else's; the case cannot reach it from the sandbox either
                s.close()
                continue
            s.listen(8)
            s.setblocking(False)
            self.sockets.append(s)

    def accepted(self) -> list[str]:
        got = []
        for s in self.sockets:
            try:
                conn, peer = s.accept()
            except BlockingIOError:
                continue
            got.append(f"{s.getsockname()!r} accepted a connection from {peer!r}")
            conn.close()
        return got

    def close(self):
        for s in self.sockets:
            s.close()


def _fake_result_places(case_folder: Path) -> list[Path]:
    """Every host path writes_fake_result aims at (by absolute and by ../ paths)."""
    folders = [case_folder, ROOT, ROOT / "reports", ROOT / "reports" / "exercise3",
               ROOT / "reports" / "exercise3" / "results",
               ROOT / "reports" / "exercise3" / "gradescope" / "writes_fake_result",
               Path("/tmp"), Path("/var/tmp"), Path("/dev/shm"), Path("/autograder/results"),
               Path("/autograder/submission")]
    for parent in list(case_folder.parents)[:6]:
        folders += [parent, parent / "reports", parent / "reports" / "exercise3"]
    return [folder / name for folder in folders for name in FAKE_NAMES]


def _fake_results_found(case_folder: Path) -> list[str]:
    found = []
    places = _fake_result_places(case_folder) + sorted((ROOT / "reports").rglob("*"))
    for path in places:
        try:
            if path.is_file() and FAKE_MARK in path.read_text(errors="replace"):
                found.append(str(path))
        except OSError:
            pass
    return found


def _check_case_facts(name: str, result, folder: Path, listeners: _Listeners | None) -> list[str]:
    """What the score cannot show, per case. Returns the problems found."""
    out = result.output
    problems = []
    if name == "prints_100mb":
        if "more bytes of output not shown" not in out or len(out) > 2 * 64 * 1024:
            problems.append(f"output not capped ({len(out):,} characters kept)")
    elif name == "non_utf8_output":
        if "\ufffd" not in out or "\\x00" not in out or "\x00" in out:
            problems.append(f"invalid bytes not replaced/escaped in the output: {out[:200]!r}")
    elif name == "warning_on_stderr":
        if "RuntimeWarning" not in out:
            problems.append("the warning is not in the captured output")
    elif name == "writes_fake_result":
        problems += [f"fake result on the host: {p}" for p in _fake_results_found(folder)]
        wrote = [line.split(" ", 1)[1] for line in out.splitlines() if line.startswith("WROTE ")]
        private = ("/tmp/", "/sandbox/submission/")  # the sandbox's own /tmp and its own copy of the submission
        problems += [f"wrote {p} (outside the sandbox's private folders)" for p in wrote if not p.startswith(private)]
    elif name == "reads_hidden_tests":
        if "FOUND" in out or "found nothing" not in out:
            problems.append(f"the submission read course files: {out[:500]!r}")
    elif name == "network":
        problems += listeners.accepted() if listeners else []
        if " connected" in out:
            problems.append(f"a connection got through: {out[:500]!r}")
    elif name == "numpy_shadow":
        if "SHADOW" in out:
            problems.append(f"a shadowing file was imported: {out[:300]!r}")
    elif name == "deep_recursion":
        if "Segmentation fault" not in out:
            problems.append("no faulthandler traceback in the output")
    elif name == "prints_and_crashes":  # one cap for all the restarted processes of a submission
        if "more bytes of output not shown" not in out or len(out) > 64 * 1024 + 2_000:
            problems.append(f"output not capped once per submission ({len(out):,} characters kept)")
    elif name == "surrogate_message":
        if "raised ValueError: attention failed on \ufffd\ufffd input" not in json.dumps(result.to_dict(), ensure_ascii=False):
            problems.append("the lone surrogates did not arrive as U+FFFD")
        render_html(result).encode("utf-8")  # the writer that once crashed
    return problems


def _peak_rss_mb() -> float:
    """This process's peak resident memory so far (VmHWM), MB."""
    status = Path("/proc/self/status").read_text()
    return int(status.split("VmHWM:")[1].split()[0]) / 1024


def _listing(folder: Path) -> dict[str, int]:
    return {str(p.relative_to(folder)): p.stat().st_mtime_ns for p in folder.rglob("*")}


# ------------------------------------------------------------------------------ tests

def test_the_hostile_corpus_is_complete():
    assert {c.name for c in CASES} == {
        "syntax_error", "missing_function", "wrong_signature", "returns_list", "wrong_shape", "returns_nan",
        "infinite_loop", "swallowing_loop", "memory_bomb", "fork_bomb", "os_exit", "prints_100mb",
        "non_utf8_output", "deep_recursion", "recursion_error", "warning_on_stderr", "patches_numpy",
        "writes_fake_result", "import_time_loop", "import_time_exit", "reads_hidden_tests", "network",
        "bom_crlf", "latin1_coding", "numpy_shadow", "setsid_grandchild",
        # found while writing these: a worker that forges replies, stops itself, returns 96 MiB
        "forges_replies", "stops_itself", "returns_huge",
        # found in review: removes the import block to reach torch by a computed name
        "pops_import_block",
        # issue 13: text no encoder takes, valid writes next to itself, a thread pool, a forged 200 MiB
        # frame, output through many restarts
        "surrogate_message", "writes_next_to_itself", "thread_pool", "forges_huge_frame", "prints_and_crashes",
        # found in review of the template process: jams the template through an inherited epoll fd; passes a
        # note to the next job of its uid through the kernel's user keyring
        "jams_template", "keyring_note",
        # found in a second review: locks its user keyring against clearing; holds memory in memfds
        "keyring_locked_note", "memfd_memory",
    }
    for case in CASES:
        full = _expected(case).get("full_marks", False)
        assert full or case.message, f"{case.name}: a failing case must name the message it expects"
        assert not (full and case.fails), f"{case.name}: full marks and failing checks contradict"


@needs_bubblewrap
@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_hostile_submission(case, grade3):
    full_marks = _expected(case).get("full_marks", False)
    processes_before = _suspects()
    listeners = _Listeners() if case.name == "network" else None
    before = _listing(case.folder)
    if not TIMES:  # the first grading of the session imports torch and more: not counted below
        grade3(ROOT / "solutions" / "exercise3")
    peak_before = _peak_rss_mb()
    try:
        started = time.monotonic()
        result = grade3(case.folder)
        TIMES[case.name] = elapsed = time.monotonic() - started
        grew = _peak_rss_mb() - peak_before  # a reply must be refused before it is buffered
        memory = [f"the judge's peak memory grew by {grew:.0f} MB"] if grew > 100 else []
        facts = memory + _check_case_facts(case.name, result, case.folder, listeners)
        changed = set(before.items()) ^ set(_listing(case.folder).items())
        facts += [f"the submission folder changed: {p}" for p in sorted(changed)]
    finally:
        if listeners:
            listeners.close()
    left = _left_behind(processes_before)

    assert [c.name for c in result.grader_errors] == []
    if full_marks:
        not_passed = [f"{c.name} {c.status}: {c.feedback}" for c in result.checks if c.status != "passed"]
        assert not_passed == []
        assert result.score == result.max_score > 0
        missing = [n for n in case.passes if not any(c.name.split("[")[0] == n for c in result.checks)]
        assert missing == []
    else:
        assert corpus.verify(case, result) == []
    json.loads(result.to_json())  # invalid UTF-8, NUL bytes: still a valid result document
    assert facts == []
    assert left == [], "processes left behind"
    assert elapsed < MAX_SECONDS, f"grading took {elapsed:.1f} s"


@pytest.fixture(scope="module", autouse=True)
def _print_times(request):
    """With -v, one line per case: its wall time (the slow ones are timeouts and mistake diagnosis)."""
    yield
    reporter = request.config.pluginmanager.get_plugin("terminalreporter")
    capture = request.config.pluginmanager.get_plugin("capturemanager")
    if TIMES and reporter is not None and capture is not None and request.config.option.verbose > 0:
        with capture.global_and_fixture_disabled():
            reporter.write_line(f"\nhostile cases: {sum(TIMES.values()):.1f} s in all")
            for name, seconds in sorted(TIMES.items(), key=lambda kv: -kv[1]):
                reporter.write_line(f"  {seconds:6.2f} s  {name}")


def test_worker_that_closes_its_pipes_is_stopped_without_bubblewrap(exercise3):
    """Without bubblewrap nothing else holds the pipes: the judge sees EOF while the worker lives on.

    It must neither wait for the process forever nor crash (``Popen.wait`` timing out), and must kill it.
    """
    folder = ROOT / "tests" / "hostile" / "fallback" / "closes_protocol"
    processes_before = _suspects()
    started = time.monotonic()
    rng = np.random.default_rng(0)
    args = [rng.standard_normal(shape) for shape in [(1, 3, 4), (12, 4), (12,), (4, 4), (4,)]]
    with Sandbox(exercise3, folder, use_bubblewrap=False) as sandbox:
        with pytest.raises(SubmissionError) as info:
            sandbox.call("multi_head_attention", *args, n_heads=2)
        assert sandbox.proc is None
    assert info.value.kind == "crash"
    assert "closed the sandbox's connection to the grader" in info.value.message
    assert time.monotonic() - started < 5.0
    assert _left_behind(processes_before) == []


def test_worker_that_cannot_start_is_a_grader_error_and_not_retried(exercise3, tmp_path, monkeypatch):
    """Before any student code runs, a failure is the grader's (no points lost for it), reported once."""
    (tmp_path / "forking.py").write_text("import sys\nprint('no numpy here', file=sys.stderr)\nsys.exit(3)\n")
    (tmp_path / "worker.py").write_text("")
    (tmp_path / "wire.py").write_text("")
    template.close_templates()
    monkeypatch.setattr(template, "HERE", tmp_path)
    try:
        with Sandbox(exercise3, ROOT / "solutions" / "exercise3", use_bubblewrap=False) as sandbox:
            for _ in range(2):
                with pytest.raises(RuntimeError, match="did not start: .*template process did not start: no numpy here"):
                    sandbox.has_function("softmax")
            assert sandbox.proc is None
    finally:
        template.close_templates()  # the next test starts a working one


def test_error_of_a_very_deep_recursion_is_short():
    """A RecursionError deep in the student's code must not cost seconds to report (under a raised
    recursion limit, a million frames took longer than the call's time limit): only the student's
    last frames are formatted."""
    import sys

    from grader.sandbox.worker import TRACEBACK_FRAMES, _error

    def dive(n):
        if n == 0:
            raise RecursionError("maximum recursion depth exceeded")
        return dive(n - 1)

    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(60_000)
    try:
        dive(50_000)
    except RecursionError as exc:
        err = _error(exc, submission_dir=__file__)  # "the student's code" is this file
    finally:
        sys.setrecursionlimit(limit)
    assert err["type"] == "RecursionError" and "RecursionError" in err["bases"]
    assert 1 <= err["traceback"].count("in dive") <= TRACEBACK_FRAMES
    # 50,001 frames of dive and the frame of this test: all but the last few are only counted
    assert f"[... {50_002 - TRACEBACK_FRAMES:,} earlier frames of your code not shown]" in err["traceback"]


@needs_bubblewrap
def test_named_pipes_in_the_submission_folder_are_skipped(grade3, tmp_path):
    """A FIFO (git cannot store one, so it is made here) must neither hang nor break the grading."""
    import shutil

    shutil.copy(ROOT / "solutions" / "exercise3" / "attention.py", tmp_path / "attention.py")
    os.mkfifo(tmp_path / "notes.py")  # read by nothing: open() would block forever
    os.mkfifo(tmp_path / "data.fifo")
    started = time.monotonic()
    result = grade3(tmp_path)
    assert [f"{c.name}: {c.feedback}" for c in result.checks if c.status != "passed"] == []
    assert result.score == result.max_score
    assert time.monotonic() - started < MAX_SECONDS


def test_a_closed_sandbox_never_starts_a_worker_again(exercise3):
    """After Ctrl-C the judge closes the sandbox while a check may still be running in the session's
    thread: that check's next call must fail at once, not start a fresh worker on a new temp copy."""
    with Sandbox(exercise3, ROOT / "solutions" / "exercise3", use_bubblewrap=False) as sandbox:
        assert sandbox.has_function("softmax")
        sandbox.close()
        with pytest.raises(SubmissionError) as info:
            sandbox.call("softmax", np.zeros(3))
        assert info.value.kind == "stopped" and "stopped" in info.value.message
        assert sandbox.proc is None


@needs_bubblewrap
def test_concurrent_sandboxes_have_a_uid_and_a_process_limit_each(exercise3, grade3, tmp_path):
    """RLIMIT_NPROC counts per uid: while one sandbox holds all but one of its processes (15 sleeping
    threads), a correct submission that computes in a pool of 8 threads still gets full marks, because
    every running sandbox has a uid of its own; closing a sandbox frees its uid for the next."""
    hog = tmp_path / "hog"
    hog.mkdir()
    (hog / "attention.py").write_text(
        "import threading, time\n"
        "def hold(n):\n"
        "    for _ in range(n):\n"
        "        threading.Thread(target=time.sleep, args=(60,), daemon=True).start()\n"
        "    return threading.active_count()\n")
    with Sandbox(exercise3, hog) as holder:
        assert holder.call("hold", exercise3.limits.processes - 1) == exercise3.limits.processes
        result = grade3(ROOT / "tests" / "hostile" / "exercise3" / "thread_pool")
        with Sandbox(exercise3, hog) as other:
            other.has_function("hold")
            assert other.uid != holder.uid and {other.uid, holder.uid} <= set(SANDBOX_UIDS)
    assert [f"{c.name}: {c.feedback}" for c in result.checks if c.status != "passed"] == []
    import fcntl

    fd = os.open(template.UID_LOCKS / f"{holder.uid}.lock", os.O_RDWR)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # free again: closing the sandbox released it
    finally:
        os.close(fd)


@needs_bubblewrap
def test_a_template_that_cannot_end_a_job_is_replaced_and_nothing_is_left(exercise3):
    """Should the template ever fail to end a job (here it is frozen with SIGSTOP), closing the sandbox
    ends the whole template, and every process of the job with it; the next sandbox gets a new template."""
    import signal

    with Sandbox(exercise3, ROOT / "solutions" / "exercise3") as sandbox:
        assert sandbox.has_function("softmax")
        frozen = sandbox.proc.template
        table = _processes()
        inside = {pid for pid, row in table.items() if row[0] == frozen.proc.pid}  # bwrap's PID 1
        python = [pid for pid, row in table.items() if row[0] in inside]  # the template itself
        assert len(python) == 1
        job_uid = sandbox.uid
        os.kill(python[0], signal.SIGSTOP)
    assert not frozen.alive and frozen.proc.poll() is not None
    assert not [pid for pid, row in _processes().items() if row[1] == job_uid]
    with Sandbox(exercise3, ROOT / "solutions" / "exercise3") as sandbox:
        assert sandbox.has_function("softmax") and sandbox.proc.template is not frozen


@needs_bubblewrap
def test_a_python_installed_under_tmp_stays_visible_below_the_jobs_own_tmp(exercise3, tmp_path, monkeypatch):
    """A venv in /tmp (a clone there, a student bundle there) is shown to the template under /tmp; each job
    mounts its own /tmp over it, and must show those folders again, read-only, or Python cannot import
    what lives there (exercise 4's torch did not load)."""
    from grader.sandbox import isolation

    lib = tmp_path / "fake-site-packages"  # under /tmp, as a venv's site-packages would be
    lib.mkdir()
    (lib / "marker.txt").write_text("here\n")
    roots = (*isolation.python_roots(), str(lib))
    monkeypatch.setattr(isolation, "python_roots", lambda: roots)
    monkeypatch.setattr(template, "python_roots", lambda: roots)
    probe = tmp_path / "probe"
    probe.mkdir()
    (probe / "attention.py").write_text(
        "import os\n"
        "def look(path):\n"
        "    with open(os.path.join(path, 'marker.txt')) as f:\n"
        "        seen = f.read().strip()\n"
        "    try:\n"
        "        open(os.path.join(path, 'new.txt'), 'w').close()\n"
        "        writable = True\n"
        "    except OSError:\n"
        "        writable = False\n"
        "    open('/tmp/mine.txt', 'w').close()\n"
        "    return [seen, writable, sorted(os.listdir('/tmp'))]\n")
    template.close_templates()
    try:
        with Sandbox(exercise3, probe) as sandbox:
            seen, writable, listing = sandbox.call("look", str(lib))
    finally:
        template.close_templates()
    assert (seen, writable) == ("here", False)
    assert "mine.txt" in listing and not (lib / "new.txt").exists()


@needs_bubblewrap
def test_the_job_refuses_keyrings_memfds_and_user_namespaces_and_keeps_threads_fork_and_exec(exercise3, tmp_path):
    """The seccomp filter of grader.sandbox.worker: what escapes the job's namespaces or limits fails
    with EPERM (an ordinary OSError for the student); what NumPy code and the exercises use still works."""
    (tmp_path / "attention.py").write_text(
        "import ctypes, os, subprocess, threading\n"
        "def probe():\n"
        "    libc = ctypes.CDLL(None, use_errno=True)\n"
        "    def errno_of(result):\n"
        "        return ctypes.get_errno() if result == -1 else 0\n"
        "    out = {'keyctl': errno_of(libc.syscall(250 if os.uname().machine == 'x86_64' else 219, 0, 0)),\n"
        "           'user_namespace': errno_of(libc.unshare(0x10000000))}\n"
        "    try:\n"
        "        os.memfd_create('x')\n"
        "        out['memfd'] = 0\n"
        "    except OSError as exc:\n"
        "        out['memfd'] = exc.errno\n"
        "    seen = []\n"
        "    worker = threading.Thread(target=seen.append, args=(1,))\n"
        "    worker.start()\n"
        "    worker.join()\n"
        "    pid = os.fork()\n"
        "    if pid == 0:\n"
        "        os._exit(7)\n"
        "    out['thread'] = seen\n"
        "    out['fork'] = os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])\n"
        "    out['exec'] = subprocess.run(['/bin/echo', 'hi'], capture_output=True, text=True).stdout\n"
        "    return out\n")
    import errno

    with Sandbox(exercise3, tmp_path) as sandbox:
        out = sandbox.call("probe")
    assert out == {"keyctl": errno.EPERM, "user_namespace": errno.EPERM, "memfd": errno.EPERM,
                   "thread": [1], "fork": 7, "exec": "hi\n"}
