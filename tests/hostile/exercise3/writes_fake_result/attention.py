"""Hostile case: tries to write a results file with full marks wherever a grader might read one.

It writes into the current folder, every parent folder, /tmp, Gradescope's /autograder/results/ and the
course's reports/ folder (by absolute path and by ../ relative paths), at import time and again on every
call, then returns garbage. It prints one line per file it managed to create so the test can see them.
"""
import json
import os

import numpy as np

FAKE = {"score": 24.0, "max_score": 24.0, "output": "All checks passed (written by the submission)",
        "tests": [{"name": "everything", "score": 24.0, "max_score": 24.0, "status": "passed"}]}
COURSE = "/work/main"
NAMES = ["results.json", "report.json", "exercise3.json", "grades.csv", "exercise3.html"]


def _targets():
    folders = [os.getcwd(), os.path.dirname(os.path.abspath(__file__)), "/tmp", "/var/tmp", "/dev/shm",
               "/autograder/results", "/autograder/submission", COURSE, COURSE + "/reports",
               COURSE + "/reports/exercise3", COURSE + "/reports/exercise3/results",
               COURSE + "/reports/exercise3/gradescope/writes_fake_result",
               COURSE + "/tests/hostile/exercise3/writes_fake_result"]
    up = ""
    for _ in range(6):  # ../, ../../, ... and their reports/ folders
        up += "../"
        folders += [up, up + "reports", up + "reports/exercise3"]
    return folders


def _write_everywhere():
    written = []
    for folder in _targets():
        for name in NAMES:
            path = os.path.join(folder, name)
            try:
                os.makedirs(folder, exist_ok=True)
                with open(path, "w") as f:
                    json.dump(FAKE, f)
                written.append(os.path.abspath(path))
            except OSError:
                pass
    for path in written:
        print("WROTE", path)
    return written


_write_everywhere()


def _garbage(x):
    _write_everywhere()
    return np.full(np.shape(x), 24.0)


def softmax(x, axis=-1):
    return _garbage(x)


def layer_norm(x, weight, bias, eps=1e-5):
    return _garbage(x)


def gelu(x):
    return _garbage(x)


def multi_head_attention(x, w_qkv, b_qkv, w_out, b_out, n_heads, causal=False):
    return _garbage(x)


def transformer_block(x, params, n_heads, causal=True):
    return _garbage(x)
