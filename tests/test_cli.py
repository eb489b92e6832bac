"""The command line, through click's CliRunner: help, list, grade (JSON and report), errors,
and the course-CI command check-solutions."""
import dataclasses
import inspect
import json
import os
import shutil
import signal
import subprocess
import sys
import time
import tomllib

import pytest
from click.testing import CliRunner

from conftest import ROOT
from grader import annotations, corpus
from grader.cli import grade_shortcut, main
from grader.corpus import Case

SOLUTION = ROOT / "solutions" / "exercise3"
SKELETON = ROOT / "exercises" / "exercise3" / "skeleton"
#: The exercises, read from the course folder (not from the grader).
EXERCISES = sorted(p.parent.name for p in (ROOT / "exercises").glob("*/exercise.toml"))


def flat(text: str) -> str:
    """Whitespace-normalised text (click re-wraps help paragraphs to the terminal width)."""
    return " ".join(text.split())


def first_line(command) -> str:
    return inspect.getdoc(command.callback).splitlines()[0]


COMMANDS = sorted(main.commands)


@pytest.mark.parametrize("name", COMMANDS)
def test_every_grader_command_has_help_from_its_docstring(name):
    result = CliRunner().invoke(main, [name, "--help"])
    assert result.exit_code == 0, result.output
    assert first_line(main.commands[name]) in flat(result.output)
    assert f" {name} [OPTIONS]" in result.output


def test_the_documented_commands_exist():
    assert {"grade", "batch", "check-solutions", "release", "list"} <= set(COMMANDS)


def test_group_help_lists_every_command():
    result = CliRunner().invoke(main, ["--help"])
    assert result.exit_code == 0
    assert first_line(main) in flat(result.output)
    for name in COMMANDS:
        assert name in result.output


def test_grade_shortcut_has_help_from_its_docstring():
    result = CliRunner().invoke(grade_shortcut, ["--help"])
    assert result.exit_code == 0
    assert first_line(grade_shortcut) in flat(result.output)


def test_version_is_the_package_version():
    version = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
    result = CliRunner().invoke(main, ["--version"])
    assert result.exit_code == 0 and version in result.output


def test_list_shows_exercise3():
    title = tomllib.loads((ROOT / "exercises" / "exercise3" / "exercise.toml").read_text())["title"]
    result = CliRunner().invoke(main, ["list"])
    assert result.exit_code == 0
    (line,) = [ln for ln in result.output.splitlines() if ln.startswith("exercise3")]
    assert title in line and "attention.py" in line


# ---------------------------------------------------------------- grade
def test_grade_json_prints_one_object_with_the_documented_keys(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(main, ["grade", "exercise3", "--submission", str(SOLUTION), "--json", "--seed", "7"])
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout)  # the whole of stdout is one JSON object
    assert (tmp_path / "reports" / "exercise3.html").is_file()  # the default report path
    assert set(summary) == {"exercise", "score", "max_score", "seed", "needs_review", "checks"}
    assert summary["exercise"] == "exercise3" and summary["seed"] == 7
    assert summary["score"] == summary["max_score"] > 0
    for check in summary["checks"]:
        assert set(check) == {"name", "points", "max_points", "status", "feedback", "diagnosis"}
        assert check["status"] == "passed"
    assert sum(c["points"] for c in summary["checks"]) == pytest.approx(summary["score"])


def test_grade_writes_the_report_where_asked(tmp_path):
    report = tmp_path / "out" / "alice.html"
    result = CliRunner().invoke(main, ["grade", "exercise3", "--submission", str(SKELETON), "--json",
                                       "--seed", "5", "--report", str(report)])
    assert result.exit_code == 1, result.output  # graded below full marks
    summary = json.loads(result.stdout)
    html = report.read_text(encoding="utf-8")
    assert summary["score"] == 0 < summary["max_score"]
    assert f"0 / {summary['max_score']:g} points" in html


def test_grade_unknown_exercise_lists_the_known_ones(tmp_path):
    result = CliRunner().invoke(main, ["grade", "nosuch", "--submission", str(tmp_path)])
    assert result.exit_code == 2
    assert "Error: no exercise nosuch (exercises: " in result.output  # no name is near enough to suggest
    known = result.output.split("(exercises: ")[1].strip().rstrip(")").split(", ")
    assert known == EXERCISES


def test_grade_missing_submission_folder(tmp_path):
    result = CliRunner().invoke(main, ["grade", "exercise3", "--submission", str(tmp_path / "absent")])
    assert result.exit_code == 2
    assert result.output == (f"Error: submission folder {tmp_path / 'absent'} does not exist; give the folder "
                             "that holds attention.py\n")


def test_shortcut_without_the_folder_says_no_folder():
    result = CliRunner().invoke(grade_shortcut, ["exercise3", "/nonexistent"])
    assert result.exit_code == 2
    assert "Error: no folder /nonexistent/ here;" in result.output


def test_shortcut_exit_status_says_full_marks_or_not(tmp_path):
    runner = CliRunner()
    full = runner.invoke(grade_shortcut, ["exercise3", str(SOLUTION), "--seed", "2",
                                          "--report", str(tmp_path / "a.html")])
    assert full.exit_code == 0, full.output
    assert "exercise3: 24 / 24 points" in full.output and "(seed 2" in full.output
    zero = runner.invoke(grade_shortcut, ["exercise3", str(SKELETON), "--seed", "2",
                                          "--report", str(tmp_path / "b.html")])
    assert zero.exit_code == 1
    assert "exercise3: 0 / 24 points" in zero.output


def test_shortcut_without_an_argument_lists_the_exercises(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(grade_shortcut, [])
    assert result.exit_code == 2
    assert "Error: say which exercise to grade: `grade EXERCISE` next to your EXERCISE/ folder" in result.output
    for name in EXERCISES:
        title = tomllib.loads((ROOT / "exercises" / name / "exercise.toml").read_text())["title"]
        assert f"\n  {name}  {title}\n" in result.output
    assert "You are inside" not in result.output
    (tmp_path / "exercise3").mkdir()
    monkeypatch.chdir(tmp_path / "exercise3")
    inside = CliRunner().invoke(grade_shortcut, [])
    assert inside.exit_code == 2 and "\nYou are inside exercise3/: run `grade .`\n" in inside.output


@pytest.mark.parametrize("args", [["exercis3"], ["grade", "exercis3", "--submission", str(SOLUTION)]],
                         ids=["grade", "grader grade"])
def test_a_near_miss_of_an_exercise_name_gets_the_nearest(args):
    command = grade_shortcut if len(args) == 1 else main
    result = CliRunner().invoke(command, args)
    assert result.exit_code == 2
    assert result.output == f"Error: no exercise exercis3; did you mean exercise3? (exercises: {', '.join(EXERCISES)})\n"


@pytest.fixture
def work(tmp_path, monkeypatch):
    """A student's folder tmp_path/exercise3/attention.py (the reference solution); the working folder is tmp_path."""
    (tmp_path / "exercise3").mkdir()
    shutil.copy(SOLUTION / "attention.py", tmp_path / "exercise3")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_a_file_given_for_the_folder_gets_the_folder_command(work, monkeypatch):
    result = CliRunner().invoke(grade_shortcut, ["exercise3/attention.py"])
    assert (result.exit_code, result.output) == (
        2, "Error: exercise3/attention.py is a file; grade the folder that holds it: `grade exercise3`\n")
    instructor = CliRunner().invoke(main, ["grade", "exercise3", "--submission", "exercise3/attention.py"])
    assert (instructor.exit_code, instructor.output) == (
        2, "Error: exercise3/attention.py is a file; give the folder that holds it: "
           "`grader grade exercise3 --submission exercise3`\n")
    monkeypatch.chdir(work / "exercise3")
    inside = CliRunner().invoke(grade_shortcut, ["attention.py"])
    assert (inside.exit_code, inside.output) == (
        2, "Error: attention.py is a file; grade the folder that holds it: `grade .`\n")


def test_inside_the_folder_grade_exercise3_suggests_grade_dot(work, monkeypatch):
    monkeypatch.chdir(work / "exercise3")
    result = CliRunner().invoke(grade_shortcut, ["exercise3"])
    assert (result.exit_code, result.output) == (
        2, "Error: no folder exercise3/ here: you are inside it already; run `grade .`\n")


def test_grade_dot_writes_the_report_beside_the_folder_never_into_it(work, monkeypatch):
    monkeypatch.chdir(work / "exercise3")
    refused = CliRunner().invoke(grade_shortcut, [".", "--report", "mine.html"])
    assert refused.exit_code == 2
    assert ("Error: --report mine.html is inside the submission folder ., and every later grading would copy it "
            "in with the submission; write it elsewhere, e.g. --report ../reports/exercise3.html") in refused.output
    result = CliRunner().invoke(grade_shortcut, [".", "--seed", "1"])
    assert result.exit_code == 0, result.output
    assert "exercise3: 24 / 24 points" in result.output and "Report: ../reports/exercise3.html" in result.output
    assert (work / "reports" / "exercise3.html").is_file()
    assert sorted(p.name for p in (work / "exercise3").iterdir()) == ["attention.py"]


def test_a_folder_without_the_exercises_files_is_not_graded(work):
    (work / "empty").mkdir()
    empty = CliRunner().invoke(main, ["grade", "exercise3", "--submission", "empty"])
    assert (empty.exit_code, empty.output) == (
        2, "Error: empty holds none of exercise3's files (attention.py); put your attention.py there "
           "(start from exercises/exercise3/skeleton/)\n")
    wrong = CliRunner().invoke(main, ["grade", "exercise2", "--submission", "exercise3"])
    assert (wrong.exit_code, wrong.output) == (
        2, "Error: exercise3 holds none of exercise2's files (derive.py); it holds attention.py, the files of "
           "exercise3: did you mean `grader grade exercise3 --submission exercise3`?\n")
    above = CliRunner().invoke(grade_shortcut, ["exercise3", "."])
    assert (above.exit_code, above.output) == (
        2, "Error: . holds none of exercise3's files (attention.py); its sub-folder exercise3/ does: "
           "`grade exercise3`\n")
    assert not (work / "reports").exists()


def test_a_folder_not_named_after_an_exercise_needs_the_exercise(work):
    (work / "exercise3").rename(work / "my_attempt")
    result = CliRunner().invoke(grade_shortcut, ["my_attempt"])
    assert (result.exit_code, result.output) == (
        2, "Error: no exercise my_attempt; to grade the folder my_attempt/, say which exercise it is: "
           "`grade exercise3 my_attempt`\n")


@pytest.mark.parametrize("command, prog", [(grade_shortcut, "grade"), (main, "grader")])
def test_version_and_short_help_on_both_commands(command, prog):
    version = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
    shown = CliRunner().invoke(command, ["--version"], prog_name=prog)
    assert (shown.exit_code, shown.output) == (0, f"{prog}, version {version}\n")
    short, long = (CliRunner().invoke(command, [flag], prog_name=prog) for flag in ("-h", "--help"))
    assert short.exit_code == 0 and short.output == long.output and f"Usage: {prog} [OPTIONS]" in short.output
    assert "-h, --help" in short.output
    sub = CliRunner().invoke(main, ["grade", "-h"], prog_name="grader")
    assert sub.exit_code == 0 and "Usage: grader grade [OPTIONS] EXERCISE" in sub.output


def test_no_color_turns_the_colours_off(tmp_path, monkeypatch):
    args = ["exercise3", str(SKELETON), "--seed", "1", "--report", str(tmp_path / "r.html")]
    coloured = CliRunner().invoke(grade_shortcut, args, color=True)  # as on a colour terminal
    assert coloured.exit_code == 1 and "\x1b[" in coloured.output
    monkeypatch.setenv("NO_COLOR", "")  # set but empty: colours stay (no-color.org)
    assert "\x1b[" in CliRunner().invoke(main, ["grade", "exercise3", "--submission", *args[1:]], color=True).output
    monkeypatch.setenv("NO_COLOR", "1")
    plain = CliRunner().invoke(main, ["grade", "exercise3", "--submission", *args[1:]], color=True)
    assert plain.exit_code == 1 and "\x1b[" not in plain.output and "exercise3: 0 / 24 points" in plain.output


def test_grader_errors_exit_1_with_a_line_even_at_full_marks(tmp_path, monkeypatch):
    """A course whose one check passes but whose other test file does not load: 1/1 point and a grader error."""
    tests = tmp_path / "course" / "exercises" / "tiny" / "tests" / "public"
    tests.mkdir(parents=True)
    (tests.parent.parent / "exercise.toml").write_text('title = "Tiny"\nfiles = ["tiny.py"]\nmodule = "tiny"\n')
    (tests / "test_ok.py").write_text('import pytest\n\n\n@pytest.mark.check(points=1)\ndef test_f(submission):\n'
                                      '    """f() is 1."""\n    assert submission.f() == 1\n')
    (tests / "test_broken.py").write_text("raise RuntimeError('a broken test file')\n")
    (tmp_path / "tiny").mkdir()
    (tmp_path / "tiny" / "tiny.py").write_text("def f():\n    return 1\n")
    monkeypatch.setenv("GRADER_COURSE_ROOT", str(tmp_path / "course"))
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(grade_shortcut, ["tiny", "--json"])
    assert result.exit_code == 1, result.output
    summary = json.loads(result.stdout)
    assert (summary["score"], summary["max_score"]) == (1, 1)
    assert [c["status"] for c in summary["checks"]] == ["passed", "error"]
    assert result.stderr.splitlines()[-1] == ("Warning: 1 check(s) hit an error of the grader itself (not your fault): "
                                              "this grade is incomplete; please tell the course staff.")


def test_batch_refuses_overrides_naming_an_unknown_check_before_grading(tmp_path):
    (tmp_path / "subs" / "ada").mkdir(parents=True)
    shutil.copy(SOLUTION / "attention.py", tmp_path / "subs" / "ada")
    overrides, out = tmp_path / "overrides.csv", tmp_path / "out"
    overrides.write_text("student,check,points,comment\nada,mha_parity[B2_T7_d16_h4],0,copied\nada,test_nosuch,1,why\n")
    args = ["batch", "exercise3", str(tmp_path / "subs"), "--out", str(out), "--overrides", str(overrides)]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 2, result.output
    assert result.output.startswith(f"Error: {overrides} line 3: exercise3 has no check named 'test_nosuch' "
                                    "(student ada); known checks: test_module_loads, ")
    assert not out.exists()  # nothing graded, nothing written
    # test_mha_shape is worth 1 point (its marker in exercises/exercise3/tests/public/test_attention_public.py).
    overrides.write_text("student,check,points,comment\nada,test_mha_shape,5,generous\n")
    too_many = CliRunner().invoke(main, args)
    assert too_many.exit_code == 2 and not out.exists()
    assert f"Error: {overrides} line 2: 5 points for test_mha_shape, which is worth 1" in too_many.output


def test_negative_seed_is_a_usage_error(tmp_path):
    result = CliRunner().invoke(main, ["grade", "exercise3", "--submission", str(SOLUTION), "--json",
                                       "--seed", "-1", "--report", str(tmp_path / "r.html")])
    assert result.exit_code == 2


# ---------------------------------------------------------------- check-solutions
def _corpus_subset(names):
    """A few real corpus cases: grading all of them takes ~40 s of CPU, and test_corpus.py
    already grades every case (at another seed)."""
    every = corpus.cases("exercise3")
    chosen = [c for c in every if c.name in names] or every[:2]
    assert chosen, "tests/corpus/exercise3 has no cases"
    return chosen


def test_check_solutions_grades_solution_skeleton_and_corpus(monkeypatch):
    subset = _corpus_subset({"imports_torch", "returns_float32", "no_layer_norm"})
    monkeypatch.setattr(corpus, "cases", lambda name, kind="corpus": subset if name == "exercise3" else [])
    monkeypatch.setenv("GITHUB_ACTIONS", "true")  # nothing failed: no annotation
    result = CliRunner().invoke(main, ["check-solutions", "--exercise", "exercise3", "--seed", "3"])
    lines = result.output.splitlines()
    assert result.exit_code == 0, result.output
    assert lines[0] == "ok   exercise3 solution: 24/24"
    assert lines[1] == "ok   exercise3 skeleton: 0/24"
    for case, line in zip(subset, lines[2:], strict=False):
        assert line.startswith(f"ok   exercise3 known mistake {case.name}: "), line
    assert lines[-2:] == ["seed 3", f"{2 + len(subset)} ok, 0 failed"]
    assert len(lines) == 2 + len(subset) + 2


def test_check_solutions_fails_when_a_known_mistake_gets_full_marks(monkeypatch):
    # A "known mistake" that is really the reference solution must be reported, and exit 1.
    fake = Case(name="not_a_mistake", folder=SOLUTION, mistake="none", fails=("test_mha_matches_torch_small",))
    monkeypatch.setattr(corpus, "cases", lambda name, kind="corpus": [fake])
    monkeypatch.delenv("GITHUB_ACTIONS", raising=False)
    result = CliRunner().invoke(main, ["check-solutions", "--exercise", "exercise3", "--seed", "3"])
    assert result.exit_code == 1
    assert result.output.splitlines()[2:] == [
        "FAIL exercise3 known mistake not_a_mistake: 24/24",
        "       got full marks (24/24)",
        "       test_mha_matches_torch_small should fail but passed on test_mha_matches_torch_small",
        "seed 3",
        "2 ok, 1 failed",
    ]


def test_check_solutions_annotates_each_failure_under_github_actions(monkeypatch):
    # A real corpus case with one expectation it cannot meet (it passes that check), beside a case that holds.
    real = next(c for c in corpus.cases("exercise2") if c.name == "share_rounded")
    wrong = dataclasses.replace(real, fails=("test_block_params_small",))
    holds = next(c for c in corpus.cases("exercise2") if c.name == "syntax_error")
    monkeypatch.setattr(corpus, "cases", lambda name, kind="corpus": [wrong, holds])
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    monkeypatch.delenv("GITHUB_WORKSPACE", raising=False)  # paths relative to the course root
    result = CliRunner().invoke(main, ["check-solutions", "--exercise", "exercise2", "--seed", "1"])
    assert result.exit_code == 1
    assert result.output.splitlines() == [
        "ok   exercise2 solution: 23/23",
        "ok   exercise2 skeleton: 0/23",
        "FAIL exercise2 known mistake share_rounded: 22/23",
        "       test_block_params_small should fail but passed on test_block_params_small",
        "ok   exercise2 known mistake syntax_error: 0/23",
        "seed 1",
        "::error file=tests/corpus/exercise2/share_rounded/expected.toml,line=1,"
        "title=exercise2 known mistake share_rounded::test_block_params_small should fail but passed on "
        "test_block_params_small",
        "3 ok, 1 failed",
    ]


def test_check_solutions_fails_when_a_solution_is_missing(tmp_path, monkeypatch):
    ex = tmp_path / "exercises" / "lonely"
    ex.mkdir(parents=True)
    (ex / "exercise.toml").write_text('title = "t"\nfiles = ["a.py"]\nmodule = "a"\n')
    monkeypatch.setenv("GRADER_COURSE_ROOT", str(tmp_path))
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    monkeypatch.delenv("GITHUB_WORKSPACE", raising=False)
    result = CliRunner().invoke(main, ["check-solutions", "--seed", "1"])
    assert result.exit_code == 1
    solution, skeleton = tmp_path / "solutions" / "lonely", ex / "skeleton"
    assert result.output.splitlines() == [
        f"FAIL lonely solution: no solution folder at {solution}",
        f"FAIL lonely skeleton: no skeleton folder at {skeleton}",
        "seed 1",
        f"::error file=solutions/lonely,title=lonely solution::no solution folder at {solution}",
        f"::error file=exercises/lonely/skeleton,title=lonely skeleton::no skeleton folder at {skeleton}",
        "0 ok, 2 failed",
    ]


def test_annotations_name_files_from_the_checked_out_repository(tmp_path, monkeypatch):
    # The course in a sub-folder (with a space) of the repository: GitHub's runner reads a relative file
    # as relative to $GITHUB_WORKSPACE, so a path relative to the course root pointed at no file.
    course = tmp_path / "my course"
    (course / "exercises" / "lonely").mkdir(parents=True)
    (course / "exercises" / "lonely" / "exercise.toml").write_text('title = "t"\nfiles = ["a.py"]\nmodule = "a"\n')
    monkeypatch.setenv("GRADER_COURSE_ROOT", str(course))
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    monkeypatch.setenv("GITHUB_WORKSPACE", str(tmp_path))
    result = CliRunner().invoke(main, ["check-solutions", "--seed", "1"])
    assert result.exit_code == 1
    assert [line.split("::")[1] for line in result.output.splitlines() if line.startswith("::error")] == [
        "error file=my course/solutions/lonely,title=lonely solution",
        "error file=my course/exercises/lonely/skeleton,title=lonely skeleton"]


def test_annotations_escape_as_github_reads_them():
    # Workflow commands (GitHub docs): in the message % CR LF become %25 %0D %0A; in a property, : and , too.
    line = annotations.error("100% wrong\r\nsee: a, b", title="ex3: a, b", file="tests/c,d:e.toml", line=3)
    assert line == "::error file=tests/c%2Cd%3Ae.toml,line=3,title=ex3%3A a%2C b::100%25 wrong%0D%0Asee: a, b"
    assert annotations.error("m", title="t") == "::error title=t::m"


def test_check_solutions_unknown_exercise_is_an_input_error_with_the_nearest_name():
    result = CliRunner().invoke(main, ["check-solutions", "--exercise", "exercis2"])
    assert result.exit_code == 2
    assert "no exercise exercis2; did you mean exercise2?" in result.output
    assert "ok," not in result.output  # nothing was checked


def test_ctrl_c_stops_the_students_code_at_once_and_leaves_nothing_behind(tmp_path):
    """SIGINT while an infinite loop runs: exit within seconds, no sandbox folder or process left."""
    cmd = [sys.executable, "-m", "grader", "grade", "exercise3", "--submission",
           str(ROOT / "tests" / "hostile" / "exercise3" / "infinite_loop"), "--report", str(tmp_path / "r.html")]
    proc = subprocess.Popen(cmd, env=dict(os.environ, TMPDIR=str(tmp_path)), cwd=tmp_path,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    deadline = time.monotonic() + 60
    while not list(tmp_path.glob("grader-template-*/jobs/*")) and time.monotonic() < deadline:  # a sandbox runs
        time.sleep(0.05)
    time.sleep(0.8)  # inside the student's loop (its call may take 2 s)
    sent = time.monotonic()
    proc.send_signal(signal.SIGINT)
    out, _ = proc.communicate(timeout=60)
    assert time.monotonic() - sent < 5, out.decode()
    assert proc.returncode != 0 and b"Aborted" in out
    assert list(tmp_path.glob("grader-*")) == []  # the template and the sandboxes' copies


def test_progress_goes_to_stderr_as_plain_milestone_lines_when_piped(capsys):
    """Exercise 4's re-training reports progress; off a terminal only the milestones are printed, on stderr."""
    from grader import cli, progress

    line = cli._ProgressLine()
    assert not line.tty  # pytest captures stderr: not a terminal
    progress.listen(line)
    try:
        progress.say("prenorm 50/400 (2.900)")
        progress.say("prenorm 100/400 (2.702)", milestone=True)
    finally:
        progress.listen(None)
    progress.say("nobody listens now", milestone=True)
    captured = capsys.readouterr()
    assert captured.err == "prenorm 100/400 (2.702)\n"
    assert captured.out == ""


def test_unisolated_grade_warns_in_one_line_and_require_isolation_refuses(tmp_path, monkeypatch):
    """Without bubblewrap the student's code runs as the caller: `grade` says so on the terminal (not only
    inside the report), and --require-isolation refuses before any code runs."""
    import grader.cli
    import grader.sandbox.session

    monkeypatch.chdir(tmp_path)
    for module in (grader.cli, grader.sandbox.session):
        monkeypatch.setattr(module, "bubblewrap_works", lambda: False)
    refused = CliRunner().invoke(grade_shortcut, ["exercise3", str(SOLUTION), "--require-isolation", "--seed", "1"])
    assert refused.exit_code == 2  # nothing graded
    assert "--require-isolation: bubblewrap is not available" in refused.output
    assert not (tmp_path / "reports").exists()
    warned = CliRunner().invoke(grade_shortcut, ["exercise3", str(SOLUTION), "--seed", "1"])
    assert warned.exit_code == 0, warned.output
    warnings = [line for line in warned.output.splitlines() if line.startswith("Warning: not isolated")]
    assert len(warnings) == 1 and "runs as you" in warnings[0]
    assert "plain child process" in (tmp_path / "reports" / "exercise3.html").read_text()
