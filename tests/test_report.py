"""The HTML report: content, escaping of student output, and how it looks in headless Chromium."""
import os
import shutil
import subprocess

import numpy as np
import pytest

from grader import report
from grader.results import CheckResult, SubmissionResult


def _result():
    # A causal-mask bug: error only below the diagonal of (token, token) -- drawn by hand here.
    error_map = np.tril(np.full((6, 6), 0.3), k=-1).tolist()
    return SubmissionResult(
        exercise="exercise3", submission="students/ada", seed=42, duration=1.5,
        isolation="bubblewrap: test", output="<script>alert('x')</script>\nprinted by the student",
        checks=[
            CheckResult("test_softmax_small", "softmax of a hand-worked case.", 1, "passed"),
            CheckResult("test_mha_parity[B2_T6_d8_h2_causal]", "multi_head_attention matches torch.", 2, "failed",
                        feedback="max abs error 0.3 (allowed 1e-06)", hint="mask before softmax",
                        diagnosis="causal mask off by one", details={"error_map": error_map,
                                                                     "error_map_axes": ["token", "feature"]}),
            CheckResult("test_block_parity[B1]", "block matches torch.", 1, "skipped",
                        feedback="not checked: it needs test_block_shape to pass first"),
        ],
    )


def test_html_report_shows_score_checks_and_escapes_student_output(tmp_path):
    path = report.write_html(_result(), tmp_path / "r.html")
    html = path.read_text(encoding="utf-8")
    assert "1 / 4 points" in html  # 1 passed point out of 1 + 2 + 1
    assert "causal mask off by one" in html and "mask before softmax" in html
    assert "seed <code>42</code>" in html
    assert '<svg class="heatmap"' in html  # the heat map
    assert "<script>alert" not in html and "&lt;script&gt;" in html


def test_one_heat_map_per_failing_function_of_the_student():
    def failing(name, function):
        return CheckResult(name, f"{function} matches torch.", 1, "failed", feedback="max abs error 1",
                           details={"error_map": [[0.0, 1.0]], "error_map_axes": ["token", "feature"],
                                    "error_map_of": function})

    result = SubmissionResult(exercise="exercise3", submission="s", seed=1, checks=[
        failing("test_mha_parity[a]", "multi_head_attention"), failing("test_mha_parity[b]", "multi_head_attention"),
        failing("test_mha_large_inputs", "multi_head_attention"), failing("test_softmax_small", "softmax")])
    html = report.render_html(result)
    # Four failing checks of two functions: two maps, each at the function's first failing check.
    assert html.count('<svg class="heatmap"') == 2
    first_mha, softmax = html.index('id="test_mha_parity[a]"'), html.index('id="test_softmax_small"')
    assert html.index('<svg class="heatmap"', first_mha) < html.index('id="test_mha_parity[b]"')
    assert html.index('<svg class="heatmap"', softmax) > softmax


def test_terminal_summary_names_the_mistake_and_folds_passed_checks():
    text = report.terminal_summary(_result())
    assert "exercise3: 1 / 4 points" in text
    assert "Likely mistake: causal mask off by one" in text
    assert "General hint: mask before softmax" in text  # "general": the diagnosis is the specific advice
    assert "1 other check(s) passed" in text
    assert "1 check(s) not checked: it needs test_block_shape to pass first" in text


def _chromium():
    path = shutil.which("chromium") or shutil.which("chromium-browser")
    if path is None and os.environ.get("CI"):
        pytest.fail("chromium is not installed; .ci/run installs it for the screenshot test")
    if path is None:
        pytest.skip("chromium not installed (apt-get install chromium); CI always runs this test")
    return path


def _screenshot(page, tmp_path, height=1400):
    """Render ``page`` in headless Chromium; returns (RGB pixels as ints, console messages)."""
    chromium = _chromium()
    shot = tmp_path / f"{page.stem}.png"
    run = subprocess.run([chromium, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                          "--disable-background-networking", "--disable-component-update", "--disable-sync",
                          "--enable-logging=stderr", "--v=0",
                          f"--user-data-dir={tmp_path / 'profile'}", "--hide-scrollbars", f"--window-size=1000,{height}",
                          f"--screenshot={shot}", page.as_uri()], check=True, capture_output=True, text=True,
                         timeout=120)
    import matplotlib.image

    pixels = (matplotlib.image.imread(shot)[:, :, :3] * 255).round().astype(int)
    console = [line for line in run.stderr.splitlines() if ":CONSOLE" in line]
    return pixels, console


def _count(pixels, rgb, tol=12):
    return int((np.abs(pixels - np.array(rgb)).max(axis=2) <= tol).sum())


def test_report_renders_in_headless_chromium(tmp_path):
    """Screenshot the report and look for its colours: green score bar, red FAILED badge, heat map."""
    pixels, console = _screenshot(report.write_html(_result(), tmp_path / "r.html"), tmp_path)
    assert console == []
    assert pixels.shape[:2] == (1400, 1000)
    assert _count(pixels, (0x2F, 0x9E, 0x44)) > 500   # score bar and PASSED badge (#2f9e44)
    assert _count(pixels, (0xC9, 0x2A, 0x2A)) > 100   # FAILED badge (#c92a2a)
    assert _count(pixels, (0xE7, 0xF5, 0xFF)) > 2000  # diagnosis box (#e7f5ff)
    # The magma heat map has near-black cells (zero error above the diagonal).
    assert _count(pixels, (0, 0, 4), tol=20) > 300


def test_class_overview_renders_in_headless_chromium(tmp_path):
    """The class overview: histogram bars (#1c7ed6) and pass-rate bars (#2f9e44), no console errors."""
    from grader import exercises, overview

    good, bad = _result(), _result()
    good.checks[1].status, good.checks[1].diagnosis = "passed", ""
    rows = [{"student": name, "status": "graded", "score": r.score, "max_score": r.max_score, "error": "",
             "needs_review": "", "duration": 1.0, "result": r} for name, r in (("ada", good), ("bo", bad))]
    rows.append({"student": "cy", "status": "refused", "score": 0, "max_score": 0, "error": "zip bomb",
                 "needs_review": "", "duration": 0, "result": None})
    page = tmp_path / "index.html"
    page.write_text(overview.render(exercises.load("exercise3"), rows), encoding="utf-8")
    html = page.read_text()
    assert 'href="reports/ada.html"' in html and "zip bomb" in html and "causal mask off by one" in html
    pixels, console = _screenshot(page, tmp_path, height=1600)
    assert console == []
    assert _count(pixels, (0x1C, 0x7E, 0xD6)) > 300  # histogram bars
    assert _count(pixels, (0x2F, 0x9E, 0x44)) > 300  # pass-rate bars


def test_terminal_summary_lists_further_failing_cases_of_a_check_once():
    result = _result()
    first = result.checks[1]
    for case in ("B1_T5_d8_h2_causal", "B3_T1_d8_h2_causal"):
        result.checks.append(CheckResult(f"test_mha_parity[{case}]", first.description, 2, "failed",
                                         feedback="max abs error 0.2", hint=first.hint, diagnosis=first.diagnosis))
    text = report.terminal_summary(result)
    assert text.count("Likely mistake: causal mask off by one") == 1
    assert "Also fails on 2 more case(s): B1_T5_d8_h2_causal, B3_T1_d8_h2_causal" in text
    assert "max abs error 0.2" not in text  # folded into the list
    assert "1 / 8 points" in text


def test_cases_of_a_check_that_fail_the_same_way_share_one_row():
    def case(i, diagnosis, status="failed"):
        return CheckResult(f"test_mha_parity[case{i}]", f"mha matches torch (case{i}).", 0.5, status,
                           feedback=f"max abs error {i}", hint="apply w_out", diagnosis=diagnosis)

    result = SubmissionResult(exercise="exercise3", submission="s", seed=1, checks=[
        case(1, "W_O forgotten"), case(2, "W_O forgotten"), case(3, "W_O forgotten"),
        case(4, "mask after softmax"), case(5, "", status="passed"), case(6, "", status="passed")])
    html = report.render_html(result)
    rows = html.count("<tr id=")
    assert rows == 3  # W_O cases 1-3, the mask case 4, the passed cases 5-6
    assert html.count("Likely mistake:") == 2 and html.count("General hint:") == 2
    assert "Also fails on 2 more case(s) of this check" in html and "Also passes on 1 more case(s)" in html
    assert "max abs error 2" in html and "max abs error 3" in html  # each folded case keeps its numbers
    assert "<td>0 / 1.5</td>" in html and "<td>1 / 1</td>" in html  # a row's points are its cases' sum
    assert 'id="test_mha_parity[case3]"' in html  # every case keeps its anchor


def test_a_folded_row_keeps_its_heat_map_and_overridden_cases_keep_their_rows():
    grid = {"error_map": [[0.0, 1.0]], "error_map_axes": ["token", "feature"], "error_map_of": "transformer_block"}

    def case(i, details=None, override=None):
        return CheckResult(f"test_block_parity[c{i}]", f"block matches torch (c{i}).", 1, "failed",
                           feedback=f"error {i}", details=details or {}, override=override)

    result = SubmissionResult(exercise="exercise3", submission="s", seed=1, checks=[
        case(1), case(2, dict(grid)), case(3, dict(grid)),  # c1 (wrong shape) has no map, c2 has one
        case(4, override={"points": 0.5, "comment": "COMMENT-A"}),
        case(5, override={"points": 0.25, "comment": "COMMENT-B"})])
    html = report.render_html(result)
    assert html.count('<svg class="heatmap"') == 1
    assert html.index('<svg class="heatmap"') < html.index('id="test_block_parity[c2]"')  # drawn in c1's row
    assert "heat map of test_block_parity[c2]" in html
    assert "block matches torch." in html  # the folded row is titled by its check, not by c1
    assert "COMMENT-A" in html and "COMMENT-B" in html  # each override has its own row
    assert html.count("<tr id=") == 3


def test_terminal_summary_folds_grader_errors_as_errors():
    def case(i, status):
        return CheckResult(f"test_mha_parity[c{i}]", f"mha (c{i}).", 1, status, feedback=f"problem {i}")

    text = report.terminal_summary(SubmissionResult(exercise="exercise3", submission="s", seed=1, checks=[
        case(1, "error"), case(2, "error"), case(3, "failed"), case(4, "failed"), case(5, "failed")]))
    assert "Also a grader error on 1 more case(s): c2" in text
    assert "Also fails on 2 more case(s): c4, c5" in text
    # A folded row is titled by its check and counts the points of all its cases.
    assert "mha. [0/3]" in text and "mha. [0/2]" in text


def test_heat_map_marks_non_finite_outputs_in_cyan_and_keeps_tiny_errors_dark():
    import re

    def fills(values):
        svg = report.heatmap_svg(values, ["token", "feature"])
        return re.findall(r'<rect x="[^"]+" y="[^"]+" width="[^"]+" height="[^"]+" fill="(#[0-9a-f]{6})"/>', svg)

    magma_bottom, magma_top = "#000004", "#fcfdbf"  # the colours of the scale's ends
    with_nan = fills([[float("nan"), 1e-43], [0.0, None]])  # two non-finite cells (NaN, JSON null), the rest ~0
    assert with_nan == ["#22b8cf", magma_bottom, magma_bottom, "#22b8cf"]  # 1e-43 is far below the 1e-6 floor
    assert fills([[0.0, 2.0]]) == [magma_bottom, magma_top]  # a real error fills the top of the scale
    svg = report.heatmap_svg([[float("nan"), 1.0]], ["token", "feature"])
    assert "cyan: NaN or infinite output" in svg and ">token<" in svg and ">feature<" in svg