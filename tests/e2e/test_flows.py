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
    wanted = f"- the control anchor file {made[0]} and its next action: {MARK} write the parser for rule 7"
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
