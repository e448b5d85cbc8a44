"""The README's Quick start, in order, as a newcomer runs it (measured on 2.1.332), then its Uninstall.

A new HOME and no ``CLAUDE_CONFIG_DIR`` (Claude Code's folder is ``~/.claude``, as the README says), a ``python3``
with nothing installed (a venv made ``--without-pip``, first on PATH), no package index at all (``PIP_INDEX_URL`` a
closed loopback port, no pip configuration, so no ``find-links`` either), the real CLI against the fake API. The
writers import the plugin folder's vendored filelock and platformdirs; nothing is installed or downloaded, and
nothing is written outside the plugin folder, the state folder and the plugin's data folder (and the project's
``.claude/``, where the anchor is). Every command and settings line is
read from the README, so a README that changes without this test fails it: the two install commands on a copy of
the tracked files, the two settings recipes in the files the README names, ``claude plugin configure`` with the
README's id, the slash command as the prompt of ``claude -p`` (no ``--plugin-dir``, no ``--allowedTools``: the
installed plugin and the permission line do it all), a scripted model that creates and writes the anchor and runs
``session-workflow doctor`` through the Bash tool, a ``/compact`` whose block is the README's, then the Uninstall
commands and what stays where.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests import readme
from tests.cli.test_fresh_machine import OFFLINE_INDEX, vendored_line

from . import fake_api as F
from .fake_api import Body, FakeAnthropic
from .harness import REPO_ROOT, Claude, iter_debug_hook_runs, new_session_id, session_start_contexts
from .test_install import installed_copy, tracked_files

pytestmark = pytest.mark.e2e

ID = "session-workflow@session-workflow"
NEXT_ACTION = "run the backfill dry-run against staging; first verify `ledger_migration_2` is applied."
ANCHOR = f"""---
format: anchor/v1
task: Migrate the billing service
step: 0
---

# Migrate the billing service

## Mission
Move billing onto LedgerClient without downtime.

## Cursor
- Next action: {NEXT_ACTION}

<!-- anchor:tail -->

## Decisions log
- kept the old writer behind a flag
"""


@dataclass
class Newcomer(Claude):
    """A sandbox without ``CLAUDE_CONFIG_DIR``: Claude Code keeps everything in ``~/.claude`` of the new HOME."""

    @property
    def config_dir(self) -> Path:
        return self.home / ".claude"

    def env(self, extra: Mapping[str, str] | None = None) -> dict[str, str]:
        env = super().env(extra)
        del env["CLAUDE_CONFIG_DIR"]
        return env


def readme_command(line: str, checkout: Path) -> list[str]:
    """A ``claude …`` line of the README as arguments of :meth:`Claude.run`, on this checkout."""
    words = shlex.split(line.replace(readme.CHECKOUT, str(checkout)))
    assert words[0] == "claude", line
    return words[1:]


def settings_target(name: str, home: Path, project: Path) -> Path:
    return home / name[2:] if name.startswith("~/") else project / name


def files_under(folder: Path) -> list[str]:
    return sorted(str(path.relative_to(folder)) for path in folder.rglob("*") if path.is_file())


def fresh_python(tmp_path: Path) -> dict[str, str]:
    """The variables that put a python3 with nothing installed, not even pip, first on PATH, and no index."""
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    fresh = {
        "PATH": os.pathsep.join([str(venv / "bin"), os.environ.get("PATH", "")]),
        "PYTHONNOUSERSITE": "1",
        **OFFLINE_INDEX,
    }
    for module in ("filelock", "platformdirs", "pip"):
        probe = subprocess.run(["python3", "-c", f"import {module}"], env={**os.environ, **fresh}, capture_output=True)
        assert probe.returncode != 0, f"{module} is importable on the fresh python3: the test would prove nothing"
    return fresh


def clone(folder: Path) -> Path:
    """A checkout as a newcomer has it: the tracked files, no dev cache."""
    for name in tracked_files():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(REPO_ROOT / name, folder / name)
    return folder


def test_the_quick_start_then_the_uninstall(claude_bin: Path, fake_api: FakeAnthropic, tmp_path: Path) -> None:
    fresh = fresh_python(tmp_path)
    user = Newcomer(binary=claude_bin, api=fake_api, root=tmp_path / "machine", plugin_dir=None, env_extra=fresh)
    checkout = clone(tmp_path / "session-workflow")
    subprocess.run(["git", "init", "-q", str(user.project)], check=True, timeout=60)  # the newcomer's project

    # 1. Install: the README's two commands. A folder marketplace copies the folder but runs the plugin from the
    # folder itself (its hooks, its bin/ on the Bash tool's PATH), as the README says.
    blocks = readme.fenced(readme.section("Quick start"))
    (install,) = [body for language, body, _ in blocks if language == "sh"]
    commands = [readme_command(line, checkout) for line in install.splitlines()]
    assert commands == [["plugin", "marketplace", "add", str(checkout)], ["plugin", "install", ID]]
    for words in commands:
        user.run(words).check()
    copy = installed_copy(user)
    assert files_under(copy) == sorted(tracked_files())
    # The Configuration section's id works on what was installed.
    (configure,) = [line for line in readme.section("Configuration").split("`") if line.startswith("claude plugin")]
    shown = user.run(readme_command(configure, checkout)).check().stdout
    assert "anchor_hooks — Re-inject the control anchor" in shown
    installed = json.loads((user.config_dir / "settings.json").read_text(encoding="utf-8"))
    assert installed["enabledPlugins"] == {ID: True} and "extraKnownMarketplaces" in installed  # what step 1 says

    # 2, 3. The task tools' opt-in and the permission line, added where the README says, in the files it names.
    quick_start = " ".join(readme.section("Quick start").split())
    assert "in the project, `mkdir -p .claude`;" in quick_start
    subprocess.run(["mkdir", "-p", ".claude"], cwd=user.project, check=True, timeout=60)
    recipes = readme.settings_recipes()
    assert [(recipe.file, recipe.path) for recipe in recipes] == [
        ("~/.claude/settings.json", ["env"]),
        (".claude/settings.local.json", ["permissions", "allow"]),
    ]
    for recipe in recipes:
        target = settings_target(recipe.file, user.home, user.project)
        assert target.exists() or recipe.file.startswith(".claude/")  # a new project file: `{}`, as the step says
        current = json.loads(target.read_text(encoding="utf-8")) if target.exists() else {}
        target.write_text(json.dumps(recipe.apply(current), indent=2), encoding="utf-8")
    settings = json.loads((user.config_dir / "settings.json").read_text(encoding="utf-8"))
    assert settings["enabledPlugins"] == {ID: True} and settings["env"] == {"CLAUDE_CODE_ENABLE_TODO_TOOLS": "1"}
    assert "✔ enabled" in user.run(["plugin", "list"]).check().stdout

    # 4, 5. Arm the protocol; the model creates the anchor, writes it and runs the doctor.
    (arm,) = [body.strip() for language, body, _ in blocks if body.startswith("/session-workflow:")]
    task = arm.split(" ", 1)[1]
    doctor, terminal = [line for line in readme.section("Quick start").split("`") if line.endswith(" doctor")]
    assert doctor == "session-workflow doctor"
    made: list[str] = []

    def write_it(body: Body) -> F.Reply:
        made.append(F.anchor_path_from(body))
        return F.bash(f"session-workflow anchor write {made[0]} <<'ANCHOR_EOF'\n{ANCHOR}ANCHOR_EOF")

    fake_api.script(F.bash(f"session-workflow anchor new --task {shlex.quote(task)}"), write_it, F.bash(doctor))
    fake_api.script(F.text("armed; the anchor is written"))
    sid = new_session_id()
    user.run(["-p", arm, "--session-id", sid, "--debug-file", str(user.debug_file())]).check()
    runs = list(iter_debug_hook_runs(user.debug_file().read_text(encoding="utf-8")))
    command = f"/bin/sh {checkout}/hooks/python.sh -I -S {checkout}/hooks/hook.py SessionStart"
    assert ("SessionStart:startup", command, 0) in runs, runs
    assert "Claude Code runs the plugin from that folder" in " ".join(readme.section("Quick start").split())
    first, new, write, checked = (fake_api.main_requests() + [{}] * 4)[:4]
    loaded = [text for text in F.message_texts(first) if text.startswith("Base directory for this skill: ")]
    assert len(loaded) == 1 and loaded[0].rstrip().endswith(f"ARGUMENTS: {task}")
    data = user.config_dir / "plugins" / "data" / "session-workflow-session-workflow"
    anchor = user.project / ".claude" / "anchors" / f"{time.strftime('%Y-%m-%d')}-migrate-the-billing-service.md"
    (created,) = F.last_tool_results(new)
    assert created == str(anchor)  # nothing installed first, nothing said about it
    (wrote,) = F.last_tool_results(write)
    assert made == [str(anchor)] and wrote.startswith(f"wrote {anchor} (step 0)\nHEAD: "), wrote
    ignored = subprocess.run(["git", "-C", str(user.project), "check-ignore", "-q", str(anchor)], timeout=60)
    assert ignored.returncode == 0 and "`.claude/anchors/<date>-<slug>.md`, git-ignored" in readme.section(
        "Quick start"
    )
    (report,) = F.last_tool_results(checked)
    lines = report.splitlines()
    assert lines[0] == f"session-workflow doctor: plugin {checkout}, project {user.project}", report
    assert f"✔ session-workflow on PATH: {checkout / 'bin' / 'session-workflow'} (this plugin's)" in lines, report
    assert f"✔ Claude Code plugin: {ID} installed and enabled here, run from {checkout}" in lines, report
    local = settings_target(recipes[1].file, user.home, user.project)
    assert f"✔ permission rule Bash(session-workflow:*): in {local}" in lines, report
    assert "✔ task tools: on (CLAUDE_CODE_ENABLE_TODO_TOOLS=1 in this shell)" in lines, report  # the settings' env
    assert not any(line.startswith("✘") for line in lines) and lines[-1].startswith("nothing essential is missing")
    dependencies = vendored_line().replace(str(REPO_ROOT), str(checkout))
    assert lines[2] == dependencies, report

    # After a compaction: the README's block.
    user.run(["-p", "--resume", sid, "/compact"]).check()
    user.run(["-p", "--resume", sid, "carry on"]).check()
    (example,) = [body for language, body, before in blocks if body.startswith("session-workflow: state restored")]
    contexts = session_start_contexts(fake_api.main_requests()[-1])
    block = next(c for c in contexts if "(compact)" in c.split("\n")[0])
    assert block.split("\n")[0] == example.split("\n")[0]
    # The resume block Claude Code still held unsent comes after the compaction too, before the compact block: the
    # HEAD is in one of them, once.
    blocks_text = "\n".join(c for c in contexts if c.startswith("session-workflow: "))
    head = f"## Control anchor: `{anchor}`\n"
    assert blocks_text.count(head) == 1 and blocks_text.count(f"> - Next action: {NEXT_ACTION}\n") == 1

    # From a terminal, as the Quick start also says.
    shell = {**user.env(), "PATH": fresh["PATH"]}
    words = shlex.split(terminal.replace(readme.CHECKOUT, str(checkout)))
    done = subprocess.run(words, cwd=user.project, env=shell, capture_output=True, text=True, timeout=120)
    assert (done.returncode, done.stderr) == (0, ""), done.stdout
    assert done.stdout.splitlines()[-1].startswith("nothing essential is missing"), done.stdout
    assert done.stdout.splitlines()[2] == dependencies, done.stdout  # the same copy as in the Bash tool
    # Nothing of ours anywhere but the plugin folder (unchanged), the state folder and the plugin's data folder.
    assert files_under(checkout) == sorted(tracked_files())
    state = user.home / ".local" / "state" / "session-workflow"
    ours = [
        path
        for base in (user.home, user.project)
        for path in base.rglob("*")
        if ("session-workflow" in path.name or path.suffix == ".pyc" or path.name == "__pycache__")
        and not path.is_relative_to(state)
        and not path.is_relative_to(user.config_dir / "plugins")  # Claude Code's: the copy, the data folder
    ]
    assert ours == [], ours
    # A terminal has no CLAUDE_CODE_SESSION_ID, and still sees the deleted anchor, with the command that restores it.
    assert "CLAUDE_CODE_SESSION_ID" not in shell
    anchor.unlink()
    done = subprocess.run(words, cwd=user.project, env=shell, capture_output=True, text=True, timeout=120)
    lines = done.stdout.splitlines()
    gone = f"✘ anchor `{anchor.name}`: kept by a session of this machine, gone from `{anchor.parent}`"
    restore = f"session-workflow anchor restore {anchor}"
    assert gone in lines and f"  fix: put the last version back: {restore}" in lines, done.stdout
    assert not any("no open anchor" in line for line in lines), done.stdout
    back = subprocess.run(
        [str(checkout / "bin" / "session-workflow"), *shlex.split(restore)[1:]],
        cwd=user.project,
        env=shell,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert back.returncode == 0, back.stderr
    assert f"- Next action: {NEXT_ACTION}" in anchor.read_text(encoding="utf-8")

    # Configuration: values on stdin, as strings, through the README's own line.
    (piped,) = [line for line in readme.indented(readme.section("Configuration")) if "--values-stdin" in line]
    tools = tmp_path / "tools"
    tools.mkdir()
    (tools / "claude").symlink_to(claude_bin)
    configured = subprocess.run(
        ["bash", "-c", piped],
        cwd=user.project,
        env={**user.env(), "PATH": f"{tools}{os.pathsep}{os.environ['PATH']}"},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert configured.returncode == 0, configured.stderr
    shown = user.run(readme_command(configure, checkout)).check().stdout
    assert "nudge_margin — Checkpoint nudge margin (optional, set)" in shown, shown
    assert "status_line — Show the run's state on the status line (optional, set)" in shown, shown
    strings = user.run(["plugin", "configure", ID, "--values-stdin"], input='{"nudge_margin": 10}')
    assert strings.returncode != 0 and '(`"10"`, not `10`)' in readme.section("Configuration")

    # Uninstall: the README's two commands, and what stays where.
    uninstall, remove = readme.indented(readme.section("Uninstall"))
    first_command, second_command = (readme_command(line, checkout) for line in uninstall.splitlines())
    assert first_command == ["plugin", "uninstall", ID] and second_command[:3] == ["plugin", "marketplace", "remove"]
    assert data.is_dir()
    user.run(first_command).check()
    assert not data.exists()  # Claude Code deletes the plugin's data folder (unless --keep-data)
    uninstall_text = " ".join(readme.section("Uninstall").split())
    assert f"Claude Code deletes the plugin's data folder (`~/{data.relative_to(user.home)}`" in uninstall_text
    user.run(second_command).check()
    assert (copy / ".orphaned_at").is_file()  # its copy of the plugin stays, marked
    settings = json.loads((user.config_dir / "settings.json").read_text(encoding="utf-8"))
    assert settings["enabledPlugins"] == {} and settings["env"] == {"CLAUDE_CODE_ENABLE_TODO_TOOLS": "1"}
    assert '`"CLAUDE_CODE_ENABLE_TODO_TOOLS"` in `~/.claude/settings.json`' in uninstall_text  # the user's lines stay
    assert "Bash(session-workflow:*)" in local.read_text(encoding="utf-8") and "`.claude/settings.local.json`" in (
        uninstall_text
    )
    state = user.home / ".local" / "state" / "session-workflow"
    for kept in (state / "anchors", state / "pycache"):
        assert kept.is_dir() and files_under(kept), kept
        assert f"~/{kept.parent.relative_to(user.home)}" in uninstall_text
    assert anchor.is_file() and "`.claude/anchors/`" in uninstall_text
    words = shlex.split(remove)
    assert words[:2] == ["rm", "-rf"] and all(word.startswith("~/") for word in words[2:]), remove
    subprocess.run(["bash", "-c", remove], env={"HOME": str(user.home), "PATH": os.environ["PATH"]}, check=True)
    assert not state.exists()
    leaks = fake_api.leaks()
    assert not leaks, f"Claude Code tried to reach non-loopback hosts: {[r['path'] for r in leaks]}"


# The Quick start's old step 3 (the steps go by key now): a whole object for the file `plugin install` had just written.
OLD_STEP_3 = {"env": {"CLAUDE_CODE_ENABLE_TODO_TOOLS": "1"}}


def test_the_old_step_3_pasted_over_the_install_disables_the_plugin_and_doctor_says_so(
    claude_bin: Path, fake_api: FakeAnthropic, tmp_path: Path
) -> None:
    user = Newcomer(binary=claude_bin, api=fake_api, root=tmp_path / "machine", plugin_dir=None)
    checkout = clone(tmp_path / "session-workflow")
    blocks = readme.fenced(readme.section("Quick start"))
    (install,) = [body for language, body, _ in blocks if language == "sh"]
    for line in install.splitlines():
        user.run(readme_command(line, checkout)).check()
    doctor = [str(checkout / "bin" / "session-workflow"), "doctor"]
    shell = {**user.env(), "PATH": os.environ["PATH"]}

    def run_doctor() -> subprocess.CompletedProcess[str]:
        return subprocess.run(doctor, cwd=user.project, env=shell, capture_output=True, text=True, timeout=120)

    before = run_doctor()
    assert f"✔ Claude Code plugin: {ID} installed and enabled here, run from {checkout}" in before.stdout.splitlines()
    (user.config_dir / "settings.json").write_text(json.dumps(OLD_STEP_3), encoding="utf-8")  # pasted as shown
    assert "✘ disabled" in user.run(["plugin", "list"]).check().stdout  # the Troubleshooting line's symptom
    after = run_doctor()
    lines = after.stdout.splitlines()
    assert after.returncode == 1, after.stdout
    assert (
        f"✘ Claude Code plugin: {ID} is installed but disabled for this project (no settings file that applies here"
        f' has "{ID}": true in "enabledPlugins")'
    ) in lines, after.stdout
    assert lines[-1].endswith("essential check fails: the plugin cannot work here"), after.stdout
    assert "`claude plugin list` says `✘ disabled`" in readme.section("Troubleshooting")


def test_the_unattended_recipe_runs_every_turn_and_git_clean_takes_the_local_settings(
    claude_bin: Path, fake_api: FakeAnthropic, tmp_path: Path
) -> None:
    fresh = fresh_python(tmp_path)
    user = Newcomer(binary=claude_bin, api=fake_api, root=tmp_path / "machine", plugin_dir=None, env_extra=fresh)
    checkout = clone(tmp_path / "session-workflow")
    subprocess.run(["git", "init", "-q", str(user.project)], check=True, timeout=60)
    (install,) = [body for language, body, _ in readme.fenced(readme.section("Quick start")) if language == "sh"]
    for line in install.splitlines():
        user.run(readme_command(line, checkout)).check()
    (recipe,) = [body.strip() for language, body, _ in readme.fenced(readme.section("Unattended runs"))]
    words = readme_command(recipe, checkout)
    assert words[0] == "-p" and words[1].startswith("/session-workflow:compaction-survival ")
    flags = words[2:]
    assert flags == ["--permission-mode", "acceptEdits", "--allowedTools", "Bash(session-workflow:*)"]
    anchor = user.project / ".claude" / "anchors" / f"{time.strftime('%Y-%m-%d')}-migrate-the-billing-service.md"
    notes = user.project / "notes.txt"

    # The arming turn: the anchor, and a Write of the run's own work (acceptEdits).
    fake_api.script(
        F.bash('session-workflow anchor new --task "Migrate the billing service"'),
        F.tool_use("Write", {"file_path": str(notes), "content": "ported\n"}),
        F.text("armed"),
    )
    user.run(words).check()
    assert anchor.is_file() and notes.read_text(encoding="utf-8") == "ported\n"

    def next_turn(*extra: str) -> str:
        fake_api.script(F.bash(f'session-workflow anchor step {anchor} "Ported the invoice model"'), F.text("ok"))
        user.run(["-p", "--continue", "carry on", *extra]).check()
        (result,) = F.last_tool_results(fake_api.main_requests()[-1])
        return result

    text = " ".join(readme.section("Unattended runs").split())
    assert "go on with `--continue` and the same flags" in text
    assert next_turn(*flags).startswith(f"step 0 -> 1  {anchor}")
    assert next_turn() == "This command requires approval"  # without the rule: every turn after the arming one
    assert "every later `session-workflow` call stops for approval (under `-p` it is refused)" in text

    # git clean -fdx takes the anchors and .claude/settings.local.json; -e keeps the settings file.
    local = user.project / ".claude" / "settings.local.json"
    local.write_text(json.dumps({"permissions": {"allow": ["Bash(session-workflow:*)"]}}), encoding="utf-8")
    keep = "git clean -fdx -e .claude/settings.local.json"
    assert (
        f"`{keep}`" in text
        and "`git clean -fdx` deletes the git-ignored anchors (" in text
        and "the work state (`.claude/session-workflow/`) and `.claude/settings.local.json`" in text
    )
    subprocess.run(shlex.split(keep), cwd=user.project, check=True, capture_output=True, timeout=60)
    assert local.is_file() and not anchor.exists()
    subprocess.run(["git", "clean", "-fdx"], cwd=user.project, check=True, capture_output=True, timeout=60)
    assert not local.exists()
    leaks = fake_api.leaks()
    assert not leaks, f"Claude Code tried to reach non-loopback hosts: {[r['path'] for r in leaks]}"
