"""Exercise 4's explanation graded by its rubric (judge side: ``rubric.toml`` is never released).

The same engine as exercise 1 (:mod:`grader.rubric`) reads the ``## Explanation`` section of report.md:
one check per rubric line (``test_explains_<line id>``), per misconception (``test_no_<id>``) and
``test_explanation_grade_is_clear_cut``, made by :mod:`grader.rubric.checks` in ``test_model_hidden.py``;
overrides and gradebooks use these names.
"""
from __future__ import annotations

import functools
from pathlib import Path

from exercises.exercise4.tests import report_md
from exercises.exercise4.tests.checks import REPORT, read_report
from grader import rubric
from grader.exercises import course_root
from grader.rubric.checks import Style

RUBRIC_PATH = Path(__file__).resolve().parents[2] / "rubric.toml"
RUBRIC = rubric.load(RUBRIC_PATH)


def assess(submission) -> rubric.Assessment:
    """The rubric's reading of the report's Explanation section (cached per text)."""
    text = read_report(submission).explanation
    # Compare with the sample report's explanation only: the table and the template's text are shared by all.
    sources = tuple(sorted((k, report_md.explanation_of(v) or v) for k, v in  # no Explanation: the whole text
                           rubric.copy_sources_for(RUBRIC, course_root(), Path(submission.path) / REPORT).items()))
    return _assess(text, sources)


@functools.lru_cache(maxsize=32)
def _assess(text: str, sources: tuple) -> rubric.Assessment:
    return rubric.evaluate(RUBRIC, text, copy_sources=dict(sources))


STYLE = Style(rubric=RUBRIC, assess=assess, noun="explanation", line_prefix="test_explains_",
              gate="test_report_file", clear_cut="test_explanation_grade_is_clear_cut")
