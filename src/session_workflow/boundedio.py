"""Bounded, hang-proof reads of files the user controls.

A hook must never read a whole large file, nor block on a FIFO, nor stream /dev/zero. Every read here opens
without blocking, refuses anything that is not a regular file after the open (so a symlink to a device or a
FIFO is caught on the descriptor, not on a racy stat), and reads at most a fixed number of bytes.
"""

from __future__ import annotations

import os
import stat

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator

_OPEN_FLAGS = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)


def _open_regular(path: str) -> tuple[int, os.stat_result] | None:
    """Open ``path`` for reading if it is a regular file; None for anything else or any error."""
    try:
        fd = os.open(path, _OPEN_FLAGS)
    except (OSError, ValueError):
        return None
    try:
        info = os.fstat(fd)
    except OSError:
        os.close(fd)
        return None
    if not stat.S_ISREG(info.st_mode):
        os.close(fd)
        return None
    return fd, info


def _read_exactly(fd: int, size: int) -> bytes:
    chunks = []
    remaining = size
    while remaining > 0:
        chunk = os.read(fd, min(remaining, 1 << 20))
        if not chunk:
            break
        chunks.append(chunk)
        remaining -= len(chunk)
    return b"".join(chunks)


def read_prefix(path: str, max_bytes: int) -> tuple[bytes, int] | None:
    """Return (at most ``max_bytes`` from the start of a regular file, its full size), or None."""
    opened = _open_regular(path)
    if opened is None:
        return None
    fd, info = opened
    try:
        return _read_exactly(fd, max_bytes), info.st_size
    except OSError:
        return None
    finally:
        os.close(fd)


def read_text_prefix(path: str, max_bytes: int) -> tuple[str, bool] | None:
    """Decode up to ``max_bytes`` of a regular file as UTF-8 (BOM dropped, bad bytes replaced).

    Returns (text, truncated). A cut that lands inside a multi-byte character drops that character.
    """
    read = read_prefix(path, max_bytes)
    if read is None:
        return None
    data, size = read
    truncated = size > len(data)
    if truncated:
        data = data.decode("utf-8", "ignore").encode("utf-8") if _ends_mid_char(data) else data
    text = data.decode("utf-8", "replace")
    if text.startswith("\ufeff"):
        text = text[1:]
    return text, truncated


def _ends_mid_char(data: bytes) -> bool:
    """True when the last bytes are an incomplete UTF-8 sequence (so a cut must not turn it into U+FFFD)."""
    tail = data[-4:]
    for back in range(1, len(tail) + 1):
        byte = tail[-back]
        if byte & 0xC0 != 0x80:
            need = 2 if byte >> 5 == 0b110 else 3 if byte >> 4 == 0b1110 else 4 if byte >> 3 == 0b11110 else 1
            return need > back
    return False


def iter_lines_from_start(path: str, max_bytes: int) -> Iterator[bytes]:
    """Yield the complete lines within the first ``max_bytes`` of a regular file, reading lazily."""
    opened = _open_regular(path)
    if opened is None:
        return
    fd, _info = opened
    try:
        pending = b""
        budget = max_bytes
        while budget > 0:
            chunk = os.read(fd, min(budget, 64 * 1024))
            if not chunk:
                if pending:
                    yield pending
                return
            budget -= len(chunk)
            pending += chunk
            *lines, pending = pending.split(b"\n")
            yield from lines
    except OSError:
        return
    finally:
        os.close(fd)


def iter_lines_from_end(path: str, max_bytes: int, chunk_size: int = 256 * 1024) -> Iterator[bytes]:
    """Yield complete lines of a regular file from the last one backwards, reading at most ``max_bytes``.

    Transcripts carry whole request bodies and reach hundreds of MB; recovery only needs their tail.
    A line cut by the budget at its start is not yielded.
    """
    opened = _open_regular(path)
    if opened is None:
        return
    fd, info = opened
    try:
        position = info.st_size
        floor = max(0, position - max_bytes)
        pending = b""
        while position > floor:
            size = min(chunk_size, position - floor)
            position -= size
            os.lseek(fd, position, os.SEEK_SET)
            pending = _read_exactly(fd, size) + pending
            first, *lines = pending.split(b"\n")
            pending = first
            for line in reversed(lines):
                if line:
                    yield line
        if position == 0 and pending:
            yield pending
    except OSError:
        return
    finally:
        os.close(fd)
