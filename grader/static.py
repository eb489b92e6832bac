"""Static checks on a submission's source, done in the judge without running it."""
from __future__ import annotations

import ast
from pathlib import Path


def parse(path: Path) -> ast.Module:
    """Parse a Python file read as bytes (BOMs, coding lines and CRLF all work).

    Raises:
        SyntaxError: with the file name and line, as Python reports it.
    """
    return ast.parse(Path(path).read_bytes(), filename=str(path))


def forbidden_imports(folder: Path, forbidden: tuple[str, ...] | list[str]) -> list[str]:
    """Every import of a forbidden top-level package in the ``.py`` files of ``folder``.

    Finds ``import x``, ``from x import y``, ``__import__("x")`` and
    ``importlib.import_module("x")`` with a literal name.

    Returns:
        Messages like ``"attention.py line 3 imports torch"``, in file and line order;
        files that do not parse are skipped (the load check reports them).
    """
    banned = set(forbidden)
    found = []
    for path in sorted(Path(folder).rglob("*.py")):
        try:
            tree = parse(path)
        except (SyntaxError, ValueError):
            continue
        rel = path.relative_to(folder)
        for node in ast.walk(tree):
            names: list[str] = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                names = [node.module]
            elif isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant):
                fn = node.func
                fname = fn.id if isinstance(fn, ast.Name) else fn.attr if isinstance(fn, ast.Attribute) else ""
                if fname in ("__import__", "import_module") and isinstance(node.args[0].value, str):
                    names = [node.args[0].value]
            for name in names:
                if name.split(".")[0] in banned:
                    found.append((str(rel), node.lineno, name.split(".")[0]))
    return [f"{f} line {line} imports {name}" for f, line, name in sorted(found)]
