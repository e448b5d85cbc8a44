"""``session-workflow doctor``: the whole screen for a prepared sandbox (golden), the exit-code rule, and that
nothing a file or the environment holds can draw a line of its own."""

from __future__ import annotations

import json
import os
import shutil
import sys
import types
from pathlib import Path

import pytest

from session_workflow.anchor import registry
from session_workflow.anchor.writer import vouch_as_read
from session_workflow.cli import doctor, health
from session_workflow.cli import main as cli
from session_workflow.core import deps, ledger
from session_workflow.core.places import Places
from session_workflow.workstate import writer as workstate_writer

REPO = Path(__file__).resolve().parents[2]
SESSION = "0f9a2c4e-1111-4222-8333-444455556666"
OTHER = "7d3b1e5f-aaaa-4bbb-8ccc-ddddeeeeffff"
RULE = "Bash(session-workflow:*)"
PLUGIN_ID = "session-workflow@session-workflow"
ENABLED = f'"enabledPlugins": {{"{PLUGIN_ID}": true}}'


def fake_python(folder: Path) -> None:
    """A ``python3`` the launcher takes (a link to a real interpreter: a script is never run); the version it
    reports is the sandbox's ``says`` (``box`` stands in for the probe)."""
    (folder / "python3").symlink_to(os.path.realpath(sys.executable))


class Sandbox:
    """A fake HOME and config dir, a PATH of a fake python3 and this plugin's CLI, and a project."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.home = root / "home"
        self.config = root / "config"
        self.bin = root / "bin"
        self.project = root / "project"
        for folder in (self.home, self.config, self.bin, self.project):
            folder.mkdir()
        fake_python(self.bin)
        self.says = "3.11.4"
        (self.bin / "session-workflow").symlink_to(REPO / "bin" / "session-workflow")
        self.env = {
            "HOME": str(self.home),
            "PATH": str(self.bin),
            "CLAUDECODE": "1",
            "CLAUDE_CONFIG_DIR": str(self.config),
            "CLAUDE_CODE_SESSION_ID": SESSION,
            "AI_AGENT": "claude-code_2-1-332_agent",
        }
        self.anchors = self.project / ".claude" / "anchors"

    def anchor(self, name: str, text: str = "# Mission\nPort X.\n\n## Cursor\n- Next action: go\n") -> Path:
        self.anchors.mkdir(parents=True, exist_ok=True)
        path = self.anchors / name
        path.write_text(text)
        return path

    def install_plugin(self, scope: str = "user", project: Path | None = None, folder: Path = REPO) -> None:
        """``claude plugin install`` of this plugin as 2.1.332 records it (the copy it runs from: ``folder``)."""
        entry = {"scope": scope, "installPath": str(folder), "version": "0.1.0"}
        entry.update({"projectPath": str(project)} if project is not None else {})
        index = {"version": 2, "plugins": {PLUGIN_ID: [entry]}}
        self.settings(self.config / "plugins" / "installed_plugins.json", json.dumps(index))

    def settings(self, path: Path, text: str) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)

    def report(self, env: dict[str, str] | None = None) -> tuple[str, int]:
        lines, code = doctor.report(Places(self.env if env is None else env), str(self.home), str(self.project), None)
        return self.shown("\n".join(lines) + "\n"), code

    def shown(self, text: str) -> str:
        """``text`` with this sandbox's paths, the repository's and the dependencies' line as the goldens write them
        (in-process they come from the test interpreter: tests/cli/test_fresh_machine.py runs the real CLI)."""
        text = text.replace(doctor.dependency_check().text, "writers' dependency: <deps>")
        return text.replace(str(self.root), "<tmp>").replace(str(REPO), "<repo>")


@pytest.fixture()
def box(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Sandbox:
    box = Sandbox(tmp_path)
    monkeypatch.setattr(doctor, "MANAGED_SETTINGS", str(box.root / "managed-settings.json"))
    monkeypatch.setattr(health, "probe_python", lambda python: box.says)
    monkeypatch.chdir(box.project)  # the Bash tool: in the project, no CLAUDE_PROJECT_DIR
    return box


GOLDEN = """\
session-workflow doctor: plugin <repo>, project <tmp>/project
✔ python3 for the hooks: <tmp>/bin/python3, Python 3.11.4
✔ writers' dependency: <deps>
✔ session-workflow on PATH: <tmp>/bin/session-workflow (this plugin's)
✔ Claude Code plugin: session-workflow@session-workflow installed and enabled here, run from <repo>
✔ trust folder (the anchors' trust records): <tmp>/home/.local/state/session-workflow/anchors (writable)
✔ anchor `2026-12-03-kept.md`: trusted, kept by this session
✘ anchor `2026-12-02-edited.md`: changed outside the writers; the hooks do not inject it
  fix: read it (session-workflow anchor show <tmp>/project/.claude/anchors/2026-12-02-edited.md); if the change is\
 yours: session-workflow anchor adopt <tmp>/project/.claude/anchors/2026-12-02-edited.md
· anchor `2026-12-01-cloned.md`: not created here; the hooks do not inject it
  how: if it is yours: session-workflow anchor adopt <tmp>/project/.claude/anchors/2026-12-01-cloned.md
✔ work state: #34 "Fix Y" (whiteboard), step execute; owner 0f9a2c4e-1111-4222-8333-444455556666 (this session)
· ledger: nothing sent in this project yet (`session-workflow log` will list it)
· mod (work state in the system prompt, status line): unknown (Claude Code 2.1.332 can load it; a shell cannot see\
 whether it did)
  how: in Claude Code, `/plugin` shows whether session-workflow's hooks module loaded
✔ permission rule Bash(session-workflow:*): in <tmp>/project/.claude/settings.local.json
✔ task tools: on (CLAUDE_CODE_ENABLE_TODO_TOOLS=1 in <tmp>/config/settings.json)
✔ errors: none recorded
nothing essential is missing; 1 line marked ✘ to fix
"""


def test_the_screen_of_a_prepared_sandbox(box: Sandbox) -> None:
    box.install_plugin()
    kept = box.anchor("2026-12-03-kept.md")
    edited = box.anchor("2026-12-02-edited.md")
    box.anchor("2026-12-01-cloned.md")
    registry.Registry(Places(box.env)).vouch(str(kept), SESSION, "new", 0.0)
    registry.Registry(Places(box.env)).vouch(str(edited), OTHER, "new", 0.0)
    with edited.open("a") as handle:
        handle.write("- an edit by hand\n")
    for name, mtime in (("kept", 3), ("edited", 2), ("cloned", 1)):  # newest first, as listed
        os.utime(box.anchors / f"2026-12-0{mtime}-{name}.md", (mtime * 1e6, mtime * 1e6))
    registry.Registry(Places(box.env)).vouch(
        str(kept), SESSION, "new", 0.0
    )  # after the utime: still as the writer left it
    state = box.project / ".claude" / "session-workflow" / "work-state.json"
    workstate_writer.set_ticket(str(state), SESSION, ticket=34, title="Fix Y", step="execute", now=0.0)
    box.settings(box.config / "settings.json", f'{{{ENABLED}, "env": {{"CLAUDE_CODE_ENABLE_TODO_TOOLS": "1"}}}}')
    box.settings(box.project / ".claude" / "settings.local.json", f'{{"permissions": {{"allow": ["{RULE}"]}}}}')
    assert box.report() == (GOLDEN, 0)


def lines_of(box: Sandbox, env: dict[str, str] | None = None) -> tuple[list[str], int]:
    text, code = box.report(env)
    return text.splitlines(), code


def pair(lines: list[str], start: str) -> list[str]:
    """The first line that starts with ``start`` and the line after it (its fix)."""
    index = next(i for i, line in enumerate(lines) if line.startswith(start))
    return lines[index : index + 2]


def test_a_bare_sandbox_is_fine(box: Sandbox) -> None:
    lines, code = lines_of(box)
    assert code == 0
    assert lines[2] == "✔ writers' dependency: <deps>"
    assert "· anchors: no open anchor in `<tmp>/project/.claude/anchors`" in lines
    assert "· work state: none in <tmp>/project/.claude/session-workflow/work-state.json" in lines
    assert lines[-6:] == [
        "✘ permission rule Bash(session-workflow:*): in no settings file that applies here; each writer call asks"
        " for approval",
        '  fix: add "Bash(session-workflow:*)" to "permissions": {"allow": [...]} in <tmp>/config/settings.json (a rule'
        " given with --allowedTools or --settings is not visible from a shell)",
        "✘ task tools: off: CLAUDE_CODE_ENABLE_TODO_TOOLS unset, and Claude Code's default model is past the 4.x"
        " line; the run's open tasks are not kept",
        '  fix: add "CLAUDE_CODE_ENABLE_TODO_TOOLS": "1" to the "env" object of <tmp>/config/settings.json (a --model'
        " of 4.x or earlier has them without it)",
        "✔ errors: none recorded",
        "nothing essential is missing; 2 lines marked ✘ to fix",
    ]


def test_an_old_python3_is_essential(box: Sandbox) -> None:
    box.says = "3.8.10"
    lines, code = lines_of(box)
    assert code == 1
    assert lines[1:3] == [
        "✘ python3 for the hooks: <tmp>/bin/python3 is Python 3.8.10; they need 3.9+",
        "  fix: install Python 3.9+ so that `python3` runs it (e.g. apt install python3), first on PATH",
    ]
    assert lines[-1] == "1 essential check fails: the plugin cannot work here"


def test_python_3_9_is_enough(box: Sandbox) -> None:
    box.says = "3.9.0"
    lines, code = lines_of(box)
    assert (lines[1], code) == ("✔ python3 for the hooks: <tmp>/bin/python3, Python 3.9.0", 0)


def test_no_python3_on_path_is_essential(box: Sandbox) -> None:
    (box.bin / "python3").unlink()
    lines, code = lines_of(box)
    assert (lines[1], code) == ("✘ python3 for the hooks: none on PATH outside the project; the hooks cannot run", 1)


def test_a_trust_folder_that_cannot_be_made_is_essential(box: Sandbox) -> None:
    (box.home / ".local").write_text("in the way")
    lines, code = lines_of(box)
    assert code == 1
    assert pair(lines, "✘ trust folder") == [
        "✘ trust folder (the anchors' trust records): <tmp>/home/.local/state/session-workflow/anchors cannot be"
        " made: <tmp>/home/.local is not a folder",
        "  fix: move <tmp>/home/.local out of the way",
    ]


def test_a_missing_filelock_is_named_and_essential_only_without_flock(
    box: Sandbox, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The writers lock with flock on POSIX and import filelock only where there is none: its copy missing is a
    failure with its fix, but not "no writer could run" where flock is there; off POSIX it is essential."""
    monkeypatch.setattr(sys, "path", list(sys.path))
    monkeypatch.setitem(sys.modules, "filelock", None)  # import filelock raises ImportError
    check = doctor.dependency_check()
    assert (check.mark, check.essential) == ("✘", False)
    assert check.text.startswith(f"writers' dependency: filelock does not import in {sys.executable} (")
    assert check.text.endswith("; the writers lock with flock here, and need it only on a file system without")
    assert check.fix == f"the plugin folder is incomplete ({deps.vendored_dir()}): reinstall the plugin"
    assert lines_of(box)[1] == 0
    monkeypatch.setattr(os, "name", "nt")
    check = doctor.dependency_check()
    assert (check.mark, check.essential) == ("✘", True)
    halted = "import of filelock halted; None in sys.modules"
    assert check.text == f"writers' dependency: filelock does not import in {sys.executable} ({halted})"
    monkeypatch.setattr(deps, "vendored_dir", lambda: None)  # an installed wheel
    assert doctor.dependency_check().fix == f"`{sys.executable} -m pip install filelock`"


def test_platformdirs_is_not_judged(box: Sandbox, monkeypatch: pytest.MonkeyPatch) -> None:
    """Nothing imports platformdirs at run time (the state folder's rule is ``core.locations``'): a machine whose
    copy is missing is fine."""
    monkeypatch.setitem(sys.modules, "platformdirs", None)
    assert doctor.dependency_check().mark == "✔"
    assert lines_of(box)[1] == 0


def test_the_vendored_copy_is_named_as_such(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """From the vendored folder: "vendored in" it; from elsewhere: "from" its folder. The module is a stand-in, so
    an earlier test that put the real vendored copy first on the path changes nothing here."""
    vendored, elsewhere = tmp_path / "vendor", tmp_path / "site-packages"
    module = types.ModuleType("filelock")
    module.__file__ = str(vendored / "filelock" / "__init__.py")
    module.__version__ = "9.1"  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "filelock", module)
    monkeypatch.setattr(sys, "path", list(sys.path))
    monkeypatch.setattr(deps, "vendored_dir", lambda: str(vendored))
    check = doctor.dependency_check()
    assert (check.mark, check.text) == ("✔", f"writers' dependency: filelock 9.1, vendored in {vendored}")
    module.__file__ = str(elsewhere / "filelock" / "__init__.py")
    assert doctor.dependency_check().text == f"writers' dependency: filelock 9.1, from {elsewhere}"


def test_a_shadowing_copy_on_path_is_named_but_not_essential(box: Sandbox) -> None:
    box.install_plugin()
    box.settings(box.config / "settings.json", f"{{{ENABLED}}}")
    (box.bin / "session-workflow").unlink()
    other = box.bin / "session-workflow"
    other.write_text("#!/bin/sh\n")
    other.chmod(0o755)
    lines, code = lines_of(box)
    assert code == 0
    assert pair(lines, "✘ session-workflow") == [
        "✘ session-workflow on PATH: <tmp>/bin/session-workflow shadows this plugin's <repo>/bin/session-workflow",
        "  fix: remove the other copy (pipx uninstall session-workflow, or pip uninstall session-workflow), or put"
        " <repo>/bin first on PATH",
    ]


def test_the_rule_in_the_shared_project_settings_only_holds_in_a_trusted_workspace(box: Sandbox) -> None:
    box.settings(box.project / ".claude" / "settings.json", f'{{"permissions": {{"allow": ["{RULE}"]}}}}')
    box.settings(box.config / "settings.json", "{not json")
    lines, _code = lines_of(box)
    assert pair(lines, "· permission rule") == [
        "· permission rule Bash(session-workflow:*): only in <tmp>/project/.claude/settings.json, which an untrusted"
        " workspace ignores (<tmp>/config/settings.json is not valid JSON (line 1, column 2: Expecting property name"
        " enclosed in double quotes))",
        "  how: trust the workspace, or put the rule in <tmp>/project/.claude/settings.local.json or"
        " <tmp>/config/settings.json",
    ]


def test_task_tools_turned_off_are_a_fix(box: Sandbox) -> None:
    lines, code = lines_of(box, {**box.env, "CLAUDE_CODE_ENABLE_TODO_TOOLS": "0"})
    assert code == 0
    assert pair(lines, "✘ task tools") == [
        "✘ task tools: off (CLAUDE_CODE_ENABLE_TODO_TOOLS=0 in this shell): the run's open tasks are not kept",
        '  fix: remove it, or add "CLAUDE_CODE_ENABLE_TODO_TOOLS": "1" to the "env" object of'
        " <tmp>/config/settings.json",
    ]


def test_another_sessions_work_state_is_orphaned_here(box: Sandbox) -> None:
    state = box.project / ".claude" / "session-workflow" / "work-state.json"
    workstate_writer.set_ticket(str(state), OTHER, ticket=7, title="Other", now=0.0)
    lines, _code = lines_of(box)
    assert pair(lines, "· work state") == [
        f'· work state: #7 "Other" (whiteboard), step start; owner {OTHER}, another session: orphaned here',
        "  how: session-workflow state adopt (claims it here)",
    ]


def test_an_old_claude_code_cannot_load_the_mod(box: Sandbox) -> None:
    lines, _code = lines_of(box, {**box.env, "AI_AGENT": "claude-code_2-1-286_agent"})
    assert pair(lines, "✘ mod") == [
        "✘ mod (work state in the system prompt, status line): Claude Code 2.1.286 predates hooks modules (2.1.287);"
        " the hooks deliver the work state",
        "  fix: update Claude Code (`claude update`)",
    ]


def test_nothing_from_a_file_or_the_environment_can_draw_a_line(box: Sandbox) -> None:
    hostile = "x.md\n✔ python3 for the hooks: fine\n"
    box.anchor(hostile[:-1] + ".md")
    env = {**box.env, "CLAUDE_CODE_ENABLE_TODO_TOOLS": "1\n✔ all good", "PATH": f"{box.bin}"}
    lines, _code = lines_of(box, env)
    marks = [line[0] for line in lines[1:-1] if not line.startswith("  ")]
    assert set(marks) <= {"✔", "✘", "·"} and sum(1 for line in lines if line.startswith("✔ python3")) == 1
    assert pair(lines, "· anchor `x.md") == [
        "· anchor `x.md\\x0a✔ python3 for the hooks: fine.md`: not created here; the hooks do not inject it",
        "  how: if it is yours: session-workflow anchor adopt $'<tmp>/project/.claude/anchors/x.md\\x0a✔ python3 for"
        " the hooks: fine.md'",
    ]
    assert any(
        line.startswith("✘ task tools: off: CLAUDE_CODE_ENABLE_TODO_TOOLS=1\\x0a✔ all good in this shell is not")
        for line in lines
    )


def test_the_group_runs_from_the_command_line(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code = cli.main(["doctor", "--dir", str(tmp_path)])
    out = capsys.readouterr().out
    assert out.startswith(f"session-workflow doctor: plugin {REPO}, project {tmp_path}\n")
    assert code == (1 if "1 essential" in out.splitlines()[-1] else 0)


def test_the_same_bytes_at_a_new_inode_are_trusted_as_the_hooks_trust_them(box: Sandbox) -> None:
    path = box.anchor("2026-12-03-kept.md")
    vouch_as_read(str(path), Places(box.env), SESSION, "new", 0.0)
    data = path.read_bytes()
    path.unlink()
    path.write_bytes(data)  # git stash --all && git stash pop: the very bytes, another inode and mtime
    assert "✔ anchor `2026-12-03-kept.md`: trusted, kept by this session" in lines_of(box)[0]
    path.write_bytes(data.replace(b"go", b"GO"))  # same size, other bytes
    assert "✘ anchor `2026-12-03-kept.md`: changed outside the writers; the hooks do not inject it" in lines_of(box)[0]


def test_a_kept_anchor_that_is_gone_is_named_with_the_restore_command(box: Sandbox) -> None:
    kept = box.anchor("2026-12-03-kept.md")
    other = box.anchor("2026-12-02-other.md")
    vouch_as_read(str(kept), Places(box.env), SESSION, "new", 0.0)
    vouch_as_read(str(other), Places(box.env), OTHER, "new", 0.0)
    shutil.rmtree(box.anchors)  # git clean -fdx
    lines, code = lines_of(box)
    real = os.path.realpath(box.anchors)
    assert pair(lines, "✘ anchor `2026-12-03-kept.md`") == [
        f"✘ anchor `2026-12-03-kept.md`: kept by this session, gone from `{real}`".replace(str(box.root), "<tmp>"),
        f"  fix: put the last version back: session-workflow anchor restore {real}/2026-12-03-kept.md".replace(
            str(box.root), "<tmp>"
        ),
    ]
    assert pair(lines, "✘ anchor `2026-12-02-other.md`") == [  # another session's: named too, it may be the run's
        f"✘ anchor `2026-12-02-other.md`: kept by a session of this machine, gone from `{real}`".replace(
            str(box.root), "<tmp>"
        ),
        f"  fix: put the last version back: session-workflow anchor restore {real}/2026-12-02-other.md".replace(
            str(box.root), "<tmp>"
        ),
    ]
    assert not any("no open anchor" in line for line in lines)  # one section: gone ones are not "none"
    assert code == 0  # not essential: the doctor names it, the run restores it


def test_a_terminal_without_a_session_id_names_a_deleted_anchor_with_its_restore(box: Sandbox) -> None:
    kept = box.anchor("2026-12-03-kept.md")
    vouch_as_read(str(kept), Places(box.env), SESSION, "new", 0.0)
    kept.unlink()
    terminal = {key: value for key, value in box.env.items() if key not in ("CLAUDE_CODE_SESSION_ID", "CLAUDECODE")}
    lines, _code = lines_of(box, terminal)
    real = os.path.realpath(kept).replace(str(box.root), "<tmp>")
    assert pair(lines, "✘ anchor `2026-12-03-kept.md`") == [
        f"✘ anchor `2026-12-03-kept.md`: kept by a session of this machine, gone from `{os.path.dirname(real)}`",
        f"  fix: put the last version back: session-workflow anchor restore {real}",
    ]
    assert not any("no open anchor" in line for line in lines)


def test_a_closed_anchor_is_not_gone_and_another_projects_anchor_is_not_named(box: Sandbox, tmp_path: Path) -> None:
    closed = box.anchor("2026-12-03-done.md")
    vouch_as_read(str(closed), Places(box.env), SESSION, "new", 0.0)
    registry.Registry(Places(box.env)).forget(str(closed), strict=True)  # what close does to the record
    closed.unlink()
    elsewhere = tmp_path / "elsewhere" / ".claude" / "anchors" / "2026-12-03-theirs.md"
    elsewhere.parent.mkdir(parents=True)
    elsewhere.write_text("# Mission\nX.\n")
    vouch_as_read(str(elsewhere), Places(box.env), SESSION, "new", 0.0)
    elsewhere.unlink()
    lines, _code = lines_of(box)
    assert not any("done.md" in line or "theirs.md" in line for line in lines)
    assert "· anchors: no open anchor in `<tmp>/project/.claude/anchors`" in lines


def test_the_ledger_line_counts_what_was_sent_in_this_project_and_points_to_the_log(box: Sandbox) -> None:
    for source, project in (("compact", box.project), ("resume", box.project), ("compact", box.root)):
        entry = {"ts": f"2026-12-03T10:0{len(source)}:00Z", "kind": "start", "source": source, "project": str(project)}
        assert ledger.append(Places(box.env), {**entry, "session": SESSION})
    reminders = ledger.reminders_path(Places(box.env), SESSION)
    assert reminders is not None
    os.makedirs(os.path.dirname(reminders))
    Path(reminders).write_text('[{"ts": "2026-12-03T11:00:00Z", "anchor": "/x.md", "tokens": 1, "threshold": 2}]')
    lines, _code = lines_of(box)
    assert pair(lines, "· ledger") == [
        "· ledger: 2 SessionStart block(s) and 1 checkpoint reminder(s) sent here, the newest at 2026-12-03T11:00:00Z",
        "  how: session-workflow log --all",
    ]


def test_a_gone_anchor_is_this_projects_and_found_through_a_symlinked_project(box: Sandbox, tmp_path: Path) -> None:
    """Kept by this session but in another project: not this project's line. The project reached through a
    symlink (the shell's cwd, ``--dir``) is the same project, its gone anchor named with the real path."""
    kept = box.anchor("2026-12-03-kept.md")
    vouch_as_read(str(kept), Places(box.env), SESSION, "new", 0.0)
    elsewhere = tmp_path / "elsewhere" / ".claude" / "anchors" / "2026-12-01-far.md"
    elsewhere.parent.mkdir(parents=True)
    elsewhere.write_text("# Mission\nFar.\n\n## Cursor\n- Next action: go\n")
    vouch_as_read(str(elsewhere), Places(box.env), SESSION, "new", 0.0)
    elsewhere.unlink()
    kept.unlink()
    link = tmp_path / "link-to-project"
    link.symlink_to(box.project)
    for cwd, dir_arg in ((str(link), None), (str(box.root), str(link))):
        lines, _code = doctor.report(Places(box.env), str(box.home), cwd, dir_arg)
        assert [line for line in lines if line.startswith("✘ anchor")] == [
            f"✘ anchor `2026-12-03-kept.md`: kept by this session, gone from `{os.path.realpath(box.anchors)}`"
        ], (cwd, dir_arg)
        assert not any("2026-12-01-far.md" in line for line in lines)


def test_a_closed_anchor_is_never_named_gone_with_a_restore_that_fails(box: Sandbox) -> None:
    """``anchor close`` renames the file and drops its record: the doctor must not advise ``anchor restore``,
    which would fail ("no session of this machine wrote it")."""
    from session_workflow.anchor.writer import close_anchor

    kept = box.anchor("2026-12-03-kept.md")
    vouch_as_read(str(kept), Places(box.env), SESSION, "new", 0.0)
    close_anchor(str(kept), "shipped", 0.0, Places(box.env))
    lines, code = lines_of(box)
    assert not any(line.startswith("✘ anchor") or "anchor restore" in line for line in lines), lines
    assert code == 0


# --- the states a new user meets, each one ✘ naming its cause, rc 1; no line contradicts another


def terminal(box: Sandbox) -> dict[str, str]:
    """A terminal beside Claude Code: no CLAUDECODE, no session, this plugin's CLI not on PATH."""
    (box.bin / "session-workflow").unlink()
    return {"HOME": str(box.home), "PATH": str(box.bin), "CLAUDE_CONFIG_DIR": str(box.config)}


def ready(box: Sandbox, user_settings: str | None = None) -> None:
    """Everything but the state under test: the rule in the local settings, the task tools on in the user's."""
    box.settings(box.project / ".claude" / "settings.local.json", f'{{"permissions": {{"allow": ["{RULE}"]}}}}')
    todo = '"env": {"CLAUDE_CODE_ENABLE_TODO_TOOLS": "1"}'
    box.settings(box.config / "settings.json", user_settings or f"{{{ENABLED}, {todo}}}")


def failures(lines: list[str]) -> list[str]:
    return [line for line in lines if line.startswith("✘")]


def test_invalid_user_settings_json_is_one_failure_naming_its_line(box: Sandbox) -> None:
    box.install_plugin()
    text = f'{{\n  {ENABLED},\n  "env": {{"CLAUDE_CODE_ENABLE_TODO_TOOLS": "1"}},\n}}\n'  # step 2, a comma left
    ready(box, text)
    lines, code = lines_of(box, terminal(box))
    with pytest.raises(json.JSONDecodeError) as error:  # its words and place are this Python's (3.13 changed them)
        json.loads(text)
    where = f"line {error.value.lineno}, column {error.value.colno}: {error.value.msg}"
    assert code == 1 and failures(lines) == [
        f"✘ settings: <tmp>/config/settings.json is not valid JSON ({where}); Claude Code applies none of it"
        " (enabledPlugins, env, permissions)"
    ], lines
    assert not any("disabled" in line for line in lines), lines


def test_a_moved_clone_is_one_failure_naming_the_gone_folder(box: Sandbox) -> None:
    moved = box.root / "old-clone"
    known = {"session-workflow": {"source": {"source": "directory", "path": str(moved)}, "installLocation": str(moved)}}
    box.settings(box.config / "plugins" / "known_marketplaces.json", json.dumps(known))
    box.install_plugin(folder=box.root / "cache" / "session-workflow")
    ready(box)
    lines, code = lines_of(box, terminal(box))
    assert code == 1 and failures(lines) == [
        f"✘ Claude Code plugin: {PLUGIN_ID} is enabled, but the folder Claude Code loads it from, <tmp>/old-clone, is"
        " gone (moved or deleted): Claude Code fails to load it (cache-miss) and runs none of its hooks"
    ], lines


def test_a_missing_install_is_one_failure(box: Sandbox) -> None:
    ready(box)
    lines, code = lines_of(box, terminal(box))
    assert code == 1 and failures(lines) == [
        "✘ Claude Code plugin: session-workflow is not installed for this project (none in"
        " <tmp>/config/plugins/installed_plugins.json); Claude Code runs none of its hooks here"
    ], lines


def test_from_a_cached_copy_the_path_line_names_the_copy_claude_code_runs(
    box: Sandbox, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The doctor of a marketplace's cached copy, while Claude Code runs the plugin from the clone: the PATH line
    names the clone's bin, as the plugin line does, never the cached copy's."""
    cached = box.root / "cache" / "session-workflow"
    (cached / "bin").mkdir(parents=True)
    (cached / "bin" / "session-workflow").write_text("#!/bin/sh\n")
    monkeypatch.setattr(deps, "PLUGIN_ROOT", str(cached))
    known = {"session-workflow": {"source": {"source": "directory", "path": str(REPO)}, "installLocation": str(REPO)}}
    box.settings(box.config / "plugins" / "known_marketplaces.json", json.dumps(known))
    box.install_plugin(folder=cached)
    ready(box)
    lines, _code = lines_of(box, terminal(box))
    (path_line,) = [line for line in lines if "session-workflow on PATH" in line]
    assert "<tmp>/cache" not in path_line and "<repo>/bin" in path_line, lines
    assert any("Claude Code runs it from <repo>, not this copy <tmp>/cache/session-workflow" in line for line in lines)
