"""Exercise 4, public checks: the ones you can read.

Your ``model.py`` runs in the sandbox only to build your model and export it with ``torch.export``
(``exercises/exercise4/harness.py``). The exported graphs are what is graded: the structure checks, the
gradient flow and the four re-training runs all run them in a separate process that never imports your
module, with the grader's own training loop, optimiser, data and seeds. The graph that is checked is the
graph that is trained. The hidden checks repeat the structure checks on more shapes.

Checks marked ``slow`` re-train your model (four runs, the grader's settings); ``grade exercise4
--quick`` leaves them out.
"""
import math

import numpy as np
import pytest

from exercises.exercise4.tests.checks import (GATES, LESSON_NUMBERS, MODE_WORDS, REPORT, SPEC, TEMPLATE, check_block,
                                              check_gpt, describe_run, export_gpt, grad_batch, plots, read_report,
                                              record, run_label, reference, reference_gpt, settings, trained_enough,
                                              verified_run)
from exercises.exercise4.tests import report_md
from grader.plugin import CheckFailure
from grader.rubric import structure
from grader.sandbox import SubmissionError
from grader.static import parse

CONFIG_FIELDS = {"n_layer": None, "d_model": None, "n_heads": None, "n_ctx": None, "vocab_size": None,
                 "residual": True, "prenorm": True}

#: The skeleton's block parameters (state_dict names).
BLOCK_PARAMS = {"ln1.weight", "ln1.bias", "attn.c_attn.weight", "attn.c_attn.bias", "attn.c_proj.weight",
                "attn.c_proj.bias", "ln2.weight", "ln2.bias", "mlp.c_fc.weight", "mlp.c_fc.bias", "mlp.c_proj.weight",
                "mlp.c_proj.bias"}
#: The modes the re-training runs use.
TRAINED_MODES = ("prenorm", "no-residual", "postnorm")


# ---------------------------------------------------------------------------------------- gates

@pytest.mark.check(points=0, hint="Run `python model.py` yourself to see the error.")
def test_model_loads(submission):
    """model.py parses and imports without error."""
    path = submission.path / "model.py"
    if path.is_file():
        try:
            parse(path)
        except SyntaxError as exc:
            raise CheckFailure(f"model.py has a syntax error on line {exc.lineno}: {exc.msg}.")
    submission.has("describe")  # imports model.py in the sandbox: raises SubmissionError with the import error


@pytest.mark.check(points=0, depends=["test_model_loads"],
                   hint="Keep the skeleton's names: Config and its fields, Block with ln1, attn, ln2, mlp, and GPT.")
def test_contract(submission):
    """Config, Block and GPT keep the skeleton's names, so the grader can load weights into them."""
    info = submission.describe(settings.model_config())
    if not isinstance(info, dict) or not all(isinstance(info.get(k), dict) and all(isinstance(n, str) for n in info[k])
                                             for k in ("config_defaults", "block_params")):
        raise CheckFailure("The harness could not describe your model.")
    problems = []
    defaults = info.get("config_defaults", {})
    for name, default in CONFIG_FIELDS.items():
        if name not in defaults:
            problems.append(f"Config has no field {name}")
        elif default is not None and defaults[name] is not default:
            problems.append(f"Config.{name} should default to {default} (got {defaults[name]!r})")
    want = BLOCK_PARAMS
    got = set(info.get("block_params", {}))
    if got != want:
        if want - got:
            problems.append(f"Block lacks {', '.join(sorted(want - got))}")
        if got - want:
            problems.append(f"Block has {', '.join(sorted(got - want))}, which the skeleton's block does not")
    if info.get("gpt_blocks") != settings.MODEL["n_layer"]:
        problems.append(f"GPT(Config(n_layer={settings.MODEL['n_layer']})) holds {info.get('gpt_blocks')} Block "
                        f"modules, not {settings.MODEL['n_layer']}")
    if problems:
        raise CheckFailure("; ".join(problems) + ".")


@pytest.mark.check(points=0, hint="Start from skeleton/report.md: the table of the four runs, then ## Explanation.")
def test_report_file(submission):
    """report.md is there."""
    path = submission.path / REPORT
    if path.is_symlink() or not path.is_file():
        raise CheckFailure("There is no report.md in your folder (hand in the file itself, not a link).")


# ---------------------------------------------------------------------------------------- structure (fast)
# One shape per mode here; the hidden checks add more (one head, T = 1, d_model 48, inputs x100).

@pytest.mark.check(points=2, depends=GATES,
                   hint="Pre-norm: x = x + attn(ln1(x)); x = x + mlp(ln2(x)). The residual adds to x, not to ln1(x).")
def test_block_prenorm(submission, clean, rng):
    """Block with residual=True, prenorm=True matches the reference pre-norm block (float64, 1e-6; output and
    gradient, training and eval mode)."""
    check_block(submission, clean, rng, "prenorm", B=2, T=7, d=32, h=4)


@pytest.mark.check(points=2, depends=GATES,
                   hint="Without residuals each sub-layer's output replaces x: x = attn(ln1(x)); x = mlp(ln2(x)).")
def test_block_no_residual(submission, clean, rng):
    """Block with residual=False, prenorm=True matches the reference block without residuals."""
    check_block(submission, clean, rng, "no-residual", B=2, T=7, d=32, h=4)


@pytest.mark.check(points=2, depends=GATES,
                   hint="Post-norm normalises after the addition: x = ln1(x + attn(x)); x = ln2(x + mlp(x)).")
def test_block_postnorm(submission, clean, rng):
    """Block with residual=True, prenorm=False matches the reference post-norm block."""
    check_block(submission, clean, rng, "postnorm", B=2, T=7, d=32, h=4)


@pytest.mark.check(points=2, depends=GATES,
                   hint="Both switches off: x = ln1(attn(x)); x = ln2(mlp(x)).")
def test_block_postnorm_no_residual(submission, clean, rng):
    """Block with residual=False, prenorm=False matches the reference post-norm block without residuals."""
    check_block(submission, clean, rng, "postnorm-no-residual", B=2, T=7, d=32, h=4)


# ---------------------------------------------------------------------------------------- the model that is trained

@pytest.mark.check(points=0, depends=GATES,
                   hint="Write forward with tensor operations only: no Python branch on a tensor's value, no .item(), "
                        "NumPy or printing inside forward, no state kept between calls.")
def test_export(submission, exports, request):
    """Your GPT exports with torch.export in every trained mode, as a graph the grader can run."""
    for mode in TRAINED_MODES:
        export_gpt(exports, submission, mode)
    record(request, "Exported in training and eval mode: " + ", ".join(MODE_WORDS[m] for m in TRAINED_MODES) + ".")


def _gpt_check(mode: str):
    def check(submission, clean, exports, rng, request):
        check_gpt(submission, clean, exports, rng, mode, request)

    name = f"test_gpt_{mode.replace('-', '_')}"
    check.__name__ = check.__qualname__ = name
    check.__doc__ = (f"GPT({MODE_WORDS[mode]}), exported as the grader trains it, equals the reference GPT "
                     "(logits and gradients, training and eval mode).")
    return pytest.mark.check(
        points=0, depends=GATES,
        hint="The re-training checks train exactly this graph: it must be the skeleton's GPT around your Block, "
             "the same in training and eval mode, with nothing hidden from autograd.")(check)


for _mode in TRAINED_MODES:
    globals()[f"test_gpt_{_mode.replace('-', '_')}"] = _gpt_check(_mode)
del _mode

# ---------------------------------------------------------------------------------------- gradient flow (fast)

@pytest.mark.check(points=3, depends=["test_gpt_prenorm", "test_gpt_no_residual"],
                   hint="With residual=False each block's output must replace its input; check that GPT builds "
                        "its blocks from the config it is given.")
def test_gradient_flow(submission, clean, exports, request):
    """At initialisation, the gradient reaching the first block is orders of magnitude smaller without residuals."""
    x, y = grad_batch()
    profiles, problems = {}, []
    for label, (residual, prenorm) in (("pre-norm, residuals", (True, True)), ("no residuals", (False, True)),
                                       ("post-norm, residuals", (True, False))):
        mode = settings.mode_of(residual, prenorm)
        try:
            ex = export_gpt(exports, submission, mode)
        except (SubmissionError, CheckFailure):
            if mode == "postnorm":
                continue  # shown for comparison only: its own checks report the failure
            raise
        if reference is not None:  # the judge: the reference GPT with the model's initial weights, which the
            gpt = reference_gpt(mode, ex["state"])  # GPT checks found equal to the exported graph
            blocks = reference.grad_flow(gpt, x, y) if gpt is not None else None
        else:  # a student's bundle: measured on the exported graph itself
            out = clean.call(submission, "grad_flow", ex["train"], ex["state"], x, y, settings.MODEL["n_layer"])
            blocks = out.get("blocks") if isinstance(out, dict) else None
        if blocks is None:
            raise CheckFailure(f"The grader could not find where each block of the {label} model gets its input "
                               "in the exported graph: keep GPT's loop `for block in self.h: x = block(x)`.")
        if not isinstance(blocks, list) or len(blocks) != settings.MODEL["n_layer"] or not all(
                isinstance(v, float) and math.isfinite(v) for v in blocks):
            raise CheckFailure(f"The gradient of the {label} model could not be measured "
                               f"(got {str(blocks)[:200]}).")
        profiles[label] = blocks
    res, nores = profiles["pre-norm, residuals"], profiles["no residuals"]
    details = {"plot": plots.grad_flow_spec(profiles), "profiles": profiles}
    ratio = res[0] / nores[0] if nores[0] > 0 else math.inf
    if not res[0] >= settings.GRAD_FLAT_MIN * res[-1]:
        problems.append(f"with residuals the gradient at the first block ({res[0]:.3g}) should be about as large as "
                        f"at the last ({res[-1]:.3g}), at least {settings.GRAD_FLAT_MIN:g} times it")
    if not nores[0] <= settings.GRAD_VANISH_MAX * nores[-1]:
        problems.append(f"without residuals the gradient at the first block ({nores[0]:.3g}) should be far below the "
                        f"last block's ({nores[-1]:.3g}), at most {settings.GRAD_VANISH_MAX:g} times it")
    if not ratio >= settings.GRAD_RATIO_MIN:
        problems.append(f"the first block's gradient with residuals is only {ratio:.3g} times the one without "
                        f"(at least {settings.GRAD_RATIO_MIN:g} expected)")
    summary = (f"gradient at the first block: {res[0]:.3g} with residuals, {nores[0]:.3g} without "
               f"({ratio:.3g} times smaller)")
    if problems:
        same = np.allclose(res, nores, rtol=1e-6)
        raise CheckFailure("; ".join(problems) + f" ({summary}).",
                           "The residual switch is ignored: the model without residuals has exactly the gradients "
                           "of the model with them." if same else "", details)
    record(request, summary + ".", details)


# ---------------------------------------------------------------------------------------- ablation by re-training (slow)

@pytest.mark.slow
@pytest.mark.check(points=3, depends=["test_gpt_prenorm"],
                   hint="If your block matches the reference, look at GPT: does it use the config's switches and "
                        "the skeleton's initialisation?")
def test_prenorm_learns(submission, runs, exports, request):
    """Re-trained by the grader, pre-norm with residuals gets clearly below the unigram level U."""
    U = settings.unigram_loss()
    run = verified_run(runs.get(exports, submission, "prenorm"), "prenorm")
    limit = U - settings.PRENORM_BELOW
    text = (f"validation loss after {settings.TRAIN['steps']} steps at lr {settings.LR_LOW:g}: {describe_run(run)}; "
            f"U = {U:.3f}; needed <= {limit:.3f}")
    if run["diverged"] or not run["val_loss"] <= limit:
        raise CheckFailure(text + ".")
    record(request, text + ".")


@pytest.mark.slow
@pytest.mark.check(points=3, depends=["test_gpt_no_residual"],
                   hint="With residual=False, GPT's blocks must use the switch: check that GPT passes its config to "
                        "every Block.")
def test_no_residual_stays_at_unigram(submission, runs, exports, request):
    """Re-trained by the grader, the model without residuals stays near the unigram level U."""
    U = settings.unigram_loss()
    run = verified_run(runs.get(exports, submission, "no-residual"), "no-residual")
    limit = U - settings.STUCK_WITHIN
    text = (f"validation loss after {settings.TRAIN['steps']} steps at lr {settings.LR_LOW:g}: {describe_run(run)} "
            f"(from {run['val_start']:.3f} before training); U = {U:.3f}; expected >= {limit:.3f}")
    if run["diverged"]:
        raise CheckFailure(text + ": it should stay near U, not blow up.")
    if not trained_enough(run):
        raise CheckFailure(text + f": the loss did not come down from where it started by at least "
                                  f"{settings.MOVED_MIN:g}, so the run shows no training, not the unigram level.")
    if not run["val_loss"] >= limit:
        raise CheckFailure(text + ": it learned well below letter frequencies, so the residual switch does not "
                                  "remove the residuals in the model that is trained.",
                           "The residual switch has no effect on the trained GPT (its blocks keep their residuals).")
    record(request, text + ".")


@pytest.mark.slow
@pytest.mark.check(points=3, depends=["test_gpt_prenorm", "test_gpt_postnorm"],
                   hint="Post-norm must fail at the high rate where pre-norm learns; if both learn, check that "
                        "GPT passes prenorm to every Block.")
def test_postnorm_fails_at_high_lr(submission, runs, exports, request):
    """At the high learning rate, post-norm fails where pre-norm at the same rate learns (no warm-up)."""
    U = settings.unigram_loss()
    pre = verified_run(runs.get(exports, submission, "prenorm-high-lr"), "prenorm-high-lr")
    post = verified_run(runs.get(exports, submission, "postnorm-high-lr"), "postnorm-high-lr")
    lr = settings.LR_HIGH
    pre_limit, post_limit = U - settings.HIGH_LR_PRENORM_BELOW, U - settings.STUCK_WITHIN
    text = (f"at lr {lr:g}: pre-norm {describe_run(pre)} (needed <= {pre_limit:.3f}), post-norm {describe_run(post)} "
            f"(expected >= {post_limit:.3f}, or diverged); U = {U:.3f}")
    problems = []
    if pre["diverged"] or not pre["val_loss"] <= pre_limit:
        problems.append("pre-norm did not learn at the high rate")
    if not post["diverged"]:
        if not trained_enough(post):
            problems.append(f"post-norm did not train (its loss started at {post['val_start']:.3f} and moved by less "
                            f"than {settings.MOVED_MIN:g})")
        elif not post["val_loss"] >= post_limit:
            problems.append("post-norm learned at the high rate")
        elif not pre["diverged"] and not post["val_loss"] - pre["val_loss"] >= settings.HIGH_LR_GAP:
            problems.append(f"post-norm is less than {settings.HIGH_LR_GAP:g} nats above pre-norm")
    if problems:
        diagnosis = ("The prenorm switch has no effect on the trained GPT (post-norm trains like pre-norm)."
                     if not pre["diverged"] and not post["diverged"] and abs(post["val_loss"] - pre["val_loss"]) < 1e-6
                     else "")
        raise CheckFailure("; ".join(problems) + f" ({text}).", diagnosis)
    record(request, text + ".")


@pytest.mark.slow
@pytest.mark.check(points=3, depends=["test_export", "test_report_file"],
                   hint="Copy the numbers `python model.py` prints (it trains the four runs with the grader's "
                        "settings) into the table of report.md.")
def test_report_numbers_match_rerun(submission, runs, exports, request):
    """The validation losses in report.md agree with the grader's re-run of your model."""
    report = read_report(submission)
    if report.problems:
        raise CheckFailure("The table of report.md could not be read: " + "; ".join(report.problems) + ".")
    rows, off = [], []
    for name in settings.RUNS:
        run = runs.get(exports, submission, name)
        reported = report.numbers[name]
        tol = settings.REPORT_TOLERANCE[name]
        if run["diverged"]:
            ok = not math.isfinite(reported)  # "diverged" / "nan" in the table
        else:
            ok = abs(reported - run["val_loss"]) <= tol
        rows.append({"run": name, "reported": reported, "rerun": None if run["diverged"] else run["val_loss"],
                     "tolerance": tol, "agrees": ok})
        if not ok:
            off.append(f"{name}: reported {reported:g}, re-run {describe_run(run)} (allowed difference {tol:g})")
    details = {"report_vs_rerun": rows}
    if off:
        lesson = all(abs(report.numbers[n] - v) < 0.011 for n, v in LESSON_NUMBERS.items())
        diagnosis = ("These are the lesson's numbers (800 steps, other data), not a run of your model under the "
                     "grader's settings." if lesson else
                     "The report's numbers do not come from your model under the grader's settings (made up, or "
                     "from other settings or an older version of the model).")
        details["needs_review"] = ["report numbers differ from the grader's re-run: " + "; ".join(off)]
        raise CheckFailure("Flagged: " + "; ".join(off) + ".", diagnosis, details)
    record(request, "; ".join(f"{r['run']}: {r['reported']:g} vs {r['rerun']:.3f}" for r in rows if r["rerun"]) + ".",
           details)


@pytest.mark.slow
@pytest.mark.check(points=0, depends=GATES)
def test_loss_curves(submission, runs, request):
    """The training-loss curves of the grader's re-runs, on one plot (for the report)."""
    made = runs.made
    if not made:
        pytest.skip("no re-training run was made")
    curves = {run_label(name): made[name]["curve"] for name in settings.RUNS if name in made}
    losses = {name: (None if r["diverged"] else round(r["val_loss"], 4)) for name, r in made.items()}
    checkpoints = {run_label(name): made[name]["checkpoints"] for name in settings.RUNS if name in made}
    record(request, "; ".join(f"{n}: {v}" for n, v in losses.items()) + ".",
           {"plot": plots.loss_curves_spec(curves, settings.unigram_loss(), checkpoints=checkpoints),
            "val_loss": losses, "checkpoints": checkpoints,
            "seconds": {n: round(r["seconds"], 1) for n, r in made.items()}})


# ---------------------------------------------------------------------------------------- the explanation (fast)
# Its form only: what it says is graded by the hidden checks (tests/hidden/explanation.py, one per concept).

@pytest.mark.check(points=0, depends=["test_report_file"],
                   hint="Keep the ## Explanation heading of skeleton/report.md and replace its comment with your "
                        f"own text (about {SPEC.suggested[0]}-{SPEC.suggested[1]} words).")
def test_explanation_written(submission, request):
    """report.md has its ## Explanation section, in your own words (its content is graded when your work is graded)."""
    text = (submission.path / REPORT).read_bytes()[:report_md.MAX_BYTES].decode("utf-8", errors="replace")
    missing = structure.unanswered(text, TEMPLATE.read_text(encoding="utf-8"), SPEC)
    if missing:
        raise CheckFailure("Not written yet: " + "; ".join(missing) + ".")
    record(request, "The explanation is there; what it says is graded with the hidden checks.")
