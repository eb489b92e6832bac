"""What both exercise-2 test files share: the exercise's folder, the shapes they test on, the import path.

Importing this module puts the project root on ``sys.path``, so that the exercise's test helpers import as
``exercises.exercise2.tests.*`` (import it before them). Used by ``test_exercise2.py`` and
``test_exercise2_grading.py``.
"""
from __future__ import annotations

import sys

from conftest import ROOT

if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

EX2 = ROOT / "exercises" / "exercise2"

# (d_model, n_heads, mlp_ratio): lesson-like, one head, d_head = 1, odd sizes, ratio 1
BLOCK_SHAPES = [(24, 4, 4), (8, 1, 2), (8, 8, 3), (30, 5, 1), (48, 6, 8), (20, 4, 5)]
GPT_SHAPES = [(50, 8, 16, 1, 2, 4), (311, 64, 24, 3, 4, 3), (1000, 128, 30, 2, 5, 6)]
