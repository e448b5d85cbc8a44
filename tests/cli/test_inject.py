"""``inject --dry-run``: what the hook would send here, the mod detected (or named) and the user's prompts found."""

from __future__ import annotations

import json
import os
import re
import time
from pathlib import Path

import pytest

from session_workflow.cli import inject as inject_cli
from session_workflow.cli.main import main
from session_workflow.core import where
from session_workflow.core.locations import state_path
from session_workflow.core.text import utf16_len
from session_workflow.workstate import writer as workstate_writer
from tests.tasks.test_store import write_task
from tests.trust import trust

SESSION = "4ed8e6eb-f189-463d-a03f-9c47e26c38bf"
REPO = Path(__file__).resolve().parents[2]
ANCHOR = "---\nformat: anchor/v1\n---\n# Port billing\n\n## Cursor\n- Next action: port the refund consumer\n"
SIZE_LINE = re.compile(r"^(\S[^\n]*?)\s+(\d+) UTF-16 units\s+(\d+) bytes$", re.MULTILINE)


def plugin(tmp_path: Path, modules: list[str] | None) -> Path:
    root = tmp_path / "plugin"
    (root / "hooks").mkdir(parents=True)
    config: dict[str, object] = {"hooks": {}}
    if modules is not None:
        config["modules"] = modules
    (root / "hooks" / "hooks.json").write_text(json.dumps(config))
    return root


@pytest.mark.parametrize(
    ("agent", "modules", "loaded", "why"),
    [
        ("claude-code_2-1-332_agent", ["./mod/register.ts"], True, "detected: Claude Code 2.1.332 loads"),
        ("claude-code_2-1-287_agent", ["./mod/register.ts"], True, "detected: Claude Code 2.1.287 loads"),
        ("claude-code_2-1-286_agent", ["./mod/register.ts"], False, "2.1.286 predates hooks modules"),
        ("claude-code_2-1-332_agent", None, False, "declares no mod"),
        (None, ["./mod/register.ts"], False, "not run from Claude Code's Bash tool"),
        ("something-else", ["./mod/register.ts"], False, "not run from Claude Code's Bash tool"),
    ],
)
def test_the_mod_is_detected_from_the_build_and_the_plugin(
    tmp_path: Path, agent: str | None, modules: list[str] | None, loaded: bool, why: str
) -> None:
    found, reason = inject_cli.detect_mod(agent, str(plugin(tmp_path, modules)))
    assert found is loaded and why in reason


def test_this_repository_declares_its_mod() -> None:
    assert str(REPO) == inject_cli.PLUGIN_ROOT and inject_cli.declares_mod(str(REPO))


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A project with a work state and the session's transcript holding two prompts, as Claude Code keeps it."""
    folder = tmp_path / "proj"
    folder.mkdir()
    config = tmp_path / "config"
    transcript = config / "projects" / where.project_slug(str(folder)) / f"{SESSION}.jsonl"
    transcript.parent.mkdir(parents=True)
    with transcript.open("w") as handle:
        for text in ("please ship the exporter", "and keep the old API"):
            record = {"type": "user", "promptSource": "sdk", "cwd": str(folder), "sessionId": SESSION}
            handle.write(json.dumps({**record, "message": {"role": "user", "content": text}}) + "\n")
    workstate_writer.set_ticket(state_path(str(folder)), SESSION, ticket=34, title="Ship", now=time.time())
    for name in ("CLAUDE_PROJECT_DIR", "AI_AGENT"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(config))
    monkeypatch.setenv("CLAUDE_CODE_SESSION_ID", SESSION)
    monkeypatch.setenv("CLAUDE_PLUGIN_DATA", str(tmp_path / "data"))
    monkeypatch.chdir(folder)
    return folder


def dry_run(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    assert main(["inject", "--dry-run", *argv]) == 0
    return capsys.readouterr().out


def test_with_the_mod_detected_the_block_leaves_the_work_state_out(
    project: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AI_AGENT", "claude-code_2-1-332_agent")
    out = dry_run(capsys)
    assert "## Work state (snapshot)" not in out
    assert "> please ship the exporter\n> and keep the old API" in out  # the user-prompts part
    assert (
        "mod: loaded (detected: Claude Code 2.1.332 loads this plugin's hooks/mod/register.ts); the work state goes"
        " in the system prompt, not in this block\n"
    ) in out
    assert f"transcript: {project.parent / 'config' / 'projects'}" in out


def test_no_mod_puts_the_work_state_in_the_block_and_says_so(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = dry_run(capsys, "--no-mod")
    assert "## Work state (snapshot)" in out and "> and keep the old API" in out
    assert "\nmod: not loaded (--no-mod given)\n" in out
    out = dry_run(capsys, "--mod")
    assert "## Work state (snapshot)" not in out and "mod: loaded (--mod given)" in out
    out = dry_run(capsys)
    assert "mod: not loaded (not run from Claude Code's Bash tool; --mod shows the block with the mod loaded)" in out


def test_nothing_to_say_still_names_the_mod_and_the_transcript(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("CLAUDE_CODE_SESSION_ID", raising=False)
    monkeypatch.delenv("AI_AGENT", raising=False)
    out = dry_run(capsys, "--source", "startup")
    assert out.startswith("(nothing to inject at SessionStart:startup for ")
    assert "transcript: none (no user prompts; --transcript names one)" in out


# --- nothing written, whatever the source and the mod; sizes that add up ---------------------------------------


def snapshot(root: Path) -> dict[str, tuple[bytes, int] | None]:
    """Every directory and file under ``root`` with each file's bytes and mtime: what a write would change."""
    found: dict[str, tuple[bytes, int] | None] = {}
    for folder, dirs, files in os.walk(root):
        for name in dirs:
            found[os.path.join(folder, name)] = None
        for name in files:
            path = os.path.join(folder, name)
            found[path] = (Path(path).read_bytes(), os.stat(path).st_mtime_ns)
    return found


@pytest.fixture()
def full_project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A project with an anchor, a work state this session owns, open tasks and a stale delivery record."""
    folder = tmp_path / "project"
    (folder / ".claude" / "anchors").mkdir(parents=True)
    (folder / ".claude" / "anchors" / "a.md").write_text(ANCHOR, encoding="utf-8")
    trust(folder / ".claude" / "anchors" / "a.md")
    state = {"version": 1, "ticket": 34, "title": "Fix the parser", "map": 12, "step": "plan", "session": SESSION}
    (folder / ".claude" / "session-workflow").mkdir(parents=True)
    (folder / ".claude" / "session-workflow" / "work-state.json").write_text(json.dumps(state), encoding="utf-8")
    write_task(tmp_path / "config" / "tasks" / SESSION, 1, "in_progress", "Write the refund port")
    records = tmp_path / "data" / "work-state-delivered"
    records.mkdir(parents=True)
    (records / f"{SESSION}.key").write_text("a key from an earlier thread")
    monkeypatch.setenv("CLAUDE_PLUGIN_DATA", str(tmp_path / "data"))
    monkeypatch.delenv("SESSION_WORKFLOW_ANCHOR_HOOKS", raising=False)
    monkeypatch.delenv("CLAUDE_CODE_TASK_LIST_ID", raising=False)
    monkeypatch.delenv("AI_AGENT", raising=False)
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "config"))
    return folder


@pytest.mark.parametrize("mod", ["--mod", "--no-mod"])
@pytest.mark.parametrize("source", ["compact", "resume", "startup", "clear"])
def test_the_dry_run_prints_the_block_and_its_sizes_and_writes_nothing(
    full_project: Path, source: str, mod: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """With the mod (the record of what it delivered) or without (the block's section): nothing is written."""
    project = full_project
    before = snapshot(project.parent)
    assert main(["inject", "--dry-run", mod, "--source", source, "--cwd", str(project), "--session", SESSION]) == 0
    assert snapshot(project.parent) == before  # no .gitignore, no telemetry, the delivery record kept
    block, sizes = capsys.readouterr().out.split("\n--- sizes ---\n")
    assert block.startswith("session-workflow:") and "port the refund consumer" in block
    assert ("Write the refund port" in block) == (source != "clear")  # a clear gets no task block at all
    assert ("Fix the parser" in block) == (mod == "--no-mod")
    rows = {name.strip(): (int(units), int(size)) for name, units, size in SIZE_LINE.findall(sizes)}
    assert "anchor" in rows and ("tasks" in rows) == (source != "clear")
    assert rows["total"][0] == utf16_len(block.rstrip("\n")) <= 10_000
    parts = [units for name, (units, _size) in rows.items() if name != "total"]
    assert sum(parts) + 2 * len(parts) + utf16_len(block.split("\n", 1)[0]) == rows["total"][0]


def test_a_dry_run_keeps_the_delivery_record_a_real_start_would_reset(
    full_project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Without an owned state the hook forgets this session's record; the dry run must not."""
    project = full_project
    (project / ".claude" / "session-workflow" / "work-state.json").unlink()
    before = snapshot(project.parent)
    assert main(["inject", "--dry-run", "--no-mod", "--cwd", str(project), "--session", SESSION]) == 0
    assert snapshot(project.parent) == before
    assert "port the refund consumer" in capsys.readouterr().out
