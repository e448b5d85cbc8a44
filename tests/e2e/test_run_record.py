"""Issue 43's run record on the real CLI: after its last ``anchor step`` the scripted model runs a passing and a
failing command, writes two files, commits, starts a background shell and a background subagent; an
auto-compaction follows (``--autocompact 100000``: a reply reporting 90,000 input tokens triggers it before the
next request).

Measured on 2.1.332 (references/how-it-works.md): the SessionStart(compact) hook runs before Claude Code writes the
compaction's boundary, and after it Claude Code attaches a ``task_status`` "still running, do not spawn a
duplicate" reminder for each live background shell and subagent itself; so the block lists the actions and
leaves the work in flight to that reminder (never the same fact twice), and PreCompact names it for the summary.
"""

from __future__ import annotations

import json
import threading
import time
from typing import Any

import pytest

from . import fake_api as F
from .fake_api import FakeAnthropic
from .harness import Claude, StreamSession, new_session_id, session_start_contexts

pytestmark = pytest.mark.e2e

Body = dict[str, Any]
AUTOCOMPACT_100K = ("--autocompact", "100000")
SUBAGENT_PROMPT = "SUBAGENT-PROMPT: survey the parser"
GIT = "git -c user.name=t -c user.email=t@example.invalid"
HEADER = "RUN RECORD ("


class Subagent:
    """Answers the subagent's own requests only once released: it stays in flight as long as the test needs."""

    def __init__(self) -> None:
        self.release = threading.Event()

    def __call__(self, body: Body) -> F.Reply | None:
        texts = F.message_texts(body, ("user",))
        if F.offers_tools(body) and not F.is_compaction_request(body) and any(SUBAGENT_PROMPT in t for t in texts[:3]):
            self.release.wait(60)
            return F.text("subagent finished")
        return None


def the_work(claude: Claude) -> list[F.Step]:
    """The model's calls after the step (or with no anchor at all): ending on a reply over the threshold."""
    return [
        F.bash("echo pass-ok", "Pass"),
        F.bash("echo failing >&2; exit 3", "Fail"),
        F.tool_use("Write", {"file_path": str(claude.project / "a.txt"), "content": "a\n"}),
        F.tool_use("Write", {"file_path": str(claude.project / "b.txt"), "content": "b\n"}),
        F.bash(f"git init -q && {GIT} add a.txt b.txt && {GIT} commit -m 'the subject line'", "Commit"),
        F.tool_use("Bash", {"command": "sleep 6; echo bg-done", "description": "Sleeper", "run_in_background": True}),
        F.tool_use(
            "Agent",
            {
                "description": "Survey",
                "prompt": SUBAGENT_PROMPT,
                "subagent_type": "general-purpose",
                "run_in_background": True,
            },
        ),
        F.text("started both", input_tokens=90_000),
    ]


def started(records: list[dict[str, Any]]) -> tuple[str, str]:
    """(the background shell's id, the subagent's id) as the transcript records their starts."""
    shell = agent = ""
    for record in records:
        result = record.get("toolUseResult")
        if isinstance(result, dict):
            shell = str(result.get("backgroundTaskId") or shell)
            agent = str(result.get("agentId") or agent)
    assert shell and agent, "the background shell and the subagent were not both started"
    return shell, agent


def requests_after(api: FakeAnthropic, compaction: Body) -> list[Body]:
    bodies = api.message_requests()
    at = next(index for index, body in enumerate(bodies) if body is compaction)
    return [body for body in bodies[at + 1 :] if F.offers_tools(body) and not F.is_compaction_request(body)]


def record_of(body: Body) -> list[str]:
    """The run record's lines in the request's SessionStart block (none when it has no record)."""
    for context in session_start_contexts(body):
        for part in context.split("\n\n"):
            if part.startswith(HEADER):
                return part.split("\n")
    return []


def wait_for(claude: Claude, sid: str, needle: str, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while needle not in claude.transcript_path(sid).read_text(encoding="utf-8"):
        assert time.monotonic() < deadline, f"{needle!r} never reached the transcript"
        time.sleep(0.2)


def drain_one_turn(session: StreamSession) -> None:
    """The turn Claude Code starts by itself for a task notification ends in a result of its own."""
    session._read_until_result(30, "the notification's turn")


def test_the_block_lists_what_ran_since_the_step_and_the_summary_keeps_the_work_in_flight(
    claude: Claude, fake_api: FakeAnthropic
) -> None:
    sid = new_session_id()
    made: list[str] = []
    subagent = Subagent()
    fake_api.responder = subagent

    def remember_path(body: Body) -> F.Reply:
        made.extend(line.strip() for r in F.last_tool_results(body) for line in r.splitlines() if line.endswith(".md"))
        return F.bash("echo before-the-step")

    fake_api.script(
        F.bash('session-workflow anchor new --task "Port the parser"', input_tokens=3000),
        remember_path,
        lambda body: F.bash(f'session-workflow anchor step {made[0]} "lexer done; next: port rule 7"'),
        *the_work(claude),
    )
    session = claude.stream([*AUTOCOMPACT_100K, "--allowedTools", "Bash,Write,Agent"], session_id=sid)
    try:
        session.send("port the parser")
        assert fake_api.pending_script() == 0, "the model's calls were not all made"
        session.send("continue")  # the auto-compaction comes first
        shell, agent = started(claude.transcript(sid))

        (compaction,) = fake_api.compaction_requests()
        after = requests_after(fake_api, compaction)[0]
        lines = record_of(after)
        commit = next((line for line in lines if line.startswith("- commit ")), "")
        assert lines[1:] == [
            "- FAILED (exit 3): `echo failing >&2; exit 3`",
            commit,
            "- wrote `a.txt`",
            "- wrote `b.txt`",
            "- ok (exit 0): `echo pass-ok`",
            lines[-1],
        ], lines
        assert lines[-1].startswith("- ok (exit 0): `git init -q && ")
        sha = commit.split("`")[1]
        assert len(sha) == 7 and commit.endswith(" `the subject line`")
        assert sha in "\n".join(F.last_tool_results(after) + F.message_texts(after))  # git's own output
        assert "since its anchor was last written" in lines[0] and "before-the-step" not in "\n".join(lines)
        # The work in flight: Claude Code's own reminder names each once; the block does not repeat them.
        text = "\n".join(F.message_texts(after))
        assert f"Background shell {shell} " in text and f"({agent}) is still running" in text
        block = "\n".join(session_start_contexts(after))
        assert shell not in block and agent not in block
        # The summariser's request: the newest next action (the step's, not the template's) and both ids.
        summariser = F.last_user_text(compaction)
        assert "and its next action: port rule 7" in summariser
        assert f"(not to start again): background shell `{shell}`, subagent `{agent}`" in summariser

        # The shell ends; its notification is in the transcript. The next compaction no longer has it running.
        wait_for(claude, sid, f"<task-id>{shell}</task-id>")
        drain_one_turn(session)
        fake_api.script(F.text("more work", input_tokens=90_000), F.text("after the second compaction"))
        session.send("again")
        session.send("once more")
        first, second = fake_api.compaction_requests()
        assert first is compaction
        later = requests_after(fake_api, second)[0]
        later_text = "\n".join(F.message_texts(later))
        assert f"Background shell {shell} " not in later_text.split(f"<task-id>{shell}</task-id>")[-1]
        assert f"({agent}) is still running" in later_text.split("\n".join(F.message_texts(after)))[-1]
        assert record_of(later) == lines  # what ran since the step, still: the cursor still lacks it
        assert f"(not to start again): subagent `{agent}`\n" in F.last_user_text(second) + "\n"
    finally:
        subagent.release.set()
        session.kill()


def test_the_same_run_without_an_anchor_gets_no_record_and_no_bytes(claude: Claude, fake_api: FakeAnthropic) -> None:
    sid = new_session_id()
    subagent = Subagent()
    fake_api.responder = subagent
    fake_api.script(F.bash("echo before", input_tokens=3000), *the_work(claude))
    session = claude.stream([*AUTOCOMPACT_100K, "--allowedTools", "Bash,Write,Agent"], session_id=sid)
    try:
        session.send("port the parser")
        session.send("continue")
        (compaction,) = fake_api.compaction_requests()
        after = requests_after(fake_api, compaction)[0]
        assert session_start_contexts(after) == []
        assert "session-workflow" not in F.last_user_text(compaction)
        hooks = [
            record
            for record in claude.transcript(sid)
            if record.get("type") == "attachment"
            and json.dumps(record.get("attachment")).find("hook_additional_context") >= 0
        ]
        assert hooks == []
    finally:
        subagent.release.set()
        session.kill()
