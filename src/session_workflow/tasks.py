"""Find the session's open TaskCreate/TaskUpdate tasks in Claude Code's task store, for the SessionStart block.

Claude Code keeps each task as ``<config>/tasks/<listId>/<n>.json`` and does not re-inject them after
compaction. This module does the I/O (bounded: a directory of 100,000 files or a 50 MB task file must not slow
the hook) and hands the tasks to ``tasks_render``. When the exact list is missing it may recover the list of
the one session that ran before in the same project, and fails closed to a hint whenever that is ambiguous.
"""

from __future__ import annotations

import json
import os
import re

from session_workflow.boundedio import read_prefix
from session_workflow.tasks_render import (
    HEADER_EXACT,
    HEADER_RECOVERED,
    OPEN_STATUSES,
    Task,
    TaskHintPart,
    TaskListPart,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping

    from session_workflow.context import HookContext

ROOT_ENV = "SESSION_WORKFLOW_TASKS_ROOT"
LIST_ID_ENV = "CLAUDE_CODE_TASK_LIST_ID"

# Claude Code's own task ids (its /^[1-9]\d*$/), bounded so a name can never be an absurd number.
TASK_ID = re.compile(r"[1-9][0-9]{0,17}")
TASK_FILE = re.compile(r"[1-9][0-9]{0,17}\.json")
UNSAFE_LIST_ID_CHARS = re.compile(r"[^A-Za-z0-9_-]")
# A real task is well under a kilobyte; a file that does not fit in this prefix is not one.
MAX_TASK_FILE_BYTES = 64 * 1024
# How many task files one lookup reads, newest ids first (Claude Code numbers tasks upwards). A list that big
# is almost all completed history; the block says how many files were left unread instead of counting them.
MAX_TASK_FILES_READ = 1000
STATUSES = ("pending", "in_progress", "completed", "deleted")
TRANSCRIPT_SUFFIX = ".jsonl"
LIVE_SIDECAR_SUFFIX = ".live.jsonl"


class Store:
    """What one list directory holds: its open tasks, how many files were bad, how many were not read."""

    __slots__ = ("bad", "open_tasks", "read", "unread")

    def __init__(self, open_tasks: list[Task], bad: int, read: int, unread: int) -> None:
        self.open_tasks = open_tasks
        self.bad = bad
        self.read = read
        self.unread = unread


class Unreadable:
    """A list directory that exists but cannot be listed."""


UNREADABLE = Unreadable()


def tasks_root(env: Mapping[str, str]) -> str:
    """``SESSION_WORKFLOW_TASKS_ROOT``, else ``$CLAUDE_CONFIG_DIR/tasks``, else ``~/.claude/tasks``."""
    override = env.get(ROOT_ENV)
    if override:
        return override
    config = env.get("CLAUDE_CONFIG_DIR") or os.path.join(env.get("HOME") or os.path.expanduser("~"), ".claude")
    return os.path.join(config, "tasks")


def sanitize_list_id(raw: str) -> str:
    """Claude Code's own mapping from a list id to a directory name, which also defuses ``..`` and ``/``."""
    return UNSAFE_LIST_ID_CHARS.sub("-", raw)


def list_task_files(directory: str) -> list[tuple[int, str]] | Unreadable | None:
    """(id, name) of every ``<n>.json`` in a list directory; None when it is missing.

    Names are filtered before anything is opened or stat'ed, so locks, the high-water mark and dotfiles
    cost nothing and a huge directory costs one listing.
    """
    try:
        with os.scandir(directory) as entries:
            return [(int(entry.name[:-5]), entry.name) for entry in entries if TASK_FILE.fullmatch(entry.name)]
    except (FileNotFoundError, NotADirectoryError):
        return None
    except (OSError, ValueError):
        return UNREADABLE


def _strings(value: object) -> list[str] | None:
    """The value when it is a list of strings (as Claude Code's schema requires ``blocks``), else None."""
    if isinstance(value, list) and all(isinstance(item, str) for item in value):
        return [str(item) for item in value]
    return None


def parse_task(data: bytes, task_id: int) -> tuple[str, str, str, list[str]] | None:
    """(status, subject, description, blockedBy) of a task file, or None when Claude Code would reject it too.

    The checks follow Claude Code's task schema, plus two of ours: the ``id`` must match the file name (the
    id TaskUpdate takes) and ``deleted`` is accepted as a closed status.
    """
    try:
        record = json.loads(data.decode("utf-8"))
    except (ValueError, RecursionError):
        return None
    if not isinstance(record, dict) or record.get("id") != str(task_id):
        return None
    status, subject, description = record.get("status"), record.get("subject"), record.get("description")
    if status not in STATUSES or not isinstance(subject, str) or not isinstance(description, str):
        return None
    blocked_by = _strings(record.get("blockedBy"))
    if blocked_by is None or _strings(record.get("blocks")) is None:
        return None
    for optional in ("activeForm", "owner"):
        if optional in record and not isinstance(record[optional], str):
            return None
    if "metadata" in record and not isinstance(record["metadata"], dict):
        return None
    return str(status), subject, description, blocked_by


def read_task(directory: str, name: str, task_id: int) -> Task | None:
    """Read one task file through a bounded prefix; None when it is unreadable, too large or malformed."""
    path = os.path.join(directory, name)
    read = read_prefix(path, MAX_TASK_FILE_BYTES)
    if read is None or read[1] > len(read[0]):
        return None
    parsed = parse_task(read[0], task_id)
    if parsed is None:
        return None
    try:
        mtime = os.stat(path).st_mtime
    except (OSError, ValueError):
        return None
    status, subject, description, blocked_by = parsed
    return Task(task_id, status, subject, description, blocked_by, mtime)


def open_blockers(blocked_by: list[str], closed: set[int], existing: set[int]) -> list[str]:
    """The blockers that still block, as Claude Code sees it: tasks that exist and are not completed.

    A blocker whose file was malformed or not read stays listed: it may be open.
    """
    kept: list[str] = []
    for blocker in blocked_by:
        if TASK_ID.fullmatch(blocker) and blocker not in kept:
            number = int(blocker)
            if number in existing and number not in closed:
                kept.append(blocker)
    return kept


def read_store(directory: str, files: list[tuple[int, str]], allowance: int) -> Store:
    """Read at most ``allowance`` task files, highest ids first, and keep the open tasks."""
    files.sort(reverse=True)
    chosen = files[: max(0, allowance)]
    tasks: list[Task] = []
    bad = 0
    for task_id, name in chosen:
        task = read_task(directory, name, task_id)
        if task is None:
            bad += 1
        else:
            tasks.append(task)
    open_tasks = [task for task in tasks if task.status in OPEN_STATUSES]
    if any(task.blocked_by for task in open_tasks):
        closed = {task.id for task in tasks if task.status not in OPEN_STATUSES}
        existing = {task_id for task_id, _name in files}
        for task in open_tasks:
            task.blocked_by = open_blockers(task.blocked_by, closed, existing)
    return Store(open_tasks, bad, len(chosen), len(files) - len(chosen))


class Ambiguous:
    """The fallback could not name exactly one predecessor: several, or one it could not fully read."""


AMBIGUOUS = Ambiguous()


def older_siblings(transcript_path: str, current_list_id: str, upper_bound: float) -> list[tuple[float, str]]:
    """(mtime, session id) of the sibling transcripts older than the current one, newest first.

    Only ``stat``: a transcript can be hundreds of MB and its content is not needed to name a session.
    """
    siblings: list[tuple[float, str]] = []
    try:
        with os.scandir(os.path.dirname(transcript_path)) as entries:
            for entry in entries:
                name = entry.name
                if not name.endswith(TRANSCRIPT_SUFFIX) or name.endswith(LIVE_SIDECAR_SUFFIX):
                    continue
                session = name[: -len(TRANSCRIPT_SUFFIX)]
                if not session or sanitize_list_id(session) == current_list_id:
                    continue
                try:
                    mtime = entry.stat().st_mtime
                except OSError:
                    continue
                if mtime < upper_bound:
                    siblings.append((mtime, session))
    except (OSError, ValueError):
        return []
    siblings.sort(reverse=True)
    return siblings


def find_predecessor(ctx: HookContext, root: str, list_id: str, allowance: int) -> tuple[str, Store] | Ambiguous | None:
    """The one older sibling session whose readable task list has open tasks; None when there is none.

    Never guesses: two eligible sessions, or one whose list could not be read in full without an open task
    showing, make the lookup ambiguous.
    """
    if not ctx.transcript_path:
        return None
    try:
        upper_bound = os.stat(ctx.transcript_path).st_mtime
    except (OSError, ValueError):
        upper_bound = ctx.now
    found: tuple[str, Store] | None = None
    for _mtime, session in older_siblings(ctx.transcript_path, list_id, upper_bound):
        files = list_task_files(os.path.join(root, sanitize_list_id(session)))
        if not isinstance(files, list) or not files:
            continue
        store = read_store(os.path.join(root, sanitize_list_id(session)), files, allowance)
        allowance -= store.read
        if not store.open_tasks:
            if store.unread:
                return AMBIGUOUS
            continue
        if found is not None:
            return AMBIGUOUS
        found = (sanitize_list_id(session), store)
    return found


def prepare(ctx: HookContext) -> TaskListPart | TaskHintPart | None:
    """The task part for this session: its open tasks, a recovered predecessor's, the hint, or None.

    None means nothing can have been lost: a valid store with no open task, or no store and no candidate.
    """
    explicit = ctx.env.get(LIST_ID_ENV)
    raw_id = explicit or ctx.session_id
    if not raw_id:
        return None
    root = tasks_root(ctx.env)
    list_id = sanitize_list_id(raw_id)
    directory = os.path.join(root, list_id)
    files = list_task_files(directory)
    if isinstance(files, Unreadable):
        return TaskHintPart()
    if files is not None:
        store = read_store(directory, files, MAX_TASK_FILES_READ)
        if store.open_tasks:
            return TaskListPart(HEADER_EXACT, store.open_tasks, store.unread)
        return TaskHintPart() if store.bad or store.unread else None
    if explicit:
        return None
    predecessor = find_predecessor(ctx, root, list_id, MAX_TASK_FILES_READ)
    if isinstance(predecessor, Ambiguous):
        return TaskHintPart()
    if predecessor is None:
        return None
    session, store = predecessor
    return TaskListPart(HEADER_RECOVERED.format(session=session), store.open_tasks, store.unread)
