"""A throwaway Claude Code world for the hooks, the hooks run in it, and the checks every run must pass.

A sandbox is one temp folder holding HOME, the config dir (task store, transcripts), the plugin data dir and a
project with its ``.claude`` folder, so a snapshot of that one tree shows everything a hook wrote. Hooks run two
ways with the same handler: in-process (``run_in_process``, fast, exceptions surface) and as the real shim
command from ``hooks/hooks.json`` (``run_shim``, exit code and timing as Claude Code sees them).
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
import select
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import time
import traceback
from collections.abc import Iterator, Mapping
from pathlib import Path

import pytest

from session_workflow.anchor.frame import HEAD_CLOSE, QUOTE
from session_workflow.anchor.writer import vouch_as_read
from session_workflow.core.context import HookContext
from session_workflow.core.places import Places
from session_workflow.core.text import utf16_len
from session_workflow.core.where import project_slug
from session_workflow.hook import compose, precompact, prompt_submit
from session_workflow.tasks.render import HEADER_EXACT
from session_workflow.transcript.recovery import PROMPTS_HEADER, TODOS_HEADER
from session_workflow.workstate import writer as workstate_writer
from session_workflow.workstate.section import HEADING as WORK_STATE_HEADING
from session_workflow.workstate.section import WorkState

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

REPO = Path(__file__).resolve().parents[2]
# A generous hang guard (the hooks' own timeouts are 5 and 10 s): it catches blocking, it does not measure speed.
GUARD_SECONDS = 5.0
CAP_UTF16 = compose.CAP_UTF16
PRECOMPACT_MAX_CHARS = precompact.MAX_CHARS
SESSION_ID = "5f0c2a9e-1b7d-4e3a-9c55-0d1e2f3a4b5c"
EVENTS = ("SessionStart", "UserPromptSubmit", "PreCompact")
HANDLERS: dict[str, Callable[[HookContext], None]] = {
    "SessionStart": compose.session_start,
    "UserPromptSubmit": prompt_submit.prompt_submit,
    "PreCompact": precompact.pre_compact,
}
# What the block's own lines start with; a hostile string that begins an outside-the-frame line with one of these
# has forged structure.
HEADER_PREFIX = "session-workflow: state restored from disk at SessionStart"
TASK_HEADER_PREFIX = HEADER_EXACT.split(" (", 1)[0]  # "STRUCTURED TASK LIST"
TASK_LINE = re.compile(r"#(\d+) \[([a-z_]+)\]")
FRAME_OPEN_PREFIX = '<anchor-head file="'
PRECOMPACT_LINES = ("- the control anchor file ", "- ticket ", "- that ")


def shim_command(event: str) -> list[str]:
    """The hook's command line exactly as hooks.json declares it, with this test's interpreter for the python3
    that ``hooks/python.sh`` (tested in ``tests/hook/test_launcher.py``) would pick."""
    declared = json.loads((REPO / "hooks" / "hooks.json").read_text(encoding="utf-8"))
    entry = declared["hooks"][event][0]["hooks"][0]
    argv = [entry["command"], *(arg.replace("${CLAUDE_PLUGIN_ROOT}", str(REPO)) for arg in entry["args"])]
    assert argv[:2] == ["/bin/sh", str(REPO / "hooks" / "python.sh")], argv
    return [sys.executable, *argv[2:]]


class Sandbox:
    """One temp tree: ``home``, ``config`` (tasks, projects), ``plugin-data``, ``proj`` (the cwd) and ``start``."""

    def __init__(self, root: str) -> None:
        self.root = root
        self.home = os.path.join(root, "home")
        self.config = os.path.join(root, "config")
        self.tasks_root = os.path.join(self.config, "tasks")
        self.plugin_data = os.path.join(root, "plugin-data")
        self.project = os.path.join(root, "proj")
        self.start = os.path.join(root, "start")
        self.tmp = os.path.join(root, "tmp")
        self.xdg = os.path.join(root, "xdg")
        self.session = SESSION_ID
        for folder in (self.home, self.tasks_root, self.plugin_data, self.project, self.tmp, self.xdg):
            os.makedirs(folder, exist_ok=True)

    # --- where things live ---------------------------------------------------------------------------------

    def anchors(self, project: str | None = None) -> str:
        return os.path.join(project or self.project, ".claude", "anchors")

    def state_dir(self, project: str | None = None) -> str:
        return os.path.join(project or self.project, ".claude", "session-workflow")

    def tasks(self, list_id: str | None = None) -> str:
        return os.path.join(self.tasks_root, list_id or self.session)

    def transcript(self, session: str | None = None, project: str | None = None) -> str:
        folder = os.path.join(self.config, "projects", project_slug(project or self.project))
        return os.path.join(folder, f"{session or self.session}.jsonl")

    def env(self, **extra: str) -> dict[str, str]:
        """What Claude Code gives a hook here: its own HOME, config and plugin data (and nothing of ours)."""
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": self.home,
            "TMPDIR": self.tmp,
            "XDG_STATE_HOME": os.path.join(self.xdg, "state"),
            "XDG_DATA_HOME": os.path.join(self.xdg, "data"),
            "XDG_CONFIG_HOME": os.path.join(self.xdg, "config"),
            "XDG_CACHE_HOME": os.path.join(self.xdg, "cache"),
            "CLAUDE_CONFIG_DIR": self.config,
            "CLAUDE_PLUGIN_DATA": self.plugin_data,
            "CLAUDE_PLUGIN_ROOT": str(REPO),
            "CLAUDE_PROJECT_DIR": self.project,
        }
        env.update(extra)
        return env

    def payload(
        self, event: str = "SessionStart", source: str | None = "compact", **extra: object
    ) -> dict[str, object]:
        payload: dict[str, object] = {
            "session_id": self.session,
            "transcript_path": self.transcript(),
            "cwd": self.project,
            "hook_event_name": event,
        }
        if event == "SessionStart" and source is not None:
            payload["source"] = source
        if event == "PreCompact":
            payload["trigger"] = "auto"
        if event == "UserPromptSubmit":
            payload["prompt"] = "go on"
        payload.update(extra)
        return payload

    # --- writing the world ---------------------------------------------------------------------------------

    def write(self, path: str, data: bytes, age: float | None = None) -> str:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as handle:
            handle.write(data)
        if age is not None:
            when = time.time() - age
            os.utime(path, (when, when))
        return path

    def write_anchor(
        self, name: str, data: bytes, age: float = 60.0, project: str | None = None, trusted: bool = True
    ) -> str:
        """An anchor file; ``trusted``: recorded as this machine's, as ``anchor adopt`` would (after the utime)."""
        path = self.write(os.path.join(self.anchors(project), name), data, age)
        if trusted:
            self.trust(path)
        return path

    def trust(self, path: str) -> None:
        """Record ``path`` as this machine's anchor as it is now (``anchor adopt``, its kind too); again after a
        rename or utime."""
        vouch_as_read(path, Places(self.env()), None, "adopt", 0.0)

    def write_task(self, name: str, data: bytes, list_id: str | None = None) -> str:
        return self.write(os.path.join(self.tasks(list_id), name), data)

    def write_state(self, data: bytes, project: str | None = None) -> str:
        return self.write(os.path.join(self.state_dir(project), "work-state.json"), data)

    def write_transcript(self, data: bytes, session: str | None = None) -> str:
        return self.write(self.transcript(session), data)

    # --- what a hook may write -----------------------------------------------------------------------------

    def populate(self) -> None:
        """A working world: a fresh anchor, an open task list, an owned work state and a transcript."""
        self.write_anchor("2026-01-01-port.md", ANCHOR.encode("utf-8"))
        self.write_task("1.json", task_json(1, "Parse the input", "in_progress", "the parser"))
        self.write_task("2.json", task_json(2, "Write the exporter", blockedBy=["1"]))
        self.write_task("3.json", task_json(3, "Old work", "completed"))
        self.write_state(work_state_json(self.session))
        self.write_transcript(transcript_jsonl(self.project, ["port the exporter", "keep the API"]))

    def resolve(self, value: object) -> object:
        """Replace the placeholders strategies use for this sandbox's paths (``$PROJECT``, ``$TRANSCRIPT``...)."""
        if not isinstance(value, str) or not value.startswith("$"):
            return value
        places = {
            "$PROJECT": self.project,
            "$START": self.start,
            "$TRANSCRIPT": self.transcript(),
            "$SESSION": self.session,
            "$NOWHERE": os.path.join(self.root, "does", "not", "exist"),
            "$ANCHOR": os.path.join(self.anchors(), "2026-01-01-port.md"),
            "$TASKS": self.tasks(),
        }
        return places.get(value, value)

    def allowed_roots(self, project_dirs: list[str], env: Mapping[str, str] | None = None) -> list[str]:
        """The anchors and work-state folders of the project dirs the hook looks at, the plugin data dir, the
        user-level delivery records (where a plugin data dir that is not usable sends them, when platformdirs is
        importable: in process, never under the hooks' ``python3 -I -S``), and with ``env`` the folders its own
        ``CLAUDE_PLUGIN_DATA`` gives when the product's rules accept it (records, bytecode: outside the project);
        the compaction ledger (and its one old copy), where a block that was sent is recorded."""
        state = os.path.join(self.xdg, "state", "session-workflow")
        roots = [self.plugin_data, os.path.join(state, "work-state-delivered")]
        roots += [os.path.join(state, "ledger.ndjson"), os.path.join(state, "ledger.1.ndjson")]
        if env is not None:
            roots += [
                folder for folder in (Places(env).records(project_dirs), shim_bytecode(env)) if folder is not None
            ]
        for folder in project_dirs:
            roots += [self.anchors(folder), self.state_dir(folder)]
        return roots


def shim_bytecode(env: Mapping[str, str]) -> str | None:
    """Where a shim run by ``run_shim`` keeps its bytecode, by the shims' rule: ``<CLAUDE_PLUGIN_DATA>/pycache`` for
    a folder that exists outside ``CLAUDE_PROJECT_DIR`` and the working directory (run_shim's: that dir), and whose
    ``pycache`` is this user's alone (made 0700 when missing)."""
    data = env.get("CLAUDE_PLUGIN_DATA", "")
    project = env.get("CLAUDE_PROJECT_DIR", "")
    if not os.path.isabs(data) or "\x00" in data or not os.path.isdir(data):
        return None
    real = os.path.realpath(data)
    homes = [os.path.realpath(p) for p in (project, project if os.path.isdir(project) else os.getcwd()) if p]
    if any((real + "/").startswith(h.rstrip("/") + "/") for h in homes):
        return None
    cache = os.path.join(real, "pycache")
    info = os.lstat(cache) if os.path.isdir(cache) and not os.path.islink(cache) else None
    ours = info is None or (info.st_uid == os.getuid() and not info.st_mode & 0o022)
    return cache if ours else None


def task_json(task_id: int, subject: str, status: str = "pending", description: str = "", **extra: object) -> bytes:
    """A task file as Claude Code writes it."""
    record: dict[str, object] = {
        "id": str(task_id),
        "subject": subject,
        "description": description,
        "status": status,
        "blocks": [],
        "blockedBy": [],
    }
    record.update(extra)
    return json.dumps(record, indent=2).encode("utf-8")


def work_state_json(session: str, title: str = "Fix the flaky export", step: str = "execute") -> bytes:
    """A state file as the writer stores it (section and key included)."""
    return workstate_writer.encode(WorkState(ticket=34, title=title, map=12, step=step, session=session), None)


def transcript_jsonl(cwd: str, prompts: list[str], todos: list[tuple[str, str]] | None = None) -> bytes:
    """A transcript tail in Claude Code's record shapes: typed prompts, then a TodoWrite result."""
    records: list[dict[str, object]] = [
        {"type": "user", "promptSource": "typed", "cwd": cwd, "message": {"role": "user", "content": prompt}}
        for prompt in prompts
    ]
    if todos is not None:
        new = [{"content": content, "status": status, "activeForm": content} for status, content in todos]
        records.append({"type": "user", "cwd": cwd, "toolUseResult": {"oldTodos": [], "newTodos": new}})
    return b"".join(json.dumps(record).encode("utf-8") + b"\n" for record in records)


ANCHOR = (
    "---\nformat: anchor/v1\nstep: 3\n---\n\n# Port the exporter\n\n## Mission\nPort it.\n\n"
    "## Cursor\n- Step 3: wrote the parser; next: run the tests\n\n## Invariants\n- keep the API\n\n"
    "<!-- anchor:tail -->\n\n## Decisions log\n- none\n"
)


# Sandboxes go to tmpfs where there is one: creating and removing a few hundred small trees on a disk costs
# seconds of kernel time per run. The writers' tests ask for the disk, where fsync and rename really work.
TMPFS = "/dev/shm" if os.path.isdir("/dev/shm") and os.access("/dev/shm", os.W_OK | os.X_OK) else None


@contextlib.contextmanager
def sandbox(on_disk: bool = False) -> Iterator[Sandbox]:
    """A fresh sandbox removed afterwards (hypothesis examples cannot use function-scoped ``tmp_path``)."""
    root = tempfile.mkdtemp(prefix="swrel-", dir=None if on_disk else TMPFS)
    try:
        yield Sandbox(root)
    finally:
        remove_tree(root)


def remove_tree(root: str) -> None:
    """Remove a test tree even where a test made folders unreadable."""

    def retry(function: Callable[..., object], path: str, _info: object) -> None:
        with contextlib.suppress(OSError):
            os.chmod(os.path.dirname(path), 0o700)
            os.chmod(path, 0o700)
            function(path)

    if sys.version_info >= (3, 12):
        shutil.rmtree(root, onexc=retry)
    else:
        shutil.rmtree(root, onerror=retry)


# --- running a hook ----------------------------------------------------------------------------------------


@contextlib.contextmanager
def hook_process_state(env: Mapping[str, str]) -> Iterator[io.BytesIO]:
    """Stdout captured as bytes, and os.environ pointed at the sandbox (platformdirs reads it, not ctx.env)."""
    captured = io.BytesIO()
    saved_stdout = sys.stdout
    saved_env = {key: os.environ.get(key) for key in env}
    wrapper = io.TextIOWrapper(captured, encoding="utf-8", write_through=True)
    sys.stdout = wrapper
    os.environ.update(env)
    try:
        yield captured
    finally:
        sys.stdout = saved_stdout
        wrapper.detach()  # keep ``captured`` open for the caller
        for key, value in saved_env.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def run_in_process(event: str, payload: Mapping[str, object], env: Mapping[str, str]) -> bytes:
    """Run the event's handler on this payload in this process; any exception propagates to the test."""
    ctx = HookContext.from_payload(payload, Places(env), time.time())
    with hook_process_state(env) as captured:
        HANDLERS[event](ctx)
    return captured.getvalue()


class HookRun:
    """One run of a hook (the real command or a forked handler): exit code, stdout, stderr."""

    __slots__ = ("code", "stderr", "stdout")

    def __init__(self, code: int, stdout: bytes, stderr: bytes) -> None:
        self.code = code
        self.stdout = stdout
        self.stderr = stderr


def run_forked(event: str, payload: Mapping[str, object], env: Mapping[str, str], user: int | None = None) -> HookRun:
    """Run the handler in a forked child (cheap, and a hang cannot stall the test run): exit 1 on an exception.

    ``user`` drops the child to that uid and gid first, so permissions bind even when the tests run as root.
    """
    out_read, out_write = os.pipe()
    err_read, err_write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: never returns into pytest
        code = 1
        try:
            os.dup2(out_write, 1)
            os.dup2(err_write, 2)
            if user is not None:
                os.setgid(user)
                os.setuid(user)
            os.environ.clear()
            os.environ.update(env)
            sys.stdout = io.TextIOWrapper(io.FileIO(1, "wb", closefd=False), encoding="utf-8", write_through=True)
            HANDLERS[event](HookContext.from_payload(payload, Places(env), time.time()))
            sys.stdout.flush()
            code = 0
        except BaseException:
            with contextlib.suppress(BaseException):
                os.write(2, traceback.format_exc().encode("utf-8", "replace"))
        finally:
            os._exit(code)
    os.close(out_write)
    os.close(err_write)
    outputs = _drain({out_read: [], err_read: []}, pid)
    _pid, status = os.waitpid(pid, 0)
    return HookRun(os.waitstatus_to_exitcode(status), outputs[out_read], outputs[err_read])


def _drain(chunks: dict[int, list[bytes]], pid: int) -> dict[int, bytes]:
    """Read the child's pipes to their end; kill it and fail the test past the hang guard."""
    deadline = time.monotonic() + GUARD_SECONDS
    open_fds = list(chunks)
    try:
        while open_fds:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
                pytest.fail(f"hook handler still running after {GUARD_SECONDS:.0f}s")
            ready, _w, _x = select.select(open_fds, [], [], remaining)
            for fd in ready:
                data = os.read(fd, 1 << 16)
                if data:
                    chunks[fd].append(data)
                else:
                    open_fds.remove(fd)
    finally:
        for fd in chunks:
            os.close(fd)
    return {fd: b"".join(parts) for fd, parts in chunks.items()}


def run_shim(event: str, stdin: bytes, env: Mapping[str, str]) -> HookRun:
    """Run the hook as Claude Code does, failing the test if it is still running after the 5 s guard."""
    project = env.get("CLAUDE_PROJECT_DIR", "")
    try:
        done = subprocess.run(
            shim_command(event),
            input=stdin,
            env=dict(env),
            capture_output=True,
            timeout=GUARD_SECONDS,
            cwd=project if os.path.isdir(project) else None,
        )
    except subprocess.TimeoutExpired:
        pytest.fail(f"{event} hook still running after {GUARD_SECONDS:.0f}s")
    return HookRun(done.returncode, done.stdout, done.stderr)


# --- what every run must satisfy ---------------------------------------------------------------------------


def hook_text(event: str, stdout: bytes) -> str | None:
    """The context a run emitted, after checking its shape; None when it printed nothing.

    SessionStart and UserPromptSubmit print nothing or exactly one hook JSON whose additionalContext is at most
    10,000 UTF-16 units; PreCompact prints plain text for the summariser. Either way the text must be valid
    Unicode: a lone surrogate reaching the Messages API fails every later request of the session with a 400.
    """
    if not stdout:
        return None
    if event == "PreCompact":
        text = stdout.decode("utf-8")
        assert text.endswith("\n") and utf16_len(text) <= PRECOMPACT_MAX_CHARS + 1, text
        return text[:-1]
    document = json.loads(stdout)
    assert isinstance(document, dict) and list(document) == ["hookSpecificOutput"], document
    inner = document["hookSpecificOutput"]
    assert isinstance(inner, dict) and sorted(inner) == ["additionalContext", "hookEventName"], inner
    assert inner["hookEventName"] == event
    text = inner["additionalContext"]
    assert isinstance(text, str) and text.strip(), "an empty additionalContext must not be printed at all"
    assert utf16_len(text) <= CAP_UTF16, utf16_len(text)
    text.encode("utf-8")  # strict: raises on a lone surrogate
    return text


class Block:
    """A SessionStart block split into the anchor's framed HEAD and every line outside that frame."""

    __slots__ = ("framed", "outside")

    def __init__(self, framed: list[str], outside: list[str]) -> None:
        self.framed = framed
        self.outside = outside

    def starting(self, prefix: str | tuple[str, ...]) -> list[str]:
        return [line for line in self.outside if line.startswith(prefix)]


def check_block(text: str, source: str) -> Block:
    """Check what no input may change: the header (and so the source) and the anchor frame, opened and closed once.

    Returns the lines outside the frame for the caller's own checks. A HEAD line equal to the closing tag would
    end the frame early; the first closing line after the opener must therefore be the frame's own, and no other
    closing line may follow anywhere.
    """
    lines = text.split("\n")
    assert lines[0] == compose.header(source), lines[0]
    framed: list[str] = []
    outside: list[str] = []
    opener = next((i for i, line in enumerate(lines) if line.startswith(FRAME_OPEN_PREFIX)), None)
    if opener is None:
        outside = lines
    else:
        closer = lines.index(HEAD_CLOSE, opener)
        framed = lines[opener + 1 : closer]
        outside = lines[: opener + 1] + lines[closer:]
        assert lines[opener].endswith('">') and lines[opener].count('"') == 2, lines[opener]
        assert all(line.startswith(QUOTE) for line in framed), "a line of file content is not quoted"
    block = Block(framed, outside)
    assert len(block.starting(HEADER_PREFIX)) == 1, "a second header line outside the anchor frame"
    assert len(block.starting(FRAME_OPEN_PREFIX)) <= 1
    assert len([line for line in outside if line == HEAD_CLOSE]) == (0 if opener is None else 1)
    assert len(block.starting(TASK_HEADER_PREFIX)) <= 1, "a forged task-list header"
    return block


def shown_tasks(block: Block) -> list[tuple[int, str]]:
    """(id, status) of every task line outside the anchor frame."""
    shown = []
    for line in block.outside:
        match = TASK_LINE.match(line)
        if match:
            shown.append((int(match.group(1)), match.group(2)))
    return shown


def check_tasks_are_real(block: Block, folders: list[str]) -> None:
    """Every task line names a task file of the list (or a predecessor's) with that id and that open status."""
    shown = shown_tasks(block)
    assert len({task_id for task_id, _status in shown}) == len(shown), f"a task shown twice: {shown}"
    for task_id, status in shown:
        assert status in ("pending", "in_progress"), (task_id, status)
        records = [_json_file(os.path.join(folder, f"{task_id}.json")) for folder in folders]
        assert any(
            isinstance(record, dict) and record.get("id") == str(task_id) and record.get("status") == status
            for record in records
        ), f"task line #{task_id} [{status}] matches no task file"


def _json_file(path: str) -> object:
    try:
        with open(path, "rb") as handle:
            return json.loads(handle.read(1 << 20))
    except (OSError, ValueError):
        return None


def check_task_block(block: Block) -> None:
    """The task part's lines: its header, then only task lines, their description lines and the overflow line."""
    headers = [i for i, line in enumerate(block.outside) if line.startswith(TASK_HEADER_PREFIX)]
    if not headers:
        return
    previous = block.outside[headers[0]]
    for line in block.outside[headers[0] + 1 :]:
        if not line:
            break
        if line.startswith("  description: "):
            assert TASK_LINE.match(previous), f"a description line after {previous!r}"
        else:
            assert TASK_LINE.match(line) or line.startswith("…"), f"a stray line in the task list: {line!r}"
        previous = line


def check_recovery_block(block: Block) -> None:
    """Prompts are quoted lines, todos are list items; nothing in them starts a line of its own."""
    section = None
    for line in block.outside:
        if line.startswith(PROMPTS_HEADER):
            section = "prompts"
        elif line.startswith(TODOS_HEADER):
            section = "todos"
        elif not line or line.startswith(("(recovery cut for space", "session-workflow: omitted")):
            section = None
        elif section == "prompts":
            assert line.startswith("> "), f"a prompt that is not quoted: {line!r}"
        elif section == "todos":
            assert line.startswith(("- [", "…")), f"a todo that is not a list item: {line!r}"
    assert len(block.starting(PROMPTS_HEADER)) <= 1 and len(block.starting(TODOS_HEADER)) <= 1


def check_run(box: Sandbox, event: str, payload: Mapping[str, object], stdout: bytes) -> str | None:
    """Everything a run of any hook must satisfy whatever its input; returns the emitted text."""
    text = hook_text(event, stdout)
    if text is None:
        return None
    if event == "SessionStart":
        source = payload.get("source")
        assert isinstance(source, str) and source in compose.PARTS_BY_SOURCE, source
        block = check_block(text, source)
        check_task_block(block)
        check_tasks_are_real(block, _list_dirs(box.tasks_root))
        check_recovery_block(block)
    elif event == "PreCompact":
        first, *rest = text.split("\n")
        assert first.startswith("session-workflow, to the summariser only (nothing for the assistant to do):"), first
        assert all(line.startswith(PRECOMPACT_LINES) for line in rest), rest
    else:
        lines = text.split("\n")
        if lines[0] == prompt_submit.SUPERSEDES:  # a change: the thread already holds an older snapshot
            lines = lines[1:]
        assert lines[0] == WORK_STATE_HEADING and len(lines) <= 6, lines
    return text


def _list_dirs(root: str) -> list[str]:
    try:
        return [entry.path for entry in os.scandir(root) if entry.is_dir()]
    except OSError:
        return []


def hook_dirs(payload: Mapping[str, object], env: Mapping[str, str]) -> list[str]:
    """The project dir a hook may write into (``core.where.project_dir``)."""
    return HookContext.from_payload(payload, Places(env), time.time()).project_dirs()


# --- nothing written outside the allowed folders -----------------------------------------------------------

Snapshot = dict[str, tuple[object, ...]]


def snapshot(root: str) -> Snapshot:
    """Every entry under ``root`` (symlinks not followed): type and inode, and for files size and mtime.

    Any write moves a file's mtime, so no content hash is needed. A folder's own mtime is left out: it changes
    with its entries, which are compared themselves.
    """
    entries: Snapshot = {}
    for folder, dirs, files in os.walk(root):
        for name in dirs + files:
            path = os.path.join(folder, name)
            try:
                info = os.lstat(path)
            except OSError:
                continue
            kind = stat.S_IFMT(info.st_mode)
            if stat.S_ISDIR(kind):
                entries[path] = (kind, info.st_ino, stat.S_IMODE(info.st_mode))
            elif stat.S_ISLNK(kind):
                entries[path] = (kind, info.st_ino, os.readlink(path))
            else:
                entries[path] = (kind, info.st_ino, stat.S_IMODE(info.st_mode), info.st_size, info.st_mtime_ns)
    return entries


def changed_paths(before: Snapshot, after: Snapshot) -> list[str]:
    return sorted(path for path in set(before) | set(after) if before.get(path) != after.get(path))


def assert_written_only_under(before: Snapshot, after: Snapshot, allowed: list[str]) -> None:
    """Every created, changed or removed entry lies inside one of the ``allowed`` folders (or is a folder made on
    the way to one: an allowed folder's parents)."""
    outside = [
        path
        for path in changed_paths(before, after)
        if not any(
            path == root
            or path.startswith(root.rstrip(os.sep) + os.sep)
            or (os.path.isdir(path) and root.startswith(path.rstrip(os.sep) + os.sep))
            for root in allowed
        )
    ]
    assert not outside, f"written outside {allowed}: {outside}"
