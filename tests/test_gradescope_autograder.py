"""The Gradescope autograder zip (``grader gradescope build``), run the way Gradescope runs it: unpacked
into ``source/`` of a scratch root laid out like ``/autograder`` (source/, submission/, results/), then
``run_autograder`` there, with the root moved by ``AUTOGRADER_ROOT`` and this venv's Python given by
``GRADER_PYTHON`` (setup.sh, which installs Python, torch and the grader, needs the network: it runs
against stand-ins of apt-get and python3 up to where it must stop). Also what the zip leaves out, and
Gradescope's container as the sandbox meets it: root, bubblewrap unable to work (a failing bwrap stands
in), so the student's code runs as a plain child process of a uid of its own, first in line for the
OOM killer, with the exercise's forbidden packages withheld."""
import json
import os
import shutil
import stat
import subprocess
import sys
import sysconfig
import tempfile
import time
import zipfile
from pathlib import Path

import pytest
from click.testing import CliRunner

from conftest import ROOT
from grader.cli import main
from grader.sandbox import bubblewrap_works

#: Outside Gradescope's /autograder, run_autograder's --isolation container grades only with bubblewrap.
needs_bubblewrap = pytest.mark.skipif(not bubblewrap_works(), reason="needs bubblewrap outside Gradescope")


@pytest.fixture(scope="module")
def bundle(tmp_path_factory):
    out = tmp_path_factory.mktemp("bundle") / "autograder-exercise3.zip"
    run = CliRunner().invoke(main, ["gradescope", "build", str(out), "exercise3"])
    assert run.exit_code == 0, run.output
    assert f"Gradescope autograder for exercise3 written to {out}" in run.output
    return out


def _run_autograder(bundle, tmp_path, submission):
    """Unpack ``bundle`` into a fresh /autograder-like root, put ``submission``'s files in submission/, run it."""
    root = tmp_path / "autograder"
    for sub in ("source", "submission", "results"):
        (root / sub).mkdir(parents=True)
    with zipfile.ZipFile(bundle) as zf:
        zf.extractall(root / "source")
        for info in zf.infolist():  # zipfile does not restore permissions
            os.chmod(root / "source" / info.filename, (info.external_attr >> 16) & 0o777)
    shutil.copytree(submission, root / "submission", dirs_exist_ok=True)
    (root / "submission_metadata.json").write_text('{"users": [{"email": "zoe@uni.example"}]}')
    os.chmod(root / "results", 0o777)
    env = {k: v for k, v in os.environ.items() if k not in ("GRADER_COURSE_ROOT", "PYTHONPATH")}
    env.update(AUTOGRADER_ROOT=str(root), GRADER_PYTHON=sys.executable)
    done = subprocess.run([str(root / "source" / "run_autograder")], cwd=root, env=env, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    # What an unprivileged sandbox user must not reach: hidden tests and references, metadata, the results.
    modes = {name: stat.S_IMODE(os.stat(root / name).st_mode)
             for name in ("source", "submission_metadata.json", "results", ".")}
    assert modes == {"source": 0o700, "submission_metadata.json": 0o600, "results": 0o755, ".": 0o755}
    return json.loads((root / "results" / "results.json").read_text()), done


def test_the_zip_holds_the_two_scripts_at_its_root_and_nothing_it_must_not(bundle):
    with zipfile.ZipFile(bundle) as zf:
        names = zf.namelist()
        modes = {i.filename: (i.external_attr >> 16) for i in zf.infolist()}
        setup = zf.read("setup.sh").decode()
        run = zf.read("run_autograder").decode()
    assert {"setup.sh", "run_autograder"} <= set(names)
    assert modes["run_autograder"] & stat.S_IXUSR and modes["setup.sh"] & stat.S_IXUSR
    assert "course/exercises/exercise3/tests/hidden/test_attention_hidden.py" in names
    assert "course/grader/cli.py" in names and "course/pyproject.toml" in names
    assert not [n for n in names if n.startswith("course/exercises/") and not n.startswith("course/exercises/exercise3/")]
    assert not [n for n in names if "solutions/" in n or n.startswith("course/tests/") or "__pycache__" in n]
    assert 'pip" install -q "torch==2.13.0" --index-url https://download.pytorch.org/whl/cpu' in setup
    assert "apt-get install" in setup and "python3" in setup and "./course" in setup
    assert ("withhold_packages as w\nprint(\"withheld from the sandbox:\", *w(tuple(sys.argv[1:])) or [\"nothing\"])' "
            "torch tensorflow jax jaxlib keras flax mxnet paddle sklearn cupy theano mlx\n") in setup
    assert "grade exercise3 --submission \"$ROOT/submission\" --gradescope \"$RESULTS\"" in run
    assert "--hidden-visibility after_published --isolation container" in run
    for script in ("setup.sh", "run_autograder"):
        checked = subprocess.run(["bash", "-n"], input=setup if script == "setup.sh" else run, text=True,
                                 capture_output=True)
        assert checked.returncode == 0, checked.stderr


@needs_bubblewrap
def test_the_reference_solution_gets_24_of_24_and_the_skeleton_0(bundle, tmp_path):
    data, done = _run_autograder(bundle, tmp_path / "solution", ROOT / "solutions" / "exercise3")
    assert data["score"] == 24
    assert set(data) == {"score", "execution_time", "output", "output_format", "stdout_visibility", "tests"}
    assert data["stdout_visibility"] == "hidden"  # the grader's terminal summary names hidden checks
    assert 0 < data["execution_time"] < 120
    tests = data["tests"]
    assert len(tests) == 39 and sum(t["max_score"] for t in tests) == 24
    assert all(t["status"] == "passed" and t["score"] == t["max_score"] for t in tests)
    visibility = {t["extra_data"]["check"].split("[")[0]: t["visibility"] for t in tests}
    assert visibility["test_mha_shape"] == "visible" and visibility["test_mha_parity"] == "after_published"
    hidden = [t for t in tests if t["visibility"] == "after_published"]
    assert sum(t["max_score"] for t in hidden) == 14.5
    assert {tuple(t["tags"]) for t in tests} == {("attention.py",), ("softmax",), ("layer_norm",), ("gelu",),
                                                 ("multi_head_attention",), ("transformer_block",)}
    assert data["output"].startswith("Public checks: 9.5 / 9.5 points. The 24 hidden checks (14.5 points) and your "
                                     "total are shown once the grades are published.")
    # Not Gradescope (AUTOGRADER_ROOT proves nothing): bubblewrap isolates the code as everywhere else.
    assert "Your code ran in a sandbox: a separate process with no network" in data["output"]
    assert "bubblewrap" not in data["output"] and "uid" not in data["output"]
    assert "grader exit status: 0" in done.stdout

    data, _ = _run_autograder(bundle, tmp_path / "skeleton", ROOT / "exercises" / "exercise3" / "skeleton")
    assert data["score"] == 0 and len(data["tests"]) == 39
    assert "Public checks: 0 / 9.5 points." in data["output"]
    statuses = {t["extra_data"]["status"] for t in data["tests"]}
    assert statuses == {"passed", "failed", "skipped"}  # gates pass, the rest fail or wait for them


def test_a_grader_that_cannot_start_still_leaves_a_results_json_for_the_student(bundle, tmp_path):
    (tmp_path / "empty").mkdir()
    root = tmp_path / "autograder"
    for sub in ("source", "submission", "results"):
        (root / sub).mkdir(parents=True)
    with zipfile.ZipFile(bundle) as zf:
        (root / "source" / "run_autograder").write_bytes(zf.read("run_autograder"))
    env = dict(os.environ, AUTOGRADER_ROOT=str(root), GRADER_PYTHON=str(tmp_path / "no-python"))
    done = subprocess.run(["bash", str(root / "source" / "run_autograder")], env=env, capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0
    data = json.loads((root / "results" / "results.json").read_text())
    assert data["score"] == 0 and data["tests"] == []
    assert "an error of the grader, not of your work" in data["output"]


def test_build_refuses_an_unknown_visibility_and_an_exercise_without_hidden_tests(tmp_path, monkeypatch):
    unknown = CliRunner().invoke(main, ["gradescope", "build", str(tmp_path / "a.zip"), "exercis3"])
    assert unknown.exit_code == 2 and unknown.output.startswith("Error: no exercise exercis3")
    assert "exercise3" in unknown.output.split("(exercises:")[0]  # the nearest name, before the list
    bad = CliRunner().invoke(main, ["gradescope", "build", str(tmp_path / "a.zip"), "exercise3",
                                    "--hidden-visibility", "later"])
    assert bad.exit_code == 2 and "Invalid value for '--hidden-visibility'" in bad.output
    course = tmp_path / "course"  # a student bundle's layout: no tests/hidden
    shutil.copytree(ROOT / "exercises" / "exercise3", course / "exercises" / "exercise3",
                    ignore=shutil.ignore_patterns("hidden"))
    shutil.copy(ROOT / "pyproject.toml", course / "pyproject.toml")
    monkeypatch.setenv("GRADER_COURSE_ROOT", str(course))
    refused = CliRunner().invoke(main, ["gradescope", "build", str(tmp_path / "a.zip"), "exercise3"])
    assert refused.exit_code == 2 and "exercise3 has no hidden tests here" in refused.output
    assert not (tmp_path / "a.zip").exists()


@pytest.fixture(scope="module")
def python_others_can_run():
    """A Python that users other than root can run, seeing this venv's packages: the system's python3.X of
    this minor version in a venv under /tmp (this venv's may lie under /root, mode 0700, where an
    unprivileged uid cannot even start; the sandbox then stays root and says so)."""
    if os.getuid() != 0:
        pytest.skip("the sandbox takes a uid of its own only when the grader is root")
    version = f"{sys.version_info.major}.{sys.version_info.minor}"
    base = shutil.which(f"python{version}", path="/usr/bin:/usr/local/bin")
    if base is None:
        pytest.skip(f"no system python{version}")
    folder = Path(tempfile.mkdtemp(prefix="grader-py-"))
    os.chmod(folder, 0o755)
    subprocess.run([base, "-m", "venv", "--without-pip", str(folder)], check=True)
    site = folder / "lib" / f"python{version}" / "site-packages"
    for entry in Path(sysconfig.get_paths()["purelib"]).iterdir():
        (site / entry.name).symlink_to(entry)
    python = str(folder / "bin" / "python")
    probe = subprocess.run([python, "-c", "from grader.sandbox.isolation import others_can_run_python as f; "
                            "print(f())"], env=dict(os.environ, PYTHONPATH=str(ROOT)), capture_output=True, text=True)
    if probe.stdout.strip() != "True":
        shutil.rmtree(folder)
        pytest.skip(f"other users cannot run {base} with this venv's packages: {probe.stdout}{probe.stderr}")
    yield python
    shutil.rmtree(folder)


@pytest.fixture
def scratch():
    """A folder that other users may walk into (pytest's tmp_path lies in a folder of mode 0700)."""
    folder = Path(tempfile.mkdtemp(prefix="grader-scratch-"))
    os.chmod(folder, 0o755)
    yield folder
    shutil.rmtree(folder)


DETACHED = '''\
import json, os, time
with open({log!r}, "a") as f:
    f.write(f"uid {{os.getuid()}}\\n")
if os.fork() == 0:  # a detached process that rewrites the results as long as it lives
    os.setsid()
    if os.fork() == 0:
        while True:
            try:
                with open({results!r}, "w") as f:
                    json.dump({{"score": 24, "output": "written by the submission", "tests": []}}, f)
            except OSError:
                pass
            time.sleep(0.005)
    os._exit(0)
'''


def test_in_gradescope_s_container_a_submission_can_neither_rewrite_its_results_nor_outlive_its_sandbox(
        python_others_can_run, scratch):
    """As on Gradescope: the grader is root and bubblewrap cannot make namespaces (a bwrap that fails
    stands in), so the code runs as a plain child process: as a uid of its own, killed with all it
    started when the sandbox closes, before the judge writes results.json."""
    tmp_path = scratch
    shared = tmp_path / "shared"  # writable by anyone, as a careless results folder would be
    shared.mkdir()
    os.chmod(shared, 0o777)
    results, log = shared / "results.json", shared / "log"
    submission = tmp_path / "submission"
    submission.mkdir()
    (submission / "attention.py").write_text(DETACHED.format(log=str(log), results=str(results))
                                             + (ROOT / "exercises" / "exercise3" / "skeleton" / "attention.py").read_text())
    fake = tmp_path / "bin"
    fake.mkdir()
    (fake / "bwrap").write_text("#!/bin/sh\nexit 1\n")
    os.chmod(fake / "bwrap", 0o755)
    env = dict(os.environ, PATH=f"{fake}:{os.environ['PATH']}", PYTHONPATH=str(ROOT))
    env.pop("GRADER_COURSE_ROOT", None)
    done = subprocess.run([python_others_can_run, "-m", "grader", "grade", "exercise3", "--submission", str(submission),
                           "--seed", "3", "--gradescope", str(results), "--isolation", "container", "--force-container",
                           "--report", str(tmp_path / "r.html")], env=env, capture_output=True, text=True, timeout=300)
    assert "0 / 24 points" in done.stdout, done.stdout + done.stderr
    uids = {int(line.split()[1]) for line in log.read_text().split("\n") if line}
    assert uids and min(uids) >= 61000  # never root, never the grader's user
    time.sleep(0.5)  # a survivor would have rewritten it by now
    data = json.loads(results.read_text())
    assert data["score"] == 0 and len(data["tests"]) == 39
    left = [(p.name, state) for p in Path("/proc").iterdir() if p.name.isdigit() and p.stat().st_uid in uids
            and (state := (p / "stat").read_text().rpartition(")")[2].split()[0]) != "Z"]  # Z: dead, not reaped yet
    assert left == []
    assert "as an unprivileged user of its own (bubblewrap not available)" in (tmp_path / "r.html").read_text()


def test_setup_sh_never_asks_and_says_which_base_image_to_choose_where_python_is_too_old(bundle, tmp_path):
    """setup.sh as Gradescope's image build runs it, on Ubuntu 18.04 (python3 3.6, no python3.11
    package): apt-get and python3 are stand-ins (the real ones would change this machine), which log
    their arguments and answer as 18.04 would; standard input is closed, so any question would fail."""
    with zipfile.ZipFile(bundle) as zf:
        (tmp_path / "setup.sh").write_bytes(zf.read("setup.sh"))
    stubs = tmp_path / "bin"
    stubs.mkdir()
    log = tmp_path / "calls"
    (stubs / "apt-get").write_text(f'#!/bin/sh\necho "apt-get $*" >> {log}\n'
                                   'case "$*" in *python3.11*) echo "E: Unable to locate package python3.11" >&2; exit 100;; esac\n')
    (stubs / "python3").write_text(f'#!/bin/sh\necho "python3 $*" >> {log}\nexit 1\n')  # sys.version_info < (3, 11)
    for stub in ("apt-get", "python3"):
        os.chmod(stubs / stub, 0o755)
    env = dict(os.environ, PATH=f"{stubs}:/usr/bin:/bin", AUTOGRADER_ROOT=str(tmp_path / "autograder"))
    done = subprocess.run(["bash", str(tmp_path / "setup.sh")], env=env, stdin=subprocess.DEVNULL,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 1
    assert done.stderr.strip().endswith("setup.sh: this base image has neither Python 3.11+ nor a python3.11 package; "
                                        "choose Ubuntu 22.04 or later as the base image on Gradescope's Configure "
                                        "Autograder page")
    calls = log.read_text().splitlines()
    assert calls[0] == "apt-get update -qq"
    installs = [c for c in calls if c.startswith("apt-get install")]
    assert installs == ["apt-get install -y -qq python3 python3-venv bubblewrap",
                        "apt-get install -y -qq python3.11 python3.11-venv"]
    assert not (tmp_path / "autograder" / "venv").exists()


def test_the_zip_leaves_out_hidden_files_backups_and_what_the_grader_package_does_not_ship(tmp_path, monkeypatch):
    course = tmp_path / "course"
    shutil.copytree(ROOT / "grader", course / "grader", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(ROOT / "exercises" / "exercise3", course / "exercises" / "exercise3")
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, course / name)
    strays = ["grader/.env", "grader/notes/answers.txt", "grader/cli.py.orig", "exercises/exercise3/.ipynb_checkpoints/a.py",
              "exercises/exercise3/tests/hidden/test_attention_hidden.py~", "exercises/exercise3/.git/config"]
    for stray in strays:
        (course / stray).parent.mkdir(parents=True, exist_ok=True)
        (course / stray).write_text("SECRET=1\n")
    monkeypatch.setenv("GRADER_COURSE_ROOT", str(course))
    run = CliRunner().invoke(main, ["gradescope", "build", str(tmp_path / "a.zip"), "exercise3"])
    assert run.exit_code == 0, run.output
    with zipfile.ZipFile(tmp_path / "a.zip") as zf:
        names = set(zf.namelist())
    assert not {f"course/{stray}" for stray in strays} & names
    assert {"course/grader/templates/gradescope/setup.sh", "course/grader/templates/report.html.j2",
            "course/grader/lms/gradescope.py", "course/exercises/exercise3/tests/hidden/test_attention_hidden.py",
            "course/exercises/exercise3/exercise.toml"} <= names


def test_withheld_packages_are_for_root_only_and_missing_ones_are_skipped(tmp_path, monkeypatch):
    from grader.sandbox import isolation
    from grader.sandbox.container import withhold_packages

    (tmp_path / "forbiddenpkg").mkdir()
    (tmp_path / "forbiddenpkg" / "__init__.py").write_text("")
    os.chmod(tmp_path / "forbiddenpkg", 0o755)
    monkeypatch.syspath_prepend(str(tmp_path))
    isolation.package_dirs.cache_clear()
    assert withhold_packages(("forbiddenpkg", "no_such_package_here")) == [str(tmp_path / "forbiddenpkg")]
    assert stat.S_IMODE(os.stat(tmp_path / "forbiddenpkg").st_mode) == 0o700


def test_the_sandbox_is_what_the_kernel_kills_first_when_memory_runs_out(exercise3, tmp_path):
    """Gradescope gives the judge and the student's code 768 MB together by default: when a submission
    uses it up, the kernel's OOM killer must pick the submission (oom_score_adj 1000), not the judge."""
    import numpy as np

    from grader.sandbox import Sandbox

    (tmp_path / "attention.py").write_text(
        "import numpy as np\n"
        "def softmax(x, axis=-1):\n"
        "    with open('/proc/self/oom_score_adj') as f:\n"
        "        return np.array([float(f.read())])\n")
    with Sandbox(exercise3, tmp_path) as sandbox:
        assert sandbox.call("softmax", np.zeros(3)).tolist() == [1000.0]
    with open("/proc/self/oom_score_adj") as f:
        assert int(f.read()) < 1000  # the judge keeps its own


def test_a_plain_sandbox_stays_the_grader_s_user_where_uids_cannot_be_switched(exercise3, monkeypatch):
    """macOS has no setresuid: a root grader there keeps the plain job as root (and the report says so)
    rather than fail to start every sandbox."""
    from grader.sandbox import Sandbox, session

    monkeypatch.setattr(session, "others_can_run_python", lambda: True)
    sandbox = Sandbox(exercise3, ROOT / "solutions" / "exercise3", use_bubblewrap=False)
    if os.getuid() == 0:
        assert sandbox._plain_uid() and "as an unprivileged user of its own" in sandbox.isolation
    monkeypatch.delattr(os, "setresuid")
    assert not sandbox._plain_uid() and "unprivileged" not in sandbox.isolation
