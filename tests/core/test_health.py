"""The domain-free checks of ``session-workflow doctor``: versions, the trust-folder probe, settings files."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from session_workflow.core import health


@pytest.mark.parametrize(
    ("text", "version"),
    [("3.11.4\n", (3, 11, 4)), ("3.9", (3, 9)), ("3.x.1", None), ("", None), ("3", None), ("١.٢.٣", None)],
)
def test_a_version_is_two_or_three_ascii_numbers(text: str, version: tuple[int, ...] | None) -> None:
    assert health.parse_version(text) == version


@pytest.mark.parametrize(
    ("agent", "version"),
    [
        ("claude-code_2-1-332_agent", (2, 1, 332)),
        ("claude-code_2-1-332", None),  # no kind after the build
        ("claude-code_2-1_agent", None),
        ("other_2-1-332_agent", None),
        (None, None),
    ],
)
def test_the_build_is_read_from_ai_agent(agent: str | None, version: tuple[int, int, int] | None) -> None:
    assert health.agent_version(agent) == version


def test_the_trust_folder_probe_leaves_nothing_behind(tmp_path: Path) -> None:
    folder = tmp_path / "anchors"
    folder.mkdir()
    assert health.writable_check(str(folder)).mark == health.OK
    assert health.writable_check(str(tmp_path / "new" / "anchors")).mark == health.OK
    assert sorted(os.listdir(tmp_path)) == ["anchors"] and os.listdir(folder) == []


def test_no_home_is_no_trust_folder() -> None:
    check = health.writable_check(None)
    assert (check.mark, check.essential) == (health.FAIL, True)


def test_a_settings_file_that_is_a_fifo_is_never_waited_on(tmp_path: Path) -> None:
    claude = tmp_path / ".claude"
    claude.mkdir()
    os.mkfifo(claude / "settings.json")
    files = health.settings_files(str(tmp_path / "config"), str(tmp_path))
    assert [item.problem for item in files] == [None, None, "not a readable file of at most 1 MB"]


def test_a_check_prints_its_fix_on_the_next_line() -> None:
    assert health.Check(health.FAIL, "broken", "mend it").lines() == ["✘ broken", "  fix: mend it"]
    assert health.Check(health.INFO, "unknown", "look").lines() == ["· unknown", "  how: look"]
    assert health.Check(health.OK, "fine").lines() == ["✔ fine"]
