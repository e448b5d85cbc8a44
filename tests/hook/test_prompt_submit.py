"""The UserPromptSubmit latch: the section goes out once per snapshot key between session starts."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from session_workflow.core import locations
from session_workflow.core.context import HookContext
from session_workflow.core.places import Places
from session_workflow.hook import compose, prompt_submit
from session_workflow.hook import io as hookio
from session_workflow.workstate import writer as workstate_writer

REPO = Path(__file__).resolve().parents[2]
HOOK = REPO / "hooks" / "hook.py"
SESSION = "0b9f7c1e-2f4a-4c55-9d57-3b1c2a7e9f10"
NOW = 1_795_978_800.0


class Project:
    """A project with a work state, a plugin data dir, and a way to send prompts through the real entry."""

    def __init__(self, root: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[bytes]) -> None:
        self.dir = root / "project"
        self.dir.mkdir()
        self.path = locations.state_path(str(self.dir))
        self.capsys = capsys
        monkeypatch.setenv("CLAUDE_PLUGIN_DATA", str(root / "data"))

    def put(self, owner: str = SESSION, **fields: object) -> None:
        options: dict[str, object] = {"ticket": 34, "title": "Fix the parser", "map_number": 12, "map_given": True}
        options.update({"step": "execute", **fields})
        workstate_writer.set_ticket(self.path, owner, now=NOW, slug="acme/widgets", **options)  # type: ignore[arg-type]

    def payload(self, session: str = SESSION, **extra: object) -> dict[str, object]:
        return {
            "hook_event_name": "UserPromptSubmit",
            "session_id": session,
            "cwd": str(self.dir),
            "prompt": "go",
            **extra,
        }

    def prompt(self, session: str = SESSION, **extra: object) -> str | None:
        """Run the hook as Claude Code would; the delivered text, or None when it printed nothing."""
        stdin = io.BytesIO(json.dumps(self.payload(session, **extra)).encode())
        hookio.run_hook(prompt_submit.prompt_submit, "UserPromptSubmit", stdin=stdin)
        out = self.capsys.readouterr().out
        if not out:
            return None
        body = json.loads(out)
        assert body["hookSpecificOutput"]["hookEventName"] == "UserPromptSubmit"
        text = body["hookSpecificOutput"]["additionalContext"]
        assert isinstance(text, str)
        return text


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsysbinary: pytest.CaptureFixture[bytes]) -> Project:
    return Project(tmp_path, monkeypatch, capsysbinary)


def test_an_identity_change_emits_once(project: Project) -> None:
    project.put()
    first = project.prompt()
    assert first is not None and first.startswith("## Work state (snapshot)\nMap: #12")
    assert 'Ticket: #34 "Fix the parser"' in first and "Step: execute" in first
    assert project.prompt() is None
    project.put(ticket=35, title="Add the cache")
    second = project.prompt()
    assert second is not None and 'Ticket: #35 "Add the cache"' in second
    assert second.startswith(
        "session-workflow: the work state changed; this snapshot supersedes the one in the system prompt"
        " (or earlier in this conversation) until the next compaction refreshes it.\n## Work state (snapshot)\n"
    )
    assert project.prompt() is None
    for change in ({"title": "Add the cache, faster"}, {"map_number": None}, {"auto": True}):
        project.put(ticket=35, **change)
        assert project.prompt() is not None, change
        assert project.prompt() is None


def test_a_step_change_emits_nothing(project: Project) -> None:
    project.put()
    assert project.prompt() is not None
    workstate_writer.set_step(project.path, SESSION, "verify", slug=None, now=NOW)
    workstate_writer.set_paused(project.path, SESSION, True, slug=None, now=NOW)
    assert project.prompt() is None


def test_a_new_session_emits_again_and_the_old_one_goes_quiet(project: Project) -> None:
    project.put()
    assert project.prompt() is not None
    assert project.prompt(session="after-clear") is None, "orphaned: another session's state"
    workstate_writer.adopt(project.path, "after-clear", slug=None, now=NOW)
    adopted = project.prompt(session="after-clear")
    assert adopted is not None and "Step: execute" in adopted
    assert project.prompt(session="after-clear") is None
    assert project.prompt() is None, "the first session's state is now orphaned"


def test_orphaned_or_absent_state_emits_nothing(project: Project) -> None:
    assert project.prompt() is None
    project.put(owner="another-session")
    assert project.prompt() is None
    data = Path(os.environ["CLAUDE_PLUGIN_DATA"]) / locations.RECORDS_FOLDER
    assert not data.exists(), "nothing delivered, nothing recorded"


def _session_start(project: Project, source: str, **extra: object) -> None:
    payload = {**project.payload(), "hook_event_name": "SessionStart", "source": source, **extra}
    compose.compose(HookContext.from_payload(payload, Places(os.environ), NOW))


@pytest.mark.parametrize("source", ["startup", "compact"])
def test_with_the_mod_a_new_thread_is_not_told_twice(project: Project, source: str) -> None:
    project.put()
    _session_start(project, source, session_workflow_mod=1)
    assert project.prompt() is None, "the mod put this snapshot in the thread's system prompt"
    project.put(ticket=35, title="Another ticket")
    text = project.prompt()
    assert text is not None and "#35" in text, "a mid-thread change reaches the model once"
    assert project.prompt() is None


def test_with_the_mod_a_resumed_thread_still_gets_a_change(project: Project) -> None:
    project.put()
    _session_start(project, "startup", session_workflow_mod=1)
    project.put(ticket=36, title="Changed before the resume")
    _session_start(project, "resume", session_workflow_mod=1)
    text = project.prompt()
    assert text is not None and "#36" in text, "a resumed thread keeps its first system prompt"


def test_session_start_resets_the_record(project: Project) -> None:
    project.put()
    assert project.prompt() is not None
    start = HookContext.from_payload(
        {**project.payload(), "hook_event_name": "SessionStart", "source": "compact"}, Places(os.environ), NOW
    )
    compose.session_start(start)
    block = json.loads(project.capsys.readouterr().out)["hookSpecificOutput"]["additionalContext"]
    assert "## Work state (snapshot)" in block
    assert project.prompt() is None, "the SessionStart block carried this snapshot"
    workstate_writer.clear(project.path, SESSION, now=NOW)
    compose.session_start(start)
    project.capsys.readouterr()
    project.put()
    assert project.prompt() is not None, "the compacted context lost the section, so the same key goes out again"


def test_without_a_record_location_nothing_is_emitted(project: Project, monkeypatch: pytest.MonkeyPatch) -> None:
    project.put()
    monkeypatch.delenv("CLAUDE_PLUGIN_DATA")
    monkeypatch.setattr(Places, "state", property(lambda _places: None))
    assert project.prompt() is None, "without a latch it would repeat on every prompt"


def run_hook_process(payload: bytes, env: dict[str, str], *flags: str) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, *flags, "-I", "-S", str(HOOK), "UserPromptSubmit"],
        input=payload,
        capture_output=True,
        env=env,
        timeout=20,
    )


def test_the_real_hook_process_latches_and_imports_only_cheap_modules(project: Project, tmp_path: Path) -> None:
    project.put()
    env = {"PATH": os.environ.get("PATH", ""), "CLAUDE_PLUGIN_DATA": str(tmp_path / "data")}
    payload = json.dumps(project.payload()).encode()
    first = run_hook_process(payload, env, "-X", "importtime")
    assert first.returncode == 0
    assert "Work state (snapshot)" in json.loads(first.stdout)["hookSpecificOutput"]["additionalContext"]
    imported = {line.split("|")[-1].strip() for line in first.stderr.decode().splitlines() if "|" in line}
    heavy = {"filelock", "platformdirs", "typing", "dataclasses", "pathlib", "datetime", "tempfile", "argparse"}
    assert not imported & (heavy | {"contextlib", "logging", "inspect", "hashlib", "subprocess"})
    again = run_hook_process(payload, env)
    assert (again.returncode, again.stdout, again.stderr) == (0, b"", b"")


@pytest.mark.parametrize(
    "stdin",
    [b"", b"not json", b"[]", b'{"session_id": 3}', b'{"cwd": "/nonexistent", "session_id": "s"}', b"\xff" * 64],
)
def test_bad_input_exits_0_and_prints_nothing(tmp_path: Path, stdin: bytes) -> None:
    result = run_hook_process(stdin, {"CLAUDE_PLUGIN_DATA": str(tmp_path)})
    assert (result.returncode, result.stdout, result.stderr) == (0, b"", b"")


def imported_by(result: subprocess.CompletedProcess[bytes]) -> set[str]:
    return {line.split("|")[-1].strip() for line in result.stderr.decode().splitlines() if "|" in line}


def test_a_project_without_work_state_is_decided_before_json_or_re(project: Project, tmp_path: Path) -> None:
    """The most frequent hook in the most common project: no reader, no json, no re (half a Python start)."""
    transcript = tmp_path / "t.jsonl"
    transcript.write_text(json.dumps({"type": "user", "cwd": str(project.dir), "sessionId": SESSION}) + "\n")
    env = {"PATH": os.environ.get("PATH", ""), "CLAUDE_PLUGIN_DATA": str(tmp_path / "data")}
    payload = json.dumps(project.payload(transcript_path=str(transcript))).encode()
    quiet = run_hook_process(payload, env, "-X", "importtime")
    assert (quiet.returncode, quiet.stdout) == (0, b"")
    assert not imported_by(quiet) & {"json", "re", "session_workflow.workstate.state"}
    project.put()
    delivered = run_hook_process(payload, env, "-X", "importtime")
    assert "Work state (snapshot)" in json.loads(delivered.stdout)["hookSpecificOutput"]["additionalContext"]
    assert "session_workflow.workstate.state" in imported_by(delivered)


def test_a_state_in_the_start_dir_is_found_after_the_session_wandered(project: Project, tmp_path: Path) -> None:
    project.put()
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    transcript = tmp_path / "t.jsonl"
    transcript.write_text(json.dumps({"type": "user", "cwd": str(project.dir), "sessionId": SESSION}) + "\n")
    env = {"PATH": os.environ.get("PATH", ""), "CLAUDE_PLUGIN_DATA": str(tmp_path / "data")}
    payload = json.dumps(project.payload(cwd=str(elsewhere), transcript_path=str(transcript))).encode()
    done = run_hook_process(payload, env)
    assert "Work state (snapshot)" in json.loads(done.stdout)["hookSpecificOutput"]["additionalContext"]


@pytest.mark.parametrize("mod", [True, False])
def test_a_state_file_deleted_mid_thread_is_said_gone_once(project: Project, mod: bool) -> None:
    """``git clean -fdx`` deletes the state while the thread's system prompt (the mod) or an earlier block still
    names the ticket: the next prompt says it no longer holds, once."""
    project.put()
    if mod:
        _session_start(project, "startup", session_workflow_mod=1)
    else:
        assert project.prompt() is not None
    os.unlink(project.path)
    said = project.prompt()
    assert said is not None and said.startswith("session-workflow: the work state is gone") and "#34" not in said
    assert project.prompt() is None
    project.put(ticket=35, title="A new ticket")
    again = project.prompt()
    assert again is not None and "#35" in again and "supersedes" not in again


def test_no_state_and_no_record_says_nothing(project: Project) -> None:
    assert project.prompt() is None
    assert project.prompt(session="another") is None
