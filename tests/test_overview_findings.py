"""The class overview keeps named mistakes and the probes' findings apart (a finding is not a name)."""
from grader import overview
from grader.results import CheckResult, SubmissionResult

NAME = "the output projection W_O was forgotten: after joining the heads, apply y @ w_out.T + b_out"
FINDING = "with causal=True, changing token 3 moved your output at token 0 by 0.5: the causal mask lets tokens see the future"


def _row(student, checks):
    result = SubmissionResult(exercise="exercise3", submission=student, seed=1, checks=checks)
    return {"student": student, "status": "graded", "result": result, "score": 0.0, "max_score": 2.0,
            "duration": 1.0, "error": ""}


def test_findings_are_counted_apart_from_named_mistakes():
    named = CheckResult("test_mha_parity[a]", "d", 1.0, "failed", diagnosis=NAME)
    found = CheckResult("test_mha_behaviour", "d", 0.0, "failed", diagnosis=FINDING,
                        details={"diagnosis_from": "findings"})
    also = CheckResult("test_mha_parity[b]", "d", 1.0, "failed", diagnosis=FINDING,
                       details={"diagnosis_from": "findings"})
    stats = overview.summarise([_row("ada", [named]), _row("bob", [found, also]), _row("cy", [found])])
    assert stats["mistakes"] == [(NAME, 1)]
    assert stats["findings"] == [(FINDING, 2)]  # once per student, however many checks show it
