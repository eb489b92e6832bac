"""Shared pieces of exercise 4's checks (judge side, trusted): the gates, the gradient-flow batch, the report;
the structure checks are in ``structure.py``, the re-training runs in ``runs.py``, the explanation's rubric
checks in ``tests/hidden/explanation.py`` (judge-only, like ``rubric.toml``).

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

from pathlib import Path

import numpy as np

from exercises.exercise4.tests import plots, report_md, settings
from exercises.exercise4.tests.runs import Runs, describe_run, run_label, trained_enough, verified_run
from exercises.exercise4.tests.structure import (ATOL, MODE_CHECKS, MODE_WORDS, CleanProcess, block_config,
                                                 check_block, check_gpt, draw_x, export_gpt, mistakes, record,
                                                 reference, reference_gpt, torch_generator)
from grader.rubric import structure

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
#: The lesson's own numbers (800 steps, its own data): a report quoting them did not run this model.
LESSON_NUMBERS = {"prenorm": 1.86, "no-residual": 3.37, "prenorm-high-lr": 1.79, "postnorm-high-lr": 3.37}
#: The template of report.md: its "## Explanation" section and the comment that prompts it.
TEMPLATE = Path(__file__).resolve().parents[1] / "skeleton" / REPORT
#: The structural numbers of the explanation ([answer] of exercise.toml), read by the rubric too.
SPEC = structure.load_spec(Path(__file__).resolve().parents[1] / "exercise.toml")


def read_report(submission) -> report_md.Report:
    return report_md.read(Path(submission.path) / REPORT)


__all__ = ["GATES", "ATOL", "MODE_CHECKS", "MODE_WORDS", "record", "torch_generator", "draw_x", "block_config",
           "check_block", "check_gpt", "export_gpt", "trained_enough", "verified_run", "reference_gpt", "CleanProcess", "Runs", "run_label", "describe_run", "grad_batch", "read_report",
           "SPEC", "TEMPLATE", "LESSON_NUMBERS", "REPORT", "plots", "reference",
           "settings", "mistakes"]
