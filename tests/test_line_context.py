"""Exercise 4's points made across sentences (tests/prose/lines/dev3_ex4_lines.toml, 2026-12-07): what that round's
dev passages showed about reading, each as the general rule it is. Each case fails on the code before its fix."""
from __future__ import annotations

import pytest
from conftest import ROOT, bench_module

from grader import rubric
from grader.rubric.assertions import stance_of

lines = bench_module("line_passages")
EX4 = rubric.load(ROOT / "exercises/exercise4/rubric.toml")


@pytest.mark.parametrize("sentence, phrase, stance", [
    # an adverb that ends in "s" is no plural subject of something foreign
    ("so the heads always get their own projections.", "own projections", "asserted"),
    ("the first layers sometimes get a tiny gradient.", "tiny gradient", "asserted"),
    ("the pancakes always get their own projections.", "own projections", "foreign"),
    # where a decrease ends is an amount, not a negation; "nothing" as the subject, or an amount added, still negates
    ("it has faded to nothing by the bottom layers.", "bottom layers", "asserted"),
    ("the gradient has shrunk to almost nothing at the first blocks.", "first blocks", "asserted"),
    ("the residuals add almost nothing to the capacity.", "capacity", "negated"),
    ("nothing reaches the first blocks.", "first blocks", "negated"),
])
def test_stances(sentence, phrase, stance):
    assert stance_of(sentence, phrase) == stance


@pytest.mark.parametrize("passage, earns", [
    ("Run B (no-res) is the one where the backward signal has to pass through each block in turn. By the time it "
     "reaches block 1 it has mostly vanished, so the bottom of the network stays close to its random "
     "initialisation.", True),
    ("In no-res the gradient norm at the embedding layer was tiny (around 3e-5), 1e-2 at the last block.", True),
    ("Its gradient has to pass through every layer's weight matrices in sequence, and it has faded to nothing by "
     "the bottom layers, so they stop updating.", True),
    ("With skips, the gradient basically gets a free ride back to the first layer.", True),
    # the same words said of post-norm, or asked, earn nothing
    ("In post-norm the backward signal has to pass through each layer norm, and it has faded to nothing by the "
     "bottom layers.", False),
    ("Does the backward signal fade to nothing by the bottom layers in the no-res run? I did not measure it.", False),
])
def test_gradient_path_in_more_words(passage, earns):
    assert lines.credited("gradient_path", passage) is earns


def test_a_sentence_about_what_a_change_took_away_is_no_contradiction():
    answer = ("The residual stream gives the gradient a direct path back to the first blocks. In post-norm every "
              "gradient from the loss has to pass through each normalisation, so there is no longer a clean route "
              "back. The normalisation sits after the addition, so the backward signal has to cross a LayerNorm "
              "Jacobian at every sub-layer instead of an untouched identity.")
    a = rubric.evaluate(EX4, answer)
    assert a.lines["gradient_path"].earned
    assert not [r for r in a.needs_review if r.startswith("contradiction")]


@pytest.mark.parametrize("passage, earns", [
    ("In run B nothing of the embedding survives past the first attention layer. That makes every block responsible "
     "for carrying the whole signal.", True),
    ("The residual stream keeps the input around. Remove the stream and every block has to output everything the "
     "next one needs.", True),
    ("Without skip connections the information about which characters came before has to be preserved by every "
     "layer in turn.", True),
    ("In the no-skip model the next block literally only sees the previous block's output.", True),
    ("In the no-skip model there is no copy of the original input kept anywhere.", True),
    ("Take the first attention layer of the no-res model. Its output is the sole input of the next MLP.", True),
    # near misses: said with residuals, of the gradient, or denied
    ("With residuals every block is responsible for carrying only a small correction.", False),
    ("Without residuals every block has to output a gradient for the next one.", False),
    ("In the no-skip model the next block does not only see the previous block's output.", False),
])
def test_whole_signal_in_more_words(passage, earns):
    assert lines.credited("whole_signal", passage) is earns


@pytest.mark.parametrize("passage, earns", [
    # a run named by what it lacks is no plural subject of something foreign
    ("No-res only learned the unigram distribution, ignoring context -> loss ~ U.", True),
    ("The second run flatlines at U. Its output is context-free: whatever the preceding characters are, it predicts "
     "the corpus letter frequencies.", True),
    # near misses: below U, or asked
    ("The pre-norm run flatlines well below U, far under the letter frequencies.", False),
    ("Does no-res only learn the unigram distribution? I could not tell.", False),
])
def test_unigram_level_in_more_words(passage, earns):
    assert lines.credited("unigram_level", passage) is earns


def test_a_run_named_by_what_it_lacks_is_no_foreign_subject():
    assert stance_of("no-res only learned the unigram distribution.", "unigram distribution") == "asserted"


@pytest.mark.parametrize("sentence, phrase, stance", [
    # an arrow in notes ends a negation's reach, as ";" does
    ("postnorm = norm on the trunk, not the branch -> no pure identity route for gradients.", "gradients", "negated"),
    ("no residuals -> the gradient vanishes before the first blocks.", "first blocks", "asserted"),
    ("not the branch but the trunk => the gradient crosses every norm.", "every norm", "asserted"),
])
def test_an_arrow_ends_a_negation(sentence, phrase, stance):
    assert stance_of(sentence, phrase) == stance


@pytest.mark.parametrize("passage, earns", [
    ("Run D normalises x + attn(x), i.e. the residual path itself. Its gradient therefore goes through a layer norm "
     "at each block on the way down.", True),
    ("Look at where ln1 is in post-norm. It wraps the sum, so it lies on the residual connection. This means the "
     "gradient back to the earlier layers is pushed through a normalisation at every block.", True),
    # pieces from a sentence about the model without residuals next to one naming post-norm
    ("No residuals -> the gradient can't get back to the first blocks (no shortcut), so they never train. Post-norm "
     "at 1.5e-2 blows up without warm-up.", False),
])
def test_postnorm_in_gradient_path_in_more_words(passage, earns):
    assert lines.credited("postnorm_in_gradient_path", passage) is earns
