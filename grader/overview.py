"""The class overview (``index.html``) of a batch: a view of the gradebook's rows.

Shows the score histogram, the pass rate of every check, how often each named mistake
occurred, the slowest submissions, refused submissions and grader errors, and a link to
every student's report. Plots are PNGs embedded as data URIs (no network needed).
"""
from __future__ import annotations

import base64
import io
import os
import tempfile
from collections import Counter

from .exercises import Exercise
from .report import _environment


def _png(fig) -> str:
    import matplotlib.pyplot as plt

    buf = io.BytesIO()
    fig.tight_layout()
    fig.savefig(buf, format="png", dpi=100)
    plt.close(fig)
    return base64.b64encode(buf.getvalue()).decode("ascii")


def _pyplot():
    os.environ.setdefault("MPLCONFIGDIR", os.path.join(tempfile.gettempdir(), "grader-matplotlib"))
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def load_plotting() -> None:
    """Import matplotlib ahead of :func:`render` (about 0.3 s), e.g. in a thread while a batch grades."""
    _pyplot()


def summarise(rows: list[dict]) -> dict:
    """Numbers behind the overview, computed from gradebook rows (see Gradebook.rows).

    Returns a dict with ``scores`` (graded students' scores), ``max_score``, ``pass_rate``
    (check name -> fraction of graded students who passed it), ``mistakes`` (named mistake ->
    number of students whose result named it), ``findings`` (the behavioural probes' findings, counted
    the same way: observations, not names), ``slowest`` ((seconds, student) pairs, 10 at
    most), ``refused`` and ``errors`` ((student, message) pairs).
    """
    graded = [r for r in rows if r["status"] == "graded" and r["result"] is not None]
    max_score = max((r["max_score"] for r in graded), default=0.0)
    passed: Counter = Counter()
    seen: Counter = Counter()
    mistakes: Counter = Counter()
    findings: Counter = Counter()
    for row in graded:
        for check in row["result"].checks:
            seen[check.name] += 1
            passed[check.name] += check.status == "passed"
        for label, diagnosis in {(c.diagnosis_label, c.diagnosis) for c in row["result"].checks if c.diagnosis}:
            (mistakes if label == "Likely mistake" else findings)[diagnosis] += 1
    return {
        "scores": [r["score"] for r in graded],
        "max_score": max_score,
        "pass_rate": {name: passed[name] / seen[name] for name in seen},
        "mistakes": mistakes.most_common(),
        "findings": findings.most_common(),
        "slowest": sorted(((r["duration"], r["student"]) for r in graded), reverse=True)[:10],
        "refused": [(r["student"], r["error"]) for r in rows if r["status"] == "refused"],
        "errors": [(r["student"], r["error"]) for r in rows if r["status"] == "grader_error"],
        "isolation": sorted({r["result"].isolation for r in graded}),
    }


def _plots(stats: dict) -> dict[str, str]:
    plt = _pyplot()
    plots = {}
    fig, ax = plt.subplots(figsize=(6, 2.8))
    top = max(stats["max_score"], 1.0)
    ax.hist(stats["scores"], bins=min(24, max(int(top), 1)), range=(0, top), color="#1c7ed6", edgecolor="white")
    from matplotlib.ticker import MaxNLocator

    ax.yaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_xlabel("score")
    ax.set_ylabel("students")
    ax.set_title("Score distribution")
    plots["histogram"] = _png(fig)
    rates = stats["pass_rate"]
    if rates:
        names = list(rates)
        fig, ax = plt.subplots(figsize=(7, 0.22 * len(names) + 1.2))
        ax.barh(range(len(names)), [100 * rates[n] for n in names], color="#2f9e44")
        ax.set_yticks(range(len(names)), names, fontsize=7)
        ax.invert_yaxis()
        ax.set_xlim(0, 100)
        ax.set_xlabel("% of students passing")
        plots["pass_rate"] = _png(fig)
    return plots


def render(exercise: Exercise, rows: list[dict], review_groups: list | None = None, *,
           similar: list[dict] | None = None) -> str:
    """The whole ``index.html`` as one self-contained page; ``review_groups``: the batch's
    :func:`grader.rubric.groups.review_groups` (shown for a rubric exercise, see overview_groups.html.j2);
    ``similar``: :func:`grader.rubric.peers.for_overview` of its similar pairs (overview_similar.html.j2)."""
    stats = summarise(rows)
    return _environment().get_template("overview.html.j2").render(
        exercise=exercise, rows=rows, stats=stats, plots=_plots(stats), review_groups=review_groups or [],
        similar_answers=similar or [])
