"""Static checks on a submission's source, done in the judge without running it."""
from __future__ import annotations

import ast
from pathlib import Path


#: Largest source file read, bytes: a submission's module is a few kB; the cap stops a
#: ``*.py`` link to a device, a FIFO or a huge file from hanging or filling the judge.
MAX_SOURCE_BYTES = 4 * 1024 * 1024


def parse(path: Path) -> ast.Module:
    """Parse a Python file read as bytes (BOMs, coding lines and CRLF all work).

    Raises:
        SyntaxError: with the file name and line, as Python reports it; also for a path
            that is a symbolic link, is not a regular file or is larger than :data:`MAX_SOURCE_BYTES`.
    """
    path = Path(path)
    if path.is_symlink():  # it may point at a file of the course's (a hidden test): never read through it
        raise SyntaxError(f"{path.name} is a symbolic link; submit the file itself", (str(path), 1, 0, None))
    if not path.is_file():  # a FIFO would block open(), /dev/zero would never end
        raise SyntaxError(f"{path.name} is not a regular file", (str(path), 1, 0, None))
    with open(path, "rb") as f:
        source = f.read(MAX_SOURCE_BYTES + 1)
    if len(source) > MAX_SOURCE_BYTES:
        raise SyntaxError(f"{path.name} is larger than {MAX_SOURCE_BYTES // 2**20} MiB", (str(path), 1, 0, None))
    return ast.parse(source, filename=str(path))


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
    root = Path(folder).resolve()
    for path in sorted(Path(folder).rglob("*.py")):
        if not path.resolve().is_relative_to(root):  # through a linked folder: not the submission's
            continue
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
