"""The process that runs student code. Standard library and NumPy only.

It is started by :mod:`grader.sandbox` as ``python -I sandbox_worker.py CONFIG_JSON`` and
must stay importable without the rest of the package: the sandbox runs a copy of this file.
The judge imports :func:`encode`, :func:`decode`, :func:`write_frame` and
:func:`read_frame` from here, so both sides speak one wire format.

Wire format (both directions), one frame per message::

    8-byte big-endian header length | header (UTF-8 JSON) | blob 0 | blob 1 | ...

``header["blobs"]`` lists the blob lengths. Arrays travel as ``.npy`` blobs written and
read with ``allow_pickle=False``; everything else is JSON. Nothing is ever unpickled.

Requests: ``{"op": "load"}``, ``{"op": "signature", "name": F}``,
``{"op": "call", "name": F, "args": [...], "kwargs": {...}}``.
Replies: ``{"ok": true, "value": ...}`` or ``{"ok": false, "error": {"type", "message",
"traceback"}}``.
"""
from __future__ import annotations

import io
import json
import os
import struct
import sys

HEADER = struct.Struct(">Q")
#: Largest frame either side accepts, bytes.
MAX_FRAME = 256 * 1024 * 1024


class ProtocolError(Exception):
    """A frame that does not follow the wire format (truncated, too big, not JSON)."""


def encode(value, blobs: list[bytes]):
    """Turn ``value`` into JSON-able data, appending arrays to ``blobs`` as .npy bytes.

    Object arrays and unknown types are sent as ``{"__unsupported__": type name}`` so the
    judge can say what was returned instead of crashing.
    """
    import numpy as np

    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, np.ndarray) or isinstance(value, np.generic):
        arr = np.asarray(value)
        if arr.dtype.hasobject:
            return {"__unsupported__": f"numpy array of dtype {arr.dtype}"}
        buf = io.BytesIO()
        np.save(buf, arr, allow_pickle=False)
        blobs.append(buf.getvalue())
        key = "__ndarray__" if isinstance(value, np.ndarray) else "__npscalar__"
        return {key: len(blobs) - 1}
    if isinstance(value, (list, tuple)):
        items = [encode(v, blobs) for v in value]
        return {"__list__": items} if isinstance(value, list) else {"__tuple__": items}
    if isinstance(value, dict) and all(isinstance(k, str) for k in value):
        return {"__dict__": {k: encode(v, blobs) for k, v in value.items()}}
    return {"__unsupported__": type(value).__name__}


def decode(data, blobs: list[bytes]):
    """Inverse of :func:`encode`. Arrays are read with ``allow_pickle=False``.

    Unsupported values decode to an :class:`Unsupported` marker.

    Raises:
        ProtocolError: a blob index out of range or a blob that is not a valid .npy.
    """
    import numpy as np

    if isinstance(data, list):
        raise ProtocolError("bare JSON list in a frame")
    if not isinstance(data, dict):
        return data
    if len(data) != 1:
        raise ProtocolError("encoded value must have exactly one tag")
    (tag, inner), = data.items()
    if tag in ("__ndarray__", "__npscalar__"):
        if not isinstance(inner, int) or not 0 <= inner < len(blobs):
            raise ProtocolError(f"array blob index {inner!r} out of range")
        try:
            arr = np.load(io.BytesIO(blobs[inner]), allow_pickle=False)
        except ValueError as exc:
            raise ProtocolError(f"invalid .npy blob: {exc}") from exc
        return arr[()] if tag == "__npscalar__" else arr
    if tag == "__list__":
        return [decode(v, blobs) for v in inner]
    if tag == "__tuple__":
        return tuple(decode(v, blobs) for v in inner)
    if tag == "__dict__":
        return {k: decode(v, blobs) for k, v in inner.items()}
    if tag == "__unsupported__":
        return Unsupported(str(inner))
    raise ProtocolError(f"unknown tag {tag!r}")


class Unsupported:
    """Stands for a value the sandbox could not send (e.g. a custom object)."""

    def __init__(self, type_name: str):
        self.type_name = type_name

    def __repr__(self) -> str:
        return f"<{self.type_name} object>"


def write_frame(stream, message: dict, blobs: list[bytes] = ()) -> None:
    """Write one frame to a binary stream and flush it."""
    message = dict(message, blobs=[len(b) for b in blobs])
    header = json.dumps(message, allow_nan=True).encode("utf-8")
    stream.write(HEADER.pack(len(header)) + header)
    for blob in blobs:
        stream.write(blob)
    stream.flush()


def parse_frame(raw: bytes) -> tuple[dict, list[bytes]] | None:
    """Split a complete frame out of ``raw``; None while it is still incomplete.

    Raises:
        ProtocolError: oversized or malformed frame.
    """
    if len(raw) < HEADER.size:
        return None
    (hlen,) = HEADER.unpack_from(raw)
    if hlen > MAX_FRAME:
        raise ProtocolError(f"frame header of {hlen} bytes is too large")
    if len(raw) < HEADER.size + hlen:
        return None
    try:
        message = json.loads(raw[HEADER.size:HEADER.size + hlen].decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ProtocolError(f"frame header is not JSON: {exc}") from exc
    sizes = message.get("blobs", []) if isinstance(message, dict) else None
    if not isinstance(sizes, list) or not all(isinstance(s, int) and s >= 0 for s in sizes):
        raise ProtocolError("frame has no valid blob list")
    end = HEADER.size + hlen + sum(sizes)
    if end > MAX_FRAME:
        raise ProtocolError(f"frame of {end} bytes is too large")
    if len(raw) < end:
        return None
    blobs, pos = [], HEADER.size + hlen
    for size in sizes:
        blobs.append(raw[pos:pos + size])
        pos += size
    return message, blobs


def read_frame(stream) -> tuple[dict, list[bytes]] | None:
    """Blocking read of one frame from a binary stream; None at EOF (worker side)."""
    raw = b""
    while True:
        parsed = parse_frame(raw)
        if parsed is not None:
            return parsed
        chunk = stream.read1(1 << 20) if hasattr(stream, "read1") else stream.read(1 << 20)
        if not chunk:
            return None
        raw += chunk


# --------------------------------------------------------------------------- worker


class _BlockImports:
    """A meta-path finder that refuses the exercise's forbidden packages (e.g. torch)."""

    def __init__(self, names):
        self.names = set(names)

    def find_spec(self, fullname, path=None, target=None):
        if fullname.split(".")[0] in self.names:
            raise ImportError(f"importing {fullname!r} is not allowed in this exercise (NumPy only)")
        return None


def _apply_limits(cfg: dict) -> None:
    import resource

    mib = 1024 * 1024
    limits = [
        (resource.RLIMIT_CPU, cfg["cpu"]),
        (resource.RLIMIT_AS, cfg["memory_mb"] * mib),
        (resource.RLIMIT_FSIZE, cfg["file_size_mb"] * mib),
        (resource.RLIMIT_NPROC, cfg["processes"]),
        (resource.RLIMIT_CORE, 0),
    ]
    for which, value in limits:
        try:
            resource.setrlimit(which, (value, value))
        except (ValueError, OSError):
            pass  # a limit the OS will not lower (e.g. RLIMIT_AS on macOS): reported by the judge
    uid = cfg.get("uid")
    if uid is not None and os.getuid() == 0:
        os.setgroups([])
        os.setresgid(uid, uid, uid)
        os.setresuid(uid, uid, uid)


def _error(exc: BaseException, submission_dir: str) -> dict:
    import traceback

    frames = [f for f in traceback.extract_tb(exc.__traceback__) if f.filename.startswith(submission_dir)]
    lines = traceback.format_list(frames[-8:])
    lines += traceback.format_exception_only(type(exc), exc)
    return {
        "type": type(exc).__name__,
        "message": str(exc)[:2000],
        "traceback": "".join(lines)[-4000:],
    }


def main(argv: list[str]) -> int:
    cfg = json.loads(argv[1])
    # The protocol keeps private copies of fds 0 and 1; the student's print() and any
    # write to fd 1 or 2 go to the judge's capped output pipe (fd 2).
    proto_in = os.fdopen(os.dup(0), "rb", buffering=0)
    proto_out = os.fdopen(os.dup(1), "wb")
    # A child the student forks must never speak the protocol (it would steal requests
    # or send stray replies); the dup'ed fds are already closed on exec.
    os.register_at_fork(after_in_child=lambda: (proto_in.close(), proto_out.close()))
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.dup2(2, 1)
    sys.stdout = io.TextIOWrapper(os.fdopen(1, "wb", closefd=False), errors="replace", line_buffering=True)
    _apply_limits(cfg)
    import inspect
    import importlib

    import numpy  # noqa: F401  (imported before the submission can shadow it)

    sys.meta_path.insert(0, _BlockImports(cfg.get("forbidden_imports", [])))
    submission_dir = cfg["submission_dir"]
    sys.path.append(submission_dir)  # appended: a submission's numpy.py cannot shadow numpy
    module = None
    while True:
        request = read_frame(proto_in)
        if request is None:
            return 0
        message, blobs = request
        op = message.get("op")
        try:
            if op == "load":
                module = importlib.import_module(cfg["module"])
                value = sorted(n for n, v in vars(module).items() if callable(v) and not n.startswith("_"))
            elif op == "signature":
                fn = getattr(module, message["name"])
                value = [
                    [p.name, p.kind.name, p.default is not inspect.Parameter.empty]
                    for p in inspect.signature(fn).parameters.values()
                ]
            elif op == "call":
                fn = getattr(module, message["name"])
                args = decode({"__list__": message["args"]}, blobs)
                kwargs = decode({"__dict__": message["kwargs"]}, blobs)
                value = fn(*args, **kwargs)
            else:
                raise ValueError(f"unknown op {op!r}")
            out_blobs: list[bytes] = []
            encoded = encode(value, out_blobs)
            reply, reply_blobs = {"ok": True, "value": encoded, "id": message.get("id")}, out_blobs
        except BaseException as exc:  # noqa: BLE001 - student code may raise anything, even SystemExit
            if isinstance(exc, KeyboardInterrupt):
                raise
            reply, reply_blobs = {"ok": False, "error": _error(exc, submission_dir), "id": message.get("id")}, []
        sys.stdout.flush()
        write_frame(proto_out, reply, reply_blobs)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
