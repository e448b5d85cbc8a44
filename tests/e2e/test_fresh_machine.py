"""Writers and the doctor called from Claude Code's Bash tool on a python3 that has neither filelock nor
platformdirs, nor pip, with no package index at all.

The plugin's ``bin/`` is on the Bash tool's PATH and its first line (``exec python3 -I``) finds the fresh interpreter
(a venv made ``--without-pip``, first on PATH, ``PYTHONNOUSERSITE=1``); ``PIP_INDEX_URL`` is a closed loopback port
and pip has no configuration. The first writer imports the plugin folder's vendored copy and says nothing about it;
the doctor names that copy, as it does from a terminal; nothing lands in the plugin folder.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.cli.test_fresh_machine import OFFLINE_INDEX, plugin_bytecode_folders, vendored_line

from . import fake_api as F
from .fake_api import FakeAnthropic
from .harness import REPO_ROOT, Claude, new_session_id

pytestmark = pytest.mark.e2e


def test_the_first_writer_and_the_doctor_need_no_install(
    claude: Claude, fake_api: FakeAnthropic, tmp_path: Path
) -> None:
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    env = {
        "PATH": os.pathsep.join([str(venv / "bin"), os.environ.get("PATH", "")]),
        "PYTHONNOUSERSITE": "1",
        **OFFLINE_INDEX,
    }
    probe = subprocess.run(["python3", "-c", "import filelock"], env={**os.environ, **env}, capture_output=True)
    assert probe.returncode != 0, "filelock is importable on the fresh python3: the test would prove nothing"
    before = plugin_bytecode_folders()
    fake_api.script(
        F.bash('session-workflow anchor new --task "Fresh machine"'),
        F.bash("session-workflow state set --ticket 16 --title 'Fresh machine' --step execute"),
        F.bash("session-workflow doctor"),
        F.text("done"),
    )
    sid = new_session_id()
    claude.run(["-p", "go", "--session-id", sid, "--allowedTools", "Bash(session-workflow:*)"], env_extra=env).check()
    first, second, doctor = ("\n".join(F.last_tool_results(body)) for body in fake_api.message_requests()[1:4])
    assert first.startswith(str(claude.project / ".claude" / "anchors")) and "\n" not in first.strip(), first
    assert second.startswith("work state: #16"), second
    assert vendored_line() in doctor.splitlines() and "nothing essential is missing" in doctor, doctor
    terminal = subprocess.run(
        [str(REPO_ROOT / "bin" / "session-workflow"), "doctor"],
        env={**claude.env(env)},
        cwd=claude.project,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert terminal.stdout.splitlines()[2] == vendored_line(), terminal.stdout
    assert (claude.project / ".claude" / "session-workflow" / "work-state.json").is_file()
    assert plugin_bytecode_folders() == before
    data = claude.config_dir / "plugins" / "data" / "session-workflow-inline"
    assert not (data / "python-deps").exists()
