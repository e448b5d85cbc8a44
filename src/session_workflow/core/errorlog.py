"""The error log: every unexpected exception of a hook or a CLI command, where ``doctor`` can show it.

``record`` is imported and called only in an ``except`` block, so a run that does not fail imports and writes
nothing of this. It never raises and never waits: the log lives in the user's state folder
(``locations.user_state_dir``: from the environment alone, so hooks and CLI find the same one), holds the newest
``MAX_ENTRIES`` entries of at most ``MAX_ENTRY_BYTES`` each, oldest dropped, and is rewritten whole through a
temp file and ``os.replace`` with no lock (a lock could keep a failing hook waiting; two failures in the same
instant may keep only one of them). The traceback is made from the frames alone (file, line, function): no
source file is read and nothing is imported to write it.
"""

from __future__ import annotations

import os
import sys
import time

from session_workflow import __version__
from session_workflow.core.jsonload import dumps_flat_object, loads
from session_workflow.core.locations import user_state_dir

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping

LOG_NAME = "errors.jsonl"
MAX_ENTRIES = 20
MAX_ENTRY_BYTES = 4096
MAX_LOG_BYTES = MAX_ENTRIES * MAX_ENTRY_BYTES
# The exception's own text, cut: a message can hold a whole file.
MAX_MESSAGE_CHARS = 500


def log_path(env: Mapping[str, str]) -> str | None:
    """The error log's path, or None without a home to put it in."""
    root = user_state_dir(env)
    return os.path.join(root, LOG_NAME) if root else None


def record(where: str, error: BaseException, env: Mapping[str, str]) -> None:
    """Append ``error`` (raised in ``where``: the hook event, the command, the part) to the log; never raises."""
    try:
        path = log_path(env)
        if path is None:
            return
        line = entry(where, error, time.time())
        os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
        from session_workflow.core.atomic import replace_locked
        from session_workflow.core.boundedio import read_prefix

        read = read_prefix(path, MAX_LOG_BYTES + 1)
        old = read[0] if read is not None and len(read[0]) <= MAX_LOG_BYTES else b""
        replace_locked(path, kept(old, line), 0o600, unique=True)  # no lock: see the module's docstring
    except Exception:  # the error log must never be a second failure
        return


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


def entries(env: Mapping[str, str]) -> list[dict[str, object]]:
    """The log's entries, oldest first (for ``doctor``); lines that do not parse are skipped."""
    from session_workflow.core.boundedio import read_prefix

    path = log_path(env)
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
