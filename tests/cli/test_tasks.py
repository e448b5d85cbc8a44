"""``session-workflow tasks adopt``: this session's list from the environment, one-line errors, what it adopted."""

from __future__ import annotations

from pathlib import Path

import pytest

from session_workflow.cli.main import main
from tests.tasks.test_store import write_task


@pytest.fixture(autouse=True)
def store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path))
    monkeypatch.setenv("CLAUDE_CODE_SESSION_ID", "mine")
    monkeypatch.delenv("CLAUDE_CODE_TASK_LIST_ID", raising=False)
    write_task(tmp_path / "tasks" / "prev", 4, "pending", "Carry on")
    return tmp_path / "tasks"


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(["tasks", "adopt", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_adopt_into_the_session_of_the_bash_tool(store: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _err = run(capsys, "prev")
    assert code == 0 and out.startswith(f"adopted 1 open task(s) from prev into {store / 'mine'}: #4\n")
    assert (store / "mine" / "4.json").is_file()
    code, out, _err = run(capsys, "prev")
    assert code == 0  # nothing new: said, not failed
    assert out.startswith("nothing adopted from prev: this session already has #4 (never overwritten)")


def test_the_task_list_id_names_the_target(
    store: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CLAUDE_CODE_TASK_LIST_ID", "shared")
    assert run(capsys, "prev", "--session", "ignored")[0] == 0
    assert (store / "shared" / "4.json").is_file() and not (store / "ignored").exists()


def test_errors_are_one_line(store: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    code, out, err = run(capsys, "gone")
    assert (code, out) == (1, "") and err == f"session-workflow: no task list {store / 'gone'}\n"
    monkeypatch.delenv("CLAUDE_CODE_SESSION_ID")
    code, _out, err = run(capsys, "prev")
    assert code == 2 and err.count("\n") == 1 and "no session" in err
