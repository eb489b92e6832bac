"""Grading where the sandbox's facilities are missing, simulated in a fresh process: a sitecustomize.py
takes them away before the grader is imported (macOS has no bubblewrap and no AF_UNIX SOCK_SEQPACKET;
Windows has no os.fork, socket.send_fds, fcntl, resource or os.killpg). The grading must still work,
or end with one clear line and exit status 2: never a traceback."""
import json
import os
import subprocess
import sys
import textwrap

import pytest

from conftest import ROOT

SOLUTION = ROOT / "solutions" / "exercise3"

#: What each simulated platform takes away (run as sitecustomize.py, before anything else is imported).
NO_BUBBLEWRAP = """
    import shutil
    _which = shutil.which
    shutil.which = lambda name, *a, **k: None if name == "bwrap" else _which(name, *a, **k)
"""
NO_SEQPACKET = """
    import os, socket
    _pair = socket.socketpair
    def socketpair(family=socket.AF_UNIX, type=socket.SOCK_STREAM, proto=0):
        if type == socket.SOCK_SEQPACKET:  # as macOS answers (EPROTONOSUPPORT)
            raise OSError(43, "Protocol not supported")
        if type == socket.SOCK_DGRAM:
            open(os.environ["FALLBACK_SEEN"], "a").write("dgram\\n")
        return _pair(family, type, proto)
    socket.socketpair = socketpair
"""
NO_RESOURCE_NO_KILLPG = """
    import os, sys
    sys.modules["resource"] = None  # import resource raises ImportError
    del os.killpg
"""
WINDOWS = NO_RESOURCE_NO_KILLPG + """
    import socket
    sys.modules["fcntl"] = None
    del os.fork, socket.send_fds
"""


def run(tmp_path, simulated: str, *args: str) -> subprocess.CompletedProcess:
    """``python -m grader ARGS`` (or the ``grade`` shortcut when ARGS starts with "grade:") in a process
    where ``simulated`` ran first."""
    site = tmp_path / "site"
    site.mkdir(exist_ok=True)
    (site / "sitecustomize.py").write_text(textwrap.dedent(simulated))
    env = dict(os.environ, PYTHONPATH=str(site), TMPDIR=str(tmp_path), FALLBACK_SEEN=str(tmp_path / "seen"))
    env.pop("NO_COLOR", None)
    if args[0] == "grade:":
        command = [sys.executable, "-c", "from grader.cli import grade_shortcut; grade_shortcut()", *args[1:]]
    else:
        command = [sys.executable, "-m", "grader", *args]
    return subprocess.run(command, env=env, cwd=tmp_path, capture_output=True, text=True, timeout=120)


def grade_solution(tmp_path, simulated: str, submission=SOLUTION) -> tuple[subprocess.CompletedProcess, str]:
    done = run(tmp_path, simulated, "grade", "exercise3", "--submission", str(submission), "--seed", "1", "--json",
               "--report", str(tmp_path / "report.html"))
    assert "Traceback" not in done.stderr, done.stderr
    return done, (tmp_path / "report.html").read_text(encoding="utf-8")


def test_macos_no_bubblewrap_and_no_seqpacket_still_grades_in_a_plain_child(tmp_path):
    done, report = grade_solution(tmp_path, NO_BUBBLEWRAP + NO_SEQPACKET)
    assert done.returncode == 0, done.stdout + done.stderr
    summary = json.loads(done.stdout)
    assert summary["score"] == summary["max_score"] == 24
    assert (tmp_path / "seen").read_text() == "dgram\n"  # the template's control socket was a datagram one
    assert "plain child process with rlimits (bubblewrap not available)" in report
    assert done.stderr.startswith("Warning: not isolated: bubblewrap is not available")
    assert not list(tmp_path.glob("grader-*"))  # template and jobs ended, their folders removed


def test_without_resource_or_killpg_the_job_runs_without_rlimits_and_the_report_says_so(tmp_path):
    # The solution, printing the address-space limit it runs under (the template's own Python has resource).
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "attention.py").write_text(
        "import resource, sys\nprint('RLIMIT_AS', resource.getrlimit(resource.RLIMIT_AS)[0], file=sys.stderr)\n"
        + (SOLUTION / "attention.py").read_text())
    done, report = grade_solution(tmp_path, NO_BUBBLEWRAP + NO_RESOURCE_NO_KILLPG, tmp_path / "sub")
    assert done.returncode == 0, done.stdout + done.stderr
    import resource

    assert f"RLIMIT_AS {resource.getrlimit(resource.RLIMIT_AS)[0]}" in report  # the grader's own: none was set
    assert "plain child process without rlimits (neither bubblewrap nor the resource module is available)" in report
    assert not list(tmp_path.glob("grader-*"))


def test_the_rlimits_do_bind_where_resource_exists(tmp_path):
    """The control for the test above: the same submission with resource available runs under the
    exercise's memory limit (exercise.toml's memory_mb)."""
    import tomllib

    memory_mb = tomllib.loads((ROOT / "exercises" / "exercise3" / "exercise.toml").read_text())["limits"]["memory_mb"]
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "attention.py").write_text(
        "import resource, sys\nprint('RLIMIT_AS', resource.getrlimit(resource.RLIMIT_AS)[0], file=sys.stderr)\n"
        + (SOLUTION / "attention.py").read_text())
    _, report = grade_solution(tmp_path, NO_BUBBLEWRAP, tmp_path / "sub")
    assert f"RLIMIT_AS {memory_mb * 1024 * 1024}" in report


@pytest.mark.parametrize("args", [("grade:", "exercise3", str(SOLUTION)),
                                  ("grade", "exercise3", "--submission", str(SOLUTION)),
                                  ("batch", "exercise3", str(SOLUTION.parent), "--allow-unisolated")],
                         ids=["grade", "grader grade", "grader batch"])
def test_windows_no_fork_is_refused_in_one_line(tmp_path, args):
    done = run(tmp_path, NO_BUBBLEWRAP + WINDOWS, *args)
    assert done.returncode == 2, done.stdout + done.stderr
    assert done.stderr == ("Error: student code cannot be run here: this Python has no os.fork, socket.send_fds "
                           "(the sandbox forks a process per submission, as on Linux and macOS; Windows cannot). "
                           "On Windows use WSL, e.g. `wsl --install Ubuntu`, and run the grader inside it.\n")
    assert not (tmp_path / "reports").exists()


def test_without_dask_a_cluster_batch_is_refused_in_one_line(tmp_path):
    """The dask extra left out (a student's or a plain install): --scheduler says what to install."""
    done = run(tmp_path, 'import sys\nsys.modules["distributed"] = None\n', "batch", "exercise3",
               str(SOLUTION.parent), "--scheduler", "tcp://127.0.0.1:8786")
    assert done.returncode == 2, done.stdout + done.stderr
    assert done.stderr == ('Error: --scheduler needs Dask\'s distributed package: pip install -e ".[dask]" (or pip '
                           'install distributed), on this machine and on every worker.\n')
    assert not (tmp_path / "reports").exists()


def test_windows_the_commands_that_run_no_code_still_work(tmp_path):
    done = run(tmp_path, NO_BUBBLEWRAP + WINDOWS, "list")
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[2].startswith("exercise3  ")
    released = run(tmp_path, NO_BUBBLEWRAP + WINDOWS, "release", str(tmp_path / "bundle"), "--exercise", "exercise3")
    assert released.returncode == 0, released.stderr
    assert (tmp_path / "bundle" / "exercise3" / "attention.py").is_file()


def _processes_under(folder) -> list[str]:
    """Command lines of the running processes that name ``folder`` (the template runs forking.py from it)."""
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            cmdline = open(f"/proc/{pid}/cmdline", "rb").read().replace(b"\0", b" ").decode()
        except OSError:
            continue
        if str(folder) in cmdline and "forking.py" in cmdline:
            found.append(cmdline)
    return found


def test_macos_a_killed_judge_takes_its_template_and_job_along(tmp_path):
    """A datagram control socket never reads as closed: the template sees that its judge is gone by its
    parent changing, and ends the student's job (here an endless loop) and itself."""
    import signal
    import time

    site = tmp_path / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text(textwrap.dedent(NO_BUBBLEWRAP + NO_SEQPACKET))
    env = dict(os.environ, PYTHONPATH=str(site), TMPDIR=str(tmp_path), FALLBACK_SEEN=str(tmp_path / "seen"))
    judge = subprocess.Popen([sys.executable, "-m", "grader", "grade", "exercise3", "--submission",
                              str(ROOT / "tests" / "hostile" / "exercise3" / "infinite_loop"),
                              "--report", str(tmp_path / "r.html")], env=env, cwd=tmp_path,
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    while not list(tmp_path.glob("grader-template-*/jobs/*")) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _processes_under(tmp_path), "no template started"
    judge.send_signal(signal.SIGKILL)
    judge.wait(timeout=10)
    deadline = time.monotonic() + 5
    while _processes_under(tmp_path) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert _processes_under(tmp_path) == []
    assert (tmp_path / "seen").read_text() == "dgram\n"


def test_the_readme_set_up_installs_the_pinned_torch_from_the_cpu_index_as_ci_runs_it():
    import re
    import tomllib

    pins = [d for d in tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
            if d.startswith("torch")]
    assert len(pins) == 1 and re.fullmatch(r"torch==[\d.]+", pins[0])
    readme = (ROOT / "README.md").read_text()
    set_up = readme.split("## The two commands")[1].split("```")[1].strip()
    steps = [step.strip() for step in set_up.split("&&")]
    assert steps[1] == f".venv/bin/pip install --no-deps {pins[0]} --index-url https://download.pytorch.org/whl/cpu"
    assert steps[2] == '.venv/bin/pip install -e ".[dask,test]"'
    ci = (ROOT / ".ci" / "run").read_text().replace("\\\n", " ")
    ran = next(line for line in ci.splitlines() if line.startswith("python3 -m venv"))
    assert [" ".join(s.replace(" -q", "").split()) for s in ran.split("&&")] == steps
