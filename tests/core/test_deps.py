"""``core.deps.add_installed``: a hook finds the writers' first-use install, and only a complete one."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from session_workflow.core.deps import DEPS_FOLDER, PIN_KEY, PINS, add_installed


def fake_install(data: Path, pins: tuple[tuple[str, str, str], ...] = PINS) -> Path:
    folder = data / DEPS_FOLDER / PIN_KEY
    for name, version, _digest in pins:
        (folder / f"{name}-{version}.dist-info").mkdir(parents=True)
        (folder / f"{name}-{version}.dist-info" / "RECORD").write_text("")
    return folder


def test_a_complete_install_goes_on_the_path_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "path", list(sys.path))
    folder = fake_install(tmp_path)
    assert add_installed({"CLAUDE_PLUGIN_DATA": str(tmp_path)}) is True
    assert add_installed({"CLAUDE_PLUGIN_DATA": str(tmp_path)}) is True
    assert sys.path.count(str(folder)) == 1 and sys.path[-1] == str(folder)


@pytest.mark.parametrize("data", [None, "", "relative/data", "/abs\x00/data"])
def test_no_plugin_data_no_path(data: str | None, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "path", list(sys.path))
    before = list(sys.path)
    assert add_installed({} if data is None else {"CLAUDE_PLUGIN_DATA": data}) is False
    assert sys.path == before


def test_an_unfinished_install_is_not_used(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """pip killed half-way: one pin's records are missing, so nothing of it is imported."""
    monkeypatch.setattr(sys, "path", list(sys.path))
    folder = fake_install(tmp_path, PINS[:1])
    assert add_installed({"CLAUDE_PLUGIN_DATA": str(tmp_path)}) is False
    assert str(folder) not in sys.path
