"""The error log: bounded (20 entries of at most 4,096 bytes, oldest dropped), never a second failure."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from session_workflow import __version__
from session_workflow.core import errorlog
from session_workflow.core.places import Places

REPO = Path(__file__).resolve().parents[2]


def env_for(tmp_path: Path) -> dict[str, str]:
    return {"HOME": str(tmp_path / "home"), "XDG_STATE_HOME": str(tmp_path / "state")}


def raised(message: str = "boom", depth: int = 0) -> BaseException:
    def dive(level: int) -> None:
        if level:
            dive(level - 1)
        raise ZeroDivisionError(message)

    try:
        dive(depth)
    except ZeroDivisionError as error:
        return error
    raise AssertionError("unreachable")


def logged(tmp_path: Path) -> list[dict[str, object]]:
    path = tmp_path / "state" / "session-workflow" / "errors.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_an_entry_has_the_time_where_version_and_traceback(tmp_path: Path) -> None:
    errorlog.record("SessionStart part tasks", raised("bad task"), Places(env_for(tmp_path)))
    (entry,) = logged(tmp_path)
    assert entry["where"] == "SessionStart part tasks" and entry["version"] == __version__
    assert entry["error"] == "ZeroDivisionError: bad task"
    assert str(entry["time"]).endswith("Z") and entry["python"] == sys.version.split()[0]
    trace = str(entry["traceback"])
    assert trace.startswith("Traceback (most recent call last):\n") and trace.endswith("ZeroDivisionError: bad task")
    assert f'File "{__file__}"' in trace and "in dive" in trace
    folder = tmp_path / "state" / "session-workflow"
    assert (folder.stat().st_mode & 0o777, (folder / "errors.jsonl").stat().st_mode & 0o777) == (0o700, 0o600)
    assert errorlog.entries(Places(env_for(tmp_path))) == [entry]


def test_the_log_keeps_the_newest_20_entries(tmp_path: Path) -> None:
    for number in range(21):
        errorlog.record(f"command {number}", raised(), Places(env_for(tmp_path)))
    kept = [entry["where"] for entry in logged(tmp_path)]
    assert kept == [f"command {number}" for number in range(1, 21)]
    assert not [name for name in os.listdir(tmp_path / "state" / "session-workflow") if name != "errors.jsonl"]


def test_an_entry_is_at_most_4096_bytes_and_keeps_the_innermost_frames(tmp_path: Path) -> None:
    errorlog.record("deep", raised("x" * 100_000, depth=200), Places(env_for(tmp_path)))
    line = (tmp_path / "state" / "session-workflow" / "errors.jsonl").read_bytes()
    assert 3000 < len(line) <= 4096
    trace = str(json.loads(line)["traceback"])
    assert "outer frames cut" in trace and trace.rstrip("x").endswith("ZeroDivisionError: ")
    assert trace.splitlines()[-2].endswith("in dive")


def test_a_log_that_is_not_ours_is_started_again(tmp_path: Path) -> None:
    path = tmp_path / "state" / "session-workflow" / "errors.jsonl"
    path.parent.mkdir(parents=True)
    path.write_bytes(b"not a log line\n" + b"{" * 50 + b"\n")
    errorlog.record("after", raised(), Places(env_for(tmp_path)))
    assert [entry["where"] for entry in logged(tmp_path)] == ["after"]


@pytest.mark.parametrize("kind", ["file", "fifo", "folder"])
def test_an_unwritable_state_folder_is_no_second_failure(tmp_path: Path, kind: str) -> None:
    """Run cold, as a hook's except path does: nothing raised, nothing printed, no hang (a generous guard)."""
    state = tmp_path / "state"
    log = state / "session-workflow" / "errors.jsonl"
    if kind == "file":
        state.write_text("a file where the state folder goes")
    elif kind == "fifo":
        log.parent.mkdir(parents=True)
        os.mkfifo(log)
    else:
        log.mkdir(parents=True)
    code = (
        "import sys; sys.path.insert(0, sys.argv[1]); from session_workflow.core.errorlog import record;"
        " record('SessionStart', ZeroDivisionError('x'), {'XDG_STATE_HOME': sys.argv[2]}); print('done')"
    )
    done = subprocess.run(
        [sys.executable, "-I", "-S", "-B", "-c", code, str(REPO / "src"), str(state)],
        capture_output=True,
        timeout=30,
        check=False,
    )
    assert (done.returncode, done.stdout, done.stderr) == (0, b"done\n", b"")


def test_no_home_no_log(tmp_path: Path) -> None:
    errorlog.record("x", raised(), Places({"HOME": "relative"}))
    assert Places({"HOME": "relative"}).error_log is None and errorlog.entries(Places({})) == []
