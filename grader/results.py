"""The one result model: every report, CSV row and JSON document is a view of it.

A :class:`SubmissionResult` holds one :class:`CheckResult` per check. All point
arithmetic lives in :func:`points_for` so it can be tested on its own (the habit
otter-grader keeps).
"""
from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass, field
from typing import Any

#: A check's status. ``error`` means the *grader* failed on this check (never the
#: student's fault); ``skipped`` means a check it depends on did not pass.
STATUSES = ("passed", "failed", "skipped", "error")


def points_for(status: str, max_points: float) -> float:
    """Points earned by a check with this status.

    Args:
        status: one of :data:`STATUSES`.
        max_points: the check's weight (>= 0).

    Returns:
        ``max_points`` when passed, 0 otherwise.

    Raises:
        ValueError: for an unknown status or negative points.
    """
    if status not in STATUSES:
        raise ValueError(f"unknown check status {status!r}; expected one of {STATUSES}")
    if max_points < 0:
        raise ValueError(f"max_points must be >= 0, got {max_points}")
    return float(max_points) if status == "passed" else 0.0


#: The note of a grading without the hidden tests (a student's copy of the course).
HIDDEN_NOT_AVAILABLE = ("Hidden tests are not available here: graded on the public checks only; "
                        "your final grade also includes hidden checks.")


@dataclass
class CheckResult:
    """The outcome of one check.

    Attributes:
        name: stable id, e.g. ``test_mha_parity[d48_h6_causal]``.
        description: the sentence the student sees (the check's docstring).
        max_points: weight of the check.
        status: one of :data:`STATUSES`.
        feedback: what happened, with numbers (max abs error, shape, ...).
        hint: what to look at when it fails (from the check's marker).
        diagnosis: the named known mistake the output matches, or the behavioural probes' findings
            (then ``details["diagnosis_from"] == "findings"``: see :attr:`diagnosis_label`), if any.
        details: JSON-able extras for reports (e.g. ``error_map``).
        hidden: True for checks from the hidden tests.
        duration: seconds spent in the check.
        override: an instructor's decision, ``{"points": p, "comment": "..."}``; when set,
            it replaces the automatic points (see :attr:`points`).
    """

    name: str
    description: str
    max_points: float
    status: str
    feedback: str = ""
    hint: str = ""
    diagnosis: str = ""
    details: dict[str, Any] = field(default_factory=dict)
    hidden: bool = False
    duration: float = 0.0
    override: dict[str, Any] | None = None

    @property
    def diagnosis_label(self) -> str:
        """How reports introduce :attr:`diagnosis`: "Likely mistake" for a named mistake, "What the probes
        found" for the probes' findings (observations of the student's function, not a name)."""
        return "What the probes found" if self.details.get("diagnosis_from") == "findings" else "Likely mistake"

    @property
    def points(self) -> float:
        """Points earned: the instructor's override if any, else :func:`points_for`."""
        if self.override is not None:
            return float(self.override["points"])
        return points_for(self.status, self.max_points)


@dataclass
class SubmissionResult:
    """Everything known about one graded submission.

    Attributes:
        exercise: exercise name, e.g. ``exercise3``.
        submission: the submission's folder as given by the user.
        seed: the seed all randomised checks drew from (reproduce with ``--seed``).
        checks: one entry per check, in run order.
        isolation: how student code was isolated (shown in the report).
        output: captured stdout/stderr of the student's code (capped).
        notes: grader-level messages (e.g. "hidden tests not available").
        needs_review: why a person should look at this grade (empty: no review needed).
        duration: wall seconds for the whole grading.
    """

    exercise: str
    submission: str
    seed: int
    checks: list[CheckResult] = field(default_factory=list)
    isolation: str = ""
    output: str = ""
    notes: list[str] = field(default_factory=list)
    needs_review: list[str] = field(default_factory=list)
    duration: float = 0.0

    @property
    def score(self) -> float:
        return sum(c.points for c in self.checks)

    @property
    def max_score(self) -> float:
        return sum(c.max_points for c in self.checks)

    @property
    def grader_errors(self) -> list[CheckResult]:
        return [c for c in self.checks if c.status == "error"]

    def summary(self) -> dict[str, Any]:
        """The stable scripting interface printed by ``grader grade --json``."""
        return {
            "exercise": self.exercise,
            "score": round(self.score, 6),
            "max_score": round(self.max_score, 6),
            "seed": self.seed,
            "needs_review": list(self.needs_review),
            "checks": [
                {
                    "name": c.name,
                    "points": c.points,
                    "max_points": c.max_points,
                    "status": c.status,
                    "feedback": c.feedback,
                    "diagnosis": c.diagnosis,
                }
                for c in self.checks
            ],
        }

    def to_dict(self) -> dict[str, Any]:
        """Everything, for storage (batch results); inverse of :meth:`from_dict`.

        A shallow view for JSON or pickling: nested values (e.g. ``details``) are shared with
        this result, not copied (``dataclasses.asdict`` deep-copied every heat map's grid).
        """
        data = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}
        data["checks"] = [{f.name: getattr(c, f.name) for f in dataclasses.fields(c)} for c in self.checks]
        data["score"] = self.score
        data["max_score"] = self.max_score
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "SubmissionResult":
        data = {k: v for k, v in data.items() if k not in ("score", "max_score")}
        data["checks"] = [CheckResult(**c) for c in data.get("checks", [])]
        return cls(**data)

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=2)
