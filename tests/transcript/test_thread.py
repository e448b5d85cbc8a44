"""Our SessionStart blocks still in the thread: after the last compaction boundary, newest first, bounded."""

from __future__ import annotations

import json
from pathlib import Path

from session_workflow.transcript.thread import blocks_in_thread

PREFIX = "session-workflow: state restored"
FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "transcripts"


def context(text: str, event: str = "SessionStart") -> dict[str, object]:
    return {
        "type": "attachment",
        "attachment": {"type": "hook_additional_context", "content": [text], "hookName": event, "hookEvent": event},
    }


BOUNDARY = {"type": "system", "subtype": "compact_boundary", "content": "Conversation compacted"}


def write(path: Path, records: list[object]) -> Path:
    path.write_text("".join(json.dumps(record) + "\n" for record in records), encoding="utf-8")
    return path


def test_blocks_after_the_last_boundary_newest_first(tmp_path: Path) -> None:
    path = write(
        tmp_path / "t.jsonl",
        [
            context(f"{PREFIX} startup"),
            BOUNDARY,
            context(f"{PREFIX} compact 1"),
            BOUNDARY,
            context(f"{PREFIX} compact 2"),
            context("another plugin's context"),
            context(f"{PREFIX} as a prompt's context", "UserPromptSubmit"),
            {"type": "api-request-blob", "message": {"content": [{"text": f"{PREFIX} in a blob"}]}},
            context(f"{PREFIX} resume"),
        ],
    )
    assert blocks_in_thread(str(path), PREFIX) == [f"{PREFIX} resume", f"{PREFIX} compact 2"]


def test_no_boundary_means_the_whole_tail_is_the_thread_and_bad_lines_are_skipped(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    path.write_text(
        json.dumps(context(f"{PREFIX} startup")) + '\n{broken "hook_additional_context"\n', encoding="utf-8"
    )
    assert blocks_in_thread(str(path), PREFIX) == [f"{PREFIX} startup"]
    assert blocks_in_thread(str(tmp_path / "missing.jsonl"), PREFIX) == []


def test_only_the_tail_is_read(tmp_path: Path) -> None:
    filler = {"type": "user", "message": {"content": "x" * 1000}}
    path = write(tmp_path / "t.jsonl", [context(f"{PREFIX} old"), *([filler] * 50), context(f"{PREFIX} new")])
    assert blocks_in_thread(str(path), PREFIX, max_bytes=10_000) == [f"{PREFIX} new"]


def test_real_transcripts_after_compact_hold_only_the_newest_blocks() -> None:
    # after_compact.jsonl (2.1.332, the probe plugin): its last boundary is followed by SessionStart(compact)
    blocks = blocks_in_thread(str(FIXTURES / "after_compact.jsonl"), "E2E-PROBE-SESSIONSTART")
    assert blocks == ["E2E-PROBE-SESSIONSTART source=compact"]
    resumed = blocks_in_thread(str(FIXTURES / "resume.jsonl"), "E2E-PROBE-SESSIONSTART")
    assert resumed == ["E2E-PROBE-SESSIONSTART source=resume", "E2E-PROBE-SESSIONSTART source=startup"]
