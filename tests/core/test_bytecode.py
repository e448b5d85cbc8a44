from __future__ import annotations

import os
from pathlib import Path

from session_workflow.core.bytecode import bytecode_folder


def test_the_plugin_data_folder_outside_the_project_holds_the_bytecode(tmp_path: Path) -> None:
    data, project = tmp_path / "data", tmp_path / "project"
    data.mkdir()
    env = {"CLAUDE_PLUGIN_DATA": str(data), "CLAUDE_PROJECT_DIR": str(project)}
    assert bytecode_folder(env, str(project)) == str(data / "pycache")


def test_a_data_folder_a_repository_could_fill_gets_no_bytecode(tmp_path: Path) -> None:
    project = tmp_path / "project"
    (project / "sub").mkdir(parents=True)
    os.symlink(project / "sub", tmp_path / "link")
    (project / "data").mkdir()
    for data in (project / "data", project, tmp_path / "link", "relative/data", "", tmp_path / "does-not-exist"):
        assert bytecode_folder({"CLAUDE_PLUGIN_DATA": str(data), "CLAUDE_PROJECT_DIR": str(project)}, None) is None
        assert bytecode_folder({"CLAUDE_PLUGIN_DATA": str(data)}, str(project)) is None  # the hook's cwd counts too
    assert bytecode_folder({"CLAUDE_PLUGIN_DATA": "/tmp/x\x00y"}, None) is None
