"""Plots of exercise 4's checks: data in a check's ``details``, drawn when the report is rendered.

A check puts a plot *spec* (plain JSON) under ``details["plot"]``; :func:`line_plot_png` draws it as a
base64 PNG for an ``<img>`` data URI, the way ``grader.report.heatmap_png`` draws ``error_map``. Keeping
data rather than pictures in the result keeps results small and lets every view (HTML report, class
overview) draw it its own way. Spec::

    {"title": str, "xlabel": str, "ylabel": str, "logy": bool,
     "series": [{"label": str, "y": [float | None, ...], "x": [float, ...] (optional), "marker": bool}],
     "hlines": [{"label": str, "y": float}]}

``None`` / NaN points are gaps (a diverged run).
"""
from __future__ import annotations

import base64
import io
import math
import os
import tempfile


def _clean(values) -> list[float | None]:
    out = []
    for v in values:
        out.append(None if v is None or not isinstance(v, (int, float)) or not math.isfinite(v) else float(v))
    return out


def loss_curves_spec(curves: dict[str, list[float]], unigram: float, every: int = 1) -> dict:
    """The four training-loss curves on one plot, with the unigram level U as a dashed line."""
    series = []
    for label, curve in curves.items():
        ys = _clean(curve)[::every]
        series.append({"label": label, "x": list(range(1, len(curve) + 1, every)), "y": ys})
    return {"title": "Training loss of the grader's re-runs", "xlabel": "step", "ylabel": "training loss (nats/char)",
            "logy": False, "series": series, "hlines": [{"label": f"unigram U = {unigram:.3f}", "y": unigram}]}


def grad_flow_spec(profiles: dict[str, list[float]]) -> dict:
    """Gradient reaching each block along the last token's stream, one line per mode, log scale."""
    series = [{"label": label, "x": list(range(len(p))), "y": _clean(p), "marker": True}
              for label, p in profiles.items()]
    return {"title": "Gradient reaching each block at initialisation", "xlabel": "block (0 = nearest the input)",
            "ylabel": "|d loss / d block input| at the last token", "logy": True, "series": series, "hlines": []}


def line_plot_png(spec: dict) -> str:
    """Draw a plot spec (module docstring) as a base64 PNG."""
    os.environ.setdefault("MPLCONFIGDIR", os.path.join(tempfile.gettempdir(), "grader-matplotlib"))
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import MaxNLocator

    fig, ax = plt.subplots(figsize=(5.6, 3.2), dpi=100)
    for s in spec.get("series", []):
        ys = [float("nan") if v is None else v for v in s.get("y", [])]
        xs = s.get("x") or list(range(len(ys)))
        if spec.get("logy"):
            ys = [v if v > 0 else float("nan") for v in ys]
        ax.plot(xs, ys, label=s.get("label", ""), marker="o" if s.get("marker") else None, linewidth=1.2,
                markersize=3)
    for h in spec.get("hlines", []):
        ax.axhline(h["y"], linestyle="--", color="grey", linewidth=1, label=h.get("label"))
    if spec.get("logy"):
        ax.set_yscale("log")
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_title(spec.get("title", ""), fontsize=10)
    ax.set_xlabel(spec.get("xlabel", ""))
    ax.set_ylabel(spec.get("ylabel", ""), fontsize=8)
    ax.legend(fontsize=7)
    fig.tight_layout()
    buf = io.BytesIO()
    fig.savefig(buf, format="png")
    plt.close(fig)
    return base64.b64encode(buf.getvalue()).decode("ascii")
