"""GitHub Classroom: cloned student repositories in (``gh classroom clone student-repos`` makes
``SLUG-submissions/SLUG-USERNAME/``, each a git repository), and the autograding workflow of a student
repository, whose steps are run here as GitHub's command grader would run them."""
import csv
import json
import os
import shutil
import subprocess
import sys
import tomllib
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from conftest import ROOT
from grader import batch, exercises, lms, release
from grader.cli import main
from grader.lms import classroom
from grader.lms.unpack import MAX_UNZIPPED_BYTES, RefusedSubmission, locate

SOLUTION = ROOT / "solutions" / "exercise3" / "attention.py"


def _git(repo: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@example.org", *args],
                   check=True, capture_output=True)


def _repo(path: Path, files: dict[str, str] | None = None) -> Path:
    """A git repository at ``path`` holding ``files`` (name -> text), committed."""
    path.mkdir(parents=True)
    for name, text in (files or {"README.md": "notes\n"}).items():
        (path / name).parent.mkdir(parents=True, exist_ok=True)
        (path / name).write_text(text)
    _git(path, "init", "-q")
    _git(path, "add", "-A")
    _git(path, "commit", "-qm", "start")
    return path


def _student_repo(path: Path, attention: Path | None = None) -> Path:
    """A student's repository as GitHub Classroom makes it from the template: the student bundle of
    exercise 3 (work in exercise3/, the untouched skeleton in exercises/exercise3/skeleton/)."""
    release.build(path, ["exercise3"])
    if attention is not None:
        shutil.copy(attention, path / "exercise3" / "attention.py")
    _git(path, "init", "-q")
    _git(path, "add", "-A")
    _git(path, "commit", "-qm", "work")
    return path


def _found(folder: Path, layout: str = "auto"):
    found = lms.discover(folder, layout)
    return found.layout, [(s.student, s.user_id, s.layout, s.entries) for s in found.submissions]


# ------------------------------------------------------------------------------ detection
def test_clones_are_detected_and_ids_are_the_usernames(tmp_path):
    folder = tmp_path / "transformer-lab-submissions"
    _repo(folder / "transformer-lab-ada-l")  # usernames may hold "-"
    _repo(folder / "transformer-lab-bob")
    (folder / ".DS_Store").write_bytes(b"junk")
    assert classroom.detect(folder) == "GitHub Classroom clones: 2 git repositories named transformer-lab-USERNAME"
    assert _found(folder) == ("classroom", [
        ("ada-l", "ada-l", "classroom", ("transformer-lab-ada-l/",)),
        ("bob", "bob", "classroom", ("transformer-lab-bob/",)),
    ])


def test_a_one_student_classroom_takes_the_slug_from_the_folder_name(tmp_path):
    folder = tmp_path / "lab-2-submissions"
    _repo(folder / "lab-2-ada-l")
    assert _found(folder) == ("classroom", [("ada-l", "ada-l", "classroom", ("lab-2-ada-l/",))])


def test_a_renamed_folder_uses_the_prefix_the_repositories_share(tmp_path):
    folder = tmp_path / "clones"
    for name in ("hw3-ada-l", "hw3-bob", "hw3-carol"):
        _repo(folder / name)
    assert _found(folder)[1] == [("ada-l", "ada-l", "classroom", ("hw3-ada-l/",)),
                                 ("bob", "bob", "classroom", ("hw3-bob/",)),
                                 ("carol", "carol", "classroom", ("hw3-carol/",))]


def test_a_prefix_read_from_names_alone_is_said_to_be_a_guess(tmp_path):
    # Two usernames that start alike (ada-l, ada-m) take part of the usernames into the shared start.
    clones = tmp_path / "clones"
    _repo(clones / "lab-2-ada-l")
    _repo(clones / "lab-2-ada-m")
    assert classroom.detect(clones) == (
        "GitHub Classroom clones: 2 git repositories named lab-2-ada-USERNAME (lab-2-ada- is the start all their "
        "names share: if the assignment's slug is shorter, name the folder SLUG-submissions; if they are not "
        "Classroom clones, --layout folders)")
    assert [s[:2] for s in _found(clones, "folders")[1]] == [("lab-2-ada-l", ""), ("lab-2-ada-m", "")]
    named = clones.rename(tmp_path / "lab-2-submissions")  # as gh classroom clone names it
    assert classroom.detect(named) == "GitHub Classroom clones: 2 git repositories named lab-2-USERNAME"
    assert [s[:2] for s in _found(named)[1]] == [("ada-l", "ada-l"), ("ada-m", "ada-m")]


def test_files_beside_the_clones_are_ignored_and_named(tmp_path):
    # A roster or notes kept beside the clones made it an ordinary folder per student (ids lab-ada, lab-bob).
    folder = tmp_path / "lab-submissions"
    _repo(folder / "lab-ada")
    _repo(folder / "lab-bob")
    (folder / "roster.csv").write_text("student,name\nada,Ada L\n")
    (folder / "notes.txt").write_text("late: bob\n")
    assert classroom.detect(folder) == ("GitHub Classroom clones: 2 git repositories named lab-USERNAME; 2 files "
                                        "beside them ignored (notes.txt, roster.csv)")
    assert _found(folder) == ("classroom", [("ada", "ada", "classroom", ("lab-ada/",)),
                                            ("bob", "bob", "classroom", ("lab-bob/",))])


def test_a_lone_repository_in_a_renamed_folder_is_one_folder_per_student(tmp_path):
    # Nothing tells where the slug ends ("hw3-ada-l": ada-l, or l?): no guess is made.
    _repo(tmp_path / "clones" / "hw3-ada-l")
    assert classroom.detect(tmp_path / "clones") == ""
    assert _found(tmp_path / "clones") == ("folders", [("hw3-ada-l", "", "folders", ("hw3-ada-l/",))])


def test_ordinary_student_folders_are_not_classroom_clones(tmp_path):
    plain = tmp_path / "plain"
    for student in ("ada", "bob"):
        (plain / student).mkdir(parents=True)
        shutil.copy(SOLUTION, plain / student / "attention.py")
    assert classroom.detect(plain) == ""
    assert _found(plain)[0] == "folders"
    # Git repositories too, when their names share no prefix ending in "-".
    repos = tmp_path / "repos"
    _repo(repos / "ada")
    _repo(repos / "bob")
    assert classroom.detect(repos) == ""
    assert _found(repos) == ("folders", [("ada", "", "folders", ("ada/",)), ("bob", "", "folders", ("bob/",))])


def test_one_entry_that_is_not_a_repository_stops_detection(tmp_path):
    folder = tmp_path / "lab-submissions"
    _repo(folder / "lab-ada")
    (folder / "lab-bob").mkdir()  # downloaded by hand, not cloned
    assert classroom.detect(folder) == ""
    assert _found(folder, "classroom")[1] == [("ada", "ada", "classroom", ("lab-ada/",)),
                                              ("bob", "bob", "classroom", ("lab-bob/",))]


def test_clones_are_graded_end_to_end_without_their_git_history(tmp_path):
    """Repositories made from the student bundle: the work in exercise3/ is graded (not the bundle's
    skeleton copy), and a .git larger than a submission may be (a sparse 60 MB pack) costs nothing."""
    folder = tmp_path / "transformer-lab-submissions"
    _student_repo(folder / "transformer-lab-ada-l", SOLUTION)
    bob = _student_repo(folder / "transformer-lab-bob")
    with open(bob / ".git" / "objects" / "pack" / "pack-big.pack", "wb") as pack:
        pack.truncate(MAX_UNZIPPED_BYTES + 10 * 1024 * 1024)
    out = tmp_path / "out"
    batch.run("exercise3", folder, out, jobs=1, seed=5)
    with open(out / "grades.csv", newline="") as fh:
        rows = {r["student"]: r for r in csv.DictReader(fh)}
    assert {s: (r["score"], r["max_score"], r["status"]) for s, r in rows.items()} == {
        "ada-l": ("24", "24", "graded"), "bob": ("0", "24", "graded")}
    with open(out / "students.csv", newline="") as fh:
        mapping = [(r["student"], r["user_id"], r["layout"], r["entries"]) for r in csv.DictReader(fh)]
    assert mapping == [("ada-l", "ada-l", "classroom", "transformer-lab-ada-l/"),
                       ("bob", "bob", "classroom", "transformer-lab-bob/")]


def test_a_repository_without_its_work_is_not_graded_on_the_bundle_skeleton(tmp_path):
    """exercise3/ deleted (in git history only): the bundle's exercises/exercise3/skeleton/ was graded as the work."""
    ex = exercises.load("exercise3")
    gone = _student_repo(tmp_path / "lab-ada", SOLUTION)
    _git(gone, "rm", "-q", "exercise3/attention.py")
    _git(gone, "commit", "-qm", "oops")
    with pytest.raises(RefusedSubmission) as refused:
        locate(gone, ex.files, "exercise3", ex.skeleton)
    assert str(refused.value) == ("no attention.py of the student's: the only one is the student bundle's untouched "
                                  "skeleton (exercises/exercise3/skeleton/); the work belongs in exercise3/attention.py "
                                  "(deleted or renamed?).")
    # Work in a renamed folder is the work (it was refused as "found in several folders")...
    (gone / "mine").mkdir()
    shutil.copy(SOLUTION, gone / "mine" / "attention.py")
    assert locate(gone, ex.files, "exercise3", ex.skeleton) == gone / "mine"
    # ...and so is a skeleton copy the student wrote in.
    shutil.rmtree(gone / "mine")
    shutil.copy(SOLUTION, gone / "exercises" / "exercise3" / "skeleton" / "attention.py")
    assert locate(gone, ex.files, "exercise3", ex.skeleton) == gone / "exercises" / "exercise3" / "skeleton"


# ------------------------------------------------------------------------------ the workflow
#: exercise 3's public test functions and their points, read off the check markers of
#: exercises/exercise3/tests/public/test_attention_public.py.
#: In file order; max-score is twice the points (a check may weigh 0.5; GitHub Classroom counts whole points).
PUBLIC_POINTS = {"test_module_loads": 0, "test_uses_only_numpy": 0, "test_contract_signatures": 0,
                 "test_softmax_small": 2, "test_softmax_cases": 2, "test_layer_norm_case": 2, "test_gelu_case": 1,
                 "test_mha_shape": 2, "test_mha_matches_torch_small": 4, "test_mha_causal_case": 2,
                 "test_block_shape": 2, "test_block_case": 2, "test_small_functions_behaviour": 0,
                 "test_mha_behaviour": 0, "test_block_behaviour": 0}


@pytest.fixture(scope="module")
def workflow(tmp_path_factory):
    """A student repository (the exercise-3 bundle) with its workflow, as the instructor writes it."""
    repo = tmp_path_factory.mktemp("classroom") / "template"
    release.build(repo, ["exercise3"])
    result = CliRunner().invoke(main, ["classroom", "workflow", "exercise3", "--out", str(repo)])
    assert result.exit_code == 0, result.output
    path = repo / ".github" / "workflows" / "classroom.yml"
    assert result.output == (f"Workflow for exercise3: 15 public checks, 9.5 points (max-score: points x 2, as GitHub "
                             f"Classroom counts whole points), written to {path}\n")
    return repo, yaml.safe_load(path.read_text())


def _steps(document):
    return document["jobs"]["run-autograding-tests"]["steps"]


def test_the_workflow_has_what_github_classroom_needs(workflow):
    _, document = workflow
    assert document["name"] == "Autograding Tests"
    assert document["on"] == ["push", "repository_dispatch"]
    assert list(document["jobs"]) == ["run-autograding-tests"]
    steps = _steps(document)
    uses = [s.get("uses", "") for s in steps]
    # The current majors (v4 and v5 run on Node 20, which GitHub's runners deprecate).
    assert uses[0] == "actions/checkout@v7" and uses[1] == "actions/setup-python@v7"
    # As README's set-up: torch alone from PyTorch's CPU index (pinned as pyproject.toml pins it), then the grader.
    with open(ROOT / "pyproject.toml", "rb") as fh:
        torch = next(r for r in tomllib.load(fh)["project"]["dependencies"] if r.startswith("torch"))
    assert torch == "torch==2.13.0"
    assert steps[2]["run"].splitlines() == [
        f"python -m pip install --no-deps {torch} --index-url https://download.pytorch.org/whl/cpu",
        "python -m pip install -e ."]
    upload = next(s for s in steps if s.get("uses") == "actions/upload-artifact@v7")
    assert upload["if"] == "always()" and upload["with"]["path"].split() == ["grade.json", "reports/exercise3.html"]
    graded = [s for s in steps if s.get("uses") == "classroom-resources/autograding-command-grader@v1"]
    assert {s["id"]: s["with"]["max-score"] for s in graded} == PUBLIC_POINTS
    assert all(s["with"]["command"] == f"grade exercise3 --check {s['id']}" for s in graded)
    reporter = steps[-1]
    assert reporter["uses"] == "classroom-resources/autograding-grading-reporter@v1"
    assert reporter["with"]["runners"].split(",") == list(PUBLIC_POINTS)
    assert reporter["env"] == {f"{name.upper()}_RESULTS": f"${{{{steps.{name}.outputs.result}}}}"
                               for name in PUBLIC_POINTS}


def test_the_workflow_goes_only_into_a_student_bundle(tmp_path):
    # Written into the course's own repository (the command's default --out is "."), a template made
    # from it would give every student the solutions and hidden tests.
    course = tmp_path / "course"
    for folder in ("solutions/exercise3", "exercise3", "exercises/exercise3/tests/hidden"):
        (course / folder).mkdir(parents=True)
    (course / "pyproject.toml").write_text("[project]\nname = 'x'\n")
    (course / "exercises" / "exercise3" / "exercise.toml").write_text("")
    refused = CliRunner().invoke(main, ["classroom", "workflow", "exercise3", "--out", str(course)])
    assert refused.exit_code == 2
    assert refused.output == (f"Error: {course} holds solutions/: it is the course's repository, not a student bundle, "
                              "and every student would get it; write the workflow into `grader release REPO "
                              "--exercise exercise3`'s REPO instead\n")
    shutil.rmtree(course / "solutions")
    hidden = CliRunner().invoke(main, ["classroom", "workflow", "exercise3", "--out", str(course)])
    assert hidden.exit_code == 2 and f"{course} holds exercises/exercise3/tests/hidden/:" in hidden.output
    empty = tmp_path / "empty"
    empty.mkdir()
    missing = CliRunner().invoke(main, ["classroom", "workflow", "exercise3", "--out", str(empty)])
    assert missing.exit_code == 2
    assert missing.output == (f"Error: {empty} is not a student bundle of exercise3 (no pyproject.toml, exercise3/, "
                              f"exercises/exercise3/exercise.toml); make it with `grader release {empty} --exercise "
                              "exercise3`, then write the workflow into it\n")
    assert not list(tmp_path.rglob("classroom.yml"))


def _grade_shim(folder: Path) -> Path:
    """A `grade` command as `pip install -e .` makes it in the repository it is run in."""
    folder.mkdir()
    shim = folder / "grade"
    shim.write_text(f"#!{sys.executable}\nimport os, sys\nsys.path.insert(0, os.getcwd())\n"
                    "from grader.cli import grade_shortcut\ngrade_shortcut()\n")
    shim.chmod(0o755)
    return folder


def _run_step(repo: Path, command: str, bin_dir: Path) -> int:
    # The command grader passes on only PATH and HOME (and FORCE_COLOR) to the command.
    env = {"PATH": f"{bin_dir}:/usr/bin:/bin", "HOME": str(repo.parent), "FORCE_COLOR": "true"}
    return subprocess.run(command, shell=True, cwd=repo, env=env, capture_output=True, timeout=300).returncode


def test_each_step_passes_on_the_solution_and_those_worth_points_fail_on_the_skeleton(workflow, tmp_path):
    template, document = workflow
    solved, skeleton = tmp_path / "solved", tmp_path / "skeleton"
    shutil.copytree(template, solved)
    shutil.copytree(template, skeleton)
    shutil.copy(SOLUTION, solved / "exercise3" / "attention.py")
    bin_dir = _grade_shim(tmp_path / "bin")
    steps = _steps(document)
    full = next(s["run"] for s in steps if s.get("continue-on-error"))
    graded = [s for s in steps if s.get("uses") == "classroom-resources/autograding-command-grader@v1"]
    commands = [s["with"]["command"] for s in graded]
    # On the skeleton, the steps worth points (each run costs ~3 s of CPU, most of it importing torch; the
    # gates, worth 0, pass there: it loads, imports only NumPy and has the contract's signatures).
    worth_points = [s["with"]["command"] for s in graded if s["with"]["max-score"] > 0]
    assert len(worth_points) == 9
    runs = [(solved, c) for c in [full, *commands]] + [(skeleton, c) for c in worth_points]
    with ThreadPoolExecutor(2) as pool:  # one queue for both repositories: two CPUs busy to the end
        codes = list(pool.map(lambda run: _run_step(*run, bin_dir), runs))
    assert codes == [0] * (1 + len(commands)) + [1] * len(worth_points)
    summary = json.loads((solved / "grade.json").read_text())
    assert (summary["score"], summary["max_score"]) == (9.5, 9.5)
    assert (solved / "reports" / "exercise3.html").is_file()


def test_a_check_runs_with_the_checks_it_depends_on(tmp_path):
    from grader.cli import grade_shortcut

    result = CliRunner().invoke(grade_shortcut, ["exercise3", str(SOLUTION.parent), "--check",
                                                 "test_mha_matches_torch_small", "--json",
                                                 "--report", str(tmp_path / "r.html")])
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout)
    # Its marker depends on test_mha_shape, which depends on the gates (GATES in tests/checks.py).
    assert [c["name"] for c in summary["checks"]] == ["test_module_loads", "test_uses_only_numpy", "test_mha_shape",
                                                      "test_mha_matches_torch_small"]
    unknown = CliRunner().invoke(grade_shortcut, ["exercise3", str(SOLUTION.parent), "--check", "test_nope",
                                                  "--report", str(tmp_path / "r.html")])
    assert unknown.exit_code == 2
    assert "Error: exercise3 has no check named test_nope; its checks: test_module_loads," in unknown.output
    # A name is a whole name: test_mha, the start of four checks' names, selects none of them.
    prefix = CliRunner().invoke(grade_shortcut, ["exercise3", str(SOLUTION.parent), "--check", "test_mha",
                                                 "--report", str(tmp_path / "r.html")])
    assert prefix.exit_code == 2 and "Error: exercise3 has no check named test_mha;" in prefix.output


def test_a_named_check_that_did_not_run_does_not_pass(tmp_path):
    """--quick leaves out slow checks: `grade --check SLOW --quick` exited 0 on "0 / 0 points", the check never made."""
    course = tmp_path / "course"
    public = course / "exercises" / "tiny" / "tests" / "public"
    public.mkdir(parents=True)
    (course / "exercises" / "tiny" / "exercise.toml").write_text('title = "t"\nfiles = ["a.py"]\nmodule = "a"\n')
    (public / "test_tiny.py").write_text(
        "import pytest\n\n\n@pytest.mark.check(points=0)\ndef test_gate(submission):\n    submission.has('f')\n\n\n"
        "@pytest.mark.slow\n@pytest.mark.check(points=1, depends=['test_gate'])\ndef test_slow(submission):\n"
        "    assert submission.f() == 1\n")
    (course / "tiny").mkdir()
    (course / "tiny" / "a.py").write_text("def f():\n    return 1\n")

    def grade(*args):
        return subprocess.run([sys.executable, "-c", "from grader.cli import grade_shortcut; grade_shortcut()", "tiny",
                               *args], cwd=course, env={**os.environ, "GRADER_COURSE_ROOT": str(course)},
                              capture_output=True, text=True, timeout=120)

    quick = grade("--check", "test_slow", "--quick")
    assert quick.returncode == 2, quick.stdout + quick.stderr
    assert quick.stderr.splitlines()[-1] == ("Error: test_slow did not run (--quick leaves out slow checks; run it "
                                             "without --quick).")
    made = grade("--check", "test_slow")
    assert made.returncode == 0, made.stdout + made.stderr
    assert "tiny: 1 / 1 points" in made.stdout


def test_points_that_are_fractions_are_scaled_to_whole_numbers():
    halves = [classroom.PublicCheck("a", "A", 0.5), classroom.PublicCheck("b", "B", 2)]
    assert classroom.scale(halves) == 2
    assert classroom.scale([classroom.PublicCheck("a", "A", 0.25)]) == 4
    assert classroom.scale([classroom.PublicCheck("a", "A", 3)]) == 1
