"""Hostile case: replaces the sandbox worker's frame writer and sends forged replies.

Student code runs in the worker process, so it can patch the worker's wire module and write any bytes
to the judge. Each function forges a different malformed reply; the judge must turn every one into a
clear failure of that check, never a grader error:

- softmax: a JSON header nested 100,000 levels deep (the JSON parser's recursion limit);
- layer_norm: an .npy blob whose header claims 10**12 float64 values (8 TB) but carries 80 bytes;
- gelu: an error reply whose ``error`` is a string instead of an object;
- multi_head_attention: a JSON number with 5,000 digits (Python's int-parsing limit);
- transformer_block: a list tag holding a number (``{"__list__": 5}``).
"""
import io
import json
import struct

import sys

import numpy as np

_forge = {"mode": None}


def _frame(header: bytes, *blobs: bytes) -> bytes:
    return struct.pack(">Q", len(header)) + header + b"".join(blobs)


def _huge_npy() -> bytes:
    buf = io.BytesIO()
    np.lib.format.write_array_header_1_0(buf, {"descr": "<f8", "fortran_order": False, "shape": (10**12,)})
    return buf.getvalue() + b"\0" * 80


def _forged_frame_bytes(message, blobs=()):
    mode, _forge["mode"] = _forge["mode"], None
    rid = message.get("id")
    if mode == "deep":
        depth = 100_000
        header = ('{"ok": true, "id": %d, "value": ' % rid + '{"__list__": [' * depth + "]}" * depth + "}").encode()
        return _frame(header)
    if mode == "huge_npy":
        blob = _huge_npy()
        return _frame(json.dumps({"ok": True, "id": rid, "value": {"__ndarray__": 0}, "blobs": [len(blob)]}).encode(), blob)
    if mode == "error_string":
        return _frame(json.dumps({"ok": False, "id": rid, "error": "it all went wrong", "blobs": []}).encode())
    if mode == "long_int":
        return _frame(('{"ok": true, "id": %d, "value": %s, "blobs": []}' % (rid, "9" * 5000)).encode())
    if mode == "list_of_int":
        return _frame(json.dumps({"ok": True, "id": rid, "value": {"__list__": 5}, "blobs": []}).encode())
    return _real_frame_bytes(message, blobs)


# The worker builds each reply with its wire module's frame_bytes(...): find that module, whatever its
# name, through the worker's own globals, and replace the function.
# The sandbox's wire module, whatever its name: the worker calls its frame_bytes and read_frame.
_wire = next(m for m in list(sys.modules.values()) if hasattr(m, "frame_bytes") and hasattr(m, "read_frame"))
_real_frame_bytes = _wire.frame_bytes
_wire.frame_bytes = _forged_frame_bytes


def _forged(mode, x):
    _forge["mode"] = mode
    return np.zeros(np.shape(x))


def softmax(x, axis=-1):
    return _forged("deep", x)


def layer_norm(x, weight, bias, eps=1e-5):
    return _forged("huge_npy", x)


def gelu(x):
    return _forged("error_string", x)


def multi_head_attention(x, w_qkv, b_qkv, w_out, b_out, n_heads, causal=False):
    return _forged("long_int", x)


def transformer_block(x, params, n_heads, causal=True):
    return _forged("list_of_int", x)
