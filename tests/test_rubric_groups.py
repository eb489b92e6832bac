"""Review groups (grader/rubric/groups.py): grade vectors, text similarity, stable ids, and a real batch of
exercise 1 whose class overview shows the groups and whose overrides file applies one decision to a group."""
import csv
import random
import shutil
import zipfile
from html.parser import HTMLParser
from pathlib import Path

import pytest

from conftest import ROOT
from grader import batch, exercises
from grader.lms import Submission
from grader.overrides import OverrideError
from grader.results import CheckResult, SubmissionResult
from grader.rubric import groups

ANSWERS = ROOT / "tests" / "exercise1_answers"


# ------------------------------------------------------------------------------ unit: vectors and text
def _result(student, earned, made=(), review=()):
    """A rubric result over lines a, b, c and misconception m (made, avoided, or skipped when None)."""
    checks = [CheckResult(f"test_{line}", f"concept {line}", 1, "passed" if line in earned else "failed",
                          details={"rubric_line": line, "evidence": [f"{student} says {line}."]})
              for line in "abc"]
    status = "skipped" if made is None else "failed" if "m" in made else "passed"
    checks.append(CheckResult("test_no_m", "No misconception: heads split the tokens.", 1, status,
                              details={} if made is None else {"misconception": "m", "evidence": []}))
    return {"student": student, "status": "graded",
            "result": SubmissionResult("exercise1", student, 1, checks=checks, needs_review=list(review))}


TEXT_A = "Each head has its own query, key and value projections and all heads run in parallel over the tokens."
TEXT_B = "A convolutional network slides small filters over an image to find edges, then pools them."


def test_same_vector_is_one_group_whatever_the_text():
    rows = [_result("ada", "ab"), _result("bob", "ab")]
    got = groups.review_groups(rows, {"ada": TEXT_A, "bob": TEXT_B})
    assert [g.students for g in got] == [["ada", "bob"]]
    assert got[0].earned() == ["concept a", "concept b"]
    assert got[0].members[1].similarity < 0.1  # the outlier shows as a low similarity


def test_near_identical_text_one_line_apart_joins_but_two_lines_apart_does_not():
    edited = TEXT_A.replace("all heads", "the heads")
    rows = [_result("ada", "ab"), _result("bob", "a"), _result("cy", "c")]
    got = groups.review_groups(rows, {"ada": TEXT_A, "bob": edited, "cy": TEXT_A})
    # bob: Hamming 1 from ada, same text with an edit -> together; cy: Hamming 2 from bob (3 from ada),
    # identical text -> alone
    assert sorted(g.students for g in got) == [["ada", "bob"], ["cy"]]


def test_one_line_apart_with_different_text_stays_apart():
    got = groups.review_groups([_result("ada", "ab"), _result("bob", "a")], {"ada": TEXT_A, "bob": TEXT_B})
    assert sorted(g.students for g in got) == [["ada"], ["bob"]]


def test_a_misconception_made_or_skipped_is_part_of_the_vector():
    rows = [_result("ada", "ab", made=()), _result("bob", "ab", made=("m",)), _result("cy", "ab", made=None)]
    got = groups.review_groups(rows, {})
    assert sorted(g.students for g in got) == [["ada"], ["bob"], ["cy"]]
    bob = next(g for g in got if g.students == ["bob"])
    assert bob.made() == ["heads split the tokens."]
    assert bob.key_sentences == ["bob says a.", "bob says b."]  # evidence of the earned lines


def test_order_of_rows_does_not_matter_and_review_order_is_flagged_then_size():
    rows = [_result("ada", "ab"), _result("bob", "ab"), _result("cy", "ab"), _result("dan", "c", review=["near"]),
            _result("eve", "a"), _result("fay", "a")]
    expected = [["dan"], ["ada", "bob", "cy"], ["eve", "fay"]]
    for seed in range(5):
        random.Random(seed).shuffle(rows)
        assert [g.students for g in groups.review_groups(rows, {})] == expected


def test_ids_come_from_the_key_vector_and_survive_a_new_member():
    rows = [_result("bob", "ab"), _result("cy", "ab"), _result("dan", "a")]
    before = {tuple(g.students): g.id for g in groups.review_groups(rows, {})}
    after = {tuple(g.students): g.id for g in groups.review_groups(rows + [_result("aaa", "ab")], {})}
    assert after == {("aaa", "bob", "cy"): before[("bob", "cy")], ("dan",): before[("dan",)]}
    assert before[("bob", "cy")] == groups.group_id(groups.grade_vector(rows[0]["result"],
                                                                        groups.rubric_checks([rows[0]["result"]])))
    assert before[("bob", "cy")].startswith("G-") and len(before[("bob", "cy")]) == 10


def test_no_rubric_checks_means_no_groups():
    plain = SubmissionResult("exercise3", "ada", 1, checks=[CheckResult("test_mha_shape", "shape", 1, "passed")])
    assert groups.review_groups([{"student": "ada", "status": "graded", "result": plain}], {}) == []


def test_content_words_ignore_markup_headings_and_inflections():
    a = groups.content_counts("## 1. Heads\n\nThe **heads** compute attention patterns.")
    b = groups.content_counts("# Answer\n\nA head computed an attention pattern!")
    assert groups.cosine(a, b) == pytest.approx(1.0)
    # the Snowball stem (the copying step's, fingerprint.stem): no "s" cut off "class" or "bus"; inflections meet
    assert groups.stem("class") == "class" and groups.stem("bus") == "bus" and groups.stem("studies") == groups.stem("study")
    # the same words in another order share the words but not the pairs: not near-identical
    c = groups.content_counts("Patterns compute heads attention.")
    assert 0.3 < groups.cosine(a, c) < groups.NEAR


def test_answer_texts_from_folders_zips_and_reports(tmp_path):
    (tmp_path / "ada").mkdir()
    (tmp_path / "ada" / "answer.md").write_text("Ada's answer.")
    with zipfile.ZipFile(tmp_path / "bob.zip", "w") as z:
        z.writestr("__MACOSX/bob/._answer.md", b"\x00junk")
        z.writestr("bob/exercise1/answer.md", "Bob's answer.")
    subs = [Submission("ada", tmp_path / "ada"), Submission("bob", tmp_path / "bob.zip"),
            Submission("cy", tmp_path / "missing"), Submission("dan", tmp_path / "ada", problem="twin")]
    assert groups.answer_texts(exercises.load("exercise1"), subs) == {"ada": "Ada's answer.", "bob": "Bob's answer.",
                                                                       "cy": ""}
    (tmp_path / "eve").mkdir()
    (tmp_path / "eve" / "report.md").write_text("| run | val loss |\n|---|---|\n| prenorm | 1.9 |\n\n"
                                                "## Explanation\n\n<!-- say why -->The residual carries the signal.\n")
    got = groups.answer_texts(exercises.load("exercise4"), [Submission("eve", tmp_path / "eve")])
    assert got == {"eve": "The residual carries the signal."}
    assert groups.answer_texts(exercises.load("exercise3"), [Submission("eve", tmp_path / "eve")]) == {}


# ------------------------------------------------------------------------------ a real batch of exercise 1
TYPICAL = (ANSWERS / "typical_student" / "answer.md").read_text()


def _edit(text, *pairs):
    for old, new in pairs:
        assert old in text, old
        text = text.replace(old, new)
    return text


#: The batch: ann, ben, cat are one answer with small edits (cat also loses W_O: one rubric line fewer);
#: dan and eve are different answers with the same grade vector (no line earned, no misconception checked:
#: a first choice of two partial answers with one vector stopped sharing it while the rubric engine changed);
#: fay, gus, hal are alone.
BATCH = {
    "ann": TYPICAL,
    "ben": _edit(TYPICAL, ("I think\nof it like", "I picture\nit as"), ("for example 12 in BERT base", "e.g. 12 in BERT-base")),
    "cat": _edit(TYPICAL, ("and then multiplied by another matrix W_O to get the output of the layer",
                           "and that is the output of the layer")),
    "dan": (ANSWERS / "one_liner" / "answer.md").read_text(),
    "eve": (ANSWERS / "off_topic_contract_law" / "answer.md").read_text(),
    "fay": (ANSWERS / "good_technical_no_analogy" / "answer.md").read_text(),
    "gus": (ANSWERS / "misconception_split_tokens" / "answer.md").read_text(),
    "hal": (ANSWERS / "analogy_only" / "answer.md").read_text(),
}
#: Written before the batch was first run.
EXPECTED = [["ann", "ben", "cat"], ["dan", "eve"], ["fay"], ["gus"], ["hal"]]
#: The 9th answer: one more light edit of the same answer, named to sort before every member.
NINTH = ("aaron", _edit(TYPICAL, ("That makes GPT good at generating text.", "This is why GPT generates text well.")))


class _Groups(HTMLParser):
    """The review groups of an overview page: id -> {"size", "flagged", "members", "earns", "sentences"}."""

    def __init__(self):
        super().__init__()
        self.groups, self.current, self.field = {}, None, None

    def handle_starttag(self, tag, attrs):
        cls = dict(attrs).get("class", "")
        if tag == "section" and cls == "review-group":
            self.current = self.groups.setdefault(dict(attrs)["id"], {"members": [], "sentences": [], "text": ""})
        elif self.current is not None:
            self.field = {"group-size": "size", "group-flagged": "flagged", "member": "member",
                          "group-id": "id"}.get(cls, "li" if tag == "li" else self.field)

    def handle_endtag(self, tag):
        if tag == "section":
            self.current = None
        if tag in ("span", "td", "li", "code"):
            self.field = None

    def handle_data(self, data):
        if self.current is None:
            return
        self.current["text"] += data
        if self.field in ("size", "flagged", "id"):
            self.current[self.field] = data.strip()
        elif self.field == "member" and data.strip():
            self.current["members"].append(data.strip())
        elif self.field == "li":
            self.current["sentences"].append(data.strip())


def _overview_groups(out: Path) -> dict:
    parser = _Groups()
    parser.feed((out / "index.html").read_text())
    return parser.groups


def _grades(out: Path) -> dict:
    with open(out / "grades.csv", newline="") as fh:
        return {row["student"]: row for row in csv.DictReader(fh)}


def _write(folder: Path, answers: dict) -> None:
    for student, text in answers.items():
        (folder / student).mkdir(parents=True, exist_ok=True)
        (folder / student / "answer.md").write_text(text)


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    """The 8 answers graded once, then the 9th added (``--resume``): the two overviews' groups."""
    subs, out = tmp_path_factory.mktemp("subs"), tmp_path_factory.mktemp("out")
    _write(subs, BATCH)
    batch.run("exercise1", subs, out, jobs=1, seed=3)
    first = _overview_groups(out)
    first_csv = _grades(out)
    shutil.copytree(out, out.parent / f"{out.name}-first")
    _write(subs, dict([NINTH]))
    batch.run("exercise1", subs, out, jobs=1, resume=True)
    return subs, out, first, first_csv, _overview_groups(out)


def test_the_overview_shows_the_expected_groups_in_review_order(graded):
    _, out, first, first_csv, _ = graded
    assert sorted(sorted(g["members"]) for g in first.values()) == EXPECTED
    by_members = {tuple(sorted(g["members"])): (gid, g) for gid, g in first.items()}
    gid, team = by_members[("ann", "ben", "cat")]
    assert team["size"] == "3" and team["id"] == gid and gid.startswith("G-")
    assert "concat" in team["text"].lower() or "W_O" in team["text"]  # the earned lines, in words
    assert "-concat_w_o (missing)" in team["text"]  # cat differs from the group by one line
    assert any("W_O" in s for s in team["sentences"])  # the representative's evidence
    assert by_members[("dan", "eve")][1]["size"] == "2"
    html = (out.parent / f"{out.name}-first" / "index.html").read_text()
    order = [html.index(f'id="{gid}"') for gid in first]
    assert order == sorted(order)
    # "need review" counts the members the gradebook flags; groups with flagged answers come first, larger first
    flags = {s: bool(row["needs_review"]) for s, row in first_csv.items()}
    assert all(int(g["flagged"]) == sum(flags[m] for m in g["members"]) for g in first.values())
    keys = [(g["flagged"] == "0", -int(g["size"])) for g in first.values()]
    assert keys == sorted(keys) and len(set(flags.values())) == 2  # both kinds are in the batch


def test_ids_are_stable_when_a_ninth_answer_joins(graded):
    _, _, first, _, second = graded
    assert set(second) == set(first)
    for gid, g in first.items():
        expected = g["members"] if "ann" not in g["members"] else ["aaron", *g["members"]]
        assert sorted(second[gid]["members"]) == sorted(expected), gid


def test_a_group_override_changes_exactly_its_members_grades(graded, tmp_path):
    subs, out, _, _, second = graded
    before = _grades(out)
    pair = next(gid for gid, g in second.items() if sorted(g["members"]) == ["dan", "eve"])
    decisions = tmp_path / "overrides.csv"
    decisions.write_text(f"student,check,points,comment,group\n"
                         f",heads_parallel,1,\"partial credit agreed at moderation\",{pair}\n")
    work = tmp_path / "out"
    shutil.copytree(out, work)
    batch.run("exercise1", subs, work, jobs=1, resume=True, overrides=decisions)
    after = _grades(work)
    assert "overrides" not in before["ann"]  # the column is there once a decision is merged
    changed = {s for s in after if {**after[s], "overrides": ""} != {**before[s], "overrides": ""}}
    assert changed == {"dan", "eve"} and {after[s]["overrides"] for s in after if s not in changed} == {""}
    for s in ("dan", "eve"):
        assert (before[s]["test_heads_parallel"], after[s]["test_heads_parallel"]) == ("0", "1")
        assert float(after[s]["score"]) == float(before[s]["score"]) + 1
        assert after[s]["overrides"] == (f"test_heads_parallel = 1 (group {pair}): "
                                         "partial credit agreed at moderation")
        report = (work / "reports" / f"{s}.html").read_text()
        assert f"group override {pair}" in report and "agreed at moderation" in report
    assert _overview_groups(work).keys() == second.keys()  # an override moves no answer to another group


def test_an_unknown_group_is_refused_naming_the_known_ones(graded, tmp_path):
    subs, out, _, _, second = graded
    decisions = tmp_path / "overrides.csv"
    decisions.write_text("student,check,points,comment,group\n,heads_parallel,1,why,G-00000000\n")
    work = tmp_path / "out"
    shutil.copytree(out, work)
    with pytest.raises(OverrideError) as info:
        batch.run("exercise1", subs, work, jobs=1, resume=True, overrides=decisions)
    assert info.value.message == (f"{decisions} line 2: no review group 'G-00000000' in this batch; "
                                  f"known groups: {', '.join(sorted(second))}")
    assert _grades(work) == _grades(out)  # nothing merged
