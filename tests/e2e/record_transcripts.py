"""Record the transcript fixtures in ``tests/fixtures/transcripts/`` from the real CLI.

    python3 -m tests.e2e.record_transcripts [OUTDIR]

Runs Claude Code against the fake API with the test-only ``e2e-probe``
plugin, copies each session's transcript, and sanitises it: sandbox paths
become ``/home/user/...``, strings longer than :data:`MAX_STRING` characters
are cut (``…[N chars elided]``) and nothing else changes -- record order,
record types and field names are exactly what Claude Code wrote.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable

from . import fake_api as F
from .harness import REPO_ROOT, Claude, locate_claude, new_session_id, project_slug, read_jsonl

FIXTURES = REPO_ROOT / "tests" / "fixtures" / "transcripts"
PROBE_PLUGIN = Path(__file__).resolve().parent / "probe_plugin"
MAX_STRING = 1500
#: Bulky payloads (the whole system prompt and tool schemas) kept as a short
#: placeholder: (record type, attachment type or None, path of keys).
BULKY = [
    ("attachment", "prompt_snapshot", ("attachment", "systemPrompt")),
    ("attachment", "prompt_snapshot", ("attachment", "tools")),
    ("api-request-shape", None, ("shape", "system")),
    ("api-request-shape", None, ("shape", "tools")),
    ("attachment", "skill_listing", ("attachment", "content")),
    ("attachment", "agent_listing_delta", ("attachment", "addedLines")),
]


def elide_bulky(record: dict[str, Any]) -> dict[str, Any]:
    for rtype, atype, path in BULKY:
        if record.get("type") != rtype:
            continue
        attachment = record.get("attachment")
        if atype is not None and not (isinstance(attachment, dict) and attachment.get("type") == atype):
            continue
        holder: Any = record
        for key in path[:-1]:
            holder = holder.get(key) if isinstance(holder, dict) else None
        if isinstance(holder, dict) and path[-1] in holder:
            value = holder[path[-1]]
            size = len(json.dumps(value))
            if isinstance(value, list):
                holder[path[-1]] = [f"…[elided: {len(value)} items, {size} bytes]"]
            else:
                holder[path[-1]] = f"…[elided: {size} bytes]"
    return record


NEUTRAL_HOME = "/home/user"
NEUTRAL_PROJECT = "/home/user/proj"
NEUTRAL_CONFIG = "/home/user/.claude"
NEUTRAL_PLUGIN = "/home/user/plugins/e2e-probe"


def sanitize(records: list[dict[str, Any]], claude: Claude) -> list[dict[str, Any]]:
    replacements = [
        (str(claude.transcript_dir()), f"{NEUTRAL_CONFIG}/projects/{project_slug(NEUTRAL_PROJECT)}"),
        (project_slug(claude.project), project_slug(NEUTRAL_PROJECT)),
        (str(claude.config_dir), NEUTRAL_CONFIG),
        (str(claude.project), NEUTRAL_PROJECT),
        (str(claude.tmpdir), "/tmp"),
        (str(claude.home), NEUTRAL_HOME),
        (str(PROBE_PLUGIN), NEUTRAL_PLUGIN),
        (str(claude.root), NEUTRAL_HOME),
    ]

    def fix_str(s: str) -> str:
        for old, new in replacements:
            s = s.replace(old, new)
        s = re.sub(r"Linux \d+\.\d+\.\d+[-\w.]*", "Linux 6.1.0", s)
        if len(s) > MAX_STRING:
            s = s[: MAX_STRING // 2] + f"…[{len(s) - MAX_STRING // 2} chars elided]"
        return s

    def walk(x: Any) -> Any:
        if isinstance(x, str):
            return fix_str(x)
        if isinstance(x, list):
            return [walk(v) for v in x]
        if isinstance(x, dict):
            return {fix_str(k): walk(v) for k, v in x.items()}
        return x

    return [walk(elide_bulky(r)) for r in records]


def write(name: str, records: list[dict[str, Any]], outdir: Path) -> None:
    path = outdir / name
    with open(path, "w", encoding="utf-8") as f:
        for r in records:
            f.write(json.dumps(r, ensure_ascii=False, separators=(",", ":")) + "\n")
    print(f"wrote {path} ({len(records)} records, {path.stat().st_size} bytes)")


def sandbox(binary: Path, api: F.FakeAnthropic, root: Path) -> Claude:
    return Claude(
        binary=binary, api=api, root=root, plugin_dir=PROBE_PLUGIN, env_extra={"E2E_PROBE_LOG": str(root / "probe.log")}
    )


def record_basic(c: Claude) -> list[dict[str, Any]]:
    """Two typed prompts in one stream-json process."""
    sid = new_session_id()
    with c.stream(session_id=sid) as s:
        s.send("first prompt: list the files")
        s.send("second prompt: now summarise them")
        assert s.close() == 0
    return c.transcript(sid)


def record_with_tools(c: Claude) -> list[dict[str, Any]]:
    """One prompt; the model runs Bash, creates two tasks and updates one."""
    sid = new_session_id()
    c.api.script(
        F.bash("echo hello from bash", "Say hello"),
        F.task_create("Write the parser", "Parse the transcript tail", "Writing the parser"),
        F.task_create("Test the parser"),
        F.task_update("1", status="in_progress"),
        F.text("Done: ran bash and made two tasks."),
    )
    c.run(
        ["-p", "run a command and plan the work", "--session-id", sid, "--allowedTools", "Bash"],
        env_extra={"CLAUDE_CODE_ENABLE_TODO_TOOLS": "1"},
    ).check()
    return c.transcript(sid)


def record_todowrite(c: Claude) -> list[dict[str, Any]]:
    """TodoWrite exists only with the task tools off (CLAUDE_CODE_ENABLE_TASKS=false)."""
    sid = new_session_id()
    c.api.script(
        F.todo_write(
            [
                {"content": "Write parser", "status": "in_progress", "activeForm": "Writing parser"},
                {"content": "Test parser", "status": "pending", "activeForm": "Testing parser"},
            ]
        ),
        F.todo_write(
            [
                {"content": "Write parser", "status": "completed", "activeForm": "Writing parser"},
                {"content": "Test parser", "status": "in_progress", "activeForm": "Testing parser"},
            ]
        ),
        F.text("Todos updated."),
    )
    c.run(
        ["-p", "track this with todos", "--session-id", sid, "--allowedTools", "Bash"],
        env_extra={"CLAUDE_CODE_ENABLE_TASKS": "false", "CLAUDE_CODE_ENABLE_TODO_TOOLS": "1"},
    ).check()
    return c.transcript(sid)


def record_after_compact(c: Claude) -> list[dict[str, Any]]:
    """Prompts, a Bash call, a manual /compact, more prompts, then an auto compaction."""
    sid = new_session_id()
    c.api.script(
        F.text("Sure.", input_tokens=3000),
        F.bash("ls", "List files", input_tokens=3000),
        F.text("Listed.", input_tokens=3000),
        F.text("Noted.", input_tokens=3000),
        F.text("Big context now.", input_tokens=90000),  # the next turn auto-compacts
        F.text("Continuing after auto compaction."),
    )
    with c.stream(["--allowedTools", "Bash", "--autocompact", "100000"], session_id=sid) as s:
        s.send("prompt one: hello")
        s.send("prompt two: list the files")
        s.send("/compact keep the file list")
        s.send("prompt three: after the manual compaction")
        s.send("prompt four: this reply reports 90k input tokens")
        s.send("prompt five: this one triggers auto compaction")
        assert s.close() == 0
    return c.transcript(sid)


def record_clear(c: Claude) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """A prompt, /clear, a prompt: two transcripts (the old and the new session)."""
    sid = new_session_id()
    with c.stream(session_id=sid) as s:
        s.send("prompt before clear")
        s.send("/clear")
        new_sid = s.session_id
        s.send("prompt after clear")
        assert s.close() == 0
    assert new_sid and new_sid != sid, (sid, new_sid)
    return c.transcript(sid), c.transcript(new_sid)


def record_resume(c: Claude) -> list[dict[str, Any]]:
    """``-p --session-id`` then ``-p --resume <id>``: one file, two processes."""
    sid = new_session_id()
    c.run(["-p", "first run prompt", "--session-id", sid]).check()
    c.run(["-p", "--resume", sid, "second run prompt"]).check()
    return c.transcript(sid)


SUBAGENT_PROMPT = "SUBAGENT-PROMPT: look around"


def record_background(c: Claude) -> list[dict[str, Any]]:
    """Issue 43's run: a passing and a failing command, two writes, a commit, a background shell and a background
    subagent, then ``/compact`` while both still run (Claude Code attaches a ``task_status`` for each), then
    their ``<task-notification>`` records."""
    sid = new_session_id()

    def subagent(body: dict[str, Any]) -> F.Reply | None:  # answered after a pause: still running at /compact
        texts = F.message_texts(body, ("user",))
        if F.offers_tools(body) and not F.is_compaction_request(body) and any(SUBAGENT_PROMPT in t for t in texts[:3]):
            time.sleep(4)
            return F.text("subagent finished its work")
        return None

    c.api.responder = subagent
    git = "git -c user.name=t -c user.email=t@example.invalid"
    c.api.script(
        F.bash("echo pass-ok", "Pass"),
        F.bash("echo failing >&2; exit 3", "Fail"),
        F.tool_use("Write", {"file_path": str(c.project / "a.txt"), "content": "a\n"}),
        F.tool_use("Write", {"file_path": str(c.project / "b.txt"), "content": "b\n"}),
        F.bash(f"git init -q && {git} add -A && {git} commit -m 'the subject line'", "Commit"),
        F.tool_use("Bash", {"command": "sleep 4; echo bg-done", "description": "Sleeper", "run_in_background": True}),
        F.tool_use(
            "Agent",
            {
                "description": "Probe subagent",
                "prompt": SUBAGENT_PROMPT,
                "subagent_type": "general-purpose",
                "run_in_background": True,
            },
        ),
        F.text("started both"),
    )
    with c.stream(["--allowedTools", "Bash,Write,Agent"], session_id=sid) as s:
        s.send("do the work")
        s.send("/compact keep")
        time.sleep(6)
        s.send("after the notifications")
        assert s.close() == 0
    return c.transcript(sid)


def record_interactive(c: Claude) -> list[dict[str, Any]]:
    """The interactive REPL under tmux: typed prompts, a Bash call, /compact,
    a ``!`` bash-mode command and a two-line prompt."""
    if shutil.which("tmux") is None:
        raise RuntimeError("tmux is needed to record interactive.jsonl (apt-get install tmux)")
    sid = new_session_id()
    # Skip onboarding, the trust dialog and the API-key question of the REPL.
    config = {
        "hasCompletedOnboarding": True,
        "theme": "dark",
        "projects": {str(c.project): {"hasTrustDialogAccepted": True, "hasCompletedProjectOnboarding": True}},
        "customApiKeyResponses": {"approved": ["sk-ant-fake"[-20:]], "rejected": []},
    }
    (c.config_dir / ".claude.json").write_text(json.dumps(config), encoding="utf-8")
    c.api.script(F.bash("echo tui-bash", "Say something"), F.text("bash done"))
    sock = f"e2e-rec-{os.getpid()}"
    env = c.env({"TERM": "xterm-256color"})
    cmd = " ".join(shlex.quote(a) for a in c.argv(["--session-id", sid, "--allowedTools", "Bash"]))

    def tmux(*args: str) -> None:
        subprocess.run(["tmux", "-L", sock, *args], check=True, capture_output=True)

    def count(pred: Callable[[dict[str, Any]], bool]) -> int:
        path = c.transcript_path(sid)
        return sum(1 for r in read_jsonl(path) if pred(r)) if path.exists() else 0

    def wait(pred: Callable[[dict[str, Any]], bool], n: int, timeout: float = 20) -> None:
        deadline = time.monotonic() + timeout
        while count(pred) < n:
            if time.monotonic() > deadline:
                raise RuntimeError(f"interactive recording: timed out waiting for record {n}")
            time.sleep(0.2)

    def last_prompt(r: dict[str, Any]) -> bool:  # one per finished REPL turn
        return r.get("type") == "system" and r.get("subtype") == "turn_duration"

    envargs = [a for k, v in env.items() for a in ("-e", f"{k}={v}")]
    tmux("new-session", "-d", "-x", "160", "-y", "50", "-s", "rec", *envargs, "-c", str(c.project), cmd)
    try:
        time.sleep(2.5)  # the REPL draws its prompt
        typed = 0
        for prompt in ("typed prompt one", "typed prompt two"):
            tmux("send-keys", "-t", "rec", "-l", prompt)
            time.sleep(0.3)
            tmux("send-keys", "-t", "rec", "Enter")
            typed += 1
            wait(last_prompt, typed)
        tmux("send-keys", "-t", "rec", "-l", "/compact keep it")
        time.sleep(0.5)
        tmux("send-keys", "-t", "rec", "Enter")
        wait(lambda r: r.get("type") == "system" and r.get("subtype") == "compact_boundary", 1)
        time.sleep(1)
        tmux("send-keys", "-t", "rec", "-l", "!echo bash-mode")
        time.sleep(0.5)
        tmux("send-keys", "-t", "rec", "Enter")
        typed += 1
        wait(last_prompt, typed)
        tmux("send-keys", "-t", "rec", "-l", "typed prompt three\\")
        tmux("send-keys", "-t", "rec", "Enter")
        tmux("send-keys", "-t", "rec", "-l", "second line")
        time.sleep(0.3)
        tmux("send-keys", "-t", "rec", "Enter")
        typed += 1
        wait(last_prompt, typed)
        time.sleep(0.5)
    finally:
        subprocess.run(["tmux", "-L", sock, "kill-server"], capture_output=True)
    return c.transcript(sid)


def main(argv: list[str]) -> int:
    """``[OUTDIR] [NAME...]``: every fixture, or the named ones (``background.jsonl``)."""
    outdir = Path(argv[0]) if argv else FIXTURES
    only = set(argv[1:])
    outdir.mkdir(parents=True, exist_ok=True)
    binary = locate_claude()
    jobs: list[tuple[str, Callable[[Claude], Any]]] = [
        ("basic.jsonl", record_basic),
        ("with_tools.jsonl", record_with_tools),
        ("todowrite.jsonl", record_todowrite),
        ("after_compact.jsonl", record_after_compact),
        ("clear", record_clear),
        ("resume.jsonl", record_resume),
        ("interactive.jsonl", record_interactive),
        ("background.jsonl", record_background),
    ]
    for name, fn in jobs:
        if only and name not in only:
            continue
        tmp = tempfile.mkdtemp(prefix="rec-")
        with F.FakeAnthropic() as api:
            c = sandbox(binary, api, Path(tmp))
            got = fn(c)
            leaks = [r["path"] for r in api.leaks()]
            if leaks:  # refused by the fake proxy; the REPL tries a few even with nonessential traffic off
                print(f"   refused non-loopback attempts: {leaks}")
            if name == "clear":
                old, new = got
                write("clear_before.jsonl", sanitize(old, c), outdir)
                write("clear_after.jsonl", sanitize(new, c), outdir)
            else:
                write(name, sanitize(got, c), outdir)
            probe_log = Path(tmp) / "probe.log"
            if probe_log.exists():
                payloads = [r["payload"] for r in read_jsonl(probe_log)]
                print("   hook payloads:", json.dumps(sanitize(payloads, c))[:2000])
        time.sleep(0.5)  # a REPL killed with its tmux server may still be writing
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
