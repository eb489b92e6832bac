"""Running student code apart from the judge.

- :mod:`~grader.sandbox.session`: :class:`Sandbox`, one submission's worker and the calls into it;
- :mod:`~grader.sandbox.template`: the process that forks workers, and a uid per sandbox;
- :mod:`~grader.sandbox.isolation`: every isolation rule (bubblewrap, namespaces, limits);
- :mod:`~grader.sandbox.forking`, :mod:`~grader.sandbox.worker` and :mod:`~grader.sandbox.wire`:
  the code that runs inside (the template, the worker) and the wire format both sides speak
  (nothing is ever unpickled);
- :mod:`~grader.sandbox.messages`: what the student reads when their code fails.
"""
from .isolation import bubblewrap_works
from .session import Sandbox, SubmissionError

__all__ = ["Sandbox", "SubmissionError", "bubblewrap_works"]
