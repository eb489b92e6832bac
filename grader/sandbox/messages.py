"""What the student reads when their code fails in the sandbox: one sentence per way of failing.

Every function here only formats; the facts (an error reply, an exit status, captured output) come
from :mod:`grader.sandbox.session`, already made safe (:func:`grader.sandbox.wire.safe_text`).
"""
from __future__ import annotations

import errno
import signal

from ..exercises import Limits

#: Control characters shown escaped in the captured output (``\x00``); tab and newline are kept.
_CONTROL = {c: f"\\x{c:02x}" for c in [*range(0, 9), *range(11, 32), 127]}


def output_text(kept: bytes, total: int) -> str:
    """Captured output for the report: invalid UTF-8 replaced, control characters escaped, and a
    line saying how much was left out when ``total`` bytes came and only ``kept`` was kept."""
    out = kept.decode("utf-8", errors="replace").replace("\r\n", "\n").replace("\r", "\n")
    out = out.translate(_CONTROL)
    if total > len(kept):
        out += f"\n[... {total - len(kept):,} more bytes of output not shown]"
    return out


def raised(name: str, err: dict, limits: Limits) -> str:
    """The sentence for an exception raised by ``name()``; ``err`` as
    :meth:`grader.sandbox.session.Sandbox._error_fields` returns it."""
    etype, emsg, bases = err["type"], err["message"], err["bases"]
    if "NotImplementedError" in bases:
        return f"{name}() is not implemented yet (it raises NotImplementedError)."
    if "MemoryError" in bases:
        return f"{name}() ran out of memory (limit {limits.memory_mb} MiB): {emsg}"
    if "SystemExit" in bases or "KeyboardInterrupt" in bases:
        return f"{name}() called exit() instead of returning."
    if "RecursionError" in bases:
        return (f"{name}() raised RecursionError: {emsg} (a recursive function that never reaches "
                "its base case?)")
    if etype == "UnsendableValue":
        return f"{name}() returned a value that could not be sent back to the grader ({emsg})."
    if ("BlockingIOError" in bases and err["errno"] == errno.EAGAIN) or "can't start new thread" in emsg:
        return (f"{name}() raised {etype}: {emsg}: it tried to start too many processes or threads "
                f"(the sandbox allows {limits.processes}).")
    return f"{name}() raised {etype}: {emsg}"


def import_failed(module: str, err: dict) -> str:
    """The sentence for a module that raised while being imported."""
    if {"SystemExit", "KeyboardInterrupt"} & set(err["bases"]):
        return (f"{module}.py called exit() while it was being imported; code that runs the file as a "
                "script belongs under `if __name__ == \"__main__\":`.")
    return f"{module}.py could not be imported: {err['type']}: {err['message']}"


def _signal_name(number: int) -> str | None:
    try:
        return signal.Signals(number).name
    except ValueError:
        return None


def ended(what: str, code: int | None, *, signal_above_128: bool, limits: Limits) -> str:
    """The sentence for a sandbox process that ended during ``what``.

    Args:
        code: its exit status, minus the signal number, or None when it did not end (it closed
            the protocol pipe and lived on).
        signal_above_128: a status above 128 means a signal (128 + its number), as bubblewrap
            and the isolated job's reaper report one.
    """
    if code is None:
        return (f"{what} closed the sandbox's connection to the grader and was stopped "
                "(do not close file descriptors your code did not open).")
    number = -code if code < 0 else code - 128 if signal_above_128 and code > 128 else None
    sig = _signal_name(number) if number else None
    if sig is not None:
        reason = {
            "SIGXCPU": f"it used more than {limits.cpu} s of CPU time",
            "SIGXFSZ": f"it wrote a file larger than {limits.file_size_mb} MiB",
            "SIGSEGV": "segmentation fault (often very deep recursion: raising sys.setrecursionlimit "
                       "does not make the stack bigger)",
            "SIGKILL": "killed (usually out of memory)",
            "SIGABRT": "aborted",
            **{stop: f"it stopped itself ({stop}), and a stopped process cannot answer"
               for stop in ("SIGSTOP", "SIGTSTP", "SIGTTIN", "SIGTTOU")},
        }.get(sig, sig)
        return f"{what} crashed the process: {reason}."
    return (f"{what} ended the Python process (exit status {code}) instead of returning "
            "(do not call exit() or os._exit() in your code).")


def too_large(what: str, detail: str, limits: Limits) -> str:
    """The sentence for a reply larger than the exercise accepts (``detail``: the sizes)."""
    return (f"{what} sent back a reply too large for this exercise ({detail}; limit {limits.reply_mb} MiB): "
            "return only what the task asks for.")
