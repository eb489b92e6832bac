"""Canvas and Moodle exports in: fixtures laid out as the platforms name their downloads (Canvas's
ContentZipper: ``name[_LATE]_userid_attachmentid_file``; Moodle's download_submissions and, from 4.1,
downloader.php: ``Full Name_participantid_assignsubmission_file[_]/``, team folders by group id), read
into the right students (never one student's files as another's), graded end to end, and exported back
with the platform's ids, checked against Moodle's own grading worksheet where given."""
import csv
import shutil
import zipfile

import pytest
from click.testing import CliRunner

from conftest import ROOT
from grader import batch, lms
from grader.cli import main
from grader.lms import canvas, discover, moodle
from grader.errors import InputError
from grader.lms.export import export

SOLUTION = ROOT / "solutions" / "exercise3" / "attention.py"
SKELETON = ROOT / "exercises" / "exercise3" / "skeleton" / "attention.py"


def _rows(out):
    from grader.gradebook import Gradebook

    with Gradebook.existing(out) as book:
        return {r["student"]: r for r in book.rows()}


# ------------------------------------------------------------------------------------------ Canvas
def _canvas_download(folder):
    """A Canvas "Download Submissions" folder: four students, as Canvas names the files."""
    folder.mkdir()
    shutil.copy(SOLUTION, folder / "müllerzoë_12345_67890_attention.py")  # non-ASCII sortable name
    shutil.copy(SKELETON, folder / "smithjohn_LATE_23456_78901_attention.py")  # late, nothing done
    # Jane uploaded attention.py twice in her last attempt: Canvas calls the second attention-1.py.
    shutil.copy(SKELETON, folder / "doejane_34567_89011_attention.py")
    shutil.copy(SOLUTION, folder / "doejane_34567_89012_attention-1.py")
    with zipfile.ZipFile(folder / "leeann_LATE_45678_90123_exercise3.zip", "w") as z:  # a zip is the submission
        z.write(SOLUTION, "exercise3/attention.py")
    return folder


def test_canvas_file_names_are_read_as_canvas_writes_them(tmp_path):
    names = {
        "mullerzoe_12345_67890_attention.py": ("mullerzoe", False, "12345", 67890, "attention.py", "attention.py"),
        "smithjohn_LATE_23456_78901_attention.py": ("smithjohn", True, "23456", 78901, "attention.py", "attention.py"),
        "doejane_34567_89012_attention-1.py": ("doejane", False, "34567", 89012, "attention-1.py", "attention.py"),
        # Underscores are word characters: Canvas keeps them in names and in file names.
        "de_la_cruzana_45678_1_my_attention.py": ("de_la_cruzana", False, "45678", 1, "my_attention.py",
                                                  "my_attention.py"),
        "doejane_34567_text.html": ("doejane", False, "34567", 0, "text.html", "text.html"),
        "LATE_anon_aB3x9_555_attention.py": ("", True, "anon_aB3x9", 555, "attention.py", "attention.py"),
        "doejane_34567_89012_data-2.tar.gz": ("doejane", False, "34567", 89012, "data-2.tar.gz", "data.tar.gz"),
        # From the 8th re-upload of a name Canvas adds a random UUID instead of a number.
        "doejane_34567_89013_attention-0b5e4c8a-1f2d-4e3a-9c7b-6d5e4f3a2b1c.py": (
            "doejane", False, "34567", 89013, "attention-0b5e4c8a-1f2d-4e3a-9c7b-6d5e4f3a2b1c.py", "attention.py"),
    }
    for name, want in names.items():
        f = canvas.parse(tmp_path / name)
        assert (f.name, f.late, f.user_id, f.attachment_id, f.original, f.upload[0]) == want, name
    for other in ["Zoë Müller_123456_assignsubmission_file_attention.py", "alice.zip", "notes_1_.py", "12_34_x.py"]:
        assert canvas.parse(tmp_path / other) is None, other


def test_a_file_named_dot_dot_is_not_copied_above_the_submission(tmp_path):
    """An upload named ``..`` (Canvas and Moodle keep dots) would be copied as the submission's parent."""
    folder = tmp_path / "canvas"
    folder.mkdir()
    for entry in ("ann_1_2_attention.py", "ann_1_3_..", "bob_5_6_attention.py", "cy_7_8_attention.py"):
        shutil.copy(SOLUTION, folder / entry)
    found = discover(folder)
    assert found.layout == "canvas" and "1 other entries ignored (ann_1_3_..)" in found.reason
    assert [name for name, _ in found.submissions[0].files] == ["attention.py"]
    folder = tmp_path / "moodle"
    folder.mkdir()
    for entry in ("Ann Lee_5_assignsubmission_file_attention.py", "Ann Lee_5_assignsubmission_file_..",
                  "Bob Ray_6_assignsubmission_file_attention.py"):
        shutil.copy(SOLUTION, folder / entry)
    found = discover(folder)
    assert found.layout == "moodle" and [name for name, _ in found.submissions[0].files] == ["attention.py"]

def test_canvas_download_is_detected_and_grouped_by_user(tmp_path):
    folder = _canvas_download(tmp_path / "canvas")
    (folder / "README.txt").write_text("downloaded on Monday")
    found = discover(folder)
    assert found.layout == "canvas"
    assert found.reason == ("Canvas download, named name[_LATE]_userid_attachmentid_file: 5 entries; "
                            "1 other entries ignored (README.txt)")
    subs = {s.student: s for s in found.submissions}
    assert sorted(subs) == ["doejane_34567", "leeann_45678", "mullerzoe_12345", "smithjohn_23456"]
    zoe, jane, lee = subs["mullerzoe_12345"], subs["doejane_34567"], subs["leeann_45678"]
    assert (zoe.name, zoe.user_id, zoe.late, zoe.layout) == ("müllerzoë", "12345", False, "canvas")
    assert subs["smithjohn_23456"].late and lee.late
    assert jane.files == (("attention.py", str(folder / "doejane_34567_89012_attention-1.py")),)
    assert jane.entries == ("doejane_34567_89012_attention-1.py (as attention.py)",
                            "doejane_34567_89011_attention.py (not graded: replaced by a newer upload of attention.py)")
    assert lee.files == (("exercise3.zip", str(folder / "leeann_LATE_45678_90123_exercise3.zip")),)


def test_one_canvas_user_id_under_two_names_is_refused_not_merged(tmp_path):
    """Canvas writes one name per user id; zips an instructor named alice_2024_01_hw3.zip and
    bob_2024_01_hw3.zip read like Canvas's, but bob's file must not be graded as alice's."""
    folder = tmp_path / "zips"
    folder.mkdir()
    for name in ("alice_2024_01_hw3.zip", "bob_2024_01_hw3.zip", "carol_2025_01_hw3.zip"):
        with zipfile.ZipFile(folder / name, "w") as z:
            z.write(SOLUTION, "attention.py")
    subs = {s.student: s for s in discover(folder).submissions}
    assert sorted(subs) == ["alice_2024", "carol_2025"]
    assert subs["alice_2024"].problem == (
        "the files of Canvas user 2024 carry different names (alice, bob), which Canvas never writes: if this "
        "is not a Canvas download, grade it with --layout folders.")
    assert subs["carol_2025"].problem == ""

@pytest.fixture(scope="module")
def canvas_batch(tmp_path_factory):
    base = tmp_path_factory.mktemp("canvas")
    folder = _canvas_download(base / "download")
    with zipfile.ZipFile(base / "submissions.zip", "w") as z:  # the download as Canvas serves it
        for path in folder.iterdir():
            z.write(path, path.name)
    batch.run("exercise3", base / "submissions.zip", base / "out", jobs=1, seed=5)
    return base / "out"


def test_canvas_download_graded_end_to_end(canvas_batch):
    rows = _rows(canvas_batch)
    scores = {s: (r["status"], r["score"], r["identity"]["late"], r["identity"]["user_id"]) for s, r in rows.items()}
    assert scores == {"mullerzoe_12345": ("graded", 24, False, "12345"),
                      "smithjohn_23456": ("graded", 0, True, "23456"),
                      "doejane_34567": ("graded", 24, False, "34567"),  # the newer upload, not the skeleton
                      "leeann_45678": ("graded", 24, True, "45678")}
    with open(canvas_batch / "students.csv", newline="", encoding="utf-8") as fh:
        mapping = {r["student"]: r for r in csv.DictReader(fh)}
    assert mapping["mullerzoe_12345"]["name"] == "müllerzoë" and mapping["smithjohn_23456"]["late"] == "late"


def _zip_without_utf8_flag(path, members):
    """A zip whose names are UTF-8 bytes without the UTF-8 flag (bit 11), as Info-ZIP's zip and
    rubyzip without ``unicode_names`` (Canvas before it set it) write them: written under ASCII
    stand-ins of the same length, then the name bytes swapped in."""
    swaps = []
    with zipfile.ZipFile(path, "w") as z:
        for i, (name, data) in enumerate(members.items()):
            raw = name.encode("utf-8")
            stand_in = f"{i:03d}".encode() + b"x" * (len(raw) - 3)
            z.writestr(stand_in.decode(), data)
            swaps.append((stand_in, raw))
    blob = path.read_bytes()
    for stand_in, raw in swaps:
        blob = blob.replace(stand_in, raw)
    path.write_bytes(blob)


def test_utf8_names_of_a_zip_without_the_utf8_flag_are_read_as_utf8(tmp_path):
    _zip_without_utf8_flag(tmp_path / "submissions.zip", {
        "müllerzoë_12345_67890_attention.py": SOLUTION.read_bytes(),
        "王芳_23456_78901_attention.py": SOLUTION.read_bytes()})
    with zipfile.ZipFile(tmp_path / "submissions.zip") as z:  # Python reads such names as cp437
        assert sorted(m.flag_bits & 0x800 for m in z.infolist()) == [0, 0]
        assert "m├╝llerzo├½_12345_67890_attention.py" in z.namelist()
    with lms.opened(tmp_path / "submissions.zip") as folder:
        found = {s.student: s.name for s in discover(folder).submissions}
    assert found == {"mullerzoe_12345": "müllerzoë", "王芳_23456": "王芳"}

def test_canvas_export_of_a_canvas_download_carries_the_canvas_ids(canvas_batch, tmp_path):
    done = export("canvas", canvas_batch, tmp_path / "canvas.csv", assignment="Exercise 3 (777)")
    with open(done.out, newline="", encoding="utf-8") as fh:
        table = list(csv.reader(fh))
    assert table[0] == ["Student", "ID", "SIS User ID", "SIS Login ID", "Section", "Exercise 3 (777)"]
    assert table[1] == ["Points Possible", "", "", "", "", "24"]
    assert table[2:] == [["doejane", "34567", "", "", "", "24"], ["leeann", "45678", "", "", "", "24"],
                         ["müllerzoë", "12345", "", "", "", "24"], ["smithjohn", "23456", "", "", "", "0"]]
    assert done.notes is None and done.warnings == [
        "grades are out of 24 points (exercise3's full marks); if the assignment is worth other points in Canvas, "
        "export again with --points-possible"]


# ------------------------------------------------------------------------------------------ Moodle
def test_moodle_flat_files_of_older_downloads_are_read(tmp_path):
    folder = tmp_path / "moodle"
    folder.mkdir()
    shutil.copy(SOLUTION, folder / "Zoë Müller_123456_assignsubmission_file_attention.py")
    (folder / "Zoë Müller_123456_assignsubmission_onlinetext_onlinetext.html").write_text("<p>hi</p>")
    (folder / "Participant_777_assignsubmission_file_attention.py").write_text("x = 1\n")  # anonymous
    found = discover(folder)
    assert found.layout == "moodle"
    subs = {s.student: s for s in found.submissions}
    assert sorted(subs) == ["participant_777", "zoe-muller_123456"]
    zoe = subs["zoe-muller_123456"]
    assert (zoe.name, zoe.user_id, zoe.layout, zoe.late) == ("Zoë Müller", "123456", "moodle", False)
    assert [name for name, _ in zoe.files] == ["attention.py", "onlinetext.html"]
    assert (subs["participant_777"].name, subs["participant_777"].user_id) == ("", "777")


def test_moodle_empty_submission_folder_is_refused_not_graded_as_the_whole_export(tmp_path):
    folder = tmp_path / "moodle"
    (folder / "Ana Lima_345678_assignsubmission_file_").mkdir(parents=True)
    (sub,) = moodle.read(folder)
    assert sub.student == "ana-lima_345678" and sub.files == ()
    assert sub.problem == "the Moodle download holds no file for this student (an empty submission)."


def test_moodle_4_1_folders_without_the_trailing_underscore_are_read(tmp_path):
    """Moodle 4.1+ (mod/assign/classes/downloader.php) names a plugin's folder
    ``{Full Name}_{participant id}_assignsubmission_file``, without the ``_`` 3.1-4.0 ended it with."""
    folder = tmp_path / "moodle"
    (folder / "Zoë Müller_123456_assignsubmission_file" / "exercise3").mkdir(parents=True)
    shutil.copy(SOLUTION, folder / "Zoë Müller_123456_assignsubmission_file" / "exercise3" / "attention.py")
    (folder / "Zoë Müller_123456_assignsubmission_onlinetext").mkdir()
    (folder / "Zoë Müller_123456_assignsubmission_onlinetext" / "onlinetext.html").write_text("<p>hi</p>")
    (folder / "Bob Stone_234567_assignsubmission_file").mkdir()
    shutil.copy(SKELETON, folder / "Bob Stone_234567_assignsubmission_file" / "attention.py")
    found = discover(folder)
    assert found.layout == "moodle"
    subs = {s.student: s for s in found.submissions}
    assert sorted(subs) == ["bob-stone_234567", "zoe-muller_123456"]
    zoe = subs["zoe-muller_123456"]
    assert (zoe.name, zoe.user_id) == ("Zoë Müller", "123456")
    assert [name for name, _ in zoe.files] == ["exercise3/attention.py", "onlinetext.html"]
    assert zoe.entries == ("Zoë Müller_123456_assignsubmission_file/", "Zoë Müller_123456_assignsubmission_onlinetext/")


def test_one_moodle_participant_id_under_two_names_is_refused_not_merged(tmp_path):
    folder = tmp_path / "moodle"
    for name in ("Ana Lima_345678_assignsubmission_file", "Bob Stone_345678_assignsubmission_file",
                 "Cy Young_456789_assignsubmission_file"):
        (folder / name).mkdir(parents=True)
        shutil.copy(SOLUTION, folder / name / "attention.py")
    subs = {s.student: s for s in discover(folder).submissions}
    assert sorted(subs) == ["ana-lima_345678", "cy-young_456789"]
    assert subs["ana-lima_345678"].problem == (
        "the entries of Moodle participant 345678 carry different names (Ana Lima, Bob Stone), which Moodle never "
        "writes: if this is not a Moodle download, grade it with --layout folders.")
    assert subs["cy-young_456789"].problem == ""

@pytest.fixture(scope="module")
def moodle_batch(tmp_path_factory):
    """A Moodle "Download all submissions" zip (folders, the default since Moodle 3.1), graded."""
    base = tmp_path_factory.mktemp("moodle")
    with zipfile.ZipFile(base / "Course-Assignment 3-42.zip", "w") as z:
        z.write(SOLUTION, "Zoë Müller_123456_assignsubmission_file_/attention.py")
        z.writestr("Zoë Müller_123456_assignsubmission_onlinetext_/onlinetext.html", "<p>done</p>")
        z.write(SKELETON, "Bob Stone_234567_assignsubmission_file_/exercise3/attention.py")
        inner = base / "work.zip"
        with zipfile.ZipFile(inner, "w") as w:
            w.write(SOLUTION, "attention.py")
        z.write(inner, "Ana Lima_345678_assignsubmission_file_/work.zip")
        z.writestr("Ana Lima_345678_assignsubmission_onlinetext_/onlinetext.html", "<p>zip attached</p>")
    batch.run("exercise3", base / "Course-Assignment 3-42.zip", base / "out", jobs=1, seed=6)
    return base / "out"


def test_moodle_download_graded_end_to_end(moodle_batch):
    rows = _rows(moodle_batch)
    got = {s: (r["status"], r["score"], r["identity"]["name"], r["identity"]["user_id"]) for s, r in rows.items()}
    assert got == {"zoe-muller_123456": ("graded", 24, "Zoë Müller", "123456"),
                   "bob-stone_234567": ("graded", 0, "Bob Stone", "234567"),
                   "ana-lima_345678": ("graded", 24, "Ana Lima", "345678")}
    assert rows["ana-lima_345678"]["identity"]["entries"] == [
        "Ana Lima_345678_assignsubmission_file_/", "Ana Lima_345678_assignsubmission_onlinetext_/",
        "onlinetext.html (not graded: the uploaded zip is the submission)"]


def test_moodle_export_of_a_moodle_download_carries_the_participant_ids(moodle_batch, tmp_path):
    done = export("moodle", moodle_batch, tmp_path / "worksheet.csv")
    with open(done.out, newline="", encoding="utf-8") as fh:
        table = {r["Identifier"]: r for r in csv.DictReader(fh)}
    assert sorted(table) == ["Participant 123456", "Participant 234567", "Participant 345678"]
    zoe = table["Participant 123456"]
    assert (zoe["Full name"], zoe["Grade"], zoe["Maximum grade"], zoe["Feedback comments"]) == (
        "Zoë Müller", "24", "24", "24 of 24 points.")
    assert table["Participant 234567"]["Grade"] == "0" and done.warnings == [
        "nothing checked each participant id against Moodle (a Moodle 4.1+ team folder carries its group's id): "
        "give the assignment's Download grading worksheet as --worksheet",
        "grades are out of 24 points (exercise3's full marks); if the assignment is worth other points in Moodle, "
        "export again with --points-possible"]


def test_one_platforms_ids_are_never_written_as_anothers(moodle_batch, canvas_batch, tmp_path):
    """A Moodle participant id is not a Canvas user id (nor the reverse): written in Canvas's ID
    column it would grade whichever Canvas user has that number."""
    done = export("canvas", moodle_batch, tmp_path / "canvas.csv", assignment="Exercise 3 (777)")
    with open(done.out, newline="", encoding="utf-8") as fh:
        table = list(csv.reader(fh))
    assert [r[:2] for r in table[2:]] == [["Ana Lima", ""], ["Bob Stone", ""], ["Zoë Müller", ""]]
    assert ("3 student(s) were read from a moodle export, whose ids are not Canvas ids (left out; give a "
            "--roster with user_id): ana-lima_345678, bob-stone_234567, zoe-muller_123456") in done.warnings
    done = export("moodle", canvas_batch, tmp_path / "worksheet.csv")
    with open(done.out, newline="", encoding="utf-8") as fh:
        assert [r["Identifier"] for r in csv.DictReader(fh)] == ["", "", "", ""]


# ---------------------------------------------------------------- Moodle's own worksheet as a cross-check
WORKSHEET_HEADER = ("Identifier,Full name,Email address,Status,Team,Grade,Maximum Grade,Grade can be changed,"
                    "Last modified (submission),Last modified (grade),Feedback comments\n")


def _worksheet(path, rows, maximum="24.00"):
    """Moodle's "Download grading worksheet" of a team assignment (mod/assign/gradingtable.php columns)."""
    path.write_text(WORKSHEET_HEADER + "".join(
        f'Participant {pid},{name},{name.split()[0].lower()}@uni.example,Submitted for grading,{team},,{maximum},Yes,'
        f'"Monday, 1 December 2025, 10:00 AM",-,\n' for pid, name, team in rows), encoding="utf-8")
    return path


def _graded(tmp_path, download, points):
    """The gradebook batch would write for ``download``: each student's identity as read, ``points[id]``."""
    from grader.gradebook import Gradebook
    from grader.results import CheckResult, SubmissionResult

    with Gradebook(tmp_path / "out" / "gradebook.sqlite", "exercise3", 1) as book:
        for sub in discover(download).submissions:
            got = points[sub.student]
            checks = [CheckResult(f"test_{i}", "", 1, "passed" if i < got else "failed") for i in range(24)]
            book.record(sub.student, "graded", result=SubmissionResult("exercise3", sub.student, 1, checks),
                        identity=sub.identity())
    return tmp_path / "out"


def test_a_moodle_4_1_team_folder_is_graded_onto_its_members_by_the_worksheet(tmp_path):
    """Moodle 4.1+ names a team's folder by the group's id (42), which is also some participant's:
    the worksheet's Team column says who is in the team, and participant 42 gets only their own team's grade."""
    download = tmp_path / "download"
    for team in ("Team Alpha_42", "Team Beta_43", "Default group"):  # students in no group: no id at all
        (download / f"{team}_assignsubmission_file").mkdir(parents=True)
        shutil.copy(SOLUTION, download / f"{team}_assignsubmission_file" / "attention.py")
    found = {s.student: (s.name, s.user_id) for s in discover(download).submissions}
    assert found == {"team-alpha_42": ("Team Alpha", "42"), "team-beta_43": ("Team Beta", "43"),
                     "default-group": ("Default group", "")}
    out = _graded(tmp_path, download, {"team-alpha_42": 24, "team-beta_43": 0, "default-group": 6})
    sheet = _worksheet(tmp_path / "sheet.csv", [("501", "Ana Lima", "Team Alpha"), ("502", "Bob Stone", "Team Alpha"),
                                                 ("42", "Dee Park", "Team Beta"), ("504", "Eve Sun", "Team Beta"),
                                                 ("505", "Fay Wu", "Team Gamma"), ("506", "Gus Hill", "Default group")],
                       maximum="12.00")
    result = CliRunner().invoke(main, ["export", "moodle", "--gradebook", str(out), "--out", str(tmp_path / "up.csv"),
                                       "--worksheet", str(sheet)])
    assert result.exit_code == 0, result.output
    with open(tmp_path / "up.csv", newline="", encoding="utf-8") as fh:
        got = [(r["Identifier"], r["Full name"], r["Email address"], r["Grade"]) for r in csv.DictReader(fh)]
    assert got == [("Participant 506", "Gus Hill", "gus@uni.example", "3"),
                   ("Participant 501", "Ana Lima", "ana@uni.example", "12"),  # the worksheet's Maximum Grade
                   ("Participant 502", "Bob Stone", "bob@uni.example", "12"),
                   ("Participant 42", "Dee Park", "dee@uni.example", "0"),
                   ("Participant 504", "Eve Sun", "eve@uni.example", "0")]
    assert ("Warning: 1 participant(s) of the worksheet have no row here (no submission read): Fay Wu (Participant "
            "505)") in result.output
    assert "grades are out of" not in result.output
    result = CliRunner().invoke(main, ["export", "canvas", "--gradebook", str(out), "--out", str(tmp_path / "c.csv"),
                                       "--assignment", "Ex 3 (1)", "--worksheet", str(sheet)])
    assert result.exit_code == 2 and "Error: --worksheet is Moodle's own grading worksheet" in result.output


def test_a_moodle_row_the_worksheet_does_not_confirm_is_not_uploaded(tmp_path):
    download = tmp_path / "download"
    for folder in ("Zoë Müller_123456_assignsubmission_file", "Bob Stone_234567_assignsubmission_file",
                   "Team A-Ana Lima_345678_assignsubmission_file_", "Cy Young_456789_assignsubmission_file"):
        (download / folder).mkdir(parents=True)
        shutil.copy(SOLUTION, download / folder / "attention.py")
    out = _graded(tmp_path, download, {"zoe-muller_123456": 24, "bob-stone_234567": 12, "team-a-ana-lima_345678": 6,
                                       "cy-young_456789": 3})
    sheet = _worksheet(tmp_path / "sheet.csv", [("123456", "Zoe Muller", ""),  # accents are not the point
                                                 ("234567", "Rob Stone", ""),  # another person
                                                 ("345678", "Ana Lima", "Team A")])  # Moodle 3.x team folder
    done = export("moodle", out, tmp_path / "upload.csv", worksheet=sheet)
    with open(done.out, newline="", encoding="utf-8") as fh:
        got = {r["Full name"]: (r["Identifier"], r["Grade"], r["Grader note"]) for r in csv.DictReader(fh)}
    assert got == {
        "Zoë Müller": ("Participant 123456", "24", ""),
        "Bob Stone": ("", "12", "not uploaded: participant 234567 is Rob Stone in Moodle's worksheet, not Bob Stone"),
        "Team A-Ana Lima": ("Participant 345678", "6", ""),
        "Cy Young": ("", "3", "not uploaded: Moodle's worksheet has no participant 456789")}
    (tmp_path / "canvas.csv").write_text("Student,ID,SIS User ID\n", encoding="utf-8")
    with pytest.raises(InputError, match="canvas.csv has no Identifier column, so it is not Moodle's grading worksheet"):
        export("moodle", out, tmp_path / "x.csv", worksheet=tmp_path / "canvas.csv")
