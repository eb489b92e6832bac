"""The ``grader`` commands for the platforms courses use: ``export`` (gradebooks out),
``gradescope build`` (the autograder zip) and ``classroom workflow`` (a student repository's
GitHub Classroom workflow). Thin wrappers over :mod:`grader.lms`; :mod:`grader.cli` registers them.
"""
from __future__ import annotations

from pathlib import Path

import click

from . import arguments, exercises

hidden_visibility_option = click.option(
    "--hidden-visibility", type=click.Choice(["visible", "after_published", "after_due_date", "hidden"]),
    default="after_published", show_default=True,
    help="Gradescope visibility of the hidden checks' results (after_published: once grades are published).")

@click.command("export")
@click.argument("format", metavar="FORMAT")
@click.option("--gradebook", type=click.Path(file_okay=False, path_type=Path), required=True,
              help="The --out folder of a `grader batch` run (it holds gradebook.sqlite).")
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path), required=True, help="The CSV file to write.")
@click.option("--roster", type=click.Path(dir_okay=False, exists=True, path_type=Path), default=None,
              help="CSV: student, and any of name, email, sis_id, login_id, user_id, section (fills identifiers).")
@click.option("--assignment", default=None,
              help='canvas: the assignment column\'s header in Canvas\'s gradebook export, e.g. "Exercise 3 (12345)".')
@click.option("--points-possible", type=click.FloatRange(min=0, min_open=True), default=None,
              help="canvas, moodle: full marks of the assignment on the platform (scores are scaled) "
                   "[default: the exercise's points].")
@click.option("--worksheet", type=click.Path(dir_okay=False, exists=True, path_type=Path), default=None,
              help="moodle: the assignment's own Download grading worksheet; confirms each participant, "
                   "grades a team's folder onto its members, and gives the maximum grade.")
def export_command(format, gradebook, out, roster, assignment, points_possible, worksheet):
    """Write a batch's grades as FORMAT: canvas (Gradebook import CSV), moodle (offline grading
    worksheet) or csv (points per check, as grades.csv).

    Refused submissions and grader errors get no grade (blank, never 0); the reason is in the
    worksheet's Grader note (moodle) or in OUT's -notes.csv beside it (canvas).
    Example: grader export canvas --gradebook reports/exercise3 --out canvas.csv --assignment "Exercise 3 (12345)"
    """
    from .lms import export

    done = export.export(format, gradebook, out, roster=roster, assignment=assignment,
                         points_possible=points_possible, worksheet=worksheet)
    for warning in done.warnings:
        click.echo(f"Warning: {warning}", err=True)
    click.echo(f"{format}: {done.rows} student(s) written to {done.out}"
               + (f"; notes (no grade, needs review) in {done.notes}" if done.notes else ""))


@click.group("gradescope")
def gradescope_group():
    """Gradescope: the autograder zip. (A Gradescope export is graded with `grader batch`.)"""


@gradescope_group.command("build")
@click.argument("out", type=click.Path(dir_okay=False, path_type=Path))
@click.argument("exercise")
@hidden_visibility_option
def gradescope_build_command(out, exercise, hidden_visibility):
    """Write Gradescope's autograder zip for EXERCISE to OUT.

    Upload OUT as the programming assignment's autograder (Configure Autograder > Zip file upload).
    It holds setup.sh (Python, the CPU build of torch, the grader), run_autograder and this
    exercise's hidden tests: give it to Gradescope, never to students.

    Example: grader gradescope build autograder-exercise3.zip exercise3
    """
    from .lms import autograder

    names = autograder.build(out, arguments.exercise(exercise).name, hidden_visibility=hidden_visibility)
    click.echo(f"Gradescope autograder for {exercise} written to {out} ({len(names)} files; hidden checks "
               f"{hidden_visibility}). Upload it as the assignment's autograder.")


@click.group("classroom")
def classroom_group():
    """GitHub Classroom: the autograding workflow of a student repository."""


@classroom_group.command("workflow")
@click.argument("exercise")
@click.option("--out", type=click.Path(file_okay=False, path_type=Path), default=Path("."), show_default=True,
              help="The student repository (a student bundle) to write .github/workflows/classroom.yml into.")
@click.option("--timeout", "timeout_minutes", type=click.FloatRange(min=0, min_open=True), default=10,
              show_default=True, help="Minutes each check's step may take.")
def classroom_workflow_command(exercise, out, timeout_minutes):
    """Write OUT/.github/workflows/classroom.yml: each public check of EXERCISE as a GitHub Classroom
    autograding step with its points, and the `grade EXERCISE --json` output kept as an artifact.

    OUT is a student repository made from `grader release OUT --exercise EXERCISE` (a folder holding
    solutions/ or hidden tests, the course's own repository, is refused). Hidden checks never enter it:
    final grades come from `grader batch EXERCISE` over the cloned repositories.
    Example: grader release classroom-repo --exercise exercise3 && grader classroom workflow exercise3 --out classroom-repo
    """
    from .lms import classroom

    ex = exercises.load(exercise)
    torch = classroom.bundle_torch(out, ex)
    checks = classroom.public_checks(ex)
    path = out / ".github" / "workflows" / "classroom.yml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(classroom.workflow(ex, checks, timeout_minutes=timeout_minutes, torch=torch), encoding="utf-8")
    total, factor = sum(c.points for c in checks), classroom.scale(checks)
    scaled = f" (max-score: points x {factor}, as GitHub Classroom counts whole points)" if factor > 1 else ""
    click.echo(f"Workflow for {exercise}: {len(checks)} public checks, {total:g} points{scaled}, written to {path}")
