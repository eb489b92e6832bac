"""Fixtures shared by exercise 3's public and hidden checks.

``probes`` runs the behavioural probes (``grader/probes``) on the student's functions once per grading,
on first use: the probe checks report them, and a value check that fails with no named mistake shows
the findings for its function instead (DESIGN.md, "Diagnosis: two sources, one rule"). The plugin ends
every fixture between submissions, so findings never carry over to the next student.
"""
from __future__ import annotations

import pytest

from grader.probes import Finding, block, functions, mha
from grader.sandbox import SubmissionError

#: Failures after which the submission is not called again by the probes: each would cost a call's whole
#: time limit (2 s) again, for each of up to 89 probe calls (attention 49, block 21 + 11 of the functions it
#: is given, softmax/layer_norm/gelu 8), and the value checks already report them.
FATAL = {"timeout", "crash", "protocol", "stopped", "load"}


class Probes:
    """The probes' findings for the submission being graded, by function, each computed once.

    ``findings(kind, submission)`` with ``kind`` one of :data:`KINDS` returns a list of
    :class:`grader.probes.Finding`; ``sentences(kind, submission)`` returns a callable giving their
    observations, for ``expect_array(findings=...)``.
    """

    KINDS = ("softmax", "layer_norm", "gelu", "multi_head_attention", "transformer_block")

    def __init__(self):
        self._found: dict[str, list[Finding]] = {}
        self._fatal = False

    def _guarded(self, submission, name: str):
        """The student's function ``name``; after a timeout or crash, later probe calls fail at once."""
        function = getattr(submission, name)

        def guarded(*args, **kwargs):
            if self._fatal:
                raise RuntimeError("not probed: an earlier probe call timed out or crashed")
            try:
                return function(*args, **kwargs)
            except SubmissionError as exc:
                self._fatal = self._fatal or exc.kind in FATAL
                raise

        return guarded

    def findings(self, kind: str, submission) -> list[Finding]:
        """The findings of ``kind``'s probes on ``submission`` (computed on first request).

        Raises:
            KeyError: ``kind`` is not one of :data:`KINDS`.
        """
        if kind not in self.KINDS:
            raise KeyError(f"no probes for {kind!r}; known: {', '.join(self.KINDS)}")
        if kind not in self._found:
            own = {name: self._guarded(submission, name) for name in self.KINDS}
            if kind == "multi_head_attention":
                found = mha.run(own[kind])
            elif kind == "transformer_block":
                found = block.run_block(own[kind], layer_norm=own["layer_norm"], gelu=own["gelu"],
                                        mha=own["multi_head_attention"])
            else:
                found = functions.run_functions(**{kind: own[kind]})
            self._found[kind] = found
        return self._found[kind]

    def sentences(self, kind: str, submission):
        """A callable giving the observations of ``kind``'s findings (for ``expect_array(findings=...)``).

        For the block, when its own probes find nothing, the findings of the functions it uses
        (attention, layer_norm, gelu) are given, named after their function.
        """
        def sentences() -> list[str]:
            found = [f.observation for f in self.findings(kind, submission)]
            if found or kind != "transformer_block":
                return found
            return [f"in {name}: {f.observation}" for name in ("multi_head_attention", "layer_norm", "gelu")
                    for f in self.findings(name, submission)]

        return sentences


@pytest.fixture(scope="session")
def probes() -> Probes:
    """The behavioural probes of this grading (see :class:`Probes`)."""
    return Probes()
