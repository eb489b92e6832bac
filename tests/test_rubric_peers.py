"""Copying between students of one batch (grader/rubric/peers.py): pairs, CSV, overview, and a real
``grader batch exercise1 DIR`` run whose class overview is opened in headless Chromium."""
from __future__ import annotations

import csv
import random
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from grader import rubric
from grader.rubric import copying, peers
from grader.rubric.copying import plain_text
from grader.rubric.sentences import split_sentences

ROOT = Path(__file__).resolve().parents[1]
SETTINGS = rubric.load(ROOT / "exercises" / "exercise1" / "rubric.toml").copying
ANSWERS = ROOT / "tests" / "exercise1_answers"


def _answer(name: str) -> str:
    return (ANSWERS / name / "answer.md").read_text(encoding="utf-8")


def test_two_students_with_the_same_answer_are_a_pair_and_others_are_not():
    texts = {"ada": _answer("typical_student"), "bob": _answer("typical_student"),
             "cy": _answer("excellent_own_words"), "dee": _answer("heldout_casual_excellent")}
    pairs = peers.similar_pairs(texts, SETTINGS)
    assert [(p.a, p.b) for p in pairs] == [("ada", "bob")]
    assert pairs[0].share_a == pytest.approx(1.0) and pairs[0].share_b == pytest.approx(1.0)
    assert "ada" in peers.review_reason(pairs[0], "bob") and "points unchanged" in peers.review_reason(pairs[0], "bob")
    rows = list(csv.DictReader(peers.to_csv(pairs).splitlines()))
    assert rows[0]["student_a"] == "ada" and rows[0]["student_b"] == "bob" and float(rows[0]["share_a"]) == 1.0
    shown = peers.for_overview(pairs)[0]["passages"][0]
    assert shown[0][1] and shown[0][1] == shown[1][1]  # the same passage highlighted on both sides


def test_a_partial_copy_between_students_is_listed_with_both_shares():
    own = _answer("excellent_own_words")
    part = own.split("## 2.")[0] + "\n## 2." + _answer("typical_student").split("## 2.", 1)[-1]
    pairs = peers.similar_pairs({"cy": own, "eve": part}, SETTINGS)
    assert len(pairs) == 1 and pairs[0].share >= SETTINGS.peer_share
    assert 0.2 < min(pairs[0].share_a, pairs[0].share_b) < 0.95


def test_five_hundred_answers_are_compared_in_seconds():
    """Worst case for the index: 500 answers drawn from the same ~50, so every answer shares sentences."""
    paths = sorted(ANSWERS.glob("*/answer.md"))
    sources = [plain_text(p.read_text(encoding="utf-8")) for p in paths]
    # copied_verbatim and copied_light_edit are both the reference solution: one source
    origin = [("copied" if p.parent.name.startswith("copied_") else p.parent.name) for p in paths]
    rng = random.Random(5)
    texts = {f"s{i:03d}": "\n".join(line for line in sources[i % len(sources)].split("\n") if rng.random() > 0.15)
             for i in range(500)}
    copying.prepare.cache_clear()
    started = time.perf_counter()
    pairs = peers.similar_pairs(texts, SETTINGS)
    seconds = time.perf_counter() - started
    assert seconds < 8, seconds  # ~2 s on this machine when idle
    # copies of one answer pair up; answers from different sources do not
    assert len(pairs) > 1000
    assert all(origin[int(p.a[1:]) % len(sources)] == origin[int(p.b[1:]) % len(sources)] for p in pairs)


def test_no_rubric_no_pairs(tmp_path):
    assert peers.batch_pairs(tmp_path, {"a": "x"}) is None
    assert peers.batch_pairs(ROOT / "exercises" / "exercise1", {}) == []


@pytest.fixture(scope="module")
def batch_out(tmp_path_factory):
    """``grader batch exercise1 SUBS`` on 5 answers: ada and bob hand in the same one."""
    subs = tmp_path_factory.mktemp("subs")
    out = tmp_path_factory.mktemp("out") / "out"
    for student, name in [("ada", "typical_student"), ("bob", "typical_student"), ("cy", "excellent_own_words"),
                          ("dee", "heldout_casual_excellent"), ("eli", "partial_attention_only")]:
        (subs / student).mkdir()
        shutil.copy(ANSWERS / name / "answer.md", subs / student / "answer.md")
    grader = Path(sys.executable).with_name("grader")
    run = subprocess.run([str(grader), "batch", "exercise1", str(subs), "--out", str(out), "--jobs", "1"],
                         capture_output=True, text=True, timeout=600, cwd=ROOT)
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
    return out


def test_the_batch_writes_the_pair_to_csv_and_overview_and_flags_both(batch_out):
    rows = list(csv.DictReader((batch_out / "similar_answers.csv").read_text(encoding="utf-8").splitlines()))
    assert [(r["student_a"], r["student_b"]) for r in rows] == [("ada", "bob")]
    html = (batch_out / "index.html").read_text(encoding="utf-8")
    assert 'id="similar-answers"' in html and "<mark>" in html
    assert html.count('class="similar-pair"') == 1
    grades = {r["student"]: r for r in csv.DictReader((batch_out / "grades.csv").read_text(encoding="utf-8").splitlines())}
    assert "similar to bob's answer" in grades["ada"]["needs_review"]
    assert "similar to ada's answer" in grades["bob"]["needs_review"]
    assert "similar to" not in grades["cy"]["needs_review"]
    assert grades["ada"]["score"] == grades["bob"]["score"]  # points are not lowered for peer similarity


def test_the_similar_answers_section_renders_side_by_side_in_chromium(batch_out, tmp_path):
    from test_report import _count, _screenshot

    html = (batch_out / "index.html").read_text(encoding="utf-8")
    start = html.index('<h2 id="similar-answers">')
    page = tmp_path / "similar.html"  # the section alone, with the overview's styles, at the top of the page
    head = html[:html.index("<body>") + len("<body>")]
    section = html[html.rindex("<style>", 0, start):html.index("</section>", start) + len("</section>")]
    page.write_text(head + section + "</body></html>", encoding="utf-8")
    pixels, console = _screenshot(page, tmp_path, height=900)
    assert console == []
    marked = (abs(pixels - [0xFF, 0xE0, 0x66]).max(axis=2) <= 12)  # <mark> background #ffe066
    assert _count(pixels, (0xFF, 0xE0, 0x66)) > 2000
    columns = marked.any(axis=0).nonzero()[0]
    assert columns.min() < 400 and columns.max() > 600  # highlighted on both sides of the page
