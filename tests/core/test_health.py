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


def test_a_cli_missing_from_claude_codes_shell_is_a_fix_and_from_a_terminal_only_a_note(tmp_path: Path) -> None:
    own = tmp_path / "plugin" / "bin" / "session-workflow"
    own.parent.mkdir(parents=True)
    own.write_text("#!/bin/sh\n")
    own.chmod(0o755)
    env = {"PATH": str(tmp_path / "empty")}
    inside, outside = health.command_check(env, str(own), True), health.command_check(env, str(own), False)
    assert (inside.mark, inside.essential, outside.mark) == (health.FAIL, False, health.INFO)
    assert (
        outside.text
        == f"session-workflow on PATH: none in this shell (Claude Code puts {own.parent} on its Bash tool's PATH)"
    )
    found = health.command_check({"PATH": str(own.parent)}, str(own), True)
    assert found.lines() == [f"✔ session-workflow on PATH: {own} (this plugin's)"]


def test_outside_claude_code_the_mod_is_unknown_with_how_to_look() -> None:
    assert health.mod_check({}).lines() == [
        "· mod (work state in the system prompt, status line): unknown (not Claude Code's Bash tool)",
        "  how: in Claude Code, `/plugin` shows whether session-workflow's hooks module loaded",
    ]


def test_a_python3_that_does_not_run_is_essential(tmp_path: Path) -> None:
    (tmp_path / "python3").write_text("#!/bin/sh\nexit 3\n")
    (tmp_path / "python3").chmod(0o755)
    check = health.python_check({"PATH": str(tmp_path)})
    assert (check.text, check.essential) == (f"python3 for the hooks: {tmp_path}/python3 did not run under -I -S", True)
