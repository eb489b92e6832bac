"""Exercise specs: where an exercise lives and the limits its submissions run under.

Each exercise folder holds an ``exercise.toml``::

    title = "..."
    files = ["attention.py"]          # what a submission must contain
    module = "attention"              # what the sandbox imports ("" when nothing runs, e.g. prose)
    forbidden_imports = ["torch"]     # static check
    harness = "harness.py"            # optional: grader code run in the sandbox in front of the module
    preload = ["torch"]               # optional: imported before the submission's import is timed
    [limits]
    call_timeout = 10                 # s wall clock per call
    cpu = 120                         # s CPU for the sandbox process
    memory_mb = 1024                  # address space
    file_size_mb = 16                 # largest file written; also what the submission's folder may grow by
    processes = 16                    # processes and threads of the sandbox's own uid
    output_kb = 64                    # captured stdout+stderr kept, for the whole submission
    reply_mb = 16                     # largest reply one call may send back (refused before it is read)
"""
from __future__ import annotations

import dataclasses
import os
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

import click


class SpecError(click.ClickException):
    """An exercise folder or its ``exercise.toml`` is wrong (a course-author error)."""


@dataclass(frozen=True)
class Limits:
    """Resource limits for one sandbox process (units in the field names)."""

    call_timeout: float = 10.0
    cpu: int = 120
    memory_mb: int = 1024
    file_size_mb: int = 16
    processes: int = 16
    output_kb: int = 64
    reply_mb: int = 16


@dataclass(frozen=True)
class Exercise:
    """One exercise: its folder layout and grading settings."""

    name: str
    root: Path
    title: str
    files: tuple[str, ...]
    module: str
    forbidden_imports: tuple[str, ...] = ()
    limits: Limits = field(default_factory=Limits)
    harness: str = ""
    preload: tuple[str, ...] = ()

    @property
    def skeleton(self) -> Path:
        return self.root / "skeleton"

    @property
    def test_dirs(self) -> list[Path]:
        """Public then hidden test folders, those that exist (a student bundle has no hidden)."""
        return [d for d in (self.root / "tests" / "public", self.root / "tests" / "hidden") if d.is_dir()]

    @property
    def has_hidden_tests(self) -> bool:
        return (self.root / "tests" / "hidden").is_dir()

    @property
    def harness_file(self) -> Path | None:
        """The harness module run in the sandbox, or None when calls go to the student's module."""
        return self.root / self.harness if self.harness else None

    def solution(self) -> Path:
        return course_root() / "solutions" / self.name


def course_root() -> Path:
    """The folder holding ``exercises/`` (``$GRADER_COURSE_ROOT`` or the package's parent).

    Raises:
        SpecError: when no ``exercises/`` folder is found.
    """
    env = os.environ.get("GRADER_COURSE_ROOT")
    root = Path(env).resolve() if env else Path(__file__).resolve().parent.parent
    if not (root / "exercises").is_dir():
        raise SpecError(
            f"no exercises/ folder under {root}; install the grader from the course folder "
            "with `pip install -e .` or set GRADER_COURSE_ROOT"
        )
    return root


def load(name: str) -> Exercise:
    """Load ``exercises/NAME/exercise.toml``.

    Raises:
        SpecError: unknown exercise (the message lists the known ones) or a bad spec.
    """
    root = course_root() / "exercises" / name
    spec_file = root / "exercise.toml"
    if not spec_file.is_file():
        known = ", ".join(available()) or "none"
        raise SpecError(f"unknown exercise {name!r}; known exercises: {known}")
    try:
        data = tomllib.loads(spec_file.read_text(encoding="utf-8"))
        limits = Limits(**data.pop("limits", {}))
        return Exercise(
            name=name,
            root=root,
            title=data["title"],
            files=_names(data["files"], "files", spec_file),
            module=data.get("module", ""),
            forbidden_imports=_names(data.get("forbidden_imports", []), "forbidden_imports", spec_file),
            limits=_checked(limits, spec_file),
            harness=data.get("harness", ""),
            preload=_names(data.get("preload", []), "preload", spec_file) if data.get("preload") else (),
        )
    except (tomllib.TOMLDecodeError, KeyError, TypeError) as exc:
        raise SpecError(f"invalid {spec_file}: {exc}") from exc


def _names(value, key: str, spec_file: Path) -> tuple[str, ...]:
    """A list of strings from the spec (``tuple("torch")`` would silently ban "t", "o", ...)."""
    if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
        raise SpecError(f"invalid {key} {value!r} in {spec_file}: expected a list of names, e.g. [\"torch\"]")
    return tuple(value)


def _checked(limits: Limits, spec_file: Path) -> Limits:
    """``limits`` when every value is a positive number (a whole number where the default is one)."""
    for f in dataclasses.fields(Limits):
        value = getattr(limits, f.name)
        number = isinstance(value, (int, float)) and not isinstance(value, bool)
        if not number or value <= 0 or (isinstance(f.default, int) and not isinstance(value, int)):
            kind = "a whole number" if isinstance(f.default, int) else "a number"
            raise SpecError(f"invalid limits.{f.name} {value!r} in {spec_file}: expected {kind} > 0")
    return limits


def available() -> list[str]:
    """Names of all exercises that have an ``exercise.toml``, sorted."""
    base = course_root() / "exercises"
    return sorted(p.parent.name for p in base.glob("*/exercise.toml"))
