"""Progress of long checks (exercise 4's re-training runs), for a person watching a terminal.

Checks call :func:`say`; the command line decides where it goes (:func:`listen`). Nothing listens in a
batch worker or a test, so a check never prints by itself.
"""
from __future__ import annotations

from typing import Callable

_listener: Callable[[str, bool], None] | None = None


def listen(callback: Callable[[str, bool], None] | None) -> None:
    """Send progress to ``callback(text, milestone)`` from now on (None: to nobody)."""
    global _listener
    _listener = callback


def say(text: str, *, milestone: bool = False) -> None:
    """Report progress: ``text`` is one short line ("prenorm (lr 0.001): step 150/400, loss 2.61");
    ``milestone`` marks the lines worth keeping when the output is not a terminal."""
    if _listener is not None:
        _listener(text, milestone)
