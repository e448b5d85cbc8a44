"""The one atomic writer: replace, create-only, kept modes, debris cleaned, lock freed by a dead writer."""

from __future__ import annotations

import os
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

from session_workflow.core import atomic

SRC = str(Path(__file__).resolve().parents[2] / "src")


def test_update_file_reads_current_and_replaces(tmp_path: Path) -> None:
    path = tmp_path / "f.txt"
    assert atomic.update_file(str(path), lambda cur: b"1" if cur is None else cur + b"!") == b"1"
    assert atomic.update_file(str(path), lambda cur: (cur or b"") + b"2") == b"12"
    assert atomic.update_file(str(path), lambda cur: None) is None
    assert path.read_bytes() == b"12"
    assert sorted(p.name for p in tmp_path.iterdir()) == [".f.txt.lock", "f.txt"]


def test_replace_keeps_the_file_mode(tmp_path: Path) -> None:
    path = tmp_path / "f.txt"
    path.write_bytes(b"a")
    path.chmod(0o600)
    atomic.update_file(str(path), lambda _current: b"b")
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert path.read_bytes() == b"b"


def test_create_new_never_overwrites(tmp_path: Path) -> None:
    path = tmp_path / "a.md"
    assert atomic.create_new(str(path), b"first")
    assert not atomic.create_new(str(path), b"second")
    assert path.read_bytes() == b"first"
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]


def test_a_killed_writers_temp_file_is_replaced_by_the_next_writer(tmp_path: Path) -> None:
    path = tmp_path / "f.txt"
    (tmp_path / ".f.txt.tmp").write_bytes(b"half")
    (tmp_path / ".other.txt.tmp").write_bytes(b"not ours")
    atomic.update_file(str(path), lambda _current: b"ok")
    assert sorted(p.name for p in tmp_path.iterdir()) == [".f.txt.lock", ".other.txt.tmp", "f.txt"]
    assert path.read_bytes() == b"ok"


def test_a_link_planted_as_the_temp_file_is_removed_not_followed(tmp_path: Path) -> None:
    outside = tmp_path / "outside.txt"
    outside.write_bytes(b"precious")
    folder = tmp_path / "project"
    folder.mkdir()
    (folder / ".f.txt.tmp").symlink_to(outside)
    atomic.update_file(str(folder / "f.txt"), lambda _current: b"ok")
    assert outside.read_bytes() == b"precious" and stat.S_IMODE(outside.stat().st_mode) != 0o600
    assert sorted(p.name for p in folder.iterdir()) == [".f.txt.lock", "f.txt"]


def test_a_directory_in_the_way_of_the_temp_file_is_named(tmp_path: Path) -> None:
    (tmp_path / ".f.txt.tmp").mkdir()
    with pytest.raises(atomic.WriteError, match=r"\.f\.txt\.tmp is in the way of the write and cannot be removed"):
        atomic.update_file(str(tmp_path / "f.txt"), lambda _current: b"x")
    assert not (tmp_path / "f.txt").exists()


def test_link_new_under_a_foreign_lock_never_touches_the_paths_temp_file(tmp_path: Path) -> None:
    other = tmp_path / ".3.json.tmp"
    other.write_bytes(b"another writer's, mid-write")
    assert atomic.link_new(str(tmp_path / "3.json"), b"{}")
    assert other.read_bytes() == b"another writer's, mid-write" and (tmp_path / "3.json").read_bytes() == b"{}"
    assert sorted(p.name for p in tmp_path.iterdir()) == [".3.json.tmp", "3.json"]


def test_no_writer_lists_the_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*_args: object) -> None:
        raise AssertionError("listed")

    monkeypatch.setattr(os, "listdir", refuse)
    monkeypatch.setattr(os, "scandir", refuse)
    atomic.update_file(str(tmp_path / "f.txt"), lambda _current: b"1")
    assert atomic.create_new(str(tmp_path / "g.txt"), b"2")
    assert (tmp_path / "f.txt").read_bytes() == b"1" and (tmp_path / "g.txt").read_bytes() == b"2"


def test_transform_error_leaves_file_untouched(tmp_path: Path) -> None:
    path = tmp_path / "f.txt"
    path.write_bytes(b"keep")

    def boom(_current: bytes | None) -> bytes:
        raise ValueError("no")

    with pytest.raises(ValueError):
        atomic.update_file(str(path), boom)
    assert path.read_bytes() == b"keep"


def test_refuses_to_rewrite_a_non_regular_file(tmp_path: Path) -> None:
    fifo = tmp_path / "f.txt"
    os.mkfifo(fifo)
    with pytest.raises(atomic.WriteError):
        atomic.update_file(str(fifo), lambda cur: b"x")


def test_lock_held_by_a_killed_writer_does_not_block(tmp_path: Path) -> None:
    path = tmp_path / "f.txt"
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys, time; sys.path.insert(0, sys.argv[1]); from session_workflow.core import atomic\n"
            "with atomic.locked(sys.argv[2]):\n    print('held', flush=True); time.sleep(60)",
            SRC,
            str(path),
        ],
        stdout=subprocess.PIPE,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline() == b"held\n"
        os.kill(holder.pid, signal.SIGKILL)
        holder.wait()
        started = time.monotonic()
        atomic.update_file(str(path), lambda _current: b"after")
        assert time.monotonic() - started < 5
    finally:
        holder.kill()
        holder.wait()
    assert path.read_bytes() == b"after"


def test_the_lock_contends_with_filelock_both_ways(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A writer of another version (filelock's FileLock on the same lock file) and this one exclude each other."""
    from filelock import FileLock, Timeout

    path = str(tmp_path / "state.json")
    monkeypatch.setattr(atomic, "LOCK_TIMEOUT_SECONDS", 0.05)
    os.close(os.open(atomic.lock_path(path), os.O_CREAT | os.O_WRONLY, 0o644))
    with FileLock(atomic.lock_path(path)), pytest.raises(atomic.WriteError, match="another writer holds"):  # noqa: SIM117
        with atomic.locked(path):
            raise AssertionError("the lock was taken while filelock held it")
    with atomic.locked(path), pytest.raises(Timeout):
        FileLock(atomic.lock_path(path), timeout=0.05).acquire()
    with atomic.locked(path):  # released: taken again
        pass


def test_the_lock_imports_no_lock_library(tmp_path: Path) -> None:
    """A writer pays for the lock it takes (flock), not for filelock's package (about 3 J of start-up)."""
    code = (
        "import sys; from session_workflow.core import atomic;"
        f"atomic.update_file({str(tmp_path / 'x')!r}, lambda old: b'new');"
        "print(sorted(name for name in sys.modules if name.split('.')[0] in ('filelock', 'logging', 'typing')))"
    )
    src = str(Path(atomic.__file__).parents[2])
    done = subprocess.run(
        [sys.executable, "-I", "-S", "-B", "-c", f"import sys; sys.path.insert(0, {src!r}); {code}"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert done.stdout == "[]\n"
    assert (tmp_path / "x").read_bytes() == b"new"
