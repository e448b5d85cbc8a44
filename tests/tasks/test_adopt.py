"""``tasks adopt``: a recovered list becomes this session's, under Claude Code's lock, never over its own tasks."""

from __future__ import annotations

import json
import os
import threading
import time
from pathlib import Path

import pytest

from session_workflow.tasks.adopt import AdoptError, adopt, list_lock, report
from session_workflow.tasks.store import read_store
from tests.tasks.test_store import write_task


def ids(folder: Path) -> list[str]:
    return sorted(name for name in os.listdir(folder) if name.endswith(".json"))


def test_open_tasks_are_copied_and_the_high_water_mark_follows(tmp_path: Path) -> None:
    write_task(tmp_path / "prev", 1, "completed", "Done before")
    write_task(tmp_path / "prev", 2, "in_progress", "Carry on", blocked_by=["1", "3"])
    write_task(tmp_path / "prev", 3, "pending", "Then this")
    result = adopt(str(tmp_path), "prev", "mine")
    own = tmp_path / "mine"
    assert result.adopted == [2, 3] and result.kept == [] and ids(own) == ["2.json", "3.json"]
    carried = json.loads((own / "2.json").read_text(encoding="utf-8"))
    assert carried["subject"] == "Carry on" and carried["status"] == "in_progress"
    assert carried["blockedBy"] == ["3"]  # the completed #1 was not adopted, so it cannot be referenced here
    assert (own / ".highwatermark").read_text() == "3"
    assert (own / ".lock").is_file() and not (own / ".lock.lock").exists()
    store = read_store(str(own), [2, 3], 200)
    assert sorted(task.id for task in store.open_tasks) == [2, 3] and store.bad == []
    assert ids(tmp_path / "prev") == ["1.json", "2.json", "3.json"]  # the predecessor's list is untouched
    assert report(result, "prev")[0] == f"adopted 2 open task(s) from prev into {own}: #2, #3"


def test_a_task_this_session_has_is_never_overwritten(tmp_path: Path) -> None:
    write_task(tmp_path / "prev", 1, "pending", "Theirs one")
    write_task(tmp_path / "prev", 2, "pending", "Theirs two", blocked_by=["1"])
    mine = write_task(tmp_path / "mine", 1, "in_progress", "Mine")
    (tmp_path / "mine" / ".highwatermark").write_text("7")
    result = adopt(str(tmp_path), "prev", "mine")
    assert result.adopted == [2] and result.kept == [1]
    assert json.loads(mine.read_text())["subject"] == "Mine"
    # #1 here is another task: the adopted #2 must not claim to be blocked by it
    assert json.loads((tmp_path / "mine" / "2.json").read_text())["blockedBy"] == []
    assert (tmp_path / "mine" / ".highwatermark").read_text() == "7"  # never lowered
    assert report(result, "prev")[-1].startswith("not adopted: #1 (this session already has a task with that id")


def test_nothing_to_adopt_is_an_error_and_writes_nothing(tmp_path: Path) -> None:
    write_task(tmp_path / "prev", 1, "completed")
    with pytest.raises(AdoptError, match="no open task"):
        adopt(str(tmp_path), "prev", "mine")
    with pytest.raises(AdoptError, match="no task list"):
        adopt(str(tmp_path), "gone", "mine")
    with pytest.raises(AdoptError, match="own task list"):
        adopt(str(tmp_path), "prev", "prev")
    with pytest.raises(AdoptError, match="not a task list id"):
        adopt(str(tmp_path), "../prev", "mine")
    assert not (tmp_path / "mine").exists()


def test_symlinks_are_refused(tmp_path: Path) -> None:
    write_task(tmp_path / "real", 1)
    (tmp_path / "linked").symlink_to(tmp_path / "real")
    with pytest.raises(AdoptError, match="not a plain directory"):
        adopt(str(tmp_path), "linked", "mine")
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / ".lock").symlink_to(tmp_path / "elsewhere")
    with pytest.raises(AdoptError, match="refusing to lock through it"):
        adopt(str(tmp_path), "real", "mine")
    assert not (tmp_path / "elsewhere").exists()
    outside = write_task(tmp_path / "outside", 5, "pending", "Not in the list")
    (tmp_path / "real" / "5.json").symlink_to(outside)
    (tmp_path / "mine" / ".lock").unlink()
    assert adopt(str(tmp_path), "real", "mine").adopted == [1]  # the symlinked task file is not followed


def test_a_held_lock_is_waited_for(tmp_path: Path) -> None:
    write_task(tmp_path / "prev", 1)
    (tmp_path / "mine").mkdir()
    lock = tmp_path / "mine" / ".lock.lock"
    with list_lock(str(tmp_path / "mine")):
        assert lock.is_dir()
        done: list[object] = []
        worker = threading.Thread(target=lambda: done.append(adopt(str(tmp_path), "prev", "mine")))
        worker.start()
        time.sleep(0.2)
        assert not done and not (tmp_path / "mine" / "1.json").exists()
    worker.join(30)
    assert done and (tmp_path / "mine" / "1.json").exists() and not lock.exists()


def test_a_stale_lock_is_taken_over_and_a_live_one_times_out(tmp_path: Path) -> None:
    folder = tmp_path / "mine"
    folder.mkdir()
    (folder / ".lock").write_text("")
    (folder / ".lock.lock").mkdir()
    with pytest.raises(AdoptError, match="holds the task list lock"), list_lock(str(folder), wait=0.1):
        pass
    old = time.time() - 11  # older than proper-lockfile's 10 s stale limit
    os.utime(folder / ".lock.lock", (old, old))
    with list_lock(str(folder), wait=0.1):
        assert (folder / ".lock.lock").is_dir()
    assert not (folder / ".lock.lock").exists()
