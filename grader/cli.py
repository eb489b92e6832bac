"""Command line: ``grade`` (the student's shortcut) and ``grader`` (everything).

Each command is a thin wrapper over :mod:`grader.judge`, :mod:`grader.report` and
:mod:`grader.exercises`; what the user typed is checked first (:mod:`grader.arguments`). Exit
statuses (:mod:`grader.errors`): 0 full marks, 1 graded below full marks, 2 usage or input error.
``NO_COLOR`` (https://no-color.org), set and not empty, turns colours off everywhere.
"""
from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import click

from . import arguments, exercises, judge, progress, report
from .errors import InputError, graded_status
from .cli_platforms import classroom_group, export_command, gradescope_group, hidden_visibility_option
from .lms import LAYOUTS
from .sandbox import bubblewrap_works
from .sandbox.isolation import unsupported_platform

#: -h as well as --help, on ``grade`` and on every ``grader`` command.
CONTEXT = {"help_option_names": ["-h", "--help"]}
PACKAGE = "transformer-lesson-grader"


class _ProgressLine:
    """Shows :mod:`grader.progress` on stderr: one line rewritten in place on a terminal, the milestones as
    plain lines when stderr is a pipe or a file (a log stays readable)."""

    def __init__(self):
        self.tty = sys.stderr.isatty()
        self.width = 0

    def __call__(self, text: str, milestone: bool) -> None:
        if self.tty:
            text = text[:150]
            sys.stderr.write("\r" + text.ljust(self.width))
            self.width = len(text)
            sys.stderr.flush()
        elif milestone:
            click.echo(text, err=True)

    def clear(self) -> None:
        if self.tty and self.width:
            sys.stderr.write("\r" + " " * self.width + "\r")
            sys.stderr.flush()


def _no_color() -> None:
    """Honour NO_COLOR (https://no-color.org: set and not empty): click.echo strips every style then."""
    if os.environ.get("NO_COLOR"):
        click.get_current_context().color = False


def _platform_or_refuse() -> None:
    """Raises InputError (nothing graded) where no sandbox can start, e.g. Windows (no os.fork)."""
    unsupported = unsupported_platform()
    if unsupported:
        raise InputError(unsupported)


def _dask_or_refuse() -> None:
    """Raises InputError when ``distributed`` (the ``dask`` extra) is not installed."""
    try:
        import distributed  # noqa: F401
    except ImportError:
        raise InputError("--scheduler needs Dask's distributed package: pip install -e \".[dask]\" "
                         "(or pip install distributed), on this machine and on every worker.") from None


def _isolation_or_warning(require: bool) -> None:
    """Without bubblewrap, one line on stderr says student code runs unisolated; ``require`` refuses instead.

    Raises:
        InputError: ``require`` and no bubblewrap, or a platform where no sandbox can start.
    """
    _platform_or_refuse()
    if bubblewrap_works():
        return
    if require:
        raise InputError(
            "--require-isolation: bubblewrap is not available here, so the code would run as you, with your "
            "files and network. Install it (apt-get install bubblewrap) or leave out --require-isolation.")
    click.echo("Warning: not isolated: bubblewrap is not available, so the graded code runs as you, with your files "
               "and network (apt-get install bubblewrap).", err=True)


def _grade_and_show(name: str, submission: Path, *, seed: int | None, as_json: bool,
                    report_path: Path | None, verbose: bool = False, quick: bool = False,
                    require_isolation: bool = False, checks: tuple[str, ...] = (), container: str = ""):
    exercise = exercises.load(name)
    if not container:  # --isolation container: this machine is the submission's own (grader.sandbox.container)
        _isolation_or_warning(require_isolation)
    line = _ProgressLine()
    progress.listen(line)
    try:
        result = judge.grade(exercise, submission, seed=seed, quick=quick, checks=checks)
    finally:
        progress.listen(None)
        line.clear()
    if container:
        result.isolation = f"{container}; sandbox: {result.isolation}"
    path = report.write_html(result, report_path or Path("reports") / f"{name}.html")
    if as_json:
        click.echo(json.dumps(result.summary(), indent=2))
    else:
        click.echo(report.terminal_summary(result, verbose=verbose))
        click.echo(f"Report: {path}")
    if result.grader_errors:
        click.echo(f"Warning: {len(result.grader_errors)} check(s) hit an error of the grader itself (not your "
                   "fault): this grade is incomplete; please tell the course staff.", err=True)
    return result


seed_option = click.option("--seed", type=click.IntRange(min=0), default=None,
                           help="Seed for the randomised checks (printed with every grade; reuse it to reproduce).")
json_option = click.option("--json", "as_json", is_flag=True,
                           help="Print one JSON object (exercise, score, max_score, seed, checks) instead of the summary.")
quick_option = click.option("--quick", is_flag=True,
                            help="Run only the fast checks (leaves out slow ones such as re-training).")
isolation_option = click.option(
    "--require-isolation", is_flag=True,
    help="Refuse to grade unless bubblewrap isolates the code (by default a warning is printed).")
check_option = click.option(
    "--check", "checks", multiple=True, metavar="NAME",
    help="Run only this check (repeatable) and the checks it depends on; exits 0 when all of them pass. "
         "A GitHub Classroom workflow runs each public check this way.")
report_option = click.option("--report", "report_path", type=click.Path(dir_okay=False, path_type=Path),
                             default=None, help="Where to write the HTML report [default: reports/EXERCISE.html].")


@click.group(context_settings=CONTEXT)
@click.version_option(package_name=PACKAGE, prog_name="grader")
def main():
    """Grader for the lesson on multi-head attention and the transformer block.

    Exit statuses: 0 full marks (or success), 1 graded below full marks, 2 usage or input error.
    """
    _no_color()


for _command in (export_command, gradescope_group, classroom_group):
    main.add_command(_command)


@main.command("grade")
@click.argument("exercise")
@click.option("--submission", type=click.Path(path_type=Path), required=True,
              help="Folder holding the submission's files.")
@seed_option
@json_option
@report_option
@quick_option
@isolation_option
@click.option("--isolation", type=click.Choice(["auto", "container"]), default="auto", show_default=True,
              help="container: this machine is Gradescope's throwaway container for this one submission, so "
                   "where bubblewrap does not work the plain child process with rlimits is acceptable; refused "
                   "there unless /autograder is Gradescope's (see --force-container).")
@click.option("--force-container", is_flag=True,
              help="With --isolation container: accept it even where /autograder is not Gradescope's (another "
                   "platform that gives each submission a throwaway machine).")
@click.option("--gradescope", "gradescope_path", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Also write Gradescope's results.json here (the files may then be nested in --submission).")
@hidden_visibility_option
@click.option("-v", "--verbose", is_flag=True, help="List passed checks too.")
def grade_command(exercise, submission, seed, as_json, report_path, quick, require_isolation, isolation,
                  force_container, gradescope_path, hidden_visibility, verbose):
    """Grade one submission folder.

    Exits 0 on full marks, 1 below full marks (or when a check hit a grader error), 2 when nothing
    was graded (unknown exercise, no such folder, none of the exercise's files in it).
    Example: grader grade exercise3 --submission solutions/exercise3 --json

    Gradescope's run_autograder: grader grade exercise3 --submission /autograder/submission
    --gradescope /autograder/results/results.json --isolation container
    """
    from .errors import InputError
    from .sandbox.container import container_isolation

    if force_container and isolation != "container":
        raise InputError("--force-container goes with --isolation container; add that, or leave both out")
    container = container_isolation(force_container) if isolation == "container" else ""
    ex = arguments.exercise(exercise)
    if gradescope_path is not None:  # an empty upload still gets a results.json: its checks say what is missing
        from .lms import gradescope

        submission, upload_note = gradescope.upload_folder(submission, ex.files)
    else:
        submission = arguments.submission_folder(ex, submission, lambda e, f: f"grader grade {e} --submission {f}")
    report_path = arguments.report_path(report_path, exercise, submission)
    result = _grade_and_show(exercise, submission, seed=seed, as_json=as_json, report_path=report_path,
                             verbose=verbose, quick=quick, require_isolation=require_isolation, container=container)
    if gradescope_path is not None:
        result.notes += [upload_note] if upload_note else []
        data = gradescope.results_json(result, hidden_visibility=hidden_visibility)
        click.echo(f"Gradescope results: {report.write_atomic(gradescope_path, json.dumps(data, indent=2))}", err=True)
    sys.exit(graded_status(result))


@main.command("batch")
@click.argument("exercise")
@click.argument("submissions", type=click.Path(path_type=Path))
@click.option("--out", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Output folder [default: reports/EXERCISE].")
@click.option("--jobs", type=int, default=2, show_default=True, help="Submissions graded in parallel.")
@click.option("--resume", is_flag=True, help="Keep the grades already in --out; grade only the missing students.")
@click.option("--timeout", type=click.FloatRange(min=0, min_open=True), default=None,
              help="Wall seconds one submission's code may use in total [default: per-call limits only].")
@click.option("--allow-unisolated", is_flag=True,
              help="Grade even without bubblewrap (student code then runs as you, with your file access).")
@click.option("--overrides", type=click.Path(dir_okay=False, exists=True, path_type=Path), default=None,
              help="Instructor overrides CSV (student,check,points,comment) merged into the grades.")
@click.option("--layout", type=click.Choice(["auto", *LAYOUTS]), default="auto", show_default=True,
              help="How SUBMISSIONS is laid out (auto: detected, and printed before grading).")
@click.option("--scheduler", metavar="ADDRESS", default=None,
              help="Grade on the workers of this Dask scheduler (e.g. tcp://host:8786) instead of --jobs local "
                   "processes; needs the dask extra (README: Grading on a cluster).")
@seed_option
def batch_command(exercise, submissions, out, jobs, resume, timeout, allow_unisolated, seed, overrides, layout,
                  scheduler):
    """Grade every submission in SUBMISSIONS: one folder or .zip per student, or an export
    from Canvas, Moodle, Gradescope (its folder or zip) or GitHub Classroom clones.

    Prints the layout and the student ids before grading (all of them in OUT/students.csv).
    Writes OUT/gradebook.sqlite (a row per student, as soon as graded), grades.csv,
    index.html (class overview), reports/STUDENT.html, results/STUDENT.json and
    gradescope/STUDENT/results.json. Interrupt at any time; --resume finishes the job.

    Overrides can be added later: run again with --resume --overrides FILE.

    Example: grader batch exercise3 submissions/ --jobs 2
    """
    from . import batch

    if scheduler:  # each worker checks its own sandbox (grader.executors.cluster)
        _dask_or_refuse()
    else:
        _platform_or_refuse()
    if not scheduler and not bubblewrap_works() and not allow_unisolated:
        raise InputError(
            "bubblewrap is not available, so student code would run as you, able to read and change every "
            "file you can (other students' work, the gradebook). Install it (apt-get install bubblewrap) or "
            "pass --allow-unisolated.")
    out = out or Path("reports") / exercise
    book = batch.run(exercise, submissions, out, jobs=jobs, resume=resume, budget=timeout, seed=seed,
                     overrides=overrides, layout=layout, scheduler=scheduler, allow_unisolated=allow_unisolated)
    click.echo(f"Gradebook: {book.path}\nGrades: {out / 'grades.csv'}\nOverview: {out / 'index.html'}")


@main.command("release")
@click.argument("out", type=click.Path(file_okay=False, path_type=Path))
@click.option("--exercise", "only", multiple=True, help="Include only this exercise (repeatable).")
def release_command(out, only):
    """Write the student bundle to OUT: skeletons, READMEs, public tests and the grader.

    Never includes solutions/, hidden tests or the grader's own tests.
    Example: grader release dist/students
    """
    from . import release

    names = release.build(out, list(only) or None)
    click.echo(f"Release for {', '.join(names)} written to {out}")


@main.command("list")
def list_command():
    """List the exercises and what a submission must contain."""
    for name in exercises.available():
        ex = exercises.load(name)
        hidden = "public + hidden tests" if ex.has_hidden_tests else "public tests only"
        click.echo(f"{name}  {ex.title}  (files: {', '.join(ex.files)}; {hidden})")


@main.command("check-solutions")
@seed_option
@click.option("--exercise", "only", multiple=True, help="Check only this exercise (repeatable).")
def check_solutions_command(seed, only):
    """Course CI: reference solutions get full marks, skeletons get 0, known mistakes are caught.

    Known mistakes are the cases in tests/corpus/EXERCISE/ (each with its expected.toml). Ends with
    "N ok, M failed"; under GitHub Actions (GITHUB_ACTIONS=true) each failure is also an ::error
    annotation on the case's expected.toml or the solution's file. Exits 1 when anything does not hold.
    Example: grader check-solutions --seed 1
    """
    from . import annotations, solutions

    names = [arguments.exercise(name).name for name in only] or exercises.available()  # a typo: exit 2
    seed = judge.new_seed() if seed is None else seed
    outcomes = solutions.check(names, seed)
    click.echo(f"seed {seed}")
    failed = [o for o in outcomes if o.problems]
    if annotations.in_github_actions():
        for o in failed:
            click.echo(annotations.error("\n".join(o.problems), title=o.label, file=o.file, line=o.line))
    click.echo(f"{len(outcomes) - len(failed)} ok, {len(failed)} failed")
    if failed:
        sys.exit(1)


@click.command(context_settings=CONTEXT)
@click.version_option(package_name=PACKAGE, prog_name="grade")
@click.argument("exercise", required=False)
@click.argument("folder", required=False, type=click.Path(path_type=Path))
@seed_option
@json_option
@report_option
@quick_option
@isolation_option
@check_option
@click.option("-v", "--verbose", is_flag=True, help="List passed checks too.")
def grade_shortcut(exercise, folder, seed, as_json, report_path, quick, require_isolation, checks, verbose):
    """Grade your work on EXERCISE: the folder ./EXERCISE, or FOLDER when given.

    EXERCISE may also be the path of your folder (its name is the exercise). Writes
    reports/EXERCISE.html (beside your folder when run inside it: `grade .`). Exits 0 on full marks,
    1 below full marks (or when a check hit a grader error), 2 when nothing was graded.

    Examples: grade exercise3 / grade ~/course/exercise3 / grade . / grade exercise3 my_attempt/
    """
    _no_color()
    exercise, folder = arguments.shortcut_target(exercise, folder)
    folder = arguments.submission_folder(arguments.exercise(exercise), folder,
                                         lambda e, f: f"grade {e}" if f == e else f"grade {e} {f}")
    report_path = arguments.report_path(report_path, exercise, folder)
    result = _grade_and_show(exercise, folder, seed=seed, as_json=as_json, report_path=report_path,
                             verbose=verbose, quick=quick, require_isolation=require_isolation, checks=checks)
    if checks:  # a check worth 0 points (a gate) must still fail the step that runs it
        _exit_checks(checks, result, quick)
    sys.exit(graded_status(result))


def _exit_checks(checks: tuple[str, ...], result, quick: bool) -> None:
    """Exit for ``grade --check NAME``: 0 when every named check ran and it and the checks it depends on
    passed, 1 when one of them did not pass, 2 when a named check did not run at all (``--quick`` leaves
    out a slow one: the step must not pass on a check that was never made)."""
    ran = [name for name in checks if any(c.name == name or c.name.startswith(name + "[") for c in result.checks)]
    missing = [name for name in checks if name not in ran]
    if missing:
        why = "--quick leaves out slow checks; run it without --quick" if quick else "nothing graded it"
        click.echo(f"Error: {', '.join(missing)} did not run ({why}).", err=True)
        sys.exit(2)
    sys.exit(0 if all(c.status == "passed" for c in result.checks) else 1)
