"""Grade a folder of submissions: in parallel, each in its own sandbox, resumably.

Flow: :func:`run` finds the students (:mod:`grader.lms`), skips those already in the gradebook
when resuming, and hands the rest to an executor (:mod:`grader.executors`): the local pool of judge
processes, or the workers of a Dask cluster (``scheduler``). Each worker imports torch and opens one
:class:`~grader.judge.Judge` (a pytest session) once, and grades many submissions with it
(:func:`grader.executors.grading.grade`): unpack or copy into a private temp folder, grade in a
sandbox (a uid of its own per sandbox, see :mod:`grader.sandbox.template`), render the JSON,
Gradescope JSON and HTML report. This process alone writes them (atomically) and records each grade
in the SQLite gradebook the moment it arrives, then writes ``grades.csv`` and the class overview.
"""
from __future__ import annotations

import csv
import io
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

import click

from . import exercises, judge, lms, overview
from . import scratch as scratch_folders
from .errors import InputError
from .executors import local
from .executors.grading import Outcome, Task, output_files, write_outputs
from .gradebook import Gradebook, _cell
from .lms import Submission
from .overrides import apply_overrides, check_before_grading, load_overrides, resolve_targets
from .report import write_atomic
from .results import SubmissionResult
from .rubric import groups as review
from .rubric import peers

def _remove_stale_scratch() -> None:
    """Remove what batches killed with SIGKILL left in the temp folder (workers' scratch folders,
    unpacked exports): see :mod:`grader.scratch`."""
    scratch_folders.remove_stale()


# ------------------------------------------------------------------------------ parent side
class Progress:
    """Count, rate and ETA: a bar on a terminal, a plain line every few seconds otherwise."""

    def __init__(self, total: int, label: str):
        self.total, self.done, self.start = total, 0, time.monotonic()
        self.tty = sys.stdout.isatty()
        self.last_line = 0.0
        self.label = label

    def update(self, student: str) -> None:
        self.done += 1
        elapsed = max(time.monotonic() - self.start, 1e-9)
        rate = self.done / elapsed
        eta = (self.total - self.done) / rate if rate else 0
        text = f"{self.label} {self.done}/{self.total}  {rate:.1f}/s  ETA {eta:.0f} s"
        if self.tty:
            width = 30
            filled = int(width * self.done / max(self.total, 1))
            click.echo(f"\r[{'#' * filled}{'-' * (width - filled)}] {text}  {student[:20]:<20}", nl=False)
            if self.done == self.total:
                click.echo()
        elif time.monotonic() - self.last_line >= 2 or self.done == self.total:
            click.echo(text)
            self.last_line = time.monotonic()


def run(exercise_name: str, submissions_dir: Path, out: Path, *, jobs: int = 2, resume: bool = False,
        budget: float | None = None, seed: int | None = None, overrides: Path | None = None,
        layout: str = "auto", scheduler: str | None = None, allow_unisolated: bool = False) -> Gradebook:
    """Grade every submission in ``submissions_dir``; write the gradebook, CSV and overview to ``out``.

    Args:
        exercise_name: e.g. ``exercise3``.
        submissions_dir: one sub-folder or ``.zip`` per student, or a platform's export (a folder, or
            Gradescope's export zip): see :mod:`grader.lms`.
        out: output folder (``gradebook.sqlite``, ``students.csv`` (the id mapping), ``grades.csv``,
            ``index.html``, ``reports/``, ``results/``, ``gradescope/``).
        jobs: judge processes working in parallel.
        resume: keep the grades already in ``out`` and grade only the missing students.
        budget: wall seconds each submission's code may use in total (None: per-call limits only).
        seed: seed of a new batch (a resumed batch keeps its own; another seed is refused).
        overrides: an instructor's overrides CSV (see :mod:`grader.overrides`), checked against the
            exercise's checks before grading, merged into every graded student's result, row, report
            and Gradescope JSON after grading.
        layout: one of :data:`grader.lms.LAYOUTS`, or ``auto`` to detect it.
        scheduler: a Dask scheduler's address (``tcp://host:8786``): grade on its workers
            (:mod:`grader.executors.cluster`) instead of ``jobs`` local processes.
        allow_unisolated: on a cluster, let workers without bubblewrap grade (the local pool's
            check is the CLI's, before any grading).

    Returns:
        The (closed) gradebook, for its path and seed.

    Raises:
        InputError: bad arguments, no submission found, ``out`` already holds grades and ``resume``
            is off, ``resume`` with another seed than the gradebook's, or an overrides row naming a
            check the exercise does not have (:class:`~grader.overrides.OverrideError`); on a
            cluster: no scheduler at ``scheduler``, or no worker that may grade (the reasons listed).
        ClusterLost: the scheduler went away mid-batch (what was graded is kept: ``resume``).
    """
    exercise = exercises.load(exercise_name)
    if jobs < 1:
        raise InputError(f"--jobs must be at least 1, got {jobs}")
    decisions = load_overrides(overrides) if overrides else {}  # a bad file fails before any grading
    if decisions:  # so does a check the exercise does not have (its checks collected, nothing graded)
        check_before_grading(decisions, exercise.name, judge.collected_checks(exercise))
    db_path = out / "gradebook.sqlite"
    if db_path.exists() and not resume:
        raise InputError(f"{out} already holds a gradebook; add --resume to finish it, or choose another --out")
    _remove_stale_scratch()
    with lms.opened(submissions_dir) as folder:
        found = lms.discover(folder, layout)
        return _run_found(exercise, found, out, jobs=jobs, resume=resume, budget=budget, seed=seed,
                          decisions=decisions, scheduler=scheduler, allow_unisolated=allow_unisolated)


def _run_found(exercise: exercises.Exercise, found: lms.Found, out: Path, *, jobs: int, resume: bool,
               budget: float | None, seed: int | None, decisions: dict, scheduler: str | None = None,
               allow_unisolated: bool = False) -> Gradebook:
    students = found.submissions
    _show_mapping(found, out)
    with Gradebook(out / "gradebook.sqlite", exercise.name, judge.new_seed() if seed is None else seed) as book:
        if resume and seed is not None and seed != book.seed:
            raise InputError(f"{out} was graded with seed {book.seed}; --resume keeps it (leave out --seed "
                             f"{seed}, or grade into another --out)")
        done = book.students(status="graded")  # refused rows and grader errors are tried again
        todo = [s for s in students if s.student not in done and not s.problem]
        for sub in students:
            if sub.problem:
                book.record(sub.student, "refused", error=sub.problem, identity=sub.identity())
        click.echo(f"{exercise.name}: {len(students)} submissions, {len(done & {s.student for s in students})} "
                   f"already graded, {len(todo)} to grade "
                   f"{f'on the Dask cluster at {scheduler}' if scheduler else f'with {jobs} worker(s)'}; seed {book.seed}")
        progress = Progress(len(todo), "graded")
        # The overview's plotting library loads while the workers grade (once they have started: not
        # competing with their start), not after the last grade.
        threading.Thread(target=_load_plotting_once_grading, args=(progress,), name="load-matplotlib",
                         daemon=True).start()
        wind_down = _grade_all(todo, exercise.name, out, book, jobs, budget, progress, scheduler, allow_unisolated)
        texts = review.answer_texts(exercise, students)  # the answers' texts, for the review groups
        if decisions:
            try:  # an unknown group is known only now: its error must not leave the workers running
                _merge_overrides(book, out, decisions, texts)
            except BaseException:
                wind_down()
                raise
        similar = peers.batch_pairs(exercise.root, texts)  # copying between students: flagged, never scored
        if similar is not None:
            _flag_similar(book, out, similar)
            write_atomic(out / "similar_answers.csv", peers.to_csv(similar))
        book.write_csv(out / "grades.csv")
        rows = book.rows()
        write_atomic(out / "index.html", overview.render(exercise, rows, review.review_groups(rows, texts),
                                                         similar=peers.for_overview(similar or [])))
        for row in rows:  # what needs the instructor's eye, once, at the end
            if row["status"] != "graded":
                click.echo(f"{row['status']}: {row['student']!r}: {row['error'][:300]}")
        wind_down()
    return book


#: Lines of the id mapping printed before grading (all of it is in OUT/students.csv).
MAPPING_LINES = 20


def _show_mapping(found: lms.Found, out: Path) -> None:
    """Print the layout and how export entries became student ids; write all of it to ``out/students.csv``."""
    subs = found.submissions
    click.echo(f"Layout: {found.layout} ({found.reason}); {len(subs)} student(s):")
    rows = []
    for sub in subs:
        who = ", ".join(x for x in (sub.name, sub.email, f"SIS {sub.sis_id}" if sub.sis_id else "") if x)
        flags = " (late)" if sub.late else ""
        rows.append((sub.student, who, flags, sub.entries, sub.problem))
    for student, who, flags, entries, problem in rows[:MAPPING_LINES]:
        shown = ", ".join(entries[:3]) + (f", ... ({len(entries)} entries)" if len(entries) > 3 else "")
        click.echo(f"  {student}{' = ' + who if who else ''}{flags} <- {shown}"
                   + (f"  [refused: {problem}]" if problem else ""))
    if len(rows) > MAPPING_LINES:
        click.echo(f"  ... and {len(rows) - MAPPING_LINES} more (all in {out / 'students.csv'})")
    fh = io.StringIO(newline="")
    writer = csv.writer(fh)
    writer.writerow(["student", "name", "email", "sis_id", "user_id", "late", "layout", "entries", "problem"])
    for sub in subs:
        writer.writerow([_cell(x) for x in (sub.student, sub.name, sub.email, sub.sis_id, sub.user_id,
                                            "late" if sub.late else "", sub.layout, " | ".join(sub.entries),
                                            sub.problem)])
    write_atomic(out / "students.csv", fh.getvalue())


def _load_plotting_once_grading(progress: Progress) -> None:
    while progress.done == 0:
        time.sleep(0.1)
    overview.load_plotting()


def _write_outputs(out: Path, student: str, result: SubmissionResult) -> None:
    """Write a student's JSON, Gradescope JSON and report; all are rendered before any is written,
    so a failure leaves none of them (rather than some that disagree with the gradebook)."""
    write_outputs(out, output_files(student, result))


def _flag_similar(book: Gradebook, out: Path, pairs: list) -> None:
    """Flag both students of every similar pair for review and rewrite their outputs; points are unchanged
    (who copied whom is unknown): see :mod:`grader.rubric.peers`."""
    reasons: dict[str, list[str]] = {}
    for pair in pairs:
        for student in (pair.a, pair.b):
            reasons.setdefault(student, []).append(peers.review_reason(pair, student))
    for row in book.rows():
        result = row["result"]
        if row["student"] in reasons and result is not None:
            result.needs_review = list(dict.fromkeys([*result.needs_review, *reasons[row["student"]]]))
            book.record(row["student"], row["status"], result=result, error=row["error"])
            _write_outputs(out, row["student"], result)


def _merge_overrides(book: Gradebook, out: Path, decisions: dict, texts: dict[str, str]) -> None:
    """Apply the instructor's decisions to the graded rows and rewrite those students' outputs; group
    rows are resolved against the batch's review groups (computed from ``texts``, the answers)."""
    rows = {r["student"]: r for r in book.rows()}
    groups = review.members_by_id(review.review_groups(list(rows.values()), texts))
    decisions = resolve_targets(decisions, set(rows), groups)
    unknown = sorted(set(decisions) - set(rows))
    if unknown:
        click.echo(f"Overrides name students not in this batch: {', '.join(unknown)}", err=True)
    planned = []
    for student, decided in decisions.items():  # every row is checked before anything is written
        row = rows.get(student)
        if row is not None and row["result"] is not None:
            planned.append((row, apply_overrides(row["result"], decided)))
    for row, result in planned:
        book.record(row["student"], row["status"], result=result, error=row["error"])
        _write_outputs(out, row["student"], result)
    click.echo(f"Overrides applied for {len(set(decisions) & set(rows))} student(s).")


def _grade_all(todo: list[Submission], exercise: str, out: Path, book: Gradebook, jobs: int,
               budget: float | None, progress: Progress, scheduler: str | None = None,
               allow_unisolated: bool = False) -> Callable[[], None]:
    """Grade ``todo`` on the local pool (:mod:`grader.executors.local`) or, with ``scheduler``, on a
    Dask cluster (:mod:`grader.executors.cluster`); each outcome's files are written and its grade
    recorded in the gradebook the moment it arrives. Returns the executor's wind-down (see
    :func:`grader.executors.local.grade_all`)."""
    tasks = [Task(exercise, s.student, str(s.source), book.seed, budget, s.files) for s in todo]
    identity = {s.student: s.identity() for s in todo}

    def record(outcome: Outcome) -> None:
        try:  # before the gradebook: a grade never points at missing files
            write_outputs(out, outcome.files)
        except OSError as exc:  # a full disk, a folder in the way: this student's grader error, not the batch's end
            outcome = Outcome(outcome.student, "grader_error", error=f"could not write the outputs: {exc}"[:500])
        result = SubmissionResult.from_dict(outcome.result) if outcome.result else None
        book.record(outcome.student, outcome.status, result=result, error=outcome.error,
                    identity=identity[outcome.student])
        progress.update(outcome.student)

    if not tasks:  # nothing left (a --resume that only merges overrides): no pool, no cluster needed
        return lambda: None
    if scheduler:
        from .executors import cluster  # imports dask.distributed: only when asked for

        return cluster.grade_all(tasks, scheduler, record, allow_unisolated=allow_unisolated)
    return local.grade_all(tasks, jobs, record)
