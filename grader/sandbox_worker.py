"""The process that runs student code. Standard library and NumPy only.

It is started by :mod:`grader.sandbox` as ``python -I sandbox_worker.py CONFIG_JSON`` and
must stay importable without the rest of the package: the sandbox runs a copy of this file.
The judge imports :func:`encode`, :func:`decode`, :func:`write_frame` and
:func:`read_frame` from here, so both sides speak one wire format.

Wire format (both directions), one frame per message::

    8-byte big-endian header length | header (UTF-8 JSON) | blob 0 | blob 1 | ...

``header["blobs"]`` lists the blob lengths. Arrays travel as ``.npy`` blobs written and
read with ``allow_pickle=False``; everything else is JSON. Nothing is ever unpickled.

Once started, the worker sends ``{"ready": true, "id": 0}``. Then requests:
``{"op": "load"}``, ``{"op": "signature", "name": F}``,
``{"op": "call", "name": F, "args": [...], "kwargs": {...}}``, each with an ``id`` that the
reply repeats. Replies: ``{"ok": true, "value": ...}`` or ``{"ok": false, "error": {"type",
"message", "traceback", "bases", "errno"}}`` (``bases``: the exception's class names, most
derived first, so the judge can tell a subclass of MemoryError).

Student code runs in this process and can forge any reply; :func:`decode` and
:func:`parse_frame` treat every byte from here as hostile.
"""
from __future__ import annotations

import contextlib
import io
import json
import os
import re
import struct
import sys

HEADER = struct.Struct(">Q")
#: Largest frame either side accepts, bytes.
MAX_FRAME = 256 * 1024 * 1024
#: Largest JSON header, bytes: arrays travel as blobs, so a real header is small.
MAX_HEADER = 1024 * 1024


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

    Unsupported values decode to an :class:`Unsupported` marker. Student code runs in the
    worker, so it can replace :func:`encode` or write frames of its own: whatever arrives,
    the only exception this raises is :class:`ProtocolError`.

    Raises:
        ProtocolError: a malformed value, a blob index out of range or a blob that is not
            a valid .npy of a plain (non-object) dtype.
    """
    try:
        return _decode(data, blobs)
    except RecursionError as exc:
        raise ProtocolError("value nested too deeply") from exc


def _decode(data, blobs: list[bytes]):
    if isinstance(data, list):
        raise ProtocolError("bare JSON list in a frame")
    if not isinstance(data, dict):
        return data
    if len(data) != 1:
        raise ProtocolError("encoded value must have exactly one tag")
    (tag, inner), = data.items()
    if tag in ("__ndarray__", "__npscalar__"):
        if type(inner) is not int or not 0 <= inner < len(blobs):
            raise ProtocolError(f"array blob index {inner!r} out of range")
        arr = load_npy(blobs[inner])
        if tag == "__npscalar__":
            if arr.ndim != 0:
                raise ProtocolError(f"a NumPy scalar must be 0-d, got shape {arr.shape}")
            try:  # e.g. a '<U1' whose bytes are no Unicode character raises SystemError here
                return arr[()]
            except Exception as exc:  # noqa: BLE001 - the sender's fault
                raise ProtocolError(f"invalid NumPy scalar: {exc}"[:300]) from exc
        return arr
    if tag in ("__list__", "__tuple__"):
        if not isinstance(inner, list):
            raise ProtocolError(f"{tag} holds {type(inner).__name__}, not a list")
        items = [_decode(v, blobs) for v in inner]
        return items if tag == "__list__" else tuple(items)
    if tag == "__dict__":
        if not isinstance(inner, dict):
            raise ProtocolError(f"__dict__ holds {type(inner).__name__}, not an object")
        return {k: _decode(v, blobs) for k, v in inner.items()}
    if tag == "__unsupported__":
        return Unsupported(str(inner)[:200])
    raise ProtocolError(f"unknown tag {tag!r}"[:200])


#: The header np.save writes for a plain array (``descr``, ``fortran_order``, ``shape``, padded with
#: spaces and a newline; see ``numpy.lib.format``). Read with a regular expression, as
#: ``np.lib.format``'s reader (``ast.literal_eval``, ~80 µs) was the judge's largest single cost.
_NPY_HEADER = re.compile(rb"\{'descr': '([<>|=]?[A-Za-z][0-9]{0,3})', 'fortran_order': (False|True), "
                         rb"'shape': \(((?:[0-9]{1,19}, ){0,63}(?:[0-9]{1,19},?)?)\), \} *\n")
#: Longest header read, bytes (numpy's own reader refuses longer ones too): a header claiming
#: millions of dimensions must not cost the judge gigabytes before it is refused.
MAX_NPY_HEADER = 10_000


def load_npy(blob: bytes):
    """Read one .npy blob (format 1.0 or 2.0) without ever unpickling, after checking its header
    against its size.

    ``np.load`` allocates whatever shape the header claims before reading any data, and
    accepts .npz archives and pickles too; here only a .npy of a plain dtype whose data is
    exactly the blob's remaining bytes is read, as a writable copy. A header in the form np.save
    writes is parsed with :data:`_NPY_HEADER`; any other goes through ``numpy.lib.format``.

    Raises:
        ProtocolError: anything else, with the reason.
    """
    import numpy as np
    from numpy.lib import format as npy_format

    try:
        if not blob.startswith(npy_format.MAGIC_PREFIX) or len(blob) < 10:
            raise ValueError("not a .npy file (bad magic string)")
        version = (blob[6], blob[7])
        if version not in ((1, 0), (2, 0)):
            raise ValueError(f"unsupported .npy version {version}")
        size_bytes = 2 if version == (1, 0) else 4
        start = 8 + size_bytes
        end = start + int.from_bytes(blob[8:start], "little")
        if end - start > MAX_NPY_HEADER:
            raise ValueError(f"the header is longer than {MAX_NPY_HEADER} bytes")
        if end > len(blob):
            raise ValueError("the header is cut short")
        match = _NPY_HEADER.fullmatch(blob[start:end])
        if match:
            dtype = np.dtype(match[1].decode("ascii"))
            fortran_order = match[2] == b"True"
            shape = tuple(int(n) for n in match[3].split(b",") if n.strip())
        else:
            stream = io.BytesIO(blob)
            npy_format.read_magic(stream)
            read = npy_format.read_array_header_1_0 if version == (1, 0) else npy_format.read_array_header_2_0
            shape, fortran_order, dtype = read(stream)
        if dtype.hasobject:
            raise ValueError("object arrays are not accepted (they would need unpickling)")
        count = 1
        for n in shape:
            count *= n
        if count * dtype.itemsize != len(blob) - end:
            raise ValueError(f"header says shape {shape} of {dtype} ({count * dtype.itemsize} bytes) "
                             f"but {len(blob) - end} bytes follow")
        flat = np.frombuffer(blob, dtype=dtype, count=count, offset=end) if count else np.empty(0, dtype)
        arr = flat.reshape(shape, order="F" if fortran_order else "C").copy(order="K")
    except Exception as exc:  # noqa: BLE001 - any failure to read is the sender's fault
        raise ProtocolError(f"invalid .npy blob: {exc}"[:500]) from exc
    return arr


class Unsupported:
    """Stands for a value the sandbox could not send (e.g. a custom object)."""

    def __init__(self, type_name: str):
        self.type_name = type_name

    def __repr__(self) -> str:
        return f"<{self.type_name} object>"


def frame_bytes(message: dict, blobs: list[bytes] = ()) -> bytes:
    """One whole frame as bytes (the header gets the blob lengths added).

    Raises:
        ValueError, TypeError, RecursionError: ``message`` cannot be written as JSON.
    """
    message = dict(message, blobs=[len(b) for b in blobs])
    header = json.dumps(message, allow_nan=True).encode("utf-8")
    return b"".join([HEADER.pack(len(header)), header, *blobs])


def write_frame(stream, message: dict, blobs: list[bytes] = ()) -> None:
    """Write one frame to a binary stream and flush it."""
    stream.write(frame_bytes(message, blobs))
    stream.flush()


def parse_frame(raw: bytes) -> tuple[dict, list[bytes]] | None:
    """Split a complete frame out of ``raw``; None while it is still incomplete.

    Raises:
        ProtocolError: oversized or malformed frame.
    """
    if len(raw) < HEADER.size:
        return None
    (hlen,) = HEADER.unpack_from(raw)
    if hlen > MAX_HEADER:
        raise ProtocolError(f"frame header of {hlen} bytes is too large")
    if len(raw) < HEADER.size + hlen:
        return None
    try:
        message = json.loads(raw[HEADER.size:HEADER.size + hlen].decode("utf-8"))
    except (ValueError, RecursionError) as exc:  # not UTF-8, not JSON, nested too deep, a 10**5-digit int
        raise ProtocolError(f"frame header is not JSON: {exc}"[:500]) from exc
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
    """Blocking read of exactly one frame from a binary stream; None at EOF (worker side).

    Reads no byte past the frame, so consecutive frames on one stream are all seen.
    """
    raw = _read_exact(stream, HEADER.size)
    if raw is None:
        return None
    while (need := _missing(raw)) > 0:
        more = _read_exact(stream, need)
        if more is None:
            return None
        raw += more
    return parse_frame(raw)


def _missing(raw: bytes) -> int:
    """How many more bytes the frame that starts ``raw`` needs (0 when complete)."""
    (hlen,) = HEADER.unpack_from(raw)
    if hlen > MAX_HEADER:
        raise ProtocolError(f"frame header of {hlen} bytes is too large")
    if len(raw) < HEADER.size + hlen:
        return HEADER.size + hlen - len(raw)
    parsed = parse_frame(raw)
    if parsed is not None:
        return 0
    message = json.loads(raw[HEADER.size:HEADER.size + hlen].decode("utf-8"))
    return HEADER.size + hlen + sum(message["blobs"]) - len(raw)


def _read_exact(stream, n: int) -> bytes | None:
    """Exactly ``n`` bytes from ``stream``, or None at EOF; linear in ``n`` (a bytes ``+=`` loop was
    quadratic: 9 s for a 50 MB frame)."""
    out = bytearray()
    while len(out) < n:
        chunk = stream.read(n - len(out))
        if not chunk:
            return None
        out += chunk  # a bytearray grows in place
    return bytes(out)


# --------------------------------------------------------------------------- worker


class _BlockImports:
    """A meta-path finder that refuses the exercise's forbidden packages (e.g. torch)."""

    def __init__(self, names):
        self.names = set(names)

    def find_spec(self, fullname, path=None, target=None):
        if fullname.split(".")[0] in self.names:
            raise ImportError(f"importing {fullname!r} is not allowed in this exercise")
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
        with contextlib.suppress(ValueError, OSError):  # a limit the OS will not lower (e.g. RLIMIT_AS on macOS): reported by the judge
            resource.setrlimit(which, (value, value))
    uid = cfg.get("uid")
    if uid is not None and os.getuid() == 0:
        os.setgroups([])
        os.setresgid(uid, uid, uid)
        os.setresuid(uid, uid, uid)


#: Student frames kept in an error's traceback (the last ones: where it failed).
TRACEBACK_FRAMES = 8


def _error(exc: BaseException, submission_dir: str) -> dict:
    """The error reply for ``exc``: type, message, the student's last frames, base classes.

    Never raises, and stays fast on a RecursionError a million frames deep (only the last
    few of the student's frames are formatted).
    """
    import collections
    import traceback

    try:
        message = str(exc)[:2000]
    except BaseException:  # noqa: BLE001 - a student's exception whose __str__ fails
        message = "(the exception's message could not be shown)"
    out = {"type": type(exc).__name__[:200], "message": message, "traceback": "",
           "bases": [c.__name__ for c in type(exc).__mro__][:12],
           "errno": exc.errno if isinstance(exc, OSError) and isinstance(exc.errno, int) else None}
    # A best effort: the type and message are what matter (a student's exception may break anything).
    with contextlib.suppress(BaseException):
        last = collections.deque(maxlen=TRACEBACK_FRAMES)
        total = 0
        for frame, lineno in traceback.walk_tb(exc.__traceback__):
            if frame.f_code.co_filename.startswith(submission_dir):
                last.append((frame, lineno))
                total += 1
        lines = []
        if total > len(last):
            lines.append(f"[... {total - len(last):,} earlier frames of your code not shown]\n")
        lines += traceback.StackSummary.extract(iter(last), limit=TRACEBACK_FRAMES).format()
        lines.append(f"{out['type']}: {message}\n")
        out["traceback"] = "".join(lines)[-4000:]
    return out


def _handle(message: dict, blobs: list[bytes], state: dict, cfg: dict) -> dict:
    """Run one request; returns the reply (without its id)."""
    import importlib
    import inspect

    op = message.get("op")
    if op == "load":
        state["student"] = state["module"] = importlib.import_module(cfg["module"])
        if cfg.get("harness"):  # the exercise's own code, in front of the student's module
            import importlib.util

            spec = importlib.util.spec_from_file_location("grader_harness", cfg["harness"])
            state["module"] = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(state["module"])
        return {"ok": True, "value": sorted(n for n, v in vars(state["module"]).items()
                                            if callable(v) and not n.startswith("_"))}
    if op == "value":
        name = str(message["name"])
        if name.startswith("_"):
            raise AttributeError(f"{name} is private")
        return {"ok": True, "value": getattr(state["student"], name)}
    fn = getattr(state["module"], message["name"])
    if op == "signature":
        return {"ok": True, "value": [[p.name, p.kind.name, p.default is not inspect.Parameter.empty]
                                      for p in inspect.signature(fn).parameters.values()]}
    if op == "call":
        args = decode({"__list__": message["args"]}, blobs)
        kwargs = decode({"__dict__": message["kwargs"]}, blobs)
        return {"ok": True, "value": fn(*args, **kwargs)}
    raise ValueError(f"unknown op {op!r}")


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
    import faulthandler

    sys.path.extend(d for d in cfg.get("site_packages", []) if d not in sys.path)  # run with -S (no site)
    import numpy  # noqa: F401  (imported before the submission can shadow it)

    for name in cfg.get("preload", []):  # e.g. torch for exercise 4: not part of the student's import time
        __import__(name)

    faulthandler.enable(file=sys.stderr)  # a segfault (deep recursion) prints where it happened
    sys.meta_path.insert(0, _BlockImports(cfg.get("forbidden_imports", [])))
    submission_dir = cfg["submission_dir"]
    sys.path.append(submission_dir)  # appended: a submission's numpy.py cannot shadow numpy
    worker_pid = os.getpid()
    state: dict = {"module": None}
    write_frame(proto_out, {"ready": True, "id": 0})  # the judge times the import from here
    while True:
        request = read_frame(proto_in)
        if request is None:
            return 0
        message, blobs = request
        try:
            reply = _handle(message, blobs, state, cfg)
        except BaseException as exc:  # noqa: BLE001 - student code may raise anything, even SystemExit
            reply = {"ok": False, "error": _error(exc, submission_dir)}
        else:
            try:
                out_blobs: list[bytes] = []
                reply["value"] = encode(reply["value"], out_blobs)
                data = frame_bytes(dict(reply, id=message.get("id")), out_blobs)
            except BaseException as exc:  # noqa: BLE001 - e.g. an int of 10**5 digits, a list nested 10**4 deep
                err = _error(exc, submission_dir)
                reply = {"ok": False, "error": dict(err, type="UnsendableValue",
                                                    message=f"{err['type']}: {err['message']}"[:2000])}
        if not reply["ok"]:
            data = frame_bytes(dict(reply, id=message.get("id")))
        if os.getpid() != worker_pid:
            # A child forked by the student's code got back here: it must not reply (its
            # protocol files are closed) nor read the next request. It just ends.
            _flush_quietly()
            os._exit(0 if reply.get("ok") else 1)
        _flush_quietly()
        proto_out.write(data)
        proto_out.flush()


def _flush_quietly() -> None:
    """Flush the student's stdout; a replaced or broken sys.stdout is the student's business."""
    with contextlib.suppress(BaseException):  # noqa: BLE001
        sys.stdout.flush()


if __name__ == "__main__":
    sys.exit(main(sys.argv))
