"""Resume and compaction on the real CLI: never twice, never a wrong instruction.

* The model keeps an anchor with a large TAIL and reads it with ``anchor show`` (a Bash result, which a
  compaction summarises away, where a Read would come back whole after every compaction); two ``/compact``s and
  a ``--resume`` later, every request carries the cursor once and the TAIL never, and the resume block sends
  only one line for each part the thread still holds.
* A task list recovered from the previous session is made this session's with the one command its header
  offers, after which TaskUpdate changes it.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import time
from typing import Any

import pytest

from . import fake_api as F
from .fake_api import FakeAnthropic
from .harness import (
    REPO_ROOT,
    Claude,
    all_text,
    new_session_id,
    session_start_contexts,
    transcript_hook_contexts,
)

pytestmark = pytest.mark.e2e

Body = dict[str, Any]

CURSOR_MARK = "CURSOR-MARK-17"
TAIL_MARK = "TAIL-MARK-17"
HEADER = "session-workflow: state restored from disk at SessionStart ({source})"
UNCHANGED = "{label}: unchanged since the session-workflow SessionStart ({source}) block above, which still holds it."

ANCHOR = """---
format: anchor/v1
task: Port the parser
step: 0
---

# Port the parser

## Mission
Port the parser to grammar v2. U1: "never touch the old AST".

## Cursor
Next action: write the parser for rule 7 (check that tests/test_lexer.py passes first)

## Resume steps
1. `session-workflow anchor show {path}`

<!-- anchor:tail -->

## Decisions log
{tail}
"""


def requests_after(api: FakeAnthropic, nth: int) -> list[Body]:
    """The conversation requests after the ``nth`` compaction request (to the end of the run)."""
    bodies = api.message_requests()
    compactions = [i for i, b in enumerate(bodies) if F.is_compaction_request(b)]
    assert len(compactions) > nth, f"only {len(compactions)} compaction request(s) were sent"
    return [b for b in bodies[compactions[nth] + 1 :] if F.offers_tools(b) and not F.is_compaction_request(b)]


def test_anchor_show_compact_twice_resume_cursor_once_tail_never(claude: Claude, fake_api: FakeAnthropic) -> None:
    sid = new_session_id()
    claude.write_task(sid, 1, "Write the parser for rule 7", "in_progress", description="rules 1-6 are done")
    tail = "\n".join(f"- {TAIL_MARK} decision {n}: " + "kept the old AST readable " * 8 for n in range(300))
    made: list[str] = []

    def write_whole(body: Body) -> F.Reply:
        made.append(F.anchor_path_from(body))
        text = ANCHOR.format(path=made[0], tail=tail)
        return F.bash(f"session-workflow anchor write {made[0]} <<'ANCHOR_EOF'\n{text}ANCHOR_EOF")

    fake_api.script(
        F.bash('session-workflow anchor new --task "Port the parser"'),
        write_whole,
        lambda body: F.bash(f'session-workflow anchor step {made[0]} "{CURSOR_MARK}: lexer done, rule 7 in progress"'),
        lambda body: F.bash(f"session-workflow anchor show {made[0]}"),
        F.text("read it; carrying on"),
    )
    claude.converse(
        ["port the parser to grammar v2", "/compact", "turn two", "/compact", "turn three"],
        ["--allowedTools", "Bash"],
        session_id=sid,
    )
    claude.run(["-p", "--resume", sid, "after the resume"]).check()
    assert fake_api.pending_script() == 0, "the model's tool calls were not all made"
    assert len(tail) > 60_000

    # what the model read: the HEAD as the hook frames it, cursor included, TAIL left on disk
    shown = [t for b in fake_api.main_requests() for t in F.last_tool_results(b) if "<anchor-head " in t]
    assert shown and CURSOR_MARK in shown[0] and TAIL_MARK not in shown[0], shown
    assert f"`session-workflow anchor show --all {made[0]}` prints it." in shown[0]

    for nth in (0, 1):
        later = requests_after(fake_api, nth)
        assert later, f"no conversation request followed compaction {nth + 1}"
        for body in later:
            text = all_text(body)
            spots = [text[max(0, m.start() - 300) : m.end() + 80] for m in re.finditer(CURSOR_MARK, text)]
            assert len(spots) == 1, (nth, spots)
            assert TAIL_MARK not in text, (nth, text[max(0, text.find(TAIL_MARK) - 300) : text.find(TAIL_MARK) + 300])

    # the resume block: one line for each part the thread still holds whole; the thread has one full copy
    resumed = fake_api.message_requests()[-1]
    ours = [c for c in transcript_hook_contexts(claude.transcript(sid)) if c.startswith("session-workflow: ")]
    assert ours[-1].startswith(HEADER.format(source="resume")), ours[-1][:300]
    resume_block = ours[-1]
    for label in ("Control anchor", "Task list"):
        assert UNCHANGED.format(label=label, source="compact") in resume_block, resume_block
    assert "<anchor-head " not in resume_block and "#1 [in_progress]" not in resume_block, resume_block
    text = all_text(resumed)
    assert text.count('<anchor-head file="') == 1 and text.count("#1 [in_progress] Write the parser") == 1, (
        session_start_contexts(resumed)
    )
    assert text.count(CURSOR_MARK) == 1 and TAIL_MARK not in text


def test_a_recovered_task_is_adopted_then_changed_with_task_update(claude: Claude, fake_api: FakeAnthropic) -> None:
    previous = new_session_id()
    claude.write_task(previous, 1, "Finish the migration", "in_progress", description="half done")
    claude.write_task(previous, 2, "Read the notes", "completed")
    claude.run(["-p", "the earlier session", "--session-id", previous]).check()
    fake_api.clear()
    sid = new_session_id()
    offered: list[str] = []

    def run_the_offered_command(body: Body) -> F.Reply:
        (block,) = [c for c in session_start_contexts(body) if c.startswith("session-workflow: ")]
        offered.extend(re.findall(r"`(session-workflow tasks adopt [^`]+)`", block))
        assert offered, block
        return F.bash(offered[0])

    fake_api.script(
        run_the_offered_command,
        F.task_update(1, status="completed"),
        F.tool_use("TaskList", {}),
        F.text("done"),
    )
    claude.run(
        ["-p", "carry on", "--session-id", sid, "--allowedTools", "Bash"],
        env_extra={"CLAUDE_CODE_ENABLE_TODO_TOOLS": "1"},
    ).check()
    assert fake_api.pending_script() == 0

    first = fake_api.main_requests()[0]
    (block,) = [c for c in session_start_contexts(first) if c.startswith("session-workflow: ")]
    assert f"recovered from session {previous}; TaskList and TaskUpdate cannot see these here" in block, block
    assert "TaskUpdate to change" not in block and "#1 [in_progress] Finish the migration" in block, block
    assert offered == [f"session-workflow tasks adopt {previous}"]

    results = [t for b in fake_api.main_requests()[1:] for t in F.last_tool_results(b)]
    assert any(t.startswith(f"adopted 1 open task(s) from {previous}") for t in results), results
    assert any("Updated task #1" in t and "status" in t for t in results), results
    assert not any("not found" in t.lower() for t in results), results
    mine = json.loads((claude.task_dir(sid) / "1.json").read_text(encoding="utf-8"))
    assert mine["subject"] == "Finish the migration" and mine["status"] == "completed", mine
    theirs = json.loads((claude.task_dir(previous) / "1.json").read_text(encoding="utf-8"))
    assert theirs["status"] == "in_progress", "the predecessor's list must be left as it was"


def test_inject_dry_run_from_the_bash_tool_shows_the_block_the_compaction_then_gets(
    claude: Claude, fake_api: FakeAnthropic
) -> None:
    sid = new_session_id()
    folder = claude.project / ".claude" / "anchors"
    folder.mkdir(parents=True)
    anchor = folder / "run.md"
    anchor.write_text(ANCHOR.format(path=anchor, tail="- old"), encoding="utf-8")
    then = time.time() - 2 * 3600  # "Updated 2h ago" in both blocks, whatever the clock does in between
    os.utime(anchor, (then, then))
    claude.write_task(sid, 1, "Write the parser for rule 7", "in_progress")
    where = ("--dir", str(claude.project), "--session", sid)
    subprocess.run(
        [str(REPO_ROOT / "bin" / "session-workflow"), "state", "set", *where, "--ticket", "34", "--title", "Fast"],
        env=claude.env(),
        check=True,
        capture_output=True,
    )
    fake_api.script(F.text("noted"), F.bash("session-workflow inject --dry-run"), F.text("shown"))
    claude.converse(
        ["first prompt: port the parser", "second prompt: show what a compaction restores", "/compact", "go on"],
        ["--allowedTools", "Bash"],
        session_id=sid,
    )
    (shown,) = [t for b in fake_api.main_requests() for t in F.last_tool_results(b) if "--- sizes ---" in t]
    block, report = shown.split("\n\n--- sizes ---\n", 1)
    assert "mod: loaded (detected: Claude Code 2.1.332 loads this plugin's hooks/mod/register.ts)" in report, report
    compact = [
        c for c in transcript_hook_contexts(claude.transcript(sid)) if c.startswith(HEADER.format(source="compact"))
    ]
    # The compaction's block is the dry run's plus the run record, whose one action is the dry run itself.
    (got,) = compact
    paragraphs = got.split("\n\n")
    (record,) = [p for p in paragraphs if p.startswith("RUN RECORD ")]
    assert record.endswith("\n- ok (exit 0): `session-workflow inject --dry-run`"), record
    assert "\n\n".join(p for p in paragraphs if p != record) == block, (block, got)
    assert "> first prompt: port the parser\n> second prompt: show what a compaction restores" in block
    assert "## Work state (snapshot)" not in block  # the mod puts it in the system prompt
