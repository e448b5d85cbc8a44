"""Bounded reads refuse what is not a regular file and never read past their budget."""

from __future__ import annotations

import os
import socket
from pathlib import Path

import pytest

from session_workflow.boundedio import (
    iter_lines_from_end,
    iter_lines_from_start,
    read_prefix,
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
    assert list(iter_lines_from_end(str(link), 10)) == []


def test_fifo_does_not_block(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe.md"
    os.mkfifo(fifo)
    assert read_prefix(str(fifo), 10) is None


def test_socket_directory_loop_and_missing_are_refused(tmp_path: Path) -> None:
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
    assert list(iter_lines_from_end(str(path), 1 << 20, chunk_size=7)) == list(reversed(lines))
    tail = list(iter_lines_from_end(str(path), 30, chunk_size=7))
    assert tail == [b"line 999", b"line 998", b"line 997"]
