"""The reference solution gets full marks and the skeleton gets zero, without grader errors."""
from conftest import ROOT


def test_reference_solution_gets_full_marks(grade3):
    result = grade3(ROOT / "solutions" / "exercise3")
    failed = [(c.name, c.status, c.feedback) for c in result.checks if c.status != "passed"]
    assert failed == []
    assert result.score == result.max_score == 24


def test_skeleton_gets_zero_without_crashing(grade3):
    result = grade3(ROOT / "exercises" / "exercise3" / "skeleton")
    assert result.score == 0
    assert result.grader_errors == []
    not_implemented = [c for c in result.checks if "not implemented yet" in c.feedback]
    assert len(not_implemented) >= 5
