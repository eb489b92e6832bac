"""Gradescope in and out (grader.lms.gradescope): an "Export Submissions" download built as Gradescope
lays it out (``assignment_NNN_export/submission_NNN/`` and ``submission_metadata.yml`` with Ruby-symbol
keys), read as a folder, as its parent and as its zip, and attacked (a billion laughs, nesting, Python
tags, fields that are not text, entries without folders, two submissions of one student, one SID on
two students, SIDs that are no file names); results.json as Gradescope's autograder specification
documents it; ``grader grade --gradescope`` (uploads nested, renamed, doubled, empty) and
``--isolation container`` (refused in a mere Docker container, taken on Gradescope's /autograder)."""
import csv
import json
import shutil
import zipfile

import pytest
from click.testing import CliRunner

from conftest import ROOT
from grader import batch, lms
from grader.cli import main
from grader.errors import InputError
from grader.gradebook import Gradebook
from grader.lms import gradescope
from grader.lms.gradescope_results import VISIBILITIES
from grader.results import CheckResult, SubmissionResult

SOLUTION = ROOT / "solutions" / "exercise3" / "attention.py"
SKELETON = ROOT / "exercises" / "exercise3" / "skeleton" / "attention.py"

# Written the way Gradescope's export writes it: Ruby symbols as keys, Ruby's Time format, SIDs quoted.
METADATA = """\
submission_111:
  :submitters:
  - :name: Zoë Müller
    :sid: '12345'
    :email: zoe.mueller@uni.example
  :created_at: 2026-11-02 21:53:23.371634000 -08:00
  :score: !ruby/object:BigDecimal 18:0.185e2
  :history: []
submission_222:
  :submitters:
  - :name: Bob Smith
    :sid:
    :email: bob.smith@uni.example
  :created_at: 2026-11-03 09:00:00.000000000 -08:00
  :late: true
submission_333:
  :submitters:
  - :name: Carol Chen
    :sid: '777'
    :email: carol@uni.example
  - :name: Dan Dube
    :sid: '778'
    :email: dan@uni.example
  :created_at: 2026-11-02 10:00:00.000000000 -08:00
submission_555:
  :submitters:
  - :name: Ann One
    :email: ann@one.example
submission_666:
  :submitters:
  - :name: Ann Two
    :email: ann@two.example
"""


def _export(base, name="assignment_123_export"):
    """An export folder: five listed submissions (one nested, one a group) and one missing from the metadata."""
    root = base / name
    root.mkdir(parents=True)
    (root / "submission_metadata.yml").write_text(METADATA, encoding="utf-8")
    for folder, source in (("submission_111", SOLUTION), ("submission_222/exercise3", SKELETON),
                           ("submission_333", SOLUTION), ("submission_444", SKELETON),
                           ("submission_555", SKELETON), ("submission_666", SKELETON)):
        (root / folder).mkdir(parents=True)
        shutil.copy(source, root / folder / "attention.py")
    return root


def _by_id(found):
    return {s.student: s for s in found.submissions}


def test_the_export_folder_is_read_with_ids_names_and_the_mapping_says_what_is_missing(tmp_path):
    root = _export(tmp_path)
    found = lms.discover(root)
    assert (found.layout, found.reason) == ("gradescope", "Gradescope export: submission_metadata.yml")
    subs = _by_id(found)
    assert sorted(subs) == ["12345", "777", "ann@one.example", "ann@two.example", "bob.smith", "submission_444"]
    zoe = subs["12345"]
    assert (zoe.name, zoe.email, zoe.sis_id, zoe.user_id, zoe.late) == (
        "Zoë Müller", "zoe.mueller@uni.example", "12345", "111", False)
    assert zoe.source == root / "submission_111" and zoe.entries == ("submission_111/",)
    bob = subs["bob.smith"]  # no SID: the email's local part; the metadata marks him late
    assert (bob.name, bob.sis_id, bob.user_id, bob.late) == ("Bob Smith", "", "222", True)
    group = subs["777"]  # a group: the first submitter's id, every name kept
    assert (group.name, group.email, group.sis_id) == ("Carol Chen; Dan Dube", "carol@uni.example", "777")
    missing = subs["submission_444"]
    assert (missing.name, missing.user_id) == ("", "444")
    assert missing.entries == ("submission_444/ (not in submission_metadata.yml)",)
    assert all(not s.problem and s.layout == "gradescope" for s in found.submissions)


def test_the_parent_of_the_export_and_the_export_zip_give_the_same_students(tmp_path):
    root = _export(tmp_path / "download")
    expected = sorted(_by_id(lms.discover(root)))
    parent = lms.discover(tmp_path / "download")
    assert parent.reason == "Gradescope export: assignment_123_export/submission_metadata.yml"
    assert sorted(_by_id(parent)) == expected
    assert _by_id(parent)["12345"].entries == ("assignment_123_export/submission_111/",)

    archive = tmp_path / "assignment_123_export.zip"
    with zipfile.ZipFile(archive, "w") as z:
        for path in sorted(root.rglob("*")):
            if path.is_file():
                z.write(path, path.relative_to(root.parent).as_posix())
        z.writestr("__MACOSX/assignment_123_export/._submission_metadata.yml", b"\0")
    with lms.opened(archive) as folder:
        from_zip = lms.discover(folder)
        assert from_zip.layout == "gradescope" and sorted(_by_id(from_zip)) == expected
        assert _by_id(from_zip)["777"].name == "Carol Chen; Dan Dube"


def test_metadata_with_ruby_tags_loads_as_data_and_object_tags_are_refused(tmp_path):
    path = tmp_path / "submission_metadata.yml"
    path.write_text(METADATA + "submission_999:\n  :extra: !ruby/hash:ActiveSupport::HashWithIndifferentAccess\n"
                    "    a: 1\n", encoding="utf-8")
    data = gradescope.load_metadata(path)
    assert data["submission_111"]["score"] == 18.5
    assert data["submission_111"]["submitters"][0]["sid"] == "12345"
    assert data["submission_999"]["extra"] == {"a": 1}
    path.write_text("submission_1: !!python/object/apply:os.system ['echo owned']\n", encoding="utf-8")
    with pytest.raises(InputError, match="cannot read submission_metadata.yml") as info:
        gradescope.load_metadata(path)
    assert info.value.exit_code == 2
    path.write_text("- just\n- a list\n", encoding="utf-8")
    with pytest.raises(InputError, match="holds a list, not one entry per submission folder"):
        gradescope.load_metadata(path)


def test_a_folder_without_the_metadata_is_not_a_gradescope_export(tmp_path):
    (tmp_path / "submission_1").mkdir()
    assert gradescope.detect(tmp_path) == ""
    assert gradescope.read(tmp_path) == []


def test_batch_over_the_export_zip_grades_each_student_under_their_id(tmp_path, capsys):
    export = tmp_path / "export"
    root = export / "assignment_9_export"
    root.mkdir(parents=True)
    (root / "submission_metadata.yml").write_text(
        "submission_1:\n  :submitters:\n  - :name: Zoë Müller\n    :sid: '12345'\n    :email: zoe@uni.example\n"
        "submission_2:\n  :submitters:\n  - :name: Bob Smith\n    :email: bob@uni.example\n", encoding="utf-8")
    (root / "submission_1" / "exercise3").mkdir(parents=True)
    shutil.copy(SOLUTION, root / "submission_1" / "exercise3" / "attention.py")
    (root / "submission_2").mkdir()
    shutil.copy(SKELETON, root / "submission_2" / "attention.py")
    archive = tmp_path / "assignment_9_export.zip"
    shutil.make_archive(str(archive.with_suffix("")), "zip", export)
    out = tmp_path / "out"
    batch.run("exercise3", archive, out, jobs=1, seed=5)
    printed = capsys.readouterr().out
    assert "Layout: gradescope (Gradescope export: submission_metadata.yml); 2 student(s):" in printed
    assert "  12345 = Zoë Müller, zoe@uni.example, SIS 12345 <- submission_1/" in printed
    with open(out / "students.csv", newline="", encoding="utf-8") as fh:
        rows = {r["student"]: r for r in csv.DictReader(fh)}
    assert (rows["bob"]["name"], rows["bob"]["user_id"], rows["bob"]["layout"]) == ("Bob Smith", "2", "gradescope")
    with Gradebook(out / "gradebook.sqlite", "exercise3", 0) as book:
        scores = {r["student"]: (r["score"], r["identity"]["name"]) for r in book.rows()}
    assert scores == {"12345": (24, "Zoë Müller"), "bob": (0, "Bob Smith")}
    results = json.loads((out / "gradescope" / "12345" / "results.json").read_text())
    assert results["score"] == 24 and {t["visibility"] for t in results["tests"]} == {"visible", "after_published"}


# ------------------------------------------------------------------------------ results.json
def _result():
    checks = [
        CheckResult("test_module_loads", "attention.py imports.", 0, "passed"),
        CheckResult("test_mha_shape", "multi_head_attention returns (B, T, d).", 1, "failed",
                    feedback="expected shape (2, 5, 8), got (5, 8)", hint="Keep the batch axis.",
                    diagnosis="batch axis dropped"),
        CheckResult("test_mha_parity[B2_T9_d48_h6_causal]", "multi_head_attention matches torch.", 0.5, "skipped",
                    feedback='not checked: it needs "multi_head_attention returns (B, T, d)." to pass first',
                    hidden=True),
        CheckResult("test_layer_norm_matches_torch", "layer_norm matches torch.", 2, "error",
                    feedback="the grader itself failed on this check (KeyError: 'w')", hidden=True),
        CheckResult("test_block_shape", "transformer_block keeps the shape.", 1, "passed", hidden=True),
        CheckResult("test_uses_only_numpy", "Only NumPy is imported.", 0, "failed", feedback="imports torch"),
        CheckResult("test_softmax_small", "softmax of a small array.", 1, "failed", feedback="wrong axis",
                    override={"points": 1, "comment": "accepted: the README was ambiguous"}),
    ]
    return SubmissionResult("exercise3", "ada", seed=4242, checks=checks, duration=3.14159,
                            isolation="bubblewrap: own PID, mount and network namespaces ..., own unprivileged user",
                            notes=["Quick run: 1 slow check(s) were left out."])


def test_results_json_has_the_documented_fields_statuses_outputs_tags_and_visibilities():
    data = gradescope.results_json(_result())
    assert (data["score"], data["execution_time"], data["output_format"]) == (2.0, 3.14, "simple_format")
    tests = {t["extra_data"]["check"]: t for t in data["tests"]}
    assert set(tests["test_module_loads"]) == {"name", "score", "max_score", "status", "output", "tags",
                                               "visibility", "extra_data"}
    assert tests["test_mha_shape"]["name"] == "multi_head_attention returns (B, T, d). [test_mha_shape]"
    assert [(t["status"], t["score"], t["max_score"]) for t in data["tests"]] == [
        ("passed", 0, 0), ("failed", 0, 1), ("failed", 0, 0.5), ("failed", 0, 2), ("passed", 1, 1),
        ("failed", 0, 0), ("passed", 1, 1)]
    assert tests["test_mha_shape"]["output"] == ("Failed: expected shape (2, 5, 8), got (5, 8)\n"
                                                 "Likely mistake: batch axis dropped\nGeneral hint: Keep the batch axis.")
    assert tests["test_mha_parity[B2_T9_d48_h6_causal]"]["output"].startswith(
        'Skipped, no points yet: not checked: it needs "multi_head_attention returns (B, T, d)." to pass first.')
    assert tests["test_layer_norm_matches_torch"]["output"].startswith("Grader error: this is not your fault")
    assert "Instructor (1/1 points): accepted: the README was ambiguous" in tests["test_softmax_small"]["output"]
    assert {name: t["tags"] for name, t in tests.items()} == {
        "test_module_loads": ["attention.py"], "test_mha_shape": ["multi_head_attention"],
        "test_mha_parity[B2_T9_d48_h6_causal]": ["multi_head_attention"],
        "test_layer_norm_matches_torch": ["layer_norm"], "test_block_shape": ["transformer_block"],
        "test_uses_only_numpy": ["attention.py"], "test_softmax_small": ["softmax"]}
    assert [t["visibility"] for t in data["tests"]] == ["visible", "visible", "after_published", "after_published",
                                                         "after_published", "visible", "visible"]
    hidden = gradescope.results_json(_result(), hidden_visibility="hidden")
    assert {t["visibility"] for t in hidden["tests"]} == {"visible", "hidden"}
    with pytest.raises(ValueError, match="hidden_visibility must be one of"):
        gradescope.results_json(_result(), hidden_visibility="later")


def test_the_top_level_output_is_for_students_and_keeps_hidden_results_back():
    text = gradescope.results_json(_result())["output"]
    assert text.splitlines() == [
        "Public checks: 1 / 2 points. The 3 hidden checks (3.5 points) and your total are shown once the grades "
        "are published.",
        "Public checks: 1 passed, 3 failed.",  # an override changes points, not how the check ended
        "Seed 4242: the randomised checks drew their inputs from it; `grade exercise3 --seed 4242` repeats the "
        "public ones on your machine.",
        "Your code ran in a sandbox: a separate process with no network, a read-only system and CPU, memory and "
        "time limits; it never ran inside the grader.",
        "Note: Quick run: 1 slow check(s) were left out."]
    shown = gradescope.results_json(_result(), hidden_visibility="visible")["output"].splitlines()
    assert shown[:2] == ["Score: 2 / 5.5 points.", "Checks: 2 passed, 3 failed, 1 skipped (a check they depend on "
                         "did not pass), 1 grader error(s) (not your fault: the course staff will look at them)."]
    for internal in ("bubblewrap", "namespace", "uid", "/tmp"):
        assert internal not in text
    firsts = {v: gradescope.results_json(_result(), hidden_visibility=v)["output"].splitlines()[0]
              for v in ("after_due_date", "hidden")}
    assert firsts == {
        "after_due_date": "Public checks: 1 / 2 points. The 3 hidden checks (3.5 points) and your total are shown after "
                          "the due date (the late due date, where late submissions are allowed).",
        "hidden": "Public checks: 1 / 2 points. The 3 hidden checks (3.5 points) are never shown to you; your total is "
                  "shown once the grades are published."}
    essay = SubmissionResult("exercise1", "ada", seed=9, checks=[CheckResult("test_answer_file", "answer.md is there.",
                                                                            1, "passed")], isolation="bubblewrap: ...")
    assert gradescope.results_json(essay)["output"].splitlines() == ["Score: 1 / 1 point.", "Checks: 1 passed, 0 failed."]
    one = _result()
    one.checks = [c for c in one.checks if not c.hidden or c.name == "test_block_shape"]
    assert [gradescope.results_json(one, hidden_visibility=v)["output"].splitlines()[0] for v in VISIBILITIES[1:]] == [
        "Public checks: 1 / 2 points. The 1 hidden check (1 point) and your total are shown once the grades are published.",
        "Public checks: 1 / 2 points. The 1 hidden check (1 point) and your total are shown after the due date (the late "
        "due date, where late submissions are allowed).",
        "Public checks: 1 / 2 points. The 1 hidden check (1 point) is never shown to you; your total is shown once the "
        "grades are published."]


# ------------------------------------------------------------------------------ grader grade --gradescope
def test_grade_writes_results_json_for_a_nested_submission(tmp_path):
    (tmp_path / "upload" / "my work").mkdir(parents=True)
    shutil.copy(SOLUTION, tmp_path / "upload" / "my work" / "attention.py")
    out = tmp_path / "results" / "results.json"
    run = CliRunner().invoke(main, ["grade", "exercise3", "--submission", str(tmp_path / "upload"), "--seed", "7",
                                    "--gradescope", str(out), "--hidden-visibility", "after_due_date",
                                    "--report", str(tmp_path / "r.html")])
    assert run.exit_code == 0, run.output
    data = json.loads(out.read_text())
    assert data["score"] == 24 and len(data["tests"]) == 39 and sum(t["max_score"] for t in data["tests"]) == 24
    assert {t["visibility"] for t in data["tests"]} == {"visible", "after_due_date"}
    assert "Seed 7:" in data["output"] and data["execution_time"] > 0


def test_an_upload_without_the_file_once_tells_the_student_what_it_holds(tmp_path):
    uploads = {"renamed": {"attention_final.py": SOLUTION, "notes.txt": SOLUTION},
               "twice": {"a/attention.py": SOLUTION, "b/attention.py": SKELETON}, "empty": {}}
    notes = {}
    for name, files in uploads.items():
        (tmp_path / name).mkdir()
        for rel, source in files.items():
            (tmp_path / name / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(source, tmp_path / name / rel)
        out = tmp_path / f"{name}.json"
        run = CliRunner().invoke(main, ["grade", "exercise3", "--submission", str(tmp_path / name), "--seed", "1",
                                        "--gradescope", str(out), "--report", str(tmp_path / f"{name}.html")])
        assert run.exit_code == 1, run.output  # graded, below full marks
        data = json.loads(out.read_text())
        assert data["score"] == 0 and len(data["tests"]) == 39
        notes[name] = [line for line in data["output"].splitlines() if line.startswith("Note: ")]
    assert notes == {
        "renamed": ["Note: Your upload holds no attention.py (it holds attention_final.py, notes.txt): name your file "
                    "attention.py and upload it again."],
        "twice": ["Note: Your upload holds attention.py in 2 folders (a/, b/), so none was graded: upload only one."],
        "empty": ["Note: Your upload is empty: upload attention.py."]}


def _without_bubblewrap(monkeypatch):
    """This process as on Gradescope: bubblewrap installed but unable to make namespaces."""
    import grader.cli
    import grader.sandbox.container
    import grader.sandbox.session

    for module in (grader.cli, grader.sandbox.container, grader.sandbox.session):
        monkeypatch.setattr(module, "bubblewrap_works", lambda: False)


def test_isolation_container_is_refused_in_a_mere_docker_container_unless_forced(tmp_path, monkeypatch):
    import grader.sandbox.container as container

    host = tmp_path / "host"  # a developer's long-lived container: it holds the course, solutions and all
    (host / "run").mkdir(parents=True)
    (host / ".dockerenv").write_text("")
    (host / "run" / ".containerenv").write_text("")
    fake = tmp_path / "fake-autograder"  # what run_autograder is given in a trial run, or a student's env
    for sub in ("source", "submission"):
        (fake / sub).mkdir(parents=True)
    monkeypatch.setattr(container, "HOST_ROOT", host)
    monkeypatch.setenv("container", "podman")
    monkeypatch.setenv("AUTOGRADER_ROOT", str(fake))
    _without_bubblewrap(monkeypatch)
    args = ["grade", "exercise3", "--submission", str(SKELETON.parent), "--isolation", "container",
            "--report", str(tmp_path / "r.html")]
    refused = CliRunner().invoke(main, args)
    assert refused.exit_code == 2
    assert refused.output.startswith("Error: --isolation container: bubblewrap does not work here and this is not "
                                     "Gradescope's autograder (no /autograder/run_autograder, source/ and "
                                     "submission/), so graded code would run with your files and network in reach "
                                     "(being in a Docker container is not enough).")
    assert len(refused.output.strip().splitlines()) == 1 and not (tmp_path / "r.html").exists()
    alone = CliRunner().invoke(main, args[:4] + ["--force-container"])
    assert alone.exit_code == 2 and "--force-container goes with --isolation container" in alone.output
    forced = CliRunner().invoke(main, args + ["--force-container", "--seed", "1"])
    assert "0 / 24 points" in forced.output, forced.output
    assert "seen: nothing, forced with --force-container" in (tmp_path / "r.html").read_text()


def test_isolation_container_accepted_on_gradescope_without_bubblewrap_and_said_so(tmp_path, monkeypatch):
    import grader.sandbox.container as container

    host = tmp_path / "host"  # Gradescope's layout (autograder docs, "File hierarchy")
    for sub in ("source", "submission", "results"):
        (host / "autograder" / sub).mkdir(parents=True)
    (host / "autograder" / "run_autograder").write_text("#!/bin/sh\n")
    monkeypatch.setattr(container, "HOST_ROOT", host)
    _without_bubblewrap(monkeypatch)
    args = ["grade", "exercise3", "--submission", str(SKELETON.parent), "--seed", "1",
            "--report", str(tmp_path / "r.html"), "--gradescope", str(tmp_path / "results.json")]
    warned = CliRunner().invoke(main, args)
    assert "Warning: not isolated: bubblewrap is not available" in warned.output  # today's behaviour stays
    accepted = CliRunner().invoke(main, args + ["--isolation", "container"])
    assert "0 / 24 points" in accepted.output and "Warning" not in accepted.output, accepted.output
    report = (tmp_path / "r.html").read_text()
    assert (f"container: each submission runs in its own throwaway container (seen: Gradescope&#39;s autograder at "
            f"{host / 'autograder'})") in report
    assert "sandbox: plain child process with rlimits" in report
    output = json.loads((tmp_path / "results.json").read_text())["output"]
    assert "Your code ran in a throwaway container of its own" in output
    refused = CliRunner().invoke(main, ["batch", "exercise3", str(tmp_path), "--out", str(tmp_path / "out")])
    assert refused.exit_code != 0 and "bubblewrap is not available" in refused.output  # batch still refuses


def test_isolation_container_changes_nothing_where_bubblewrap_works(tmp_path, monkeypatch):
    import grader.sandbox.container as container

    monkeypatch.setattr(container, "HOST_ROOT", tmp_path)  # not Gradescope: no /autograder at all
    assert container.container_isolation(bubblewrap=True) == ""
    assert container.container_isolation(force=True, bubblewrap=True) == ""
    with pytest.raises(InputError, match="bubblewrap does not work here"):
        container.container_isolation(bubblewrap=False)
    helped = " ".join(CliRunner().invoke(main, ["grade", "--help"]).output.split())
    assert "refused there unless /autograder is Gradescope's" in helped
    assert "accept it even where /autograder is not Gradescope's" in helped


# ------------------------------------------------------------------------------ hostile metadata
def _one_submission_export(base, metadata: str):
    root = base / "assignment_5_export"
    (root / "submission_1").mkdir(parents=True)
    shutil.copy(SKELETON, root / "submission_1" / "attention.py")
    (root / "submission_metadata.yml").write_text(metadata, encoding="utf-8")
    return root


def test_a_billion_laughs_in_the_metadata_costs_nothing_and_names_no_one(tmp_path):
    import time

    levels = ['a: &a ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    for prev, name in zip("abcdef", "bcdefg"):
        levels.append(f"{name}: &{name} [{', '.join(['*' + prev] * 9)}]")  # 9**7 strings once expanded
    root = _one_submission_export(tmp_path, "\n".join(levels) + "\nsubmission_1:\n  :submitters:\n"
                                  "  - :name: *g\n    :sid: *g\n    :email: eve@uni.example\n")
    started = time.monotonic()
    found = gradescope.read(root)
    assert time.monotonic() - started < 2
    assert [(s.student, s.name, s.sis_id, s.email) for s in found] == [("eve", "", "", "eve@uni.example")]


def test_the_metadata_of_a_class_of_1000_with_histories_reads_in_a_second(tmp_path):
    import time

    entry = ("submission_{n}:\n  :submitters:\n  - :name: Student {n} Ünïcode\n    :sid: '{n:07d}'\n"
             "    :email: s{n}@uni.example\n  :created_at: 2026-11-02 21:53:23.371634000 -08:00\n"
             "  :score: !ruby/object:BigDecimal 18:0.185e2\n  :history:\n"
             + "  - :id: 7\n    :created_at: 2026-11-01 10:00:00.000000000 -08:00\n    :score: 1.5\n" * 5)
    root = tmp_path / "export"
    root.mkdir()
    (root / "submission_metadata.yml").write_text("".join(entry.format(n=n) for n in range(1000)), encoding="utf-8")
    started = time.monotonic()
    data = gradescope.load_metadata(root / "submission_metadata.yml")
    assert time.monotonic() - started < 3  # about 1 s with libyaml; PyYAML's pure-Python parser took 4.4 s here
    assert len(data) == 1000 and data["submission_999"]["submitters"][0]["sid"] == "0000999"


def test_metadata_fields_that_are_not_text_are_ignored(tmp_path):
    root = _one_submission_export(tmp_path, "submission_1:\n  :submitters:\n  - :name: [Eve, Mallory]\n"
                                  "    :sid: {x: 1}\n    :email: eve@uni.example\n")
    assert [(s.student, s.name, s.sis_id) for s in gradescope.read(root)] == [("eve", "", "")]
    root = _one_submission_export(tmp_path / "int", "submission_1:\n  :submitters:\n  - :name: Eve\n    :sid: 12345\n")
    assert [(s.student, s.sis_id) for s in gradescope.read(root)] == [("12345", "12345")]


def test_metadata_nested_past_any_sense_or_too_large_is_a_one_line_input_error(tmp_path, monkeypatch):
    root = _one_submission_export(tmp_path, "submission_1:\n  :submitters: " + "[" * 20_000 + "]" * 20_000 + "\n")
    with pytest.raises(InputError, match="cannot read submission_metadata.yml of the Gradescope export") as info:
        gradescope.read(root)
    assert "\n" not in str(info.value)
    (root / "submission_metadata.yml").write_text("submission_1:\n\t:submitters: []\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"\(found character (.\\t. )?that cannot start any token at line 2\)") as info:
        gradescope.read(root)
    assert "\n" not in str(info.value)
    monkeypatch.setattr(gradescope, "MAX_METADATA_BYTES", 100)
    (root / "submission_metadata.yml").write_text("submission_1:\n  :submitters: []\n" + "#" * 100, encoding="utf-8")
    with pytest.raises(InputError, match="submission_metadata.yml is 132 bytes, more than the 100 a Gradescope "
                                         "export's metadata can be"):
        gradescope.read(root)


def _export_of(base, metadata: str, folders: tuple[str, ...]):
    root = base / "assignment_7_export"
    root.mkdir(parents=True)
    (root / "submission_metadata.yml").write_text(metadata, encoding="utf-8")
    for name in folders:
        (root / name).mkdir()
        shutil.copy(SKELETON, root / name / "attention.py")
    return root


def test_an_entry_whose_folder_is_missing_is_a_refused_student_not_a_silent_gap(tmp_path):
    root = _export_of(tmp_path, "submission_1:\n  :submitters:\n  - :name: Ann\n    :sid: '1'\n"
                      "submission_2:\n  :submitters:\n  - :name: Eve Ng\n    :sid: '2'\n", ("submission_1",))
    subs = _by_id(lms.discover(root))
    assert sorted(subs) == ["1", "2"] and subs["1"].problem == ""
    assert (subs["2"].name, subs["2"].entries) == ("Eve Ng", ("submission_2/ (listed in the metadata, missing "
                                                              "from the export)",))
    assert subs["2"].problem == ("the export's submission_metadata.yml lists submission_2, but the export has no "
                                 "submission_2/ folder; download the export again from Gradescope (Assignment > "
                                 "Review Grades > Export Submissions)")


def test_a_student_with_two_submissions_is_graded_on_the_newer_and_a_shared_sid_names_by_email(tmp_path):
    metadata = (
        "submission_30:\n  :submitters:\n  - :name: Ann\n    :sid: '12345'\n    :email: ann@uni.example\n"
        "  :created_at: 2026-11-01 10:00:00.000000000 -08:00\n"
        "submission_20:\n  :submitters:\n  - :name: Ann\n    :sid: '12345'\n    :email: Ann@uni.example\n"
        "  :created_at: 2026-11-03 10:00:00.000000000 -08:00\n"
        "submission_40:\n  :submitters:\n  - :name: Bo\n    :sid: '555'\n    :email: bo@uni.example\n"
        "submission_50:\n  :submitters:\n  - :name: Cy\n    :sid: '555'\n    :email: cy@uni.example\n")
    root = _export_of(tmp_path, metadata, ("submission_20", "submission_30", "submission_40", "submission_50"))
    found = lms.discover(root)
    subs = _by_id(found)
    assert sorted(subs) == ["12345", "bo", "cy"] and all(not s.problem for s in found.submissions)
    ann = subs["12345"]  # submission_20 is newer by its date although its id is lower
    assert (ann.source.name, ann.user_id) == ("submission_20", "20")
    assert ann.entries == ("submission_20/", "submission_30/ (an older submission of the same student: not graded)")
    assert (subs["bo"].sis_id, subs["cy"].sis_id) == ("555", "555")
    assert subs["bo"].entries == ("submission_40/ (SID 555 is on submissions of other students too: named by email)",)


def test_sids_become_file_names_that_no_shell_or_spreadsheet_takes_for_an_option_or_formula():
    sids = ["12/345", "=1+1", "../../etc", "-rf", "@SUM(A1)", "ÅÄÖ-99", "a\x00b", "   "]
    listed = {f"submission_{i}": {"submitters": [{"sid": sid, "email": f"u{i}@uni.example"}]}
              for i, sid in enumerate(sids)}
    assert list(gradescope.student_ids(listed).values()) == [
        "12_345", "1+1", "etc", "rf", "SUM_A1", "ÅÄÖ-99", "a_b", "u7"]
