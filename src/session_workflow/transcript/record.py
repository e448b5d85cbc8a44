"""The run record: what this session did since the anchor's last write, and its work still in flight, from the
transcript's tail.

The anchor holds only what the model wrote down; the commands it ran since (and how they ended), the files it
changed, the commits it made and the background shells and subagents it started are in Claude Code's transcript
and nowhere else. A full history hurts resumption, so the record is short, relative to the cursor and structured:
failures first, one line per action, folded, cut by whole lines with a count. All of it is data from the
transcript, which repository content reaches: every value is escaped onto its one line inside a code span it
cannot close, and nothing of it is stored. Record shapes are Claude Code 2.1.332's, measured
(tests/fixtures/transcripts/README.md, references/how-it-works.md).
"""

from __future__ import annotations

import os

from session_workflow.core.boundedio import iter_marked_from_end
from session_workflow.core.jsonload import loads
from session_workflow.core.locations import _fnv1a64
from session_workflow.core.parts import PreparedPart
from session_workflow.core.text import ELLIPSIS, escaped, utf8_len
from session_workflow.transcript.shell import WRITE_VERBS, runs_git_commit, writer_verb
from session_workflow.transcript.tail import BOUNDARY_MARKER, TAIL_BYTES, read_back

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

    from session_workflow.core.context import HookContext
    from session_workflow.core.places import Places

    # (the transcript's inode, its size, the offset of the anchor write that opened the window or -1, and a
    # fingerprint of the bytes just before that size)
    Look = tuple[int, int, int, int]

CAP_BYTES = 1024
# The ledger line's keys for where the record's look reached (``Reading.look``): the transcript's inode, a size,
# an offset and a fingerprint, no text.
LOOK_FILE = "record_file"
LOOK_SEEN = "record_seen"
LOOK_WRITE = "record_write"
LOOK_MARK = "record_mark"
# How many bytes before the size a look covered its fingerprint holds: the same inode rewritten is another file.
MARK_BYTES = 64
# The sources whose block holds a run record.
LOOKING_SOURCES = ("compact", "resume")
# This hook's look at each transcript, for its ledger line (``look_facts``). A look holds while the file only
# grows, so one kept from an earlier block of the same process is still true.
_LOOKS: dict[str, Look] = {}
# Actions parsed in full, newest first; older ones in the window are only counted (a line search, no parse).
MAX_PARSED = 40
# Calls past those only counted, at most this many: past it the record says older ones were not read. Each costs
# about 3 µs on the compact hook (benchmarks/, ``ss-record``): 100 keep the record's whole cost under 0.15 J.
MAX_COUNTED = 100
# How far back from the transcript's end the record reads for its window: its newest MB (older actions are "not
# read"). The tail holds 4 MB for the prompt recovery; each marker the record adds is a search of what it reads, and
# on text-heavy output (test logs, source) one finding nothing costs about 0.35 ms a MB.
WINDOW_BYTES = 1 << 20
VALUE_BYTES = 120
HEADER = (
    "RUN RECORD (from Claude Code's transcript: what this session did {since}; ran, not verified done — check the"
    " artifact before redoing or skipping):"
)
SINCE_ANCHOR = "since its anchor was last written"
SINCE_BOUNDARY = "since the compaction before"
SINCE_START = "since its transcript began"
# The window's start (the anchor's last write, or a boundary) lies before what was read or counted.
SINCE_UNREAD = (
    "in the part of its transcript read (its anchor's last write, or the compaction before, lies further back)"
)
# On resume only, background shells only (measured, references/how-it-works.md): Claude Code reports each task
# of the ended process as "stopped ... may have been stopped", but does not stop a background shell when it exits.
IN_FLIGHT_HEADER = (
    "BACKGROUND SHELLS NEVER REPORTED FINISHED (the Claude Code process that started them ended without stopping"
    " them: each may still be running — do not start it again; check with `ps` and its output file):"
)
# The lines worth cutting out of the tail: a tool call, its result, a task notification, a boundary (keys and
# values alone, whatever the separators; a boundary as Claude Code writes it, as ``recovery`` finds it).
USE_MARKER = b'"tool_use"'
RESULT_MARKER = b'"toolUseResult"'
# An answer of the model's (an ``assistant`` record, as Claude Code writes it).
ANSWER_MARKER = b'"type":"assistant"'
NOTICE_MARKER = b'"task-notification"'
# A tool result's call id, and the key that marks a subagent's record, as Claude Code writes them (compact JSON).
RESULT_ID = b'"tool_use_id":"'
SIDE_CHAIN_KEY = b'"isSidechain":'
# What a result left unparsed stands for (a read-only tool's, or one that plainly went well, ``_went_well``): a
# result of no error, holding nothing else the record reads.
UNPARSED_OUTCOME: tuple[dict[str, object], object] = ({}, {})
MARKERS = (USE_MARKER, RESULT_MARKER, NOTICE_MARKER, BOUNDARY_MARKER)
# A background shell's start: the key its result carries (``_background``).
START_MARKER = b'"backgroundTaskId"'
# What sends a plain result line to be parsed (``_went_well``): an error, an interrupted command, a background
# start. Compact JSON escapes every quote inside a string, so each can only be a key; a false yes costs a parse.
PARSE_SIGNS = (b'"is_error":true', b'"interrupted":true', START_MARKER)
# Cheap signs, searched before any parse (``_may_matter``), that a call may write the anchor.
ANCHOR_SIGN = b"session-workflow anchor "
ANCHORS_SIGN = b".claude/anchors/"
# Past the window's boundary, what a call that may write the anchor holds (``_may_write``): a writer verb, or an
# anchors folder (whatever the separators) beside a file tool's name; both hold ``ANCHOR_WORD``, the one byte string
# the look past a boundary searches for.
WRITE_SIGNS = tuple(ANCHOR_SIGN + verb.encode() for verb in WRITE_VERBS)
FOLDER_SIGN = b"anchors"
ANCHOR_WORD = b"anchor"
# A JSON escape of an ASCII character: such a call may spell a sign otherwise (``_may_write``).
ESCAPE_SIGN = b"\\u00"
# On resume, once the window is found, the pass goes on for a background shell's start (its result's key) before
# it; only when there is one is that part read again for the starts' results (each then adds its call's id,
# ``CALL_ID``) and the notifications and stop calls that end them.
BEYOND_MARKERS = (START_MARKER, NOTICE_MARKER, b'"TaskStop"', b'"KillShell"')
CALL_ID = b'"id":"'
# How many anchor writes past the parse limit may have their result looked up after them (``_result_after``).
MAX_LOOKUPS = 8
# Past the parse limit: calls (to count), and only the results that may matter (an anchor writer's output names
# its file; a background start's carries its id), so the pass cuts out half as many lines.
LIGHT_MARKERS = (
    USE_MARKER,
    NOTICE_MARKER,
    BOUNDARY_MARKER,
    ANCHORS_SIGN,
    START_MARKER,
    b'"async_launched"',
)
SHELL = "background shell"
AGENT = "subagent"
FILE_TOOLS = ("Write", "Edit", "MultiEdit", "NotebookEdit")
STOP_TOOLS = ("TaskStop", "KillShell")
AGENT_TOOLS = ("Agent", "Task")
# Read-only tools (2.1.332's, and a question to the user, a skill's instructions, plan mode): not an action the run
# could redo by mistake.
QUIET_TOOLS = frozenset(
    (
        "Read",
        "Grep",
        "Glob",
        "LS",
        "TaskList",
        "TaskGet",
        "TaskOutput",
        "BashOutput",
        "ToolSearch",
        "WebFetch",
        "WebSearch",
        "CronList",
        "AskUserQuestion",
        "Skill",
        "EnterPlanMode",
        "ExitPlanMode",
    )
)


def span(text: str, limit: int = VALUE_BYTES) -> str:
    """``text`` on one visible line in a code span it cannot close (a backtick is escaped), cut to ``limit`` bytes
    between whole characters, so no escape is left half written."""
    shown = escaped(text[:limit], "`")
    if utf8_len(shown) <= limit and len(text) <= limit:
        return "`" + shown + "`"
    pieces = []
    used = utf8_len(ELLIPSIS)
    for char in text[:limit]:
        piece = escaped(char, "`")
        used += utf8_len(piece)
        if used > limit:
            break
        pieces.append(piece)
    return "`" + "".join(pieces) + ELLIPSIS + "`"


def _text_of(content: object) -> str:
    """A tool result's or a message's text (a string, or its text blocks joined)."""
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    return "\n".join(
        str(block.get("text")) for block in content if isinstance(block, dict) and isinstance(block.get("text"), str)
    )


def _between(text: str, start: str, end: str) -> str | None:
    """The text between the first ``start`` and the ``end`` after it (string methods: linear)."""
    at = text.find(start)
    if at < 0:
        return None
    stop = text.find(end, at + len(start))
    return text[at + len(start) : stop] if stop >= 0 else None


def commits_in(output: str) -> list[tuple[str, str]]:
    """(hash, subject) of each commit ``git commit`` reported in ``output``: ``[branch (root-commit) abc1234] s``."""
    found = []
    for line in output[:16384].splitlines():  # git prints it first; a long output is not split whole
        if not line.startswith("[") or "] " not in line:
            continue
        inside, subject = line[1:].split("] ", 1)
        word = inside.rsplit(" ", 1)[-1]
        if 7 <= len(word) <= 40 and all(char in "0123456789abcdef" for char in word) and " " in inside:
            found.append((word, subject))
    return found


def is_anchor_write(name: str, tool_input: dict[str, object]) -> bool:
    """Whether a tool call writes a control anchor: a writer verb of ``session-workflow anchor`` run through Bash
    (``writer_verb``), or a Write or Edit of a file in an anchors folder."""
    if name == "Bash":
        command = tool_input.get("command")
        return isinstance(command, str) and writer_verb(command) is not None
    path = tool_input.get("file_path")
    return name in FILE_TOOLS and isinstance(path, str) and ".claude/anchors/" in path.replace("\\", "/")


class Flight:
    """A background shell or subagent started in the window: its kind, id, description and output file."""

    __slots__ = ("description", "kind", "output", "task_id")

    def __init__(self, kind: str, task_id: str, description: str, output: str) -> None:
        self.kind = kind
        self.task_id = task_id
        self.description = description
        self.output = output


class Scan:
    """What the tail held since the cut: action lines newest first (``(rank, text)``: 0 failures, then commits,
    files, task changes, commands that ended well), the older actions only counted, work in flight (oldest first),
    and whether an anchor write (a step or another) or a boundary started the window."""

    __slots__ = ("actions", "flights", "from_start", "older", "since_anchor", "stepped", "unread")

    def __init__(self) -> None:
        self.actions: list[tuple[int, str]] = []
        self.older = 0
        # The window goes on past the calls counted (``MAX_COUNTED``) or past the tail read: its start was not read.
        self.unread = False
        # No anchor write and no boundary from the transcript's first line on: the window is all of it.
        self.from_start = False
        self.flights: list[Flight] = []
        self.since_anchor = False
        # The newest anchor write was an ``anchor step``: its ``next:`` is newer than the cursor's line.
        self.stepped = False

    def since(self) -> str:
        """Where the window opens, as the record's header says it."""
        if self.since_anchor:
            return SINCE_ANCHOR
        return SINCE_UNREAD if self.unread else SINCE_START if self.from_start else SINCE_BOUNDARY


def shown_path(path: str, base: str) -> str:
    """``path`` relative to the project when inside it (shorter), else as it is."""
    inside = base and path.startswith(base.rstrip("/") + "/") and len(path) > len(base.rstrip("/")) + 1
    return path[len(base.rstrip("/")) + 1 :] if inside else path


def action_lines(
    name: str, tool_input: dict[str, object], block: dict[str, object], result: object, base: str = ""
) -> list[tuple[int, str]]:
    """The action lines of one finished tool call (none for a read-only tool or a background start)."""
    failed = block.get("is_error") is True
    text = _text_of(block.get("content"))
    details = result if isinstance(result, dict) else {}
    if name == "Bash":
        command = str(tool_input.get("command") or "")
        if details.get("backgroundTaskId") is not None and not failed:
            return []
        if failed:  # Claude Code's own first line, "Exit code N" (a denied command has none)
            code = text[len("Exit code ") :].split("\n", 1)[0] if text.startswith("Exit code ") else ""
            status = f"exit {code}" if code.isascii() and code.isdigit() and len(code) <= 3 else "failed"
            return [(0, f"- FAILED ({status}): {span(command)}")]
        if details.get("interrupted") is True:
            return [(0, f"- interrupted: {span(command)}")]
        stdout = details.get("stdout")
        commits = commits_in(stdout) if isinstance(stdout, str) and runs_git_commit(command) else []
        lines = [(1, f"- commit {span(sha, 40)} {span(subject)}") for sha, subject in commits]
        return [*lines, (4, f"- ok (exit 0): {span(command)}")]
    if name in FILE_TOOLS:
        path = tool_input.get("file_path") or tool_input.get("notebook_path")
        verb = "wrote" if name == "Write" else "edited"
        if not isinstance(path, str):
            return []
        shown = shown_path(path, base)
        return [(0, f"- FAILED {verb}: {span(shown)}")] if failed else [(2, f"- {verb} {span(shown)}")]
    if name == "TaskUpdate":
        change = details.get("statusChange")
        if isinstance(change, dict) and not failed:
            ident = str(details.get("taskId") or tool_input.get("taskId") or "?")
            task = f"#{ident}" if ident.isascii() and ident.isdigit() and len(ident) <= 12 else span(ident, 24)
            return [(3, f"- task {task}: {span(str(change.get('from')), 24)} → {span(str(change.get('to')), 24)}")]
        return []
    if name in AGENT_TOOLS:
        if details.get("isAsync") is True:
            return []
        description = str(tool_input.get("description") or "")
        return [(0 if failed else 4, f"- subagent {'FAILED' if failed else 'returned'}: {span(description)}")]
    if name in QUIET_TOOLS or name in STOP_TOOLS or name in ("TaskCreate", "TodoWrite"):
        return []
    return [(0, f"- FAILED: {span(name, 40)}")] if failed else [(4, f"- ran {span(name, 40)}")]


def _flight(name: str, tool_input: dict[str, object], block: dict[str, object], result: object) -> Flight | None:
    """The background shell or subagent a tool call started, or None."""
    if not isinstance(result, dict) or block.get("is_error") is True:
        return None
    if name == "Bash" and _background(result):
        text = _text_of(block.get("content"))
        start = text.find("Output is being written to: ")
        end = text.find(".output", start)
        output = text[start + 28 : end + 7] if start >= 0 and end >= 0 else ""
        label = str(tool_input.get("description") or tool_input.get("command") or "")
        return Flight(SHELL, str(result["backgroundTaskId"]), label, output)
    if name in AGENT_TOOLS and result.get("isAsync") is True and isinstance(result.get("agentId"), str):
        file = result.get("outputFile")
        label = str(tool_input.get("description") or "")
        return Flight(AGENT, str(result["agentId"]), label, file if isinstance(file, str) else "")
    return None


def _notified_id(record: dict[str, object]) -> str | None:
    """The task id a ``<task-notification>`` user record reports as stopped (Claude Code's own, by its origin)."""
    origin = record.get("origin")
    if record.get("type") != "user" or not isinstance(origin, dict) or origin.get("kind") != "task-notification":
        return None
    message = record.get("message")
    text = _text_of(message.get("content")) if isinstance(message, dict) else ""
    return _between(text, "<task-id>", "</task-id>")


QUIET_NAMES = frozenset(name.encode() for name in QUIET_TOOLS)
NAME_KEY = b'"name":"'


def _quiet(line: bytes) -> bool:
    """Whether a tool call line (not parsed) is a read-only tool's: its first ``"name"`` is the tool's."""
    at = line.find(NAME_KEY)
    return at >= 0 and line[at + 8 : line.find(b'"', at + 8)] in QUIET_NAMES


def _may_matter(line: bytes, use: bool) -> bool:
    """Whether a line past the parse limit may start or stop work in flight or write the anchor: plain ``in``
    tests, no generator (this runs for each of hundreds of lines)."""
    if not use:
        return START_MARKER in line or b'"async_launched"' in line or ANCHORS_SIGN in line
    if b'"run_in_background"' in line or b'"TaskStop"' in line or b'"KillShell"' in line:
        return True
    return ANCHOR_SIGN in line or ANCHORS_SIGN in line


def _plain_result(line: bytes) -> list[str]:
    """The call ids of a line that is plainly this session's user record of tool results, as Claude Code writes it
    (compact JSON, whole): its first ``"type"`` is ``user``, its first ``"isSidechain"`` false, it ends its object
    and names its ids without escapes. Empty for any other line: it is parsed at once, as it always was."""
    kind, chain = line.find(b'"type":"'), line.find(SIDE_CHAIN_KEY)
    if kind < 0 or chain < 0 or not line.startswith(b'"type":"user"', kind):
        return []
    if not line.startswith(b"false", chain + len(SIDE_CHAIN_KEY)) or not _ends_object(line):
        return []
    idents = _result_ids(line)
    return [] if any("\\" in ident for ident in idents) else idents


def _went_well(name: str, tool_input: dict[str, object], line: bytes) -> bool:
    """Whether a plain result line (``_plain_result``) plainly says a command or a file tool went well, with nothing
    else the record reads in it: no error, no interruption, no background start (``PARSE_SIGNS``), and no commit
    to find (a ``git commit``'s output is parsed). Such a line is never parsed: a command's output can be 30 KB,
    and its line holds it twice."""
    if name == "Bash":
        command = tool_input.get("command")
        if not isinstance(command, str) or runs_git_commit(command):
            return False
    elif name not in FILE_TOOLS:
        return False
    return not any(sign in line for sign in PARSE_SIGNS)


def _ends_object(line: bytes) -> bool:
    """Whether a line ends an object (``}`` before any trailing whitespace), without a copy of a long line."""
    return line.endswith(b"}") or line.rstrip().endswith(b"}")


def _result_ids(line: bytes) -> list[str]:
    """The call ids a line's tool results name (``"tool_use_id":"…"``, unparsed: JSON escapes every quote inside a
    string, so the key can only be a key; a wrong one is only parsed in vain)."""
    ids = []
    at = line.find(RESULT_ID)
    while at >= 0:
        end = line.find(b'"', at + len(RESULT_ID))
        if end < 0:
            break
        ids.append(line[at + len(RESULT_ID) : end].decode("utf-8", "replace"))
        at = line.find(RESULT_ID, end)
    return ids


def _results_of(
    record: dict[str, object], content: object, results: dict[str, tuple[dict[str, object], object] | bytes]
) -> None:
    """Keep each tool result of a user record by its call's id."""
    for block in content if isinstance(content, list) else []:
        if isinstance(block, dict) and block.get("type") == "tool_result":
            results[str(block.get("tool_use_id"))] = (block, record.get("toolUseResult"))


def _may_write(line: bytes) -> bool:
    """Whether a line (not parsed) may be a call that writes the anchor (``is_anchor_write``): a tool call holding
    a writer verb of ``session-workflow anchor``, or an anchors folder and a file tool's name. A call holding a
    ``\\u00`` escape may spell these otherwise (Claude Code never escapes ASCII, but a miss would show the cursor's
    own actions again), so it counts too: a false yes only reads further back."""
    if USE_MARKER not in line:
        return False
    if any(sign in line for sign in WRITE_SIGNS) or ESCAPE_SIGN in line:
        return True
    return FOLDER_SIGN in line and any(b'"' + tool.encode() + b'"' in line for tool in FILE_TOOLS)


class Reading:
    """The run record's reader of the tail (``tail.read_back``), read backwards from its end; ``found`` is the
    record's facts once the pass is over.

    The window is this session's actions after its newest successful anchor write, across compactions (the
    cursor still lacks them); with none in the tail, after the newest compaction boundary (measured on 2.1.332,
    SessionStart(compact) runs before Claude Code writes the compaction's own boundary; should one with nothing
    after it, no tool call and no answer, come first, it is that compaction's and the one before it counts). Tool
    results come after their calls in the file, so going backwards each call meets its result, and a task its
    notification, first. At the boundary, the reading goes on only when a call before it may write the anchor (a
    byte search, ``_may_write``): a run with no anchor write in its tail is not parsed past its last compaction.
    Past ``MAX_PARSED`` calls (a read-only tool's call is none) only results a byte search says may matter are
    cut out and parsed, and the calls counted, up to ``MAX_COUNTED``; and no line is read that ends before the
    newest ``WINDOW_BYTES`` (but the call of a result read there): a run that has not written its anchor for
    longer gets "older ones not read", not a pass over its whole tail.

    ``recall``: where this session's last look (its newest ledger line, ``look``) reached in this transcript and
    what it found there, asked for only at a boundary (a ledger read saved on every other pass): the look past a
    boundary then searches only what was written since, and goes on at once when the anchor write found then is
    still in the tail.

    On resume, a background shell may outlive the process that started it, whenever it was started: once the
    window is found the pass goes on (``beyond``) for a shell's start before it, a search for one key; only when
    there is one is the part before the window read again for the shells never reported finished (``scan``).
    """

    __slots__ = (
        "at_boundary",
        "base",
        "beyond",
        "floor",
        "follow",
        "found",
        "inode",
        "lookups",
        "markers",
        "met",
        "parsed",
        "path",
        "probing",
        "recall",
        "results",
        "shared",
        "shells_before",
        "size",
        "source",
        "stopped",
        "unfinished",
        "write_at",
    )

    def __init__(
        self,
        path: str,
        source: str,
        base: str = "",
        extent: tuple[int, int, int] = (0, 0, 0),
        recall: Callable[[], Look | None] | None = None,
    ) -> None:
        self.path = path
        self.source = source
        self.base = base
        # Where the tail read starts in the file (the look past a boundary reads no further back), the file's size
        # then (the part of it this look covers whole) and its inode.
        self.floor, self.size, self.inode = extent
        self.recall = recall
        # Where the anchor write that opens the window is (None: none found), and the oldest anchor write met
        # with no result yet: a look reaches no further than that call (its result comes after it).
        self.write_at: int | None = None
        self.unfinished: int | None = None
        self.found = Scan()
        # Each tool result by its call's id: the line it is on, until that call asks for it parsed; and the ids
        # whose line names other ids too (parallel calls' results, or a result's own data naming one): those lines
        # are always parsed, for the bytes of one result say nothing of another's.
        self.results: dict[str, tuple[dict[str, object], object] | bytes] = {}
        self.shared: set[str] = set()
        self.stopped: set[str] = set()
        self.parsed = 0
        self.at_boundary: tuple[int, int, int] | None = None
        self.markers = list(MARKERS)
        self.beyond = False
        # On resume, where the window's line ends when a shell may have been started before it or on it (``scan``
        # reads back from there).
        self.shells_before: int | None = None
        # The calls met (their ids), and how many results were looked up after their call (``_result_after``).
        self.met: set[str] = set()
        self.lookups = 0
        # On resume past the window: still looking for a shell's start before it (``START_MARKER``); and the calls
        # of the starts whose result was met in the window and whose call was not (their ids' markers).
        self.probing = False
        self.follow: list[bytes] = []

    def _close(self, end: int) -> None:
        """The window is found on the line that ends before offset ``end``: the pass ends, or on resume goes on for
        a shell's start before it (none to look for when a start's result was met and its call was not: the call
        lies on that line or before it, a parallel call of the same turn)."""
        if self.source == "resume" and not self.beyond:
            self.beyond = True
            self.shells_before = end
            self.follow = [_call_marker(ident) for ident in self._starts_unmet()]
            self.probing = not self.follow
            self.markers[:] = [START_MARKER] if self.probing else []
        else:
            self.markers.clear()

    def _awaited(self, line: bytes, held: tuple[bytes, ...]) -> bool:
        """Whether a line that ends before the newest MB is the call of a result read in it (its id on the line):
        read too, so a long result (a Write of a big file) does not lose its call."""
        if USE_MARKER not in held:
            return False
        return any(_call_marker(ident) in line for ident in self.results if ident not in self.met)

    def _unread(self, end: int) -> bool:
        """The pass stops at offset ``end`` (past ``MAX_COUNTED`` calls, or ``WINDOW_BYTES``) with the window still
        open: its start was not read, unless a boundary was passed (the window then opens there)."""
        self.found.unread = not self.at_boundary
        self._close(end)
        return True

    def _starts_unmet(self) -> list[str]:
        """The call ids of the background starts whose result was met and whose call was not."""
        unmet = []
        for ident, outcome in self.results.items():
            started = START_MARKER in outcome if isinstance(outcome, bytes) else _background(outcome[1])
            if started and ident not in self.met:
                unmet.append(ident)
        return unmet

    def take(self, line: bytes, at: int, held: tuple[bytes, ...]) -> bool:
        if self.beyond:  # a shell started before the window: read for in ``scan``
            self.markers.clear()
            self.probing = False
            return True
        found = self.found
        if at + len(line) < self.size - WINDOW_BYTES and not self._awaited(line, held):
            return self._unread(at + len(line) + 1)  # the window goes on past what the record reads
        boundary = BOUNDARY_MARKER in held
        use = USE_MARKER in held
        if RESULT_MARKER in held and not use and not boundary and NOTICE_MARKER not in held:
            idents = _plain_result(line)
            if idents:  # parsed when its call is met, and only if that call is no read
                for ident in idents:  # a newer line naming the id is its result: an older one only names it
                    self.results.setdefault(ident, line)
                if len(idents) > 1:
                    self.shared.update(idents)
                return False
        if self.parsed >= MAX_PARSED and not boundary and NOTICE_MARKER not in held:
            if _may_matter(line, use):
                return self._parsed(line, at, boundary)
            if use and not _quiet(line):
                found.older += 1
                if found.older >= MAX_COUNTED:
                    return self._unread(at + len(line) + 1)
            return False
        if use and not boundary and line.count(USE_MARKER) == 1 and _quiet(line):
            return False  # a read-only tool's call: no action, and not one of the calls parsed in full
        return self._parsed(line, at, boundary)

    def _parsed(self, line: bytes, at: int, boundary: bool) -> bool:
        """Take a line parsed; True when the markers changed (the window found, or the parse limit reached)."""
        found = self.found
        try:
            record = loads(line)
        except (ValueError, RecursionError):
            return False
        if not isinstance(record, dict) or record.get("isSidechain") is True:
            return False
        kind = record.get("type")
        if boundary and kind == "system" and record.get("subtype") == "compact_boundary":
            if self.source == "compact" and not (self.results or found.actions or found.older or self._answered(at)):
                return False  # nothing after it: the boundary of the compaction under way
            if self.at_boundary is None:  # the window opens here unless an anchor write turns up further back
                self.at_boundary = (len(found.actions), found.older, len(found.flights))
                if not self._write_before(at):
                    self._close(at + len(line) + 1)
                    return True
            return False
        message = record.get("message")
        content = message.get("content") if isinstance(message, dict) else None
        if kind == "user":
            notified = _notified_id(record)
            if notified is not None:
                self.stopped.add(notified)
            _results_of(record, content, self.results)
            if self.beyond and _background(record.get("toolUseResult")):  # its call, found by its id
                for block in content if isinstance(content, list) else []:
                    if isinstance(block, dict) and block.get("type") == "tool_result":
                        self.markers.append(_call_marker(str(block.get("tool_use_id"))))
            return False
        parsed = self.parsed
        if kind == "assistant":
            for block in reversed(content) if isinstance(content, list) else []:
                if isinstance(block, dict) and block.get("type") == "tool_use" and self._call(block, at):
                    self.write_at = at
                    self._close(at + len(line) + 1)
                    return True
        return parsed < MAX_PARSED <= self.parsed

    def _answered(self, at: int) -> bool:
        """Whether an answer of the model's follows the line at offset ``at`` (a boundary): the thread after it held
        a conversation, so it is no boundary written for the compaction under way, whatever tools it called."""
        return next(iter_marked_from_end(self.path, self.size - at, [ANSWER_MARKER], end=self.size), None) is not None

    def _write_before(self, at: int) -> bool:
        """Whether a line of the tail before offset ``at`` may be a call that writes the anchor (``_may_write``).
        What the last look covered (``_known``) is not searched again: the anchor write it found, still in the
        tail, says yes at once; else only what was written since it is searched."""
        start = self.floor
        known = self._known()
        if known is not None:
            _inode, seen, write, _fingerprint = known
            if write >= self.floor:
                return True
            start = max(start, seen - 1)  # from the line end before: the line at ``seen`` is read whole
        if start >= at:
            return False
        lines = iter_marked_from_end(self.path, at - start, [ANCHOR_WORD], end=at)
        return any(_may_write(line) for line, _at, _held in lines)

    def _known(self) -> Look | None:
        """The last look (``recall``) when it still holds for this transcript: the same inode, a size within this
        one, and the same bytes before that size (``_mark``)."""
        known = self.recall() if self.recall is not None else None
        fits = known is not None and known[0] == self.inode and known[1] <= self.size
        return known if fits and known is not None and _mark(self.path, known[1]) == known[3] else None

    def _call(self, block: dict[str, object], at: int) -> bool:
        """Take one tool call (on the line at offset ``at``); True when it is the anchor write that opens the
        window."""
        found = self.found
        name, tool_input = str(block.get("name")), block.get("input")
        ident = str(block.get("id"))
        outcome = self.results.get(ident)
        self.met.add(ident)
        if not isinstance(tool_input, dict):
            return False
        if isinstance(outcome, bytes):  # left unparsed: a read-only tool's result, or one that plainly went well
            unread = name in QUIET_TOOLS or (ident not in self.shared and _went_well(name, tool_input, outcome))
            outcome = UNPARSED_OUTCOME if unread else self._result(outcome, ident)
        if self.beyond:  # before the window: a shell started there and not stopped since, nothing else
            if name in STOP_TOOLS and (outcome is None or outcome[0].get("is_error") is not True):
                self.stopped.add(_stopped_id(tool_input))
            flight = _flight(name, tool_input, *outcome) if outcome is not None else None
            named = flight is not None and any(other.task_id == flight.task_id for other in found.flights)
            if flight is not None and flight.kind == SHELL and flight.task_id not in self.stopped and not named:
                found.flights.insert(0, flight)  # (a shell on the window's line may have been named already)
            return False
        writes = is_anchor_write(name, tool_input)
        if outcome is None and self.parsed >= MAX_PARSED and writes:
            outcome = self._result_after(at, ident)
        if outcome is None:  # no result: the call under way, or (past the parse limit) its result not cut out
            if writes:
                self.unfinished = at
            if self.parsed >= MAX_PARSED:
                if name in STOP_TOOLS:
                    self.stopped.add(_stopped_id(tool_input))
                if name not in QUIET_TOOLS:  # still one of "…N more actions"
                    found.older += 1
            return False
        succeeded = outcome[0].get("is_error") is not True
        if succeeded and writes:
            found.since_anchor = True
            found.stepped = name == "Bash" and writer_verb(str(tool_input.get("command"))) == "step"
            self.at_boundary = None
            return True
        if name in STOP_TOOLS and succeeded:
            self.stopped.add(_stopped_id(tool_input))
        flight = _flight(name, tool_input, *outcome)
        if flight is not None and flight.task_id not in self.stopped:
            found.flights.insert(0, flight)
        if self.parsed < MAX_PARSED:
            found.actions.extend(reversed(action_lines(name, tool_input, *outcome, self.base)))
        elif name not in QUIET_TOOLS:
            found.older += 1
        self.parsed += 1
        if self.parsed == MAX_PARSED:  # from here on calls are counted, and only results that may matter cut out
            self.markers[:] = LIGHT_MARKERS
        return False

    def _result_after(self, at: int, ident: str) -> tuple[dict[str, object], object] | None:
        """The result of the call ``ident`` on the line at offset ``at``, searched for in what follows that line.
        Past the parse limit a result is cut out of the tail only when a byte search says it may matter, and an
        anchor writer's may name no anchor (its output sent to ``/dev/null``): whether it succeeded decides where
        the window opens."""
        self.lookups += 1
        if self.lookups > MAX_LOOKUPS:  # each reads back to its call: a tail of failed writes must not read it all
            return None
        marker = RESULT_ID + ident.encode("utf-8", "surrogatepass") + b'"'
        for line, _at, _held in iter_marked_from_end(self.path, self.size - at, [marker], end=self.size):
            outcome = self._result(line, ident)
            if outcome is not None:
                return outcome
        return None

    def _result(self, line: bytes, ident: str) -> tuple[dict[str, object], object] | None:
        """The result ``ident`` of a user record's line, parsed now (its other results too)."""
        results = self.results
        for other in _result_ids(line):
            if results.get(other) is line:
                del results[other]
        try:
            record = loads(line)
        except (ValueError, RecursionError):
            return None
        if not isinstance(record, dict) or record.get("isSidechain") is True or record.get("type") != "user":
            return None
        message = record.get("message")
        _results_of(record, message.get("content") if isinstance(message, dict) else None, results)
        outcome = results.get(ident)
        return outcome if isinstance(outcome, tuple) else None

    def look(self) -> Look | None:
        """What this look leaves the next one (``recall``), once the pass is over: the transcript's inode, the size
        it covered (no further than an anchor write met with no result yet: its result comes after it), the
        offset of the anchor write that opened the window, or -1 where the window opened at a boundary or at the
        tail's start (no anchor write of this session in it, as far as the window goes), and the fingerprint of
        the bytes before that size (``_mark``). None where the window went on past what was read, or where the
        file ends in a line still being written."""
        seen = self.size if self.unfinished is None else min(self.size, self.unfinished)
        mark = _mark(self.path, seen)
        if mark is None or (self.write_at is None and self.found.unread):
            return None
        return self.inode, seen, -1 if self.write_at is None else self.write_at, mark

    def scan(self) -> Scan:
        """The facts, once the pass is over (on resume, with the shells started before the window)."""
        found = self.found
        end = self.shells_before
        if end is not None and not self.probing:  # a start before the window, or on its line: read for them
            self.markers[:] = [*BEYOND_MARKERS, *self.follow]
            for line, at, _held in iter_marked_from_end(self.path, end - self.floor, self.markers, end=end):
                self._parsed(line, at, False)
        if self.at_boundary:  # no anchor write in the tail: the window is the newest thread's
            actions, older, flights = self.at_boundary
            found.actions, found.older, found.unread = found.actions[:actions], older, False
            if self.source != "resume":  # on resume a shell started before the window may still run
                found.flights = found.flights[len(found.flights) - flights :]
        elif self.markers and not self.beyond and not found.since_anchor:  # the whole tail read, the window open
            found.unread = self.floor > 0
            found.from_start = not found.unread
        return _finished(found, self.stopped)


def scan(
    path: str, source: str, base: str = "", max_bytes: int = TAIL_BYTES, recall: Callable[[], Look | None] | None = None
) -> Scan:
    """The run record's facts from the transcript's tail, read by this part alone (``Reading``)."""
    reader = Reading(path, source, base, _extent(path, max_bytes), recall)
    read_back(path, [reader], max_bytes)
    return reader.scan()


def _mark(path: str, size: int) -> int | None:
    """The fingerprint of the ``MARK_BYTES`` before ``size`` (FNV-1a of them), or None when they do not end a line
    (a record still being written: a look never covers half a line) or cannot be read."""
    try:
        handle = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
        try:
            data = os.pread(handle, min(size, MARK_BYTES), max(0, size - MARK_BYTES)) if size else b"\n"
        finally:
            os.close(handle)
    except (OSError, ValueError):
        return None
    return _fnv1a64(data.decode("latin-1")) if data.endswith(b"\n") else None


def _extent(path: str, max_bytes: int) -> tuple[int, int, int]:
    """Where the last ``max_bytes`` of the file start, its size and its inode ((0, 0, 0) when it cannot be read:
    the pass then reads nothing)."""
    try:
        info = os.stat(path)
    except (OSError, ValueError):
        return 0, 0, 0
    return max(0, info.st_size - max_bytes), info.st_size, info.st_ino


def look_facts(ctx: HookContext) -> dict[str, object]:
    """What the ledger line keeps of this hook's look at the transcript (``Reading.look``), even when the record
    had nothing to say: the transcript's inode, a size, an offset and a fingerprint, no text (``known_look`` reads
    them back)."""
    if ctx.source not in LOOKING_SOURCES:
        return {}
    look = _LOOKS.pop(ctx.transcript_path or "", None)
    return dict(zip((LOOK_FILE, LOOK_SEEN, LOOK_WRITE, LOOK_MARK), look)) if look is not None else {}


def known_look(places: Places, session_id: str | None, path: str) -> Look | None:
    """Where the session's last look at ``path`` reached and what it found (``Reading.look``), from the newest
    ledger line that says so for that file (its inode: a copied or recreated transcript is another file). A block
    without a record says nothing of it, and the transcript only grows: an older look still holds for what it
    covered."""
    from session_workflow.core.ledger import session_starts

    try:
        inode = os.stat(path).st_ino
    except (OSError, ValueError):
        return None
    for entry in session_starts(places, session_id, f'"{LOOK_FILE}":{inode}'.encode("ascii")):
        if entry.get(LOOK_FILE) == inode:
            seen, write, mark = entry.get(LOOK_SEEN), entry.get(LOOK_WRITE), entry.get(LOOK_MARK)
            if type(seen) is int and type(write) is int and type(mark) is int and seen >= 0:
                return inode, seen, write, mark
            return None
    return None


def _stopped_id(tool_input: dict[str, object]) -> str:
    """The task a TaskStop or KillShell call names."""
    return str(tool_input.get("task_id") or tool_input.get("shell_id") or "")


def _call_marker(ident: str) -> bytes:
    """What the line of the call ``ident`` holds (its id, as Claude Code writes it)."""
    return CALL_ID + ident.encode("utf-8", "replace") + b'"'


def _background(result: object) -> bool:
    """Whether a tool result (its ``toolUseResult``) is a background shell's start."""
    return isinstance(result, dict) and isinstance(result.get("backgroundTaskId"), str)


def _finished(found: Scan, stopped: set[str]) -> Scan:
    found.flights = [flight for flight in found.flights if flight.task_id not in stopped]
    return found


def fold(actions: list[tuple[int, str]]) -> list[tuple[int, str, int, int]]:
    """(rank, line, times, when it last ran) oldest first within each rank (failures first); a repeated line is one
    line with ``×N``, in the place of its first time. ``when``: the place of its newest time among all actions
    (0 the oldest), which a cut keeps by."""
    counts: dict[tuple[int, str], int] = {}
    last: dict[tuple[int, str], int] = {}
    for when, action in enumerate(reversed(actions)):  # oldest first: a line keeps the place of its first time
        counts[action] = counts.get(action, 0) + 1
        last[action] = when
    ordered = sorted(counts, key=lambda action: action[0])
    folded = []
    for rank, text in ordered:
        times = counts[(rank, text)]
        folded.append((rank, text + (f" ×{times}" if times > 1 else ""), times, last[(rank, text)]))
    return folded


def flight_line(flight: Flight) -> str:
    output = f", output {span(flight.output, 200)}" if flight.output else ""
    return f"- {flight.kind} {span(flight.task_id, 40)} {span(flight.description)}{output}"


class RecordPart(PreparedPart):
    """The run record: work in flight (on resume), then the actions, cut by whole lines with a named count."""

    name = "run record"
    digest_kept = False  # commands carry secrets: the ledger keeps counts, no digest of them

    def __init__(self, found: Scan, show_flights: bool) -> None:
        self.lines = fold(found.actions)
        self.older = found.older
        self.flights = [flight for flight in found.flights if flight.kind == SHELL] if show_flights else []
        self.total = len(found.actions) + found.older
        # What the composer's render left out: actions (a folded line's every time), shells; all until it renders.
        self.cut, self.shells_shown = self.total, 0
        self.header = HEADER.format(since=found.since())
        self.unread = found.unread
        shells = [flight_line(flight) for flight in self.flights]
        if shells:  # the shells' header goes with the first of them, never alone
            shells[0] = IN_FLIGHT_HEADER + "\n" + shells[0]
        self.pending = [(line, 0) for line in shells] + [(line, times) for _rank, line, times, _when in self.lines]
        # The order a cut keeps lines in: the shells, then rank by rank, each rank's newest first (what the run did
        # last is what the summary is likeliest to have lost); the lines kept are shown in ``pending``'s order.
        newest = sorted(range(len(self.lines)), key=lambda index: (self.lines[index][0], -self.lines[index][3]))
        self.keeping = [*range(len(shells)), *(len(shells) + index for index in newest)]
        # The count line is there whatever fits when older actions were only counted, or not read.
        self.counted = bool(self.older or self.unread)
        self.whole = utf8_len(self.header) + sum(1 + utf8_len(line) for line, _times in self.pending)
        # The longest count line there can be: room is kept for it whenever something is cut, or counted.
        self.count_reserve = 1 + utf8_len(more_line(self.total, self.unread, len(self.flights)))
        self.cap = min(self.whole + (self.count_reserve if self.counted else 0), CAP_BYTES)
        self.floor = min(self.cap, utf8_len(self.header) + self.count_reserve)

    def render(self, budget: int) -> str:
        return self._render(min(budget, CAP_BYTES))

    def _render(self, room: int) -> str:
        """The header and every line when they fit; else whole lines in the order a cut keeps them (``keeping``)
        while they fit with room kept for the count line, shown in their order, then the count of the shells and
        actions not shown."""
        used = utf8_len(self.header)
        reserve = 0 if self.whole <= room and not self.counted else self.count_reserve
        hidden, hidden_shells, cutting = self.older, 0, False
        kept = set()
        for index in self.keeping:
            line, times = self.pending[index]
            cutting = cutting or used + 1 + utf8_len(line) + reserve > room
            if cutting:
                hidden += times
                hidden_shells += not times
                continue
            kept.add(index)
            used += 1 + utf8_len(line)
        lines = [self.header, *(line for index, (line, _times) in enumerate(self.pending) if index in kept)]
        if hidden or hidden_shells or self.counted:
            lines.append(more_line(hidden, self.unread, hidden_shells))
            used += 1 + utf8_len(lines[-1])
        if len(lines) == 1 or used > room:
            return ""
        self.cut, self.shells_shown = hidden, len(self.flights) - hidden_shells
        return "\n".join(lines)

    def ledger_facts(self) -> dict[str, object]:
        """Counts only: a command line can carry a secret, so no text of the record is kept. ``record_cut``: the
        actions not shown, as the count line says them (a folded line's every time, the actions past the parse
        limit); ``record_folded``: repeats folded."""
        return {
            "record_actions": self.total,
            "record_folded": self.total - self.older - len(self.lines),
            "record_cut": self.cut,
            "record_in_flight": len(self.flights),
            "record_shells_cut": len(self.flights) - self.shells_shown,
        }


def more_line(count: int, unread: bool = False, shells: int = 0) -> str:
    """The count of what was not shown: background shells still running, actions (and, past what was read, that
    older ones were not counted)."""
    named = [f"{shells} more background shell{'s' if shells != 1 else ''} never reported finished"] if shells else []
    if count or not (shells or unread):
        named.append(f"{count} more action{'s' if count != 1 else ''}")
    if not named:  # nothing read to count: the window's start lies before what was read
        return "…older actions not read"
    return "…" + " and ".join(named) + (", and older ones not read" if unread else "")


def prepare(ctx: HookContext) -> RecordPart | None:
    """The run record on ``compact`` and ``resume``; None when the window holds nothing to say.

    Work in flight is Claude Code's to say, measured on 2.1.332: after a compaction it attaches a ``task_status``
    "still running, do not spawn a duplicate" reminder for each live background shell and subagent, and a resumed
    session gets a "stopped: didn't finish before the previous session ended" notification for each one that
    never reported. What it lacks is that a background shell outlives the process that started it: on resume the
    record names those shells as possibly still running.
    """
    if ctx.source not in LOOKING_SOURCES or not ctx.transcript_path:
        return None
    path = ctx.transcript_path
    base = next(iter(ctx.project_dirs()), "")
    reader = Reading(
        path, ctx.source, base, _extent(path, TAIL_BYTES), lambda: known_look(ctx.places, ctx.session_id, path)
    )
    if ctx.source == "compact":  # the recovery part reads the same tail: one pass for both
        from session_workflow.transcript.recovery import along, keep

        other = along(ctx)
        read_back(path, [reader, other[1]] if other is not None else [reader])
        if other is not None:
            keep(path, other)
    else:
        read_back(path, [reader])
    look = reader.look()
    if look is not None:
        _LOOKS[path] = look
    found = reader.scan()
    part = RecordPart(found, ctx.source == "resume")
    return part if part.total or part.flights or found.unread else None
