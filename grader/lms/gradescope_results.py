"""Gradescope's autograder ``results.json`` for one graded submission (:func:`results_json`): per check a
test with its points, how it ended, a tag per function of the contract and a visibility, and a
top-level output written for the student.

Format: Gradescope autograder docs, "Autograder Specifications" ("Output format", "Controlling Test
Case Visibility", "Test case status", "Output String Formatting").
"""
from __future__ import annotations

import ast
import functools
import html
import re
from collections import Counter

from ..results import CheckResult, SubmissionResult
from ..sandbox.container import CONTAINER

#: Gradescope's visibility settings of a test (autograder docs, "Controlling Test Case Visibility").
VISIBILITIES = ("visible", "after_published", "after_due_date", "hidden")
#: Visibility of the hidden checks' tests by default: shown once the instructor publishes the grades
#: (``hidden`` keeps them from students for good).
HIDDEN_VISIBILITY = "after_published"
#: When a student sees the hidden checks and the total (same docs, "Controlling Test Case Visibility":
#: while any test is hidden, the total is too).
_WHEN = {"after_published": "and your total are shown once the grades are published",
         "after_due_date": "and your total are shown after the due date (the late due date, where late "
                           "submissions are allowed)",
         "hidden": "{are} never shown to you; your total is shown once the grades are published"}


# ------------------------------------------------------------------------------ results.json out
def results_json(result: SubmissionResult, *, hidden_visibility: str = HIDDEN_VISIBILITY) -> dict:
    """Gradescope's autograder ``results.json`` for one graded submission.

    Format (Gradescope autograder docs, "Autograder Specifications"): ``{"score", "execution_time"
    (seconds), "output", "output_format", "stdout_visibility", "tests": [{"name", "score", "max_score",
    "status", "output", "tags", "visibility", "extra_data"}]}``. ``stdout_visibility`` is ``hidden``
    (Gradescope's default, made explicit): run_autograder's output names every hidden check. Per test:

    - ``status``: ``passed`` or ``failed``, the two Gradescope knows; set explicitly, so a failed
      check worth 0 points (a gate such as "the module loads") shows as failed;
    - ``output``: says which of failed, skipped (a check it depends on did not pass) and grader error
      (never the student's fault) it was, with the feedback, the likely mistake and the hint;
    - ``tags``: the function or component the check tests (:func:`check_tags`);
    - ``visibility``: ``visible`` for public checks, ``hidden_visibility`` for hidden ones.

    The top-level ``output`` is written for students (:func:`student_output`).

    Raises:
        ValueError: ``hidden_visibility`` is not one of :data:`VISIBILITIES`.
    """
    if hidden_visibility not in VISIBILITIES:
        raise ValueError(f"hidden_visibility must be one of {', '.join(VISIBILITIES)}, got {hidden_visibility!r}")
    contract = contract_names(result.exercise)
    tests = [{"name": f"{c.description} [{c.name}]", "score": c.points, "max_score": c.max_points,
              "status": "passed" if _passed(c) else "failed", "output": check_output(c),
              "tags": check_tags(c.name, contract), "visibility": hidden_visibility if c.hidden else "visible",
              "extra_data": {"check": c.name, "status": c.status}}
             for c in result.checks]
    return {"score": round(result.score, 6), "execution_time": round(result.duration, 2),
            "output": student_output(result, hidden_visibility), "output_format": "simple_format",
            "stdout_visibility": "hidden", "tests": tests}


def _passed(check: CheckResult) -> bool:
    return check.status == "passed" if check.override is None else check.points >= check.max_points


def check_output(check: CheckResult) -> str:
    """What a test's ``output`` says: how the check ended, then its feedback, likely mistake, hint
    and the instructor's comment (plain text; Gradescope shows it in a ``<pre>``)."""
    lines = {"passed": [check.feedback] if check.feedback else [],
             "failed": [f"Failed: {check.feedback or 'the check did not pass.'}"],
             "skipped": [f"Skipped, no points yet: {check.feedback}. It runs once that check passes."],
             "error": ["Grader error: this is not your fault, and the course staff will look at it "
                       f"(your score may change). {check.feedback}"]}[check.status]
    if check.diagnosis:
        lines.append(f"{check.diagnosis_label}: {check.diagnosis}")
    if check.status == "failed" and check.hint:
        lines.append(f"{'General hint' if check.diagnosis else 'Hint'}: {check.hint}")
    if check.override is not None:
        lines.append(f"Instructor ({check.points:g}/{check.max_points:g} points): {check.override.get('comment', '')}")
    return "\n".join(lines)


def student_output(result: SubmissionResult, hidden_visibility: str = HIDDEN_VISIBILITY) -> str:
    """The top-level ``output``, for the student: the score (only the public checks' while the hidden
    ones are not shown yet), what the checks did, the seed to reproduce them, how the code was kept
    apart (never the sandbox's internals), notes and review flags. HTML-escaped, one line per
    line (Gradescope's ``simple_format`` turns newlines into line breaks)."""
    checks = result.checks
    held_back = [c for c in checks if c.hidden and hidden_visibility != "visible"]
    shown = [c for c in checks if c not in held_back]
    count = Counter(c.status for c in shown)  # how hidden checks ended is theirs to show
    if held_back:
        lines = [f"Public checks: {sum(c.points for c in shown):g} / {_points(sum(c.max_points for c in shown))}. "
                 f"The {len(held_back)} hidden check{'s' if len(held_back) != 1 else ''} "
                 f"({_points(sum(c.max_points for c in held_back))}) "
                 f"{_WHEN[hidden_visibility].format(are='are' if len(held_back) != 1 else 'is')}."]
    else:
        lines = [f"Score: {result.score:g} / {_points(result.max_score)}."]
    tally = f"{'Public checks' if held_back else 'Checks'}: {count['passed']} passed, {count['failed']} failed"
    if count["skipped"]:
        tally += f", {count['skipped']} skipped (a check they depend on did not pass)"
    if count["error"]:
        tally += f", {count['error']} grader error(s) (not your fault: the course staff will look at them)"
    lines.append(tally + ".")
    if _runs_code(result.exercise):  # a written answer (exercise 1) draws nothing and runs nothing
        lines.append(f"Seed {result.seed}: the randomised checks drew their inputs from it; "
                     f"`grade {result.exercise} --seed {result.seed}` repeats the public ones on your machine.")
        lines.append(_kept_apart(result.isolation))
    lines += [f"Note: {note}" for note in result.notes]
    if result.needs_review:
        lines.append("A person will review this grade: " + "; ".join(result.needs_review))
    return "\n".join(html.escape(line, quote=False) for line in lines)


@functools.lru_cache(maxsize=8)
def _runs_code(exercise: str) -> bool:
    """Whether ``exercise``'s submissions run (its spec names a module); True when it is not installed here."""
    from .. import exercises

    try:
        return bool(exercises.load(exercise).module)
    except Exception:  # noqa: BLE001 - the summary still renders without the spec
        return True


def _points(value: float) -> str:
    return f"{value:g} point{'' if value == 1 else 's'}"


def _kept_apart(isolation: str) -> str:
    """One line for students on how their code ran, from a result's ``isolation`` (no internals)."""
    if isolation.startswith(CONTAINER):
        return ("Your code ran in a throwaway container of its own, in a separate process with CPU, memory and "
                "time limits; it never ran inside the grader.")
    if isolation.startswith("bubblewrap"):
        return ("Your code ran in a sandbox: a separate process with no network, a read-only system and CPU, "
                "memory and time limits; it never ran inside the grader.")
    return "Your code ran in a separate process with CPU, memory and time limits; it never ran inside the grader."


# ------------------------------------------------------------------------------ tags
@functools.lru_cache(maxsize=8)
def contract_names(exercise: str) -> tuple[str, ...]:
    """The names a submission of ``exercise`` defines, then its files: the top-level functions and
    classes of the skeleton's Python files (``softmax``, ``multi_head_attention``, ``Block``, ...),
    then the exercise's files (``attention.py``). Empty when the exercise is not installed here."""
    from .. import exercises

    try:
        ex = exercises.load(exercise)
    except Exception:  # noqa: BLE001 - tags are a convenience; a result still renders without them
        return ()
    names = []
    for path in sorted(ex.skeleton.glob("*.py")):
        try:
            tree = ast.parse(path.read_bytes())
        except (OSError, SyntaxError, ValueError):
            continue
        names += [node.name for node in tree.body if isinstance(node, (ast.FunctionDef, ast.ClassDef))
                  and not node.name.startswith("_")]
    return tuple(names) + tuple(ex.files)


def check_tags(check: str, contract: tuple[str, ...]) -> list[str]:
    """The tag of a check (Gradescope's ``tags``): the function or class of ``contract`` that the check's
    name (``test_`` and its ``[case]`` dropped) starts with, as itself, by its initials or by its last
    word, the longest first: ``test_layer_norm_matches_torch`` -> ``layer_norm``, ``test_mha_parity[...]``
    -> ``multi_head_attention``, ``test_block_shape`` -> ``transformer_block``, ``test_block_prenorm`` ->
    ``Block``; or the file whose stem it starts with (``test_report_file`` -> ``report.md``). A check of
    none in particular (the module loads, its imports) gets the exercise's first file
    (``attention.py``); without a contract, the first word of the name."""
    stem = check.split("[", 1)[0].removeprefix("test_")
    aliases = []
    for name in contract:
        if "." in name:  # a file, by its stem: test_report_file -> report.md
            aliases.append((name.rsplit(".", 1)[0].lower(), name))
            continue
        snake = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", name).lower()
        words = snake.split("_")
        aliases += [(snake, name)] + ([("".join(w[0] for w in words), name), (words[-1], name)] if len(words) > 1 else [])
    for alias, name in sorted(aliases, key=lambda pair: -len(pair[0])):
        if stem == alias or stem.startswith(alias + "_"):
            return [name]
    files = [name for name in contract if "." in name]
    return [files[0] if files else stem.split("_")[0]]
