"""The rubric engine against labels written by a person before the grader saw the answers (issue 11).

The labelled answers are in tests/prose/EXERCISE (guide: tests/prose/LABELLING.md); bench/prose_agreement.py
grades them as the judge does (sources, peers) and computes the agreement. Here the thresholds the issue
sets are asserted on the **test** split, which is never used for tuning, and on every adversarial kind.
"""
from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
_spec = importlib.util.spec_from_file_location("prose_agreement", ROOT / "bench/prose_agreement.py")
agreement = importlib.util.module_from_spec(_spec)
sys.modules["prose_agreement"] = agreement  # its dataclasses look their module up
_spec.loader.exec_module(agreement)

#: The issue's targets. Exercise 4's test split is small (7 genuine answers), so one miss is 14 points.
WITHIN_1 = {"exercise1": 0.85, "exercise4": 0.70}
ADVERSARIAL_MAX = 3.0


@pytest.fixture(scope="module", params=sorted(agreement.RUBRICS))
def graded(request):
    return request.param, agreement.grade_all(request.param)


def test_labelled_set_is_large_enough_and_split(graded):
    exercise, rows = graded
    genuine = [r for r in rows if r.kind == "genuine"]
    test = [r for r in rows if r.split == "test"]
    assert len(genuine) >= (80 if exercise == "exercise1" else 20)
    assert 0.2 <= len(test) / len(rows) <= 0.4  # the split is by name hash: about 30 %


def test_agreement_on_the_test_split(graded):
    exercise, rows = graded
    part = [r for r in rows if r.split == "test" and r.kind in ("genuine", "confident_error")]
    m = agreement.agreement(part)
    off = [(r.name, r.label, round(r.score, 1)) for r in part if abs(r.score - r.label) > 1]
    assert m["within_1"] >= WITHIN_1[exercise], (m, off)
    assert m["spearman"] >= 0.8 and m["qwk"] >= 0.8, m


def test_every_adversarial_answer_is_low_or_flagged(graded):
    exercise, rows = graded
    bad = [(r.name, round(r.score, 1)) for r in rows
           if r.kind not in ("genuine",) and r.score > ADVERSARIAL_MAX and not r.flagged]
    assert not bad


def test_metrics_on_known_values():
    # Perfect agreement, a reversed order and a constant shift, computed by hand.
    assert agreement.spearman([1, 2, 3, 4], [10, 20, 30, 40]) == pytest.approx(1.0)
    assert agreement.spearman([1, 2, 3, 4], [4, 3, 2, 1]) == pytest.approx(-1.0)
    assert agreement.quadratic_kappa([0, 5, 10], [0, 5, 10]) == pytest.approx(1.0)
    # Two raters on 0/10 who always disagree: observed weight 1 per item, expected 0.5: kappa = -1.
    assert agreement.quadratic_kappa([0, 10], [10, 0]) == pytest.approx(-1.0)
