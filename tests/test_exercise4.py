"""Exercise 4 (break the block): corpus, calibration settings, report reading, rubric, and grading.

Most tests are fast: they use the quick mode (no re-training) or no sandbox at all. One grading
re-trains (four runs): the fabricated report, whose model is the reference solution's, so it shows both
that the reference passes the ablation and that made-up numbers are flagged. Everything else about
re-training is covered by CALIBRATION.md (measured over five seeds by exercises/exercise4/calibrate.py).
"""
from __future__ import annotations

import hashlib
import json
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
import torch
from conftest import ROOT

from grader import corpus, exercises, report

EX4 = ROOT / "exercises" / "exercise4"
SOLUTION = ROOT / "solutions" / "exercise4"
CASES = {c.name: c for c in corpus.cases("exercise4")}
SEED = 1234

sys.path.insert(0, str(ROOT))
from exercises.exercise4.tests import plots, reference, report_md, settings  # noqa: E402
from exercises.exercise4.tests.hidden import mistakes  # noqa: E402


# --------------------------------------------------------------------------------------------- grading

@pytest.fixture(scope="session")
def exercise4():
    return exercises.load("exercise4")


@pytest.fixture(scope="session")
def grade4(exercise4):
    """Grade a folder on exercise 4 (``quick``: without the re-training checks), once per folder and mode."""
    from grader import judge

    done = {}

    def run(folder: Path, *, quick: bool):
        key = (str(folder), quick)
        if key not in done:
            done[key] = judge.grade(exercise4, Path(folder), seed=SEED, quick=quick)
        return done[key]

    return run


def _show(result) -> str:
    return "\n".join(f"  {c.status:7} {c.name}: {c.diagnosis[:70]!r} | {c.feedback[:160]}"
                     for c in result.checks if c.status != "passed")


# --------------------------------------------------------------------------------------------- the corpus

def test_corpus_file_is_the_documented_one():
    data = settings.DATA.read_bytes()
    assert hashlib.sha256(data).hexdigest() == settings.DATA_SHA256
    assert settings.DATA_SHA256 in (EX4 / "data" / "DATA.md").read_text()
    text = data.decode("ascii")
    assert len(text) == 1_115_394 and "\r" not in text


def test_split_vocabulary_and_unigram_level_are_the_documented_ones():
    train, val, chars = settings.corpus()
    assert (len(train), len(val), len(chars)) == (1_003_854, 111_540, 80)
    assert set(np.unique(val)) - set(np.unique(train)) == {chars.index(d) for d in "6789"}
    # U from the definition, with plain Python (not the vectorised code under test).
    counts = {i: 1 for i in range(len(chars))}
    for i in train.tolist():
        counts[i] += 1
    total = sum(counts.values())
    targets = [int(t) for s in settings.eval_starts(len(val)) for t in val[s + 1:s + 33]]
    U = -sum(np.log(counts[t] / total) for t in targets) / len(targets)
    assert settings.unigram_loss() == pytest.approx(U, abs=1e-12)
    assert round(U, 3) == 3.290 and round(settings.unigram_entropy(), 3) == 3.305
    for doc in (EX4 / "data" / "DATA.md", EX4 / "README.md"):
        assert "3.290" in doc.read_text()


# --------------------------------------------------------------------------------------------- settings in step

def _module_constants(path: Path) -> dict:
    """GRADER and RUNS from a model.py, read without importing it."""
    source = path.read_text()
    namespace: dict = {}
    for name in ("GRADER", "RUNS"):
        match = re.search(rf"^{name} = .*?^[)\]]\n", source, re.S | re.M)
        exec(match.group(0), namespace)  # noqa: S102 - our own skeleton's literal constants
    return namespace


@pytest.mark.parametrize("path", [EX4 / "skeleton" / "model.py", SOLUTION / "model.py"], ids=["skeleton", "solution"])
def test_students_training_settings_are_the_graders(path):
    c = _module_constants(path)
    assert c["GRADER"] == dict(steps=settings.TRAIN["steps"], batch_size=settings.TRAIN["batch_size"],
                               lr_low=settings.LR_LOW, lr_high=settings.LR_HIGH,
                               weight_decay=settings.TRAIN["weight_decay"], seed=settings.SEED,
                               eval_windows=settings.EVAL_WINDOWS)
    assert [(n, r, p, c["GRADER"][lr]) for n, r, p, lr in c["RUNS"]] == [(n, *v) for n, v in settings.RUNS.items()]


def test_skeleton_differs_from_solution_only_in_the_block():
    skeleton = (EX4 / "skeleton" / "model.py").read_text().splitlines()
    solution = (SOLUTION / "model.py").read_text().splitlines()

    def outside_block(lines):
        start = next(i for i, line in enumerate(lines) if line.startswith("class Block"))
        end = next(i for i, line in enumerate(lines) if line.startswith("class GPT"))
        return lines[1:start] + lines[end:]  # line 0 is the title

    assert outside_block(skeleton) == outside_block(solution)


def test_students_training_loop_agrees_with_the_graph_rerun():
    """The solution's eager train() and estimate_loss() (what `python model.py` runs; the skeleton's are the
    same) agree with the clean process's trainer on the harness's exported graph: same start, same curve, same
    weights and validation loss after a short run. Not bit for bit: the graph runs the same ATen calls op by
    op, but nothing promises the last bits on every CPU: within 1e-4, which holds on any machine at 20 steps
    of the steady learning rate (CALIBRATION.md, "Reproducing the re-run")."""
    script = textwrap.dedent(f"""
        import sys, json
        sys.path[:0] = [{str(SOLUTION)!r}, {str(EX4)!r}, {str(ROOT)!r}]
        import numpy as np, torch, harness, trainer, model
        from exercises.exercise4.tests import settings
        steps, lr, b = 20, 1e-3, settings.TRAIN["batch_size"]
        train, val, chars = model.load_corpus()
        cfg = settings.model_config(True, True)
        ex = harness.export_gpt(cfg, settings.SEED, b)
        start = trainer.start_run("t", ex["train"], ex["eval"], ex["state"], *settings.corpus()[:2],
                                  settings.eval_starts(len(val)), lr=lr, seed=settings.SEED, batch_size=b,
                                  weight_decay=settings.TRAIN["weight_decay"], n_ctx=settings.MODEL["n_ctx"])
        graph = trainer.train_steps("t", steps)
        final = trainer.checkpoint("t", True)
        torch.manual_seed(settings.SEED)
        net = model.GPT(model.Config(vocab_size=len(chars), residual=True, prenorm=True))
        ours_start = model.estimate_loss(net, val)
        curve = model.train(net, train, steps, lr)
        ours = model.estimate_loss(net, val)
        params = dict(net.named_parameters())
        same_names = sorted(params) == sorted(final["weights"])
        weights = max(float(np.abs(p.detach().numpy() - final["weights"][n]).max()) for n, p in params.items()
                      if n in final["weights"])
        print(json.dumps([curve, graph["curve"], ours_start, start["val_loss"], ours, final["val_loss"],
                          same_names, weights]))
    """)
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr[-2000:]
    ours_curve, graph_curve, ours_start, graph_start, ours_val, graph_val, same_names, weights = json.loads(
        out.stdout.strip().splitlines()[-1])
    assert len(ours_curve) == len(graph_curve) == 20
    assert ours_curve[0] > ours_curve[-1] + 0.3, "the short run trains"
    assert np.abs(np.array(ours_curve) - np.array(graph_curve)).max() <= 1e-4, (ours_curve, graph_curve)
    assert same_names and weights <= 1e-4
    assert ours_start == pytest.approx(graph_start, abs=1e-4)
    assert ours_val == pytest.approx(graph_val, abs=1e-4)


# --------------------------------------------------------------------------------------------- reference and mistakes

@pytest.mark.parametrize("mode", list(reference.MODES))
def test_every_applicable_mistake_is_distinguishable_from_the_truth(mode):
    """On the public check's shape, each known wrong block gives a different output than the right one, so
    a submission that makes it fails and can be named; and no two mistakes are confused."""
    residual, prenorm = reference.MODES[mode]
    block = reference.random_block(32, 4, torch.Generator().manual_seed(1), residual, prenorm)
    x = 0.3 + 1.7 * np.random.default_rng(1).standard_normal((2, 7, 32))
    truth = reference.run(block, x)
    outs = {k: m.compute() for k, m in mistakes.block_mistakes(block, x).items()}
    assert outs, "every mode has known mistakes"
    for key, out in outs.items():
        assert np.abs(out - truth).max() > 1e-3, key
    keys = list(outs)
    for i, a in enumerate(keys):
        for b in keys[i + 1:]:
            assert np.abs(outs[a] - outs[b]).max() > 1e-3, (a, b)


def test_reference_gpt_evaluates_student_weights_like_the_students_gpt():
    import importlib.util

    spec = importlib.util.spec_from_file_location("ex4_solution_model", SOLUTION / "model.py")
    model = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = model  # dataclasses look their module up
    spec.loader.exec_module(model)
    cfg = dict(settings.model_config(True, False), n_layer=2)
    torch.manual_seed(0)
    net = model.GPT(model.Config(**cfg)).eval()
    state = {k: p.detach().numpy().copy() for k, p in net.named_parameters(remove_duplicate=False)}
    gpt = reference.load_student_gpt(cfg, state)
    idx = torch.randint(0, cfg["vocab_size"], (3, cfg["n_ctx"]))
    with torch.no_grad():
        assert torch.allclose(gpt(idx), net(idx)[0], atol=1e-5)
    del state["lm_head.weight"]
    with pytest.raises(ValueError, match="missing lm_head.weight"):
        reference.load_student_gpt(cfg, state)


# --------------------------------------------------------------------------------------------- the report

def test_report_table_is_read_whatever_students_do_to_it(tmp_path):
    path = tmp_path / "report.md"
    path.write_text(textwrap.dedent("""\
        | Run | residual | prenorm | lr | Val loss (nats) |
        |:--|:-:|:-:|--:|--:|
        | `prenorm` | yes | yes | 1e-3 | **2.473** |
        | no-residual | no | yes | 1e-3 | 3.291 nats |
        |prenorm-high-lr|yes|yes|1.5e-2|2.85|
        | Postnorm-High-LR | yes | no | 0.015 | 3.294 |

        ## Explanation
        <!-- instructions -->
        Words.
        ## Appendix
        Not read.
        """), encoding="utf-8")
    r = report_md.read(path)
    assert r.problems == []
    assert r.numbers == {"prenorm": 2.473, "no-residual": 3.291, "prenorm-high-lr": 2.85, "postnorm-high-lr": 3.294}
    assert r.explanation == "Words."


def test_report_template_has_no_numbers_and_no_explanation():
    r = report_md.read(EX4 / "skeleton" / "report.md")
    assert r.numbers == {} and r.explanation == ""
    assert sorted(r.problems) == sorted(f"no number in the {n} row's validation-loss column" for n in settings.RUNS)


def test_solution_report_holds_the_reruns_numbers():
    """The filled report is a real run under the grader's settings: the calibration's seed-1337 row."""
    numbers = report_md.read(SOLUTION / "report.md").numbers
    table = (EX4 / "CALIBRATION.md").read_text()
    row = next(line.replace("*", "") for line in table.splitlines() if line.replace("*", "").startswith(f"| {settings.SEED} |"))
    measured = [float(v) for v in row.strip("|").split("|")[1:5]]
    assert [numbers[n] for n in settings.RUNS] == pytest.approx(measured, abs=5e-4)


# --------------------------------------------------------------------------------------------- rubric and plots

def test_rubric_reads_only_the_explanation_and_gives_the_solution_full_marks():
    from exercises.exercise4.tests.hidden.explanation import RUBRIC, _assess

    a = _assess(report_md.read(SOLUTION / "report.md").explanation, ())
    assert a.total == RUBRIC.max_total and a.problems == []
    empty = _assess(report_md.read(EX4 / "skeleton" / "report.md").explanation, ())
    assert empty.total == 0 and empty.problems


@pytest.mark.parametrize("text, misconception", [
    ("Without residuals the model overfits the training text, which is why its validation loss is so high. ", "no_residual_overfits"),
    ("Residual connections work because they add extra parameters to every block of the model. ", "residual_adds_capacity"),
    ("Post-norm is more stable at a high learning rate, so it should have learned better than pre-norm. ", "postnorm_more_stable"),
    # memorising, tied to the run at U in words ("back up to about U"), not "U (3.29)"
    ("It memorises the training windows, and its validation loss goes back up to about U. ", "no_residual_overfits"),
    ("Without the skip connections the network simply has fewer parameters, so it cannot learn as much. ",
     "residual_adds_capacity"),
    ("Residuals make the model bigger and more expressive, so removing them shrinks what it can represent. ",
     "residual_adds_capacity"),
    ("Post-norm is the safer choice at a high learning rate, since it keeps the stream from growing. ", "postnorm_more_stable"),
    ("At lr = 1e-2, pre-norm diverged and post-norm reached a loss well below 3.29. ", "postnorm_more_stable"),
    ("Extra learnable weights are added by the residual connections, and that is why the model improved. ",
     "residual_adds_capacity"),
    ("The no-residual model is just a smaller model, so of course it only learns letter frequencies. ",
     "residual_adds_capacity"),
])
def test_rubric_names_the_misconceptions(text, misconception):
    from exercises.exercise4.tests.hidden.explanation import _assess

    padding = ("The gradient flows back through the residual stream directly to the first block. "
               "After the change the validation loss stayed at the unigram level, like guessing letter frequencies. "
               "Post-norm puts the layer norm on the residual path, so the gradient must cross it in every block. ")
    a = _assess(padding + text * 2, ())
    assert [m for m, r in a.misconceptions.items() if r.found] == [misconception]


@pytest.mark.parametrize("text", [
    "Post-norm diverged at lr = 1e-2 while pre-norm trained smoothly and reached 2.5. ",
    "Post-norm normalises after the residual add, and that placement is the less stable one at a high rate. ",
    "The residual connections add no parameters: they are a plain addition. ",
    "Residual connections add zero weights, yet the model with them trained far better. ",
    # overfitting named only to be set against the right diagnosis: the training loss is stuck too
    "You might check for overfitting, but the run without residuals sits at 3.29 on both splits. ",
    "Without residuals, train and validation loss both stay at 3.29, so this is not a memorising model. ",
    "The run without residuals looked like overfitting at first, yet its training loss is also 3.29. ",
])
def test_rubric_names_no_error_in_the_right_version(text):
    from exercises.exercise4.tests.hidden.explanation import _assess

    a = _assess(text * 2, ())
    assert [m for m, r in a.misconceptions.items() if r.found] == []


def test_a_dialogue_turn_after_a_short_question_keeps_the_topic():
    # "And in the forward pass?" between two turns does not cut a sentence off from the lesson's topic
    from exercises.exercise4.tests.hidden.explanation import _assess

    turns = ["**Student:** Why does the run without residuals stop at about 3.29?",
             "**Tutor:** Without them the gradient has to go through every block and shrinks at each one. And in the "
             "forward pass?",
             "**Student:** Every block has to pass on the whole signal by itself; nothing goes around it.",
             "**Tutor:** So what can the model still learn?"]
    assert _assess("\n\n".join(turns), ()).lines["whole_signal"].earned


def test_whole_signal_as_all_that_the_next_block_needs():
    from exercises.exercise4.tests.hidden.explanation import _assess

    a = _assess("A plain block without residuals has to compute everything itself, so each block must hand on all "
                "that the next one needs: which character this is and where it is. ", ())
    assert a.lines["whole_signal"].earned
    b = _assess("Each layer must compute all that the next layer needs for its attention scores. ", ())
    assert not b.lines["whole_signal"].earned  # "compute" is no verb of carrying


@pytest.mark.parametrize("sentence, earned", [
    ("Without residuals the best it can do is how often each character occurs, so its loss ends near U = 3.29.", True),
    ("Without residuals the loss ends at the unigram level.", True),
    ("With residuals the model learns from the context and its loss ends far below the unigram level.", False),
    # the prediction without context, and its loss, said in a formula or as a score
    ("Without residuals only the output bias trains, which gives q(c) = p(c) at every position regardless of "
     "context. The cross-entropy of that is H(p) = U = 3.290.", True),
    ("A model that predicts by letter frequency alone scores exactly the unigram loss, so the run parks at U.", True),
    ("Each block must carry the whole signal by itself alone, and the loss of pre-norm ends below the unigram level.",
     False),
])
def test_unigram_level_said_as_where_the_loss_ends(sentence, earned):
    from exercises.exercise4.tests.hidden.explanation import _assess

    assert _assess(sentence, ()).lines["unigram_level"].earned is earned


@pytest.mark.parametrize("sentence, earned", [
    # the gradient in everyday words, crossing a norm in post-norm
    ("In post-norm the LayerNorm comes after the addition; every correction that travels back from the loss to the "
     "lower blocks gets pushed through a LayerNorm at every sub-layer.", True),
    ("Post-norm normalises the stream after each addition, so every path, the short ones included, now runs through "
     "a LayerNorm at every sub-layer.", True),
    ("In pre-norm no path runs through a LayerNorm on the stream.", False),
    ("In post-norm the output passes through a LayerNorm; the feedback from the teacher came back late.", False),
    ("In post-normal science, every path to a decision now runs through a norm.", False),  # not post-norm
])
def test_postnorm_in_the_gradients_path_in_other_words(sentence, earned):
    from exercises.exercise4.tests.hidden.explanation import _assess

    assert _assess(sentence, ()).lines["postnorm_in_gradient_path"].earned is earned


def test_a_counterfactual_without_the_addition_keeps_the_gradients_path():
    from exercises.exercise4.tests.hidden.explanation import _assess

    said = ("Because of the addition in every block, the gradient flows straight back to the first block; without the "
            "addition it would have to go through the weights of every block.")
    assert _assess(said, ()).lines["gradient_path"].earned


@pytest.mark.parametrize("sentence", [
    "Vaswani et al. used a learning rate with warmup = 4000, i.e. a linear ramp.",
    "Vaswani et al. warmed the learning rate up over the first 4000 steps.",
])
def test_warmup_said_of_the_original_transformer_by_its_authors(sentence):
    from exercises.exercise4.tests.hidden.explanation import _assess

    assert _assess(sentence, ()).lines["warmup"].earned


def test_plots_are_drawn_from_their_specs():
    import base64

    spec = plots.loss_curves_spec({"prenorm (lr 0.001)": [4.0, 3.0, float("nan")], "x": [4.0, 3.9, 3.8]}, 3.29)
    json.dumps(spec, allow_nan=False)  # plain JSON: NaN became None
    for s in (spec, plots.grad_flow_spec({"pre": [1.0, 0.9], "no": [1e-9, 0.5]})):
        assert base64.b64decode(report.line_plot_png(s)).startswith(b"\x89PNG")


# --------------------------------------------------------------------------------------------- grading (quick mode)

def test_skeleton_gets_zero_without_crashing(grade4):
    result = grade4(EX4 / "skeleton", quick=True)
    assert result.score == 0 and result.grader_errors == [], _show(result)
    assert sum("not implemented yet" in c.feedback for c in result.checks) >= 5


def test_solution_passes_every_fast_check(grade4):
    result = grade4(SOLUTION, quick=True)
    assert [c.name for c in result.checks if c.status != "passed"] == [], _show(result)
    assert not any(c.name in ("test_prenorm_learns", "test_report_numbers_match_rerun") for c in result.checks)


#: Cases whose model is right: they lose points only on the report check, which needs the re-training runs.
FULL_ONLY = {"fabricated_report", "loss_patched_at_import", "sandbox_aware"}
QUICK_CASES = [n for n in CASES if n not in FULL_ONLY]
#: Diagnoses a case may get besides its own expected one (a mistake shows in several modes).
ALSO_NAMED = {"ignores_switches": ("switch", "Both switches are ignored")}


@pytest.mark.parametrize("name", QUICK_CASES)
def test_known_mistake_is_caught_and_named(grade4, name):
    case = CASES[name]
    result = grade4(case.folder, quick=True)
    problems = corpus.verify(case, result)
    assert problems == [], f"{name} ({case.mistake}):\n" + "\n".join(problems) + "\n" + _show(result)
    allowed = (case.diagnosis, *ALSO_NAMED.get(name, ()))
    wrong = sorted({c.diagnosis for c in result.checks
                    if c.diagnosis and not any(a.lower() in c.diagnosis.lower() for a in allowed if a)})
    assert wrong == []


# --------------------------------------------------------------------------------------------- grading with re-training
# One grading re-trains (the ablation once, as CI may): the fabricated report, whose model is the reference
# solution's. Its re-run numbers then stand for the solution's too (same model.py, same seed, same loop).

def test_fabricated_report_is_flagged_while_the_model_passes_the_ablation(grade4):
    case = CASES["fabricated_report"]
    same = [p.read_text().splitlines()[1:] for p in (case.folder / "model.py", SOLUTION / "model.py")]
    assert same[0] == same[1], "the fabricated case's model is the solution's (but for its title line)"
    result = grade4(case.folder, quick=False)
    assert corpus.verify(case, result) == [], _show(result)
    failed = [c.name for c in result.checks if c.status != "passed"]
    assert failed == ["test_report_numbers_match_rerun"], _show(result)
    assert any("report numbers differ" in r for r in result.needs_review)


def test_report_is_checked_even_when_a_structure_check_fails(grade4):
    """The report check needs only an export: a student whose pre-norm block is wrong still has the table of
    what that model does compared with the re-runs (before, it was skipped and an honest table lost its points).
    Its pre-norm GPT is not the reference, so the training checks that need it are skipped, not failed."""
    case = CASES["residual_from_normalised"]
    result = grade4(case.folder, quick=False)
    assert corpus.verify(case, result) == [], _show(result)
    status = {c.name: c for c in result.checks}
    report = status["test_report_numbers_match_rerun"]
    assert report.status in ("passed", "failed") and "re-run" in report.feedback, _show(result)
    assert [r["run"] for r in report.details["report_vs_rerun"]] == list(settings.RUNS)
    assert all(r["rerun"] is not None and 2.0 < r["rerun"] < 4.5 for r in report.details["report_vs_rerun"])
    assert status["test_prenorm_learns"].status == "skipped"
    assert status["test_no_residual_stays_at_unigram"].status == "passed"


def test_solution_report_agrees_with_the_rerun(grade4):
    """The solution's table agrees with the grader's re-run of the solution's model within the report's
    tolerance of each run (so, with the solution's fast checks passing, the solution gets full marks;
    `grader check-solutions` grades it in full). Not to the last digit: the table was trained on one machine,
    and on another CPU the last bits of the arithmetic differ, which the chaotic prenorm-high-lr run turns
    into a few hundredths (CALIBRATION.md, "Reproducing the re-run": REPORT_TOLERANCE comes from that)."""
    result = grade4(CASES["fabricated_report"].folder, quick=False)
    check = next(c for c in result.checks if c.name == "test_report_numbers_match_rerun")
    rerun = {row["run"]: row["rerun"] for row in check.details["report_vs_rerun"]}
    numbers = report_md.read(SOLUTION / "report.md").numbers
    assert set(rerun) == set(settings.REPORT_TOLERANCE)
    for name, tol in settings.REPORT_TOLERANCE.items():
        assert rerun[name] is not None, f"the re-run {name} diverged"
        assert abs(numbers[name] - rerun[name]) <= tol, (name, numbers[name], rerun[name], tol)


# --------------------------------------------------------------------------------------------- named mistakes: post-norm
# that also normalises before, and the partial skip (its weight fitted to the output)

def _written_out(block, x, step):
    """``x`` through the reference block's sub-layers with ``step(i, t, f, ln) -> t`` (i = 0 attention, 1 MLP),
    written out here rather than with mistakes.py, as a student's block would compute it."""
    with torch.no_grad():
        t = torch.as_tensor(np.asarray(x, dtype=np.float64))
        for i, (f, ln) in enumerate(((block.attend, block.ln1), (block.mlp, block.ln2))):
            t = step(i, t, f, ln)
        return t.numpy().copy()


def _named(block, x, got) -> str:
    from grader.compare import diagnose

    return diagnose(got, reference.run(block, x), mistakes.block_mistakes(block, x, got), atol=1e-6)


@pytest.mark.parametrize("residual", [True, False], ids=["residual", "no_residual"])
def test_postnorm_that_also_normalises_before_is_named(residual):
    block = reference.random_block(32, 4, torch.Generator().manual_seed(5), residual, False)
    x = 0.3 + 1.7 * np.random.default_rng(5).standard_normal((2, 7, 32))
    got = _written_out(block, x, lambda i, t, f, ln: ln(t + f(ln(t))) if residual else ln(f(ln(t))))
    assert _named(block, x, got) == mistakes.MESSAGES["postnorm_also_prenorm"]
    prenorm = reference.random_block(32, 4, torch.Generator().manual_seed(5), residual, True)
    assert "postnorm_also_prenorm" not in mistakes.block_mistakes(prenorm, x, got)


@pytest.mark.parametrize("prenorm", [True, False], ids=["prenorm", "postnorm"])
def test_partial_skip_is_named_with_its_fitted_weight(prenorm):
    """Whatever the weight (either sign, above 1) and the input's scale (x100 flips what the norms see when a
    changes sign, so the fit must not stop at a = 0), the message says the weight the block used."""
    block = reference.random_block(32, 4, torch.Generator().manual_seed(6), False, prenorm)
    rng = np.random.default_rng(6)
    for a, scale in ((0.3, 1.7), (-0.2, 100.0), (2.5, 1.7)):
        x = 0.3 + scale * rng.standard_normal((2, 7, 32))
        got = _written_out(block, x, lambda i, t, f, ln: f(ln(t)) + a * t if prenorm else ln(f(t) + a * t))
        named = _named(block, x, got)
        assert named.startswith("A partial skip connection") and f"with a = {a:.4g} (" in named, (a, scale, named)


def test_partial_skip_is_named_only_where_it_reproduces_the_output():
    """Not for the right output, not for a = 1 (the ignored switch has its own name), not for a skip around one
    sub-layer, not for an output off by more than round-off (a fitted weight explains more than a fixed
    variant), not with residuals, and not without the student's output to fit."""
    block = reference.random_block(32, 4, torch.Generator().manual_seed(7), False, True)
    x = 0.3 + 1.7 * np.random.default_rng(7).standard_normal((2, 7, 32))
    truth = reference.run(block, x)
    assert "partial_skip" not in mistakes.block_mistakes(block, x, truth)
    assert "partial_skip" not in mistakes.block_mistakes(block, x)
    ignored = _written_out(block, x, lambda i, t, f, ln: t + f(ln(t)))
    assert _named(block, x, ignored) == mistakes.MESSAGES["residual_switch_ignored"]
    one = _written_out(block, x, lambda i, t, f, ln: f(ln(t)) + 0.3 * t if i == 0 else f(ln(t)))
    assert _named(block, x, one) == ""
    skip = _written_out(block, x, lambda i, t, f, ln: f(ln(t)) + 0.3 * t)
    assert _named(block, x, skip).startswith("A partial skip connection")
    assert _named(block, x, skip + 1e-8 * np.random.default_rng(8).standard_normal(skip.shape)) == ""
    residual = reference.random_block(32, 4, torch.Generator().manual_seed(7), True, True)
    assert "partial_skip" not in mistakes.block_mistakes(residual, x, skip)


# --------------------------------------------------------------------------------------------- attacks on the grader
# The corpus cases whose model is right where the grader looks: the quick corpus check above cannot see them
# (they keep every fast check's points), so they are graded here.

def test_a_loss_patched_at_import_reaches_neither_the_training_nor_the_numbers(grade4):
    """F.cross_entropy patched in model.py (0.9 x every loss): the model keeps every point, and the re-runs
    are the unpatched model's to the last digit (the fabricated case, the solution's model, graded once per
    session); only the report, which copied the patched numbers, is flagged, with the real ones beside them."""
    case = CASES["loss_patched_at_import"]
    result = grade4(case.folder, quick=False)
    assert corpus.verify(case, result) == [], _show(result)
    assert [c.name for c in result.checks if c.status != "passed"] == ["test_report_numbers_match_rerun"], \
        _show(result)

    def reruns(r):
        check = next(c for c in r.checks if c.name == "test_report_numbers_match_rerun")
        return {row["run"]: row["rerun"] for row in check.details["report_vs_rerun"]}

    patched, honest = reruns(result), reruns(grade4(CASES["fabricated_report"].folder, quick=False))
    assert set(patched) == set(settings.RUNS)
    for name in settings.RUNS:
        assert patched[name] == pytest.approx(honest[name], abs=1e-6), name


def test_a_model_that_recognises_the_sandbox_is_graded_as_exported(grade4, tmp_path):
    """Right in the grader's sandbox, wrong elsewhere: what is graded is what the sandbox exported, so every
    fast check passes (in a full grading the report, from the runs elsewhere, is flagged: expected.toml)."""
    case = CASES["sandbox_aware"]
    result = grade4(case.folder, quick=True)
    assert [c.name for c in result.checks if c.status != "passed"] == [], _show(result)
    script = f"import sys; sys.path.insert(0, {str(case.folder)!r}); import model; print(model._graded())"
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300,
                         cwd=tmp_path, env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)})
    assert out.returncode == 0 and out.stdout.split()[-1] == "False", out.stderr[-2000:]



# --------------------------------------------------------------------------------------------- correct code keeps its points
#: Correct models written the ways students and public code write them (tests/correct/exercise4/NAME/model.py,
#: with the skeleton's empty report): found by grading variants of the solution; each once lost points.
CORRECT = sorted(p.name for p in (ROOT / "tests" / "correct" / "exercise4").iterdir() if p.is_dir())
#: The checks of the model itself (the rubric checks read the report, empty here).
MODEL_CHECKS = ("test_model_loads", "test_contract", "test_block_", "test_export", "test_gpt_", "test_gradient_flow")


@pytest.mark.parametrize("name", CORRECT)
def test_correct_model_written_another_way_loses_no_point(grade4, name):
    result = grade4(ROOT / "tests" / "correct" / "exercise4" / name, quick=True)
    model = [c for c in result.checks if c.name.startswith(MODEL_CHECKS)]
    assert len(model) == 4 + 20 + 1 + 3 + 1 + 2
    assert all(c.status == "passed" for c in model), _show(result)
