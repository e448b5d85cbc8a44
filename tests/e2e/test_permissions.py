"""The README's permission recipe, in a workspace Claude Code was never asked to trust (measured on 2.1.332).

An untrusted workspace drops the project's ``.claude/settings.json`` allow rules ("Dropped 1 project-scoped
permissions.allow entry — workspace not yet trusted" in the debug log) and a ``-p`` run then refuses the Bash
call ("This command requires approval"). ``.claude/settings.local.json``, the user's settings, ``--settings``
and ``--allowedTools`` are honoured there. Nothing here writes a trust record: the config dir starts empty.
"""

from __future__ import annotations

import json
import time

import pytest

from tests import readme

from . import fake_api as F
from .fake_api import FakeAnthropic
from .harness import Claude, new_session_id

pytestmark = pytest.mark.e2e

RULE = "Bash(session-workflow:*)"


def readme_recipe() -> dict[str, object]:
    """The permission step of the README's Quick start, parsed from the README itself, done on a new file."""
    (recipe,) = [recipe for recipe in readme.settings_recipes() if recipe.file == ".claude/settings.local.json"]
    done: dict[str, object] = recipe.apply({})
    assert done == {"permissions": {"allow": [RULE]}}
    return done


def writer_script(anchor: str) -> list[F.Step]:
    return [
        F.bash('session-workflow anchor new --task "Untrusted run"'),
        F.bash(f'session-workflow anchor step {anchor} "wrote the recipe test"'),
        F.bash("session-workflow state set --ticket 16 --title 'Fresh machine' --step execute"),
        F.text("done"),
    ]


def tool_results(api: FakeAnthropic, first: int) -> list[str]:
    return [str(F.last_tool_results(body)) for body in api.message_requests()[first + 1 :]]


def run_writers(claude: Claude, fake_api: FakeAnthropic) -> list[str]:
    first = len(fake_api.message_requests())
    anchor = claude.project / ".claude" / "anchors" / f"{time.strftime('%Y-%m-%d')}-untrusted-run.md"
    fake_api.script(*writer_script(str(anchor)))
    claude.run(["-p", "go", "--session-id", new_session_id(), "--debug-file", str(claude.debug_file())]).check()
    return tool_results(fake_api, first)


def test_the_readme_recipe_lets_every_writer_run_in_a_never_trusted_workspace(
    claude: Claude, fake_api: FakeAnthropic
) -> None:
    assert not (claude.config_dir / ".claude.json").exists() and not (claude.home / ".claude.json").exists()
    (claude.project / ".claude").mkdir()
    (claude.project / ".claude" / "settings.local.json").write_text(json.dumps(readme_recipe()))
    results = run_writers(claude, fake_api)
    assert len(results) == 3 and not any("requires approval" in r for r in results), results
    anchors = list((claude.project / ".claude" / "anchors").glob("*-untrusted-run.md"))
    assert len(anchors) == 1 and "wrote the recipe test" in anchors[0].read_text()
    state = json.loads((claude.project / ".claude" / "session-workflow" / "work-state.json").read_text())
    assert state["ticket"] == 16 and state["step"] == "execute"


def test_the_settings_json_recipe_is_dropped_there(claude: Claude, fake_api: FakeAnthropic) -> None:
    """Why the README keeps ``.claude/settings.json`` for trusted workspaces only."""
    (claude.project / ".claude").mkdir()
    (claude.project / ".claude" / "settings.json").write_text(json.dumps(readme_recipe()))
    results = run_writers(claude, fake_api)
    assert results and all("This command requires approval" in r for r in results), results
    assert "workspace not yet trusted" in claude.debug_file().read_text()
    assert not (claude.project / ".claude" / "anchors").exists()
