"""GitHub Actions annotations: the ``::error`` workflow command that course CI prints for a failure.

Format (GitHub docs, "Workflow commands for GitHub Actions"; escaping as in ``@actions/core``'s
``command.ts``)::

    ::error file=PATH,line=N,title=TITLE::MESSAGE

In the message ``%``, ``\\r`` and ``\\n`` are written ``%25``, ``%0D`` and ``%0A``; in a property
value ``:`` and ``,`` also, as ``%3A`` and ``%2C``.
"""
from __future__ import annotations

import os


def escape_data(text: str) -> str:
    """``text`` as a workflow command's message (``%``, CR, LF escaped)."""
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    """``text`` as a workflow command's property value (also ``:`` and ``,`` escaped)."""
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def error(message: str, *, title: str, file: str = "", line: int | None = None) -> str:
    """One ``::error`` line: an annotation on ``file`` (a path relative to the repository's root) at
    ``line`` (1-based; left out when None), titled ``title``."""
    props = [f"file={escape_property(file)}"] if file else []
    if line is not None:
        props.append(f"line={line}")
    props.append(f"title={escape_property(title)}")
    return f"::error {','.join(props)}::{escape_data(message)}"


def in_github_actions() -> bool:
    """True when running as a GitHub Actions step (the runner sets ``GITHUB_ACTIONS=true``)."""
    return os.environ.get("GITHUB_ACTIONS") == "true"
