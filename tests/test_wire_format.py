"""The sandbox wire format: .npy blobs + JSON, framed; nothing is ever unpickled.

The judge decodes whatever the sandbox sends, and the sandbox runs student code, so the
decoder is tested on hostile input too: crafted pickles, truncated and oversized frames.
"""
import io
import time
import json
import math
import os
import pickle
import struct

import numpy as np
import pytest

from grader.sandbox.wire import (HEADER, FrameTooLarge, MAX_FRAME, ProtocolError, Unsupported, decode, encode, load_npy,
                                   npy_bytes, parse_frame, read_frame, write_frame)


def round_trip(value):
    """encode -> frame -> bytes -> frame -> decode, as judge and sandbox do."""
    blobs = []
    message = {"ok": True, "value": encode(value, blobs)}
    stream = io.BytesIO()
    write_frame(stream, message, blobs)
    stream.seek(0)
    got_message, got_blobs = read_frame(stream)
    return decode(got_message["value"], got_blobs)


ARRAYS = {
    "float64 2-d": np.arange(6, dtype=np.float64).reshape(2, 3) / 7,
    "float32": np.array([1.5, -2.25, 3e-8], dtype=np.float32),
    "int64": np.array([[-(2**62), 0], [1, 2**62]], dtype=np.int64),
    "int32": np.array([1, 2, 3], dtype=np.int32),
    "uint8": np.array([0, 255], dtype=np.uint8),
    "bool": np.array([[True, False], [False, True]]),
    "0-d float": np.array(3.25),
    "0-d int": np.array(7, dtype=np.int16),
    "empty": np.zeros((0, 5)),
    "empty 1-d": np.array([], dtype=np.float32),
    "4-d": np.arange(2 * 3 * 4 * 5, dtype=np.float64).reshape(2, 3, 4, 5),
    "fortran order": np.asfortranarray(np.arange(12.0).reshape(3, 4)),
    "non-contiguous view": np.arange(20.0).reshape(4, 5)[:, ::2],
    "big-endian": np.array([1.0, 2.0], dtype=">f8"),
    "complex": np.array([1 + 2j]),
    "nan and inf": np.array([np.nan, np.inf, -np.inf, 0.0]),
}


@pytest.mark.parametrize("name", ARRAYS)
def test_arrays_round_trip_exactly(name):
    arr = ARRAYS[name]
    got = round_trip(arr)
    assert type(got) is np.ndarray
    assert got.dtype == arr.dtype, name
    assert got.shape == arr.shape
    np.testing.assert_array_equal(got, arr)  # NaN equals NaN here; bits are kept exactly


def test_float32_is_not_silently_widened():
    # A float32 result must reach the judge as float32, or the float32 diagnosis could never fire.
    got = round_trip(np.float32(1) / np.float32(3))
    assert type(got) is np.float32
    assert got == np.float32(1) / np.float32(3)


@pytest.mark.parametrize("scalar", [np.int64(-5), np.bool_(True), np.float32(0.1), np.uint8(200)])
def test_numpy_scalars_keep_their_type(scalar):
    got = round_trip(scalar)
    assert type(got) is type(scalar)
    assert got == scalar


def test_python_values_and_nesting():
    value = {
        "list": [1, 2.5, "three", None, True, False],
        "tuple": (1, (2, 3), [4]),
        "nested": {"a": {"b": [np.array([1.0, 2.0]), (np.array([[True]]),)]}},
        "big int": 2**80,
        "text": "héllo ✓",
        "empty": [[], (), {}],
    }
    got = round_trip(value)
    assert got["list"] == [1, 2.5, "three", None, True, False]
    assert type(got["list"][4]) is bool
    assert got["tuple"] == (1, (2, 3), [4])          # tuples stay tuples, lists stay lists
    assert type(got["tuple"][1]) is tuple and type(got["tuple"][2]) is list
    inner = got["nested"]["a"]["b"]
    np.testing.assert_array_equal(inner[0], [1.0, 2.0])
    assert type(inner[1]) is tuple and inner[1][0].dtype == bool
    assert got["big int"] == 2**80
    assert got["text"] == "héllo ✓"
    assert got["empty"] == [[], (), {}]


def test_nan_and_inf_floats_survive_json():
    got = round_trip([float("nan"), float("inf"), float("-inf"), -0.0])
    assert math.isnan(got[0])
    assert got[1] == math.inf and got[2] == -math.inf
    assert got[3] == 0.0 and math.copysign(1, got[3]) == -1


class Custom:
    pass


@pytest.mark.parametrize("value, type_name", [
    (np.array([1, "a", None], dtype=object), "object"),
    (np.array([{"a": 1}], dtype=object), "object"),
    (Custom(), "Custom"),
    ({1: "non-string key"}, "dict"),
    ({1, 2}, "set"),
    (1 + 2j, "complex"),
    (lambda x: x, "function"),
])
def test_unsupported_values_become_markers(value, type_name):
    blobs = []
    encode(value, blobs)
    assert blobs == []  # nothing of an unsupported value is sent, in particular no pickle
    got = round_trip(value)
    assert isinstance(got, Unsupported)
    assert type_name in got.type_name
    assert type_name in repr(got)


def test_unsupported_inside_a_container_keeps_the_rest():
    got = round_trip([np.array([1.0]), Custom()])
    np.testing.assert_array_equal(got[0], [1.0])
    assert isinstance(got[1], Unsupported) and got[1].type_name == "Custom"


# ---------------------------------------------------------------- nothing is unpickled
def _pickled_npy(tmp_path):
    """A genuine .npy file of an object array whose unpickling would create a folder."""
    marker = tmp_path / "unpickled"

    class Boom:
        def __reduce__(self):
            return (os.mkdir, (str(marker),))

    arr = np.empty(1, dtype=object)
    arr[0] = Boom()
    buf = io.BytesIO()
    np.save(buf, arr, allow_pickle=True)
    return buf.getvalue(), marker


def test_pickled_object_array_is_refused_not_unpickled(tmp_path):
    blob, marker = _pickled_npy(tmp_path)
    # Sanity: the blob really is a pickle bomb when loaded the unsafe way.
    np.load(io.BytesIO(blob), allow_pickle=True)
    assert marker.is_dir()
    marker.rmdir()

    with pytest.raises(ProtocolError, match="invalid .npy"):
        decode({"__ndarray__": 0}, [blob])
    with pytest.raises(ProtocolError):
        decode({"__npscalar__": 0}, [blob])
    assert not marker.exists()


def test_raw_pickle_blob_is_refused(tmp_path):
    marker = tmp_path / "unpickled"

    class Boom:
        def __reduce__(self):
            return (os.mkdir, (str(marker),))

    with pytest.raises(ProtocolError):
        decode({"__ndarray__": 0}, [pickle.dumps(Boom())])
    assert not marker.exists()


def test_truncated_npy_blob_is_a_protocol_error():
    buf = io.BytesIO()
    np.save(buf, np.arange(10.0))
    blob = buf.getvalue()
    with pytest.raises(ProtocolError):
        decode({"__ndarray__": 0}, [blob[:-8]])   # data cut short
    with pytest.raises(ProtocolError):
        decode({"__ndarray__": 0}, [blob[:20]])   # header cut short


@pytest.mark.parametrize("data, blobs", [
    ({"__ndarray__": 1}, [b""]),        # index out of range
    ({"__ndarray__": -1}, [b""]),
    ({"__ndarray__": "0"}, [b""]),
    ({"__nope__": 1}, []),              # unknown tag
    ({"__list__": [], "__tuple__": []}, []),  # two tags
    ([1, 2], []),                       # bare JSON list
])
def test_malformed_values_are_protocol_errors(data, blobs):
    with pytest.raises(ProtocolError):
        decode(data, blobs)


# Student code runs in the worker process, so it can replace the worker's `encode` or write
# frames of its own: whatever arrives, decode must raise ProtocolError and nothing else.
def _npy_header(shape, descr="<f8") -> bytes:
    buf = io.BytesIO()
    np.lib.format.write_array_header_1_0(buf, {"descr": descr, "fortran_order": False, "shape": shape})
    return buf.getvalue()


def _npz() -> bytes:
    buf = io.BytesIO()
    np.savez(buf, a=np.arange(3.0))
    return buf.getvalue()


@pytest.mark.parametrize("data, blobs", [
    pytest.param({"__ndarray__": 0}, [b""], id="empty blob"),
    pytest.param({"__ndarray__": 0}, [b"not an npy file at all"], id="garbage blob"),
    pytest.param({"__ndarray__": 0}, [_npz()], id="npz archive"),
    # 8 PB claimed, 80 bytes sent: must be refused, not allocated.
    pytest.param({"__ndarray__": 0}, [_npy_header((10**15,)) + b"\0" * 80], id="huge shape"),
    pytest.param({"__ndarray__": 0}, [_npy_header((3,)) + b"\0" * 8], id="shape larger than data"),
    pytest.param({"__npscalar__": 0}, [_npy_header((2,)) + b"\0" * 16], id="scalar that is not 0-d"),
    pytest.param({"__ndarray__": True}, [_npy_header(()) + b"\0" * 8], id="bool as blob index"),
    pytest.param({"__list__": 5}, [], id="list tag holding an int"),
    pytest.param({"__tuple__": "abc"}, [], id="tuple tag holding a string"),
    pytest.param({"__dict__": [1]}, [], id="dict tag holding a list"),
])
def test_crafted_values_are_protocol_errors(data, blobs):
    with pytest.raises(ProtocolError):
        decode(data, blobs)


def test_deeply_nested_value_is_a_protocol_error():
    data = {"__list__": []}
    for _ in range(100_000):
        data = {"__list__": [data]}
    with pytest.raises(ProtocolError):
        decode(data, [])


# ---------------------------------------------------------------- framing
def frame(header: bytes, *blobs: bytes) -> bytes:
    """A frame built by hand from the documented layout (8-byte big-endian length, header, blobs)."""
    return struct.pack(">Q", len(header)) + header + b"".join(blobs)


def test_parse_frame_reads_a_hand_built_frame():
    raw = frame(json.dumps({"op": "call", "blobs": [3, 0, 2]}).encode(), b"abc", b"", b"de")
    message, blobs = parse_frame(raw)
    assert message == {"op": "call", "blobs": [3, 0, 2]}
    assert blobs == [b"abc", b"", b"de"]
    # Bytes after the frame belong to the next one and are not consumed into this one.
    message, blobs = parse_frame(raw + b"\0\0\0")
    assert blobs == [b"abc", b"", b"de"]


def test_parse_frame_returns_none_until_the_frame_is_complete():
    raw = frame(json.dumps({"ok": True, "blobs": [4]}).encode(), b"1234")
    for cut in range(len(raw)):  # every proper prefix: length, header and blob cut short
        assert parse_frame(raw[:cut]) is None, cut
    assert parse_frame(raw) == ({"ok": True, "blobs": [4]}, [b"1234"])


def test_parse_frame_refuses_an_oversized_header_before_it_arrives():
    # Only the 8 length bytes are there: a header claimed larger than MAX_FRAME is refused at once.
    with pytest.raises(ProtocolError, match="too large"):
        parse_frame(struct.pack(">Q", MAX_FRAME + 1))
    with pytest.raises(ProtocolError, match="too large"):
        parse_frame(struct.pack(">Q", 2**64 - 1) + b"{}")


def test_parse_frame_refuses_blobs_larger_than_the_limit_before_they_arrive():
    header = json.dumps({"ok": True, "blobs": [MAX_FRAME // 2, MAX_FRAME // 2 + 1]}).encode()
    with pytest.raises(ProtocolError, match="too large"):
        parse_frame(frame(header))


@pytest.mark.parametrize("header", [
    b"\xff\xfe\x00garbage",          # not UTF-8
    b"{not json",                    # not JSON
    b"[1, 2, 3]",                    # JSON but not an object
    b'"text"',
    b'{"blobs": "12"}',              # blob list of the wrong type
    b'{"blobs": [-1]}',              # negative size
    b'{"blobs": [1.5]}',
    b'{"blobs": [null]}',
    b"[" * 100_000 + b"]" * 100_000,  # nested too deep for the JSON parser
])
def test_parse_frame_garbage_is_a_protocol_error(header):
    with pytest.raises(ProtocolError):
        parse_frame(frame(header) + b"x" * 8)


def test_frame_without_blob_list_has_no_blobs():
    assert parse_frame(frame(b'{"ok": true, "blobs": []}')) == ({"ok": True, "blobs": []}, [])
    assert parse_frame(frame(b'{"ok": true}')) == ({"ok": True}, [])


def test_write_frame_then_read_frame_over_bytesio():
    arr = np.linspace(0, 1, 7)
    blobs = []
    value = encode({"x": arr, "n": 3}, blobs)
    stream = io.BytesIO()
    write_frame(stream, {"op": "call", "name": "f", "args": [value], "kwargs": {}}, blobs)
    raw = stream.getvalue()
    # The layout by hand: 8-byte big-endian header length, then the JSON header.
    (hlen,) = struct.unpack(">Q", raw[:8])
    header = json.loads(raw[8:8 + hlen])
    assert header["blobs"] == [len(b) for b in blobs]
    assert len(raw) == 8 + hlen + sum(header["blobs"])

    stream.seek(0)
    message, got_blobs = read_frame(stream)
    assert message["op"] == "call" and message["name"] == "f"
    decoded = decode(message["args"][0], got_blobs)
    np.testing.assert_array_equal(decoded["x"], arr)
    assert decoded["n"] == 3
    assert read_frame(stream) is None  # EOF


def test_read_frame_at_eof_and_on_a_truncated_stream():
    assert read_frame(io.BytesIO(b"")) is None
    stream = io.BytesIO()
    write_frame(stream, {"ok": True}, [b"blob"])
    assert read_frame(io.BytesIO(stream.getvalue()[:-1])) is None  # ends inside the blob


class Trickle(io.RawIOBase):
    """A stream that hands out one byte per read, like a slow pipe."""

    def __init__(self, data):
        self.data = data

    def readable(self):
        return True

    def read(self, n=-1):
        chunk, self.data = self.data[:1], self.data[1:]
        return chunk


def test_read_frame_assembles_a_frame_from_small_reads():
    stream = io.BytesIO()
    write_frame(stream, {"ok": True, "value": "done"}, [b"xyz"])
    message, blobs = read_frame(Trickle(stream.getvalue()))
    assert message["value"] == "done" and blobs == [b"xyz"]


def test_read_frame_reads_consecutive_frames():
    stream = io.BytesIO()
    write_frame(stream, {"n": 1})
    write_frame(stream, {"n": 2})
    stream.seek(0)
    assert read_frame(stream)[0]["n"] == 1
    assert read_frame(stream)[0]["n"] == 2


@pytest.mark.parametrize("value", [
    np.arange(6.0).reshape(2, 3), np.arange(6.0).reshape(2, 3).T, np.zeros((0, 3)), np.array(2.5),
    np.array(["ab", "c"]), np.array([True, False]), np.arange(4, dtype=">i4"), np.arange(3, dtype=np.complex128),
    np.zeros(2, dtype="M8[ns]"), np.zeros(2, dtype=[("a", "<f8"), ("b", "<i2")]),
], ids=["c-order", "fortran-order", "empty", "0-d", "unicode", "bool", "big-endian", "complex", "datetime",
        "structured"])
def test_arrays_decode_as_numpys_own_loader_reads_them(value):
    """decode's header parser (a regular expression for np.save's usual header, numpy.lib.format
    for the rest) agrees with np.load on dtype, shape, order and values, and gives writable arrays."""
    blobs = []
    got = decode(encode(value, blobs), blobs)
    want = np.load(io.BytesIO(blobs[0]), allow_pickle=False)
    assert got.dtype == want.dtype and got.shape == want.shape
    assert got.flags.f_contiguous == want.flags.f_contiguous
    np.testing.assert_array_equal(got, want)
    assert got.flags.writeable


def _npy_v2(header: bytes, data: bytes) -> bytes:
    """A .npy 2.0 blob written by hand (magic, version, 4-byte header length, header, data)."""
    return b"\x93NUMPY\x02\x00" + len(header).to_bytes(4, "little") + header + data


def test_a_header_with_a_million_dimensions_is_refused_at_once():
    """The header's length is checked before it is parsed (a student once could make the judge
    spend gigabytes and minutes on a 30 MB header)."""
    header = b"{'descr': '<f8', 'fortran_order': False, 'shape': (" + b"1, " * 1_000_000 + b"1,), }\n"
    started = time.perf_counter()
    with pytest.raises(ProtocolError, match="longer than"):
        decode({"__ndarray__": 0}, [_npy_v2(header, b"\0" * 8)])
    assert time.perf_counter() - started < 5  # parsing it took minutes; loose enough for a loaded machine


def test_more_than_64_dimensions_are_refused():
    header = b"{'descr': '<f8', 'fortran_order': False, 'shape': (" + b"1, " * 70 + b"1,), }\n"
    with pytest.raises(ProtocolError):
        decode({"__ndarray__": 0}, [_npy_v2(header, b"\0" * 8)])


def test_code_points_that_are_no_character_become_the_replacement_character():
    """A '<U' array may hold any 32-bit values: beyond U+10FFFF, or a lone surrogate that no writer
    can encode as UTF-8. They arrive as U+FFFD; valid characters are kept."""
    header = b"{'descr': '<U1', 'fortran_order': False, 'shape': (), }\n"
    assert decode({"__npscalar__": 0}, [_npy_v2(header, b"\xff\xff\xff\xff")]) == "\ufffd"
    header = b"{'descr': '>U2', 'fortran_order': False, 'shape': (2,), }\n"
    data = b"".join(cp.to_bytes(4, "big") for cp in (0xDCFF, 0x41, 0x1F600, 0xD800))
    text = decode({"__ndarray__": 0}, [_npy_v2(header, data)])
    assert text.tolist() == ["\ufffdA", "\U0001F600\ufffd"]
    "".join(text.tolist()).encode("utf-8")  # no UnicodeEncodeError


def test_lone_surrogates_in_a_header_become_the_replacement_character():
    """JSON may escape a lone surrogate (a student's `raise ValueError("\\udcff")`); Python's json reads
    it into a str that cannot be written as UTF-8. Every string and key of the header is made safe
    where the frame is parsed, so no writer of the judge can fail on it; a valid pair is kept."""
    header = b'{"ok": false, "error": {"message": "bad \\udcff end", "\\ud800key": ["\\ud83d\\ude00", 1]}}'
    message, _ = parse_frame(HEADER.pack(len(header)) + header)
    assert message["error"] == {"message": "bad \ufffd end", "\ufffdkey": ["\U0001F600", 1]}
    json.dumps(message, ensure_ascii=False).encode("utf-8")


def test_a_frame_over_the_readers_cap_is_refused_from_its_header():
    """The judge passes the exercise's reply cap: a frame whose header announces more is refused
    before a byte of its blobs has arrived (a forged 255 MiB frame once cost the judge 1.2 GB)."""
    header = json.dumps({"ok": True, "blobs": [5 * 1024 * 1024]}).encode()
    with pytest.raises(FrameTooLarge, match="too large: at most 4,194,304 accepted"):
        parse_frame(HEADER.pack(len(header)) + header, max_frame=4 * 1024 * 1024)
    assert parse_frame(HEADER.pack(len(header)) + header, max_frame=8 * 1024 * 1024) is None  # not complete yet


@pytest.mark.parametrize("arr", [
    np.arange(6.0).reshape(2, 3), np.float32(2.5), np.zeros((2, 0, 3), np.int8), np.ones((2, 3), ">i4"),
    np.array([True, False]), np.array(["héllo", "x"]), np.arange(12.0).reshape(3, 4).T,  # F-ordered
    np.array([(1, 2.0)], dtype=[("a", "<i4"), ("b", "<f8")]), np.zeros(3, np.complex128),
], ids=["f8", "f4_scalar", "empty", "big_endian", "bool", "unicode", "fortran", "structured", "complex"])
def test_npy_bytes_are_what_np_save_writes(arr):
    arr = np.asarray(arr)
    buf = io.BytesIO()
    np.save(buf, arr, allow_pickle=False)
    fast = npy_bytes(arr)
    if arr.flags.c_contiguous:
        assert fast == buf.getvalue()  # byte for byte
    got = load_npy(fast)
    assert got.dtype == arr.dtype and got.shape == arr.shape and np.array_equal(got, arr)
    assert got.flags.writeable
