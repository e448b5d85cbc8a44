"""The plugin's userConfig options on the real CLI: set in settings (``pluginConfigs``), they reach the hooks as
``CLAUDE_PLUGIN_OPTION_<KEY>`` (a field left at its default is not exported at all, measured on 2.1.332)."""

from __future__ import annotations

import json

import pytest

from .fake_api import FakeAnthropic
from .harness import Claude, new_session_id, session_start_contexts
from .test_scenarios import ANCHOR_HEADING, TASKS_HEADER, write_anchor

pytestmark = pytest.mark.e2e


def configure(claude: Claude, **options: object) -> None:
    settings = {"pluginConfigs": {"session-workflow@inline": {"options": options}}}
    (claude.config_dir / "settings.json").write_text(json.dumps(settings), encoding="utf-8")


def startup_block(claude: Claude, fake_api: FakeAnthropic) -> str:
    sid = new_session_id()
    claude.write_task(sid, 1, "OPEN-TASK: keep going", "in_progress")
    claude.run(["-p", "hi", "--session-id", sid]).check()
    ours = [c for c in session_start_contexts(fake_api.message_requests()[-1]) if c.startswith("session-workflow: ")]
    assert len(ours) == 1, ours
    return ours[0]


def test_anchor_hooks_off_leaves_the_anchor_out(claude: Claude, fake_api: FakeAnthropic) -> None:
    write_anchor(claude.project)
    configure(claude, anchor_hooks=False)
    block = startup_block(claude, fake_api)
    assert ANCHOR_HEADING not in block and TASKS_HEADER in block
    # The session keeps an anchor it is not shown: one line says which variable switched it off, and where.
    assert (
        "session-workflow: this session's control anchor is not shown: CLAUDE_PLUGIN_OPTION_ANCHOR_HOOKS='false'"
        " switches it off, set in the environment by the user's settings.json." in block.splitlines()
    )


def test_the_startup_window_is_the_option(claude: Claude, fake_api: FakeAnthropic) -> None:
    write_anchor(claude.project, age_hours=1)
    assert ANCHOR_HEADING in startup_block(claude, fake_api)  # the default window is 6 h
    configure(claude, startup_window_hours=0.5)
    block = startup_block(claude, fake_api)
    assert ANCHOR_HEADING not in block and TASKS_HEADER in block
