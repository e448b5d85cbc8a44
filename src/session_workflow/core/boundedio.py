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


def open_regular(path: str) -> tuple[int, os.stat_result] | None:
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
    read = read_prefix_and_stat(path, max_bytes)
    return None if read is None else (read[0], read[1].st_size)


def read_prefix_and_stat(path: str, max_bytes: int) -> tuple[bytes, os.stat_result] | None:
    """Like ``read_prefix``, with the ``fstat`` of the file that was read instead of its size.

    For a caller that also needs the mtime: no second ``stat`` by path, and no race with a rename in between.
    What is read is bounded by the size that ``fstat`` reported too, so a small file takes one ``read`` (not a
    second one to find its end), and the bytes never disagree with the size returned beside them.
    """
    opened = open_regular(path)
    if opened is None:
        return None
    fd, info = opened
    try:
        return _read_exactly(fd, min(max_bytes, info.st_size)), info
    except OSError:
        return None
    finally:
        os.close(fd)


def read_prefix_as(path: str, max_bytes: int, identity: tuple[int, int, int, int] | None) -> tuple[bytes, bool] | None:
    """(at most ``max_bytes`` from the start, whether more follow), only when the file opened is still ``identity``
    (device, inode, size, mtime in ns, as a listing's ``stat`` saw it); None otherwise.

    For bytes whose trust was checked on that ``stat``: comparing the descriptor's own ``fstat`` closes the window
    in which the path could be replaced between the check and the read. ``identity`` None compares nothing.
    """
    read = read_prefix_and_stat(path, max_bytes)
    if read is None:
        return None
    data, info = read
    if identity is not None and (info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns) != identity:
        return None
    return data, info.st_size > len(data)


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
    opened = open_regular(path)
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


def _fill(fd: int, view: memoryview, position: int, step: int) -> int:
    """Read ``step`` bytes from ``position`` into the start of ``view``: the count read (fewer where the file ends
    sooner than its ``fstat`` said)."""
    os.lseek(fd, position, os.SEEK_SET)
    got = 0
    while got < step:
        count = os.readv(fd, [view[got:step]])
        if not count:
            break
        got += count
    return got


def _pread_exactly(fd: int, size: int, position: int) -> bytes:
    chunks = []
    while size > 0:
        chunk = os.pread(fd, size, position)
        if not chunk:
            break
        chunks.append(chunk)
        size -= len(chunk)
        position += len(chunk)
    return b"".join(chunks)


def iter_marked_lines_from_end(
    path: str, max_bytes: int, markers: list[bytes], chunk_size: int = 256 * 1024
) -> Iterator[bytes]:
    """Yield the complete lines, last first, within the last ``max_bytes`` that contain one of ``markers``.

    ``iter_marked_from_end`` without the offsets: markers are non-empty and hold no newline, the list is read
    again after each line (a caller that has found what one marker stands for removes it), and reading stops once
    the list is empty.
    """
    for line, _at, _held in iter_marked_from_end(path, max_bytes, markers, chunk_size):
        yield line


def iter_marked_from_end(
    path: str, max_bytes: int, markers: list[bytes], chunk_size: int = 256 * 1024, end: int | None = None
) -> Iterator[tuple[bytes, int, tuple[bytes, ...]]]:
    """(line, its offset in the file, the markers it holds) for each complete line, last first, within the
    ``max_bytes`` before ``end`` (the file's end when None; else the start of a line) that holds one of
    ``markers``.

    The tail is read backwards, chunk by chunk, into one buffer used again for each chunk, and searched where it
    lies with ``bytearray.rfind``; only a line holding a marker is copied out (one longer than what a chunk holds
    of it is read again, whole, from the file). A tail of a few MB costs its read and a search in C, not a split
    into thousands of lines nor a fresh allocation per chunk. Markers are non-empty and hold no newline. The list
    is read again after each line: a marker a caller adds is looked for from there on back, one it removes no
    longer, and reading stops once the list is empty.
    """
    opened = open_regular(path) if markers else None
    if opened is None:
        return
    fd, info = opened
    try:
        top = info.st_size if end is None else min(end, info.st_size)
        floor = max(0, top - max_bytes)
        buffer = bytearray(max(0, min(chunk_size, top - floor)))
        view = memoryview(buffer)
        # The line that runs on past the start of the chunk searched last: its end offset (None: no such line),
        # the markers found in it so far, and its first bytes as seen so far (a marker may straddle two chunks).
        open_end: int | None = None
        held: list[bytes] = []
        head = b""
        position = top
        while position > floor and markers:
            step = min(chunk_size, position - floor)
            position -= step
            got = _fill(fd, view, position, step)
            # Before the first newline a line may go on in the previous chunk; at the file's start it cannot.
            first = buffer.find(b"\n", 0, got) if position > 0 else -1
            if first < 0 and position > 0:
                if open_end is None:
                    open_end, held, head = position + got, [], b""
                head = _absorb(buffer, 0, got, markers, held, head)
                continue
            stop = got
            if open_end is not None:
                stop = buffer.rfind(b"\n", 0, got)
                head = _absorb(buffer, stop + 1, got, markers, held, head)
                found = tuple(marker for marker in held if marker in markers)
                if found:
                    start = position + stop + 1
                    yield _pread_exactly(fd, open_end - start, start), start, found
            if stop > first:
                yield from _marked_lines(buffer, first + 1, stop, markers, position)
            open_end = None
            if position > floor:
                open_end, held = position + first, []
                head = _absorb(buffer, 0, first, markers, held, b"")
    except OSError:
        return
    finally:
        os.close(fd)


# What is kept of a long line's first bytes, for a marker that straddles two chunks (more when a marker is longer).
_HEAD_BYTES = 256


def _absorb(buffer: bytearray, start: int, end: int, markers: list[bytes], held: list[bytes], head: bytes) -> bytes:
    """Add to ``held`` the markers in ``buffer[start:end]``, a piece just before (in the file) the part of a line
    seen so far, whose first bytes are ``head``, or across where the two meet; return the line's new first bytes."""
    width = max(map(len, markers), default=1) - 1
    across = bytes(buffer[max(start, end - width) : end]) + head[:width]
    for marker in markers:
        if marker not in held and (buffer.rfind(marker, start, end) >= 0 or marker in across):
            held.append(marker)
    return (bytes(buffer[start : min(end, start + max(width, _HEAD_BYTES))]) + head)[: max(width, _HEAD_BYTES)]


def _marked_lines(
    buffer: bytearray, start: int, stop: int, markers: list[bytes], offset: int
) -> Iterator[tuple[bytes, int, tuple[bytes, ...]]]:
    """The lines of ``buffer[start:stop]`` that hold a marker, last first, with their offset (``offset`` is the
    buffer's in the file) and the markers each holds; ``markers`` is read again after each line.

    ``start`` is 0 or just after a newline; ``stop`` is a newline's index or the data's end.
    """
    found = list(markers)
    hits = [buffer.rfind(marker, start, stop) for marker in found]
    view = memoryview(buffer)
    while True:
        hit = max(hits, default=-1)
        if hit < start:
            return
        line_start = buffer.rfind(b"\n", 0, hit) + 1
        line_end = buffer.find(b"\n", hit, stop)
        line = view[line_start : stop if line_end < 0 else line_end].tobytes()
        if len(found) == 1:
            yield line, offset + line_start, (found[0],)
        else:
            yield line, offset + line_start, tuple([marker for marker, at in zip(found, hits) if at >= line_start])
        stop = max(start, line_start - 1)
        if markers != found:  # the caller changed what it looks for
            kept = dict(zip(found, hits))
            found = list(markers)
            hits = [kept[m] if m in kept and kept[m] < line_start else buffer.rfind(m, start, stop) for m in found]
        for index, at in enumerate(hits):
            if at >= line_start:
                hits[index] = buffer.rfind(found[index], start, stop)
