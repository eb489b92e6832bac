"""grader export: a batch's gradebook as Canvas's Gradebook import CSV, Moodle's offline grading
worksheet and grades.csv, with a roster for a gradebook that has no platform identities (the folders
layout); refused and grader-error students are blank, never 0, with the reason beside."""
import csv
import shutil
from datetime import datetime, timedelta, timezone

import pytest
from click.testing import CliRunner

from conftest import ROOT
from grader import batch
from grader.cli import main
from grader.gradebook import Gradebook

SOLUTION = ROOT / "solutions" / "exercise3" / "attention.py"
SKELETON = ROOT / "exercises" / "exercise3" / "skeleton" / "attention.py"
CANVAS_HEADER = ["Student", "ID", "SIS User ID", "SIS Login ID", "Section", "Exercise 3 (12345)"]
MOODLE_HEADER = ["Identifier", "Full name", "Email address", "Grade", "Maximum grade", "Last modified (grade)",
                 "Feedback comments", "Grader note"]


@pytest.fixture(scope="module")
def gradebook(tmp_path_factory):
    """A folders-layout batch (no platform identities): alice correct, bob the skeleton, carol's zip
    unreadable (refused); dan's row records a grader error as the batch records one."""
    subs = tmp_path_factory.mktemp("subs")
    out = tmp_path_factory.mktemp("out")
    for student, source in (("alice", SOLUTION), ("bob", SKELETON)):
        (subs / student).mkdir()
        shutil.copy(source, subs / student / "attention.py")
    (subs / "carol.zip").write_bytes(b"this is not a zip")
    batch.run("exercise3", subs, out, jobs=1, seed=7)
    with Gradebook.existing(out) as book:
        book.record("dan", "grader_error", error="BrokenProcessPool: the grading worker died twice", max_score=24,
                    identity={})
    return out


@pytest.fixture()
def roster(tmp_path):
    path = tmp_path / "roster.csv"
    path.write_text("\ufeffstudent,name,email,sis_id,login_id,user_id,section\n"  # Excel's BOM
                    "alice,\"Liddell, Alice\",alice@uni.example,S001,aliddell,1001,Group A\n"
                    "bob,\"Stone, Bob\",bob@uni.example,S002,bstone,1002,Group B\n"
                    "carol,\"Ng, Carol\",carol@uni.example,S003,cng,1003,Group A\n"
                    "erin,\"Wu, Erin\",erin@uni.example,S005,ewu,1005,Group B\n", encoding="utf-8")
    return path


def _table(path):
    with open(path, newline="", encoding="utf-8") as fh:
        return list(csv.reader(fh))


def _export(*args):
    return CliRunner().invoke(main, ["export", *map(str, args)])


def test_grades_csv_leaves_refused_and_errored_scores_blank(gradebook):
    with open(gradebook / "grades.csv", newline="") as fh:
        rows = {r["student"]: r for r in csv.DictReader(fh)}
    assert (rows["alice"]["score"], rows["bob"]["score"], rows["carol"]["score"]) == ("24", "0", "")
    assert rows["carol"]["status"] == "refused" and "not a readable zip" in rows["carol"]["error"]


def test_csv_export_is_the_gradebook_per_check(gradebook, tmp_path):
    result = _export("csv", "--gradebook", gradebook, "--out", tmp_path / "grades.csv")
    assert result.exit_code == 0, result.output
    table = {r[0]: r for r in _table(tmp_path / "grades.csv")}
    header = table["student"]
    assert header[:3] == ["student", "score", "max_score"] and header[-3:] == ["needs_review", "error", "status"]
    assert len(header) == 3 + 39 + 3  # exercise 3's 39 checks
    assert (table["alice"][1], table["bob"][1], table["carol"][1], table["dan"][1]) == ("24", "0", "", "")
    assert table["dan"][-1] == "grader_error" and table["dan"][-2].startswith("BrokenProcessPool")


def test_canvas_export_with_roster_has_canvas_columns_and_notes_beside(gradebook, roster, tmp_path):
    out = tmp_path / "canvas.csv"
    result = _export("canvas", "--gradebook", gradebook, "--out", out, "--roster", roster,
                     "--assignment", "Exercise 3 (12345)")
    assert result.exit_code == 0, result.output
    assert _table(out) == [
        CANVAS_HEADER,
        ["Points Possible", "", "", "", "", "24"],
        ["Liddell, Alice", "1001", "S001", "aliddell", "Group A", "24"],
        ["Stone, Bob", "1002", "S002", "bstone", "Group B", "0"],
        ["Ng, Carol", "1003", "S003", "cng", "Group A", ""],  # refused: blank, never 0
        ["dan", "", "", "", "", ""],  # not in the roster, no identity: the grader's id stands for the name
    ]
    notes = _table(tmp_path / "canvas-notes.csv")
    assert notes[0] == ["student", "Student", "ID", "status", "note"]
    assert [r[:4] for r in notes[1:]] == [["carol", "Ng, Carol", "1003", "refused"], ["dan", "", "", "grader_error"]]
    assert notes[1][4].startswith("no grade: the submission was refused: carol.zip is not a readable zip file")
    assert notes[2][4] == ("no grade: the grader failed (not the student's fault; grade again with --resume): "
                           "BrokenProcessPool: the grading worker died twice")
    assert "1 student(s) of the gradebook are not in the roster (identified from the platform's export only): dan" \
        in result.output
    assert "1 student(s) of the roster have no row in the gradebook (not exported): erin" in result.output
    assert "Canvas can match them only by name (give a --roster): dan" in result.output
    assert f"canvas: 4 student(s) written to {out}; notes (no grade, needs review) in {tmp_path / 'canvas-notes.csv'}" \
        in result.output


def test_canvas_export_scales_to_the_assignments_points(gradebook, roster, tmp_path):
    out = tmp_path / "canvas.csv"
    result = _export("canvas", "--gradebook", gradebook, "--out", out, "--roster", roster,
                     "--assignment", "Exercise 3", "--points-possible", 10)
    assert result.exit_code == 0, result.output
    table = _table(out)
    assert table[1][5] == "10" and [r[5] for r in table[2:5]] == ["10", "0", ""]
    assert "--assignment 'Exercise 3' has no Canvas assignment id in parentheses" in result.output


def test_moodle_export_is_the_offline_grading_worksheet(gradebook, roster, tmp_path):
    out = tmp_path / "worksheet.csv"
    before = datetime.now(timezone.utc).replace(microsecond=0)
    result = _export("moodle", "--gradebook", gradebook, "--out", out, "--roster", roster, "--points-possible", 100)
    assert result.exit_code == 0, result.output
    table = _table(out)
    assert table[0] == MOODLE_HEADER
    rows = {r[0] or r[1]: r for r in table[1:]}
    assert rows["Participant 1001"][1:5] == ["Liddell, Alice", "alice@uni.example", "100", "100"]
    assert rows["Participant 1001"][6:] == ["100 of 100 points.", ""]
    assert rows["Participant 1002"][3] == "0"
    carol = rows["Participant 1003"]
    assert carol[3] == "" and carol[7].startswith("no grade: the submission was refused")
    # Moodle's upload replaces the feedback with this cell even without a grade: say why there is none.
    assert carol[6].startswith("No grade: carol.zip is not a readable zip file")
    assert rows["dan"][0] == "" and rows["dan"][3] == ""  # no participant id: Moodle cannot import it
    assert rows["dan"][6] == ("Not graded yet: the grader failed on this submission (not your fault); it will be "
                              "graded again.")
    modified = datetime.fromisoformat(rows["Participant 1001"][5])
    assert before <= modified <= datetime.now(timezone.utc) + timedelta(seconds=1)
    assert "Moodle cannot import them (give a --roster with user_id): dan" in result.output


@pytest.mark.parametrize("args, message", [
    (["pdf"], "Error: unknown export format 'pdf'; choose one of canvas, moodle, csv"),
    (["canvas"], 'Error: canvas needs --assignment "NAME (ID)"'),
    (["csv", "--points-possible", "10"], "Error: --roster and --points-possible apply to canvas and moodle"),
    (["moodle", "--assignment", "Exercise 3 (1)"], "Error: --assignment is the header of Canvas's assignment column"),
    (["moodle", "--points-possible", "nan"], "Error: --points-possible must be a number of points above 0, got nan"),
    (["moodle", "--points-possible", "inf"], "Error: --points-possible must be a number of points above 0, got inf"),
])
def test_bad_arguments_are_input_errors(gradebook, tmp_path, args, message):
    result = _export(*args, "--gradebook", gradebook, "--out", tmp_path / "x.csv")
    assert result.exit_code == 2 and message in result.output, result.output
    assert not (tmp_path / "x.csv").exists()


@pytest.mark.parametrize("name", ["gradebook.sqlite", "gradebook.sqlite-wal", "students.csv"])
def test_out_never_overwrites_the_gradebook_or_the_id_mapping(gradebook, name):
    before = (gradebook / name).read_bytes() if (gradebook / name).exists() else None
    result = _export("moodle", "--gradebook", gradebook, "--out", gradebook / name)
    assert result.exit_code == 2
    assert (f"Error: --out {gradebook / name} would overwrite what grader batch wrote in {gradebook}; write the "
            "export elsewhere") in result.output
    assert ((gradebook / name).read_bytes() if (gradebook / name).exists() else None) == before

def test_no_gradebook_in_the_folder_is_an_input_error(tmp_path):
    result = _export("moodle", "--gradebook", tmp_path, "--out", tmp_path / "x.csv")
    assert result.exit_code == 2
    assert f"Error: no gradebook in {tmp_path} (gradebook.sqlite is missing); give the --out folder" in result.output


@pytest.mark.parametrize("delimiter", [";", "\t"])
def test_a_roster_excel_saved_with_semicolons_or_tabs_is_read(gradebook, tmp_path, delimiter):
    """Excel writes ``;`` where the decimal separator is a comma, and tabs as "Unicode Text"."""
    path = tmp_path / "roster.csv"
    lines = [["student", "name", "user_id"], ["alice", "Liddell, Alice", "1001"], ["bob", "Stone, Bob", "1002"]]
    path.write_text("\ufeff" + "".join(delimiter.join(line) + "\r\n" for line in lines), encoding="utf-8")
    result = _export("moodle", "--gradebook", gradebook, "--out", tmp_path / "x.csv", "--roster", path)
    assert result.exit_code == 0, result.output
    rows = {r[0]: r for r in _table(tmp_path / "x.csv")[1:]}
    assert rows["Participant 1001"][1:4] == ["Liddell, Alice", "", "24"]
    assert rows["Participant 1002"][1:4] == ["Stone, Bob", "", "0"]


def test_a_roster_not_in_utf8_says_how_to_save_it(gradebook, tmp_path):
    path = tmp_path / "roster.csv"
    path.write_bytes("student,name\nalice,Müller\n".encode("cp1252"))  # Excel's "CSV (Comma delimited)"
    result = _export("moodle", "--gradebook", gradebook, "--out", tmp_path / "x.csv", "--roster", path)
    assert result.exit_code == 2
    assert "is not UTF-8 (byte 0xfc at position 20); save it as UTF-8 (Excel: Save As > CSV UTF-8)" in result.output

@pytest.mark.parametrize("text, message", [
    ("name,email\nAlice,a@x\n", "has the columns name, email; it needs a 'student' column"),
    ("student\nalice\n", "has the columns student; it needs a 'student' column (the grader's student ids) and at "
                         "least one of name, email, sis_id, login_id, user_id, section"),
    ("student,name\nalice,A\nalice,B\n", "line 3: the student 'alice' is there twice"),
    ("student,name\n,A\n", "line 2: no student id"),
])
def test_bad_roster_is_an_input_error(gradebook, tmp_path, text, message):
    path = tmp_path / "roster.csv"
    path.write_text(text)
    result = _export("moodle", "--gradebook", gradebook, "--out", tmp_path / "x.csv", "--roster", path)
    assert result.exit_code == 2 and message in result.output, result.output


@pytest.mark.parametrize("fmt, column, message", [
    ("canvas", "sis_id", "alice and bob both have the SIS User ID S001"),
    ("canvas", "user_id", "alice and bob both have the ID 1001"),
    ("moodle", "user_id", "alice and bob both have the participant id 1001"),
])
def test_two_students_with_one_platform_id_are_refused(gradebook, tmp_path, fmt, column, message):
    """The platform would put both grades on one student (and none on the other)."""
    path = tmp_path / "roster.csv"
    path.write_text(f"student,{column}\nalice,{'S001' if column == 'sis_id' else '1001'}\n"
                    f"bob,{'S001' if column == 'sis_id' else '1001'}\n", encoding="utf-8")
    result = _export(fmt, "--gradebook", gradebook, "--out", tmp_path / "x.csv", "--roster", path,
                     *(["--assignment", "Exercise 3 (12345)"] if fmt == "canvas" else []))
    assert result.exit_code == 2, result.output
    assert f"Error: {message}; give each student their own in the roster" in result.output
    assert not (tmp_path / "x.csv").exists()

def _rubric_gradebook(folder):
    """An exercise-1 gradebook as batch records it: ann's rubric total flagged for review, ben's not."""
    from grader.results import CheckResult, SubmissionResult

    with Gradebook(folder / "gradebook.sqlite", "exercise1", 1) as book:
        for student, points, review in (("ann", 9, ["borderline total 9/17: within 1 of the pass mark 9"]),
                                        ("ben", 14, [])):
            checks = [CheckResult(f"test_concept_{i}", "", 1, "passed" if i < points else "failed") for i in range(17)]
            result = SubmissionResult("exercise1", student, 1, checks, needs_review=review)
            book.record(student, "graded", result=result, identity={"user_id": "501" if student == "ann" else "502",
                                                                    "layout": "moodle"})
    return folder


def test_grades_needing_review_and_the_scale_are_said_on_export(tmp_path):
    out = _rubric_gradebook(tmp_path)
    result = _export("moodle", "--gradebook", out, "--out", tmp_path / "x.csv")
    assert result.exit_code == 0, result.output
    assert ("Warning: 1 student(s) need review before their grade is released (the reason is in the Grader note "
            "column): ann") in result.output
    assert ("Warning: grades are out of 17 points (exercise1's full marks); if the assignment is worth other points "
            "in Moodle, export again with --points-possible") in result.output
    rows = {r[0]: r for r in _table(tmp_path / "x.csv")[1:]}
    assert (rows["Participant 501"][3], rows["Participant 502"][3]) == ("9", "14")  # exported all the same
    result = _export("canvas", "--gradebook", out, "--out", tmp_path / "c.csv", "--assignment", "Ex 1 (5)",
                     "--points-possible", 10)
    assert result.exit_code == 0, result.output
    assert f"the reason is in {tmp_path / 'c-notes.csv'}): ann" in result.output
    assert "grades are out of" not in result.output

def test_a_gradebook_without_any_grade_needs_points_possible(tmp_path):
    with Gradebook(tmp_path / "out" / "gradebook.sqlite", "exercise3", 1) as book:
        book.record("carol", "refused", error="no attention.py found in the submission (looked in every folder).")
    result = _export("moodle", "--gradebook", tmp_path / "out", "--out", tmp_path / "x.csv")
    assert result.exit_code == 2 and "no student of this gradebook has been graded" in result.output
    result = _export("moodle", "--gradebook", tmp_path / "out", "--out", tmp_path / "x.csv", "--points-possible", 24)
    assert result.exit_code == 0, result.output
    with open(tmp_path / "x.csv", newline="", encoding="utf-8") as fh:
        (row,) = csv.DictReader(fh)
    assert (row["Full name"], row["Grade"], row["Maximum grade"]) == ("carol", "", "24")
    assert row["Grader note"] == ("no grade: the submission was refused: no attention.py found in the submission "
                                  "(looked in every folder).")
