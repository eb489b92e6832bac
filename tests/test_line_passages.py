"""Whether a line is read from the many ways students say it, on passages labelled before the grader read them
(issue 11).

bench/line_passages.py grades each labelled passage of tests/prose/lines inside a neutral answer. Dev files (tuned
on) and held-out files (written by other writers who never saw the rubric; never tuned on) are held to a little under
what was measured, so that a rule change that stops reading a wording students use, or credits near misses, fails
here.
"""
from __future__ import annotations

import pytest
from conftest import bench_module
bench = bench_module("line_passages")

#: Per file: (fewest earning passages credited, most near misses credited). Measured on 2026-12-07. At arrival
#: (1036bff): dev_ex1 62 of 96 and 2 of 32; dev_ex4 91 of 120 and 9 of 40; heldout_ex1 60 of 96 and 2 of 32;
#: heldout_ex4 96 of 120 and 10 of 40. After the dev-tuned rules of exercise 4: dev_ex4 112 and 7, heldout_ex4 105
#: and 8; of exercise 1: dev_ex1 84 and 2, heldout_ex1 65 and 2. A second round (three more writers), at arrival: dev2_ex1
#: 71 of 96 and 6 of 32 (65 and 6 under 1036bff's rules), dev2_ex4 45 of 72 and 4 of 24 (42 and 7), heldout2_ex1 60 of
#: 96 and 2 of 32 (54 and 2). After exercise 4's rules were tuned on dev2_ex4: dev2_ex4 63 and 4, heldout_ex4 108 and 8;
#: after exercise 1's were tuned on dev2_ex1: dev2_ex1 85 and 4, heldout_ex1 68 and 2, heldout2_ex1 63 and 1. After a
#: review's near misses were excluded (tests/test_line_near_misses.py): dev_ex1 84 and 2, dev2_ex1 82 and 3, dev2_ex4
#: 61 and 4, heldout_ex1 65 and 2, heldout2_ex1 62 and 1, heldout_ex4 108 and 8.
#: A third round, at arrival (102a0cb): dev3_ex1 72 of 96 and 4 of 32 (68 and 4 under 1036bff's rules), heldout3_ex1
#: 72 of 96 and 4 of 32 (63 and 4). After exercise 1's rules were tuned on dev3_ex1: dev3_ex1 86 and 2, heldout_ex1 68
#: and 2, heldout2_ex1 67 and 1, heldout3_ex1 77 and 4; after a second review's near misses were excluded: dev3_ex1 85
#: and 3, heldout_ex1 67 and 2, heldout2_ex1 65 and 1, heldout3_ex1 76 and 4.
#: A fourth round for exercise 1's weakest lines (analogy_mapped, analogy_limits, cost_one_head, stacked; two writers,
#: 2026-12-07, a brief of twelve styles and labelled near misses), at arrival (003046c): dev5_ex1 72 of 96 and 0 of 32,
#: heldout4_ex1 58 of 96 and 0 of 32. After cost_one_head and stacked were tuned on dev5_ex1 (costly, multiplications,
#: the block below it, a loop or formula of blocks): dev5_ex1 81, heldout4_ex1 61, heldout2_ex1 66, heldout3_ex1 76;
#: after analogy_limits was (a flaw, roles not received, whichever roles, a by-product of the loss): dev5_ex1 85,
#: dev_ex1 85, the held-out sets unchanged. The same brief for exercise 4 (gradient_path, whole_signal, unigram_level,
#: postnorm_in_gradient_path; two more writers), at arrival (dab0766): dev5_ex4 72 of 96 and 8 of 32, heldout3_ex4 67 of
#: 96 and 5 of 32. After a possibility ("it could be that ...") was read as doubt and a clean path "still" there as no
#: post-norm path: dev5_ex4 72 and 6, heldout3_ex4 67 and 4. (The plural "additions" as gradient_path's first piece
#: reached 3 more dev5_ex4 passages and 1 held-out, but only raised four nonsense answers' scores, and was left out.)
#: After whole_signal's wordings of dev5_ex4 (what one block drops the later ones never see, the signal surviving every
#: rewrite, "the plain version"): dev5_ex4 75 and 6; no held-out file changed.
LIMITS = {"dev_ex1_lines": (82, 3), "dev_ex4_lines": (110, 8), "dev2_ex1_lines": (81, 4), "dev2_ex4_lines": (59, 5),
          "dev3_ex1_lines": (83, 4), "heldout_ex1_lines": (65, 3), "heldout_ex4_lines": (105, 9),
          "heldout2_ex1_lines": (63, 2), "heldout3_ex1_lines": (74, 5), "dev3_ex4_lines": (78, 6), "dev4_ex4_lines": (78, 6),
          "heldout2_ex4_lines": (71, 10), "dev5_ex1_lines": (83, 2), "heldout4_ex1_lines": (59, 2),
          "dev5_ex4_lines": (73, 7), "heldout3_ex4_lines": (65, 5)}


@pytest.fixture(scope="module", params=sorted(LIMITS))
def judged(request):
    return request.param, bench.judge_file(bench.PASSAGES / f"{request.param}.toml")


def test_every_passage_file_is_held_to_a_limit():
    assert sorted(p.stem for p in bench.files()) == sorted(LIMITS)


def test_earning_passages_are_credited(judged):
    name, rows = judged
    assert sum(r.credited for r in rows if r.earns) >= LIMITS[name][0]


def test_near_misses_are_seldom_credited(judged):
    name, rows = judged
    assert sum(r.credited for r in rows if not r.earns) <= LIMITS[name][1]


def test_each_file_has_both_kinds_for_every_line(judged):
    _, rows = judged
    for line, (n, _, m, _) in bench.summary(rows).items():
        assert n >= 20 and m >= 6, line


def test_the_neutral_answers_earn_no_line():
    assert bench._neutral_lines("exercise1") == frozenset()
    assert bench._neutral_lines("exercise4") == frozenset()


def test_a_passage_is_graded_by_its_own_words():
    assert bench.credited("unigram_level", "Without residuals the model only learns letter frequencies, so its loss "
                                           "stays at U.")
    assert not bench.credited("unigram_level", "Without residuals the loss stays at 3.3.")
    with pytest.raises(KeyError):
        bench.credited("no_such_line", "Anything.")
