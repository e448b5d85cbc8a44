"""The one atomic writer: filelock on a sibling lock file, a temp file in the same directory, fsync, os.replace.

Readers never lock: at any moment they see the old file or the new one, never a mix. A writer killed
mid-write leaves only a stray temp file (replaced by the next writer, under the lock) and no lock that blocks:
the lock is an flock the kernel drops with the process (``locked``: filelock's primitive, without importing the
library where flock exists).
"""

from __future__ import annotations

import contextlib
import os
import stat

from session_workflow.core.text import escaped

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

LOCK_TIMEOUT_SECONDS = 30.0
# filelock polls a held lock every 50 ms by default; writers hold it for about a millisecond.
LOCK_POLL_SECONDS = 0.005
# Writers read the current file whole; nothing we write legitimately approaches this.
MAX_WRITER_READ_BYTES = 16 << 20


class WriteError(Exception):
    """A write could not be done; the message is one line for the user."""


def lock_path(path: str) -> str:
    """The sibling lock file of ``path``: hidden, so it never matches ``*.md`` or ``*.json`` scans."""
    folder, name = os.path.split(os.path.abspath(path))
    return os.path.join(folder, f".{name}.lock")


def _refuse_odd_lock(lock: str) -> None:
    """filelock 3.x (the pin for Python 3.9 and 3.10) opens its file with O_TRUNC and follows links: a planted
    symlink there would truncate (and chmod) whatever it points at, so the lock must be a plain file we create
    ourselves, never a link. (4.x refuses a link itself, but with a bare ELOOP error.)"""
    try:
        info = os.lstat(lock)
    except FileNotFoundError:
        try:
            fd = os.open(lock, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o644)
        except FileExistsError:
            return _refuse_odd_lock(lock)
        os.close(fd)
        return None
    if not stat.S_ISREG(info.st_mode):
        kind = "a symlink" if stat.S_ISLNK(info.st_mode) else "not a regular file"
        raise WriteError(
            f"the lock file {escaped(lock)} is {kind}; refusing to open it (remove it if you did not make it)"
        )
    return None


@contextlib.contextmanager
def locked(path: str) -> Iterator[None]:
    """Hold the writer lock of ``path`` (created with its directory if missing; never through a symlink).

    The lock is filelock's own primitive, taken here directly: ``fcntl.flock(LOCK_EX | LOCK_NB)`` on the whole lock
    file, polled, the file left in place (filelock 3.x and 4.x alike), so a writer of any version contends with
    any other. Importing filelock for it cost a writer about 3 J (ratios to ``python3 -I -S -c "import json"``):
    4.3.2 loads typing, logging, inspect, dataclasses and its whole core even for ``UnixFileLock`` alone (127 of
    the package's 128 modules; benchmarks/README.md), while ``fcntl`` costs 0.5 J. Where there is no flock (no
    POSIX: Windows; a file system without it) the lock is filelock's ``FileLock``, which picks its fallback."""
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    lock = lock_path(path)
    _refuse_odd_lock(lock)
    if os.name == "posix":
        flags = os.O_RDWR | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
        try:
            fd = os.open(lock, flags)
        except OSError as error:
            raise WriteError(f"cannot open the lock file {escaped(lock)}: {error.strerror or error}") from error
        try:
            if _flock(fd, lock):
                yield
                return
        finally:
            os.close(fd)  # the kernel drops the lock with the last descriptor
    with _filelock(lock):
        yield


def _flock(fd: int, lock: str) -> bool:
    """Take the flock on ``fd``, polled every ``LOCK_POLL_SECONDS``: True once held, False where the file system
    has no flock (ENOSYS, EOPNOTSUPP, ENOLCK); ``WriteError`` after ``LOCK_TIMEOUT_SECONDS``."""
    import fcntl
    import time

    deadline = time.monotonic() + LOCK_TIMEOUT_SECONDS
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return True
        except BlockingIOError:
            if time.monotonic() >= deadline:
                raise _busy(lock) from None
            time.sleep(LOCK_POLL_SECONDS)
        except OSError:
            return False


def _busy(lock: str) -> WriteError:
    return WriteError(f"another writer holds {escaped(lock)} (waited {LOCK_TIMEOUT_SECONDS:.0f}s)")


@contextlib.contextmanager
def _filelock(lock: str) -> Iterator[None]:
    """filelock's ``FileLock`` on ``lock``, for where flock is missing: the plugin folder's vendored copy first on
    the path (``core.deps``), as bin/session-workflow has it, from a hook too."""
    from session_workflow.core.deps import add_vendored

    add_vendored()
    from filelock import FileLock, Timeout

    try:
        with FileLock(lock, timeout=LOCK_TIMEOUT_SECONDS).acquire(poll_interval=LOCK_POLL_SECONDS):
            yield
    except Timeout as error:
        raise _busy(lock) from error


def _read_current(path: str) -> bytes | None:
    """The current content (None when absent); opened without blocking so a FIFO in its place cannot hang us."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except FileNotFoundError:
        return None
    except OSError as error:
        raise WriteError(f"cannot read {escaped(path)}: {error.strerror or error}") from error
    with os.fdopen(fd, "rb") as handle:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise WriteError(f"{escaped(path)} is not a regular file")
        data = handle.read(MAX_WRITER_READ_BYTES + 1)
    if len(data) > MAX_WRITER_READ_BYTES:
        raise WriteError(f"{escaped(path)} is larger than {MAX_WRITER_READ_BYTES} bytes; refusing to rewrite it")
    return data


def _fsync_dir(folder: str) -> None:
    with contextlib.suppress(OSError):
        fd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


_TEMP_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)


def temp_path(path: str, tag: str = "") -> str:
    """The temp file of ``path``: ``.<name>.tmp`` beside it, or ``.<name>.<tag>.tmp`` (hidden, so no ``*.md`` or
    ``*.json`` scan sees it)."""
    folder, name = os.path.split(os.path.abspath(path))
    return os.path.join(folder, f".{name}.{tag}.tmp" if tag else f".{name}.tmp")


def _create_temp(path: str, unique: bool = False) -> tuple[int, str]:
    """Create the temp file of ``path``, mode 0600; ``unique`` for a caller whose lock may not be exclusive.

    One name per path is enough for the holder of the path's own lock: no other writer uses it, so a file already
    there is a killed writer's debris. It is unlinked (a link planted there is removed, never followed) and the
    name made again, so debris never accumulates and no writer lists the folder to find it (a records folder
    holds thousands of files). ``unique`` makes a random name instead, as ``tempfile.mkstemp`` would (without
    importing tempfile and the random module it pulls in: a writer's start is most of its cost).
    """
    if unique:
        for _attempt in range(100):
            temp = temp_path(path, os.urandom(8).hex())
            try:
                return os.open(temp, _TEMP_FLAGS, 0o600), temp
            except FileExistsError:
                continue
        raise FileExistsError(f"no free temp name for {path}")
    temp = temp_path(path)
    try:
        return os.open(temp, _TEMP_FLAGS, 0o600), temp
    except FileExistsError:
        try:
            os.unlink(temp)
        except OSError as error:
            raise WriteError(
                f"{escaped(temp)} is in the way of the write and cannot be removed: {error.strerror}"
            ) from error
        return os.open(temp, _TEMP_FLAGS, 0o600), temp


def _write_temp(path: str, data: bytes, mode: int, unique: bool = False) -> str:
    """Write ``data`` to a temp file of ``path`` (``_create_temp``), fsynced, and return its name."""
    fd, temp = _create_temp(path, unique)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fchmod(handle.fileno(), mode)
            os.fsync(handle.fileno())
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temp)
        raise
    return temp


def _mode_of(path: str, default: int) -> int:
    try:
        return stat.S_IMODE(os.stat(path).st_mode)
    except OSError:
        return default


def replace_locked(
    path: str,
    data: bytes,
    default_mode: int = 0o644,
    staged: Callable[[os.stat_result], object] | None = None,
    unique: bool = False,
) -> None:
    """Replace ``path`` with ``data`` atomically, keeping its mode; the caller holds ``locked(path)`` (or, with
    ``unique``, a lock that may not be exclusive: see ``link_new``).

    ``staged`` gets the finished temp file's ``stat`` just before the rename (which keeps inode, size and mtime),
    so a record of what is about to be in place can be made first.
    """
    temp = _write_temp(path, data, _mode_of(path, default_mode), unique)
    try:
        if staged is not None:
            staged(os.lstat(temp))
        os.replace(temp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temp)
        raise
    _fsync_dir(os.path.dirname(os.path.abspath(path)))


def update_file(
    path: str,
    transform: Callable[[bytes | None], bytes | None],
    default_mode: int = 0o644,
    staged: Callable[[os.stat_result], object] | None = None,
) -> bytes | None:
    """Read-modify-write ``path`` under its lock; ``transform`` gets the current bytes (None if absent).

    ``transform`` returning None leaves the file untouched; ``staged`` is as for ``replace_locked``. Returns what
    was written (or None).
    """
    with locked(path):
        new = transform(_read_current(path))
        if new is not None:
            replace_locked(path, new, default_mode, staged)
        return new


def create_new(
    path: str, data: bytes, mode: int = 0o644, staged: Callable[[os.stat_result], object] | None = None
) -> bool:
    """Create ``path`` with ``data`` only if it does not exist (a hard link of a finished temp file).

    Returns False when the name is taken; the content is never seen half-written. ``staged`` is as for
    ``replace_locked`` (called only when the name is free).
    """
    with locked(path):
        return _link_new(path, data, mode, staged, unique=False)


def link_new(
    path: str, data: bytes, mode: int = 0o644, staged: Callable[[os.stat_result], object] | None = None
) -> bool:
    """``create_new`` for a caller that holds the folder's lock, not the path's (Claude Code's, on a task list,
    which another process may take over when it looks stale): its temp file has a name of its own."""
    return _link_new(path, data, mode, staged, unique=True)


def _link_new(
    path: str, data: bytes, mode: int, staged: Callable[[os.stat_result], object] | None, unique: bool
) -> bool:
    temp = _write_temp(path, data, mode, unique)
    try:
        if staged is not None and not os.path.lexists(path):
            staged(os.lstat(temp))
        os.link(temp, path)
    except FileExistsError:
        return False
    finally:
        with contextlib.suppress(OSError):
            os.unlink(temp)
    _fsync_dir(os.path.dirname(os.path.abspath(path)))
    return True
