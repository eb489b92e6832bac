"""Part of step 4, concepts: a sentence about another model, or about a head that is no attention head.

A named error says what the student got wrong about *the lesson's* model (GPT-2, BERT, the transformer block of
"Attention Is All You Need"). A sentence about another architecture may say the very words of an error and be
right: "in Llama 2 70B groups of eight heads share one set of keys and values" (grouped-query attention,
Ainslie et al. 2023), "in MLP-Mixer one MLP mixes information across the tokens" (Tolstikhin et al. 2021), "in
an LSTM there is no layer norm". So is a sentence whose "head" is a model's output head ("the LM head", "the
classification head on top of BERT"), which is no attention head.

The rubric cannot list every such wording, and a red team that reads it finds the next one. The rule here is
general instead: an error whose sentence names another model (:data:`OTHER_MODEL`: architecture families and
named models outside the lesson, a model size such as "Falcon-7B" or "70B"), a head outside attention
(:data:`OTHER_HEAD`) or what the exercise's rubric lists as elsewhere (``[naming] elsewhere``: for exercise 1,
whose errors are about the forward computation, the backward pass, the optimiser, the initialisation, an
ablation study: "in the backward pass the gradient goes through W_O before the concatenation") is **not named**: the evidence does not single the error out (the developers' guide: a wrong
diagnosis is worse than none). The answer is sent to a person instead, with the sentence quoted
(grader/rubric/judge.py), so an error said of the lesson's model next to another model's name still reaches a
teacher. Concept lines are not touched: "unlike an RNN, the heads run in parallel" earns its line.

Measured with ``bench/named_errors.py`` (README of exercise 1). GPT-3 and GPT-4 count as the lesson's model (the
same decoder-only block as GPT-2).
"""
from __future__ import annotations

import re

from .read import normalise

#: Architecture families and named models other than the lesson's GPT-2 and BERT, as a reader of the field names
#: them (words, matched whole, case ignored). Names that are also plain English words a student uses about the
#: lesson's model ("we opt for pre-norm", "clip the gradient", "the patterns bloom") are left out.
_FAMILIES = ("rnns? lstms? grus? cnns? convnets? resnets? resnet-?\\d+ vgg(?:-?\\d+)? u-?nets? vits? swin t5 bart "
             "roberta albert distilbert electra xlnet longformer bigbird reformer performer linformer mamba rwkv "
             "llama(?:-?\\d+)? mistral mixtral falcon palm gemma gemini claude chinchilla gopher pythia "
             "qwen deepseek phi-?\\d mpt gpt-j gpt-neox gpt-neo whisper dall-e mlp-mixer gmlp perceiver "
             "transformer-xl moe gqa mqa detr yolo\\w* r-?cnn medusa hydra").split()
#: Kinds of attention or model other than the lesson's (phrases).
_KINDS = (r"mixture[- ]of[- ]experts", r"grouped[- ]query attention", r"multi[- ]query attention",
          r"sliding[- ]window attention", r"linear attention", r"sparse attention", r"state[- ]space models?",
          r"recurrent (?:neural )?(?:networks?|nets?)", r"convolutional (?:neural )?(?:networks?|nets?)",
          r"classifier chains?", r"early[- ]exit (?:networks?|models?)")
#: Another model: a family, a kind, or a model named with its size ("Falcon-7B", "Llama 2 70B", "Gemma 2B").
OTHER_MODEL = re.compile(r"(?<![\w-])(?:" + "|".join(_FAMILIES) + r")(?![\w-])|" + "|".join(_KINDS)
                         + r"|(?<![\w-])(?!(?:gpt|bert)\b)[a-z][\w.]*(?:[- ]\d+)?[- ]\d+(?:\.\d+)?b(?![\w-])", re.I)
#: A head that is a model's output layer, not an attention head: "the LM head", "BERT's classification head", "the
#: head on top of [CLS]".
OTHER_HEAD = re.compile(r"\b(?:lm|output|classification|classifier|prediction|task|next[- ]sentence|"
                        r"language[- ]model(?:ing)?|regression|pooler|pooling|mlm|nsp|qa|detection|draft|exit|box|"
                        r"decoding|read|write|read/write|disk|drive|print|printing)[- ]heads?\b|"
                        r"\bhard (?:disk )?drives?\b|\bdisk drives?\b|\bcoins?\b|\btoss(?:es|ing)?\b|\bdependency "
                        r"(?:grammar|trees?|pars\w+)\b|\bapproval workflows?\b|\bprinting press\b|"
                        r"\bheads? (?:put |placed |sitting |stacked )?on top\b", re.I)


#: Words that carry what is said of another model over to the lesson's: "like in an RNN, the heads run one after
#: another" is an error about the heads. "Unlike" and "than" are no such words: "unlike Falcon-7B, where all heads
#: share the keys, ..." keeps the sharing in Falcon-7B.
_LIKENESS = re.compile(r"\b(?:like|as in|as with|just as|similar to|same as|as do(?:es)?)(?: in| with)?(?: an?| the)?\s*$",
                       re.I)


def about_elsewhere(sentence: str, also: tuple[re.Pattern, ...] = ()) -> str:
    """What in ``sentence`` (a sentence's text, any case) is outside the lesson's model, or "" when nothing is.

    ``also``: the exercise's own (its rubric's ``[naming] elsewhere``, matched on the normalised sentence: for
    exercise 1 the backward pass, the optimiser, the initialisation, an ablation study). A model named as a likeness
    ("like an RNN, ...", "as in T5") does not count (:data:`_LIKENESS`). Returns the words found ("Falcon-7B",
    "LM head", as written), for the reason shown to a person."""
    for pattern in (OTHER_MODEL, OTHER_HEAD):
        for m in pattern.finditer(sentence):
            if not _LIKENESS.search(sentence, 0, m.start()):
                return m.group(0)
    low = normalise(sentence) if also else ""
    return next((m.group(0) for m in (p.search(low) for p in also) if m), "")
