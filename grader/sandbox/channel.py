"""The judge's end of a sandbox's pipes: requests written and replies read against a deadline, and
the student's output drained into a capped buffer.

Nothing here waits without a deadline: a worker that stops reading, or a grandchild that keeps the
pipes open after the worker died, costs at most the call's time limit (DESIGN.md, "Isolation").
"""
from __future__ import annotations

import contextlib
import os
import selectors
import threading
import time

from . import messages
from .wire import HEADER, ProtocolError, _missing, parse_frame


class OutputDrain(threading.Thread):
    """Reads the worker's output pipe until EOF or stop, keeping the first ``cap`` bytes.

    The thread owns the pipe and closes it when it ends: the fd is never closed while it
    may still be read (its number is soon reused by the next worker's pipes).
    """

    #: Seconds spent after a stop reading what is still in the pipe (a crash's last words).
    SWEEP = 0.2

    def __init__(self, stream, cap: int):
        super().__init__(daemon=True)
        self.stream, self.cap = stream, cap
        self.kept = bytearray()
        self.total = 0
        self.stopped = threading.Event()

    def run(self) -> None:
        try:
            fd = self.stream.fileno()
            sweep_until = None
            with selectors.DefaultSelector() as sel:
                sel.register(fd, selectors.EVENT_READ)
                while True:
                    if sweep_until is None and self.stopped.is_set():
                        sweep_until = time.monotonic() + self.SWEEP
                    if sweep_until is not None and time.monotonic() > sweep_until:
                        break
                    if not sel.select(timeout=0 if sweep_until is not None else 0.1):
                        if sweep_until is not None:
                            break  # stopped and nothing left to read
                        continue
                    try:
                        chunk = os.read(fd, 1 << 20)
                    except OSError:
                        break
                    if not chunk:
                        break
                    self.total += len(chunk)
                    room = self.cap - len(self.kept)
                    if room > 0:
                        self.kept += chunk[:room]
        finally:
            with contextlib.suppress(OSError):
                self.stream.close()

    def text(self) -> str:
        """What was kept, for the report (see :func:`grader.sandbox.messages.output_text`)."""
        return messages.output_text(bytes(self.kept), self.total)


class Timeout(Exception):
    """The call's deadline passed while sending or waiting."""


class Closed(Exception):
    """The worker's end of the protocol is gone (it exited, or closed the pipe)."""


def _frame_need(raw: bytearray) -> int:
    """How many bytes the frame starting ``raw`` needs, as far as ``raw`` tells (>= len(raw) + 1)."""
    if len(raw) < HEADER.size:
        return HEADER.size
    # The header was valid: parse_frame checked it before asking.
    return len(raw) + _missing(bytes(raw))


def send(fd: int, data: bytes, deadline: float) -> None:
    """Write ``data`` to the non-blocking ``fd`` before ``deadline`` (``time.monotonic``).

    Raises:
        Timeout: the deadline passed (the reader stopped reading).
        Closed: the reader is gone (EPIPE).
    """
    view = memoryview(data)
    with selectors.DefaultSelector() as sel:
        sel.register(fd, selectors.EVENT_WRITE)
        while view:
            left = deadline - time.monotonic()
            if left <= 0:
                raise Timeout
            if not sel.select(timeout=min(left, 0.5)):
                continue
            try:
                view = view[os.write(fd, view[: 1 << 20]):]
            except BlockingIOError:
                continue
            except OSError as exc:  # EPIPE: the worker is gone
                raise Closed from exc


def receive(fd: int, deadline: float, expected_id: int, max_frame: int, ended) -> tuple[dict, list[bytes]]:
    """Read one whole reply frame from ``fd`` before ``deadline``; ``ended()`` tells whether the
    worker has exited (checked while nothing arrives). A frame larger than ``max_frame`` bytes is
    refused from its header, before its blobs are read.

    Raises:
        Timeout, Closed: as named.
        FrameTooLarge: the frame announces more than ``max_frame`` bytes.
        ProtocolError: the bytes are not a frame, or not the reply to ``expected_id``.
    """
    raw = bytearray()
    need = HEADER.size
    with selectors.DefaultSelector() as sel:
        sel.register(fd, selectors.EVENT_READ)
        while True:
            if len(raw) >= need:  # parse only when enough has arrived: linear in the reply's size
                parsed = parse_frame(bytes(raw), max_frame)
                if parsed is not None:
                    if parsed[0].get("id") != expected_id:
                        raise ProtocolError("a reply out of turn")
                    return parsed
                need = _frame_need(raw)
                continue
            left = deadline - time.monotonic()
            if left <= 0:
                raise Timeout
            if not sel.select(timeout=min(left, 0.2)):
                if ended():
                    raise Closed  # exited, though something (a grandchild) still holds the pipe
                continue
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                raise Closed
            raw += chunk
