"""On the real CLI: nothing dropped in silence at a new session, and a fork never twice.

A new session id (startup after a crash, ``/clear``) owns no work state: the state another session left is named
in one line with ``session-workflow state adopt`` (never as a section, in the system prompt or the block); after a
crash the open tasks of the session before it come as the recovered list with ``session-workflow tasks adopt``,
while ``/clear`` gets no task list and no task hint (the task spec: "`clear` ... emit nothing"). A fork
carries its parent's thread, so what a block of that thread already holds word for word is one line.
"""

from __future__ import annotations

import json

import pytest

from . import fake_api as F
from .fake_api import FakeAnthropic
from .harness import Claude, new_session_id, read_jsonl, transcript_hook_contexts
from .test_scenarios import (
    ANCHOR_HEADING,
    WORK_STATE_HEADING,
    delivery,  # noqa: F401 (a fixture)
    our_blocks,
    set_ticket,
    show,
    system_section,
    the_block,
    this_turn,
    write_anchor,
)

pytestmark = pytest.mark.e2e

FOREIGN_LINE = (
    'Work state of another session (its section is not given to this one): #34 "Make the parser fast", step execute,'
    " updated <1 min ago. If this session carries on with that ticket, take it over first:"
    " `session-workflow state adopt`."
)


def recovered(session: str) -> str:
    return (
        f"STRUCTURED TASK LIST (compact-proof, recovered from session {session}; TaskList and TaskUpdate cannot see"
        f" these here until you run `session-workflow tasks adopt {session}`, which copies them into this session's"
        " list under the same ids):\n#1 [in_progress] Finish the lexer\n  description: Finish the lexer"
    )


def test_startup_after_a_crash_names_the_state_with_adopt_and_recovers_the_tasks(
    claude: Claude,
    fake_api: FakeAnthropic,
    delivery: str,  # noqa: F811
) -> None:
    crashed = new_session_id()
    claude.write_task(crashed, 1, "Finish the lexer", "in_progress")
    set_ticket(claude, crashed, step="execute")
    claude.run(["-p", "one", "--session-id", crashed]).check()  # the session that then crashed

    fake_api.script(F.bash("session-workflow state adopt"), F.text("adopted"))
    new = new_session_id()
    claude.run(["-p", "carry on", "--session-id", new, "--allowedTools", "Bash"]).check()
    body = fake_api.message_requests()[1]
    block = the_block(this_turn(body), "startup")
    assert block == "\n\n".join(
        ["session-workflow: state restored from disk at SessionStart (startup).", FOREIGN_LINE, recovered(crashed)]
    ), show(body)
    assert system_section(body) is None and WORK_STATE_HEADING not in json.dumps(body), show(body)
    # The command the line names is the one that works, run as the model would run it.
    adopted = str(F.last_tool_results(fake_api.message_requests()[2]))
    assert 'adopted #34 "Make the parser fast"' in adopted and f"from session {crashed}" in adopted, adopted


def test_clear_names_the_state_and_sends_no_task_list(
    claude: Claude,
    fake_api: FakeAnthropic,
    delivery: str,  # noqa: F811
) -> None:
    sid = new_session_id()
    anchor = write_anchor(claude.project)
    claude.write_task(sid, 1, "Finish the lexer", "in_progress")
    set_ticket(claude, sid, step="execute")
    new_sid = claude.converse(["turn one", "/clear", "turn after clear"], session_id=sid).session_id
    assert new_sid and new_sid != sid

    after = fake_api.message_requests()[-1]
    block = the_block(after, "clear")
    parts = block.split("\n\n")
    assert parts[:2] == ["session-workflow: state restored from disk at SessionStart (clear).", FOREIGN_LINE], show(
        after
    )
    assert len(parts) == 3 and parts[2].startswith(f"{ANCHOR_HEADING}`{anchor}`"), show(after)
    # The cleared session's open task is on disk, yet neither its list nor the hint comes (clear starts afresh).
    assert "STRUCTURED TASK LIST" not in block and "Finish the lexer" not in block, show(after)
    # The work state belongs to the cleared session: no section in the new thread, system prompt or block.
    assert system_section(after) is None and WORK_STATE_HEADING not in json.dumps(after), show(after)


def test_a_fork_after_a_compaction_sends_the_anchor_head_once(claude: Claude, fake_api: FakeAnthropic) -> None:
    parent = new_session_id()
    write_anchor(claude.project, next_action="write the parser for rule 7")
    claude.run(["-p", "one", "--session-id", parent]).check()
    claude.run(["-p", "--resume", parent, "/compact keep x"]).check()
    before = len(fake_api.message_requests())
    claude.run(["-p", "--resume", parent, "--fork-session", "two"]).check()

    body = fake_api.message_requests()[before]
    sent = json.dumps(body, ensure_ascii=False)
    assert sent.count("Next action: write the parser for rule 7") == 1, show(body)
    assert sent.count(ANCHOR_HEADING) == 1, show(body)
    # The thread holds the compact block (no reply since the compaction), then the fork's.
    compact, block = our_blocks(body)
    assert compact.startswith("session-workflow: state restored from disk at SessionStart (compact);")
    assert block.startswith("session-workflow: state restored from disk at SessionStart (fork);"), show(body)
    assert block.split("\n\n")[1:] == [
        "Control anchor: unchanged since the session-workflow SessionStart (compact) block above, which still holds it."
    ], show(body)
    assert block.split("\n")[1].startswith("This session is a fork: the session it was forked from keeps its work")
    forked = [p for p in claude.transcript_dir().glob("*.jsonl") if p.stem != parent]
    assert len(forked) == 1
    contexts = transcript_hook_contexts(read_jsonl(forked[0]))
    assert contexts[-1] == block and sum(ANCHOR_HEADING in c for c in contexts) == 1
