"""The Gradescope autograder zip (``grader gradescope build``), run the way Gradescope runs it: unpacked
into ``source/`` of a scratch root laid out like ``/autograder`` (source/, submission/, results/), then
``run_autograder`` there, with the root moved by ``AUTOGRADER_ROOT`` and this venv's Python given by
``GRADER_PYTHON`` (setup.sh, which installs Python, torch and the grader, is not run: it needs the network)."""
import json
import os
import shutil
import stat
import subprocess
import sys
import zipfile

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
    env = {k: v for k, v in os.environ.items() if k not in ("GRADER_COURSE_ROOT", "PYTHONPATH")}
    env.update(AUTOGRADER_ROOT=str(root), GRADER_PYTHON=sys.executable)
    done = subprocess.run([str(root / "source" / "run_autograder")], cwd=root, env=env, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
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
    assert set(data) == {"score", "execution_time", "output", "output_format", "tests"}
    assert 0 < data["execution_time"] < 120
    tests = data["tests"]
    assert len(tests) == 31 and sum(t["max_score"] for t in tests) == 24
    assert all(t["status"] == "passed" and t["score"] == t["max_score"] for t in tests)
    visibility = {t["extra_data"]["check"].split("[")[0]: t["visibility"] for t in tests}
    assert visibility["test_mha_shape"] == "visible" and visibility["test_mha_parity"] == "after_published"
    hidden = [t for t in tests if t["visibility"] == "after_published"]
    assert sum(t["max_score"] for t in hidden) == 19
    assert {tuple(t["tags"]) for t in tests} == {("attention.py",), ("softmax",), ("layer_norm",), ("gelu",),
                                                 ("multi_head_attention",), ("transformer_block",)}
    assert data["output"].startswith("Public checks: 5 / 5 points. The 24 hidden checks (19 points) and your "
                                     "total are shown once the grades are published.")
    # Not Gradescope (AUTOGRADER_ROOT proves nothing): bubblewrap isolates the code as everywhere else.
    assert "Your code ran in a sandbox: a separate process with no network" in data["output"]
    assert "bubblewrap" not in data["output"] and "uid" not in data["output"]
    assert "grader exit status: 0" in done.stdout

    data, _ = _run_autograder(bundle, tmp_path / "skeleton", ROOT / "exercises" / "exercise3" / "skeleton")
    assert data["score"] == 0 and len(data["tests"]) == 31
    assert "Public checks: 0 / 5 points." in data["output"]
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
