"""``session-workflow doctor`` as the model runs it, in Claude Code's Bash tool on the real CLI.

What only a real session gives: the plugin's bin/ on the Bash tool's PATH, ``AI_AGENT`` naming the build,
``CLAUDE_CODE_SESSION_ID`` to compare a work state's owner with, ``CLAUDECODE=1`` for the plugin's data folder.
"""

from __future__ import annotations

import pytest

from session_workflow.workstate import writer as workstate_writer
from tests.cli.test_fresh_machine import vendored_line

from . import fake_api as F
from .fake_api import FakeAnthropic
from .harness import REPO_ROOT, Claude, new_session_id

pytestmark = pytest.mark.e2e


def test_doctor_in_the_bash_tool_sees_this_plugin_this_build_and_this_session(
    claude: Claude, fake_api: FakeAnthropic
) -> None:
    sid = new_session_id()
    state = claude.project / ".claude" / "session-workflow" / "work-state.json"
    workstate_writer.set_ticket(str(state), sid, ticket=28, title="Doctor", step="verify", now=0.0)
    fake_api.script(F.bash("session-workflow doctor"), F.text("done"))
    claude.run(["-p", "go", "--session-id", sid, "--allowedTools", "Bash(session-workflow:*)"]).check()
    (result,) = F.last_tool_results(fake_api.message_requests()[1])
    lines = result.splitlines()
    assert lines[0] == f"session-workflow doctor: plugin {REPO_ROOT}, project {claude.project}", result
    assert f"✔ session-workflow on PATH: {REPO_ROOT / 'bin' / 'session-workflow'} (this plugin's)" in lines
    assert f'✔ work state: #28 "Doctor" (whiteboard), step verify; owner {sid} (this session)' in lines
    assert (
        "· mod (work state in the system prompt, status line): unknown (Claude Code 2.1.332 can load it; a shell"
        " cannot see whether it did)" in lines
    )
    assert lines[2] == vendored_line(), result  # the plugin folder's copy, whatever python3 has installed
    assert lines[-1].startswith("nothing essential is missing"), result
