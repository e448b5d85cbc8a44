"""The run's own flows on the real CLI: resume then /compact carries the HEAD once; PreCompact quotes the
cursor's Next action line; `session-workflow log` lists two compactions and a reminder with their sizes.
(`anchor restore` giving the cursor in the same turn: tests/e2e/test_own_anchor.py; the mod after /clear:
tests/mod/checkpoint.test.ts.)"""

from __future__ import annotations

import subprocess
from typing import Any

import pytest

from . import fake_api as F
from .fake_api import FakeAnthropic
from .harness import REPO_ROOT, Claude, all_text, new_session_id
from .test_scenarios import delivery, set_ticket

__all__ = ["delivery"]  # the fixture, used by name

pytestmark = pytest.mark.e2e

Body = dict[str, Any]
MARK = "CURSOR-MARK-34"
MISSION = "MISSION-MARK-34"
WHAT = "Run a command"

ANCHOR = f"""---
format: anchor/v1
task: Port the parser
step: 3
---

# Port the parser

## Mission
Port the parser to grammar v2. {MISSION}

## Cursor
- Step 3: lexer done; next: rules
- Next action: {MARK} write the parser for rule 7

<!-- anchor:tail -->

## Decisions log
- kept the old AST
"""


def _make_anchor(made: list[str], **tokens: int) -> list[Any]:
    def write_whole(body: Body) -> F.Reply:
        made.append(F.anchor_path_from(body))
        return F.bash(f"session-workflow anchor write {made[0]} <<'ANCHOR_EOF'\n{ANCHOR}ANCHOR_EOF", WHAT, **tokens)

    return [F.bash('session-workflow anchor new --task "Port the parser"', WHAT, **tokens), write_whole]


def _after_compaction(api: FakeAnthropic, nth: int = 0) -> list[Body]:
    bodies = api.message_requests()
    compactions = [i for i, b in enumerate(bodies) if F.is_compaction_request(b)]
    assert len(compactions) > nth, "no such compaction request"
    return [b for b in bodies[compactions[nth] + 1 :] if F.offers_tools(b) and not F.is_compaction_request(b)]


def test_resume_then_compact_carries_the_head_once_and_precompact_quotes_the_next_action(
    claude: Claude, fake_api: FakeAnthropic
) -> None:
    sid = new_session_id()
    made: list[str] = []
    fake_api.script(*_make_anchor(made), F.text("anchor kept"), F.text("after the first compaction"))
    claude.converse(["port the parser", "/compact", "go on"], ["--allowedTools", "Bash"], session_id=sid)
    fake_api.clear()
    fake_api.script(F.text("resumed"), F.text("compacted, going on"))
    claude.converse(["after the resume", "/compact", "go on"], ["--allowedTools", "Bash", "--resume", sid])
    later = _after_compaction(fake_api)
    assert later
    for body in later:
        assert all_text(body).count(MISSION) == 1, all_text(body)[-4000:]
    # PreCompact's request names the cursor's Next action line, not the newest step bullet.
    (compaction,) = fake_api.compaction_requests()
    wanted = f"- the control anchor file `{made[0]}` and its next action: {MARK} write the parser for rule 7"
    assert wanted in all_text(compaction), all_text(compaction)[-3000:]
    assert "next action: - Step" not in all_text(compaction)


def test_log_lists_two_compactions_and_a_reminder_with_their_sizes(claude: Claude, fake_api: FakeAnthropic) -> None:
    sid = new_session_id()
    made: list[str] = []
    fake_api.script(
        *_make_anchor(made, input_tokens=3000),
        F.bash("echo crossed-the-point", input_tokens=55_000),
        F.bash("echo over-the-threshold", input_tokens=90_000),
        F.text("after the compaction", input_tokens=5000),
        F.text("after the second compaction"),
    )
    claude.converse(
        ["port the parser", "/compact", "go on"], ["--autocompact", "100000", "--allowedTools", "Bash"], session_id=sid
    )
    assert fake_api.pending_script() == 0, "the model's tool calls were not all made"
    assert len(fake_api.compaction_requests()) == 2
    done = subprocess.run(
        [str(REPO_ROOT / "bin" / "session-workflow"), "log", "--session", sid],
        env=claude.env(),
        cwd=claude.project,
        capture_output=True,
        text=True,
        check=True,
    )
    lines = done.stdout.splitlines()
    assert lines[0] == f"3 entries for session {sid}, newest first:", done.stdout
    compacts = [line for line in lines[1:] if "  compact  " in line]
    (reminder,) = [line for line in lines[1:] if "  reminder  " in line]
    assert len(compacts) == 2 and f": {made[0]}" in reminder and "checkpoint reminder at 55,000 of 67,000" in reminder
    for line in compacts:
        assert " of 10,000 units" in line and "anchor " in line and line.endswith(f"; anchor {made[0]} at step 3")


HEAD = '<anchor-head file="'
TICKET = "TICKET-MARK-40 Port the parser"
TASK = "#1 [in_progress] Write the parser for rule 7"


def _first_after_compaction(api: FakeAnthropic) -> str:
    later = _after_compaction(api)
    assert later, "no conversation request followed the compaction"
    return all_text(later[0])


def _session_with_anchor_and_task(claude: Claude, fake_api: FakeAnthropic) -> str:
    sid = new_session_id()
    claude.write_task(sid, 1, "Write the parser for rule 7", "in_progress", description="rules 1-6 are done")
    set_ticket(claude, sid, title=TICKET)
    made: list[str] = []
    fake_api.script(*_make_anchor(made), F.text("anchor kept"))
    claude.converse(["port the parser"], ["--allowedTools", "Bash"], session_id=sid)
    assert fake_api.pending_script() == 0 and made
    fake_api.clear()
    return sid


def _once_each(text: str) -> None:
    """The HEAD, the mission in it, the open task and the ticket, each exactly once in one request."""
    # the work-state section's ticket line (a manual /compact also echoes PreCompact's "- ticket …" request)
    counts = (text.count(HEAD), text.count(MISSION), text.count(TASK), text.count(f'Ticket: #34 "{TICKET}"'))
    assert counts == (1, 1, 1, 1), text[-6000:]
    # the resume block (which holds the HEAD) comes first; the compact block says so in one line
    assert text.index(HEAD) < text.index("SessionStart (compact)"), text[-6000:]
    assert "Control anchor: unchanged since the session-workflow SessionStart (resume) block above" in text


def test_resume_then_compact_at_once_in_one_process_carries_each_part_once(
    claude: Claude, fake_api: FakeAnthropic, delivery: str
) -> None:
    """The resume block is never sent before the /compact; Claude Code delivers it after the compaction, beside
    the compact block: the HEAD and the task are in the next request once."""
    sid = _session_with_anchor_and_task(claude, fake_api)
    fake_api.script(F.text("compacted, going on"))
    claude.converse(["/compact", "go on"], ["--allowedTools", "Bash", "--resume", sid])
    _once_each(_first_after_compaction(fake_api))


def test_resume_then_compact_in_two_processes_carries_each_part_once(
    claude: Claude, fake_api: FakeAnthropic, delivery: str
) -> None:
    sid = _session_with_anchor_and_task(claude, fake_api)
    claude.run(["-p", "--resume", sid, "/compact", "--allowedTools", "Bash"]).check()
    fake_api.script(F.text("going on"))
    claude.run(["-p", "--resume", sid, "go on", "--allowedTools", "Bash"]).check()
    _once_each(_first_after_compaction(fake_api))


def test_a_fill_from_5_to_98_percent_in_one_tool_result_leaves_no_stale_reminder_after_the_compaction(
    claude: Claude, fake_api: FakeAnthropic
) -> None:
    """The result that takes the fill past the threshold is the one Claude Code keeps verbatim after the
    auto-compaction; a reminder riding on it would tell the new thread to write its cursor, with stale figures."""
    sid = new_session_id()
    made: list[str] = []
    fake_api.script(
        *_make_anchor(made, input_tokens=5000),
        F.bash("echo a-result-that-fills-the-window", WHAT, input_tokens=98_000),
        F.text("after the compaction", input_tokens=5000),
    )
    claude.converse(["port the parser"], ["--autocompact", "100000", "--allowedTools", "Bash"], session_id=sid)
    assert fake_api.pending_script() == 0, "the model's tool calls were not all made"
    later = _after_compaction(fake_api)
    assert later, "no conversation request followed the auto-compaction"
    assert "a-result-that-fills-the-window" in all_text(later[0]), "the last tool result is not the one kept"
    assert "write the cursor down now" not in all_text(later[0]), all_text(later[0])[-3000:]
