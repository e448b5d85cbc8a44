"""``session-workflow tasks adopt <sid>``: make a recovered task list this session's own.

The SessionStart fallback shows the open tasks of the session that ran before, but Claude Code's TaskList and
TaskUpdate only see the current session's list folder. Copying the predecessor's open task files there makes
them this session's tasks. The copy runs under Claude Code's own list lock (the ``.lock.lock`` directory that
proper-lockfile makes beside ``.lock``, measured on 2.1.332: a held one makes TaskCreate fail with "Lock file
is already being held"), creates each file only when its id is free (a task this session already has is never
overwritten), and raises ``.highwatermark`` to the highest adopted id, so Claude Code never hands an adopted id
out again. Nothing in the predecessor's folder is changed, and no symlink is followed or opened as a lock.
"""

from __future__ import annotations

import contextlib
import json
import os
import stat
import time

from session_workflow.core import atomic
from session_workflow.core.boundedio import read_prefix_and_stat
from session_workflow.core.text import escaped
from session_workflow.tasks.render import OPEN_STATUSES
from session_workflow.tasks.store import (
    HIGH_WATER_MARK,
    MAX_TASK_FILE_BYTES,
    list_task_ids,
    parse_task,
    sanitize_list_id,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator

LOCK_FILE = ".lock"
# proper-lockfile's lock for ``.lock``: a directory named after the file plus ``.lock``.
LOCK_DIR = ".lock.lock"
# proper-lockfile treats a lock whose mtime is older than 10 s as abandoned (its default ``stale``).
STALE_LOCK_SECONDS = 10.0
LOCK_WAIT_SECONDS = 5.0
LOCK_POLL_SECONDS = 0.02
# Adoption reads every task file of the predecessor's list up to this many (Claude Code numbers them upwards).
MAX_FILES = 10_000
MAX_HIGH_WATER_BYTES = 64


class AdoptError(Exception):
    """Nothing was adopted; the message is one line for the user."""


class Adopted:
    """What one adoption did: the ids copied, the ids kept because this session already had them, the target."""

    __slots__ = ("adopted", "kept", "target", "unread")

    def __init__(self, target: str, adopted: list[int], kept: list[int], unread: int) -> None:
        self.target = target
        self.adopted = adopted
        self.kept = kept
        self.unread = unread


def _real_dir(path: str) -> bool:
    """True for a directory that is not a symlink; False when absent; AdoptError for anything else."""
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return False
    if stat.S_ISLNK(info.st_mode) or not stat.S_ISDIR(info.st_mode):
        raise AdoptError(f"{escaped(path)} is not a plain directory (a symlink or a file); refusing to use it")
    return True


def read_open_tasks(directory: str) -> tuple[list[tuple[int, dict[str, object]]], int]:
    """(id, record) of the open tasks of a list folder, lowest id first, and how many files were not read.

    A file that is a symlink, not a regular file, too large or not a task Claude Code would accept is skipped.
    """
    ids = list_task_ids(directory)
    if not isinstance(ids, list):
        raise AdoptError(f"cannot list {escaped(directory)}")
    ids.sort()
    found: list[tuple[int, dict[str, object]]] = []
    for task_id in ids[:MAX_FILES]:
        path = os.path.join(directory, f"{task_id}.json")
        try:
            link = os.lstat(path)
        except OSError:
            continue
        read = read_prefix_and_stat(path, MAX_TASK_FILE_BYTES)
        if read is None or stat.S_ISLNK(link.st_mode) or (read[1].st_dev, read[1].st_ino) != (link.st_dev, link.st_ino):
            continue
        data, info = read
        parsed = parse_task(data, task_id) if info.st_size == len(data) else None
        if parsed is not None and parsed[0] in OPEN_STATUSES:
            found.append((task_id, json.loads(data.decode("utf-8"))))
    return found, max(0, len(ids) - MAX_FILES)


def adopted_record(record: dict[str, object], kept_ids: set[str]) -> bytes:
    """The task as this session's: ``blocks``/``blockedBy`` keep only ids adopted with it (a reference to any
    other id would name a different task, or none, in this list). Written as Claude Code writes task files."""
    copy = dict(record)
    for key in ("blocks", "blockedBy"):
        value = copy.get(key)
        if isinstance(value, list):
            copy[key] = [item for item in value if item in kept_ids]
    return json.dumps(copy, indent=2, ensure_ascii=False).encode("utf-8")


def _ensure_lock_file(directory: str) -> None:
    """Claude Code's ``.lock``: created empty when missing (as it does), never a symlink."""
    path = os.path.join(directory, LOCK_FILE)
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
    try:
        os.close(os.open(path, flags, 0o644))
    except FileExistsError:
        info = os.lstat(path)
        if not stat.S_ISREG(info.st_mode):
            raise AdoptError(
                f"{escaped(path)} is not a regular file (a symlink?); refusing to lock through it"
            ) from None


@contextlib.contextmanager
def list_lock(directory: str, wait: float = LOCK_WAIT_SECONDS) -> Iterator[None]:
    """Hold Claude Code's lock on a task list: ``mkdir .lock.lock``, removed again on exit.

    A lock left older than proper-lockfile's stale limit is taken over, as proper-lockfile itself would.
    """
    _ensure_lock_file(directory)
    lock = os.path.join(directory, LOCK_DIR)
    deadline = time.monotonic() + wait
    while True:
        try:
            os.mkdir(lock, 0o755)
            break
        except FileExistsError:
            try:
                info = os.lstat(lock)
            except FileNotFoundError:
                continue
            if stat.S_ISDIR(info.st_mode) and time.time() - info.st_mtime > STALE_LOCK_SECONDS:
                with contextlib.suppress(OSError):
                    os.rmdir(lock)
                continue
            if time.monotonic() > deadline:
                raise AdoptError(
                    f"Claude Code holds the task list lock {escaped(lock)}; try again in a moment"
                ) from None
            time.sleep(LOCK_POLL_SECONDS)
    try:
        yield
    finally:
        with contextlib.suppress(OSError):
            os.rmdir(lock)


def _high_water_mark(directory: str) -> int:
    path = os.path.join(directory, HIGH_WATER_MARK)
    try:
        if stat.S_ISLNK(os.lstat(path).st_mode):
            raise AdoptError(f"{escaped(path)} is a symlink; refusing to follow it")
    except FileNotFoundError:
        return 0
    read = read_prefix_and_stat(path, MAX_HIGH_WATER_BYTES)
    text = read[0].decode("ascii", "replace").strip() if read is not None else ""
    return int(text) if text.isdigit() else 0


def adopt(root: str, predecessor: str, own: str) -> Adopted:
    """Copy the predecessor list's open tasks into list ``own`` under ``root``; see the module docstring."""
    source_id, target_id = sanitize_list_id(predecessor), sanitize_list_id(own)
    if not source_id or source_id in (".", "..") or source_id != predecessor:
        raise AdoptError(f"{predecessor!r} is not a task list id (letters, digits, - and _)")
    if source_id == target_id:
        raise AdoptError(f"{predecessor} is this session's own task list; nothing to adopt")
    source, target = os.path.join(root, source_id), os.path.join(root, target_id)
    if not _real_dir(source):
        raise AdoptError(f"no task list {escaped(source)}")
    tasks, unread = read_open_tasks(source)
    if not tasks:
        raise AdoptError(f"{escaped(source)} has no open task to adopt")
    if not _real_dir(target):
        os.makedirs(target, exist_ok=True)
        _real_dir(target)
    adopted: list[int] = []
    kept: list[int] = []
    with list_lock(target):
        existing = list_task_ids(target)
        taken = set(existing) if isinstance(existing, list) else set()
        free = {str(task_id) for task_id, _record in tasks if task_id not in taken}
        for task_id, record in tasks:
            path = os.path.join(target, f"{task_id}.json")
            if task_id in taken or not atomic.link_new(path, adopted_record(record, free)):
                kept.append(task_id)
            else:
                adopted.append(task_id)
        if adopted and max(adopted) > _high_water_mark(target):
            mark = str(max(adopted)).encode("ascii")
            atomic.replace_locked(os.path.join(target, HIGH_WATER_MARK), mark, unique=True)
    return Adopted(target, adopted, kept, unread)


def report(result: Adopted, predecessor: str) -> list[str]:
    """What was adopted, what was kept, and what works now."""
    if not result.adopted:
        kept = ", ".join(f"#{task_id}" for task_id in result.kept)
        return [f"nothing adopted from {predecessor}: this session already has {kept} (never overwritten)"]
    ids = ", ".join(f"#{task_id}" for task_id in result.adopted)
    lines = [
        f"adopted {len(result.adopted)} open task(s) from {predecessor} into {escaped(result.target)}: {ids}",
        "TaskList and TaskUpdate see them now, under the same ids.",
    ]
    if result.kept:
        kept = ", ".join(f"#{task_id}" for task_id in result.kept)
        lines.append(f"not adopted: {kept} (this session already has a task with that id; it was not overwritten)")
    if result.unread:
        lines.append(f"{result.unread} task file(s) of {predecessor} past the first {MAX_FILES:,} were not read")
    return lines
