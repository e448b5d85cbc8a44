"""The error log: every unexpected exception of a hook or a CLI command, where ``doctor`` can show it.

``record`` is imported and called only in an ``except`` block (through ``core.errors.record``), so a run that
does not fail imports and writes nothing of this. It never raises and never waits: the log lives in the user's
state folder (``core.places.Places.error_log``: from the environment alone, so hooks and CLI find the same one),
holds the newest ``MAX_ENTRIES`` entries of at most ``MAX_ENTRY_BYTES`` each, oldest dropped, and is rewritten
whole through a temp file and ``os.replace`` with no lock (a lock could keep a failing hook waiting; two failures
in the same instant may keep only one of them). The traceback is made from the frames alone (file, line, function): no
source file is read and nothing is imported to write it.
"""

from __future__ import annotations

import os
import sys
import time

from session_workflow import __version__
from session_workflow.core.jsonload import dumps_flat_object, loads

TYPE_CHECKING = False
if TYPE_CHECKING:
    from session_workflow.core.places import Places

MAX_ENTRIES = 20
MAX_ENTRY_BYTES = 4096
MAX_LOG_BYTES = MAX_ENTRIES * MAX_ENTRY_BYTES
# The exception's own text, cut: a message can hold a whole file.
MAX_MESSAGE_CHARS = 500


def record(where: str, error: BaseException, places: Places) -> str | None:
    """Append ``error`` (raised in ``where``: the hook event, the command, the part) to the log; its path when
    written, else None. Never raises (``core.errors.record`` is the way in)."""
    try:
        path = places.error_log
        if path is None:
            return None
        line = entry(where, error, time.time())
        from session_workflow.core.atomic import replace_locked
        from session_workflow.core.folders import make_private

        make_private(os.path.dirname(path))
        from session_workflow.core.boundedio import read_prefix

        read = read_prefix(path, MAX_LOG_BYTES + 1)
        old = read[0] if read is not None and len(read[0]) <= MAX_LOG_BYTES else b""
        replace_locked(path, kept(old, line), 0o600, unique=True)  # no lock: see the module's docstring
    except Exception:  # the error log must never be a second failure
        return None
    return path


def kept(old: bytes, line: bytes) -> bytes:
    """The log after ``line``: the newest ``MAX_ENTRIES - 1`` whole lines of ``old``, then ``line``."""
    lines = [piece for piece in old.split(b"\n") if piece.startswith(b"{") and piece.endswith(b"}")]
    return b"".join(piece + b"\n" for piece in [*lines[-(MAX_ENTRIES - 1) :], line.rstrip(b"\n")])


def entry(where: str, error: BaseException, now: float) -> bytes:
    """One JSON line (ASCII, at most ``MAX_ENTRY_BYTES``): time, where, version, Python, error, traceback."""
    message = f"{type(error).__name__}: {str(error)[:MAX_MESSAGE_CHARS]}"
    fields: dict[str, object] = {
        "time": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(now)),
        "where": where[:200],
        "version": __version__,
        "python": sys.version.split()[0],
        "error": message,
    }
    every = _frames(error)
    frames = every
    while True:
        cut = f"  ... {len(every) - len(frames)} outer frames cut\n" if len(frames) < len(every) else ""
        fields["traceback"] = "Traceback (most recent call last):\n" + cut + "".join(frames) + message
        line = (dumps_flat_object(fields) + "\n").encode("ascii")
        if len(line) <= MAX_ENTRY_BYTES:
            return line
        if not frames:  # a long file name or message: the entry still lands, shorter
            fields["traceback"] = fields["error"] = message[: MAX_ENTRY_BYTES // 8]
            return (dumps_flat_object(fields) + "\n").encode("ascii")
        frames = frames[1:]  # the innermost frames say where it broke: the outermost go first


def _frames(error: BaseException) -> list[str]:
    """The traceback's frames, outermost first, as ``traceback`` prints them but without the source lines."""
    frames = []
    trace = error.__traceback__
    while trace is not None:
        code = trace.tb_frame.f_code
        frames.append(f'  File "{code.co_filename}", line {trace.tb_lineno}, in {code.co_name}\n')
        trace = trace.tb_next
    return frames


def entries(places: Places) -> list[dict[str, object]]:
    """The log's entries, oldest first (for ``doctor``); lines that do not parse are skipped."""
    from session_workflow.core.boundedio import read_prefix

    path = places.error_log
    read = read_prefix(path, MAX_LOG_BYTES) if path is not None else None
    found = []
    for line in read[0].split(b"\n") if read is not None else ():
        try:
            value = loads(line)
        except (ValueError, RecursionError):
            continue
        if isinstance(value, dict):
            found.append(value)
    return found
