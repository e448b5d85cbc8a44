"""Drive the real Claude Code CLI against :mod:`fake_api` in a throwaway home.

Everything a test needs besides the fixtures in ``conftest.py``:

* :func:`locate_claude` -- the native binary (``SESSION_WORKFLOW_CLAUDE_BIN``
  or ``tools/install_claude_cli.sh``);
* :class:`Claude` -- one sandbox (HOME, CLAUDE_CONFIG_DIR, TMPDIR, project
  directory, fake API) with :meth:`Claude.run` for one ``claude`` process and
  :meth:`Claude.stream` for a multi-turn ``--input-format stream-json`` session;
* request helpers: :func:`hook_contexts`, :func:`session_start_contexts`,
  :func:`system_text`, :func:`all_text`, :func:`excerpt`;
* transcript helpers: :meth:`Claude.transcript_path`, :func:`read_jsonl`.

How hook output reaches the Messages API (measured on 2.1.332)
--------------------------------------------------------------
A SessionStart hook's ``hookSpecificOutput.additionalContext`` (and a
UserPromptSubmit hook's) is stored in the transcript as an ``attachment``
record ``{"type": "hook_additional_context", "content": [text], "hookEvent":
"SessionStart", ...}`` and rendered into the *next* request as the text::

    SessionStart hook additional context: <text>

Where that text goes depends on the model:

* the default model (``claude-opus-5-5``) takes ``role: "system"`` entries
  inside ``messages``: Claude Code folds all of a turn's reminders into ONE
  system entry, parts joined by a blank line (``"\\n\\n"``), in this order:
  SessionStart context(s) (compact before resume when both are pending),
  ``# Environment`` ..., agent and skill listings, ``UserPromptSubmit hook
  additional context: ...``, ``Today's date is YYYY-MM-DD.``  The system
  entry's ``content`` is a list with one text block on the newest turn and a
  plain string once it is history.  Example (first request, startup)::

      {"role": "system", "content": [{"type": "text", "text":
        "SessionStart hook additional context: <text>\\n\\n# Environment\\n..."}]}

* models without system entries (e.g. ``--model claude-sonnet-4-5``) get one
  user text block per reminder::

      {"type": "text", "text": "<system-reminder>\\nSessionStart hook additional context: <text>\\n</system-reminder>"}

An additionalContext of more than 10,000 UTF-16 units is replaced by::

    SessionStart hook additional context: <persisted-output>
    Output too large (9.8KB). Full output saved to:
    <config>/projects/<slug>/<session>/tool-results/hook-…-additionalContext.txt   [one line]

    Preview (first 2KB):
    <first 2 KB>
    ...
    </persisted-output>

A PreCompact hook's plain stdout is appended to the compaction request's
prompt (the last user message, a string for manual compaction, the last text
block of a list for auto compaction)::

    Additional Instructions:
    <custom instructions of /compact, if any>

    <PreCompact stdout>

    REMINDER: Do NOT call any tools. ...

and, for a manual ``/compact``, also echoed into the ``<local-command-stdout>``
record that later requests carry: ``PreCompact [<command>] completed
successfully: <stdout>``.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import threading
import time
import uuid
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from session_workflow.core import where

from .fake_api import FakeAnthropic, message_texts
from .fake_api import system_text as system_text

REPO_ROOT = Path(__file__).resolve().parents[2]
INSTALL_SCRIPT = REPO_ROOT / "tools" / "install_claude_cli.sh"
CLAUDE_VERSION = "2.1.332"

#: Environment variables of the calling process that reach the CLI.  Nothing
#: else does: in particular no CLAUDE_*/ANTHROPIC_* variable of a developer's
#: own Claude Code session and no proxy setting.
PASS_ENV = ("PATH", "LANG", "LC_ALL", "LC_CTYPE", "TZ", "PYTHONPATH", "VIRTUAL_ENV", "SYSTEMROOT")

#: Headings that may follow a SessionStart context inside a folded system entry.
_FOLDED_SECTION_STARTS = (
    "SessionStart hook additional context: ",
    "UserPromptSubmit hook additional context: ",
    "# Environment\n",
    "Today's date is ",
    "You are powered by the model named ",
    "The following deferred tools are now available",
    "Available agent types for the Agent tool:",
    "The following skills are available for use with the Skill tool:",
)


class ClaudeUnavailable(RuntimeError):
    """The CLI could not be installed or found."""


def locate_claude() -> Path:
    """Return the native ``claude`` binary, installing it when needed.

    ``SESSION_WORKFLOW_CLAUDE_BIN`` overrides the lookup.  Raises
    :class:`ClaudeUnavailable` with the installer's output when it fails."""
    override = os.environ.get("SESSION_WORKFLOW_CLAUDE_BIN")
    if override:
        path = Path(override)
        if not (path.is_file() and os.access(path, os.X_OK)):
            raise ClaudeUnavailable(f"SESSION_WORKFLOW_CLAUDE_BIN={override} is not an executable file")
        return path
    try:
        proc = subprocess.run(
            ["bash", str(INSTALL_SCRIPT)],
            capture_output=True,
            text=True,
            timeout=600,
            stdin=subprocess.DEVNULL,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise ClaudeUnavailable(f"{INSTALL_SCRIPT} could not run: {exc}") from exc
    lines = proc.stdout.strip().splitlines()
    if proc.returncode != 0 or not lines:
        raise ClaudeUnavailable(
            f"{INSTALL_SCRIPT} exited {proc.returncode}\n--- stdout ---\n{proc.stdout}\n--- stderr ---\n{proc.stderr}"
        )
    path = Path(lines[-1])
    if not (path.is_file() and os.access(path, os.X_OK)):
        raise ClaudeUnavailable(f"{INSTALL_SCRIPT} printed {path}, which is not an executable file")
    return path


def project_slug(path: Path | str) -> str:
    """Claude Code's directory name for a project under ``<config>/projects`` (cut and hashed past 200 units)."""
    return where.project_slug(str(path))


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.strip()
            if line:
                out.append(json.loads(line))
    return out


@dataclass
class Result:
    args: list[str]
    returncode: int
    stdout: str
    stderr: str
    seconds: float

    def check(self) -> Result:
        assert self.returncode == 0, (
            f"claude {' '.join(self.args)} exited {self.returncode} after {self.seconds:.1f}s\n"
            f"--- stdout ---\n{self.stdout[-4000:]}\n--- stderr ---\n{self.stderr[-4000:]}"
        )
        return self

    def events(self) -> list[dict[str, Any]]:
        """stdout parsed as stream-json lines (``--output-format stream-json``)."""
        return [json.loads(line) for line in self.stdout.splitlines() if line.startswith("{")]


@dataclass
class Claude:
    """One throwaway Claude Code installation state plus the fake API."""

    binary: Path
    api: FakeAnthropic
    root: Path
    plugin_dir: Path | None = REPO_ROOT
    env_extra: dict[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        for d in (self.home, self.config_dir, self.project, self.tmpdir):
            d.mkdir(parents=True, exist_ok=True)

    # -- paths ---------------------------------------------------------------
    @property
    def home(self) -> Path:
        return self.root / "home"

    @property
    def config_dir(self) -> Path:
        return self.root / "config"

    @property
    def project(self) -> Path:
        return self.root / "proj"

    @property
    def tmpdir(self) -> Path:
        return self.root / "tmp"

    @property
    def tasks_root(self) -> Path:
        return self.config_dir / "tasks"

    def task_dir(self, list_id: str) -> Path:
        return self.tasks_root / list_id

    def transcript_dir(self) -> Path:
        return self.config_dir / "projects" / project_slug(self.project)

    def transcript_path(self, session_id: str) -> Path:
        return self.transcript_dir() / f"{session_id}.jsonl"

    def transcript(self, session_id: str) -> list[dict[str, Any]]:
        return read_jsonl(self.transcript_path(session_id))

    def write_task(self, list_id: str, task_id: int | str, subject: str, status: str = "pending", **extra: Any) -> Path:
        """Create ``<config>/tasks/<list_id>/<task_id>.json`` as TaskCreate does."""
        d = self.task_dir(list_id)
        d.mkdir(parents=True, exist_ok=True)
        task = {
            "id": str(task_id),
            "subject": subject,
            "description": extra.pop("description", subject),
            "status": status,
            "blocks": [],
            "blockedBy": [],
            **extra,
        }
        path = d / f"{task_id}.json"
        path.write_text(json.dumps(task, indent=2), encoding="utf-8")
        return path

    # -- environment -----------------------------------------------------------
    def env(self, extra: Mapping[str, str] | None = None) -> dict[str, str]:
        env = {k: os.environ[k] for k in PASS_ENV if k in os.environ}
        env.setdefault("LANG", "C.UTF-8")
        base = self.api.base_url
        env.update(
            HOME=str(self.home),
            CLAUDE_CONFIG_DIR=str(self.config_dir),
            TMPDIR=str(self.tmpdir),
            ANTHROPIC_API_KEY="sk-ant-fake",
            ANTHROPIC_BASE_URL=base,
            DISABLE_AUTOUPDATER="1",
            # No telemetry, error reports, release notes, model lists...: with
            # this set, 2.1.332 makes no DNS lookup at all (checked with strace).
            CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1",
            DISABLE_TELEMETRY="1",
            DISABLE_ERROR_REPORTING="1",
            # Belt and braces: anything that still tries a real host goes to the
            # fake as a proxy CONNECT, is refused and shows up in api.leaks().
            HTTPS_PROXY=base,
            HTTP_PROXY=base,
            https_proxy=base,
            http_proxy=base,
            NO_PROXY="127.0.0.1,localhost",
            no_proxy="127.0.0.1,localhost",
        )
        env.update(self.env_extra)
        if extra:
            env.update(extra)
        return env

    def argv(self, args: Sequence[str]) -> list[str]:
        args = list(args)
        argv = [str(self.binary), *args]
        if self.plugin_dir is not None and "--plugin-dir" not in args and args[:1] != ["plugin"]:
            argv += ["--plugin-dir", str(self.plugin_dir)]
        return argv

    # -- running ---------------------------------------------------------------
    def run(
        self,
        args: Sequence[str],
        env_extra: Mapping[str, str] | None = None,
        input: str | None = None,
        timeout: float = 45,
        cwd: Path | None = None,
    ) -> Result:
        """Run ``claude <args> [--plugin-dir <repo>]`` to completion."""
        argv = self.argv(args)
        t0 = time.monotonic()
        try:
            proc = subprocess.run(
                argv,
                cwd=str(cwd or self.project),
                env=self.env(env_extra),
                input=input if input is not None else "",
                capture_output=True,
                text=True,
                timeout=timeout,
            )
        except subprocess.TimeoutExpired as exc:
            raise AssertionError(
                f"claude {' '.join(args)} timed out after {timeout}s\n"
                f"--- stdout ---\n{_tail(exc.stdout)}\n--- stderr ---\n{_tail(exc.stderr)}\n"
                f"--- requests ---\n{describe_requests(self.api)}"
            ) from exc
        return Result(list(args), proc.returncode, proc.stdout, proc.stderr, time.monotonic() - t0)

    def stream(
        self,
        args: Sequence[str] = (),
        env_extra: Mapping[str, str] | None = None,
        session_id: str | None = None,
    ) -> StreamSession:
        """Start a multi-turn ``-p --input-format stream-json`` session."""
        argv = self.argv(["-p", "--input-format", "stream-json", "--output-format", "stream-json", "--verbose", *args])
        if session_id:
            argv += ["--session-id", session_id]
        return StreamSession(argv, cwd=self.project, env=self.env(env_extra), api=self.api)

    def converse(
        self,
        prompts: Sequence[str],
        args: Sequence[str] = (),
        env_extra: Mapping[str, str] | None = None,
        session_id: str | None = None,
    ) -> StreamSession:
        """One :meth:`stream` session through ``prompts`` (a turn each, slash commands included), closed with
        exit 0; the finished session keeps its ``events`` and ``session_id``."""
        with self.stream(args, env_extra, session_id) as session:
            for prompt in prompts:
                session.send(prompt)
            code = session.close()
        assert code == 0, f"claude exited {code} after {list(prompts)!r}\n--- stderr ---\n{session.stderr[-3000:]}"
        return session

    def debug_file(self, name: str = "debug.log") -> Path:
        return self.root / name


def _tail(data: str | bytes | None, n: int = 4000) -> str:
    if data is None:
        return ""
    if isinstance(data, bytes):
        data = data.decode("utf-8", "replace")
    return data[-n:]


class StreamSession:
    """A running ``claude -p --input-format stream-json`` process.

    Each :meth:`send` writes one user message and waits for its ``result``
    event.  Send the next prompt only after the previous result: prompts that
    arrive while a turn runs are merged into one user message by Claude Code.
    Slash commands (``/compact``, ``/clear``) are sent the same way and also
    end with a ``result`` event.
    """

    def __init__(self, argv: list[str], cwd: Path, env: dict[str, str], api: FakeAnthropic) -> None:
        self.api = api
        self.argv = argv
        self.events: list[dict[str, Any]] = []
        self._stderr: list[str] = []
        self.proc = subprocess.Popen(
            argv,
            cwd=str(cwd),
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            encoding="utf-8",
        )
        self._lines: list[str] = []
        self._cond = threading.Condition()
        self._eof = False
        assert self.proc.stdout is not None and self.proc.stderr is not None
        threading.Thread(target=self._pump, args=(self.proc.stdout, True), daemon=True).start()
        threading.Thread(target=self._pump, args=(self.proc.stderr, False), daemon=True).start()

    def _pump(self, stream: IO[str], is_stdout: bool) -> None:
        for line in stream:
            if is_stdout:
                with self._cond:
                    self._lines.append(line)
                    self._cond.notify_all()
            else:
                self._stderr.append(line)
        if is_stdout:
            with self._cond:
                self._eof = True
                self._cond.notify_all()

    @property
    def session_id(self) -> str | None:
        """The current session id (it changes after ``/clear``)."""
        for ev in reversed(self.events):
            sid = ev.get("session_id")
            if isinstance(sid, str):
                return sid
        return None

    def send(self, text: str, timeout: float = 30) -> list[dict[str, Any]]:
        """Send one prompt; return the events up to and including its ``result``."""
        assert self.proc.stdin is not None
        msg = {"type": "user", "message": {"role": "user", "content": text}}
        self.proc.stdin.write(json.dumps(msg) + "\n")
        self.proc.stdin.flush()
        return self._read_until_result(timeout, text)

    def _read_until_result(self, timeout: float, what: str) -> list[dict[str, Any]]:
        deadline = time.monotonic() + timeout
        got: list[dict[str, Any]] = []
        while True:
            with self._cond:
                while not self._lines and not self._eof:
                    left = deadline - time.monotonic()
                    if left <= 0:
                        self.kill()
                        raise AssertionError(
                            f"no result for {what!r} within {timeout}s\n--- events ---\n"
                            + "\n".join(json.dumps(e)[:300] for e in got)
                            + f"\n--- stderr ---\n{''.join(self._stderr)[-3000:]}\n"
                            f"--- requests ---\n{describe_requests(self.api)}"
                        )
                    self._cond.wait(min(left, 0.5))
                if not self._lines:  # eof
                    raise AssertionError(
                        f"claude exited before the result of {what!r}\n--- stderr ---\n{''.join(self._stderr)[-3000:]}"
                    )
                line = self._lines.pop(0)
            if not line.startswith("{"):
                continue
            ev = json.loads(line)
            got.append(ev)
            self.events.append(ev)
            if ev.get("type") == "result":
                return got

    def close(self, timeout: float = 30) -> int:
        """Close stdin and wait for the process to exit; return its exit code."""
        if self.proc.stdin is not None and not self.proc.stdin.closed:
            self.proc.stdin.close()
        try:
            return self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.kill()
            raise AssertionError(f"claude did not exit within {timeout}s after stdin was closed") from None

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(10)

    @property
    def stderr(self) -> str:
        return "".join(self._stderr)

    def __enter__(self) -> StreamSession:
        return self

    def __exit__(self, *exc: object) -> None:
        if self.proc.poll() is None:
            try:
                self.close()
            finally:
                self.kill()


# ---------------------------------------------------------------------------
# Request inspection.


def all_text(body: Mapping[str, Any]) -> str:
    """The system prompt and every text in ``messages`` (system entries, user
    text, tool results, assistant text) joined by newlines."""
    return "\n".join([system_text(dict(body)), *message_texts(dict(body))])


def _cut_folded(rest: str) -> str:
    """``rest`` starts right after a "<Event> hook additional context: "
    marker inside a folded system entry: cut it at the next known section."""
    cut = len(rest)
    for start in _FOLDED_SECTION_STARTS:
        i = rest.find("\n\n" + start)
        if i != -1:
            cut = min(cut, i)
    return rest[:cut]


def hook_contexts(body: Mapping[str, Any], event: str = "SessionStart") -> list[str]:
    """The additionalContext texts of ``event`` hooks carried by one request,
    in order, as the model sees them (both renderings, see the module doc).

    In the folded system-entry form a context ends at the next known section
    heading ("\\n\\n# Environment", "\\n\\nUserPromptSubmit hook additional
    context: ", "\\n\\nToday's date is ", ...); a context that itself contains
    such a heading after a blank line would be cut short there."""
    marker = f"{event} hook additional context: "
    out: list[str] = []
    for text in message_texts(dict(body)):
        pos = 0
        while True:
            i = text.find(marker, pos)
            if i == -1:
                break
            start = i + len(marker)
            before = text[:i]
            if before.endswith("<system-reminder>\n"):
                end = text.find("\n</system-reminder>", start)
                chunk = text[start:] if end == -1 else text[start:end]
            else:
                chunk = _cut_folded(text[start:])
            out.append(chunk)
            pos = start + len(chunk)
    return out


def session_start_contexts(body: Mapping[str, Any]) -> list[str]:
    return hook_contexts(body, "SessionStart")


def transcript_hook_contexts(records: Sequence[Mapping[str, Any]], event: str = "SessionStart") -> list[str]:
    """The exact additionalContext texts stored in a transcript
    (``attachment.type == "hook_additional_context"``), oldest first.  Unlike
    :func:`hook_contexts` this needs no parsing of the rendered request, so
    use it for exact-size assertions (the request shows the same text)."""
    out: list[str] = []
    for rec in records:
        att = rec.get("attachment")
        if (
            rec.get("type") == "attachment"
            and isinstance(att, dict)
            and att.get("type") == "hook_additional_context"
            and att.get("hookEvent") == event
        ):
            out.extend(str(c) for c in att.get("content") or [])
    return out


def utf16_units(s: str) -> int:
    """Length as Claude Code measures the 10,000 cap (UTF-16 code units)."""
    return len(s.encode("utf-16-le")) // 2


def excerpt(body: Mapping[str, Any] | None, needle: str | None = None, width: int = 600) -> str:
    """A short, printable view of a request for assertion messages."""
    if body is None:
        return "<no request>"
    text = all_text(body)
    if needle and needle in text:
        i = text.index(needle)
        return repr(text[max(0, i - width // 2) : i + len(needle) + width // 2])
    ctx = hook_contexts(body)
    roles = [m.get("role") for m in body.get("messages") or [] if isinstance(m, dict)]
    return f"roles={roles} SessionStart contexts={[c[:width] for c in ctx]!r}\nlast text: {text[-width:]!r}"


def describe_requests(api: FakeAnthropic, limit: int = 20) -> str:
    lines = []
    for r in api.requests[-limit:]:
        body = r["body"]
        if isinstance(body, dict) and "messages" in body:
            roles = [m.get("role") for m in body["messages"] if isinstance(m, dict)]
            lines.append(
                f"{r['method']} {r['path']} model={body.get('model')} roles={roles} "
                f"ss_contexts={[c[:120] for c in session_start_contexts(body)]!r}"
            )
        else:
            lines.append(f"{r['method']} {r['path']}")
    return "\n".join(lines) or "<none>"


def new_session_id() -> str:
    return str(uuid.uuid4())


def copy_transcript(claude: Claude, session_id: str, dest: Path) -> Path:
    dest.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(claude.transcript_path(session_id), dest)
    return dest


def iter_debug_hook_runs(debug_text: str) -> Iterator[tuple[str, str, int]]:
    """(event:source, command, status) for every command hook in a ``--debug-file`` log.

    Lines look like ``Hooks: SessionStart:startup [python3 /repo/hooks/x.py]
    (plugin session-workflow@inline) finished with status 0 (61ms)``.  (Events
    without a matcher, like PreCompact, log ``PreCompact:auto [<command with
    ${CLAUDE_PLUGIN_ROOT}>] completed with status 0`` instead.)"""
    pat = re.compile(
        r"(?:^|\s)([A-Z][A-Za-z]+(?::\w+)?) \[(.*?)\](?: \(plugin [^)]*\))? (?:finished|completed) with status (-?\d+)",
        re.M,
    )
    for m in pat.finditer(debug_text):
        yield m.group(1), m.group(2), int(m.group(3))
