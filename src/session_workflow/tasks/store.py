"""Find the session's open TaskCreate/TaskUpdate tasks in Claude Code's task store, for the SessionStart block.

Claude Code keeps each task as ``<config>/tasks/<listId>/<n>.json`` and does not re-inject them after
compaction. This module does the I/O (bounded: a directory of 100,000 files or a 50 MB task file must not slow
the hook) and hands the tasks to ``tasks_render``. When the exact list is missing it may recover the list of
the one session that ran before in the same project (a sibling transcript counts only when the folder it
recorded is this session's project: two projects can share one transcript folder), and when that is ambiguous
says that nothing was recovered. A fork (and its later compactions) whose parent the plugin knows gets that
parent's open tasks, whatever other sessions of the project hold.
"""

from __future__ import annotations

import os

from session_workflow.core.boundedio import read_prefix_and_stat
from session_workflow.core.jsonload import loads
from session_workflow.core.locations import SAFE_NAME_BYTES, is_safe_name, safe_name
from session_workflow.core.places import LIST_ID_ENV
from session_workflow.core.where import session_start_dir
from session_workflow.tasks.render import (
    HEADER_EXACT,
    NOT_RECOVERED,
    OPEN_STATUSES,
    Task,
    TaskHintPart,
    TaskListPart,
    parent_unread,
    recovered_header,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

    from session_workflow.core.context import HookContext


# A real task is well under a kilobyte; a file that does not fit in this prefix is not one.
MAX_TASK_FILE_BYTES = 64 * 1024
# How many files of one task list are read, newest ids first (Claude Code numbers tasks upwards). Open tasks
# are nearly always among the newest; older files are completed history, and the block says how many were left
# unread (and that TaskList has them) instead of reading them.
MAX_TASK_FILES_READ = 200
# How many task files the fallback reads in all, over every older session's list it must rule in or out.
MAX_FALLBACK_FILES_READ = 1000
STATUSES = ("pending", "in_progress", "completed", "deleted")
# Claude Code (2.1.332, read from its bundle) numbers a list's tasks upwards: TaskCreate takes one more than the
# highest id it lists or its ``.highwatermark`` holds, and only a delete (the mark raised to the deleted id before
# the file goes), a reset, a skipped id or a write under a given id (``tasks adopt``) writes that mark. A list
# without the mark has never lost a task: its files are ``1.json`` to ``M.json``. Such a list whose run reaches
# this many is probed by name (``task_ids``) instead of listed: its listing would cost ≈ 0.3 µs a name in the
# kernel alone, 30 ms at 100,000, however few files are read.
MAX_LISTED_TASKS = 1000
HIGH_WATER_MARK = ".highwatermark"
MAX_TASK_ID = 10**18  # past the 18 digits of ``is_task_id``
# A transcript folder up to this size is listed whole; a larger one is never listed (see ``older_siblings``).
MAX_LISTED_TRANSCRIPTS = 1000
TRANSCRIPT_SUFFIX = ".jsonl"
LIVE_SIDECAR_SUFFIX = ".live.jsonl"


class Store:
    """What one list directory holds: its open tasks, the ids of the files that were bad, how many were read and
    how many were not."""

    __slots__ = ("bad", "open_tasks", "read", "unread")

    def __init__(self, open_tasks: list[Task], bad: list[int], read: int, unread: int) -> None:
        self.open_tasks = open_tasks
        self.bad = bad
        self.read = read
        self.unread = unread


class Unreadable:
    """A list directory that exists but cannot be listed."""


UNREADABLE = Unreadable()


def sanitize_list_id(raw: str) -> str:
    """Claude Code's own mapping from a list id to a directory name, which also defuses ``..`` and ``/``."""
    return safe_name(raw, utf16=True)


def list_task_ids(directory: str) -> list[int] | Unreadable | None:
    """The id of every ``<n>.json`` in a list directory (its file name is ``f"{id}.json"``); None when missing.

    Names are checked with string methods as the listing streams by and only the ids are kept, so locks, the
    high-water mark and dotfiles cost nothing, nothing is opened or stat'ed, and a directory of 100,000 files
    never holds its names in memory at once.
    """
    ids: list[int] = []
    try:
        with os.scandir(directory) as entries:
            for entry in entries:
                name = entry.name
                if name.endswith(".json") and is_task_id(name[:-5]):
                    ids.append(int(name[:-5]))
    except (FileNotFoundError, NotADirectoryError):
        return None
    except (OSError, ValueError):
        return UNREADABLE
    return ids


def task_ids(directory: str) -> range | list[int] | Unreadable | None:
    """The ids of a list directory's task files (``list_task_ids``), as ``range(1, M + 1)`` without listing it when
    it is a long run Claude Code numbered: no ``.highwatermark``, ``1.json`` and ``MAX_LISTED_TASKS.json``
    there, and ``M`` the last of the run (found by doubling then halving, about 3·log2(M / 1,000) ``lstat``
    calls; ``M + 1`` is absent). Anything else is listed: a probed id that is absent while the next one is
    there (a gap, not the run's end), or a mark that appears while probing (Claude Code raises it before it
    deletes a file). ``read_store`` lists it after all when a file it reads from the run is gone (a hand-deleted
    file, not Claude Code's)."""
    if _exists(os.path.join(directory, HIGH_WATER_MARK)) is not False:  # a mark, or no way to tell: list it
        return list_task_ids(directory)
    if not (_exists(os.path.join(directory, "1.json")) and _exists(_task_path(directory, MAX_LISTED_TASKS))):
        return list_task_ids(directory)
    present, step = MAX_LISTED_TASKS, MAX_LISTED_TASKS
    while present + step < MAX_TASK_ID and _exists(_task_path(directory, present + step)):
        present += step
        step *= 2
    absent = min(present + step, MAX_TASK_ID)
    if _exists(_task_path(directory, absent + 1)) is not False:  # a gap, not the run's end
        return list_task_ids(directory)
    while absent - present > 1:  # the last present id of the run lies in [present, absent)
        middle = (present + absent) // 2
        if _exists(_task_path(directory, middle)):
            present = middle
        elif _exists(_task_path(directory, middle + 1)) is not False:  # a gap, not the run's end
            return list_task_ids(directory)
        else:
            absent = middle
    if _exists(os.path.join(directory, HIGH_WATER_MARK)) is not False:  # a delete while probing
        return list_task_ids(directory)
    return range(1, present + 1)


def _task_path(directory: str, task_id: int) -> str:
    return os.path.join(directory, f"{task_id}.json")


def _exists(path: str) -> bool | None:
    """Whether a directory entry is there, as a listing would see it (links not followed); None: cannot tell."""
    try:
        os.lstat(path)
    except (FileNotFoundError, NotADirectoryError):
        return False
    except (OSError, ValueError):
        return None
    return True


def is_task_id(text: str) -> bool:
    """Claude Code's own task ids (its ``/^[1-9]\\d*$/``), at most 18 digits so an id is never an absurd number."""
    return 0 < len(text) <= 18 and text.isdigit() and text.isascii() and text[0] != "0"


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
        record = loads(data.decode("utf-8"))
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


def read_task(directory: str, task_id: int) -> Task | None:
    """Read one task file through a bounded prefix; None when it is unreadable, too large or malformed."""
    read = read_prefix_and_stat(os.path.join(directory, f"{task_id}.json"), MAX_TASK_FILE_BYTES)
    if read is None or read[1].st_size > len(read[0]):
        return None
    parsed = parse_task(read[0], task_id)
    if parsed is None:
        return None
    status, subject, description, blocked_by = parsed
    return Task(task_id, status, subject, description, blocked_by, read[1].st_mtime)


def open_blockers(blocked_by: list[str], closed: set[int], existing: set[int]) -> list[str]:
    """The blockers that still block, as Claude Code sees it: tasks that exist and are not completed.

    A blocker whose file was malformed or not read stays listed: it may be open.
    """
    kept: list[str] = []
    for blocker in blocked_by:
        if is_task_id(blocker) and blocker not in kept:
            number = int(blocker)
            if number in existing and number not in closed:
                kept.append(blocker)
    return kept


def read_store(directory: str, ids: range | list[int], allowance: int) -> Store:
    """Read at most ``allowance`` task files, highest ids first, and keep the open tasks. ``ids`` may be the run
    ``task_ids`` probed: when a file of it is gone, the directory is listed and read as listed."""
    allowance = max(0, allowance)
    if isinstance(ids, range):
        chosen = list(ids[::-1][:allowance])
    elif len(ids) > allowance:
        import heapq  # C; a list of 100,000 ids costs a tenth of what sorting it would

        chosen = heapq.nlargest(allowance, ids)
    else:
        chosen = sorted(ids, reverse=True)
    tasks: list[Task] = []
    bad: list[int] = []
    for task_id in chosen:
        task = read_task(directory, task_id)
        if task is None:
            if isinstance(ids, range) and _exists(_task_path(directory, task_id)) is not True:
                listed = list_task_ids(directory)  # not the run Claude Code numbers: as the listing has it
                if not isinstance(listed, list):  # gone or unlistable now: every id known is unread (the hint)
                    return Store([], [], 0, len(ids))
                return read_store(directory, listed, allowance)
            bad.append(task_id)
        else:
            tasks.append(task)
    open_tasks = [task for task in tasks if task.status in OPEN_STATUSES]
    if any(task.blocked_by for task in open_tasks):
        closed = {task.id for task in tasks if task.status not in OPEN_STATUSES}
        named = {int(blocker) for task in open_tasks for blocker in task.blocked_by if is_task_id(blocker)}
        # not a set of every id: a list of 100,000 holds 4 MB of them
        existing = {n for n in named if n in ids} if isinstance(ids, range) else named.intersection(ids)
        for task in open_tasks:
            task.blocked_by = open_blockers(task.blocked_by, closed, existing)
    return Store(open_tasks, bad, len(chosen), len(ids) - len(chosen))


class Ambiguous:
    """The fallback could not name exactly one predecessor: several, or one it could not fully read."""


AMBIGUOUS = Ambiguous()


def list_dir_names(root: str) -> set[str] | None:
    """The names in the tasks root, listed once; empty when it is missing, None when it cannot be listed."""
    try:
        return set(os.listdir(root))
    except (FileNotFoundError, NotADirectoryError):
        return set()
    except (OSError, ValueError):
        return None


def ids_need_no_sanitising(names: list[str]) -> bool:
    """True when no ``<session>.jsonl`` among ``names`` has a character that sanitising would change.

    Claude Code's session ids are UUIDs, so this normally holds, and then a transcript's list directory is
    named exactly like its session. Checked over all names at once, in C: joined by "/" (which no file name
    holds), they may have no character outside the list-id ones but the dot of each transcript suffix and the
    two of each live sidecar's.
    """
    joined = "/".join([*names, ""]).encode("utf-8", "replace")
    suffix_dots = joined.count(TRANSCRIPT_SUFFIX.encode() + b"/") + joined.count(LIVE_SIDECAR_SUFFIX.encode() + b"/")
    return len(joined.translate(None, SAFE_NAME_BYTES + b"/")) == suffix_dots


def list_small_folder(directory: str, limit: int) -> list[str] | None:
    """The names in ``directory`` when it holds at most ``limit`` entries; None when it holds more.

    Stops reading at ``limit + 1`` entries, so a folder of 100,000 transcripts costs what one of 1,000 does.
    An unreadable folder holds nothing we can use (``[]``).
    """
    names: list[str] = []
    try:
        with os.scandir(directory) as entries:
            for entry in entries:
                if len(names) == limit:
                    return None
                names.append(entry.name)
    except (OSError, ValueError):
        return []
    return names


def named_like_lists(list_dirs: set[str]) -> list[str]:
    """``<list>.jsonl`` for every list whose name is already sanitised: only such a list can be a transcript's
    own (a name sanitising would change sanitises to another list)."""
    plain = [name for name in list_dirs if name and is_safe_name(name)]
    return [name + TRANSCRIPT_SUFFIX for name in plain]


def older_siblings(
    transcript_path: str, current_list_id: str, upper_bound: float, list_dirs: set[str] | None
) -> list[tuple[float, str]] | Ambiguous:
    """(mtime, session id) of the sibling transcripts older than the current one, newest first.

    Only siblings whose sanitised id names an entry of the tasks root (``list_dirs``; None when the root could
    not be listed) are considered, and only those are ``stat``-ed, never opened: a project can hold thousands
    of transcripts of hundreds of MB, and most sessions never made a task. A transcript folder of more than
    ``MAX_LISTED_TRANSCRIPTS`` entries is never listed: each list's transcript is looked up by name, so there
    only transcripts named exactly as their list count (Claude Code's session ids, UUIDs, always are), and with
    an unlistable root (nothing to look up) the answer is ambiguous.
    """
    directory = os.path.dirname(transcript_path)
    names = list_small_folder(directory, MAX_LISTED_TRANSCRIPTS)
    if names is None:
        if list_dirs is None:
            return AMBIGUOUS
        names = named_like_lists(list_dirs)
    elif list_dirs is not None and ids_need_no_sanitising(names):
        names = list({name + TRANSCRIPT_SUFFIX for name in list_dirs}.intersection(names))
    siblings: list[tuple[float, str]] = []
    for name in names:
        if not name.endswith(TRANSCRIPT_SUFFIX) or name.endswith(LIVE_SIDECAR_SUFFIX):
            continue
        session = name[: -len(TRANSCRIPT_SUFFIX)]
        if not session:
            continue
        list_id = sanitize_list_id(session)
        if list_id == current_list_id or (list_dirs is not None and list_id not in list_dirs):
            continue
        try:
            mtime = os.stat(os.path.join(directory, name)).st_mtime
        except (OSError, ValueError):
            continue
        if mtime < upper_bound:
            siblings.append((mtime, session))
    siblings.sort(reverse=True)
    return siblings


def same_project(transcript: str, project: str) -> bool:
    """True when ``transcript`` recorded ``project`` as its session's folder (its first ``cwd``: ``core.where``'s
    one rule), links resolved. Claude Code names a transcript folder by the project's path with every other
    character than a letter or digit a ``-``, so ``shop-a`` and ``shop.a`` share one: the folder alone says
    nothing."""
    recorded = session_start_dir(transcript)
    return recorded is not None and os.path.realpath(recorded) == os.path.realpath(project)


def find_predecessor(ctx: HookContext, root: str, list_id: str, allowance: int) -> tuple[str, Store] | Ambiguous | None:
    """The one older sibling session of this project whose readable task list has open tasks; None when there is
    none (or this session's project is unknown).

    Never guesses: two eligible sessions, or one whose list could not be read in full (``MAX_TASK_FILES_READ``
    per list, ``allowance`` in all) without an open task showing, make the lookup ambiguous. A sibling whose
    transcript names another project (``same_project``) is no candidate, whatever its list holds.
    """
    project = ctx.project_dir()
    if not ctx.transcript_path or project is None:
        return None
    list_dirs = list_dir_names(root)
    if list_dirs is not None and not list_dirs:
        return None
    try:
        upper_bound = os.stat(ctx.transcript_path).st_mtime
    except (OSError, ValueError):
        upper_bound = ctx.now
    siblings = older_siblings(ctx.transcript_path, list_id, upper_bound, list_dirs)
    if isinstance(siblings, Ambiguous):
        return AMBIGUOUS
    found: tuple[str, Store] | None = None
    for _mtime, session in siblings:
        directory = os.path.join(root, sanitize_list_id(session))
        ids = task_ids(directory)
        if isinstance(ids, Unreadable) or not ids:
            continue
        if not same_project(os.path.join(os.path.dirname(ctx.transcript_path), session + TRANSCRIPT_SUFFIX), project):
            continue
        store = read_store(directory, ids, min(MAX_TASK_FILES_READ, allowance))
        allowance -= store.read
        if not store.open_tasks:
            if store.unread:
                return AMBIGUOUS
            continue
        if found is not None:
            return AMBIGUOUS
        found = (sanitize_list_id(session), store)
    return found


def parent_part(root: str, parent: str) -> TaskListPart | TaskHintPart | None:
    """The open tasks of the session this one continues (a fork's parent) as the recovered list; the line saying
    its list could not be read in full; or None when it holds no open task (this session's list is empty, and
    the plugin knows it)."""
    list_id = sanitize_list_id(parent)
    directory = os.path.join(root, list_id)
    ids = task_ids(directory)
    if isinstance(ids, Unreadable):
        return TaskHintPart(text=parent_unread(list_id))
    if not ids:
        return None
    store = read_store(directory, ids, MAX_TASK_FILES_READ)
    if store.open_tasks:
        return TaskListPart(recovered_header(list_id), store.open_tasks, store.unread, store.bad)
    return TaskHintPart(store.bad, parent_unread(list_id)) if store.bad or store.unread else None


def prepare(ctx: HookContext, parent: Callable[[], str | None] | None = None) -> TaskListPart | TaskHintPart | None:
    """The task part for this session: its open tasks, its parent's (``parent``: the session a fork continues,
    asked only when this session has no list), a recovered predecessor's, a line saying nothing was recovered,
    the hint, or None.

    None means nothing can have been lost: a valid store with no open task, or no store and no candidate.
    """
    explicit = ctx.places.env.get(LIST_ID_ENV)
    list_id = ctx.places.task_list_name(ctx.session_id)
    root = ctx.places.tasks_root
    if list_id is None or root is None:
        return None
    directory = os.path.join(root, list_id)
    ids = task_ids(directory)
    if isinstance(ids, Unreadable):
        return TaskHintPart()
    if ids is not None:
        store = read_store(directory, ids, MAX_TASK_FILES_READ)
        if store.open_tasks:
            return TaskListPart(HEADER_EXACT, store.open_tasks, store.unread, store.bad)
        return TaskHintPart(store.bad) if store.bad or store.unread else None
    if explicit:
        return None
    parent_session = parent() if parent is not None else None
    if parent_session:
        return parent_part(root, parent_session)
    predecessor = find_predecessor(ctx, root, list_id, MAX_FALLBACK_FILES_READ)
    if isinstance(predecessor, Ambiguous):
        return TaskHintPart(text=NOT_RECOVERED)
    if predecessor is None:
        return None
    session, store = predecessor
    return TaskListPart(recovered_header(session), store.open_tasks, store.unread, store.bad)
