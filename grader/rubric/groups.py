"""Review groups: answers of one batch that a teacher would grade the same way, to review one group at once.

The Powergrading idea (Basu, Jacobs, Vanderwende, "Powergrading: a Clustering Approach to Amplify Human
Effort for Short Answer Grading", TACL 2013): cluster similar answers, so one decision covers a group.
Here the automatic grading already says a lot, so answers are grouped in two passes:

1. by **grade vector**: for every rubric line, earned or missing; for every misconception, made, avoided
   or not checked (read from the checks' ``details["rubric_line"]`` / ``details["misconception"]`` and
   their *status*, never their points: an instructor's override does not move an answer to another group,
   so the groups an override was resolved against are the groups shown afterwards). Answers with the
   same vector are in one group.
2. by **text**, across near-identical vectors: two answers whose vectors differ in at most one entry
   (Hamming distance <= 1) join one group when their texts are near-identical (cosine of the counts of
   stemmed content words and neighbouring pairs of them >= :data:`NEAR`, see :func:`content_counts`):
   the same answer with small edits, graded a line apart.
   Groups are the connected components of these two links (single linkage), so the result does not
   depend on the order of the students.

Inside a group, the **representative** is the member whose text is most similar to all others (ties:
the smallest student id); the others follow, flagged answers first, each with its similarity to the
representative (an outlier in a same-vector group shows as a low number).

**Group ids** (``G-`` and 8 hex digits) are derived from the group's key vector alone: the vector most
members share (ties: the one whose smallest member id sorts first). One more submission in the batch
leaves every id as it was, unless it joins two groups into one (the merged group keeps one id) or makes
another vector the most shared in its group. Two groups never share a key vector (equal vectors are
always in one group), so ids are unique.

Groups are ordered for review: groups holding flagged (``needs_review``) answers first, then larger
groups first, then by id.

Everything is deterministic (no random initialisation) and takes milliseconds for a class.
"""
from __future__ import annotations

import hashlib
import importlib.util
import math
import sys
import zipfile
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from ..results import SubmissionResult
from .fingerprint import stem
from .read import FUNCTION_WORDS, blocks, normalise, read_text, words
from .sentences import split_sentences

#: Cosine of content-word counts from which two answers count as the same text with small edits.
NEAR = 0.8
#: Largest answer file read for grouping (bytes); the rubric reads at most 1200 words.
MAX_BYTES = 256 * 1024
#: Key sentences shown for a group's representative.
KEY_SENTENCES = 4

#: A grade vector: (check kind, rubric id) -> state, e.g. ``("line", "concat_w_o"): "earned"``.
Vector = tuple[tuple[tuple[str, str], str], ...]


@dataclass
class Member:
    """One answer in a group: the student, its grade vector, similarity to the representative (0-1),
    and why it needs review (empty: it does not)."""

    student: str
    vector: Vector
    similarity: float
    needs_review: list[str] = field(default_factory=list)


@dataclass
class Group:
    """A review group: ``id`` (stable, see the module doc), the ``key`` vector, ``members``
    (representative first), the representative's ``key_sentences``, and ``descriptions``
    ((kind, id) -> the check's description, for showing a vector in words)."""

    id: str
    key: Vector
    members: list[Member]
    key_sentences: list[str]
    descriptions: dict[tuple[str, str], str]

    @property
    def students(self) -> list[str]:
        return [m.student for m in self.members]

    @property
    def representative(self) -> str:
        return self.members[0].student

    @property
    def flagged(self) -> int:
        """How many members need review."""
        return sum(bool(m.needs_review) for m in self.members)

    def earned(self) -> list[str]:
        """The key vector in words: the rubric lines it earns (their concept), in rubric order."""
        return [self.descriptions.get(k, k[1]) for k, state in self.key if state == "earned"]

    def made(self) -> list[str]:
        """The misconceptions the key vector makes, as the checks name them."""
        return [self.descriptions.get(k, k[1]).removeprefix("No misconception: ")
                for k, state in self.key if state == "made"]

    def differences(self, member: Member) -> list[str]:
        """How ``member``'s vector differs from the key: ``+id`` earned or made more, ``-id`` less."""
        key = dict(self.key)
        return [f"{'+' if state in ('earned', 'made') else '-'}{k[1]} ({state})"
                for k, state in member.vector if key.get(k) != state]


# ------------------------------------------------------------------------------ grade vectors
def _kind_of(check) -> tuple[str, str] | None:
    if "rubric_line" in check.details:
        return ("line", check.details["rubric_line"])
    if "misconception" in check.details:
        return ("misconception", check.details["misconception"])
    return None


def rubric_checks(results: list[SubmissionResult]) -> dict[str, tuple[str, str]]:
    """Check name -> (``"line"`` or ``"misconception"``, rubric id), from the details of any result of the
    batch (a skipped check carries no details; another student's run of it does). Empty: no rubric."""
    out: dict[str, tuple[str, str]] = {}
    for result in results:
        for check in result.checks:
            kind = _kind_of(check)
            if kind:
                out.setdefault(check.name, kind)
    return out


def grade_vector(result: SubmissionResult, kinds: dict[str, tuple[str, str]]) -> Vector:
    """The grade vector of one result: every rubric check of ``kinds`` (:func:`rubric_checks`) it has,
    in check order, with its state: a line ``earned`` (passed) or ``missing``; a misconception ``made``
    (failed), ``avoided`` (passed) or ``not checked`` (skipped: no point on its question)."""
    out = []
    for check in result.checks:
        kind = kinds.get(check.name)
        if kind is None:
            continue
        if kind[0] == "line":
            state = "earned" if check.status == "passed" else "missing"
        else:
            state = {"failed": "made", "passed": "avoided"}.get(check.status, "not checked")
        out.append((kind, state))
    return tuple(out)


def hamming(a: Vector | dict, b: Vector | dict) -> int:
    """Entries in which two vectors (or their dicts) differ (an entry only one of them has counts as different)."""
    da, db = (x if isinstance(x, dict) else dict(x) for x in (a, b))
    return sum(da.get(k) != db.get(k) for k in da.keys() | db.keys())


def group_id(key: Vector) -> str:
    """``G-`` and the first 8 hex digits of the SHA-1 of the vector written as ``kind:id=state`` lines."""
    text = "\n".join(f"{kind}:{rid}={state}" for (kind, rid), state in sorted(key))
    return "G-" + hashlib.sha1(text.encode("utf-8")).hexdigest()[:8]


# ------------------------------------------------------------------------------ text similarity
def content_counts(markdown: str) -> Counter:
    """Stemmed content words of an answer (markup, headings and English function words dropped) and the
    pairs of neighbouring content words -> count. The pairs keep answers on one topic apart: on the 54
    answers of tests/exercise1_answers, words alone put 10 pairs of different answers above 0.8 (same
    vocabulary), words and pairs none (the highest 0.71), while a light edit of a copy stays at 0.95."""
    blocks_, _ = blocks(markdown)
    toks = [stem(t) for t in words(" ".join(normalise(b.text) for b in blocks_))
            if t not in FUNCTION_WORDS and len(t) > 1]
    return Counter(toks) + Counter(f"{a} {b}" for a, b in zip(toks, toks[1:]))


def cosine(a: Counter, b: Counter) -> float:
    """Cosine of two word-count vectors, 0 to 1 (0 when either is empty)."""
    dot = sum(n * b[w] for w, n in a.items() if w in b)
    norm = math.sqrt(sum(n * n for n in a.values())) * math.sqrt(sum(n * n for n in b.values()))
    return dot / norm if norm else 0.0


def _key_sentences(result: SubmissionResult, kinds: dict, text: str) -> list[str]:
    """The evidence quotes of the earned lines (and made misconceptions) in check order; without any,
    the answer's first sentences."""
    out: list[str] = []
    for check in result.checks:
        kind = kinds.get(check.name)
        if kind and (kind[0] == "line") == (check.status == "passed"):
            for q in check.details.get("evidence", []):
                q = " ".join(str(q).split())
                if q and q not in out:
                    out.append(q)
    if not out:
        out = [s for b in blocks(text)[0] for s in split_sentences(b.text)]
    return [q if len(q) <= 240 else q[:239] + "…" for q in out[:KEY_SENTENCES]]


# ------------------------------------------------------------------------------ grouping
def review_groups(rows: list[dict], texts: dict[str, str], near: float = NEAR) -> list[Group]:
    """Group the graded answers of a batch (see the module doc).

    Args:
        rows: gradebook rows (:meth:`grader.gradebook.Gradebook.rows`): ``student``, ``status``, ``result``;
            only graded rows with a result are grouped.
        texts: student -> the answer's text (:func:`answer_texts`); a missing text is never near another.
        near: cosine from which two answers at Hamming distance 1 join one group.

    Returns:
        The groups in review order; ``[]`` when the results carry no rubric checks (not a rubric exercise).
    """
    graded = {r["student"]: r["result"] for r in rows if r["status"] == "graded" and r["result"] is not None}
    kinds = rubric_checks(list(graded.values()))
    if not kinds:
        return []
    students = sorted(graded)
    vectors = {s: grade_vector(graded[s], kinds) for s in students}
    as_dicts = {s: dict(v) for s, v in vectors.items()}
    counts = {s: content_counts(texts.get(s, "")) for s in students}
    parent = {s: s for s in students}

    def root(s: str) -> str:
        while parent[s] != s:
            parent[s] = parent[parent[s]]
            s = parent[s]
        return s

    sims: dict[tuple[str, str], float] = {}
    for i, a in enumerate(students):
        for b in students[i + 1:]:
            distance = 0 if vectors[a] == vectors[b] else hamming(as_dicts[a], as_dicts[b])
            if distance > 1:
                continue
            sims[a, b] = sims[b, a] = cosine(counts[a], counts[b])
            if distance == 0 or sims[a, b] >= near:
                ra, rb = root(a), root(b)
                parent[max(ra, rb)] = min(ra, rb)
    components: dict[str, list[str]] = {}
    for s in students:
        components.setdefault(root(s), []).append(s)
    descriptions = {kinds[c.name]: c.description for r in graded.values() for c in r.checks if c.name in kinds}
    groups = []
    for members in components.values():
        sim = {(a, b): sims.get((a, b), cosine(counts[a], counts[b])) for a in members for b in members if a != b}
        rep = min(members, key=lambda s: (-sum(sim[s, o] for o in members if o != s), s))
        by_vector: dict[Vector, list[str]] = {}
        for s in members:
            by_vector.setdefault(vectors[s], []).append(s)
        key = min(by_vector, key=lambda v: (-len(by_vector[v]), min(by_vector[v])))
        ordered = [rep] + sorted((s for s in members if s != rep),
                                 key=lambda s: (not graded[s].needs_review, -sim[rep, s], s))
        groups.append(Group(
            id=group_id(key), key=key,
            members=[Member(s, vectors[s], 1.0 if s == rep else round(sim[rep, s], 3),
                            list(graded[s].needs_review)) for s in ordered],
            key_sentences=_key_sentences(graded[rep], kinds, texts.get(rep, "")),
            descriptions=descriptions))
    groups.sort(key=lambda g: (g.flagged == 0, -len(g.members), g.id))
    return groups


def members_by_id(groups: list[Group]) -> dict[str, list[str]]:
    """Group id -> its students (what a group override is resolved against)."""
    return {g.id: g.students for g in groups}


# ------------------------------------------------------------------------------ answer texts
def answer_texts(exercise, submissions) -> dict[str, str]:
    """Student -> the text the rubric grades, read from each submission where it lies (client side).

    The answer is the exercise's first markdown file (``exercise.files``): ``answer.md`` whole, or the
    ``Explanation`` section of ``report.md`` (exercise 4, read by the exercise's own ``report_md``).
    A submission is a folder, a ``.zip`` (the file found by name at any depth, ``__MACOSX`` skipped) or a
    platform's loose files (:attr:`grader.lms.Submission.files`). An unreadable or missing file gives ``""``
    (that answer is grouped by its vector only); files over :data:`MAX_BYTES` are read up to it.

    Args:
        exercise: a :class:`grader.exercises.Exercise`.
        submissions: :class:`grader.lms.Submission` objects.
    """
    names = [f for f in exercise.files if f.endswith(".md")]
    if not names:
        return {}
    name = names[0]
    section = _explanation_reader(exercise.root) if name == "report.md" else None
    out = {}
    for sub in submissions:
        if sub.problem:
            continue
        data = _read_answer(Path(sub.source), sub.files, name)
        text = read_text(data) if data else ""
        out[sub.student] = section(text) if section and text else text
    return out


def _read_answer(source: Path, files: tuple, name: str) -> bytes:
    try:
        for inside, path in files:
            if Path(inside).name == name:
                return _head(Path(path))
        if files and len(files) == 1 and str(files[0][1]).lower().endswith(".zip"):
            source = Path(files[0][1])
        if source.is_dir():
            found = sorted(p for p in source.rglob(name) if p.is_file() and "__MACOSX" not in p.parts)
            return _head(min(found, key=lambda p: len(p.parts))) if found else b""
        if source.suffix.lower() == ".zip":
            with zipfile.ZipFile(source) as z:
                entries = sorted((i for i in z.infolist() if Path(i.filename).name == name
                                  and "__MACOSX" not in i.filename and not i.is_dir()),
                                 key=lambda i: i.filename.count("/"))
                if entries:
                    with z.open(entries[0]) as fh:
                        return fh.read(MAX_BYTES)
    except (OSError, zipfile.BadZipFile, ValueError):
        return b""
    return b""


def _head(path: Path) -> bytes:
    with open(path, "rb") as fh:
        return fh.read(MAX_BYTES)


def _explanation_reader(root: Path):
    """The exercise's ``tests/report_md.py`` ``explanation_of`` (judge-side file, plain Python), or None."""
    path = Path(root) / "tests" / "report_md.py"
    if not path.is_file():
        return None
    name = f"_groups_report_md_{Path(root).name}"
    if name not in sys.modules:  # registered first: its dataclasses look their module up while defined
        spec = importlib.util.spec_from_file_location(name, path)
        sys.modules[name] = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(sys.modules[name])
    return sys.modules[name].explanation_of
