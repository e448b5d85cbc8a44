"""One backward pass over the transcript's tail serves the run record and the prompt recovery."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from session_workflow.transcript import record, recovery
from session_workflow.transcript.tail import read_back
from tests.transcript.test_record import Calls, context
from tests.transcript.test_recovery import prompt


class Taker:
    """A reader that wants lines holding ``markers`` and stops after ``limit`` of them."""

    def __init__(self, markers: list[bytes], limit: int) -> None:
        self.markers = list(markers)
        self.limit = limit
        self.lines: list[bytes] = []

    def take(self, line: bytes, at: int, held: tuple[bytes, ...]) -> bool:
        assert any(marker in self.markers for marker in held)
        self.lines.append(line)
        if len(self.lines) == self.limit:
            self.markers.clear()
            return True
        return False


def test_each_reader_gets_exactly_the_lines_holding_its_markers_until_it_stops(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    lines = [b"A %d" % n if n % 3 else b"A B %d" % n for n in range(30)] + [b"B only %d" % n for n in range(5)]
    path.write_bytes(b"\n".join(lines) + b"\n")
    first, second = Taker([b"A"], 4), Taker([b"B"], 100)
    read_back(str(path), [first, second])
    assert first.lines == [line for line in reversed(lines) if b"A" in line][:4]
    assert second.lines == [line for line in reversed(lines) if b"B" in line]


def compaction(tmp_path: Path) -> Path:
    """A session that wrote its anchor after its last compaction, then worked; its prompts come earlier."""
    calls = Calls()
    calls.records.append(prompt("the first prompt"))
    calls.boundary()
    calls.records.append(prompt("the second prompt"))
    calls.step()
    calls.bash("make after the step")
    return calls.save(tmp_path / "t.jsonl")


def test_a_compaction_reads_the_tail_once_for_the_record_and_the_recovery(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = compaction(tmp_path)
    alone = (record.scan(str(path), "compact"), recovery.scan_transcript(str(path)))
    opened: list[str] = []
    real_open = os.open

    def spy(name: str, flags: int, mode: int = 0o777) -> int:
        opened.append(name)
        return real_open(name, flags, mode)

    ctx = context(path)
    ctx.project_dir()  # read from the transcript's head, once, before any part
    monkeypatch.setattr(os, "open", spy)
    part = record.prepare(ctx)
    recovered = recovery.prepare(ctx)
    assert opened.count(str(path)) == 2  # the pass, and the look's fingerprint (``record._mark``: 64 bytes)
    assert part is not None and "make after the step" in part.render(1 << 20)
    assert recovered is not None and recovered.prompts == alone[1][0] == ["the first prompt", "the second prompt"]
    assert [line for _rank, line in alone[0].actions] == [line for _rank, line, _times, _when in part.lines]


def test_a_transcript_changed_since_the_record_read_it_is_read_again_for_the_recovery(tmp_path: Path) -> None:
    path = compaction(tmp_path)
    ctx = context(path)
    assert record.prepare(ctx) is not None
    with open(path, "ab") as handle:
        handle.write(b"\n".join(recovery_line(text) for text in ("later one", "later two")) + b"\n")
    recovered = recovery.prepare(ctx)
    assert recovered is not None and recovered.prompts == ["the second prompt", "later one", "later two"]


def recovery_line(text: str) -> bytes:
    return json.dumps(prompt(text), separators=(",", ":")).encode()


def test_the_record_alone_reads_nothing_for_the_recovery_on_resume(tmp_path: Path) -> None:
    path = compaction(tmp_path)
    assert record.prepare(context(path, "resume")) is not None
    assert recovery.along(context(path, "resume")) is None
