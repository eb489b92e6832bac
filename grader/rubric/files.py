"""Answer files and copy sources on disk, and the per-content cache every check of a grading shares."""
from __future__ import annotations

import hashlib
from functools import lru_cache
from pathlib import Path

from .copying import rubric_text
from .judge import Assessment, evaluate
from .read import read_text
from .spec import Rubric, load

def copy_sources_for(rubric: Rubric, root: Path, answer: Path | None = None) -> dict[str, str]:
    """Name -> text of every copy source: the files of ``[copying] sources`` under ``root`` (globs allowed;
    a ``README.md`` is never a source), minus ``answer`` itself, and "the rubric" (its concept, statement and
    hint strings) when ``rubric_source`` is on.

    A file is never a copy of itself, so grading the reference answer does not compare it with itself;
    a missing source (a student's copy of the course has no solutions/) is skipped. Names are paths
    relative to ``root``, as written in the rubric.
    """
    out = {}
    mine = Path(answer).resolve() if answer is not None and Path(answer).exists() else None
    for rel in rubric.copy_sources:
        paths = sorted(Path(root).glob(rel)) if any(c in rel for c in "*?[") else [Path(root) / rel]
        for path in paths:
            if not path.is_file() or path.name.lower() == "readme.md" or path.resolve() == mine:
                continue
            out[path.relative_to(root).as_posix() if path.is_relative_to(root) else rel] = read_text(path.read_bytes())
    if rubric.copying.rubric_source:
        out[RUBRIC_SOURCE] = rubric_text(rubric)
    return out


#: The name of the rubric's own phrases as a copy source.
RUBRIC_SOURCE = "the rubric"


@lru_cache(maxsize=32)
def _assess_cached(rubric_path: str, digest: str, text: str, sources: tuple[tuple[str, str], ...]) -> Assessment:
    return evaluate(load_cached(rubric_path), text, copy_sources=dict(sources))


@lru_cache(maxsize=8)
def load_cached(rubric_path: str) -> Rubric:
    return load(Path(rubric_path))


#: Bytes of an answer file that are read: 200 kB is far more than ``max_words`` (1200) words of any script, and
#: keeps the worst input's evaluate() well under a second.
MAX_BYTES = 200_000


def assess_file(rubric_path: Path, answer: Path, root: Path) -> Assessment:
    """Evaluate the answer file ``answer`` (cached per content, so every check of a run shares it)."""
    rubric = load_cached(str(Path(rubric_path).resolve()))
    with open(answer, "rb") as f:
        data = f.read(MAX_BYTES)
    text = read_text(data)
    sources = tuple(sorted(copy_sources_for(rubric, root, Path(answer)).items()))
    digest = hashlib.sha256(data).hexdigest()
    return _assess_cached(str(Path(rubric_path).resolve()), digest, text, sources)
