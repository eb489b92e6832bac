"""The student release holds no solution or hidden-test content, and `grade` works inside it.

Exercise 4's bundle ships no reference block and no calibration: its structure checks compare with
stored cases (``exercises/exercise4/tests/cases/``), which :func:`make_block_cases` writes from the
reference block on the judge side. Rewrite them (after a change of the reference or of the case
format) with::

    .venv/bin/python tests/test_release.py --write-block-cases
"""
import ast
import json
import os
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import numpy as np
import pytest

from conftest import ROOT
from grader import exercises, release


@pytest.fixture(scope="module")
def bundle(tmp_path_factory):
    out = tmp_path_factory.mktemp("release") / "students"
    release.build(out)
    return out


def _released_files(bundle):
    return [p for p in bundle.rglob("*") if p.is_file()]


def test_no_solution_or_hidden_file_is_shipped(bundle):
    paths = [p.relative_to(bundle).as_posix() for p in _released_files(bundle)]
    assert not [p for p in paths if p.startswith(("solutions/", "tests/")) or "/hidden/" in p]
    # Mistake variants spell out the right computation (variant with no mistake): judge side only.
    assert not [p for p in paths if p.endswith("mistakes.py")]
    secret = [p for p in (ROOT / "solutions").rglob("*") if p.is_file()]
    secret += [p for name in exercises.available() for p in (ROOT / "exercises" / name / "tests" / "hidden").rglob("*")
               if p.is_file() and "__pycache__" not in p.parts]
    assert secret, "nothing to check against"
    shipped = {p.read_bytes() for p in _released_files(bundle)}
    assert not [p for p in secret if p.read_bytes() in shipped]


def test_no_line_unique_to_a_solution_is_shipped(bundle):
    """Lines of a reference solution that its skeleton does not share must appear nowhere."""
    text = "\n".join(p.read_text(errors="replace") for p in _released_files(bundle) if p.suffix in (".py", ".md", ".toml"))
    for name in exercises.available():
        solution, skeleton = ROOT / "solutions" / name, exercises.load(name).skeleton
        for path in solution.rglob("*"):
            if not path.is_file() or "__pycache__" in path.parts:
                continue
            twin = skeleton / path.relative_to(solution)
            shared = set(twin.read_text().splitlines()) if twin.is_file() else set()
            unique = [ln.strip() for ln in path.read_text().splitlines()
                      if len(ln.strip()) >= 30 and ln not in shared and not ln.strip().startswith(("#", '"""'))]
            leaked = [ln for ln in unique if ln in text]
            assert not leaked, f"{path.relative_to(ROOT)} leaks: {leaked[:3]}"


def test_grade_works_in_the_release_on_public_checks(bundle, tmp_path):
    env = {k: v for k, v in os.environ.items() if k != "GRADER_COURSE_ROOT"}
    env["PYTHONPATH"] = str(bundle)
    run = [sys.executable, "-c", "from grader.cli import grade_shortcut; grade_shortcut()", "exercise3"]
    skeleton = subprocess.run(run, cwd=bundle, env=env, capture_output=True, text=True, timeout=120)
    assert "exercise3: 0 / 9.5 points" in skeleton.stdout, skeleton.stdout + skeleton.stderr
    assert "Hidden tests are not available here" in skeleton.stdout
    work = bundle / "exercise3" / "attention.py"
    try:
        shutil.copy(ROOT / "solutions" / "exercise3" / "attention.py", work)
        solved = subprocess.run(run, cwd=bundle, env=env, capture_output=True, text=True, timeout=120)
        assert "exercise3: 9.5 / 9.5 points" in solved.stdout, solved.stdout + solved.stderr
        assert solved.returncode == 0
        assert (bundle / "reports" / "exercise3.html").is_file()
    finally:  # the bundle is shared by this module's tests: the leak checks must see the student's skeleton again
        shutil.copy(exercises.load("exercise3").skeleton / "attention.py", work)


# --------------------------------------------------------------------------------------------- the rubrics

#: The written answers' rubrics (judge-only): their patterns would tell which words earn a point.
RUBRICS = [ROOT / "exercises" / name / "rubric.toml" for name in ("exercise1", "exercise4")]
#: The checks `grade exercise1` runs in the bundle: the answer's form only (exercises/exercise1/tests/public).
EX1_FORM_CHECKS = ["test_answer_file", "test_questions_answered", "test_answer_length", "test_written_in_sentences",
                   "test_written_in_english", "test_content_is_graded"]


def _rubric_strings(path: Path) -> list[str]:
    """Every regular expression a rubric holds, as written: each evidence entry's ``all``, ``unless``,
    ``unless_near``, ``about`` and ``rivals`` (lines and misconceptions), and every ``[terms]`` value."""
    data = tomllib.loads(path.read_text(encoding="utf-8"))
    out = [str(v) for v in data.get("terms", {}).values()]
    for entry in data.get("line", []) + data.get("misconception", []):
        for ev in entry.get("evidence", []):
            out += ev["all"] + ev.get("unless", []) + ev.get("unless_near", [])
            out += [ev[k] for k in ("about", "rivals") if k in ev]
    return out


def test_no_rubric_and_no_rubric_pattern_is_shipped(bundle):
    """No rubric.toml in the bundle, and no shipped file (any text, the grader's code too) holds any pattern or
    term of either rubric. The rule is checked on the rubric files themselves: it finds every string there."""
    shipped = [p.relative_to(bundle).as_posix() for p in _released_files(bundle)]
    assert [p for p in shipped if p.endswith("rubric.toml")] == []
    strings = {}
    for path in RUBRICS:
        found = _rubric_strings(path)
        text = path.read_text(encoding="utf-8")
        assert len(found) >= 20 and all(s in text for s in found), path  # the rule reads the rubric as written
        strings.update({s: path.parent.name for s in found})
    leaked = []
    for path in _released_files(bundle):
        text = path.read_bytes().decode("utf-8", errors="replace")
        leaked += [f"{path.relative_to(bundle)}: {strings[s]} {s!r}" for s in strings if s in text]
    assert leaked == []


def test_judge_only_files_stay_with_the_judge(bundle):
    for name, kept in release.JUDGE_ONLY.items():
        for rel in kept:
            if (ROOT / "exercises" / name / rel).exists():
                assert not (bundle / "exercises" / name / rel).exists(), f"exercises/{name}/{rel} is in the bundle"
    assert "rubric.toml" in release.JUDGE_ONLY["exercise1"] and "rubric.toml" in release.JUDGE_ONLY["exercise4"]
    # the learned error model's weights would say which words sound like a known mistake
    assert "error_model.json" in release.JUDGE_ONLY["exercise1"]
    assert (ROOT / "exercises/exercise1/error_model.json").is_file()


def _grade_text(bundle, exercise: str) -> str:
    env = {k: v for k, v in os.environ.items() if k != "GRADER_COURSE_ROOT"}
    env["PYTHONPATH"] = str(bundle)
    run = subprocess.run([sys.executable, "-c", "from grader.cli import grade_shortcut; grade_shortcut()", exercise],
                         cwd=bundle, env=env, capture_output=True, text=True, timeout=120)
    return run.stdout + run.stderr


def test_exercise1_grades_its_form_only_in_the_release(bundle):
    """`grade exercise1` in the bundle: the form checks only (0 points each), on the skeleton and on the reference
    answer, and the student is told that the content is graded when the work is graded."""
    work = bundle / "exercise1" / "answer.md"
    later = "not run in your copy: what answer.md says is graded when your work is graded"
    try:
        skeleton = _grade_in_bundle(bundle, "exercise1")
        assert [c["name"] for c in skeleton["checks"]] == EX1_FORM_CHECKS
        assert (skeleton["score"], skeleton["max_score"]) == (0, 0)
        status = {c["name"]: c["status"] for c in skeleton["checks"]}
        assert status == {"test_answer_file": "passed", "test_questions_answered": "failed",
                          "test_answer_length": "failed", "test_written_in_sentences": "failed",
                          "test_written_in_english": "passed", "test_content_is_graded": "skipped"}
        text = _grade_text(bundle, "exercise1")
        assert "exercise1: form checks only (0 points here" in text and later in text, text
        assert "has no answer of your own" in text and "The answer is empty" in text
        shutil.copy(ROOT / "solutions" / "exercise1" / "answer.md", work)
        solved = _grade_in_bundle(bundle, "exercise1")
        assert [c["name"] for c in solved["checks"]] == EX1_FORM_CHECKS
        assert {c["name"]: c["status"] for c in solved["checks"]} == dict(
            {n: "passed" for n in EX1_FORM_CHECKS}, test_content_is_graded="skipped")
        assert not [c for c in solved["checks"] if c["name"].startswith("test_no_")]
        text = _grade_text(bundle, "exercise1")
        assert later in text and "PASS  5 other check(s) passed" in text, text
    finally:
        shutil.copy(ROOT / "exercises" / "exercise1" / "skeleton" / "answer.md", work)


# --------------------------------------------------------------------------------------------- exercise 2

EX2 = ROOT / "exercises" / "exercise2"


def _exercise2_hidden_counts() -> dict[str, int]:
    """What the hidden checks of exercise 2 compare with that a student could copy, from the torch reference:
    the lesson's counts (the constants, their attention and MLP parts, GPT-2 small tied and untied)."""
    sys.path.insert(0, str(ROOT))
    from exercises.exercise2.tests import reference

    lesson, gpt2 = reference.LESSON_BLOCK, reference.GPT2_SMALL
    block = reference.build_block(**lesson)
    return {"attention": reference.count(block.attn), "MLP": reference.count(block.mlp),
            "bare block": reference.block_count(**lesson),
            "block with biases and norms": reference.block_count(**lesson, bias=True, layer_norm=True),
            "GPT-2 small": reference.gpt_count(**gpt2), "GPT-2 untied": reference.gpt_count(**dict(gpt2, tied=False))}


#: The hidden MLP_SHARE (2/3) as a decimal or as a fraction of the lesson's terms, and the bare block's count
#: as the lesson writes it (12·d², 12 * 768 ** 2).
EX2_WRITTEN_OUT = re.compile(r"0\.66[67]|(?<![\d.])(8\s*/\s*12|2\s*/\s*3)(?![\d.])"
                           r"|(?<![\d.])12\s*[*·]\s*(768|d)(\s*\*\*\s*2|²|\s*\*\s*768)")


def test_exercise2_ships_no_reference_and_no_hidden_number(bundle):
    """No torch reference (it prints every hidden count), no formula of a mistake, and no hidden count in any
    shipped text file, its digits with their separators taken out (7,077,888 and 7_077_888 are 7077888);
    no exercise 2 file writes the MLP share or the bare block's count as an expression."""
    shipped = bundle / "exercises" / "exercise2"
    assert (EX2 / "tests" / "reference.py").is_file(), "the reference is gone from the judge side: update this test"
    assert not (shipped / "tests" / "reference.py").exists()
    assert {p.name for p in (shipped / "tests").rglob("*.py")} == {"checks.py", "properties.py", "test_derive_public.py"}
    assert (shipped / "tests" / "stored_counts.toml").is_file()
    counts = _exercise2_hidden_counts()
    assert counts["bare block"] == 7_077_888  # the lesson's number: the rule below looks for the right thing
    found = []
    for path in _released_files(bundle):
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue
        digits = re.sub(r"(?<=\d)[_,](?=\d)", "", text)
        rel = path.relative_to(bundle).as_posix()
        found += [f"{rel}: {name}" for name, count in counts.items() if str(count) in digits]
        if "exercise2" in rel and EX2_WRITTEN_OUT.search(text):
            found.append(f"{rel}: a hidden value written out ({EX2_WRITTEN_OUT.search(text).group()})")
    assert not found, found


def test_exercise2_grades_in_the_release_on_stored_counts_and_properties(bundle):
    """In the bundle (no reference, no mistakes' formulas): the skeleton gets 0 / 3 and the solution 3 / 3 from
    the stored counts; a wrong count gets the properties its function breaks, and a likely mistake only when
    it was measured (the count changes with n_heads), never a formula's name."""
    work = bundle / "exercise2" / "derive.py"
    corpus = ROOT / "tests" / "corpus" / "exercise2"
    try:
        skeleton = _grade_in_bundle(bundle, "exercise2")
        assert (skeleton["score"], skeleton["max_score"]) == (0, 3), skeleton
        assert not [c for c in skeleton["checks"] if c["status"] == "error"]
        shutil.copy(corpus / "no_out_proj" / "derive.py", work)
        wrong = _grade_in_bundle(bundle, "exercise2")
        failed = {c["name"]: c for c in wrong["checks"] if c["status"] != "passed"}
        assert set(failed) == {"test_block_params_small", "test_block_params_small_with_bias_and_ln",
                               "test_gpt_params_small[tied]", "test_gpt_params_small[untied]"}
        # d_model 40, by hand: the bare block less the MLP's 2·4·1,600 leaves 3·1,600 for the attention.
        assert "leaves 4,800 for the attention (d_model=40)" in failed["test_block_params_small"]["feedback"]
        assert not [c for c in failed.values() if c["diagnosis"]]
        shutil.copy(corpus / "heads_vary" / "derive.py", work)
        heads = _grade_in_bundle(bundle, "exercise2")
        diagnoses = {c["diagnosis"] for c in heads["checks"] if c["status"] != "passed"}
        assert diagnoses == {"your count changes with n_heads, but the number of heads does not change the count: "
                             "the heads split d_model into n_heads slices of d_model / n_heads, so W_Q, W_K, W_V "
                             "and W_O stay d_model x d_model in total"}, diagnoses
        shutil.copy(ROOT / "solutions" / "exercise2" / "derive.py", work)
        solved = _grade_in_bundle(bundle, "exercise2")
        assert (solved["score"], solved["max_score"]) == (3, 3), solved
    finally:
        shutil.copy(EX2 / "skeleton" / "derive.py", work)


# --------------------------------------------------------------------------------------------- exercise 4

EX4 = ROOT / "exercises" / "exercise4"
#: Exercise 4's files that implement the modes or hold the re-run's values: judge side only.
EX4_JUDGE_ONLY = ("tests/reference.py", "CALIBRATION.md", "calibrate.py", "calibration", "tests/hidden")
#: Shipped Python files allowed to branch on both switches: the skeleton (and its working copy), whose
#: Block is where the student writes the modes.
SKELETON_MODELS = {"exercises/exercise4/skeleton/model.py", "exercise4/model.py"}
#: A decimal number written with at least two decimals, not part of a version ("2.13.0") or a longer number.
DECIMAL = re.compile(r"(?<![\d.])\d+\.\d{2,}(?![\d]|\.\d)")


def test_exercise4_ships_no_reference_and_no_calibration(bundle):
    shipped = bundle / "exercises" / "exercise4"
    assert (shipped / "tests" / "checks.py").is_file() and (shipped / "README.md").is_file()
    for rel in EX4_JUDGE_ONLY:
        assert (EX4 / rel).exists(), f"{rel} is gone from the judge side: update this test"
        assert not (shipped / rel).exists(), f"exercises/exercise4/{rel} is in the bundle"
    paths = [p.relative_to(bundle).as_posix() for p in _released_files(bundle)]
    assert not [p for p in paths if p.endswith(("reference.py", "mistakes.py")) and "exercise4" in p]
    assert not [p for p in paths if "calibrat" in p.lower()]
    # What replaces the reference there: the stored cases of the public shape, loaded by cases.py.
    assert (shipped / "tests" / "cases.py").is_file()
    assert [p.name for p in (shipped / "tests" / "cases").iterdir()] == ["block_B2_T7_d32_h4.npz"]


def _secret_intervals() -> dict[str, tuple[float, float]]:
    """Run -> the interval of numbers the report check accepts for it, for the runs whose re-run value is
    not already given away by U (the documented unigram level): a report number v passes when
    |v - re-run| <= REPORT_TOLERANCE. The re-run values are the reference solution's report (a real run
    under the grader's settings; test_exercise4 checks it against the calibration)."""
    from exercises.exercise4.tests import report_md, settings

    rerun = report_md.read(ROOT / "solutions" / "exercise4" / "report.md").numbers
    U = settings.unigram_loss()
    return {name: (value - settings.REPORT_TOLERANCE[name], value + settings.REPORT_TOLERANCE[name])
            for name, value in rerun.items() if abs(value - U) > settings.REPORT_TOLERANCE[name]}


def test_no_shipped_text_holds_a_number_that_passes_the_report_check(bundle):
    """No shipped text file contains a number the report check would accept for a run U does not give away.

    The rule: every decimal written with at least two decimals (``2.47``, ``2.851``; not ``2.5``, not a
    version such as ``2.13.0``) in every shipped file that is UTF-8 text is compared with the intervals of
    :func:`_secret_intervals` -- today pre-norm 2.473 +- 0.05 and prenorm-high-lr 2.866 +- 0.2, i.e.
    2.423-2.523 and 2.666-3.066. One-decimal numbers are left alone (too coarse to be copied into a
    three-decimal table, and common in prose: "2.5 s"). The two runs that end at the unigram level
    (no-residual, postnorm-high-lr) are not checked: U = 3.290 is published, and passes them anyway.
    """
    intervals = _secret_intervals()
    assert set(intervals) == {"prenorm", "prenorm-high-lr"}, intervals
    found = []
    for path in _released_files(bundle):
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue  # binary (the stored cases)
        rel = path.relative_to(bundle).as_posix()
        for match in DECIMAL.finditer(text):
            value = float(match.group())
            hits = [run for run, (lo, hi) in intervals.items() if lo <= value <= hi]
            if hits:
                line = text.count("\n", 0, match.start()) + 1
                found.append(f"{rel}:{line}: {match.group()} (passes {', '.join(hits)})")
    assert not found, "shipped numbers within the report tolerance of a re-run value:\n" + "\n".join(found)


def _switches_read(test: ast.AST) -> set[str]:
    """``residual``/``prenorm`` read in ``test`` as a name or an attribute (``self.prenorm``)."""
    names = {n.id for n in ast.walk(test) if isinstance(n, ast.Name)}
    names |= {n.attr for n in ast.walk(test) if isinstance(n, ast.Attribute)}
    return names & {"residual", "prenorm"}


def functions_branching_on_both_switches(source: str) -> list[str]:
    """Functions of ``source`` that branch (``if``, ``while``, conditional expression) on ``residual`` in one
    place and on ``prenorm`` in another (or the same): the shape of an implementation of the four modes."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            tests = [n.test for n in ast.walk(node) if isinstance(n, (ast.If, ast.IfExp, ast.While))]
            if set().union(*map(_switches_read, tests)) == {"residual", "prenorm"}:
                found.append(f"{node.name} (line {node.lineno})")
    return found


def test_the_rule_for_implementations_finds_the_judges_implementations():
    """The rule of the next test flags each file that implements the modes on the judge side."""
    for path in (EX4 / "tests" / "reference.py", EX4 / "tests" / "hidden" / "mistakes.py",
                 ROOT / "solutions" / "exercise4" / "model.py"):
        assert functions_branching_on_both_switches(path.read_text()), path


def test_no_shipped_code_implements_the_modes(bundle):
    """No shipped Python file but the skeleton's model.py implements the four modes of the block.

    The files that do on the judge side are absent (tests/reference.py, tests/hidden/mistakes.py,
    solutions/: the tests above). Beyond them the rule is structural: no function in a shipped ``.py``
    branches on both ``residual`` and ``prenorm`` (an ``if``, ``while`` or conditional expression whose
    condition reads them, as names or attributes), and no shipped file of exercise 4 names the
    reference's classes. The grader's own exercise 4 code passes the switches on (``block_config``) or
    keys tables by mode id without branching on them, so the rule cannot fail on the legitimate bundle.
    It does not prove that nothing computes the modes (a table of functions would not branch); what it
    catches is the reference's and the solution's form (test above).
    """
    found = []
    for path in _released_files(bundle):
        rel = path.relative_to(bundle).as_posix()
        if path.suffix != ".py" or rel in SKELETON_MODELS:
            continue
        source = path.read_text(encoding="utf-8")
        found += [f"{rel}: {f}" for f in functions_branching_on_both_switches(source)]
        if "exercise4" in rel and re.search(r"\bReference(Block|GPT)\b", source):
            found.append(f"{rel}: names the reference's classes")
    assert not found, found


def _grade_in_bundle(bundle, exercise: str, *options: str) -> dict:
    """``grade EXERCISE --json OPTIONS`` run inside ``bundle`` as a student runs it (a new process, the
    bundle's grader and exercises first on the path); the JSON result."""
    env = {k: v for k, v in os.environ.items() if k != "GRADER_COURSE_ROOT"}
    env["PYTHONPATH"] = str(bundle)
    run = subprocess.run([sys.executable, "-c", "from grader.cli import grade_shortcut; grade_shortcut()", exercise,
                          "--json", *options], cwd=bundle, env=env, capture_output=True, text=True, timeout=300)
    assert run.stdout.strip(), run.stderr
    return json.loads(run.stdout)


def test_exercise4_grades_in_the_release_without_the_reference(bundle):
    """In the bundle (no reference block), quick mode: the skeleton gets zero, the solution full marks, a
    known slip fails its mode's check only, and no check is a grader error."""
    work = bundle / "exercise4"
    try:
        skeleton = _grade_in_bundle(bundle, "exercise4", "--quick")
        assert skeleton["score"] == 0 and not [c for c in skeleton["checks"] if c["status"] == "error"], skeleton
        shutil.rmtree(work)
        shutil.copytree(ROOT / "solutions" / "exercise4", work)
        solved = _grade_in_bundle(bundle, "exercise4", "--quick")
        assert [c["name"] for c in solved["checks"] if c["status"] != "passed"] == [], solved
        assert solved["score"] == solved["max_score"] > 0
        shutil.copy(ROOT / "tests" / "corpus" / "exercise4" / "postnorm_inside_branch" / "model.py", work / "model.py")
        slip = _grade_in_bundle(bundle, "exercise4", "--quick")
        failed = [c for c in slip["checks"] if c["status"] != "passed"]
        assert [c["name"] for c in failed] == ["test_block_postnorm"], slip
        assert "ln2(ln1(x))" in failed[0]["feedback"]  # the zeroed-sub-layer probe's finding
    finally:
        shutil.rmtree(work, ignore_errors=True)
        shutil.copytree(exercises.load("exercise4").skeleton, work)


# ---- the stored cases: written on the judge side from the reference (this file; nothing of it ships)

#: Seed of the stored cases' random weights and inputs (any fixed number: the cases are data).
BLOCK_CASE_SEED = 4_2024


def reference_block_case(mode: str, weights: dict, x: np.ndarray, cotangent: np.ndarray, n_heads: int):
    """The reference block's answer for these inputs: a :class:`cases.BlockCase` with ``weights``, ``x`` and
    ``cotangent`` as given and the float64 output (eval mode) and gradients of ``sum(out * cotangent)``
    (``"x"``: the input's) computed from their float64 values."""
    import torch

    from exercises.exercise4.tests import cases, reference, settings

    residual, prenorm = settings.MODES[mode]
    block = reference.ReferenceBlock(x.shape[-1], n_heads, residual, prenorm)
    inverse = {v: k for k, v in reference.NAME_MAP.items()}
    block.load_state_dict({inverse[k]: torch.from_numpy(np.asarray(v, dtype=np.float64)) for k, v in weights.items()})
    out, grads, x_grad = reference.run_with_grad(block.eval(), np.asarray(x, dtype=np.float64),
                                                 np.asarray(cotangent, dtype=np.float64))
    return cases.BlockCase(weights=weights, x=x, out=out, cotangent=cotangent, grads={**grads, "x": x_grad})


def make_block_cases(shape: tuple, seed: int = BLOCK_CASE_SEED) -> dict:
    """The stored cases of block ``shape`` (B, T, d_model, n_heads), by mode: the reference's random
    weights (``reference.random_block``), x and a cotangent (as the judge draws them), rounded to float32
    so the file stores them exactly in half the space, and the reference's float64 answers for them."""
    import torch

    from exercises.exercise4.tests import checks, reference, settings

    B, T, d, h = shape
    generator, rng = torch.Generator().manual_seed(seed), np.random.default_rng(seed)
    made = {}
    for mode, (residual, prenorm) in settings.MODES.items():
        block = reference.random_block(d, h, generator, residual, prenorm)
        weights = {k: v.astype(np.float32) for k, v in reference.student_state(block).items()}
        x = checks.draw_x(rng, B, T, d).astype(np.float32)
        cotangent = rng.standard_normal((B, T, d)).astype(np.float32)
        made[mode] = reference_block_case(mode, weights, x, cotangent, h)
    return made


def write_block_cases() -> list[Path]:
    """Write every stored case file of ``cases.BLOCK_CASES`` (judge side; run by hand, see the module's doc)."""
    from exercises.exercise4.tests import cases

    written = []
    for shape, path in cases.BLOCK_CASES.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        np.savez_compressed(path, **cases.pack(make_block_cases(shape)))
        written.append(path)
    return written


def test_stored_block_cases_are_what_the_reference_gives():
    """Each stored case holds the reference block's output and gradients for its stored inputs (recomputed
    now, to 1e-12), for every mode and the skeleton's parameters, with weights that hide no bug."""
    from exercises.exercise4.tests import cases, settings

    assert list(cases.BLOCK_CASES) == [(2, 7, 32, 4)]  # the public checks' shape (test_model_public.py)
    for shape, path in cases.BLOCK_CASES.items():
        assert path.is_file(), f"run: .venv/bin/python tests/test_release.py --write-block-cases"
        stored = cases.stored_cases(shape)
        assert set(stored) == set(settings.MODES)
        B, T, d, h = shape
        for mode, case in stored.items():
            assert {k: v.shape for k, v in case.weights.items()} == cases.block_shapes(d)
            assert case.x.shape == case.cotangent.shape == case.out.shape == (B, T, d)
            assert abs(case.weights["ln1.weight"] - 1).min() > 0 and abs(case.weights["mlp.c_proj.bias"]).min() > 0
            want = reference_block_case(mode, case.weights, case.x, case.cotangent, h)
            np.testing.assert_allclose(case.out, want.out, rtol=0, atol=1e-12, err_msg=mode)
            assert set(case.grads) == set(want.grads) == set(cases.block_shapes(d)) | {"x"}
            for name, grad in case.grads.items():
                np.testing.assert_allclose(grad, want.grads[name], rtol=0, atol=1e-12, err_msg=f"{mode} {name}")
        assert path.stat().st_size < 1_000_000


if __name__ == "__main__":
    if sys.argv[1:] != ["--write-block-cases"]:
        sys.exit(f"usage: {sys.argv[0]} --write-block-cases")
    sys.path.insert(0, str(ROOT))
    for written in write_block_cases():
        print(f"wrote {written.relative_to(ROOT)} ({written.stat().st_size:,} bytes)")


def test_a_repository_made_from_the_bundle_commits_no_report_or_cache(bundle, tmp_path):
    """A student repository (GitHub Classroom) made from the bundle: after a grade, git sees only the
    student's work, not the report, grade.json, the venv or Python's caches."""
    repo = tmp_path / "repo"
    shutil.copytree(bundle, repo)
    for junk in ("reports/exercise3.html", "grade.json", ".venv/bin/python", "exercise3/__pycache__/a.pyc",
                 "transformer_lesson_grader.egg-info/PKG-INFO"):
        (repo / junk).parent.mkdir(parents=True, exist_ok=True)
        (repo / junk).write_text("x")
    (repo / "exercise3" / "attention.py").write_text("# my work\n")
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    shown = subprocess.run(["git", "-C", str(repo), "status", "--porcelain", "--untracked-files=all"],
                           capture_output=True, text=True, check=True).stdout.split("\n")
    paths = {line[3:] for line in shown if line}
    assert "exercise3/attention.py" in paths and ".gitignore" in paths
    assert not [p for p in paths if p.startswith(("reports/", ".venv/", "transformer_lesson_grader.egg-info"))
                or p in ("grade.json",) or "__pycache__" in p]


def test_no_shipped_file_outside_the_exercises_is_named_like_a_submission_file(bundle):
    """A student repository made from the bundle is searched for the exercise's files (grader/lms/unpack.py's
    locate): a grader module named ``attention.py`` would be taken for the work when exercise3/ is gone."""
    required = {name for ex in exercises.available() for name in exercises.load(ex).files}
    clash = [p.relative_to(bundle).as_posix() for p in _released_files(bundle)
             if p.name in required and p.relative_to(bundle).parts[0] == "grader"]
    assert clash == []
