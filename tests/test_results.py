"""The result model: point arithmetic, the --json summary and the storage round trip.

Every expected number is worked out by hand in the test from the hand-made result.
"""
import json

import pytest

from grader.results import CheckResult, SubmissionResult, points_for


# ---------------------------------------------------------------- points_for
@pytest.mark.parametrize("status, max_points, expected", [
    ("passed", 2, 2.0),
    ("passed", 0.5, 0.5),
    ("passed", 0, 0.0),
    ("failed", 2, 0.0),
    ("skipped", 2, 0.0),   # a check skipped because its dependency failed earns nothing
    ("error", 2, 0.0),     # a grader error earns nothing (and is reported as the grader's fault)
])
def test_points_for(status, max_points, expected):
    got = points_for(status, max_points)
    assert got == expected
    assert isinstance(got, float)


def test_points_for_rejects_negative_points():
    with pytest.raises(ValueError, match="max_points"):
        points_for("passed", -1)
    with pytest.raises(ValueError):
        points_for("failed", -0.5)  # refused whatever the status


@pytest.mark.parametrize("status", ["pass", "PASSED", "ok", "", "xfailed"])
def test_points_for_rejects_unknown_status(status):
    with pytest.raises(ValueError, match="unknown check status"):
        points_for(status, 1)


# ---------------------------------------------------------------- a hand-made result
def _check(name, status, max_points, **kw):
    return CheckResult(name=name, description=f"{name} works.", max_points=max_points, status=status, **kw)


@pytest.fixture
def result():
    """Five 0.5-point parity items (3 pass), a 2-point check that fails, a skipped 1-point check,
    a 1-point grader error and a 0-point gate that passes."""
    checks = [
        _check("test_parity[a]", "passed", 0.5),
        _check("test_parity[b]", "passed", 0.5),
        _check("test_parity[c]", "failed", 0.5, feedback="max abs error 0.3", diagnosis="W_O forgotten"),
        _check("test_parity[d]", "passed", 0.5),
        _check("test_parity[e]", "skipped", 0.5, feedback="not checked: it needs test_shape to pass first"),
        _check("test_block", "failed", 2, feedback="shape (5, 12)", hint="keep the batch axis",
               details={"error_map": [[0.0, 1.5], [float("nan"), 0.25]], "error_map_axes": ["token", "feature"]},
               hidden=True, duration=0.125),
        _check("test_large", "error", 1, feedback="the grader itself failed"),
        _check("test_module_loads", "passed", 0),
    ]
    return SubmissionResult(exercise="exercise3", submission="subs/alice", seed=7, checks=checks,
                            isolation="bubblewrap", output="hello\n", notes=["a note"], duration=1.5)


def test_score_and_max_score_by_hand(result):
    # earned: 3 passed items x 0.5 = 1.5; the 0-point gate adds 0.
    assert result.score == 1.5
    # available: 5 x 0.5 + 2 + 1 + 0 = 5.5 (skipped and errored checks still count as available).
    assert result.max_score == 5.5
    assert [c.name for c in result.grader_errors] == ["test_large"]


def test_score_of_an_empty_result_is_zero():
    empty = SubmissionResult(exercise="exercise3", submission="x", seed=0)
    assert (empty.score, empty.max_score) == (0, 0)


def test_summary_rounds_float_sums():
    # 0.1 + 0.1 + 0.1 is 0.30000000000000004 in binary floating point; the summary shows 0.3.
    r = SubmissionResult(exercise="e", submission="s", seed=1,
                         checks=[_check(f"t{i}", "passed", 0.1) for i in range(3)])
    assert r.score != 0.3
    assert r.summary()["score"] == 0.3
    assert r.summary()["max_score"] == 0.3


def test_instructor_override_replaces_the_automatic_points(result):
    result.checks[2].override = {"points": 0.25, "comment": "right idea, one sign wrong"}
    assert result.checks[2].points == 0.25
    assert result.score == 1.5 + 0.25
    assert result.max_score == 5.5  # an override changes what was earned, not what was available


def test_summary_has_exactly_the_documented_keys(result):
    summary = result.summary()
    assert set(summary) == {"exercise", "score", "max_score", "seed", "needs_review", "checks"}
    assert (summary["exercise"], summary["score"], summary["max_score"], summary["seed"]) == ("exercise3", 1.5, 5.5, 7)
    assert summary["needs_review"] == []
    result.needs_review.append("report numbers differ from the grader's re-run")
    assert result.summary()["needs_review"] == ["report numbers differ from the grader's re-run"]
    assert len(summary["checks"]) == 8
    for check in summary["checks"]:
        assert set(check) == {"name", "points", "max_points", "status", "feedback", "diagnosis"}
    third = summary["checks"][2]
    assert third == {"name": "test_parity[c]", "points": 0.0, "max_points": 0.5, "status": "failed",
                     "feedback": "max abs error 0.3", "diagnosis": "W_O forgotten"}
    # The summary is what `grader grade --json` prints: it must survive JSON.
    assert json.loads(json.dumps(summary)) == summary


def test_to_dict_includes_score_and_everything_else(result):
    data = result.to_dict()
    assert data["score"] == 1.5 and data["max_score"] == 5.5
    assert data["submission"] == "subs/alice" and data["isolation"] == "bubblewrap"
    assert data["checks"][5]["hint"] == "keep the batch axis"
    assert data["checks"][5]["hidden"] is True


def test_round_trip_through_to_dict_and_json(result):
    result.checks[0].override = {"points": 0.0, "comment": "copied"}
    data = result.to_dict()
    copy = SubmissionResult.from_dict(data)
    assert copy.to_dict() == data
    assert [c.name for c in copy.checks] == [c.name for c in result.checks]
    assert all(isinstance(c, CheckResult) for c in copy.checks)
    assert (copy.score, copy.max_score) == (1.0, 5.5)  # the override took 0.5 away
    # from_dict leaves its argument alone (a batch may reuse it).
    assert data["checks"][0]["name"] == "test_parity[a]" and "score" in data

    via_json = SubmissionResult.from_dict(json.loads(result.to_json()))
    assert via_json.score == 1.0
    assert via_json.checks[5].details["error_map"][0] == [0.0, 1.5]
    assert via_json.checks[5].duration == 0.125
