"""The student release holds no solution or hidden-test content, and `grade` works inside it."""
import os
import shutil
import subprocess
import sys

import pytest

from conftest import ROOT
from grader import exercises, release


@pytest.fixture(scope="module")
def bundle(tmp_path_factory):
    out = tmp_path_factory.mktemp("release") / "students"
    release.build(out)
    return out


def _released_files(bundle):
    return [p for p in bundle.rglob("*") if p.is_file()]


def test_no_solution_or_hidden_file_is_shipped(bundle):
    paths = [p.relative_to(bundle).as_posix() for p in _released_files(bundle)]
    assert not [p for p in paths if p.startswith(("solutions/", "tests/")) or "/hidden/" in p]
    # Mistake variants spell out the right computation (variant with no mistake): judge side only.
    assert not [p for p in paths if p.endswith("mistakes.py")]
    secret = [p for p in (ROOT / "solutions").rglob("*") if p.is_file()]
    secret += [p for name in exercises.available() for p in (ROOT / "exercises" / name / "tests" / "hidden").rglob("*")
               if p.is_file() and "__pycache__" not in p.parts]
    assert secret, "nothing to check against"
    shipped = {p.read_bytes() for p in _released_files(bundle)}
    assert not [p for p in secret if p.read_bytes() in shipped]


def test_no_line_unique_to_a_solution_is_shipped(bundle):
    """Lines of a reference solution that its skeleton does not share must appear nowhere."""
    text = "\n".join(p.read_text(errors="replace") for p in _released_files(bundle) if p.suffix in (".py", ".md", ".toml"))
    for name in exercises.available():
        solution, skeleton = ROOT / "solutions" / name, exercises.load(name).skeleton
        for path in solution.rglob("*"):
            if not path.is_file() or "__pycache__" in path.parts:
                continue
            twin = skeleton / path.relative_to(solution)
            shared = set(twin.read_text().splitlines()) if twin.is_file() else set()
            unique = [ln.strip() for ln in path.read_text().splitlines()
                      if len(ln.strip()) >= 30 and ln not in shared and not ln.strip().startswith(("#", '"""'))]
            leaked = [ln for ln in unique if ln in text]
            assert not leaked, f"{path.relative_to(ROOT)} leaks: {leaked[:3]}"


def test_grade_works_in_the_release_on_public_checks(bundle, tmp_path):
    env = {k: v for k, v in os.environ.items() if k != "GRADER_COURSE_ROOT"}
    env["PYTHONPATH"] = str(bundle)
    run = [sys.executable, "-c", "from grader.cli import grade_shortcut; grade_shortcut()", "exercise3"]
    skeleton = subprocess.run(run, cwd=bundle, env=env, capture_output=True, text=True, timeout=120)
    assert "exercise3: 0 / 5 points" in skeleton.stdout, skeleton.stdout + skeleton.stderr
    assert "Hidden tests are not available here" in skeleton.stdout
    shutil.copy(ROOT / "solutions" / "exercise3" / "attention.py", bundle / "exercise3" / "attention.py")
    solved = subprocess.run(run, cwd=bundle, env=env, capture_output=True, text=True, timeout=120)
    assert "exercise3: 5 / 5 points" in solved.stdout, solved.stdout + solved.stderr
    assert solved.returncode == 0
    assert (bundle / "reports" / "exercise3.html").is_file()
