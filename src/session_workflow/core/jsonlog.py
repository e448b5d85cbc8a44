"""Bounded append-only JSON-lines logs (anchor telemetry, the work-state journal); hot-path safe.

One short line per ``write`` under O_APPEND, so concurrent writers never interleave; past a size the log is
renamed to one old copy, so it never grows past about twice that. A line lands whole or not at all: a short
write (a full disk, RLIMIT_FSIZE) is cut back off, so the next line never continues a torn one. The caller
learns whether its line landed; the anchor telemetry ignores that, the work-state journal refuses the write.
"""

from __future__ import annotations

import os
import stat

from session_workflow.core.jsonload import dumps_flat_object

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping

MAX_LOG_BYTES = 256 * 1024
_FLAGS = os.O_WRONLY | os.O_APPEND | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)


def append_record(path: str, record: Mapping[str, object], rotated: str, max_bytes: int = MAX_LOG_BYTES) -> bool:
    """Append ``record`` as one JSON line to ``path``, first moving a log over ``max_bytes`` to ``rotated``.

    Returns whether the whole line was written; never raises. A symlink, FIFO or device in the log's place is
    refused rather than followed.
    """
    try:
        line = (dumps_flat_object(record) + "\n").encode("ascii")
        info = os.lstat(path) if os.path.lexists(path) else None
        if info is not None and stat.S_ISREG(info.st_mode) and info.st_size > max_bytes:
            os.replace(path, rotated)
        fd = os.open(path, _FLAGS, 0o644)
        try:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                return False
            return _write_whole(fd, line)
        finally:
            os.close(fd)
    except (OSError, ValueError, TypeError):
        return False


def _write_whole(fd: int, line: bytes) -> bool:
    """One ``write`` of the whole line; a partial one is truncated away again (when no one appended after it)."""
    try:
        written = os.write(fd, line)
    except OSError:
        return False  # nothing was written: O_APPEND writes either start at the end or fail whole
    if written == len(line):
        return True
    try:
        end = os.lseek(fd, 0, os.SEEK_CUR)
        if os.fstat(fd).st_size == end:
            os.ftruncate(fd, end - written)
    except OSError:
        pass
    return False
