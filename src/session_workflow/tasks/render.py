"""The task block, rendered purely from tasks already read from Claude Code's task store.

Claude Code does not re-inject TaskCreate/TaskUpdate tasks after compaction, so the SessionStart block carries
the open ones. Everything here is budgeted in UTF-8 bytes and nothing a task file holds can start a line:
subjects and descriptions are flattened with ``one_line``, ids are digits we parsed ourselves, and statuses
come from a fixed set.
"""

from __future__ import annotations

from session_workflow.core.parts import PreparedPart
from session_workflow.core.text import cut_utf8, one_line, shell_command, utf8_len

HEADER_EXACT = "STRUCTURED TASK LIST (compact-proof, from disk — source of truth; TaskUpdate to change):"
# A recovered list lives in another session's folder: TaskList and TaskUpdate there see none of it until
# ``session-workflow tasks adopt`` copies it into this session's folder.
HEADER_RECOVERED = (
    "STRUCTURED TASK LIST (compact-proof, recovered from session {session}; TaskList and TaskUpdate cannot see"
    " these here until you run `{adopt}`, which copies them into this session's"
    " list under the same ids):"
)
HEADER_READ_ONLY = (
    "STRUCTURED TASK LIST (compact-proof, recovered from session {session}; read-only here: TaskList and"
    " TaskUpdate cannot see or change these tasks):"
)
FALLBACK_HINT = (
    "STRUCTURED TASK LIST: your TaskCreate/TaskUpdate tasks persist on disk across compaction — call TaskList to"
    " see current open tasks; do NOT assume they were lost."
)

CAP_BYTES = 4096
MAX_TASKS = 40
SUBJECT_BYTES = 160
DESCRIPTION_BYTES = 300
# A task blocked by more than this many open tasks shows the first ones and a count of the rest.
MAX_BLOCKERS_SHOWN = 8
# Task files that could not be read (cut mid-write, not Claude Code's schema) named in the block, newest first.
MAX_UNREADABLE_NAMED = 3

OPEN_STATUSES = ("in_progress", "pending")


class Task:
    """One valid task file: its numeric id (the file name), status, text, open blockers and file mtime."""

    __slots__ = ("blocked_by", "description", "id", "mtime", "status", "subject")

    def __init__(
        self, task_id: int, status: str, subject: str, description: str, blocked_by: list[str], mtime: float
    ) -> None:
        self.id = task_id
        self.status = status
        self.subject = subject
        self.description = description
        self.blocked_by = blocked_by
        self.mtime = mtime


def blocked_suffix(blocked_by: list[str]) -> str:
    """`` (blocked by #a,#b)``, or nothing; the ids are digit strings checked by the reader."""
    if not blocked_by:
        return ""
    shown = ",".join("#" + blocker for blocker in blocked_by[:MAX_BLOCKERS_SHOWN])
    rest = len(blocked_by) - MAX_BLOCKERS_SHOWN
    return f" (blocked by {shown}{f' and {rest} more' if rest > 0 else ''})"


def task_entry(task: Task) -> str:
    """The task's line, plus its ``  description:`` line when it is in progress and has one."""
    subject = cut_utf8(one_line(task.subject), SUBJECT_BYTES)
    line = f"#{task.id} [{task.status}]" + (" " + subject if subject else "") + blocked_suffix(task.blocked_by)
    if task.status == "in_progress":
        description = cut_utf8(one_line(task.description), DESCRIPTION_BYTES)
        if description:
            line += "\n  description: " + description
    return line


def overflow_line(omitted: int, unread: int) -> str:
    """The closing line that keeps a cut honest: how many open tasks are not shown, and files not read."""
    if unread and omitted:
        return f"…{omitted} more, and {unread} older task files not read: call TaskList"
    if unread:
        return f"…{unread} older task files not read: call TaskList"
    return f"…{omitted} more: call TaskList"


def unreadable_line(bad: list[int]) -> str:
    """The line naming the task files that could not be read, newest first, so that a task missing from the list
    is not taken for one that does not exist; "" when there are none. Ids are digits the reader parsed."""
    if not bad:
        return ""
    newest = sorted(bad, reverse=True)
    names = ", ".join(f"{task_id}.json" for task_id in newest[:MAX_UNREADABLE_NAMED])
    rest = len(bad) - MAX_UNREADABLE_NAMED
    files = "task file" if len(bad) == 1 else "task files"
    return f"…{files} {names}{f' and {rest} more' if rest > 0 else ''} could not be read: call TaskList"


def priority(task: Task) -> tuple[int, float, int]:
    """Sort key for selection: in progress first, then newest file first (newest id on a tie)."""
    return (0 if task.status == "in_progress" else 1, -task.mtime, -task.id)


def render_block(header: str, tasks: list[Task], unread: int, budget: int, bad: list[int] | None = None) -> str:
    """Header, the open tasks that fit (at most 40, by priority), the overflow line and the line naming the
    ``bad`` (unreadable) task files; ≤ ``budget`` bytes.

    The overflow line's bytes are reserved before a task is accepted whenever some task may still be left out,
    so the exact omitted count always fits. Returns "" when not even the header and those lines fit.
    """
    candidates = sorted((task for task in tasks if task.status in OPEN_STATUSES), key=priority)
    reserve = 1 + utf8_len(overflow_line(len(candidates), unread))
    unreadable = unreadable_line(bad or [])
    used = utf8_len(header) + (1 + utf8_len(unreadable) if unreadable else 0)
    if used + reserve > budget:
        return ""
    accepted: list[tuple[Task, str]] = []
    skipped = bool(unread)
    for index, task in enumerate(candidates):
        if len(accepted) == MAX_TASKS:
            break
        entry = task_entry(task)
        cost = 1 + utf8_len(entry)
        more_may_follow = skipped or index < len(candidates) - 1
        if used + cost + (reserve if more_may_follow else 0) <= budget:
            accepted.append((task, entry))
            used += cost
        else:
            skipped = True
    accepted.sort(key=lambda pair: (pair[0].status != "in_progress", pair[0].id))
    lines = [header, *(entry for _task, entry in accepted)]
    omitted = len(candidates) - len(accepted)
    if omitted or unread:
        lines.append(overflow_line(omitted, unread))
    if unreadable:
        lines.append(unreadable)
    return "\n".join(lines)


def recovered_header(session: str) -> str:
    """The fallback's header: the one command that makes the list changeable, or read-only where none can be
    offered (an id a shell would take for an option)."""
    if session.startswith("-"):
        return HEADER_READ_ONLY.format(session=session)
    return HEADER_RECOVERED.format(session=session, adopt=shell_command("session-workflow", "tasks", "adopt", session))


class TaskListPart(PreparedPart):
    """The open tasks of one task list, under the exact or the recovered header."""

    name = "tasks"
    cap = CAP_BYTES

    def __init__(self, header: str, tasks: list[Task], unread: int, bad: list[int] | None = None) -> None:
        self.header = header
        self.tasks = tasks
        self.unread = unread
        self.bad = bad or []
        self.open_count = sum(1 for task in tasks if task.status in OPEN_STATUSES)
        self.rendered = ""
        unreadable = unreadable_line(self.bad)
        self.floor = utf8_len(header) + 1 + utf8_len(overflow_line(self.open_count, unread))
        self.floor += 1 + utf8_len(unreadable) if unreadable else 0

    def render(self, budget: int) -> str:
        self.rendered = render_block(self.header, self.tasks, self.unread, min(budget, self.cap), self.bad)
        return self.rendered

    def ledger_facts(self) -> dict[str, object]:
        """How many open tasks the sent block did not show (its lines ``#N [status]`` are the shown ones)."""
        shown = sum(1 for line in self.rendered.split("\n") if line[1:].split(" [", 1)[0].isdigit() and line[:1] == "#")
        return {"tasks_hidden": self.open_count - shown} if self.rendered and self.open_count > shown else {}


class TaskHintPart(PreparedPart):
    """The fallback hint: tasks may exist but could not be read safely, so point at TaskList (and name the files
    that could not be read, ``bad``)."""

    name = "tasks"
    open_count = 0

    def __init__(self, bad: list[int] | None = None) -> None:
        unreadable = unreadable_line(bad or [])
        self.text = FALLBACK_HINT + ("\n" + unreadable if unreadable else "")
        self.cap = self.floor = utf8_len(self.text)

    def render(self, budget: int) -> str:
        return self.text if budget >= self.cap else ""
