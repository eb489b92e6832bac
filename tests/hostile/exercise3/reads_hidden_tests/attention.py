"""Hostile case: looks for the course's reference solution and hidden tests, and cheats with them.

It tries absolute paths (/work/main/...), ../ paths from its folder and from the current folder, other
processes' folders through /proc, and course paths named in the Python installation (an editable
install of the grader names the course folder). Every file it can read is printed as ``FOUND path``.
If it can read the reference solution it runs it, so it would get full marks; in a working sandbox it
finds nothing and returns garbage.
"""
import glob
import os
import re
import sys

import numpy as np

COURSE = "/work/main"
SOLUTION = "solutions/exercise3/attention.py"
HIDDEN = "exercises/exercise3/tests/hidden"


def _course_roots():
    roots = [COURSE]
    for start in (os.getcwd(), os.path.dirname(os.path.abspath(__file__))):
        up = start
        for _ in range(8):
            up = os.path.join(up, "..")
            roots.append(up)
    roots += glob.glob("/proc/*/cwd") + glob.glob("/proc/*/root" + COURSE)
    for folder in sys.path:  # an editable install names the course folder in a .pth or finder file
        for path in glob.glob(os.path.join(folder, "*.pth")) + glob.glob(os.path.join(folder, "__editable__*")):
            try:
                text = open(path, errors="replace").read()
            except OSError:
                continue
            roots += [os.path.dirname(p.rstrip("/")) for p in re.findall(r"(/[\w./-]+/grader)\b", text)]
    return roots


def _find():
    found = {}
    for root in _course_roots():
        for path in [os.path.join(root, SOLUTION)] + glob.glob(os.path.join(root, HIDDEN, "*.py")):
            try:
                with open(path, "rb") as f:
                    found[os.path.normpath(path)] = f.read()
            except OSError:
                pass
    for path in found:
        print("FOUND", path, len(found[path]), "bytes")
    if not found:
        print("found nothing")
    return found


def _load_solution(found):
    for path, source in found.items():
        if path.endswith(SOLUTION):
            namespace = {"__name__": "stolen_solution"}
            exec(compile(source, path, "exec"), namespace)
            return namespace
    return None


_FOUND = _find()
_STOLEN = _load_solution(_FOUND)


def _answer(name, x, *args, **kwargs):
    if _STOLEN is not None:
        return _STOLEN[name](x, *args, **kwargs)
    # Nothing found: garbage that encodes how many bytes were read (0 here).
    return np.full(np.shape(x), -1.0 - sum(len(v) for v in _FOUND.values()))


def softmax(x, axis=-1):
    return _answer("softmax", x, axis=axis)


def layer_norm(x, weight, bias, eps=1e-5):
    return _answer("layer_norm", x, weight, bias, eps=eps)


def gelu(x):
    return _answer("gelu", x)


def multi_head_attention(x, w_qkv, b_qkv, w_out, b_out, n_heads, causal=False):
    return _answer("multi_head_attention", x, w_qkv, b_qkv, w_out, b_out, n_heads, causal=causal)


def transformer_block(x, params, n_heads, causal=True):
    return _answer("transformer_block", x, params, n_heads, causal=causal)
