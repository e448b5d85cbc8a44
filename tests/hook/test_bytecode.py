"""The hook entry's bytecode rule (``hooks/hook.py``, decided before any import): the plugin's bytecode goes only to
``$CLAUDE_PLUGIN_DATA/pycache``, made 0700 whatever the umask, never into the project or the working directory,
and never into a ``pycache`` someone else could write. Each case runs the real entry cold, as Claude Code does."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def run(cwd: Path, data: Path, umask: int = 0o022) -> subprocess.CompletedProcess[bytes]:
    payload = {"hook_event_name": "UserPromptSubmit", "session_id": "s", "cwd": str(cwd), "prompt": "hi"}
    env = {"PATH": os.environ.get("PATH", ""), "HOME": str(cwd.parent / "home"), "CLAUDE_PLUGIN_DATA": str(data)}
    env["CLAUDE_PROJECT_DIR"] = str(cwd)
    return subprocess.run(
        [sys.executable, "-I", "-S", str(REPO / "hooks" / "hook.py"), "UserPromptSubmit"],
        input=json.dumps(payload).encode(),
        env=env,
        cwd=cwd,
        capture_output=True,
        timeout=60,
        check=True,
        preexec_fn=lambda: os.umask(umask),  # the child's own umask
    )


def compiled(folder: Path) -> list[Path]:
    return [path for path in folder.rglob("*.pyc")] if folder.exists() else []


@pytest.mark.parametrize("umask", [0o000, 0o002, 0o022])
def test_the_data_folders_pycache_is_made_0700_whatever_the_umask(tmp_path: Path, umask: int) -> None:
    project, data = tmp_path / "project", tmp_path / "data"
    project.mkdir()
    data.mkdir()
    assert run(project, data, umask).returncode == 0
    cache = data / "pycache"
    assert cache.stat().st_mode & 0o777 == 0o700 and compiled(cache)
    assert not compiled(project)


def test_a_pycache_others_can_write_is_not_used(tmp_path: Path) -> None:
    project, data = tmp_path / "project", tmp_path / "data"
    project.mkdir()
    (data / "pycache").mkdir(parents=True)
    os.chmod(data / "pycache", 0o777)
    assert run(project, data).returncode == 0
    assert compiled(data / "pycache") == []


@pytest.mark.parametrize("where", ["inside the project", "the working directory itself"])
def test_no_bytecode_in_the_project_or_the_working_directory(tmp_path: Path, where: str) -> None:
    project = tmp_path / "project"
    data = project / ".claude" / "data" if where == "inside the project" else project
    data.mkdir(parents=True)  # the folder exists: only the rule keeps bytecode out of it
    assert run(project, data).returncode == 0
    assert not (data / "pycache").exists() and compiled(project) == []


def test_a_pycache_below_a_folder_the_group_can_write_is_not_used(tmp_path: Path) -> None:
    """The chain up to the home is judged, as the trust folder's: under a group-writable ``~/.claude`` a
    member could rename ``plugins`` away and put a folder of their own, with bytecode in it, in its place."""
    project, home = tmp_path / "project", tmp_path / "home"
    data = home / ".claude" / "plugins" / "data" / "session-workflow"
    project.mkdir()
    data.mkdir(parents=True)
    os.chmod(home / ".claude", 0o775)
    assert run(project, data).returncode == 0
    assert compiled(data) == []
    os.chmod(home / ".claude", 0o755)
    assert run(project, data).returncode == 0
    assert compiled(data / "pycache")
