"""Grade a folder of submissions: in parallel, each in its own sandbox, resumably.

Flow: :func:`run` finds the students (:mod:`grader.submissions`), skips those already in
the gradebook when resuming, and hands the rest to a pool of judge processes. Each worker
imports torch and opens one :class:`~grader.judge.Judge` (a pytest session) once, and grades
many submissions with it (:func:`_grade_one`): unpack or copy into a private temp folder, grade in a sandbox
(a uid of its own per sandbox, see :mod:`grader.sandbox.template`), write the JSON, Gradescope JSON and
HTML report atomically. The parent records each grade in the SQLite gradebook the moment it arrives,
then writes ``grades.csv`` and the class overview.
"""
from __future__ import annotations

import _thread
import atexit
import csv
import io
import json
import multiprocessing
import os
import shutil
import signal
import sys
import tempfile
import threading
import time
import traceback
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from pathlib import Path

import click

from . import exercises, judge, overview, report
from . import scratch as scratch_folders
from .report import write_atomic
from .gradebook import Gradebook, _cell
from .overrides import apply_overrides, check_before_grading, load_overrides
from .results import SubmissionResult
from .sandbox.session import _not_copied
from . import lms
from .errors import InputError
from .lms import Submission, gradescope
from .lms.unpack import MAX_UNZIPPED_BYTES, RefusedSubmission, locate, safe_extract

#: Name of the lock file a worker holds in its scratch folder while it lives.
SCRATCH_LOCK = scratch_folders.LOCK
#: Times a submission is retried after the worker grading it died.
MAX_ATTEMPTS = 2


@dataclass(frozen=True)
class Task:
    """What a worker needs to grade one submission (picklable)."""

    exercise: str
    student: str
    source: str
    out: str
    seed: int
    budget: float | None
    files: tuple[tuple[str, str], ...] = ()  # Submission.files: loose exported files (Canvas)


# ------------------------------------------------------------------------------ worker side
_judges: dict[str, judge.Judge] = {}  # this worker's open pytest session per exercise
_idle = threading.Event()  # set while this worker is not grading (see _exit_with_parent)
_idle.set()
_stopping = False  # the batch process is gone: take no further submission
_stop_lock = threading.Lock()  # _grade_one starting against the watchdog deciding to stop


def _init_worker(parent: int) -> None:
    """Runs once per worker: a scratch folder that holds every temp folder of its gradings
    (copies, sandboxes; claimed with a lock held for the worker's life), torch imported and
    pinned to one thread, and a watchdog that stops the worker when the batch process dies."""
    # matplotlib's font cache stays in the shared temp folder (building it takes seconds).
    os.environ.setdefault("MPLCONFIGDIR", os.path.join(tempfile.gettempdir(), "grader-matplotlib"))
    folder, _lock = scratch_folders.claim("worker")  # the lock holds until this process ends
    scratch = str(folder)
    tempfile.tempdir = scratch
    atexit.register(shutil.rmtree, scratch, True)
    signal.signal(signal.SIGINT, signal.default_int_handler)  # _thread.interrupt_main needs it
    threading.Thread(target=_exit_with_parent, args=(parent, scratch), name="parent-watchdog", daemon=True).start()
    import torch

    torch.set_num_threads(1)


def _remove_stale_scratch() -> None:
    """Remove what batches killed with SIGKILL left in the temp folder (workers' scratch folders,
    unpacked exports): see :mod:`grader.scratch`."""
    scratch_folders.remove_stale()


def _exit_with_parent(parent: int, scratch: str, grace: float = 10.0) -> None:
    """Stop this worker once the batch process ``parent`` is gone (SIGTERM, SIGKILL, a crash).

    The pool's pipes stay open in the workers, so an orphaned worker would otherwise block
    forever. The submission being graded is interrupted first (Judge.grade stops its sandbox);
    once that is done, or after ``grace`` seconds, the worker's ``scratch`` folder is removed
    (the interrupt may have landed in the middle of a cleanup) and the worker exits.
    """
    global _stopping
    while os.getppid() == parent:
        time.sleep(0.5)
    with _stop_lock:
        _stopping = True
        busy = not _idle.is_set()
    if busy:
        _thread.interrupt_main()  # KeyboardInterrupt in _grade_one: Judge.grade cancels the job
        _idle.wait(grace)
    shutil.rmtree(scratch, ignore_errors=True)
    os._exit(1)


def _copy_folder(source: Path, dest: Path) -> None:
    """Copy a folder submission: plain files only (no links, FIFOs or devices), size-capped. What is
    not copied (a git repository's ``.git``, caches: :func:`_not_copied`) is not looked at or counted."""
    total = 0
    for folder, dirs, files in os.walk(source):
        skipped = _not_copied(folder, dirs + files)
        dirs[:] = [d for d in dirs if d not in skipped]
        for name in dirs + files:
            path = Path(folder, name)
            if name in skipped:
                continue
            if path.is_symlink():
                raise RefusedSubmission(f"the submission contains a symbolic link ({path.relative_to(source)}); "
                                        "submit plain files.")
            if path.is_file():
                total += path.stat().st_size
    if total > MAX_UNZIPPED_BYTES:
        raise RefusedSubmission(f"the submission holds {total:,} bytes; at most {MAX_UNZIPPED_BYTES:,} are accepted "
                                "(leave out virtual environments and data).")
    shutil.copytree(source, dest, ignore=_not_copied)


def _copy_files(files: tuple[tuple[str, str], ...], dest: Path) -> None:
    """Gather a platform's loose files (Canvas, Moodle) into one submission folder: each ``(name, path)``
    is copied as ``name`` (a relative path); a submission that is a single ``.zip`` is unpacked instead."""
    if len(files) == 1 and files[0][0].lower().endswith(".zip"):
        safe_extract(Path(files[0][1]), dest)
        return
    dest.mkdir(parents=True)
    total = 0
    for name, path in files:
        total += os.lstat(path).st_size
        if total > MAX_UNZIPPED_BYTES:
            raise RefusedSubmission(f"the submission's files hold more than {MAX_UNZIPPED_BYTES:,} bytes.")
        if Path(path).is_symlink() or not Path(path).is_file():
            raise RefusedSubmission(f"{Path(path).name} is not a plain file; submit plain files.")
        (dest / name).parent.mkdir(parents=True, exist_ok=True)  # Moodle keeps a submission's sub-folders
        shutil.copyfile(path, dest / name)


def _grade_one(task: Task) -> tuple[str, str, dict | None, str]:
    """Grade one submission in this worker. Returns (student, status, result dict, error).

    Status is ``graded``, ``refused`` (bad zip, files missing) or ``grader_error``.
    """
    with _stop_lock:
        if not _stopping:
            _idle.clear()
    if _stopping:  # the batch is gone and the watchdog is ending this process: start nothing
        threading.Event().wait()
    try:
        return _grade_in_temp_folder(task)
    finally:
        _idle.set()


def _grade_in_temp_folder(task: Task) -> tuple[str, str, dict | None, str]:
    exercise = exercises.load(task.exercise)
    out = Path(task.out)
    with tempfile.TemporaryDirectory(prefix="grader-batch-") as tmp:
        try:
            source = Path(task.source)
            unpacked = Path(tmp) / "submission"
            if task.files:
                _copy_files(task.files, unpacked)
            elif source.is_dir():
                _copy_folder(source, unpacked)
            else:
                safe_extract(source, unpacked)
            folder = locate(unpacked, exercise.files, exercise.name, exercise.skeleton)
        except RefusedSubmission as exc:
            return task.student, "refused", None, str(exc)
        try:
            if exercise.name not in _judges:
                _judges[exercise.name] = judge.Judge(exercise)
            result = _judges[exercise.name].grade(folder, seed=task.seed, budget=task.budget)
            result.submission = task.student
            _write_outputs(out, task.student, result)
        except Exception as exc:  # noqa: BLE001 - a grader crash is recorded, never the student's zero
            traceback.print_exc()  # the whole traceback for the instructor's terminal; one line in the gradebook
            return task.student, "grader_error", None, f"{type(exc).__name__}: {exc}"[:500]
    status = "grader_error" if result.grader_errors else "graded"
    error = "; ".join(f"{c.name}: {c.feedback}" for c in result.grader_errors)
    return task.student, status, result.to_dict(), error


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
        layout: str = "auto") -> Gradebook:
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

    Returns:
        The (closed) gradebook, for its path and seed.

    Raises:
        InputError: bad arguments, no submission found, ``out`` already holds grades and ``resume``
            is off, ``resume`` with another seed than the gradebook's, or an overrides row naming a
            check the exercise does not have (:class:`~grader.overrides.OverrideError`).
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
                          decisions=decisions)


def _run_found(exercise: exercises.Exercise, found: lms.Found, out: Path, *, jobs: int, resume: bool,
               budget: float | None, seed: int | None, decisions: dict) -> Gradebook:
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
                   f"already graded, {len(todo)} to grade with {jobs} worker(s); seed {book.seed}")
        progress = Progress(len(todo), "graded")
        # The overview's plotting library loads while the workers grade (once they have started: not
        # competing with their start), not after the last grade.
        threading.Thread(target=_load_plotting_once_grading, args=(progress,), name="load-matplotlib",
                         daemon=True).start()
        pools = _grade_all(todo, exercise.name, out, book, jobs, budget, progress)
        if decisions:
            _merge_overrides(book, out, decisions)
        book.write_csv(out / "grades.csv")
        rows = book.rows()
        write_atomic(out / "index.html", overview.render(exercise, rows))
        for row in rows:  # what needs the instructor's eye, once, at the end
            if row["status"] != "graded":
                click.echo(f"{row['status']}: {row['student']!r}: {row['error'][:300]}")
        for pool in pools:
            pool.shutdown(wait=True)
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
    files = [(out / "results" / f"{student}.json", result.to_json()),
             (out / "gradescope" / student / "results.json", json.dumps(gradescope.results_json(result), indent=2)),
             (out / "reports" / f"{student}.html", report.render_html(result))]
    for path, text in files:
        write_atomic(path, text)


def _merge_overrides(book: Gradebook, out: Path, decisions: dict) -> None:
    """Apply the instructor's decisions to the graded rows and rewrite those students' outputs."""
    rows = {r["student"]: r for r in book.rows()}
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
               budget: float | None, progress: Progress) -> list[ProcessPoolExecutor]:
    """Grade ``todo`` in pools of ``jobs`` workers, recording each grade as it arrives.

    Returns the pools, already told to shut down: their workers wind down (judges closed, sandboxes'
    templates stopped, scratch folders removed) while the caller writes the CSV and the overview,
    and the caller joins them with ``shutdown(wait=True)``.
    """
    tasks = [Task(exercise, s.student, str(s.source), str(out), book.seed, budget, s.files) for s in todo]
    identity = {s.student: s.identity() for s in todo}
    attempts: dict[str, int] = {}
    context = multiprocessing.get_context("spawn")
    pools = []
    while tasks:
        retry: list[Task] = []
        pool = ProcessPoolExecutor(max_workers=min(jobs, len(tasks)), mp_context=context,
                                   initializer=_init_worker, initargs=(os.getpid(),))
        try:
            futures = {pool.submit(_grade_one, t): t for t in tasks}
            while futures:
                finished, _ = wait(futures, return_when=FIRST_COMPLETED)
                for future in finished:
                    task = futures.pop(future)
                    try:
                        student, status, data, error = future.result()
                    except BrokenProcessPool:
                        attempts[task.student] = attempts.get(task.student, 0) + 1
                        if attempts[task.student] < MAX_ATTEMPTS:
                            retry.append(task)
                            continue
                        student, status, data, error = (task.student, "grader_error", None,
                                                        "the grading worker died twice on this submission")
                    except Exception as exc:  # noqa: BLE001 - recorded as a grader error
                        student, status, data, error = task.student, "grader_error", None, repr(exc)
                    result = SubmissionResult.from_dict(data) if data else None
                    book.record(student, status, result=result, error=error, identity=identity[student])
                    progress.update(student)
        except BaseException:
            pool.shutdown(wait=True, cancel_futures=True)  # e.g. Ctrl-C: as a `with` block would
            raise
        pool.shutdown(wait=False)
        pools.append(pool)
        tasks = retry
    return pools
