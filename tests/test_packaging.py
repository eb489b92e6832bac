"""A non-editable install (Gradescope's setup.sh runs ``pip install ./course``) gets every subpackage."""
from __future__ import annotations

import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_every_grader_subpackage_is_listed_in_pyproject():
    listed = set(tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"])
    # grader itself is a namespace package (no __init__.py); its subpackages have one.
    present = {"grader"} | {".".join(p.parent.relative_to(ROOT).parts) for p in (ROOT / "grader").rglob("__init__.py")}
    assert present == listed, f"missing from pyproject: {sorted(present - listed)}; not present: {sorted(listed - present)}"
