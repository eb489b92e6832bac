"""Plots of exercise 4's checks: data in a check's ``details``, drawn when the report is rendered.

A check puts a plot *spec* (plain JSON) under ``details["plot"]``; ``grader.report.line_plot_png`` draws it
as a base64 PNG for an ``<img>`` data URI, the way ``grader.report.heatmap_png`` draws ``error_map``. Keeping
data rather than pictures in the result keeps results small and lets every view (HTML report, class
overview) draw it its own way. Spec::

    {"title": str, "xlabel": str, "ylabel": str, "logy": bool,
     "series": [{"label": str, "y": [float | None, ...], "x": [float, ...] (optional), "marker": bool,
                 "line": bool, "like": label of the series whose colour to share}],
     "hlines": [{"label": str, "y": float}], "marker_legend": str}

``None`` / NaN points are gaps (a diverged run).
"""
from __future__ import annotations

import math


def _clean(values) -> list[float | None]:
    out = []
    for v in values:
        out.append(None if v is None or not isinstance(v, (int, float)) or not math.isfinite(v) else float(v))
    return out


def loss_curves_spec(curves: dict[str, list[float]], unigram: float, every: int = 1,
                     checkpoints: dict[str, list] | None = None) -> dict:
    """The four training-loss curves on one plot, with the unigram level U as a dashed line, and each run's
    validation loss at its checkpoints (``[[step, loss], ...]``) as markers."""
    series = []
    for label, curve in curves.items():
        ys = _clean(curve)[::every]
        series.append({"label": label, "x": list(range(1, len(curve) + 1, every)), "y": ys})
    for label, points in (checkpoints or {}).items():
        series.append({"label": f"{label}, validation", "like": label, "x": [p[0] for p in points],
                       "y": _clean([p[1] for p in points]), "marker": True, "line": False})
    spec = {"title": "Loss of the grader's re-runs", "xlabel": "step", "ylabel": "loss (nats/char)",
            "logy": False, "series": series, "hlines": [{"label": f"unigram U = {unigram:.3f}", "y": unigram}]}
    if checkpoints:
        spec["marker_legend"] = "validation loss (dots, same colour)"
    return spec


def grad_flow_spec(profiles: dict[str, list[float]]) -> dict:
    """Gradient reaching each block along the last token's stream, one line per mode, log scale."""
    series = [{"label": label, "x": list(range(len(p))), "y": _clean(p), "marker": True}
              for label, p in profiles.items()]
    return {"title": "Gradient reaching each block at initialisation", "xlabel": "block (0 = nearest the input)",
            "ylabel": "|d loss / d block input| at the last token", "logy": True, "series": series, "hlines": []}
