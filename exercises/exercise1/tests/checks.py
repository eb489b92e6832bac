"""Shared pieces of exercise 1's checks: the answer file and its form.

Public (shipped with the bundle): nothing here knows the rubric. The numbers of the form (length,
sentences, language) are the ``[answer]`` table of ``exercise.toml``, which the judge's rubric reads too;
the questions are the ``## `` sections of ``skeleton/answer.md``. The rubric's checks (one per concept and
per misconception) are generated in ``tests/hidden/rubric_checks.py``, judge side.
"""
from __future__ import annotations

from pathlib import Path

from grader.rubric import read_text, structure
from grader.rubric.files import MAX_BYTES

EXERCISE = Path(__file__).resolve().parents[1]
SPEC = structure.load_spec(EXERCISE / "exercise.toml")
TEMPLATE = EXERCISE / "skeleton" / "answer.md"
ANSWER = "answer.md"
#: Gate of every check that reads the answer: the file is there.
FILE_GATE = "test_answer_file"


def answer_path(submission) -> Path:
    return Path(submission.path) / ANSWER


def answer_text(submission) -> str:
    """The text of this submission's answer.md (at most ``MAX_BYTES`` bytes are read, as the judge does)."""
    with open(answer_path(submission), "rb") as f:
        return read_text(f.read(MAX_BYTES))


def template_text() -> str:
    return TEMPLATE.read_text(encoding="utf-8")
