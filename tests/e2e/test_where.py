"""One project for the hooks, the CLI and the mod, measured on the real CLI.

A session started in a monorepo's subfolder (``mono/pkg``, the ``.git`` at ``mono/``), and one whose model ``cd``s
into ``src/`` before it writes anything, write their anchor and their work state to the folder Claude Code treats
as the project (where it started) and get both back after a ``/compact``: the anchor in the SessionStart block, the
work state in the system prompt (the mod) or in the block (a build without the mod), and the mod's status row names
the same anchor and ticket.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from . import fake_api as F
from .fake_api import Body, FakeAnthropic
from .harness import Claude, StreamSession, all_text, describe_requests, new_session_id, read_jsonl
from .test_scenarios import (
    ANCHOR_BODY,
    ANCHOR_HEADING,
    after_compaction,
    assert_ticket,
    delivery,
    has,
    lacks,
    set_ticket,
    the_block,
)

pytestmark = pytest.mark.e2e

__all__ = ["delivery"]  # the fixture, used by name

TITLE = "Port the parser"


def monorepo(claude: Claude) -> tuple[Path, Path]:
    """``mono/`` with its ``.git`` and ``mono/pkg/src``; returns (mono, pkg)."""
    mono = claude.root / "mono"
    (mono / "pkg" / "src").mkdir(parents=True)
    (mono / ".git").mkdir()
    return mono, mono / "pkg"


def script(fake_api: FakeAnthropic, cd: str, made: list[str]) -> None:
    """The model: (``cd`` into a subfolder,) ``anchor new``, ``state set``; the anchor's path from the writer."""

    def write_whole(body: Body) -> F.Reply:
        made.append(F.anchor_path_from(body))
        text = ANCHOR_BODY.format(path=made[0])
        return F.bash(f"session-workflow anchor write {made[0]} <<'ANCHOR_EOF'\n{text}ANCHOR_EOF")

    fake_api.script(
        F.bash(f'{cd}session-workflow anchor new --task "{TITLE}"'),
        write_whole,
        F.bash(f'session-workflow state set --ticket 34 --title "{TITLE}" --map 12 --step execute'),
        F.text("anchor and ticket written"),
    )


def run_in(claude: Claude, folder: Path, sid: str, prompts: list[str]) -> None:
    """One stream session started in ``folder`` through ``prompts``."""
    argv = claude.argv(["-p", "--input-format", "stream-json", "--output-format", "stream-json", "--verbose"])
    argv += ["--allowedTools", "Bash", "--session-id", sid]
    env = claude.env()
    with StreamSession(argv, cwd=folder, env=env, api=claude.api) as session:
        for prompt in prompts:
            session.send(prompt)
        code = session.close()
    assert code == 0, f"claude exited {code}\n{session.stderr[-3000:]}"


def assert_only_in(pkg: Path, mono: Path, anchor: str) -> None:
    """The anchor and the work state are the project's (``pkg``), none in the monorepo root or in ``src``."""
    assert Path(anchor).parent == pkg / ".claude" / "anchors" and Path(anchor).is_file(), anchor
    assert (pkg / ".claude" / "session-workflow" / "work-state.json").is_file()
    for other in (mono, pkg / "src"):
        assert not (other / ".claude").exists(), f"{other}/.claude was written: {sorted(os.listdir(other))}"


@pytest.mark.parametrize("cd", ["", "cd src && "], ids=["in-subfolder", "cd-src"])
def test_a_monorepo_subfolder_session_gets_its_anchor_and_work_state_back_after_compact(
    claude: Claude, fake_api: FakeAnthropic, delivery: str, cd: str
) -> None:
    mono, pkg = monorepo(claude)
    made: list[str] = []
    script(fake_api, cd, made)
    sid = new_session_id()
    run_in(claude, pkg, sid, ["write the anchor and the ticket", "/compact", "go on"])
    assert fake_api.pending_script() == 0, "the model's tool calls were not all made"
    (anchor,) = made
    assert_only_in(pkg, mono, anchor)
    after = after_compaction(fake_api)
    block = the_block(after, "compact")
    has(block, f"{ANCHOR_HEADING}`{anchor}`", "Next action: write the parser for rule 7", body=after)
    assert_ticket(after, delivery, block, ticket="34", step="execute")
    lacks(block, str(mono / ".claude"), body=after)


# ---------------------------------------------------------------------------
# The status row: the interactive REPL under tmux (the StatusLine site exists only there).


def status_rows(screen: str) -> list[str]:
    return [line.strip() for line in screen.splitlines() if "⚓" in line]


@pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux draws the REPL's status line")
def test_the_status_row_names_the_projects_anchor_and_ticket_after_a_cd(claude_bin: Path, tmp_path: Path) -> None:
    """The mod's row under the prompt names the anchor and the ticket the writers put in the project, the model
    having cd'd into src/ first; the REPL asks a few hosts even offline (refused by the fake's proxy), so this
    test builds its sandbox without the leak check of the ``claude`` fixture."""
    with FakeAnthropic() as api:
        claude = Claude(binary=claude_bin, api=api, root=tmp_path)
        mono, pkg = monorepo(claude)
        config = {
            "hasCompletedOnboarding": True,
            "theme": "dark",
            "projects": {str(pkg): {"hasTrustDialogAccepted": True, "hasCompletedProjectOnboarding": True}},
            "customApiKeyResponses": {"approved": ["sk-ant-fake"[-20:]], "rejected": []},
        }
        (claude.config_dir / ".claude.json").write_text(json.dumps(config), encoding="utf-8")
        made: list[str] = []
        script(api, "cd src && ", made)
        sid = new_session_id()
        sock = f"e2e-where-{os.getpid()}"
        env = claude.env({"TERM": "xterm-256color"})
        cmd = " ".join(
            shlex.quote(a)
            for a in claude.argv(["--session-id", sid, "--allowedTools", "Bash", "--permission-mode", "default"])
        )

        def tmux(*args: str) -> str:
            done = subprocess.run(["tmux", "-L", sock, *args], check=True, capture_output=True, text=True)
            return done.stdout

        def turns() -> int:
            path = claude.transcript_path(sid)
            records = read_jsonl(path) if path.exists() else []
            return sum(1 for r in records if r.get("type") == "system" and r.get("subtype") == "turn_duration")

        envargs = [a for k, v in env.items() for a in ("-e", f"{k}={v}")]
        tmux("new-session", "-d", "-x", "80", "-y", "40", "-s", "w", *envargs, "-c", str(pkg), cmd)
        try:
            time.sleep(2.5)  # the REPL draws its prompt
            tmux("send-keys", "-t", "w", "-l", "write the anchor and the ticket")
            time.sleep(0.3)
            tmux("send-keys", "-t", "w", "Enter")
            deadline = time.monotonic() + 60
            rows: list[str] = []
            while time.monotonic() < deadline:
                rows = status_rows(tmux("capture-pane", "-p", "-t", "w"))
                if turns() >= 1 and rows and "#34" in rows[-1]:
                    break
                time.sleep(0.5)
            screen = tmux("capture-pane", "-p", "-t", "w")
        finally:
            subprocess.run(["tmux", "-L", sock, "kill-server"], capture_output=True)
    assert len(made) == 1, f"the model's writer calls were not made\n{screen}\n{describe_requests(api)}"
    assert_only_in(pkg, mono, made[0])
    rows = status_rows(screen)
    assert rows and TITLE in rows[-1] and "#34 execute" in rows[-1], screen


def test_the_sections_live_step_pointer_works_as_written_from_a_subfolder(
    claude: Claude, fake_api: FakeAnthropic
) -> None:
    """The model follows the work-state section's pointer to the live step from the Bash tool standing in
    ``src/``: every file it names and every command it gives work from there, as written."""
    sid = new_session_id()
    set_ticket(claude, sid, step="plan")
    (claude.project / "src").mkdir()
    followed: list[str] = []

    def follow_the_pointer(body: Body) -> F.Reply:
        # A real model answers seconds after the start; Claude Code writes the session's transcript, where the
        # command finds the project from a subfolder, a little after sending the first request. Without that
        # latency the call could run first: the reply waits for the transcript, at most a few seconds.
        transcript = claude.transcript_path(sid)
        for _ in range(250):
            if transcript.exists():
                break
            time.sleep(0.02)
        text = all_text(body)
        (line,) = {m.group(0) for m in re.finditer(r"Step: plan \(as of this snapshot[^\n]*\)", text)}
        files = re.findall(r"[\w./-]*work-state\.json", line)
        commands = re.findall(r"`([^`]+)`", line)
        followed.extend([*files, *commands])
        steps = [f"cat {shlex.quote(path)}" for path in files] + commands
        return F.bash("cd src && " + " && ".join(steps))

    fake_api.script(follow_the_pointer, F.text("done"))
    claude.run(["-p", "where is the live step?", "--session-id", sid, "--allowedTools", "Bash"]).check()
    assert fake_api.pending_script() == 0 and followed
    (result,) = F.last_tool_results(fake_api.main_requests()[1])
    assert "No such file" not in result and "Make the parser fast" in result and "plan" in result, (followed, result)


def test_a_work_state_deleted_mid_thread_is_named_by_no_later_request_as_in_play(
    claude: Claude, fake_api: FakeAnthropic
) -> None:
    """``git clean -fdx`` deletes the state file; the thread's next request says the snapshot no longer
    holds, and after the next compaction no request names the ticket at all."""
    sid = new_session_id()
    set_ticket(claude, sid, title="A ticket the clean takes")
    state = claude.project / ".claude" / "session-workflow" / "work-state.json"
    with claude.stream(session_id=sid) as s:
        s.send("turn one")
        assert "A ticket the clean takes" in all_text(fake_api.message_requests()[-1])
        state.unlink()
        s.send("turn two")
        second = all_text(fake_api.message_requests()[-1])
        s.send("/compact")
        s.send("turn three")
        third = all_text(fake_api.message_requests()[-1])
        assert s.close() == 0
    assert "session-workflow: the work state is gone" in second, second[-3000:]
    assert "A ticket the clean takes" not in third, third[-3000:]
