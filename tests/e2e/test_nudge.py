"""The mod's checkpoint nudge before an auto-compaction, on the real CLI: the fake API reports a growing context fill.

With ``--autocompact 100000`` Claude Code 2.1.332 compacts at 67,000 input tokens over a 100,000-token
compaction window, so the mod's default margin (15 points) puts the nudge at 52,000. The scripted model
creates an anchor, works past 52,000, is reminded once, runs ``anchor step``, and works on to a compaction;
every assertion reads what the model was sent.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from . import fake_api as F
from .fake_api import FakeAnthropic
from .harness import REPO_ROOT, Claude, new_session_id

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(
        not json.loads((REPO_ROOT / "hooks" / "hooks.json").read_text(encoding="utf-8")).get("modules"),
        reason="the nudge is the mod's: a build without hooks modules has none",
    ),
]

Body = dict[str, Any]

REMINDER_MARK = "write the cursor down now: session-workflow anchor step "
HOOK_CONTEXT = "tool.call hook additional context: "
#: A 100,000-token compaction window: auto-compaction at 67,000, the nudge at 52,000.
AUTOCOMPACT_100K = ("--autocompact", "100000")


def reminders(body: Body) -> list[str]:
    """Every reminder the request carries: each ``tool.call`` context of the mod, once per message it is in."""
    found = []
    for text in F.message_texts(body):
        for part in text.split(HOOK_CONTEXT)[1:]:
            line = part.split("\n", 1)[0]
            if REMINDER_MARK in line:
                found.append(line)
    return found


def tool_result_index(body: Body, needle: str) -> int:
    """The index in ``messages`` of the user message whose tool result prints ``needle``."""
    for index, message in enumerate(body["messages"]):
        content = message.get("content")
        if message.get("role") == "user" and isinstance(content, list):
            for block in content:
                if isinstance(block, dict) and block.get("type") == "tool_result" and needle in json.dumps(block):
                    return index
    raise AssertionError(f"no tool result prints {needle!r}")


def test_the_reminder_reaches_the_model_once_before_a_compaction(claude: Claude, fake_api: FakeAnthropic) -> None:
    sid = new_session_id()
    made: list[str] = []

    def remember_path(body: Body) -> F.Reply:
        results = F.last_tool_results(body)
        made.extend(line.strip() for r in results for line in r.splitlines() if line.strip().endswith(".md"))
        return F.bash("echo below-the-point", input_tokens=40_000)

    fake_api.script(
        F.bash('session-workflow anchor new --task "Port the parser"', input_tokens=3000),
        remember_path,
        F.bash("echo crossed-the-point", input_tokens=55_000),
        F.bash("echo still-above", input_tokens=58_000),
        lambda body: F.bash(f'session-workflow anchor step {made[0]} "done: lexer; next: rule 7"', input_tokens=60_000),
        F.bash("echo after-the-step", input_tokens=64_000),
        F.bash("echo over-the-threshold", input_tokens=90_000),
        F.bash("echo after-the-compaction", input_tokens=5000),
        F.bash("echo after-the-compaction-again", input_tokens=6000),
        F.text("done"),
    )
    claude.run(["-p", "port the parser", "--session-id", sid, *AUTOCOMPACT_100K, "--allowedTools", "Bash"]).check()
    assert fake_api.pending_script() == 0, "the model's tool calls were not all made"
    (path,) = set(made)

    (compaction,) = fake_api.compaction_requests()
    requests = fake_api.main_requests()
    at = next(index for index, body in enumerate(fake_api.message_requests()) if body is compaction)
    before = [body for body in fake_api.message_requests()[:at] if body in requests]
    after = [body for body in fake_api.message_requests()[at + 1 :] if body in requests]

    # Exactly one reminder before the compaction, on the result of the first call past 52,000 tokens, naming
    # the anchor and the exact command; the calls that follow (the step included) add none.
    last_before = before[-1]
    (line,) = reminders(last_before)
    assert f'session-workflow anchor step {path} "done: …; next: …"' in line, line
    assert line.startswith("Context at 55k tokens, auto-compaction at 67k: "), line
    assert len(line.encode("utf-8")) <= 300 and "\n" not in line
    reminded = next(index for index, body in enumerate(before) if reminders(body))
    assert "crossed-the-point" in "\n".join(F.last_tool_results(before[reminded])), "reminded on the wrong result"
    messages = last_before["messages"]
    at_result = tool_result_index(last_before, "crossed-the-point")
    assert any(line in text for text in F.message_texts({"messages": messages[at_result : at_result + 2]}))
    assert [len(reminders(body)) for body in before] == [0] * reminded + [1] * (len(before) - reminded)

    # After the compaction (and the step the model ran), nothing again.
    assert after, "no request after the compaction"
    assert all(reminders(body) == [] for body in after), [reminders(body) for body in after]


def test_no_reminder_without_an_anchor_this_session_wrote(claude: Claude, fake_api: FakeAnthropic) -> None:
    anchors = claude.project / ".claude" / "anchors"
    anchors.mkdir(parents=True)
    (anchors / "2026-01-01-someone-elses.md").write_text(
        "---\nformat: anchor/v1\nstep: 3\n---\n\n# Someone else's run\n\n## Cursor\n- Step 3: x\n"
        "\n<!-- anchor:tail -->\n",
        encoding="utf-8",
    )
    fake_api.script(
        F.bash("echo one", input_tokens=3000),
        F.bash("echo two", input_tokens=55_000),
        F.bash("echo three", input_tokens=60_000),
        F.text("done"),
    )
    claude.run(["-p", "go", "--session-id", new_session_id(), *AUTOCOMPACT_100K, "--allowedTools", "Bash"]).check()
    assert fake_api.pending_script() == 0
    assert all(reminders(body) == [] for body in fake_api.main_requests())


def test_a_resumed_session_in_a_new_process_is_reminded_of_the_anchor_it_kept(
    claude: Claude, fake_api: FakeAnthropic
) -> None:
    sid = new_session_id()
    fake_api.script(F.bash('session-workflow anchor new --task "Port the parser"', input_tokens=3000), F.text("made"))
    claude.run(["-p", "start", "--session-id", sid, *AUTOCOMPACT_100K, "--allowedTools", "Bash"]).check()
    (anchor,) = (claude.project / ".claude" / "anchors").glob("*.md")

    fake_api.script(F.bash("echo resumed", input_tokens=55_000), F.text("done"))
    claude.run(["-p", "--resume", sid, "go on", *AUTOCOMPACT_100K, "--allowedTools", "Bash"]).check()
    assert fake_api.pending_script() == 0
    (line,) = reminders(fake_api.main_requests()[-1])
    assert f"session-workflow anchor step {anchor} " in line, line
