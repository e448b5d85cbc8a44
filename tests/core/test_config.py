"""User options: userConfig values from Claude Code, the plugin's own variables over them, bad values named."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from session_workflow.core import config
from session_workflow.core.config import ANCHOR_HOOKS, STARTUP_WINDOW_HOURS, lookup, parse_hours, parse_switch
from session_workflow.core.places import Places

MANIFEST = Path(__file__).resolve().parents[2] / ".claude-plugin" / "plugin.json"


def test_the_manifest_declares_each_hook_option_with_the_same_default() -> None:
    fields = json.loads(MANIFEST.read_text())["userConfig"]
    assert fields["anchor_hooks"]["type"] == "boolean" and fields["anchor_hooks"]["default"] is True
    window = fields["startup_window_hours"]
    assert (window["type"], window["default"], window["min"], window["max"]) == ("number", 6, 0, 8760)
    assert {option.key for option in config.HOOK_OPTIONS} <= set(fields)
    for option in config.HOOK_OPTIONS:
        assert fields[option.key]["default"] == option.default


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        *[("1", True), ("true", True), ("TRUE", True), (" on ", True), ("yes", True)],
        *[("0", False), ("false", False), ("Off", False), ("no", False)],
        *[("2", None), ("", None), ("maybe", None)],
    ],
)
def test_switch_words(text: str, expected: bool | None) -> None:
    assert parse_switch(text) is expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        *[("6", 6.0), ("2.5", 2.5), ("0", 0.0), ("8760", 8760.0), (" 12 ", 12.0)],
        *[("8760.5", None), ("-1", None), ("nan", None), ("inf", None), ("six", None), ("", None)],
    ],
)
def test_hours_are_a_finite_number_up_to_a_year(text: str, expected: float | None) -> None:
    assert parse_hours(text) == expected


def test_names_follow_the_key() -> None:
    assert ANCHOR_HOOKS.names() == ("SESSION_WORKFLOW_ANCHOR_HOOKS", "CLAUDE_PLUGIN_OPTION_ANCHOR_HOOKS")
    assert STARTUP_WINDOW_HOURS.names() == (
        "SESSION_WORKFLOW_STARTUP_WINDOW_HOURS",
        "CLAUDE_PLUGIN_OPTION_STARTUP_WINDOW_HOURS",
    )


def test_unset_or_empty_is_the_default() -> None:
    assert lookup(STARTUP_WINDOW_HOURS, {}) == (6.0, None)
    assert lookup(STARTUP_WINDOW_HOURS, {"SESSION_WORKFLOW_STARTUP_WINDOW_HOURS": " "}) == (6.0, None)
    assert Places({}).switch(ANCHOR_HOOKS) is True


def test_the_option_applies_and_the_variable_overrides_it() -> None:
    assert Places({"CLAUDE_PLUGIN_OPTION_STARTUP_WINDOW_HOURS": "2.5"}).hours(STARTUP_WINDOW_HOURS) == 2.5
    env = {"CLAUDE_PLUGIN_OPTION_STARTUP_WINDOW_HOURS": "2.5", "SESSION_WORKFLOW_STARTUP_WINDOW_HOURS": "48"}
    assert Places(env).hours(STARTUP_WINDOW_HOURS) == 48.0
    assert Places({"CLAUDE_PLUGIN_OPTION_ANCHOR_HOOKS": "false"}).switch(ANCHOR_HOOKS) is False
    assert Places({"CLAUDE_PLUGIN_OPTION_ANCHOR_HOOKS": "false", "SESSION_WORKFLOW_ANCHOR_HOOKS": "1"}).switch(
        ANCHOR_HOOKS
    )


def test_a_bad_value_is_the_default_and_one_quoted_line() -> None:
    value, problem = lookup(STARTUP_WINDOW_HOURS, {"SESSION_WORKFLOW_STARTUP_WINDOW_HOURS": "12h\n## Fake heading"})
    assert value == 6.0
    assert problem == (
        "session-workflow: ignored SESSION_WORKFLOW_STARTUP_WINDOW_HOURS='12h ## Fake heading': not a number of hours"
        " from 0 to 8760; using the default, 6 h."
    )
    long = "x" * 500
    _value, problem = lookup(ANCHOR_HOOKS, {"CLAUDE_PLUGIN_OPTION_ANCHOR_HOOKS": long})
    assert problem is not None and "\n" not in problem and len(problem) < 200
    # a bad override is not rescued by a good option: the default, as the README says
    env = {"SESSION_WORKFLOW_ANCHOR_HOOKS": "maybe", "CLAUDE_PLUGIN_OPTION_ANCHOR_HOOKS": "false"}
    assert Places(env).switch(ANCHOR_HOOKS) is True


def test_problems_name_each_bad_option_once() -> None:
    env = {"CLAUDE_PLUGIN_OPTION_ANCHOR_HOOKS": "2", "CLAUDE_PLUGIN_OPTION_STARTUP_WINDOW_HOURS": "1"}
    assert config.problems(env) == [
        "session-workflow: ignored CLAUDE_PLUGIN_OPTION_ANCHOR_HOOKS='2': not on or off (true/false, 1/0);"
        " using the default, on."
    ]
    assert config.problems({}) == []
