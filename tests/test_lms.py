"""Submissions in (grader.lms): what a SUBMISSIONS folder yields, the id mapping printed before
grading, the identities kept in the gradebook, and the input errors that stop a batch before it
grades anything (exit status 2)."""
import csv
import shutil
import zipfile
from pathlib import Path

import pytest
from click.testing import CliRunner

from conftest import ROOT
from grader import batch, lms
from grader.cli import main
from grader.errors import InputError
from grader.gradebook import Gradebook

SOLUTION = ROOT / "solutions" / "exercise3" / "attention.py"
SKELETON = ROOT / "exercises" / "exercise3" / "skeleton" / "attention.py"


def _student(base, name, source=SOLUTION):
    (base / name).mkdir(parents=True)
    shutil.copy(source, base / name / "attention.py")


def test_an_empty_folder_is_an_input_error_that_says_so(tmp_path):
    with pytest.raises(InputError, match=r"no submission found in .*: the folder is empty") as info:
        lms.discover(tmp_path)
    assert info.value.exit_code == 2


def test_a_folder_of_loose_unknown_files_says_what_was_seen(tmp_path):
    for name in ("notes.txt", "grades.xlsx", "readme.md"):
        (tmp_path / name).write_text("x")
    with pytest.raises(InputError) as info:
        lms.discover(tmp_path)
    assert "saw 3 files (grades.xlsx, notes.txt, readme.md)" in info.value.message
    assert "--layout" in info.value.message


def test_batch_on_a_folder_without_submissions_exits_2_before_grading(tmp_path):
    (tmp_path / "subs").mkdir()
    (tmp_path / "subs" / "attention.py").write_text("x = 1\n")  # one student's file, not a class
    result = CliRunner().invoke(main, ["batch", "exercise3", str(tmp_path / "subs"), "--out",
                                       str(tmp_path / "out"), "--allow-unisolated"])
    assert result.exit_code == 2, result.output
    assert "no submission found" in result.output and "saw 1 file (attention.py)" in result.output
    assert not (tmp_path / "out" / "gradebook.sqlite").exists()


def test_loose_files_beside_the_student_folders_are_said_to_be_ignored(tmp_path):
    """bob.py next to alice/ is nobody's submission: say so before grading rather than drop bob unseen."""
    _student(tmp_path, "alice")
    shutil.copy(SOLUTION, tmp_path / "bob.py")
    (tmp_path / ".DS_Store").write_text("junk")
    found = lms.discover(tmp_path)
    assert [s.student for s in found.submissions] == ["alice"]
    assert found.reason == ("one folder or .zip per student; 1 loose file ignored (bob.py): a student's work must "
                            "be in a folder or .zip of their own")

def test_a_file_that_is_not_a_zip_is_refused_with_advice(tmp_path):
    (tmp_path / "grades.csv").write_text("a,b\n")
    with pytest.raises(InputError, match="is a file, not a folder or an export .zip"):
        with lms.opened(tmp_path / "grades.csv"):
            pass
    with pytest.raises(InputError, match="does not exist"):
        with lms.opened(tmp_path / "missing"):
            pass


def test_an_export_zip_is_unpacked_for_the_batch_and_removed_after(tmp_path):
    archive = tmp_path / "export.zip"
    with zipfile.ZipFile(archive, "w") as z:  # a zip of one folder holding a folder per student
        z.write(SOLUTION, "class_export/ada/attention.py")
        z.write(SKELETON, "class_export/bob/attention.py")
    with lms.opened(archive) as folder:
        found = lms.discover(folder)
        assert folder.name == "class_export"
        assert [s.student for s in found.submissions] == ["ada", "bob"]
        assert found.layout == "folders"
    assert not folder.exists()


def test_an_export_zip_with_an_unsafe_path_is_an_input_error(tmp_path):
    archive = tmp_path / "export.zip"
    with zipfile.ZipFile(archive, "w") as z:
        z.writestr("../evil/attention.py", "x = 1\n")
    with pytest.raises(InputError, match="cannot open the export: .*unsafe path"):
        with lms.opened(archive):
            pass


@pytest.mark.parametrize("bad", ["..", "a\x07b", "x" * 101])
def test_ids_that_cannot_be_file_names_are_refused_for_that_student(tmp_path, bad):
    subs = [lms.Submission(bad, tmp_path), lms.Submission("ada", tmp_path)]
    problems = {s.student: s.problem for s in lms.check_ids(subs)}
    assert problems["ada"] == ""
    assert "1 to 100 printable characters" in problems[bad]


def test_unknown_layout_names_the_known_ones(tmp_path):
    with pytest.raises(InputError, match="unknown layout 'blackboard'; choose one of gradescope, canvas"):
        lms.discover(tmp_path, "blackboard")


def test_batch_prints_the_mapping_writes_students_csv_and_keeps_identities(tmp_path, capsys):
    subs, out = tmp_path / "subs", tmp_path / "out"
    _student(subs, "ada")
    _student(subs, "bob", SKELETON)
    batch.run("exercise3", subs, out, jobs=1, seed=3)
    printed = capsys.readouterr().out
    assert "Layout: folders (one folder or .zip per student); 2 student(s):" in printed
    assert "  ada <- ada/" in printed and "  bob <- bob/" in printed
    with open(out / "students.csv", newline="") as fh:
        rows = list(csv.DictReader(fh))
    assert [(r["student"], r["layout"], r["entries"]) for r in rows] == [("ada", "folders", "ada/"),
                                                                        ("bob", "folders", "bob/")]
    with Gradebook(out / "gradebook.sqlite", "exercise3", 0) as book:
        got = {r["student"]: (r["score"], r["identity"]["layout"], r["identity"]["entries"]) for r in book.rows()}
    assert got == {"ada": (24, "folders", ["ada/"]), "bob": (0, "folders", ["bob/"])}

    # Resuming with another seed would mix two gradings in one gradebook: refused, nothing graded.
    with pytest.raises(InputError, match="graded with seed 3; --resume keeps it"):
        batch.run("exercise3", subs, out, jobs=1, resume=True, seed=4)
    batch.run("exercise3", subs, out, jobs=1, resume=True, seed=3)  # the same seed is fine
    assert "0 to grade" in capsys.readouterr().out


def test_identity_survives_an_update_that_does_not_carry_it(tmp_path):
    """Overrides rewrite a row without knowing the platform's identity: the row keeps it."""
    with Gradebook(tmp_path / "g.sqlite", "exercise3", 1) as book:
        book.record("ada", "refused", error="no attention.py", identity={"name": "Ada L", "late": True})
        book.record("ada", "refused", error="still none")
        (row,) = book.rows()
    assert (row["error"], row["identity"]) == ("still none", {"name": "Ada L", "late": True})


def test_an_old_gradebook_without_identities_opens_and_resumes(tmp_path):
    import sqlite3

    path = tmp_path / "g.sqlite"
    con = sqlite3.connect(path)
    con.executescript(
        "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);"
        "INSERT INTO meta VALUES ('exercise', 'exercise3'), ('seed', '9');"
        "CREATE TABLE grades (student TEXT PRIMARY KEY, status TEXT NOT NULL, score REAL NOT NULL,"
        " max_score REAL NOT NULL, error TEXT NOT NULL DEFAULT '', needs_review TEXT NOT NULL DEFAULT '',"
        " duration REAL NOT NULL DEFAULT 0, result TEXT);"
        "INSERT INTO grades VALUES ('ada', 'refused', 0, 0, 'no file', '', 0, NULL);")
    con.commit()
    con.close()
    with Gradebook(path, "exercise3", 1) as book:
        assert book.seed == 9
        assert [(r["student"], r["identity"]) for r in book.rows()] == [("ada", {})]
        book.record("bob", "refused", error="x", identity={"name": "Bob"})
        assert {r["student"]: r["identity"] for r in book.rows()} == {"ada": {}, "bob": {"name": "Bob"}}


def test_an_export_left_by_a_killed_batch_is_removed_by_the_next_and_a_live_one_kept(tmp_path):
    """A batch killed with SIGKILL cannot remove the export it unpacked (copies of every student's
    work); the folder's lock dies with it, and the next batch's sweep removes it. An export that a
    running batch holds stays."""
    import os
    import signal
    import subprocess
    import sys

    from grader import scratch

    archive = tmp_path / "export.zip"
    with zipfile.ZipFile(archive, "w") as z:
        z.write(SOLUTION, "ada/attention.py")
        z.write(SKELETON, "bob/attention.py")
    temp = tmp_path / "temp"
    temp.mkdir()
    hold = ("import sys, time\nfrom pathlib import Path\nfrom grader import lms\n"
            f"with lms.opened(Path({str(archive)!r})) as folder:\n"
            "    print(folder, flush=True)\n    time.sleep(60)\n")
    env = dict(os.environ, TMPDIR=str(temp))
    live = subprocess.Popen([sys.executable, "-c", hold], stdout=subprocess.PIPE, text=True, env=env)
    doomed = subprocess.Popen([sys.executable, "-c", hold], stdout=subprocess.PIPE, text=True, env=env)
    try:
        live_folder, doomed_folder = Path(live.stdout.readline().strip()), Path(doomed.stdout.readline().strip())
        assert (live_folder / "ada" / "attention.py").is_file() and (doomed_folder / "ada").is_dir()
        doomed.send_signal(signal.SIGKILL)
        doomed.wait()
        assert doomed_folder.exists()  # SIGKILL leaves it behind ...
        import tempfile

        old = tempfile.tempdir
        tempfile.tempdir = str(temp)
        try:
            scratch.remove_stale()
        finally:
            tempfile.tempdir = old
        assert doomed_folder.parent.name.startswith("grader-export-") and not doomed_folder.parent.exists()
        assert (live_folder / "ada" / "attention.py").is_file()  # and keeps the live batch's
    finally:
        live.kill()
        live.wait()
        doomed.kill()
