"""``claude --resume <id> --fork-session``: what a fork is (measured on 2.1.332) and what the plugin gives it.

A fork carries the parent's conversation under a new session id: SessionStart fires with ``source: "fork"``
(plus ``seconds_since_last_response``), the transcript is a new file that starts with a copy of the parent's
records (its SessionStart contexts included), the Bash tool's ``CLAUDE_CODE_SESSION_ID``
is the new id, and the task list starts empty (a TaskCreate in the fork is #1 of a new list). The work state
stays owned by the parent (``state show`` in the fork says "orphaned here"), though the fork's thread keeps
the system prompt the parent's was latched with, the mod's work-state section included. So the parent's tasks
and work state stay the parent's, which may still be running; the project's anchor is the one thing they
share, and it is what the fork gets (one line when the forked thread already holds it word for word), with a line
saying whose the rest is, and the parent's open tasks as the recovered list that ``session-workflow tasks adopt``
copies into the fork's own.
"""

from __future__ import annotations

import pytest

from . import fake_api as F
from .fake_api import FakeAnthropic
from .harness import Claude, new_session_id, read_jsonl, transcript_hook_contexts
from .test_scenarios import (
    ANCHOR_HEADING,
    MOD_LOADED,
    WORK_STATE_HEADING,
    set_ticket,
    system_section,
    the_block,
    this_turn,
    write_anchor,
)

pytestmark = pytest.mark.e2e

FORK_LINE = "This session is a fork: the session it was forked from keeps its work state"


def test_a_fork_gets_the_shared_anchor_once_and_the_parents_tasks_as_recovered_not_its_work_state(
    claude: Claude, fake_api: FakeAnthropic
) -> None:
    parent = new_session_id()
    write_anchor(claude.project, next_action="write the parser for rule 7")
    claude.write_task(parent, 1, "PARENT-TASK: finish the lexer", "in_progress")
    set_ticket(claude, parent, title="Make the parser fast")
    claude.run(["-p", "one", "--session-id", parent]).check()
    first_run = len(fake_api.message_requests())

    fake_api.script(
        F.bash("echo FORK-SID=$CLAUDE_CODE_SESSION_ID; session-workflow state show"),
        F.task_create("FORK-TASK"),
        F.text("forked"),
    )
    env = {"CLAUDE_CODE_ENABLE_TODO_TOOLS": "1"}
    claude.run(["-p", "--resume", parent, "--fork-session", "two", "--allowedTools", "Bash"], env_extra=env).check()

    forked = [p for p in claude.transcript_dir().glob("*.jsonl") if p.stem != parent]
    assert len(forked) == 1, "a fork writes a transcript of its own"
    fork = forked[0].stem
    contexts = transcript_hook_contexts(read_jsonl(forked[0]))
    assert contexts[0].startswith("session-workflow: state restored from disk at SessionStart (startup).")
    assert contexts[-1].startswith("session-workflow: state restored from disk at SessionStart (fork);")

    body = fake_api.message_requests()[first_run]
    block = the_block(this_turn(body), "fork")
    # The forked thread holds the parent's startup block, anchor HEAD included: the fork's says so in one line.
    assert "Control anchor: unchanged since the session-workflow SessionStart (startup) block above" in block
    assert ANCHOR_HEADING not in block and str(body).count("Next action: write the parser for rule 7") == 1
    assert FORK_LINE in block
    # The parent's open tasks come as the recovered list: not in the fork's TaskList until it adopts them.
    assert f"recovered from session {parent}; TaskList and TaskUpdate cannot see these here" in block
    assert f"session-workflow tasks adopt {parent}" in block and "PARENT-TASK: finish the lexer" in block
    assert WORK_STATE_HEADING not in block
    # The fork's thread keeps the system prompt the parent's was latched with: with the mod, the parent's section.
    section = system_section(body)
    assert (section is not None and 'Ticket: #34 "Make the parser fast"' in section) == MOD_LOADED, section

    shown = str(F.last_tool_results(fake_api.message_requests()[first_run + 1]))
    assert f"FORK-SID={fork}" in shown
    assert f"{parent} (another session: orphaned here)" in shown
    created = str(F.last_tool_results(fake_api.message_requests()[first_run + 2]))
    assert "Task #1 created successfully: FORK-TASK" in created
    assert (claude.task_dir(fork) / "1.json").is_file() and (claude.task_dir(parent) / "1.json").is_file()


def test_a_fork_beside_an_older_session_with_open_tasks_gets_its_parents_tasks_and_keeps_them_at_compaction(
    claude: Claude, fake_api: FakeAnthropic
) -> None:
    """``/clear`` left the old session's tasks open, so two sessions of the project hold open tasks; the
    fork knows its parent (Claude Code's command line) and lists the parent's, at the fork and at its first
    compaction, never the hint that its empty TaskList cannot honour."""
    old = new_session_id()
    claude.write_task(old, 1, "OLD-TASK: left open by the clear", "in_progress")
    cleared = claude.converse(["one", "/clear", "two"], session_id=old)
    parent = cleared.session_id
    assert parent and parent != old
    claude.write_task(parent, 1, "PARENT-TASK: finish the lexer", "in_progress")
    fake_api.clear()
    claude.converse(["three", "/compact", "four"], ["--resume", parent, "--fork-session"])
    bodies = [b for b in fake_api.message_requests() if F.offers_tools(b) and not F.is_compaction_request(b)]
    assert len(bodies) == 2, len(bodies)
    for body, source in zip(bodies, ("fork", "compact")):
        block = the_block(this_turn(body), source)
        assert f"recovered from session {parent};" in block and "PARENT-TASK: finish the lexer" in block, block
        assert "OLD-TASK" not in block and "call TaskList" not in block, block
