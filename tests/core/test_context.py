"""Payload parsing and the project-directory order every part uses."""

from __future__ import annotations

import io
import json
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from session_workflow.core.context import HookContext
from session_workflow.core.places import Places
from session_workflow.hook.io import hook_json, parse_payload, run_hook


def _ctx(**payload: object) -> HookContext:
    return HookContext.from_payload(payload, Places({}), 0.0)


def test_non_string_fields_are_absent() -> None:
    ctx = _ctx(source=5, session_id=["x"], cwd="", transcript_path="a\x00b", hook_event_name="SessionStart")
    assert (ctx.source, ctx.session_id, ctx.cwd, ctx.transcript_path) == (None, None, None, None)
    assert ctx.event == "SessionStart"


def test_mod_marker_must_be_exactly_one_or_true() -> None:
    assert _ctx(session_workflow_mod=1).mod_active
    assert _ctx(session_workflow_mod=True).mod_active
    assert not _ctx(session_workflow_mod="1").mod_active
    assert not _ctx(session_workflow_mod=2).mod_active


def test_the_project_is_the_one_rule_whatever_the_source(tmp_path: Path) -> None:
    """A hook's project is ``core.where.project_dir`` (held in tests/core/test_where.py): CLAUDE_PROJECT_DIR, else
    where the transcript says the session started, else the cwd; one folder, never the cwd beside it."""
    start, now = tmp_path / "start", tmp_path / "start" / "src"
    now.mkdir(parents=True)
    transcript = tmp_path / "t.jsonl"
    transcript.write_text(json.dumps({"cwd": str(start)}) + "\n")
    for source in ("startup", "resume", "clear", "compact", "fork"):
        ctx = _ctx(source=source, cwd=str(now), transcript_path=str(transcript))
        assert ctx.project_dirs() == [str(start)] and ctx.project_dir() == str(start)
    assert _ctx(source="startup", cwd=str(now)).project_dirs() == [str(now)]
    given = HookContext.from_payload(
        {"cwd": str(now)}, Places({"CLAUDE_PROJECT_DIR": str(tmp_path), "CLAUDECODE": "1"}), 0.0
    )
    assert given.project_dirs() == [str(tmp_path)]
    named = HookContext.from_payload(
        {"cwd": str(now)}, Places({"CLAUDE_PROJECT_DIR": str(tmp_path)}), 0.0, project=str(now)
    )
    assert named.project_dirs() == [str(now)]
    assert _ctx(source="compact", cwd="relative").project_dirs() == []


def test_parse_payload_rejects_non_objects_and_bad_json() -> None:
    assert parse_payload(b"[1]") is None
    assert parse_payload(b"{bad") is None
    assert parse_payload(b"\xff\xfe") is None
    assert parse_payload(b"[" * 100_000) is None
    assert parse_payload(b'{"a": 1}') == {"a": 1}


def test_hook_json_is_ascii_and_round_trips() -> None:
    data = hook_json("SessionStart", "é😀\n")
    data.decode("ascii")
    assert json.loads(data) == {"hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": "é😀\n"}}


def test_hook_json_replaces_lone_surrogates_but_keeps_pairs() -> None:
    text = json.loads(hook_json("SessionStart", "a\udcff b\ud800 😀"))["hookSpecificOutput"]["additionalContext"]
    assert text == "a\ufffd b\ufffd 😀"
    text.encode("utf-8")
    # A pair given as two halves is the one character it encodes; text without a surrogate passes as it is.
    text = json.loads(hook_json("SessionStart", "\ud83d\ude00 é"))["hookSpecificOutput"]["additionalContext"]
    assert text == "😀 é"


def test_run_hook_swallows_handler_errors_and_bad_stdin() -> None:
    seen: list[HookContext] = []

    def handler(ctx: HookContext) -> None:
        seen.append(ctx)
        raise RuntimeError("boom")

    run_hook(handler, "SessionStart", io.BytesIO(b'{"source": "compact"}'))
    run_hook(handler, "SessionStart", io.BytesIO(b"nope"))
    assert [ctx.source for ctx in seen] == ["compact"]


@settings(max_examples=200, deadline=None)
@given(text=st.text(), event=st.sampled_from(["SessionStart", "UserPromptSubmit", "PreCompact"]))
def test_hook_json_is_exactly_what_json_dumps_writes(text: str, event: str) -> None:
    safe = text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")
    body = {"hookSpecificOutput": {"hookEventName": event, "additionalContext": safe}}
    assert hook_json(event, text) == json.dumps(body, ensure_ascii=True).encode("ascii")
