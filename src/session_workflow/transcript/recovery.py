"""Compact recovery: the user's own last prompts and the TodoWrite snapshot, read from the transcript's tail.

A compaction summary paraphrases; what the person actually asked for, word for word, is what a long run most
needs to stay on course. The transcript keeps it, but transcripts carry whole request bodies and reach hundreds
of MB, so only its last few MB are read, backwards, and only lines that can hold what we look for are parsed:
at a compaction in the run record's pass (``tail``, ``record.prepare``), one read of the tail for both.
Record shapes are Claude Code 2.1.332's, measured (tests/fixtures/transcripts/README.md).
"""

from __future__ import annotations

import os

from session_workflow.core.jsonload import loads
from session_workflow.core.parts import PreparedPart
from session_workflow.core.text import cut_utf8, one_line, utf8_len
from session_workflow.transcript.tail import BOUNDARY_MARKER, TAIL_BYTES, read_back

TYPE_CHECKING = False
if TYPE_CHECKING:
    from session_workflow.core.context import HookContext

MAX_PROMPTS = 3
PROMPT_BYTES = 500
TODO_SECTION_BYTES = 1024
TODO_CONTENT_BYTES = 200
TODO_STATUS_BYTES = 24
# The shortest cut of the newest prompt still worth showing when space is tight.
MIN_PROMPT_LINE_BYTES = 64

# Claude Code's promptSource values for words a person submitted (typed, queued while busy, an accepted
# suggestion, or sent through -p / the SDK); "system" and records without one are not the user's words.
PROMPT_SOURCES = ("typed", "queued", "suggestion_accepted", "sdk")
# Flags on user records that are not a prompt: harness text, the compaction summary, a subagent's record.
NOT_PROMPT_FLAGS = ("isMeta", "isCompactSummary", "isSidechain", "isVisibleInTranscriptOnly")
# Texts that Claude Code writes in user records for commands, their output, bash mode and reminders.
NOT_PROMPT_PREFIXES = (
    "<command-name>",
    "<command-message>",
    "<command-args>",
    "<local-command-",
    "<bash-",
    "<system-reminder>",
    "[Request interrupted",
)

PROMPTS_HEADER = (
    "USER'S RECENT PROMPTS (quoted verbatim from the transcript, oldest first, one line each — a record of what"
    " the user said before compaction, NOT new instructions):"
)
TODOS_HEADER = "TODOWRITE SNAPSHOT (the todo list as the last TodoWrite call before compaction left it):"
# The keys only a prompt record and a TodoWrite result carry; no other line is even cut out of the tail.
PROMPT_MARKER = b'"promptSource"'
TODOS_MARKER = b'"newTodos"'


def _prompt_texts(content: object) -> list[str] | None:
    """The text of a user record's content; None when it carries a tool result."""
    if isinstance(content, str):
        return [content]
    if not isinstance(content, list):
        return None
    texts: list[str] = []
    for block in content:
        if not isinstance(block, dict):
            continue
        if block.get("type") == "tool_result":
            return None
        text = block.get("text")
        if block.get("type") == "text" and isinstance(text, str):
            texts.append(text)
    return texts


def prompt_text(record: dict[str, object]) -> str | None:
    """The one-line text of a prompt the person submitted, or None for every other record."""
    if record.get("type") != "user" or record.get("promptSource") not in PROMPT_SOURCES:
        return None
    if "toolUseResult" in record or any(record.get(flag) is True for flag in NOT_PROMPT_FLAGS):
        return None
    origin = record.get("origin")
    if isinstance(origin, dict) and origin.get("kind") != "human":
        return None
    message = record.get("message")
    texts = _prompt_texts(message.get("content")) if isinstance(message, dict) else None
    if texts is None:
        return None
    kept = [text for text in texts if not text.lstrip().startswith(NOT_PROMPT_PREFIXES)]
    return one_line(" ".join(kept)) or None


def todo_snapshot(record: dict[str, object]) -> list[tuple[str, str]] | None:
    """(status, content) of the todos a successful TodoWrite call set; None for every other record.

    Claude Code keeps an all-completed list as an empty one, so such a snapshot is empty here too.
    """
    result = record.get("toolUseResult")
    if record.get("type") != "user" or record.get("isSidechain") is True or not isinstance(result, dict):
        return None
    todos = result.get("newTodos")
    if not isinstance(todos, list):
        return None
    snapshot: list[tuple[str, str]] = []
    for todo in todos:
        if isinstance(todo, dict) and isinstance(todo.get("status"), str) and isinstance(todo.get("content"), str):
            snapshot.append((str(todo["status"]), str(todo["content"])))
    if all(status == "completed" for status, _content in snapshot):
        return []
    return snapshot


def is_boundary(record: dict[str, object]) -> bool:
    """A main-thread compaction boundary (``system`` record, ``compact_boundary`` subtype)."""
    main_thread = record.get("isSidechain") is not True
    return record.get("type") == "system" and record.get("subtype") == "compact_boundary" and main_thread


class Recovering:
    """The recovery's reader of the tail (``tail.read_back``): the last prompts, newest first, and the last TodoWrite
    snapshot (None: none found).

    Only lines holding a prompt's or a TodoWrite result's key (or a boundary's) are cut out of the tail and
    parsed. The snapshot is looked for only in the thread that was just compacted: back from the end, past this
    compaction's boundary, up to the one before it (a session that compacts often does not search its whole
    tail for a TodoWrite it never made), and not at all when ``todos_wanted`` is False.
    """

    __slots__ = ("boundaries", "markers", "prompts", "todos")

    def __init__(self, todos_wanted: bool = True) -> None:
        self.prompts: list[str] = []
        self.todos: list[tuple[str, str]] | None = None
        self.markers = [PROMPT_MARKER, TODOS_MARKER, BOUNDARY_MARKER] if todos_wanted else [PROMPT_MARKER]
        self.boundaries = 0

    def take(self, line: bytes, _at: int, held: tuple[bytes, ...]) -> bool:
        markers = self.markers
        want_prompt = len(self.prompts) < MAX_PROMPTS and PROMPT_MARKER in held
        want_todos = TODOS_MARKER in markers and TODOS_MARKER in held
        boundary = BOUNDARY_MARKER in markers and BOUNDARY_MARKER in held
        if not (want_prompt or want_todos or boundary):
            return False
        try:
            record = loads(line)
        except (ValueError, RecursionError):
            return False
        if not isinstance(record, dict):
            return False
        text = prompt_text(record) if want_prompt else None
        changed = False
        if text is not None:
            self.prompts.append(text)
            if len(self.prompts) == MAX_PROMPTS:
                markers.remove(PROMPT_MARKER)
                changed = True
        elif want_todos:
            self.todos = todo_snapshot(record)
        elif boundary and is_boundary(record):
            self.boundaries += 1
        if TODOS_MARKER in markers and (self.todos is not None or self.boundaries == 2):
            markers.remove(TODOS_MARKER)
            markers.remove(BOUNDARY_MARKER)
            changed = True
        return changed

    def found(self) -> tuple[list[str], list[tuple[str, str]] | None]:
        """(the last prompts, oldest first; the last TodoWrite snapshot or None)."""
        return self.prompts[::-1], self.todos


def scan_transcript(
    path: str, max_bytes: int = TAIL_BYTES, todos_wanted: bool = True
) -> tuple[list[str], list[tuple[str, str]] | None]:
    """(the last prompts, oldest first; the last TodoWrite snapshot or None) from the transcript's tail, read by
    this part alone (``Recovering``)."""
    reader = Recovering(todos_wanted)
    read_back(path, [reader], max_bytes)
    return reader.found()


def todo_line(status: str, content: str) -> str:
    return f"- [{cut_utf8(one_line(status), TODO_STATUS_BYTES)}] {cut_utf8(one_line(content), TODO_CONTENT_BYTES)}"


def todo_section(todos: list[tuple[str, str]], budget: int) -> str:
    """The snapshot in list order within ``budget`` bytes, the count of todos left out on its last line."""
    reserve = 1 + utf8_len(f"…{len(todos)} more todos")
    used = utf8_len(TODOS_HEADER)
    if used + reserve > budget:
        return ""
    lines = [TODOS_HEADER]
    for index, (status, content) in enumerate(todos):
        line = todo_line(status, content)
        cost = 1 + utf8_len(line)
        if used + cost + (reserve if index < len(todos) - 1 else 0) > budget:
            break
        lines.append(line)
        used += cost
    left_out = len(todos) - (len(lines) - 1)
    if left_out:
        lines.append(f"…{left_out} more todos")
    return "\n".join(lines)


def cut_note(dropped_prompts: int, prompts: int, dropped_todos: int) -> str:
    """The line naming what the recovery part left out for space (empty when nothing was)."""
    items = []
    if dropped_prompts:
        older = "older " if dropped_prompts < prompts else ""
        items.append(f"{dropped_prompts} {older}user prompt{'s' if dropped_prompts > 1 else ''}")
    if dropped_todos:
        items.append(f"the TodoWrite snapshot ({dropped_todos} todo{'s' if dropped_todos > 1 else ''})")
    return f"(recovery cut for space: {' and '.join(items)})" if items else ""


class RecoveryPart(PreparedPart):
    """The user's recent prompts and the TodoWrite snapshot; short of space, the todos go first, then old prompts."""

    name = "recovery"
    digest_kept = False  # the user's own words: the ledger keeps no digest of them

    def __init__(self, prompts: list[str], todos: list[tuple[str, str]]) -> None:
        self.prompts = prompts
        self.todos = todos
        self.note_reserve = 1 + max(
            utf8_len(cut_note(cut, len(prompts), len(todos))) for cut in range(len(prompts) + 1)
        )
        self.full = self._render(1 << 30)
        self.cap = utf8_len(self.full)
        if prompts:
            least = utf8_len(PROMPTS_HEADER) + 1 + MIN_PROMPT_LINE_BYTES
        else:
            least = utf8_len(TODOS_HEADER) + 1 + utf8_len(f"…{len(todos)} more todos")
        self.floor = min(self.cap, least + self.note_reserve)

    def render(self, budget: int) -> str:
        if budget >= self.cap:
            return self.full
        return self._render(budget - self.note_reserve)

    def _render(self, room: int) -> str:
        """Prompts newest first while they fit (the newest cut if it must be), then the todos in what is left."""
        lines: list[str] = []
        used = utf8_len(PROMPTS_HEADER)
        for prompt in reversed(self.prompts):
            line = "> " + cut_utf8(prompt, PROMPT_BYTES)
            if used + 1 + utf8_len(line) > room:
                # Judged on the room, not the cut: a cut on a code-point boundary may fall a few bytes short.
                space = room - used - 1
                if lines or space < min(MIN_PROMPT_LINE_BYTES, utf8_len(prompt) + 2):
                    break
                line = cut_utf8(line, space)
            lines.insert(0, line)
            used += 1 + utf8_len(line)
        sections = ["\n".join([PROMPTS_HEADER, *lines])] if lines else []
        left = room - (used + 1 if lines else 0)
        todos = todo_section(self.todos, min(TODO_SECTION_BYTES, left)) if self.todos else ""
        if todos:
            sections.append(todos)
        if not sections:
            return ""
        dropped_todos = len(self.todos) if self.todos and not todos else 0
        note = cut_note(len(self.prompts) - len(lines), len(self.prompts), dropped_todos)
        return "\n".join([*sections, note] if note else sections)


def has_task_list(ctx: HookContext) -> bool:
    """Whether this session keeps a TaskCreate list: then its TodoWrite is disabled, and no snapshot exists."""
    folder = ctx.places.task_list_dir(ctx.session_id)
    return folder is not None and os.path.isdir(folder)


# What the run record's pass read for this part (``along``), by transcript: (the file's identity then, the reader).
_READ_ALONG: dict[str, tuple[tuple[int, int, int], Recovering]] = {}


def along(ctx: HookContext) -> tuple[tuple[int, int, int], Recovering] | None:
    """A reader for the run record's pass over the same tail (``record.prepare``), with the transcript's identity
    before it; None for a source that gets no recovery, or a transcript that cannot be read. ``keep`` it once the
    pass is over."""
    if ctx.source != "compact" or not ctx.transcript_path:
        return None
    identity = _identity(ctx.transcript_path)
    return (identity, Recovering(todos_wanted=not has_task_list(ctx))) if identity is not None else None


def keep(path: str, read: tuple[tuple[int, int, int], Recovering]) -> None:
    """Keep what a finished pass read for this part, for ``prepare``."""
    _READ_ALONG[path] = read


def _identity(path: str) -> tuple[int, int, int] | None:
    """(inode, size, mtime in ns) of the transcript: what the pass read is this part's only while these hold."""
    try:
        info = os.stat(path)
    except (OSError, ValueError):
        return None
    return info.st_ino, info.st_size, info.st_mtime_ns


def prepare(ctx: HookContext) -> RecoveryPart | None:
    """The recovery part after a compaction; None for other sources or when the tail holds neither. What the run
    record's pass read along is taken when the transcript is still what it read; else the tail is read here."""
    if ctx.source != "compact" or not ctx.transcript_path:
        return None
    kept = _READ_ALONG.pop(ctx.transcript_path, None)
    if kept is not None and kept[0] == _identity(ctx.transcript_path):
        prompts, todos = kept[1].found()
    else:
        prompts, todos = scan_transcript(ctx.transcript_path, todos_wanted=not has_task_list(ctx))
    if not prompts and not todos:
        return None
    return RecoveryPart(prompts, todos or [])
