"""A writer called from Claude Code's Bash tool on a python3 that has neither filelock nor platformdirs, nor pip.

The plugin's ``bin/`` is on the Bash tool's PATH and its first line (``exec python3 -I``) finds the fresh interpreter
(a venv made ``--without-pip``, first on PATH, ``PYTHONNOUSERSITE=1``); the first writer has its base
interpreter's pip install the two pinned wheels into the plugin's data folder, from the ``wheels`` folder instead
of an index, and says so in one line. The hooks run on the same interpreter and need neither package.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from session_workflow.cli.bootstrap import pin_key
from session_workflow.core.deps import is_complete
from tests.cli.test_bootstrap import WHAT

from . import fake_api as F
from .fake_api import FakeAnthropic
from .harness import Claude, new_session_id

pytestmark = pytest.mark.e2e


def test_the_first_writer_installs_once_into_the_plugin_data(
    claude: Claude, fake_api: FakeAnthropic, wheels: Path, tmp_path: Path
) -> None:
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    env = {
        "PATH": os.pathsep.join([str(venv / "bin"), os.environ.get("PATH", "")]),
        "PYTHONNOUSERSITE": "1",
        "SESSION_WORKFLOW_WHEELS": str(wheels),
    }
    probe = subprocess.run(["python3", "-c", "import filelock"], env={**os.environ, **env}, capture_output=True)
    assert probe.returncode != 0, "filelock is importable on the fresh python3: the test would prove nothing"
    fake_api.script(
        F.bash('session-workflow anchor new --task "Fresh machine"'),
        F.bash("session-workflow state set --ticket 16 --title 'Fresh machine' --step execute"),
        F.text("done"),
    )
    sid = new_session_id()
    claude.run(["-p", "go", "--session-id", sid, "--allowedTools", "Bash(session-workflow:*)"], env_extra=env).check()
    first, second = (str(F.last_tool_results(body)) for body in fake_api.message_requests()[1:3])
    target = claude.config_dir / "plugins" / "data" / "session-workflow-inline" / "python-deps" / pin_key()
    said = f"session-workflow: installed {WHAT} from {wheels} into {target}"
    assert said in first and first.count("session-workflow: installed") == 1, first
    assert str(claude.project / ".claude" / "anchors") in first
    assert "installed" not in second and "error" not in second.lower(), second
    assert is_complete(str(target))
    assert (claude.project / ".claude" / "session-workflow" / "work-state.json").is_file()
