"""Read a student's ``report.md``: the table of the four runs and the explanation (judge side).

The template (skeleton/report.md) has one markdown table whose first column names the run
(``prenorm``, ``no-residual``, ``prenorm-high-lr``, ``postnorm-high-lr``) and whose column headed
``val loss`` holds the validation loss (the last column when no header says so), and a section headed
``## Explanation``. Reading is forgiving about what students
do to tables: backticks or bold around names, extra columns, spaces, ``1.234 nats``; it is strict about
which run a number belongs to.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

RUN_NAMES = ("prenorm", "no-residual", "prenorm-high-lr", "postnorm-high-lr")
#: Largest report read (bytes): a report is a few kB.
MAX_BYTES = 256 * 1024
_NUMBER = re.compile(r"[-+]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?")


@dataclass
class Report:
    """What was read: run name -> reported validation loss, the explanation text, and problems."""

    numbers: dict[str, float] = field(default_factory=dict)
    explanation: str = ""
    problems: list[str] = field(default_factory=list)


def _key(cell: str) -> str:
    return re.sub(r"[`*_\s]", "", cell).lower().replace("–", "-")


def read(path: Path) -> Report:
    """Parse ``report.md`` at ``path`` (a missing or unreadable file is a problem, not an exception)."""
    report = Report()
    path = Path(path)
    if not path.is_file():
        report.problems.append("report.md is missing")
        return report
    with open(path, "rb") as f:
        raw = f.read(MAX_BYTES)
    text = raw.decode("utf-8", errors="replace").replace("\r\n", "\n")
    lines = text.split("\n")
    column = -1  # the validation-loss column: from the header row ("val loss"), else the last one
    for line in lines:
        if not line.strip().startswith("|"):
            continue
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        name = _key(cells[0])
        if name not in RUN_NAMES:
            header = [_key(c) for c in cells]
            found = [i for i, c in enumerate(header) if "val" in c or "loss" in c]
            if found and name in ("run", "runs", "name", "model", ""):
                column = found[-1]
            continue
        cell = cells[column] if -len(cells) <= column < len(cells) else ""
        numbers = _NUMBER.findall(cell)
        if numbers:
            value = float(numbers[0])
        elif re.search(r"\bnan\b|\binf|diverg", cell, re.I):
            value = float("nan")  # a run that blew up
        else:
            report.problems.append(f"no number in the {name} row's validation-loss column")
            continue
        if name in report.numbers and report.numbers[name] != value and value == value:
            report.problems.append(f"two rows for {name}")
        else:
            report.numbers[name] = value
    for name in RUN_NAMES:
        if name not in report.numbers and not any(name in p for p in report.problems):
            report.problems.append(f"no row for {name}")
    report.explanation = _explanation(lines)
    return report


def explanation_of(markdown: str) -> str:
    """The Explanation section of a report given as text."""
    return _explanation(markdown.replace("\r\n", "\n").split("\n"))


def _explanation(lines: list[str]) -> str:
    """The text under the ``Explanation`` heading (to the next heading of the same or higher level),
    without HTML comments (the template's instructions)."""
    start, level = None, 0
    for i, line in enumerate(lines):
        m = re.match(r"^(#+)\s*(.*)$", line.strip())
        if m and start is None and "explanation" in m.group(2).lower():
            start, level = i + 1, len(m.group(1))
        elif m and start is not None and len(m.group(1)) <= level:
            return _strip("\n".join(lines[start:i]))
    return _strip("\n".join(lines[start:])) if start is not None else ""


def _strip(text: str) -> str:
    return re.sub(r"<!--.*?-->", " ", text, flags=re.S).strip()
