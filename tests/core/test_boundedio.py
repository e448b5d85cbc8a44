"""Bounded reads refuse what is not a regular file and never read past their budget."""

from __future__ import annotations

import os
import socket
import tempfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from session_workflow.core.boundedio import (
    iter_lines_from_start,
    iter_marked_from_end,
    iter_marked_lines_from_end,
    read_prefix,
    read_prefix_and_stat,
    read_text_prefix,
)


def test_read_prefix_is_bounded_and_reports_size(tmp_path: Path) -> None:
    path = tmp_path / "a.md"
    path.write_bytes(b"x" * 1000)
    assert read_prefix(str(path), 10) == (b"x" * 10, 1000)


@pytest.mark.parametrize("target", ["/dev/zero", "/dev/urandom"])
def test_devices_behind_symlinks_are_refused(tmp_path: Path, target: str) -> None:
    link = tmp_path / "dev.md"
    link.symlink_to(target)
    assert read_prefix(str(link), 10) is None
    assert list(iter_lines_from_start(str(link), 10)) == []
    assert list(iter_marked_lines_from_end(str(link), 10, [b"x"])) == []


def test_fifo_does_not_block(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe.md"
    os.mkfifo(fifo)
    assert read_prefix(str(fifo), 10) is None


def test_socket_directory_loop_and_missing_are_refused(golden_dir: Path) -> None:
    tmp_path = golden_dir  # a unix socket's path is bounded (108 bytes on Linux): not under a long --basetemp
    sock_path = tmp_path / "s.md"
    sock = socket.socket(socket.AF_UNIX)
    sock.bind(str(sock_path))
    loop = tmp_path / "loop.md"
    loop.symlink_to(loop)
    (tmp_path / "dir.md").mkdir()
    try:
        for path in (sock_path, loop, tmp_path / "dir.md", tmp_path / "missing.md"):
            assert read_prefix(str(path), 10) is None
    finally:
        sock.close()


def test_text_prefix_drops_bom_and_partial_character(tmp_path: Path) -> None:
    path = tmp_path / "a.md"
    path.write_bytes(b"\xef\xbb\xbfab\xc3\xa9\xc3\xa9")
    assert read_text_prefix(str(path), 100) == ("abéé", False)
    assert read_text_prefix(str(path), 8) == ("abé", True)
    path.write_bytes(b"ok\xff\xfe")
    assert read_text_prefix(str(path), 100) == ("ok\ufffd\ufffd", False)


def test_lines_from_start_stop_at_budget(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    path.write_bytes(b"one\ntwo\nthree\n" + b"z" * 1000)
    assert list(iter_lines_from_start(str(path), 8)) == [b"one", b"two"]
    assert list(iter_lines_from_start(str(path), 1 << 20))[:3] == [b"one", b"two", b"three"]


def test_lines_from_end_read_only_the_tail(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    lines = [f"line {i}".encode() for i in range(1000)]
    path.write_bytes(b"\n".join(lines) + b"\n")
    assert list(iter_marked_lines_from_end(str(path), 1 << 20, [b"line"], chunk_size=7)) == list(reversed(lines))
    tail = list(iter_marked_lines_from_end(str(path), 30, [b"line"], chunk_size=7))
    assert tail == [b"line 999", b"line 998", b"line 997"]


def test_prefix_and_stat_is_bounded_and_stats_the_file_read(tmp_path: Path) -> None:
    path = tmp_path / "1.json"
    path.write_bytes(b"y" * 100)
    os.utime(path, (1_000_000, 1_234_567))
    read = read_prefix_and_stat(str(path), 10)
    assert read is not None
    assert read[0] == b"y" * 10
    assert (read[1].st_size, read[1].st_mtime) == (100, 1_234_567)
    assert read_prefix_and_stat(str(tmp_path), 10) is None
    assert read_prefix_and_stat(str(tmp_path / "missing"), 10) is None


def record_reads(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Spy on ``os.read``, ``os.readv`` (a backward pass reads each chunk into one buffer) and ``os.pread`` (a line
    longer than a chunk, read again whole): the returned list collects the size of every read made from now on."""
    sizes: list[int] = []
    real_read, real_readv, real_pread = os.read, os.readv, os.pread

    def read(fd: int, count: int) -> bytes:
        data = real_read(fd, count)
        sizes.append(len(data))
        return data

    def readv(fd: int, buffers: list[memoryview]) -> int:
        count = real_readv(fd, buffers)
        sizes.append(count)
        return count

    def pread(fd: int, count: int, offset: int) -> bytes:
        data = real_pread(fd, count, offset)
        sizes.append(len(data))
        return data

    monkeypatch.setattr(os, "read", read)
    monkeypatch.setattr(os, "readv", readv)
    monkeypatch.setattr(os, "pread", pread)
    return sizes


def lines_from_end(path: str, budget: int) -> list[bytes]:
    """The reference: the complete non-empty lines within the last ``budget`` bytes, last first.

    A line cut by the budget at its start is not one of them.
    """
    with open(path, "rb") as handle:
        data = handle.read()
    lines = data[max(0, len(data) - budget) :].split(b"\n")
    return [line for line in reversed(lines[1:] if len(data) > budget else lines) if line]


# Lines made of a few pieces that often cut a marker in two, so chunk edges land inside lines and markers.
line_pieces = st.sampled_from([b"ab", b"MARK", b"MA", b"RK", b"zz", b"\xff", b"x" * 9, b"OTHER", b"\r"])
lines_strategy = st.lists(st.lists(line_pieces, max_size=6).map(b"".join), max_size=25)


@settings(max_examples=300, deadline=None)
@given(
    lines=lines_strategy,
    trailing_newline=st.booleans(),
    markers=st.sets(st.sampled_from([b"MARK", b"RK", b"OTHER", b"\xff", b"abab"]), min_size=1).map(sorted),
    budget=st.integers(0, 400),
    chunk_size=st.integers(1, 40),
)
def test_marked_lines_are_exactly_the_filtered_lines(
    lines: list[bytes], trailing_newline: bool, markers: list[bytes], budget: int, chunk_size: int
) -> None:
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "t.jsonl")
        with open(path, "wb") as handle:
            handle.write(b"\n".join(lines) + (b"\n" if trailing_newline else b""))
        expected = [line for line in lines_from_end(path, budget) if any(marker in line for marker in markers)]
        assert list(iter_marked_lines_from_end(path, budget, list(markers), chunk_size=chunk_size)) == expected


@settings(max_examples=300, deadline=None)
@given(
    lines=lines_strategy,
    markers=st.sets(st.sampled_from([b"MARK", b"RK", b"OTHER", b"\xff", b"abab"]), min_size=1).map(sorted),
    budget=st.integers(0, 400),
    chunk_size=st.integers(1, 40),
    cut=st.integers(0, 25),
)
def test_each_marked_line_comes_with_its_offset_and_the_markers_it_holds(
    lines: list[bytes], markers: list[bytes], budget: int, chunk_size: int, cut: int
) -> None:
    """Before ``end`` (a line's start) as before the file's end, lines longer than a chunk included."""
    data = b"".join(line + b"\n" for line in lines)
    end = len(b"".join(line + b"\n" for line in lines[:cut]))
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "t.jsonl")
        with open(path, "wb") as handle:
            handle.write(data)
        expected = [line for line in lines_from_end(path, budget) if any(marker in line for marker in markers)]
        found = list(iter_marked_from_end(path, budget, list(markers), chunk_size=chunk_size))
        assert [line for line, _at, _held in found] == expected
        for line, at, held in found:
            assert data[at : at + len(line)] == line and (at == 0 or data[at - 1 : at] == b"\n")
            assert sorted(held) == [marker for marker in markers if marker in line]
        with open(path, "wb") as handle:
            handle.write(data[:end])
        before = [line for line in lines_from_end(path, budget) if any(marker in line for marker in markers)]
        with open(path, "wb") as handle:
            handle.write(data)
        found = list(iter_marked_from_end(path, budget, list(markers), chunk_size=chunk_size, end=end))
        assert [line for line, _at, _held in found] == before


MARKER_POOL = [b"MARK", b"RK", b"OTHER", b"\xff", b"abab", b"zz"]


@settings(max_examples=300, deadline=None)
@given(
    lines=lines_strategy,
    start=st.sets(st.sampled_from(MARKER_POOL), min_size=1).map(sorted),
    changes=st.lists(st.tuples(st.booleans(), st.sampled_from(MARKER_POOL)), max_size=30),
    chunk_size=st.one_of(st.integers(1, 40), st.just(1 << 16)),  # one chunk: a change lands within what it holds
)
def test_markers_changed_during_the_pass_are_looked_for_from_there_back(
    lines: list[bytes], start: list[bytes], changes: list[tuple[bool, bytes]], chunk_size: int
) -> None:
    """After each line the caller adds or removes a marker: each next line is the one before it holding one of the
    markers as they are then (a marker dropped and added again, or found no more and added again, included)."""
    data = b"".join(line + b"\n" for line in lines)
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "t.jsonl")
        with open(path, "wb") as handle:
            handle.write(data)
        markers = list(start)
        expected_markers = list(start)
        pending = [line for line in reversed(lines) if line]
        for step, (line, _at, held) in enumerate(iter_marked_from_end(path, 1 << 20, markers, chunk_size=chunk_size)):
            while pending and not any(marker in pending[0] for marker in expected_markers):
                pending.pop(0)
            assert pending and line == pending.pop(0)
            assert sorted(held) == sorted(marker for marker in expected_markers if marker in line)
            if step < len(changes):
                add, marker = changes[step]
                if add and marker not in markers:
                    markers.append(marker)
                elif not add and marker in markers:
                    markers.remove(marker)
                expected_markers = list(markers)
        assert not markers or not any(any(marker in rest for marker in markers) for rest in pending)


def test_a_marker_added_during_the_pass_is_looked_for_from_there_back(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    path.write_bytes(b"old NEW\nold MARK\n" + b"filler\n" * 2000 + b"new NEW\nnew MARK\n")
    markers = [b"MARK"]
    seen = []
    for line, _at, held in iter_marked_from_end(str(path), 1 << 20, markers, chunk_size=4096):
        seen.append((line, held))
        if b"NEW" not in markers:
            markers.append(b"NEW")
    assert seen == [
        (b"new MARK", (b"MARK",)),
        (b"new NEW", (b"NEW",)),
        (b"old MARK", (b"MARK",)),
        (b"old NEW", (b"NEW",)),
    ]


def test_only_a_marked_line_longer_than_a_chunk_is_read_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The tail is read once, chunk by chunk, into one buffer; a line it cannot hold whole is read again only when
    it holds a marker."""
    path = tmp_path / "t.jsonl"
    path.write_bytes(b"a" * 10_000 + b" MARK\n" + b"b" * 10_000 + b"\n" + b"tail MARK\n")
    read_bytes = record_reads(monkeypatch)
    found = list(iter_marked_lines_from_end(str(path), 1 << 20, [b"MARK"], chunk_size=4096))
    assert found == [b"tail MARK", b"a" * 10_000 + b" MARK"]
    assert sum(read_bytes) == path.stat().st_size + 10_005


def test_marked_lines_read_only_the_tail_and_stop_when_no_marker_is_left(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "t.jsonl"
    body = b"".join(b"filler %d " % n + b"f" * 200 + b"\n" for n in range(5000))
    path.write_bytes(b"old MARK\n" + body + b"new MARK and LAST\n" + b"tail\n")
    read_bytes = record_reads(monkeypatch)
    assert list(iter_marked_lines_from_end(str(path), 64 * 1024, [b"MARK"], chunk_size=4096)) == [b"new MARK and LAST"]
    assert sum(read_bytes) == 64 * 1024
    read_bytes.clear()
    markers = [b"MARK", b"LAST"]
    for line in iter_marked_lines_from_end(str(path), 1 << 30, markers, chunk_size=4096):
        assert line == b"new MARK and LAST"
        markers.clear()
    assert sum(read_bytes) == 4096


def test_marked_lines_refuse_what_is_not_a_regular_file(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe.jsonl"
    os.mkfifo(fifo)
    link = tmp_path / "zero.jsonl"
    link.symlink_to("/dev/zero")
    for path in (fifo, link, tmp_path, tmp_path / "missing.jsonl"):
        assert list(iter_marked_lines_from_end(str(path), 1 << 20, [b"x"])) == []


def test_read_prefix_as_reads_only_the_identity_that_was_checked(tmp_path: Path) -> None:
    """The bytes of a file replaced since its ``stat`` (a rename over it, an edit) are never returned."""
    from session_workflow.core.boundedio import read_prefix_as

    path = tmp_path / "a.md"
    path.write_bytes(b"checked bytes\n")
    info = os.stat(path)
    identity = (info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns)
    assert read_prefix_as(str(path), 7, identity) == (b"checked", True)
    assert read_prefix_as(str(path), 100, identity) == (b"checked bytes\n", False)
    (tmp_path / "b.md").write_bytes(b"other bytes!!\n")
    os.utime(tmp_path / "b.md", ns=(info.st_atime_ns, info.st_mtime_ns))  # same size and mtime, another inode
    os.replace(tmp_path / "b.md", path)
    assert read_prefix_as(str(path), 100, identity) is None
    assert read_prefix_as(str(path), 100, None) == (b"other bytes!!\n", False)
