"""Shared pieces of exercise 4's checks (judge side, trusted): the gates, the gradient-flow batch, the report
and its explanation; the structure checks are in ``structure.py``, the re-training runs in ``runs.py``.

The student's ``model.py`` runs only in its sandbox, and only to describe and *export* the model
(``harness.py``: ``describe``, ``export_block``, ``export_gpt``). What comes back is graphs of ATen calls
and arrays; everything else runs on those graphs in a clean process that never imports the student's
module (:class:`CleanProcess`, ``trainer.py``): the structure checks (forward and gradient, training and
eval mode, float64), the gradient flow and the four re-training runs, with the grader's own loop,
optimiser, data, seeds and loss. So the graph whose structure is checked is the graph that is trained,
and nothing the student's process does to itself reaches a grade.

Expected values come from the reference torch model (``tests/reference.py``, judge only) and U from the
corpus. In a student's bundle, where the reference is not shipped, the structure checks compare with
stored cases (``tests/cases/``) and reference-free properties.
"""
from __future__ import annotations

import functools
from pathlib import Path

import numpy as np
import pytest

from exercises.exercise4.tests import plots, report_md, settings
from exercises.exercise4.tests.runs import Runs, describe_run, run_label, trained_enough, verified_run
from exercises.exercise4.tests.structure import (ATOL, MODE_CHECKS, MODE_WORDS, CleanProcess, block_config,
                                                 check_block, check_gpt, draw_x, export_gpt, mistakes, record,
                                                 reference, reference_gpt, torch_generator)
from grader import rubric
from grader.exercises import course_root
from grader.plugin import CheckFailure

#: Test functions every behavioural check depends on.
GATES = ["test_model_loads", "test_contract"]


# ---------------------------------------------------------------------------------------- gradient flow

def grad_batch() -> tuple[np.ndarray, np.ndarray]:
    """The fixed batch of the gradient-flow check: GRAD_BATCH training windows drawn with GRAD_SEED."""
    train, _, _ = settings.corpus()
    n_ctx = settings.MODEL["n_ctx"]
    starts = np.random.default_rng(settings.GRAD_SEED).integers(0, len(train) - n_ctx - 1, settings.GRAD_BATCH)
    x = np.stack([train[s:s + n_ctx] for s in starts])
    y = np.stack([train[s + 1:s + 1 + n_ctx] for s in starts])
    return x, y


# ---------------------------------------------------------------------------------------- the report

REPORT = "report.md"
RUBRIC_PATH = Path(__file__).resolve().parents[1] / "rubric.toml"
RUBRIC = rubric.load(RUBRIC_PATH)
#: The lesson's own numbers (800 steps, its own data): a report quoting them did not run this model.
LESSON_NUMBERS = {"prenorm": 1.86, "no-residual": 3.37, "prenorm-high-lr": 1.79, "postnorm-high-lr": 3.37}


def read_report(submission) -> report_md.Report:
    return report_md.read(Path(submission.path) / REPORT)


def assess(submission) -> rubric.Assessment:
    """The rubric's reading of the report's Explanation section (cached per text)."""
    text = read_report(submission).explanation
    # Compare with the sample report's explanation only: the table and the template's text are shared by all.
    sources = tuple(sorted((k, report_md.explanation_of(v)) for k, v in
                           rubric.copy_sources_for(RUBRIC, course_root(), Path(submission.path) / REPORT).items()))
    return _assess(text, sources)


@functools.lru_cache(maxsize=32)
def _assess(text: str, sources: tuple) -> rubric.Assessment:
    return rubric.evaluate(RUBRIC, text, copy_sources=dict(sources))


def quote(text: str, limit: int = 300) -> str:
    text = " ".join(text.split())
    return f'"{text if len(text) <= limit else text[:limit - 1] + "…"}"'


def concept_check(line: rubric.Line):
    """The check of one rubric line: passes when the line's evidence is found (and counted)."""

    def check(submission, request):
        a = assess(submission)
        r = a.lines[line.id]
        details = {"rubric_line": line.id, "evidence": r.quotes}
        found = " + ".join(quote(q) for q in r.quotes)
        if r.counted:
            record(request, f"Earned by: {found}", details)
            return
        if r.earned:
            raise CheckFailure(f"Found ({found}), but not counted: {a.cap_reason}.", details=details)
        if r.quotes:
            raise CheckFailure(f"Only part of it: {found}; missing: {', '.join(r.missing_parts)}.", details=details)
        raise CheckFailure("Not found in your explanation.", details=details)

    check.__name__ = check.__qualname__ = f"test_explains_{line.id}"
    check.__doc__ = line.concept
    return pytest.mark.check(points=line.points, hint=line.hint, depends=["test_report_file"])(check)


def misconception_check(m: rubric.Misconception):
    """Passes when a substantive explanation that earns a point on the question does not make the misconception."""

    def check(submission, request):
        a = assess(submission)
        r = a.misconceptions[m.id]
        if not a.substantive:
            raise CheckFailure("Not checked: " + "; ".join(a.problems) + ".")
        if not r.applies:
            pytest.skip(f"not checked: your explanation earns no point on {RUBRIC.questions.get(m.question, '')}")
        details = {"misconception": m.id, "evidence": [r.quote] if r.quote else []}
        if r.found:
            raise CheckFailure(f"Your explanation says: {quote(r.quote)}", diagnosis=f"misconception: {m.statement}",
                               details=details)
        record(request, "Your explanation does not say this.", details)

    check.__name__ = check.__qualname__ = f"test_no_{m.id}"
    check.__doc__ = f"No misconception: {m.statement}."
    return pytest.mark.check(points=m.points, hint=m.hint, depends=["test_report_file"])(check)


__all__ = ["GATES", "ATOL", "MODE_CHECKS", "MODE_WORDS", "record", "torch_generator", "draw_x", "block_config",
           "check_block", "check_gpt", "export_gpt", "trained_enough", "verified_run", "reference_gpt", "CleanProcess", "Runs", "run_label", "describe_run", "grad_batch", "read_report", "assess",
           "concept_check", "misconception_check", "RUBRIC", "LESSON_NUMBERS", "REPORT", "plots", "reference",
           "settings", "mistakes"]
