"""Shared pieces of exercise 4's checks (judge side, trusted).

The student's torch model runs in the sandbox, driven by the exercise's harness (``harness.py``): the
checks call ``submission.describe``, ``submission.block_forward``, ``submission.grad_flow`` and
``submission.train_run`` and get back arrays, numbers and dicts. Every expected value is computed here:
the reference block's output (tests/reference.py), U from the corpus, and the validation loss of each
re-trained model, evaluated by the judge on the weights the run sends back.
"""
from __future__ import annotations

import contextlib
import functools
from pathlib import Path

import numpy as np
import pytest
import torch

from exercises.exercise4.tests import plots, reference, report_md, settings

try:  # judge side only: the wrong variants spell out the right block, so they are not shipped
    from exercises.exercise4.tests.hidden import mistakes
except ImportError:  # a student's bundle: checks still run, without naming mistakes
    mistakes = None
from grader import rubric
from grader.compare import expect_array
from grader.exercises import course_root
from grader.plugin import CheckFailure
from grader.sandbox import SubmissionError

#: Test functions every behavioural check depends on.
GATES = ["test_model_loads", "test_contract"]
#: Largest allowed absolute error against the reference block in float64 (DESIGN.md).
ATOL = 1e-6
#: Largest difference between the student's trained GPT's logits and the reference GPT's on the same weights
#: (float32; two attention implementations differ by about 1e-5).
PROBE_ATOL = 1e-3
#: The structure check of each mode, by the mode's id (reference.MODES).
MODE_CHECKS = {
    "prenorm": "test_block_prenorm",
    "no-residual": "test_block_no_residual",
    "postnorm": "test_block_postnorm",
    "postnorm-no-residual": "test_block_postnorm_no_residual",
}
#: What the student calls each mode, for messages.
MODE_WORDS = {
    "prenorm": "residual=True, prenorm=True",
    "no-residual": "residual=False, prenorm=True",
    "postnorm": "residual=True, prenorm=False",
    "postnorm-no-residual": "residual=False, prenorm=False",
}


def record(request, feedback: str = "", details: dict | None = None) -> None:
    """Attach feedback and details to a *passing* check (pytest user properties of the item).

    The plugin keeps ``feedback``/``details`` only for failures; lifting these properties into passing
    results is the plugin change exercise 1 asks for too.
    """
    if feedback:
        request.node.user_properties.append(("feedback", feedback))
    if details:
        request.node.user_properties.append(("details", details))


def torch_generator(rng: np.random.Generator) -> torch.Generator:
    """A torch generator seeded from the check's NumPy generator (so the run's seed fixes it)."""
    return torch.Generator().manual_seed(int(rng.integers(2**31)))


def draw_x(rng: np.random.Generator, B: int, T: int, d: int, scale: float = 1.7) -> np.ndarray:
    """(B, T, d) float64 input: N(0.3, scale^2) entries, so never unit-scale or already normalised."""
    return 0.3 + scale * rng.standard_normal((B, T, d))


def block_config(d_model: int, n_heads: int, T: int, residual: bool, prenorm: bool) -> dict:
    """Config fields for a single block of this size (n_layer and vocab_size are not used by a block)."""
    return dict(n_layer=1, d_model=d_model, n_heads=n_heads, n_ctx=max(T, 1), vocab_size=len(settings.corpus()[2]),
                residual=residual, prenorm=prenorm)


def check_block(submission, rng, mode: str, B: int, T: int, d: int, h: int, scale: float = 1.7) -> None:
    """The student's Block in ``mode`` matches the reference block with the same random weights."""
    residual, prenorm = reference.MODES[mode]
    block = reference.random_block(d, h, torch_generator(rng), residual, prenorm)
    x = draw_x(rng, B, T, d, scale)
    got = submission.block_forward(block_config(d, h, T, residual, prenorm), reference.student_state(block), x)
    expect_array(got, reference.run(block, x), atol=ATOL, mistakes=mistakes.block_mistakes(block, x) if mistakes else None,
                 what=f"Block({MODE_WORDS[mode]}) on x of shape {(B, T, d)} with n_heads={h}")


# ---------------------------------------------------------------------------------------- re-training runs

def run_label(name: str) -> str:
    residual, prenorm, lr = settings.RUNS[name]
    return f"{name} (lr {lr:g})"


def get_run(cache: dict, submission, name: str) -> dict:
    """The grader's re-run ``name`` of the student's model (made once per grading, then cached).

    Returns ``{"val_loss": the judge's loss of the returned weights (NaN when the run diverged), "curve",
    "seconds", "diverged"}``. Raises (and caches) the failure: a :class:`SubmissionError` from the sandbox, or a
    :class:`CheckFailure` when what came back does not hold up.
    """
    if name not in cache:
        try:
            cache[name] = _train(submission, name)
        except (SubmissionError, CheckFailure) as exc:
            cache[name] = exc
    value = cache[name]
    if isinstance(value, BaseException):
        raise value
    return value


def _train(submission, name: str) -> dict:
    residual, prenorm, lr = settings.RUNS[name]
    config = settings.model_config(residual, prenorm)
    train, val, _ = settings.corpus()
    probe = settings.probe_ids()
    out = submission.train_run(config, train, probe, lr=lr, seed=settings.SEED, **settings.TRAIN)
    steps = settings.TRAIN["steps"]
    if not isinstance(out, dict) or not isinstance(out.get("curve"), list) or not isinstance(out.get("state"), dict):
        raise CheckFailure(f"The re-run {name} sent back something that is not a training result.")
    curve = [float(v) if isinstance(v, (int, float)) else float("nan") for v in out["curve"][:steps]]
    state = out["state"]
    if not all(isinstance(v, np.ndarray) and v.dtype.kind == "f" for v in state.values()):
        raise CheckFailure(f"The re-run {name} sent back parameters that are not float arrays.")
    # Judged from the weights themselves: a "diverged" flag sent from the sandbox is not trusted.
    diverged = not all(np.isfinite(v).all() for v in state.values())
    seconds = out.get("seconds")
    result = {"curve": curve, "seconds": float(seconds) if isinstance(seconds, (int, float)) else float("nan"),
              "diverged": diverged}
    if diverged:
        result["val_loss"] = float("nan")
        return result
    try:
        gpt = reference.load_student_gpt(config, state)
    except ValueError as exc:
        raise CheckFailure(f"The re-run {name} trained, but {exc}: keep the skeleton's GPT (wte, wpe, h, ln_f, "
                           "a tied lm_head) so the grader can evaluate the trained weights.") from None
    with one_thread():
        expected = reference.logits(gpt, probe)
        val_loss = reference.val_loss(gpt, val, settings.eval_starts(len(val)), settings.MODEL["n_ctx"])
    got = out.get("probe_logits")
    if not isinstance(got, np.ndarray) or got.shape != expected.shape or not np.isfinite(got).all() \
            or np.abs(got - expected).max() > PROBE_ATOL:
        err = (f"max difference {np.abs(got - expected).max():.3g}" if isinstance(got, np.ndarray)
               and got.shape == expected.shape else f"got {getattr(got, 'shape', type(got).__name__)}")
        raise CheckFailure(
            f"The re-run {name}: your trained GPT's logits differ from the reference GPT's on the same weights "
            f"({err}): something outside the blocks differs from the skeleton (embeddings, final layer norm, "
            "tied output layer), so the grader cannot score this model.")
    result["val_loss"] = val_loss
    return result


@contextlib.contextmanager
def one_thread():
    """Run torch on one thread in the judge for a while: on a busy 2-core machine two threads are several
    times slower than one (measured: the judge's evaluation of a trained model took 10.8 s with two threads
    and 1.7 s with one, under load)."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(before)


def describe_run(run: dict) -> str:
    if run["diverged"]:
        return "diverged (the loss became NaN or infinite)"
    return f"{run['val_loss']:.3f}"


# ---------------------------------------------------------------------------------------- gradient flow

def grad_batch() -> tuple[np.ndarray, np.ndarray]:
    """The fixed batch of the gradient-flow check: GRAD_BATCH training windows drawn with GRAD_SEED."""
    train, _, _ = settings.corpus()
    n_ctx = settings.MODEL["n_ctx"]
    starts = np.random.default_rng(settings.GRAD_SEED).integers(0, len(train) - n_ctx - 1, settings.GRAD_BATCH)
    x = np.stack([train[s:s + n_ctx] for s in starts])
    y = np.stack([train[s + 1:s + 1 + n_ctx] for s in starts])
    return x, y


# ---------------------------------------------------------------------------------------- the report

REPORT = "report.md"
RUBRIC_PATH = Path(__file__).resolve().parents[1] / "rubric.toml"
RUBRIC = rubric.load(RUBRIC_PATH)
#: The lesson's own numbers (800 steps, its own data): a report quoting them did not run this model.
LESSON_NUMBERS = {"prenorm": 1.86, "no-residual": 3.37, "prenorm-high-lr": 1.79, "postnorm-high-lr": 3.37}


def read_report(submission) -> report_md.Report:
    return report_md.read(Path(submission.path) / REPORT)


def assess(submission) -> rubric.Assessment:
    """The rubric's reading of the report's Explanation section (cached per text)."""
    text = read_report(submission).explanation
    # Compare with the sample report's explanation only: the table and the template's text are shared by all.
    sources = tuple(sorted((k, report_md.explanation_of(v)) for k, v in
                           rubric.copy_sources_for(RUBRIC, course_root(), Path(submission.path) / REPORT).items()))
    return _assess(text, sources)


@functools.lru_cache(maxsize=32)
def _assess(text: str, sources: tuple) -> rubric.Assessment:
    return rubric.evaluate(RUBRIC, text, copy_sources=dict(sources))


def quote(text: str, limit: int = 300) -> str:
    text = " ".join(text.split())
    return f'"{text if len(text) <= limit else text[:limit - 1] + "…"}"'


def concept_check(line: rubric.Line):
    """The check of one rubric line: passes when the line's evidence is found (and counted)."""

    def check(submission, request):
        a = assess(submission)
        r = a.lines[line.id]
        details = {"rubric_line": line.id, "evidence": r.quotes}
        found = " + ".join(quote(q) for q in r.quotes)
        if r.counted:
            record(request, f"Earned by: {found}", details)
            return
        if r.earned:
            raise CheckFailure(f"Found ({found}), but not counted: {a.cap_reason}.", details=details)
        if r.quotes:
            raise CheckFailure(f"Only part of it: {found}; missing: {', '.join(r.missing_parts)}.", details=details)
        raise CheckFailure("Not found in your explanation.", details=details)

    check.__name__ = check.__qualname__ = f"test_explains_{line.id}"
    check.__doc__ = line.concept
    return pytest.mark.check(points=line.points, hint=line.hint, depends=["test_report_file"])(check)


def misconception_check(m: rubric.Misconception):
    """Passes when a substantive explanation that earns a point on the question does not make the misconception."""

    def check(submission, request):
        a = assess(submission)
        r = a.misconceptions[m.id]
        if not a.substantive:
            raise CheckFailure("Not checked: " + "; ".join(a.problems) + ".")
        if not r.applies:
            pytest.skip(f"not checked: your explanation earns no point on {RUBRIC.questions.get(m.question, '')}")
        details = {"misconception": m.id, "evidence": [r.quote] if r.quote else []}
        if r.found:
            raise CheckFailure(f"Your explanation says: {quote(r.quote)}", diagnosis=f"misconception: {m.statement}",
                               details=details)
        record(request, "Your explanation does not say this.", details)

    check.__name__ = check.__qualname__ = f"test_no_{m.id}"
    check.__doc__ = f"No misconception: {m.statement}."
    return pytest.mark.check(points=m.points, hint=m.hint, depends=["test_report_file"])(check)


__all__ = ["GATES", "ATOL", "MODE_CHECKS", "MODE_WORDS", "record", "torch_generator", "draw_x", "block_config",
           "check_block", "get_run", "run_label", "describe_run", "grad_batch", "read_report", "assess",
           "concept_check", "misconception_check", "RUBRIC", "LESSON_NUMBERS", "REPORT", "plots", "reference",
           "settings", "mistakes"]
