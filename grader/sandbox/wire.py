"""The wire format between the judge and a sandbox process. Standard library and NumPy only.

This file is copied into every sandbox next to :mod:`grader.sandbox.worker` and must stay
importable without the rest of the package. Both sides speak it; the judge treats every byte
that comes back as hostile (student code runs in the worker and can forge any frame).

One frame per message::

    8-byte big-endian header length | header (UTF-8 JSON) | blob 0 | blob 1 | ...

``header["blobs"]`` lists the blob lengths. Arrays travel as ``.npy`` blobs written and read
with ``allow_pickle=False``; everything else is JSON. Nothing is ever unpickled.

Text is made safe where it enters: a lone surrogate (``"\\udcff"``, valid in JSON and in a
Python ``str`` but not encodable as UTF-8) in a header or in a ``<U`` array becomes U+FFFD, so no
writer downstream (HTML report, JSON, SQLite, CSV) can fail on what a submission sent.
"""
from __future__ import annotations

import io
import json
import re
import struct

HEADER = struct.Struct(">Q")
#: Largest frame either side accepts, bytes.
MAX_FRAME = 256 * 1024 * 1024
#: Largest JSON header, bytes: arrays travel as blobs, so a real header is small.
MAX_HEADER = 1024 * 1024


class ProtocolError(Exception):
    """A frame that does not follow the wire format (truncated, too big, not JSON)."""


class FrameTooLarge(ProtocolError):
    """A frame larger than the reader accepts (refused before its blobs are read)."""


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
        blobs.append(npy_bytes(arr))
        key = "__ndarray__" if isinstance(value, np.ndarray) else "__npscalar__"
        return {key: len(blobs) - 1}
    if isinstance(value, (list, tuple)):
        items = [encode(v, blobs) for v in value]
        return {"__list__": items} if isinstance(value, list) else {"__tuple__": items}
    if isinstance(value, dict) and all(isinstance(k, str) for k in value):
        return {"__dict__": {k: encode(v, blobs) for k, v in value.items()}}
    return {"__unsupported__": type(value).__name__}


#: .npy headers already written, by (dtype, shape): a call's arrays repeat, and ``np.save`` spends
#: ~35 µs building each header (most of the cost of sending a small array).
_npy_headers: dict[tuple, bytes] = {}
_NPY_HEADERS_KEPT = 4096


def npy_bytes(arr) -> bytes:
    """``arr`` as the bytes ``np.save(..., allow_pickle=False)`` writes (format 1.0, C order), for a
    plain dtype; any other dtype (structured, sub-array) goes through ``np.save`` itself."""
    import numpy as np

    dtype = arr.dtype
    if dtype.fields is not None or dtype.subdtype is not None:
        buf = io.BytesIO()
        np.save(buf, arr, allow_pickle=False)
        return buf.getvalue()
    key = (dtype.str, arr.shape)
    header = _npy_headers.get(key)
    if header is None:
        from numpy.lib import format as npy_format

        buf = io.BytesIO()
        npy_format.write_array_header_1_0(buf, {"descr": npy_format.dtype_to_descr(dtype),
                                                "fortran_order": False, "shape": arr.shape})
        header = buf.getvalue()
        if len(_npy_headers) < _NPY_HEADERS_KEPT:
            _npy_headers[key] = header
    return header + arr.tobytes(order="C")


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
        if arr.dtype.kind == "U" and arr.dtype.itemsize:  # code points that are no character (surrogates, > U+10FFFF) become U+FFFD
            arr = arr.astype(arr.dtype.newbyteorder("="))
            points = arr.view(np.uint32)
            points[((points >= 0xD800) & (points <= 0xDFFF)) | (points > 0x10FFFF)] = 0xFFFD
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


def parse_frame(raw: bytes, max_frame: int = MAX_FRAME) -> tuple[dict, list[bytes]] | None:
    """Split a complete frame out of ``raw``; None while it is still incomplete.

    The frame's size is checked against ``max_frame`` as soon as its header is complete, so a
    reader that calls this as bytes arrive never buffers more than ``max_frame`` (plus the
    header) of a frame it will refuse. Strings in the header are made safe (:func:`safe_text`).

    Raises:
        ProtocolError: oversized or malformed frame.
    """
    if len(raw) < HEADER.size:
        return None
    (hlen,) = HEADER.unpack_from(raw)
    if hlen > MAX_HEADER:
        raise ProtocolError(f"frame header of {hlen} bytes is too large")
    if HEADER.size + hlen > max_frame:
        raise FrameTooLarge(f"{HEADER.size + hlen:,} bytes, too large: at most {max_frame:,} accepted")
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
    if end > max_frame:
        raise FrameTooLarge(f"{end:,} bytes, too large: at most {max_frame:,} accepted")
    if len(raw) < end:
        return None
    blobs, pos = [], HEADER.size + hlen
    for size in sizes:
        blobs.append(raw[pos:pos + size])
        pos += size
    try:
        return _safe(message), blobs
    except RecursionError as exc:
        raise ProtocolError("frame header nested too deeply") from exc


_SURROGATE = re.compile("[\ud800-\udfff]")


def safe_text(text: str) -> str:
    """``text`` with every lone surrogate replaced by U+FFFD (then it encodes as UTF-8)."""
    return text if text.isascii() else _SURROGATE.sub("\ufffd", text)


def _safe(value):
    """``value`` (decoded JSON) with :func:`safe_text` applied to every string and key."""
    if isinstance(value, str):
        return safe_text(value)
    if isinstance(value, list):
        return [_safe(v) for v in value]
    if isinstance(value, dict):
        return {safe_text(k): _safe(v) for k, v in value.items()}
    return value


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
