"""Rubric grading of a written answer: transparent rules, no model, no network.

A rubric is a data file (``exercises/NAME/rubric.toml``, judge-only) of *lines* (a concept worth points,
the evidence that earns it, the hint shown when it is missing) and *misconceptions* (statements that
cost their point when the answer makes them). :func:`evaluate` reads an answer in named steps, one module
each:

1. :mod:`.read`: decode the file, drop headings, comments and markup, one block per paragraph or bullet,
   and the normalised form of text for matching (Unicode NFKC, case, quotes, dashes, LaTeX, contractions);
2. :mod:`.sentences`: cut blocks into sentences (a bare keyword list into its items);
3. :mod:`.assertions`: what each clause of a sentence does with what it says: asserts it, or denies,
   doubts, attributes, asks or supposes it (only assertions earn points or commit misconceptions);
4. :mod:`.concepts`: match every line's evidence inside an asserting clause, said of the right thing;
5. :mod:`.copying`: how much of the answer is found in a copy source (sample answers, the rubric, peers);
6. :mod:`.judge`: the whole answer (empty, too short or long, keyword list, language, copying), the
   total; :mod:`.review`: its confidence and the reasons a person should read it.

:mod:`.files` reads answer files and copy sources and caches an assessment per content; :mod:`.peers`
compares the answers of a batch with each other and :mod:`.groups` forms review groups;
:mod:`.structure` holds the public form checks (which use no rubric).

Everything is deterministic and offline; an answer takes milliseconds to a tenth of a second. Each result names the sentence that earned
a point, so a student and an instructor can see why.
"""
from .files import assess_file, copy_sources_for, load_cached
from .judge import Assessment, LineResult, MisconceptionResult, evaluate
from .spec import Evidence, Line, Misconception, Rubric, RubricError, load
from .read import blocks, normalise, read_text, words
from .sentences import split_sentences

__all__ = ["Assessment", "Evidence", "Line", "LineResult", "Misconception", "MisconceptionResult", "Rubric",
           "RubricError", "assess_file", "blocks", "copy_sources_for", "evaluate", "load", "load_cached",
           "normalise", "read_text", "split_sentences", "words"]
