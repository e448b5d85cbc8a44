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
    read = read_prefix_and_stat(path, max_bytes)
    return None if read is None else (read[0], read[1].st_size)


def read_prefix_and_stat(path: str, max_bytes: int) -> tuple[bytes, os.stat_result] | None:
    """Like ``read_prefix``, with the ``fstat`` of the file that was read instead of its size.

    For a caller that also needs the mtime: no second ``stat`` by path, and no race with a rename in between.
    What is read is bounded by the size that ``fstat`` reported too, so a small file takes one ``read`` (not a
    second one to find its end), and the bytes never disagree with the size returned beside them.
    """
    opened = _open_regular(path)
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


def _chunks_from_end(fd: int, size: int, max_bytes: int, chunk_size: int) -> Iterator[tuple[int, bytes]]:
    """(offset, data) of the chunks of an open file from its end backwards, ``max_bytes`` in all."""
    position = size
    floor = max(0, position - max_bytes)
    while position > floor:
        step = min(chunk_size, position - floor)
        position -= step
        os.lseek(fd, position, os.SEEK_SET)
        yield position, _read_exactly(fd, step)


def iter_marked_lines_from_end(
    path: str, max_bytes: int, markers: list[bytes], chunk_size: int = 256 * 1024
) -> Iterator[bytes]:
    """Yield the complete lines, last first, within the last ``max_bytes`` that contain one of ``markers``.

    Each chunk is searched where it lies with ``bytes.rfind``, and only a line holding a marker is copied out:
    a tail of a few MB with a handful of hits costs its read and a search in C, not a split into thousands of
    lines. Markers are non-empty and hold no newline. The list is read again for each chunk: a caller that has
    found what one marker stands for removes it, and reading stops once the list is empty.
    """
    opened = _open_regular(path) if markers else None
    if opened is None:
        return
    fd, info = opened
    try:
        # The line that runs on past the start of the chunk searched last, as (buffer, start, end) pieces in
        # file order: joined only if it holds a marker.
        spanning: list[tuple[bytes, int, int]] = []
        for position, chunk in _chunks_from_end(fd, info.st_size, max_bytes, chunk_size):
            # Before the first newline a line may go on in the previous chunk; at the file's start it cannot.
            first = chunk.find(b"\n") if position > 0 else -1
            if first < 0 and position > 0:
                spanning.insert(0, (chunk, 0, len(chunk)))
                continue
            found = tuple(markers)
            last = chunk.rfind(b"\n")
            if spanning:
                spanning.insert(0, (chunk, last + 1, len(chunk)))
                if _holds_marker(spanning, found):
                    yield b"".join(buffer[start:end] for buffer, start, end in spanning)
                if last > first:
                    yield from _marked_lines(chunk, first + 1, last, found)
            else:
                yield from _marked_lines(chunk, first + 1, len(chunk), found)
            spanning = [(chunk, 0, first)]
            if not markers:
                return
    except OSError:
        return
    finally:
        os.close(fd)


def _holds_marker(pieces: list[tuple[bytes, int, int]], markers: tuple[bytes, ...]) -> bool:
    """Whether the line made of ``pieces`` holds a marker, within a piece or across where pieces meet."""
    width = max(len(marker) for marker in markers) - 1
    seam = b""
    for buffer, start, end in pieces:
        across = seam + buffer[start : min(end, start + width)]
        if any(marker in across or buffer.rfind(marker, start, end) >= 0 for marker in markers):
            return True
        seam += buffer[max(start, end - width) : end]
        seam = seam[max(0, len(seam) - width) :]
    return False


def _marked_lines(buffer: bytes, start: int, stop: int, markers: tuple[bytes, ...]) -> Iterator[bytes]:
    """The lines of ``buffer[start:stop]`` that hold a marker, last first.

    ``start`` is 0 or just after a newline; ``stop`` is a newline's index or the buffer's end.
    """
    hits = [buffer.rfind(marker, start, stop) for marker in markers]
    while True:
        hit = max(hits)
        if hit < start:
            return
        line_start = buffer.rfind(b"\n", 0, hit) + 1
        line_end = buffer.find(b"\n", hit, stop)
        yield buffer[line_start : stop if line_end < 0 else line_end]
        stop = max(start, line_start - 1)
        hits = [
            buffer.rfind(marker, start, stop) if found >= line_start else found for marker, found in zip(markers, hits)
        ]
