"""Pin the Claude Code behaviour the e2e scenarios rely on, with the test-only probe plugin.

These do not depend on this repository's hooks: ``tests/e2e/probe_plugin`` logs
every hook payload and prints marker texts, so a failure here means the CLI (or
the harness) changed, not the plugin.
"""

from __future__ import annotations

import json
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from . import fake_api as F
from .fake_api import FakeAnthropic
from .harness import (
    Claude,
    all_text,
    describe_requests,
    excerpt,
    new_session_id,
    read_jsonl,
    session_start_contexts,
    transcript_hook_contexts,
)

pytestmark = pytest.mark.e2e

PROBE_PLUGIN = Path(__file__).resolve().parent / "probe_plugin"


@pytest.fixture
def probe(claude: Claude) -> Claude:
    claude.plugin_dir = PROBE_PLUGIN
    claude.env_extra["E2E_PROBE_LOG"] = str(claude.root / "probe.log")
    return claude


def hook_log(c: Claude) -> list[dict[str, Any]]:
    path = c.root / "probe.log"
    return [r["payload"] for r in read_jsonl(path)] if path.exists() else []


def ss(source: str) -> str:
    return f"E2E-PROBE-SESSIONSTART source={source}"


def test_fake_api_plain_json_and_unique_ids(fake_api: FakeAnthropic) -> None:
    fake_api.script(F.bash("echo hi"))
    bodies = [
        {"model": "m", "max_tokens": 10, "tools": [{"name": "Bash"}], "messages": [{"role": "user", "content": "a"}]},
        {
            "model": "m",
            "max_tokens": 10,
            "messages": [{"role": "user", "content": "b"}, {"role": "system", "content": "s"}],
        },
    ]
    replies = []
    for body in bodies:
        req = urllib.request.Request(
            fake_api.base_url + "/v1/messages?beta=true",
            data=json.dumps(body).encode(),
            headers={"content-type": "application/json"},
        )
        with urllib.request.urlopen(req, timeout=10) as resp:  # loopback only
            replies.append(json.load(resp))
    assert replies[0]["content"][0]["type"] == "tool_use" and replies[0]["stop_reason"] == "tool_use"
    assert replies[1]["content"] == [{"type": "text", "text": "OK"}]
    assert len({r["id"] for r in replies}) == 2
    assert [b["messages"][0]["content"] for b in fake_api.message_requests()] == ["a", "b"]


def test_session_start_context_rendering(probe: Claude, fake_api: FakeAnthropic) -> None:
    probe.run(["-p", "hello"]).check()
    first = fake_api.message_requests()[0]
    assert session_start_contexts(first) == [ss("startup")], excerpt(first, "SessionStart hook")
    # the default model takes system entries: the context is folded into one
    system_entries = [m for m in first["messages"] if m.get("role") == "system"]
    assert system_entries and "SessionStart hook additional context: " in json.dumps(system_entries[0])
    (payload,) = [p for p in hook_log(probe) if p["hook_event_name"] == "SessionStart"]
    assert payload["source"] == "startup"
    assert set(payload) >= {"session_id", "transcript_path", "cwd", "hook_event_name", "source"}
    assert payload["cwd"] == str(probe.project)


@pytest.mark.parametrize(("length", "inline"), [(10_000, True), (10_001, False)])
def test_additional_context_cap(probe: Claude, fake_api: FakeAnthropic, length: int, inline: bool) -> None:
    probe.run(["-p", "hello"], env_extra={"E2E_PROBE_SS_LEN": str(length)}).check()
    first = fake_api.message_requests()[0]
    (ctx,) = session_start_contexts(first)
    if inline:
        assert len(ctx) == length and "<persisted-output>" not in ctx, excerpt(first, "SessionStart hook")
        (sid,) = {p["session_id"] for p in hook_log(probe)}
        assert transcript_hook_contexts(probe.transcript(sid)) == [ctx]
    else:
        assert ctx.startswith("<persisted-output>\nOutput too large"), excerpt(first, "SessionStart hook")
        assert "Preview (first 2KB):\nE2E-PROBE-SESSIONSTART" in ctx


def test_manual_compact_through_resume(probe: Claude, fake_api: FakeAnthropic) -> None:
    sid = new_session_id()
    probe.run(["-p", "first prompt", "--session-id", sid]).check()
    n = len(fake_api.message_requests())
    probe.run(["-p", "--resume", sid, "/compact keep x"]).check()
    compaction = fake_api.compaction_requests()
    assert len(compaction) == 1, describe_requests(fake_api)
    instructions = F.last_user_text(compaction[0])
    assert "Additional Instructions:\nkeep x\n\nE2E-PROBE-PRECOMPACT trigger=manual" in instructions, excerpt(
        compaction[0], "Additional Instructions"
    )
    assert len(fake_api.message_requests()) == n + 1  # /compact in -p sends nothing else
    probe.run(["-p", "--resume", sid, "after compact"]).check()
    after = fake_api.message_requests()[-1]
    assert session_start_contexts(after) == [ss("compact"), ss("resume")], excerpt(after, "SessionStart hook")
    assert F.SUMMARY_TEXT in all_text(after), excerpt(after, "Summary:")
    events = [
        (p["hook_event_name"], p.get("source") or p.get("trigger"))
        for p in hook_log(probe)
        if p["hook_event_name"] != "UserPromptSubmit"
    ]
    assert events == [
        ("SessionStart", "startup"),
        ("SessionStart", "resume"),
        ("PreCompact", "manual"),
        ("SessionStart", "compact"),
        ("SessionStart", "resume"),
    ], events
    assert {p["session_id"] for p in hook_log(probe)} == {sid}


def test_stream_json_compact_then_clear(probe: Claude, fake_api: FakeAnthropic) -> None:
    sid = new_session_id()
    with probe.stream(session_id=sid) as s:
        s.send("turn one")
        s.send("/compact")
        s.send("turn two")
        after_compact = fake_api.message_requests()[-1]
        s.send("/clear")
        new_sid = s.session_id
        s.send("turn three")
        after_clear = fake_api.message_requests()[-1]
        assert s.close() == 0
    assert len(fake_api.compaction_requests()) == 1
    assert session_start_contexts(after_compact) == [ss("compact")], excerpt(after_compact, "SessionStart hook")
    assert session_start_contexts(after_clear) == [ss("clear")], excerpt(after_clear, "SessionStart hook")
    assert new_sid and new_sid != sid
    clear_payload = [p for p in hook_log(probe) if p.get("source") == "clear"]
    assert [p["session_id"] for p in clear_payload] == [new_sid]
    assert probe.transcript_path(new_sid).exists()


def test_auto_compact_from_reported_input_tokens(probe: Claude, fake_api: FakeAnthropic) -> None:
    # The first reply must report few tokens (it sets the "fixed prefix"
    # estimate); the next one reports more than the window's threshold.
    fake_api.script(F.text("small", input_tokens=3000), F.text("big", input_tokens=90_000), F.text("after"))
    with probe.stream(["--autocompact", "100000"]) as s:
        s.send("one")
        s.send("two")
        assert not fake_api.compaction_requests()
        s.send("three")
        assert s.close() == 0
    compaction = fake_api.compaction_requests()
    assert len(compaction) == 1, describe_requests(fake_api)
    assert "E2E-PROBE-PRECOMPACT trigger=auto" in F.last_user_text(compaction[0])
    after = fake_api.message_requests()[-1]
    assert session_start_contexts(after) == [ss("compact")], excerpt(after, "SessionStart hook")
    triggers = [p["trigger"] for p in hook_log(probe) if p["hook_event_name"] == "PreCompact"]
    assert triggers == ["auto"]


def test_scripted_bash_and_task_tools(probe: Claude, fake_api: FakeAnthropic) -> None:
    sid = new_session_id()
    fake_api.script(
        F.bash("echo from-bash > made-by-bash.txt && echo done-bash"),
        F.task_create("Write the parser", "parse it", "Writing the parser"),
        F.task_update("1", status="in_progress"),
        F.text("finished"),
    )
    result = probe.run(
        ["-p", "go", "--session-id", sid, "--allowedTools", "Bash"],
        env_extra={"CLAUDE_CODE_ENABLE_TODO_TOOLS": "1"},
    ).check()
    assert result.stdout.strip() == "finished"
    assert (probe.project / "made-by-bash.txt").read_text().strip() == "from-bash"
    results = [t for b in fake_api.main_requests() for t in F.message_texts(b)]
    assert "done-bash" in results and "Task #1 created successfully: Write the parser" in results, results
    task = json.loads((probe.task_dir(sid) / "1.json").read_text())
    assert task["subject"] == "Write the parser" and task["status"] == "in_progress", task
    assert fake_api.pending_script() == 0
