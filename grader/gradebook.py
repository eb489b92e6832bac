"""The batch gradebook: one SQLite row per student, written as soon as it is graded.

Each row commits on its own, so a batch killed at any point keeps every finished grade and
``--resume`` grades only the missing students. The database is in WAL mode with
``synchronous=NORMAL`` (SQLite's documented pairing): a commit is an append to the log, not an
fsync (an fsync per row cost the batch process ~5 ms a submission); a killed batch loses nothing,
and a power cut may lose the last grades, which ``--resume`` grades again. The batch's exercise and seed are stored
too: a resumed batch uses the same seed, so it ends with the same grades as an
uninterrupted run.
"""
from __future__ import annotations

import contextlib
import csv
import io
import json
import sqlite3
from pathlib import Path

import click

from .errors import InputError
from .report import write_atomic
from .results import SubmissionResult

SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS grades (
    student TEXT PRIMARY KEY,
    status TEXT NOT NULL,          -- graded | refused | grader_error
    score REAL NOT NULL,
    max_score REAL NOT NULL,
    error TEXT NOT NULL DEFAULT '',
    needs_review TEXT NOT NULL DEFAULT '',
    duration REAL NOT NULL DEFAULT 0,
    result TEXT,                   -- SubmissionResult.to_dict() as JSON; NULL when refused
    identity TEXT                  -- Submission.identity() as JSON: name, email, sis_id, user_id, late, layout, entries
);
"""


class Gradebook:
    """A batch's grades in ``PATH`` (SQLite). Use as a context manager.

    Args:
        path: the database file (created with its folder).
        exercise: the exercise graded; a gradebook of another exercise is refused.
        seed: the seed of a new gradebook; an existing one keeps its own (see :attr:`seed`).

    Raises:
        click.ClickException: the file belongs to another exercise.
    """

    def __init__(self, path: Path, exercise: str, seed: int):
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self.db = sqlite3.connect(path)
        self.db.execute("PRAGMA journal_mode=WAL")
        self.db.execute("PRAGMA synchronous=NORMAL")
        self.db.executescript(SCHEMA)
        if "identity" not in {row[1] for row in self.db.execute("PRAGMA table_info(grades)")}:
            with self.db:  # a gradebook written before the platforms' identities were kept
                self.db.execute("ALTER TABLE grades ADD COLUMN identity TEXT")
        meta = dict(self.db.execute("SELECT key, value FROM meta"))
        if meta and meta.get("exercise") != exercise:
            raise click.ClickException(
                f"{path} is the gradebook of {meta.get('exercise')}, not {exercise}; choose another --out")
        if not meta:
            with self.db:
                self.db.executemany("INSERT INTO meta VALUES (?, ?)", [("exercise", exercise), ("seed", str(seed))])
            meta = {"exercise": exercise, "seed": str(seed)}
        self.exercise = exercise
        self.seed = int(meta["seed"])

    @classmethod
    def existing(cls, folder: Path) -> "Gradebook":
        """The gradebook a batch wrote into ``folder`` (``folder/gradebook.sqlite``), with its own
        exercise and seed.

        Raises:
            InputError: there is no gradebook in ``folder``, or the file is not one.
        """
        path = Path(folder) / "gradebook.sqlite"
        if not path.is_file():
            raise InputError(f"no gradebook in {folder} ({path.name} is missing); give the --out folder of a "
                             "`grader batch` run")
        try:
            db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
            with contextlib.closing(db):
                meta = dict(db.execute("SELECT key, value FROM meta"))
        except sqlite3.DatabaseError as exc:
            raise InputError(f"{path} is not a gradebook ({exc}); give the --out folder of a `grader batch` "
                             "run") from exc
        if "exercise" not in meta or "seed" not in meta:
            raise InputError(f"{path} is not a gradebook (no exercise or seed recorded)")
        return cls(path, meta["exercise"], int(meta["seed"]))

    def __enter__(self) -> "Gradebook":
        return self

    def __exit__(self, *exc) -> None:
        self.db.close()

    def students(self, status: str | None = None) -> set[str]:
        """Students that already have a row (with this ``status`` when given)."""
        if status is None:
            return {row[0] for row in self.db.execute("SELECT student FROM grades")}
        return {row[0] for row in self.db.execute("SELECT student FROM grades WHERE status = ?", (status,))}

    def record(self, student: str, status: str, *, result: SubmissionResult | None = None,
               error: str = "", max_score: float = 0.0, identity: dict | None = None) -> None:
        """Write (or replace) one student's row in its own transaction.

        ``identity`` is :meth:`grader.lms.Submission.identity` (who the platform says this is);
        None keeps the row's current one.
        """
        score = result.score if result else 0.0  # a grader error keeps the partial score; the status flags it
        max_score = result.max_score if result else max_score
        with self.db:
            self.db.execute(
                "INSERT INTO grades VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT(student) DO UPDATE SET "
                "status=excluded.status, score=excluded.score, max_score=excluded.max_score, error=excluded.error, "
                "needs_review=excluded.needs_review, duration=excluded.duration, result=excluded.result, "
                "identity=COALESCE(excluded.identity, identity)",
                (student, status, score, max_score, error,
                 "; ".join(result.needs_review) if result else "",
                 result.duration if result else 0.0,
                 json.dumps(result.to_dict()) if result else None,
                 json.dumps(identity) if identity is not None else None),
            )

    def rows(self) -> list[dict]:
        """All rows as dicts, sorted by student; ``result`` decoded to a SubmissionResult or None,
        ``identity`` to a dict (``{}`` when unknown)."""
        cur = self.db.execute("SELECT * FROM grades ORDER BY student")
        names = [d[0] for d in cur.description]
        out = []
        for values in cur:
            row = dict(zip(names, values))
            row["result"] = SubmissionResult.from_dict(json.loads(row["result"])) if row["result"] else None
            row["identity"] = json.loads(row["identity"]) if row["identity"] else {}
            out.append(row)
        return out

    def write_csv(self, path: Path) -> Path:
        """``grades.csv``: student, score, max_score, points per check, needs_review, error, status, and, when
        an instructor's override was merged, overrides (each decision: ``check = points (group G-...): comment``).

        ``score`` is blank unless the status is ``graded``: a refused submission or a grader error has
        no grade (never 0); ``error`` says why. A grader error's checks that ran keep their points.
        """
        rows = self.rows()
        checks: list[str] = []
        for row in rows:
            for c in row["result"].checks if row["result"] else []:
                if c.name not in checks:
                    checks.append(c.name)
        # A refused submission was never graded: show the exercise's maximum from the others.
        known_max = max((r["max_score"] for r in rows if r["result"]), default=0.0)
        fh = io.StringIO(newline="")
        writer = csv.writer(fh)
        decided = any(c.override is not None for r in rows for c in (r["result"].checks if r["result"] else []))
        writer.writerow(["student", "score", "max_score", *checks, "needs_review", "error", "status",
                         *(["overrides"] if decided else [])])
        for row in rows:
            points = {c.name: c.points for c in row["result"].checks} if row["result"] else {}
            score = f"{row['score']:g}" if row["status"] == "graded" else ""
            writer.writerow([_cell(row["student"]), score, f"{row['max_score'] or known_max:g}",
                             *(f"{points[c]:g}" if c in points else "" for c in checks),
                             _cell(row["needs_review"]), _cell(row["error"]), row["status"],
                             *([_cell(_overrides_cell(row["result"]))] if decided else [])])
        return write_atomic(path, fh.getvalue())


def _overrides_cell(result: SubmissionResult | None) -> str:
    """The instructor's decisions on ``result``'s checks, one ``check = points (group G-...): comment`` each."""
    return " | ".join(f"{c.name} = {c.override['points']:g}"
                      + (f" (group {c.override['group']})" if c.override.get("group") else "")
                      + f": {c.override.get('comment', '')}"
                      for c in (result.checks if result else []) if c.override is not None)


def _cell(text: str) -> str:
    """A CSV cell a spreadsheet will not run as a formula (student ids and messages are untrusted)."""
    return "'" + text if text[:1] in ("=", "+", "-", "@", "\t", "\r") else text
