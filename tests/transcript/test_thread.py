"""Our SessionStart blocks still in the thread: after the last compaction boundary, newest first, bounded."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from session_workflow.transcript import thread
from session_workflow.transcript.thread import blocks_in_thread

PREFIX = "session-workflow: state restored"
FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "transcripts"


def context(text: str, event: str = "SessionStart") -> dict[str, object]:
    return {
        "type": "attachment",
        "attachment": {"type": "hook_additional_context", "content": [text], "hookName": event, "hookEvent": event},
    }


BOUNDARY = {"type": "system", "subtype": "compact_boundary", "content": "Conversation compacted"}
ANSWER = {"type": "assistant", "message": {"role": "assistant", "content": [{"type": "text", "text": "ok"}]}}


def write(path: Path, records: list[object]) -> Path:
    path.write_text("".join(json.dumps(record) + "\n" for record in records), encoding="utf-8")
    return path


def test_blocks_after_the_last_boundary_newest_first(tmp_path: Path) -> None:
    path = write(
        tmp_path / "t.jsonl",
        [
            context(f"{PREFIX} startup"),
            ANSWER,
            BOUNDARY,
            context(f"{PREFIX} compact 1"),
            ANSWER,
            BOUNDARY,
            context(f"{PREFIX} compact 2"),
            context("another plugin's context"),
            context(f"{PREFIX} as a prompt's context", "UserPromptSubmit"),
            {"type": "api-request-blob", "message": {"content": [{"text": f"{PREFIX} in a blob"}]}},
            context(f"{PREFIX} resume"),
        ],
    )
    assert blocks_in_thread(str(path), PREFIX) == [f"{PREFIX} resume", f"{PREFIX} compact 2"]


def test_a_block_no_answer_followed_before_the_boundary_is_still_in_the_thread(tmp_path: Path) -> None:
    """``--resume`` then ``/compact`` at once: Claude Code writes the unsent resume block just before the boundary
    and delivers it after the compaction; a block an answer followed before the boundary is gone."""
    path = write(
        tmp_path / "t.jsonl",
        [
            context(f"{PREFIX} startup"),
            ANSWER,
            context(f"{PREFIX} resume"),
            {"type": "user", "message": {"content": "the /compact command"}},
            BOUNDARY,
            {"type": "user", "isCompactSummary": True, "message": {"content": "summary"}},
            context(f"{PREFIX} compact"),
            ANSWER,
        ],
    )
    assert blocks_in_thread(str(path), PREFIX) == [f"{PREFIX} compact", f"{PREFIX} resume"]


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


# --- a fork's parent: named by Claude Code's own command line, never guessed


@pytest.mark.parametrize(
    ("argv", "session"),
    [
        (["claude", "-p", "--resume", "abc", "--fork-session", "two"], "abc"),
        (["claude", "--fork-session", "--resume=abc"], "abc"),
        (["claude", "-r", "abc", "--fork-session"], "abc"),
        (["claude", "--resume", "abc", "two"], None),  # a resume, not a fork
        (["claude", "--resume", "--fork-session"], None),  # the picker: no id on the command line
        (["claude", "--resume=", "--fork-session"], None),
        ([], None),
    ],
)
def test_resumed_session_is_the_id_a_fork_command_line_names(argv: list[str], session: str | None) -> None:
    assert thread.resumed_session(argv) == session


def test_parent_argv_reads_a_process_command_line_and_nothing_for_none() -> None:
    if os.path.exists(f"/proc/{os.getpid()}/cmdline"):  # Linux: a child's arguments (pytest's own may be retitled)
        script = "import sys; print(flush=True); sys.stdin.read()"
        child = subprocess.Popen(
            [sys.executable, "-c", script, "--marker"], stdin=subprocess.PIPE, stdout=subprocess.PIPE
        )
        try:
            assert child.stdout is not None
            child.stdout.readline()  # it runs its script: its command line is its own, not the forking parent's
            assert thread.parent_argv(child.pid)[1:4] == ["-c", script, "--marker"]
        finally:
            child.communicate(b"")
    assert thread.parent_argv(2**30) == []


def test_fork_parent_is_the_named_sibling_transcript_or_none(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fork = tmp_path / "fork.jsonl"
    (tmp_path / "parent.jsonl").write_text("")
    (tmp_path.parent / "outside.jsonl").write_text("")
    (tmp_path / "sub").mkdir()
    cases = [("parent", tmp_path / "parent.jsonl"), ("gone", None), ("fork", None), ("../outside", None)]
    for named, found in [*cases, ("sub/../../outside", None)]:
        monkeypatch.setattr(
            thread, "parent_argv", lambda pid, named=named: ["claude", "--resume", named, "--fork-session"]
        )
        assert thread.fork_parent(str(fork)) == (str(found) if found else None), named
