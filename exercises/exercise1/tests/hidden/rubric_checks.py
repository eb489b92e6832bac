"""Exercise 1's rubric checks (judge side): the rubric, the assessment of answer.md, and how its checks read.

The checks themselves are made by :mod:`grader.rubric.checks` from ``rubric.toml`` (judge-only, like this
folder) so that points, concepts and hints live in one place: one check per rubric line (its docstring is the
concept, its name ``test_<line id>``), one per misconception (``test_no_<id>``) and ``test_grade_is_clear_cut``.
"""
from __future__ import annotations

from exercises.exercise1.tests.checks import EXERCISE, FILE_GATE, answer_path
from grader import rubric
from grader.exercises import course_root
from grader.rubric.checks import Style

RUBRIC_PATH = EXERCISE / "rubric.toml"
RUBRIC = rubric.load(RUBRIC_PATH)
#: Gate of the misconception checks: an explanation in the student's own sentences.
SUBSTANTIVE_GATE = "test_answer_is_substantive"


def assess(submission) -> rubric.Assessment:
    """The rubric's reading of this submission's answer.md (cached per file content)."""
    return rubric.assess_file(RUBRIC_PATH, answer_path(submission), course_root())


STYLE = Style(rubric=RUBRIC, assess=assess, noun="answer", line_prefix="test_", gate=FILE_GATE,
              clear_cut="test_grade_is_clear_cut", substantive_gate=SUBSTANTIVE_GATE)
