"""Where the trust records live, and the symlink test every writer runs before it writes."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from session_workflow.core.locations import leads_outside, resolves_inside, trust_dir, user_state_root


@pytest.mark.parametrize(
    ("env", "platform", "expected"),
    [
        ({"HOME": "/home/u"}, "linux", "/home/u/.local/state/session-workflow"),
        ({"HOME": "/home/u", "XDG_STATE_HOME": "/xdg"}, "linux", "/xdg/session-workflow"),
        ({"HOME": "/home/u", "XDG_STATE_HOME": "relative"}, "linux", "/home/u/.local/state/session-workflow"),
        ({"HOME": "/Users/u"}, "darwin", "/Users/u/Library/Application Support/session-workflow"),
        ({"HOME": "/Users/u", "XDG_STATE_HOME": "/xdg"}, "darwin", "/xdg/session-workflow"),
        ({}, "linux", None),
        ({"HOME": "relative"}, "linux", None),
        ({"HOME": "/home/u\x00x"}, "linux", None),
    ],
)
def test_user_state_root_needs_only_the_environment(env: dict[str, str], platform: str, expected: str | None) -> None:
    assert user_state_root(env, platform) == expected


def test_trust_dir_is_never_inside_a_project_and_ignores_plugin_data() -> None:
    env = {"HOME": "/home/u", "CLAUDE_PLUGIN_DATA": "/data", "CLAUDE_PROJECT_DIR": "/home/u/proj"}
    assert trust_dir(env) == os.path.join(user_state_root(env) or "", "anchors")
    assert trust_dir({}) is None


def test_leads_outside_names_the_first_link_out(tmp_path: Path) -> None:
    project, outside = tmp_path / "proj", tmp_path / "outside"
    (project / "inner").mkdir(parents=True)
    outside.mkdir()
    (project / ".claude").symlink_to(outside)
    (project / "inner" / "back").symlink_to(project / "inner")
    assert leads_outside(str(project), str(project / ".claude" / "anchors" / "a.md")) == (
        str(project / ".claude"),
        str(outside),
    )
    assert leads_outside(str(project), str(project / "inner" / "back" / "x")) is None
    assert leads_outside(str(project), str(tmp_path / "elsewhere")) == (str(tmp_path / "elsewhere"),) * 2
    assert resolves_inside(str(project / "inner" / "back"), str(project))
    assert not resolves_inside(str(project / ".claude"), str(project))
