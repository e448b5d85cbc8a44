"""Delivery records: a held key is never rewritten, and the folder is pruned at most once a day, boundedly."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from session_workflow.workstate.records import DeliveryRecord

SESSION = "0b9f7c1e-2f4a-4c55-9d57-3b1c2a7e9f10"
DAY = 86_400


@pytest.fixture
def now() -> float:
    """Records are written with the real clock, so the hooks' "now" is the real one too (whole seconds), read when
    the test starts: never at import, which on a loaded machine may be minutes before."""
    return float(int(time.time()))


def record_at(data: Path, now: float, session: str = SESSION) -> DeliveryRecord:
    return DeliveryRecord(str(data / "work-state-delivered"), f"{session}.key", now)


def aged(path: Path, days: float, now: float) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    if not path.exists():
        path.write_text("k")
    os.utime(path, (now - days * DAY, now - days * DAY))
    return path


def test_a_record_that_holds_the_key_is_not_rewritten(tmp_path: Path, now: float) -> None:
    record_at(tmp_path, now).store("key-1")
    path = Path(record_at(tmp_path, now).path)
    before = path.stat()
    record_at(tmp_path, now + 3600).store("key-1")
    after = path.stat()
    assert (after.st_ino, after.st_mtime) == (before.st_ino, before.st_mtime)
    record_at(tmp_path, now + 3600).store("key-2")
    assert path.stat().st_ino != before.st_ino and path.read_text() == "key-2"


def test_a_held_record_older_than_a_day_is_touched_so_pruning_keeps_it(tmp_path: Path, now: float) -> None:
    record_at(tmp_path, now).store("key-1")
    path = Path(record_at(tmp_path, now).path)
    inode = path.stat().st_ino
    record_at(tmp_path, now + 2 * DAY).store("key-1")
    assert (path.stat().st_ino, path.stat().st_mtime) == (inode, now + 2 * DAY)


def test_the_folder_is_pruned_at_most_once_a_day(tmp_path: Path, now: float) -> None:
    folder = tmp_path / "work-state-delivered"
    record_at(tmp_path, now, "first").store("k")
    assert (folder / ".pruned").stat().st_mtime == now
    old = aged(folder / "old.key", 31, now)
    record_at(tmp_path, now + DAY - 60, "second").store("k")
    assert old.exists(), "pruned again within the day"
    record_at(tmp_path, now + DAY + 60, "third").store("k")
    assert not old.exists()
    assert (folder / ".pruned").stat().st_mtime == now + DAY + 60
    assert sorted(p.name for p in folder.iterdir()) == [".pruned", "first.key", "second.key", "third.key"]


def test_a_stamp_from_the_future_does_not_stop_pruning(tmp_path: Path, now: float) -> None:
    folder = tmp_path / "work-state-delivered"
    aged(folder / ".pruned", -10, now)
    old = aged(folder / "old.key", 31, now)
    record_at(tmp_path, now).store("k")
    assert not old.exists()


def test_a_symlinked_stamp_is_not_followed_and_nothing_is_pruned(tmp_path: Path, now: float) -> None:
    folder = tmp_path / "work-state-delivered"
    outside = aged(tmp_path / "outside.txt", 5, now)
    folder.mkdir()
    (folder / ".pruned").symlink_to(outside)
    old = aged(folder / "old.key", 31, now)
    record_at(tmp_path, now).store("k")
    assert outside.stat().st_mtime == now - 5 * DAY
    assert old.exists()


def test_one_prune_looks_at_no_more_than_4096_entries(tmp_path: Path, now: float) -> None:
    folder = tmp_path / "work-state-delivered"
    for n in range(5000):
        aged(folder / f"s{n}.key", 40, now)
    record_at(tmp_path, now).store("k")
    left = len([name for name in os.listdir(folder) if name.startswith("s")])
    assert 5000 - 4096 <= left < 5000
