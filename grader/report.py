"""Views of a :class:`~grader.results.SubmissionResult`: terminal summary and HTML report."""
from __future__ import annotations

import base64
import functools
import html
import io
import os
import tempfile
import threading
from pathlib import Path

import click
import jinja2

from .results import HIDDEN_NOT_AVAILABLE, CheckResult, SubmissionResult

_STATUS_STYLE = {"passed": ("PASS", "green"), "failed": ("FAIL", "red"),
                 "skipped": ("SKIP", "yellow"), "error": ("ERROR", "magenta")}
#: How the terminal summary and the HTML report introduce the further cases of a folded check.
_ALSO = {"passed": "Also passes on", "failed": "Also fails on", "skipped": "Also skipped on",
         "error": "Also a grader error on"}


def terminal_summary(result: SubmissionResult, *, verbose: bool = False) -> str:
    """A short coloured summary: score, then one line per check, hints for failures.

    Passed checks are folded into a count unless ``verbose``. Colours are ANSI codes that
    ``click.echo`` strips when the output is not a terminal.
    """
    # An exercise whose points are all in hidden checks (exercise 1 in the student's copy) has only form checks.
    headline = (f"{result.exercise}: form checks only (0 points here; the points are given when your work is graded)"
                if result.max_score == 0 and result.checks and HIDDEN_NOT_AVAILABLE in result.notes else
                f"{result.exercise}: {result.score:g} / {result.max_score:g} points")
    lines = [click.style(headline, bold=True) + f"   (seed {result.seed}, {result.duration:.1f} s)"]
    passed = [c for c in result.checks if c.status == "passed"]
    skipped: dict[str, int] = {}
    for check in result.checks:
        if check.status == "skipped" and not verbose:
            skipped[check.feedback] = skipped.get(check.feedback, 0) + 1
    shown = [c for c in result.checks if verbose or c.status not in ("passed", "skipped")]
    # Cases of one parametrized check that end the same way: the first in full, the rest named.
    for check, more in ([(c, []) for c in shown] if verbose else _fold(shown)):
        label, colour = _STATUS_STYLE[check.status]
        title = _check_title(check) if more else check.description
        points = check.points + sum(m.points for m in more)
        max_points = check.max_points + sum(m.max_points for m in more)
        lines.append(f"  {click.style(label.ljust(5), fg=colour, bold=True)} {title} [{points:g}/{max_points:g}]")
        if check.feedback and (check.status != "passed" or verbose):
            lines.append(f"        {check.feedback}")
        if more:
            cases = ", ".join(m.name.split("[", 1)[1].rstrip("]") for m in more)
            lines.append(f"        {_ALSO[check.status]} {len(more)} more case(s): {cases}")
        if check.diagnosis:
            lines.append("        " + click.style(f"{check.diagnosis_label}: {check.diagnosis}", fg="cyan"))
        if check.hint and check.status == "failed":
            lines.append(f"        {'General hint' if check.diagnosis else 'Hint'}: {check.hint}")
    for reason, count in skipped.items():
        lines.append(f"  {click.style('SKIP ', fg='yellow', bold=True)} {count} check(s) {reason}")
    if passed and not verbose:
        names = "" if len(passed) > 3 else ": " + "; ".join(c.description.rstrip(".") for c in passed)
        lines.append(f"  {click.style('PASS', fg='green', bold=True)}  {len(passed)} other check(s) passed{names}")
    if result.needs_review:
        lines.append(click.style("  A person will review this grade: " + "; ".join(result.needs_review), fg="yellow"))
    for note in result.notes:
        lines.append(click.style(f"  Note: {note}", fg="yellow"))
    return "\n".join(lines)


def _figure(width: float, height: float, axes_box: tuple[float, float, float, float] | None = None):
    """A matplotlib Figure (no pyplot state) with one axes, at a fixed place (figure fractions)
    when ``axes_box`` is given, else as a subplot for ``tight_layout``.

    A fixed box instead of ``tight_layout`` halves the cost of a plot (to about 65 ms); the
    boxes leave room for the labels used here.
    """
    os.environ.setdefault("MPLCONFIGDIR", os.path.join(tempfile.gettempdir(), "grader-matplotlib"))
    from matplotlib.figure import Figure

    fig = Figure(figsize=(width, height), dpi=100)
    return fig, (fig.add_axes(axes_box) if axes_box else fig.add_subplot())


def _png_base64(fig) -> str:
    buf = io.BytesIO()
    fig.savefig(buf, format="png")
    return base64.b64encode(buf.getvalue()).decode("ascii")


#: The colour scale of a heat map reaches at least this |error|: the checks' tolerance on float64
#: (DESIGN.md), so errors within it stay dark instead of filling the scale.
HEATMAP_FLOOR = 1e-6
#: The colour of a non-finite output in a heat map (outside the magma scale).
HEATMAP_NAN = "#22b8cf"


def heatmap_svg(values: list[list[float]], axes: list[str]) -> str:
    """A small heat map of |error| as inline SVG markup (a cell per value, axis labels, a colour bar).

    Drawn by hand rather than by a matplotlib figure: a figure cost ~70 ms of CPU per map, most of a
    wrong submission's grading time in a batch; this costs well under a millisecond. Colours come
    from matplotlib's ``magma`` map from 0 to the largest finite |error| (at least
    :data:`HEATMAP_FLOOR`).

    Args:
        values: rows × columns of absolute errors; NaN marks a non-finite output, drawn in cyan
            (:data:`HEATMAP_NAN`) and named in the title.
        axes: labels of the rows and columns, e.g. ``["token", "feature"]``.
    """
    import matplotlib
    import numpy as np

    grid = np.array(values, dtype=float).reshape(len(values), -1)
    rows, cols = grid.shape
    finite = np.isfinite(grid)
    vmax = max(float(grid[finite].max()) if finite.any() else 0.0, HEATMAP_FLOOR)
    magma = matplotlib.colormaps["magma"]
    rgb = (magma(np.clip(np.where(finite, grid, 0.0) / vmax, 0.0, 1.0))[..., :3] * 255).round().astype(int)
    left, top, width, height = 46, 22, 300, 150
    cw, ch = width / max(cols, 1), height / max(rows, 1)
    out = [f'<svg class="heatmap" xmlns="http://www.w3.org/2000/svg" width="{left + width + 90}" '
           f'height="{top + height + 40}" role="img" font-family="sans-serif" font-size="11">',
           f"<title>|error| over ({html.escape(', '.join(axes))})</title>"]
    if not finite.all():
        out.append(f'<text x="{left}" y="14">cyan: NaN or infinite output</text>')
    for r in range(rows):
        for c in range(cols):
            fill = HEATMAP_NAN if not finite[r, c] else "#%02x%02x%02x" % tuple(rgb[r, c])
            out.append(f'<rect x="{left + c * cw:.2f}" y="{top + r * ch:.2f}" width="{cw + 0.05:.2f}" '
                       f'height="{ch + 0.05:.2f}" fill="{fill}"/>')
    for c in sorted({0, cols // 2, cols - 1}):
        out.append(f'<text x="{left + (c + 0.5) * cw:.1f}" y="{top + height + 13}" text-anchor="middle">{c}</text>')
    for r in sorted({0, rows // 2, rows - 1}):
        out.append(f'<text x="{left - 5}" y="{top + (r + 0.5) * ch + 4:.1f}" text-anchor="end">{r}</text>')
    out.append(f'<text x="{left + width / 2}" y="{top + height + 32}" text-anchor="middle">'
               f'{html.escape(axes[1] if len(axes) > 1 else "")}</text>')
    out.append(f'<text transform="translate(12 {top + height / 2}) rotate(-90)" text-anchor="middle">'
               f'{html.escape(axes[0] if axes else "")}</text>')
    stops = "".join(f'<stop offset="{k / 10:.1f}" stop-color="#%02x%02x%02x"/>'
                    % tuple((np.array(magma(1 - k / 10)[:3]) * 255).round().astype(int)) for k in range(11))
    bar = left + width + 14
    out.append(f'<defs><linearGradient id="magma" x1="0" y1="0" x2="0" y2="1">{stops}</linearGradient></defs>'
               f'<rect x="{bar}" y="{top}" width="12" height="{height}" fill="url(#magma)"/>'
               f'<text x="{bar + 16}" y="{top + 9}">{vmax:.2g}</text>'
               f'<text x="{bar + 16}" y="{top + height}">0</text>'
               f'<text x="{bar + 16}" y="{top + height / 2 + 4}">|error|</text>')
    out.append("</svg>")
    return "".join(out)


def line_plot_png(spec: dict) -> str:
    """Draw a line-plot spec from a check's ``details["plot"]`` as a base64 PNG.

    Spec (JSON): ``{"title", "xlabel", "ylabel", "logy": bool, "series": [{"label", "y": [float|None],
    "x": [float] (optional), "marker": bool, "line": bool (default true), "like": label of an earlier
    series whose colour to share (such a series has no legend entry of its own)}], "hlines": [{"label", "y"}],
    "marker_legend": legend text for the shared-colour markers}``; None/NaN are gaps.
    """
    from matplotlib.ticker import MaxNLocator

    fig, ax = _figure(5.6, 3.2)
    colours: dict[str, str] = {}
    for s in spec.get("series", []):
        ys = [float("nan") if v is None else v for v in s.get("y", [])]
        xs = s.get("x") or list(range(len(ys)))
        if spec.get("logy"):
            ys = [v if v > 0 else float("nan") for v in ys]
        like = colours.get(s.get("like", ""))
        line, = ax.plot(xs, ys, label=None if s.get("like") else s.get("label", ""), color=like,
                        marker="o" if s.get("marker") else None, linewidth=1.2 if s.get("line", True) else 0,
                        markersize=4 if like else 3)
        colours[s.get("label", "")] = line.get_color()
    if spec.get("marker_legend"):
        ax.plot([], [], "o", color="black", markersize=4, linewidth=0, label=spec["marker_legend"])
    for h in spec.get("hlines", []):
        ax.axhline(h["y"], linestyle="--", color="grey", linewidth=1, label=h.get("label"))
    if spec.get("logy"):
        ax.set_yscale("log")
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_title(spec.get("title", ""), fontsize=10)
    ax.set_xlabel(spec.get("xlabel", ""))
    ax.set_ylabel(spec.get("ylabel", ""), fontsize=8)
    ax.legend(fontsize=7)
    fig.tight_layout()  # log-scale tick labels vary in width; one plot per report, so worth it
    return _png_base64(fig)


@functools.lru_cache(maxsize=1)
def _environment() -> jinja2.Environment:
    """The templates' environment, made once per process (compiling a template costs ~20 ms)."""
    env = jinja2.Environment(loader=jinja2.PackageLoader("grader", "templates"),
                             autoescape=jinja2.select_autoescape(["html", "j2"]))
    env.filters["heatmap"] = lambda details: heatmap_svg(details["error_map"], details.get("error_map_axes", []))
    env.filters["lineplot"] = line_plot_png
    return env


_ORDER = {"error": 0, "failed": 1, "skipped": 2, "passed": 3}


def _fold(checks: list[CheckResult]) -> list[tuple[CheckResult, list[CheckResult]]]:
    """Group the cases of one parametrized check that ended the same way (same status, mistake and
    hint): (first case, the others). The others are listed under the first, which shows the advice.
    A case with an instructor's override always has a row of its own."""
    groups: list[tuple[CheckResult, list[CheckResult]]] = []
    for c in checks:
        if groups and "[" in c.name and c.override is None:
            first, more = groups[-1]
            if first.override is None and (first.name.split("[")[0], first.status, first.diagnosis, first.hint) == (
                    c.name.split("[")[0], c.status, c.diagnosis, c.hint):
                more.append(c)
                continue
        groups.append((c, []))
    return groups


def _check_title(case: CheckResult) -> str:
    """The sentence of a parametrized check without its case's parameters (for a folded row)."""
    return case.description.replace(f" ({case.name.split('[', 1)[1][:-1]}).", ".")


def _heatmaps(groups: list[tuple[CheckResult, list[CheckResult]]]) -> dict[str, tuple[str, dict]]:
    """Row (its first check's name) -> (case, details) whose ``error_map`` it draws: one map per
    function of the student's (``error_map_of``), in the first row that has one for it, from the
    first of its cases that has a map."""
    drawn: set[str] = set()
    maps: dict[str, tuple[str, dict]] = {}
    for first, more in groups:
        for c in [first, *more]:
            if c.details.get("error_map") is not None:
                of = c.details.get("error_map_of") or c.name.split("[")[0]
                if of not in drawn:
                    drawn.add(of)
                    maps[first.name] = (c.name, c.details)
                break
    return maps


def render_html(result: SubmissionResult) -> str:
    """The whole report as one self-contained HTML page (inline CSS and images).

    Checks are listed grader errors and failures first, then skipped, then passed; the cases
    of one parametrized check that ended the same way share a row (see :func:`_fold`).
    """
    checks = sorted(result.checks, key=lambda c: _ORDER[c.status])
    counts = {s: sum(c.status == s for c in result.checks) for s in _ORDER}
    groups = _fold(checks)
    titles = {first.name: _check_title(first) for first, more in groups if more}
    return _environment().get_template("report.html.j2").render(r=result, groups=groups, counts=counts,
                                                                 heatmaps=_heatmaps(groups), titles=titles,
                                                                 also=_ALSO)


def write_atomic(path: Path, text: str) -> Path:
    """Write ``text`` to ``path`` through a temp file and a rename (never a half-written file,
    even with two writers at once); folders are created. Returns ``path``."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
    try:
        tmp.write_text(text, encoding="utf-8")
        tmp.replace(path)
    finally:
        tmp.unlink(missing_ok=True)  # left only when writing failed
    return path


def write_html(result: SubmissionResult, path: Path) -> Path:
    """Write the report atomically to ``path`` (folders created); returns the path."""
    return write_atomic(path, render_html(result))

