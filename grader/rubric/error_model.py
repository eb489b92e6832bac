"""Part of step 6, judge: a small learned model that scores one sentence for how much it reads like one of the
exercise's known mistakes, in words the rubric's evidence may not know.

It only routes: a sentence above the model's threshold sends the answer to a person with the sentence quoted
(:mod:`.review`, reason "unsure"). It never names a mistake and never takes a point, because a wrong diagnosis is
worse than none: the model reads words, not meaning, and is wrong on some sentences that merely sound like an error.

The model is a logistic regression over TF-IDF weights of word 1-3-grams and character 3-5-grams within words
(:func:`features`; term frequency 1 + ln(count), idf = ln((1 + n) / (1 + df)) + 1 as scikit-learn's smooth idf; the
two blocks L2-normalised separately and joined, in the manner of two ``TfidfVectorizer(sublinear_tf=True)``).
``bench/train_error_model.py`` fits it on the development sentences (``tests/prose/sentences/dev_*.toml`` and the
development split's genuine answers) and writes it next to the rubric as ``error_model.json``, with the threshold
it chose on held-apart folds of the development data. The file stays with the judge (grader/release.py).

Inference is plain Python over the stored weights: deterministic, no scikit-learn at grading time.
"""
from __future__ import annotations

import json
import math
import re
import unicodedata
from collections import Counter
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

#: The model's file name, next to ``rubric.toml``.
FILE_NAME = "error_model.json"
#: The format this code reads (``"format"`` in the file): 2 since tokens are two or more word characters, register
#: words left out; 3 since "just", "right", "mean" and "well" are read again ("left and right", a layer norm's mean).
FORMAT = 3
_WORD = re.compile(r"\w\w+")
#: Words of register, not content: hedges, fillers and the writer's voice ("I think", "basically", "honestly", "like",
#: "so"). They are dropped before the n-grams are made, so that a mistake is scored the same however casually it is
#: written: fitted with them, "Basically," in front of a correct textbook sentence sent 18 of 139 to a person
#: (a reviewer's measure, 2026-12-07).
REGISTER_WORDS = frozenset("""me my we us our you your yours ur think thought guess believe feel reckon suppose
basically honestly really actually literally pretty kinda sorta kind sort so like um uh yeah yes ok okay probably
maybe perhaps quite totally simply tbh imo imho lol anyway anyways stuff thing things whatever""".split())
WORD_NGRAMS = (1, 2, 3)
CHAR_NGRAMS = (3, 4, 5)


class ErrorModelError(ValueError):
    """The model file cannot be read or is not in the format this code reads."""


def _text(sentence: str) -> str:
    return unicodedata.normalize("NFKC", sentence).lower().replace("\u2019", "'")


def features(sentence: str) -> tuple[Counter, Counter]:
    """The counts of one sentence's word n-grams (``WORD_NGRAMS``, over its tokens joined by a space) and character
    n-grams (``CHAR_NGRAMS``, inside each token padded by one space each side). A token is a run of two or more
    letters, digits or underscores (scikit-learn's default token pattern) that is not one of :data:`REGISTER_WORDS`:
    a lone letter ("q", the "s" of "GPT's"), punctuation and a hedge are no evidence of a mistake, only of how a
    sentence is written."""
    tokens = [t for t in _WORD.findall(_text(sentence)) if t not in REGISTER_WORDS]
    words: Counter = Counter()
    for n in WORD_NGRAMS:
        for i in range(len(tokens) - n + 1):
            words[" ".join(tokens[i:i + n])] += 1
    chars: Counter = Counter()
    for token in tokens:
        padded = f" {token} "
        for n in CHAR_NGRAMS:
            for i in range(len(padded) - n + 1):
                chars[padded[i:i + n]] += 1
    return words, chars


@dataclass(frozen=True)
class ErrorModel:
    """A fitted model: per block, feature -> (idf, coefficient); the intercept; the routing threshold.

    ``threshold`` is a score in (0, 1): a sentence whose :meth:`probability` exceeds it is routed.
    ``trained_on`` records what it was fitted on (files and their SHA-256, counts), for ``bench`` and the tests;
    ``probes`` are training sentences with the probability scikit-learn gave them when it fitted the model.
    """

    words: dict[str, tuple[float, float]]
    chars: dict[str, tuple[float, float]]
    intercept: float
    threshold: float
    trained_on: dict
    probes: tuple[tuple[str, float], ...] = ()

    def score(self, sentence: str) -> float:
        """The model's log-odds that ``sentence`` states a known mistake (a float, any sign)."""
        total = self.intercept
        for counts, table in zip(features(sentence), (self.words, self.chars)):
            weighted = [((1.0 + math.log(k)) * table[f][0], table[f][1]) for f, k in counts.items() if f in table]
            norm = math.sqrt(sum(v * v for v, _ in weighted))
            if norm > 0:
                total += sum(v * c for v, c in weighted) / norm
        return total

    def probability(self, sentence: str) -> float:
        """The model's score in [0, 1] for ``sentence``: the logistic of :meth:`score`. Fitted with balanced classes
        (as many error sentences as correct ones, in weight), it ranks sentences but is not the chance that a
        student's sentence is wrong; only the comparison with ``threshold`` is used."""
        s = self.score(sentence)
        return 1.0 / (1.0 + math.exp(-s)) if s > -700 else 0.0

    def routed(self, sentence: str) -> bool:
        """Whether ``sentence`` goes to a person: its probability exceeds the threshold."""
        return self.probability(sentence) > self.threshold


def from_dict(data: dict, where: str = "the model") -> ErrorModel:
    """An :class:`ErrorModel` from the parsed JSON of its file. Raises :class:`ErrorModelError` naming the fault."""
    try:
        if data.get("format") != FORMAT:
            raise ErrorModelError(f"{where}: format {data.get('format')!r}, this grader reads format {FORMAT}; "
                                  "re-train it with bench/train_error_model.py")
        blocks = {k: {f: (float(v[0]), float(v[1])) for f, v in data[k].items()} for k in ("words", "chars")}
        threshold = float(data["threshold"])
        if not 0.0 < threshold < 1.0:
            raise ErrorModelError(f"{where}: threshold {threshold} is not a score in (0, 1); re-train it with "
                                  "bench/train_error_model.py")
        return ErrorModel(blocks["words"], blocks["chars"], float(data["intercept"]), threshold,
                          dict(data.get("trained_on", {})),
                          tuple((str(t), float(p)) for t, p in data.get("probes", ())))
    except (KeyError, TypeError, IndexError, AttributeError, ValueError) as exc:
        if isinstance(exc, ErrorModelError):
            raise
        raise ErrorModelError(f"{where}: not an error model ({type(exc).__name__}: {exc}); re-train it with "
                              "bench/train_error_model.py") from exc


@lru_cache(maxsize=None)
def loaded(rubric_path: Path) -> tuple[ErrorModel | None, str]:
    """(:func:`for_rubric`'s model, "") or (None, why it could not be read): read once per process, failure too, so
    that a broken file costs one message per answer, never the grade (:func:`.review.model_routed`). A model trained
    while a batch runs is read by the next process (a new ``grader`` command)."""
    try:
        return for_rubric(rubric_path), ""
    except ErrorModelError as exc:
        return None, str(exc)


def for_rubric(rubric_path: Path) -> ErrorModel | None:
    """The model stored next to the rubric at ``rubric_path`` (``error_model.json``), or None when there is none.

    Raises:
        ErrorModelError: the file is there but is not valid JSON or not a model of :data:`FORMAT`.
    """
    path = Path(rubric_path).parent / FILE_NAME
    if not path.is_file():
        return None
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ErrorModelError(f"cannot read {path}: {exc}; re-train it with bench/train_error_model.py") from exc
    return from_dict(data, str(path))
