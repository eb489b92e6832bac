"""Instructor overrides (grader/overrides.py): reading the CSV file, and merging into a result."""
import pytest

from grader.overrides import OverrideError, apply_overrides, apply_overrides_file, load_overrides, resolve_targets
from grader.results import CheckResult, SubmissionResult


def _result():
    return SubmissionResult(exercise="exercise1", submission="submissions/ada", seed=1, checks=[
        CheckResult("test_concat_w_o", "concat + W_O", 1, "failed"),
        CheckResult("test_gpt_causal", "GPT is causal", 1, "passed"),
        CheckResult("test_case[a]", "case a", 1, "passed"),
        CheckResult("test_case[b]", "case b", 1, "passed"),
    ])


def _write(tmp_path, text):
    path = tmp_path / "overrides.csv"
    path.write_text(text, encoding="utf-8")
    return path


def test_rows_are_read_per_student_with_comments_and_blank_lines_skipped(tmp_path):
    path = _write(tmp_path, "# reviewed by the staff\nstudent,check,points,comment\n\n"
                            "ada,concat_w_o,1,\"glued together, then W_O: that is it\"\nbob,gpt_causal,0,no\n")
    rows = load_overrides(path)
    assert sorted(rows) == ["ada", "bob"]
    assert rows["ada"][0].comment == "glued together, then W_O: that is it" and rows["ada"][0].line == 4


def test_overrides_replace_the_automatic_points(tmp_path):
    result = _result()
    assert result.score == 3
    path = _write(tmp_path, "student,check,points,comment\nada,concat_w_o,1,fine\nada,test_gpt_causal,0.5,half\n")
    apply_overrides_file(result, path)  # the student is the submission folder's name
    assert result.score == 1 + 0.5 + 2
    assert result.checks[0].override == {"points": 1.0, "comment": "fine"}
    assert SubmissionResult.from_dict(result.to_dict()).score == 3.5


@pytest.mark.parametrize("text, message", [
    ("student,check,points,comment\nada,no_such_line,1,x\n",
     "overrides.csv line 2: exercise1 has no check named 'no_such_line' (student ada); known checks: test_concat_w_o"),
    ("student,check,points,comment\nada,concat_w_o,2,x\n",
     "overrides.csv line 2: 2 points for test_concat_w_o, which is worth 1"),
    ("student,check,points,comment\nada,case,1,x\n", "overrides.csv line 2: 'case' matches 2 checks; name one"),
])
def test_a_row_that_does_not_fit_the_result_names_the_file_and_line(tmp_path, text, message):
    result = _result()
    with pytest.raises(OverrideError, match=message.replace("(", r"\(").replace(")", r"\)")):
        apply_overrides(result, load_overrides(_write(tmp_path, text))["ada"])
    assert all(c.override is None for c in result.checks)  # nothing half-applied


@pytest.mark.parametrize("text, message", [
    ("student,check,points\nada,x,1\n", "line 1: the header must name the columns student, check, points, comment; "
                                        "missing: comment"),
    ("student,check,points,comment\nada,x,one,y\n", "line 2: points 'one' is not a number"),
    ("student,check,points,comment\nada,x,-1,y\n", "line 2: points must be 0 or more"),
    ("student,check,points,comment\nada,x,1,\n", "line 2: a comment is required"),
    ("student,check,points,comment\n,x,1,y\n", r"line 2: every row needs a student \(or a group\) and a check"),
    ("student,check,points,comment,group\nada,x,1,y,G-1\n", "line 2: name a student or a group, not both"),
    ("student,check,points,comment,group\n,x,1,y,G-1\n,test_x,0,z,G-1\n",
     r"line 3: group G-1 / test_x is overridden twice \(also on line 2\)"),
    ("student,check,points,comment\nada,x,1,y\n# note\nada,test_x,0,z\n",
     r"line 4: ada / test_x is overridden twice \(also on line 2\)"),
    ("# only a comment\n", "empty; the first row must be the header"),
])
def test_a_malformed_file_names_the_file_and_line(tmp_path, text, message):
    with pytest.raises(OverrideError, match=message):
        load_overrides(_write(tmp_path, text))


# ------------------------------------------------------------------------------ groups and lists of students
def test_a_group_row_and_a_list_row_give_one_row_per_student_and_a_students_own_row_wins(tmp_path):
    path = _write(tmp_path, "student,check,points,comment,group\n"
                            ",concat_w_o,1,glued = concat + W_O,G-aa\n"
                            "ada,concat_w_o,0,ada only lists the heads,\n"
                            "cy; dan,gpt_causal,0,no mask named,\n"
                            "semi;colon,gpt_causal,1,an id with a semicolon,\n")
    rows = resolve_targets(load_overrides(path), {"ada", "bob", "cy", "dan", "semi;colon"},
                           {"G-aa": ["ada", "bob"], "G-bb": ["cy"]})
    got = {s: [(o.check, o.points, o.group, o.line) for o in r] for s, r in rows.items()}
    assert got == {"ada": [("concat_w_o", 0.0, "", 3)], "bob": [("concat_w_o", 1.0, "G-aa", 2)],
                   "cy": [("gpt_causal", 0.0, "", 4)], "dan": [("gpt_causal", 0.0, "", 4)],
                   "semi;colon": [("gpt_causal", 1.0, "", 5)]}
    result = _result()
    apply_overrides(result, rows["bob"])
    assert result.checks[0].override == {"points": 1.0, "comment": "glued = concat + W_O", "group": "G-aa"}


def test_an_unknown_group_names_the_known_ones_and_overlapping_shared_rows_are_refused(tmp_path):
    path = _write(tmp_path, "student,check,points,comment,group\n,concat_w_o,1,x,G-zz\n")
    with pytest.raises(OverrideError, match=r"overrides.csv line 2: no review group 'G-zz' in this batch; "
                                            r"known groups: G-aa, G-bb$"):
        resolve_targets(load_overrides(path), {"ada"}, {"G-bb": ["ada"], "G-aa": ["bob"]})
    with pytest.raises(OverrideError, match=r"known groups: none \(this exercise has no review groups\)"):
        resolve_targets(load_overrides(path), {"ada"}, {})
    path = _write(tmp_path, "student,check,points,comment,group\n,concat_w_o,1,x,G-aa\nbob; cy,test_concat_w_o,0,y,\n")
    with pytest.raises(OverrideError, match=r"line 3: bob / test_concat_w_o is also given on line 2; keep one"):
        resolve_targets(load_overrides(path), {"bob", "cy"}, {"G-aa": ["bob"]})
