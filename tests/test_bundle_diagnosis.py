"""In the student bundle, every known-wrong exercise-3 submission fails a public check and is told why.

The bundle has no reference and no variants (``grader release``): its public checks compare with stored
cases, name the single mistakes stored with them, and otherwise show the behavioural probes' findings
(issue 10: "in the student bundle every exercise-3 corpus case gets a finding or a name"). Each corpus
case is graded inside a freshly built bundle, in one process that imports the bundle's grader only.

A name is wrong when a failing check names a known mistake that is not the case's own: the case's
``expected.toml`` ``diagnosis`` substring, written by hand. A case that commits two mistakes (pairs are
not stored) may be named there by one of its own two sentences, never by a third.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from conftest import ROOT
from test_corpus import ALSO_NAMED, _allowed_names, is_name

from grader import corpus, release

#: Grades each folder given on the command line with the bundle's own grader; one JSON line per folder.
SCRIPT = """
import json, sys
from pathlib import Path
from grader import exercises, judge
with judge.Judge(exercises.load("exercise3")) as session:
    for folder in sys.argv[1:]:
        result = session.grade(Path(folder), seed=1234)
        print(json.dumps({"folder": folder, "checks": [
            {"name": c.name, "status": c.status, "points": c.points, "max_points": c.max_points,
             "diagnosis": c.diagnosis} for c in result.checks]}))
"""


@pytest.fixture(scope="module")
def bundle_grades(tmp_path_factory):
    """Every exercise-3 corpus case graded in the bundle: case name -> its checks (dicts)."""
    out = tmp_path_factory.mktemp("bundle") / "students"
    release.build(out, ["exercise3"])
    assert not (out / "exercises" / "exercise3" / "tests" / "reference.py").exists()
    assert not (out / "exercises" / "exercise3" / "tests" / "hidden").exists()
    cases = corpus.cases("exercise3")
    env = {k: v for k, v in os.environ.items() if k not in ("GRADER_COURSE_ROOT", "PYTHONPATH")}
    env["PYTHONPATH"] = str(out)
    run = subprocess.run([sys.executable, "-c", SCRIPT, *(str(c.folder) for c in cases)], cwd=out, env=env,
                         capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr[-3000:]
    graded = [json.loads(line) for line in run.stdout.splitlines() if line.startswith("{")]
    by_folder = {g["folder"]: g["checks"] for g in graded}
    return {c.name: by_folder[str(c.folder)] for c in cases}


CASES = corpus.cases("exercise3")


def test_the_bundle_grades_in_its_own_grader(bundle_grades):
    """The script ran the bundle's checks (public only: no hidden check names)."""
    names = {c["name"].split("[")[0] for checks in bundle_grades.values() for c in checks}
    assert "test_mha_matches_torch_small" in names and "test_mha_parity" not in names


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_every_case_loses_public_points_and_is_told_why(bundle_grades, case):
    checks = bundle_grades[case.name]
    lost = [c for c in checks if c["max_points"] > 0 and c["points"] < c["max_points"]]
    if case.full_marks:  # right within the tolerance (e.g. a constant rounded to 2e-8)
        assert not lost, f"{case.name} should keep every point"
        return
    assert lost, f"{case.name} keeps every public point"
    failed = [c for c in checks if c["status"] != "passed"]
    gates = {"test_module_loads", "test_uses_only_numpy", "test_contract_signatures"}
    # A forbidden import fails a gate with its own message; every other case gets a name or a finding.
    if not any(c["name"] in gates for c in failed):
        assert [c for c in failed if c["diagnosis"]], f"{case.name}: no public check names a mistake or finds one"


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_no_public_check_names_another_mistake(bundle_grades, case):
    """Names (the tables' sentences, stored with the cases; layout slips) must be the case's own; a pair
    is not stored, so a two-mistake case may be named by one of its two sentences, never a third."""
    allowed, also = _allowed_names(case), ALSO_NAMED.get(case.name, ())
    also = (*also, *case.diagnoses)
    wrong = sorted({c["diagnosis"] for c in bundle_grades[case.name]
                    if is_name(c["diagnosis"]) and c["diagnosis"] not in allowed
                    and not any(a.lower() in c["diagnosis"].lower() for a in also)})
    assert wrong == []
    if case.unnamed:
        assert not [c for c in bundle_grades[case.name] if is_name(c["diagnosis"])]
