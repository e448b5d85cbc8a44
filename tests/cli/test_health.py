"""The domain-free checks of ``session-workflow doctor``: versions, the trust-folder probe, settings files."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from session_workflow.cli import health


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


PLUGIN_ID = "session-workflow@session-workflow"


class Machine:
    """A config dir with this plugin installed as ``claude plugin install`` 2.1.332 records it (measured), a project,
    and the settings files that apply to it."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.config = root / "config"
        self.project = root / "project"
        self.plugin = root / "session-workflow"
        for folder in (self.config / "plugins", self.project / ".claude", self.plugin / ".claude-plugin"):
            folder.mkdir(parents=True)

    def install(self, *entries: dict[str, str], directory: bool = True) -> None:
        index = {"version": 2, "plugins": {PLUGIN_ID: list(entries) or [{"scope": "user", "installPath": "/cache"}]}}
        self.write(self.config / "plugins" / "installed_plugins.json", index)
        source = {"source": "directory", "path": str(self.plugin)} if directory else {"source": "github"}
        known = {"session-workflow": {"source": source, "installLocation": str(self.plugin)}}
        self.write(self.config / "plugins" / "known_marketplaces.json", known)
        self.write(
            self.plugin / ".claude-plugin" / "marketplace.json",
            {"plugins": [{"name": "session-workflow", "source": "./"}]},
        )

    def write(self, path: Path, document: object) -> None:
        path.write_text(json.dumps(document), encoding="utf-8")

    def check(self, loaded: bool = False, root: Path | None = None) -> health.Check:
        files = health.settings_files(str(self.config), str(self.project), str(self.root / "managed.json"))
        return health.plugin_check(str(self.config), files, str(self.project), str(root or self.plugin), loaded)


@pytest.fixture()
def machine(tmp_path: Path) -> Machine:
    return Machine(tmp_path)


def test_an_installed_and_enabled_plugin_run_from_this_folder(machine: Machine) -> None:
    machine.install()
    machine.write(machine.config / "settings.json", {"enabledPlugins": {PLUGIN_ID: True}})
    check = machine.check()
    assert (check.mark, check.text) == (
        health.OK,
        f"Claude Code plugin: {PLUGIN_ID} installed and enabled here, run from {machine.plugin}",
    )


def test_the_old_step_3_object_pasted_over_the_install_disables_it_and_that_is_essential(machine: Machine) -> None:
    machine.install()
    machine.write(machine.config / "settings.json", {"env": {"CLAUDE_CODE_ENABLE_TODO_TOOLS": "1"}})
    check = machine.check()
    assert (check.mark, check.essential) == (health.FAIL, True)
    assert check.text == (
        f"Claude Code plugin: {PLUGIN_ID} is installed but disabled for this project (no settings file that applies"
        f' here has "{PLUGIN_ID}": true in "enabledPlugins")'
    )
    assert check.fix == (
        f'claude plugin enable {PLUGIN_ID} --scope user, or set "{PLUGIN_ID}": true in the "enabledPlugins" object of'
        f" {machine.config / 'settings.json'}"
    )


def test_the_local_settings_win_over_the_users(machine: Machine) -> None:
    machine.install()
    machine.write(machine.config / "settings.json", {"enabledPlugins": {PLUGIN_ID: True}})
    local = machine.project / ".claude" / "settings.local.json"
    machine.write(local, {"enabledPlugins": {PLUGIN_ID: False}})
    check = machine.check()
    assert check.text.endswith(f'disabled for this project ("{PLUGIN_ID}": false in {local})')
    assert check.fix is not None and check.fix.startswith(f"claude plugin enable {PLUGIN_ID} --scope local")
    machine.write(machine.root / "managed.json", {"enabledPlugins": {PLUGIN_ID: True}})
    assert machine.check().mark == health.OK  # the managed settings win over every other


def test_a_disabled_plugin_loaded_with_plugin_dir_is_a_fix_not_essential(machine: Machine) -> None:
    machine.install()
    check = machine.check(loaded=True)
    assert (check.mark, check.essential) == (health.FAIL, False) and "runs here from --plugin-dir" in check.text


def test_an_install_for_another_project_does_not_apply_here(machine: Machine) -> None:
    machine.install({"scope": "local", "installPath": "/cache", "projectPath": str(machine.root / "elsewhere")})
    machine.write(machine.config / "settings.json", {"enabledPlugins": {PLUGIN_ID: True}})
    check = machine.check()
    assert (check.mark, check.essential) == (health.FAIL, True) and "not installed for this project" in check.text
    assert machine.check(loaded=True).mark == health.OK
    machine.install({"scope": "local", "installPath": "/cache", "projectPath": str(machine.project)})
    assert machine.check().mark == health.OK


def test_another_copy_run_by_claude_code_is_named(machine: Machine, tmp_path: Path) -> None:
    (tmp_path / "cache").mkdir()
    machine.install({"scope": "user", "installPath": str(tmp_path / "cache")}, directory=False)
    machine.write(machine.config / "settings.json", {"enabledPlugins": {PLUGIN_ID: True}})
    check = machine.check()
    assert check.mark == health.FAIL and not check.essential
    assert check.text == (
        f"Claude Code plugin: {PLUGIN_ID} is enabled, but Claude Code runs it from {tmp_path / 'cache'}, not this"
        f" copy {machine.plugin}"
    )
    assert machine.check(root=tmp_path / "cache").mark == health.OK


@pytest.mark.parametrize(
    ("model", "default_on"),
    [
        ("claude-sonnet-4-5", True),
        ("claude-haiku-4-5-20251001", True),
        ("claude-opus-4-7", True),
        ("us.anthropic.claude-sonnet-4-5-20250929-v1:0", True),
        ("claude-3-7-sonnet-latest", True),
        ("claude-3-5-haiku-latest", True),
        ("claude-sonnet-4-20250514", True),
        ("claude-sonnet-4-0", True),
        ("claude-opus-4-5-20251101", True),
        ("claude-sonnet-5", True),
        ("claude-opus-4-1", False),  # Claude Code sends claude-opus-5-5 for it
        ("claude-opus-4-0", False),
        ("claude-sonnet-5-1", False),
        ("claude-opus-5-5", False),
        ("opus", False),  # an alias names the newest (measured: claude-opus-5-5)
        ("sonnet[1m]", False),
    ],
)
def test_the_task_tools_are_on_by_default_up_to_the_4_x_models(model: str, default_on: bool) -> None:
    assert health.has_task_tools_by_default(model) is default_on


def test_task_tools_unset_are_a_fix_on_the_default_model_and_not_on_a_4_x_one(machine: Machine) -> None:
    files = health.settings_files(str(machine.config), str(machine.project))
    assert health.task_tools_check({}, files).mark == health.FAIL
    assert health.task_tools_check({"ANTHROPIC_MODEL": "claude-sonnet-4-5"}, files).lines()[0] == (
        "· task tools: on by default for claude-sonnet-4-5 (in this shell); CLAUDE_CODE_ENABLE_TODO_TOOLS unset"
    )
    machine.write(machine.project / ".claude" / "settings.json", {"model": "claude-haiku-4-5"})
    files = health.settings_files(str(machine.config), str(machine.project))
    assert health.task_tools_check({}, files).mark == health.INFO
    assert health.task_tools_check({"ANTHROPIC_MODEL": "opus"}, files).mark == health.FAIL
    assert health.task_tools_check({"CLAUDE_CODE_ENABLE_TODO_TOOLS": "1"}, files).mark == health.OK
