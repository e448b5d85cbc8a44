"""The composer: which parts each source gets, and the allocator's invariants under the 10,000-unit cap."""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from session_workflow.anchor import part as anchor_part
from session_workflow.core import locations
from session_workflow.core.context import HookContext
from session_workflow.core.parts import PreparedPart
from session_workflow.core.places import Places
from session_workflow.core.text import cut_utf16, utf16_len
from session_workflow.hook import compose, parts
from session_workflow.hook.parts import Part
from session_workflow.tasks import store as tasks
from session_workflow.transcript import recovery
from session_workflow.workstate import part as workstate_part
from tests.trust import state_env, trust

SRC = str(Path(__file__).resolve().parents[2] / "src")
UNCHANGED = "unchanged since the session-workflow SessionStart ({}) block above, which still holds it."


class FakePart(PreparedPart):
    """Renders its text cut to the budget, or nothing below its floor."""

    def __init__(self, name: str, text: str, cap: int, floor: int = 0) -> None:
        self.name, self.text, self.cap, self.floor = name, text, cap, floor
        self.budgets: list[int] = []
        self.emitted: list[bool] = []

    def render(self, budget: int) -> str:
        self.budgets.append(budget)
        return cut_utf16(self.text, budget)

    def after_emit(self, emitted: bool) -> None:
        self.emitted.append(emitted)


def _ctx(source: str | None, **extra: object) -> HookContext:
    payload: dict[str, object] = {"session_id": "s1", "cwd": "/nowhere", **extra}
    if source is not None:
        payload["source"] = source
    return HookContext.from_payload(payload, Places({}), 0.0)


@pytest.fixture()
def calls(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Replace every part's prepare with one that records its name and returns a small part."""
    seen: list[str] = []
    modules = {"work state": workstate_part, "anchor": anchor_part, "tasks": tasks, "recovery": recovery}
    for name, module in modules.items():

        def prepare(ctx: HookContext, *_: object, name: str = name) -> PreparedPart:
            seen.append(name)
            return FakePart(name, f"[{name}]", cap=100)

        monkeypatch.setattr(module, "prepare", prepare)
    monkeypatch.setattr(locations, "any_anchors", lambda folders: True)
    monkeypatch.setattr(locations, "any_work_state", lambda folders, env, session: True)
    return seen


@pytest.mark.parametrize(
    ("source", "parts"),
    [
        ("compact", ["work state", "anchor", "tasks", "recovery"]),
        ("resume", ["work state", "anchor", "tasks"]),
        ("startup", ["work state", "anchor", "tasks"]),
        ("clear", ["work state", "anchor"]),
        ("other", []),
        (None, []),
    ],
)
def test_parts_per_source(calls: list[str], source: str | None, parts: list[str]) -> None:
    text = compose.compose(_ctx(source)).text
    assert calls == parts
    for name in parts:
        assert f"[{name}]" in text
    assert (text == "") == (not parts)


def test_recovery_alone_is_not_injected(calls: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    for module in (workstate_part, anchor_part, tasks):
        monkeypatch.setattr(module, "prepare", lambda ctx, *_: None)
    assert compose.compose(_ctx("compact")).text == ""
    assert "recovery" not in calls
    monkeypatch.setattr(workstate_part, "note_mod_delivery", lambda ctx, record: True)
    assert "[recovery]" in compose.compose(_ctx("compact", session_workflow_mod=1)).text, "the mod delivers state"


def test_mod_delivers_work_state(calls: list[str]) -> None:
    compose.compose(_ctx("compact", session_workflow_mod=1))
    assert calls == ["anchor", "tasks", "recovery"]


@pytest.mark.parametrize(
    "env",
    [
        {"SESSION_WORKFLOW_ANCHOR_HOOKS": "0"},
        {"SESSION_WORKFLOW_ANCHOR_HOOKS": "no"},
        {"CLAUDE_PLUGIN_OPTION_ANCHOR_HOOKS": "false"},
        {"CLAUDE_PLUGIN_OPTION_ANCHOR_HOOKS": "true", "SESSION_WORKFLOW_ANCHOR_HOOKS": "off"},
    ],
)
def test_anchor_opt_out(calls: list[str], env: dict[str, str]) -> None:
    composition = compose.compose(HookContext.from_payload({"source": "compact"}, Places(env), 0.0))
    assert calls == ["work state", "tasks", "recovery"]
    assert "ignored" not in composition.text
    name = (
        "SESSION_WORKFLOW_ANCHOR_HOOKS"
        if "SESSION_WORKFLOW_ANCHOR_HOOKS" in env
        else "CLAUDE_PLUGIN_OPTION_ANCHOR_HOOKS"
    )
    lines = [line for line in composition.text.splitlines() if "is not shown" in line]
    assert lines == [
        f"session-workflow: this session's control anchor is not shown: {name}={env[name]!r} switches it off, set"
        + lines[0].split(" switches it off, set", 1)[1]
    ]
    assert "[anchor]" not in composition.text  # never the part


def test_a_switched_off_anchor_is_no_restored_state_for_the_users_words(
    calls: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """At compact, the line saying the anchor is switched off restores nothing: the user's quoted prompts do not
    ride along with it (the recovery part follows restored state only)."""
    for module in (workstate_part, tasks):
        monkeypatch.setattr(module, "prepare", lambda ctx: None)
    text = compose.compose(
        HookContext.from_payload({"source": "compact"}, Places({"SESSION_WORKFLOW_ANCHOR_HOOKS": "0"}), 0.0)
    ).text
    assert "control anchor is not shown" in text
    assert "recovery" not in calls and "[recovery]" not in text


# --- a switched-off part says so, and where the variable is set --------------------------------------------------

OFF_LINE = "session-workflow: this session's control anchor is not shown: {name}='{value}' switches it off, {where}."


def switched_project(tmp_path: Path, settings: dict[str, object] | None, leaf: str = "settings.json") -> Path:
    project = tmp_path / "project"
    (project / ".claude" / "anchors").mkdir(parents=True)
    (project / ".claude" / "anchors" / "a.md").write_text("# Run\n\n## Cursor\n- Next action: go\n")
    if settings is not None:
        (project / ".claude" / leaf).write_text(json.dumps(settings))
    return project


def off_block(project: Path, env: dict[str, str], session: str = "s1") -> str:
    payload = {"session_id": session, "cwd": str(project), "source": "compact"}
    return compose.compose(HookContext.from_payload(payload, Places(env), 0.0)).text


@pytest.mark.parametrize("leaf", ["settings.json", "settings.local.json"])
def test_a_switch_in_the_projects_env_block_is_named_as_the_projects(tmp_path: Path, leaf: str) -> None:
    """A committed env block with SESSION_WORKFLOW_ANCHOR_HOOKS=0 dropped the session's anchor without a word."""
    project = switched_project(tmp_path, {"env": {"SESSION_WORKFLOW_ANCHOR_HOOKS": "0"}}, leaf)
    env = {"SESSION_WORKFLOW_ANCHOR_HOOKS": "0", "CLAUDE_CONFIG_DIR": str(tmp_path / "config")}
    text = off_block(project, env)
    where = f"set in the environment by this project's .claude/{leaf}"
    assert text.splitlines()[2:] == [OFF_LINE.format(name="SESSION_WORKFLOW_ANCHOR_HOOKS", value="0", where=where)]
    assert "Next action: go" not in text


def test_a_switch_no_settings_file_names_says_what_can_be_told(tmp_path: Path) -> None:
    project = switched_project(tmp_path, {"env": {"OTHER": "1"}})
    text = off_block(project, {"SESSION_WORKFLOW_ANCHOR_HOOKS": "off", "CLAUDE_CONFIG_DIR": str(tmp_path / "c")})
    where = "set in the environment (the shell Claude Code started from, or a settings env block this hook cannot see)"
    assert OFF_LINE.format(name="SESSION_WORKFLOW_ANCHOR_HOOKS", value="off", where=where) in text


def test_the_options_variable_is_named_with_the_option_and_the_users_settings(tmp_path: Path) -> None:
    project = switched_project(tmp_path, None)
    config = tmp_path / "config"
    config.mkdir()
    env = {"CLAUDE_PLUGIN_OPTION_ANCHOR_HOOKS": "false", "CLAUDE_CONFIG_DIR": str(config)}
    where = (
        "set in the environment, possibly by Claude Code from the plugin's anchor_hooks option or by a settings file"
        " this hook cannot see"
    )
    assert OFF_LINE.format(name="CLAUDE_PLUGIN_OPTION_ANCHOR_HOOKS", value="false", where=where) in off_block(
        project, env
    )
    settings = {"pluginConfigs": {"session-workflow@session-workflow": {"options": {"anchor_hooks": False}}}}
    (config / "settings.json").write_text(json.dumps(settings))
    where = "set in the environment by the user's settings.json"
    assert OFF_LINE.format(name="CLAUDE_PLUGIN_OPTION_ANCHOR_HOOKS", value="false", where=where) in off_block(
        project, env
    )


def test_a_switched_off_part_costs_a_session_without_one_nothing(tmp_path: Path) -> None:
    """No anchors folder and no anchor this session keeps: no line (and no settings file is read)."""
    project = tmp_path / "bare"
    project.mkdir()
    assert off_block(project, {"SESSION_WORKFLOW_ANCHOR_HOOKS": "0"}) == ""


@pytest.mark.parametrize(
    "env",
    [
        {},
        {"CLAUDE_PLUGIN_OPTION_ANCHOR_HOOKS": "true"},
        {"CLAUDE_PLUGIN_OPTION_ANCHOR_HOOKS": "false", "SESSION_WORKFLOW_ANCHOR_HOOKS": "1"},
    ],
)
def test_anchor_on(calls: list[str], env: dict[str, str]) -> None:
    compose.compose(HookContext.from_payload({"source": "compact"}, Places(env), 0.0))
    assert "anchor" in calls


def test_a_bad_option_value_is_the_default_named_once_in_the_block(calls: list[str]) -> None:
    env = {"CLAUDE_PLUGIN_OPTION_ANCHOR_HOOKS": "maybe", "CLAUDE_PLUGIN_OPTION_STARTUP_WINDOW_HOURS": "-3"}
    text = compose.compose(HookContext.from_payload({"source": "compact"}, Places(env), 0.0)).text
    assert "anchor" in calls
    lines = text.split("\n\n")[0].splitlines()
    assert lines[1:] == [
        "session-workflow: ignored CLAUDE_PLUGIN_OPTION_ANCHOR_HOOKS='maybe': not on or off (true/false, 1/0);"
        " using the default, on.",
        "session-workflow: ignored CLAUDE_PLUGIN_OPTION_STARTUP_WINDOW_HOURS='-3': not a number of hours from 0 to"
        " 8760; using the default, 6 h.",
    ]
    assert text.count("ignored CLAUDE_PLUGIN_OPTION_ANCHOR_HOOKS") == 1


def test_block_golden() -> None:
    parts: list[PreparedPart] = [FakePart("anchor", "ANCHOR", 100), FakePart("tasks", "TASKS", 100)]
    assert compose.allocate("compact", parts).text == (
        "session-workflow: state restored from disk at SessionStart (compact); it outranks the summary of earlier"
        " context.\n\nANCHOR\n\nTASKS"
    )
    assert compose.allocate("startup", parts).text.startswith(
        "session-workflow: state restored from disk at SessionStart (startup).\n\n"
    )


def test_nothing_to_say_is_zero_bytes() -> None:
    assert compose.allocate("compact", []).text == ""


def test_budget_is_cap_minus_later_floors() -> None:
    anchor = FakePart("anchor", "a" * 20_000, cap=8000, floor=100)
    tasks = FakePart("tasks", "t" * 5000, cap=4096, floor=300)
    recovery = FakePart("recovery", "r" * 3000, cap=2800, floor=200)
    state = FakePart("work state", "w" * 1024, cap=1024, floor=1024)
    result = compose.allocate("compact", [state, anchor, tasks, recovery])
    assert utf16_len(result.text) <= compose.CAP_UTF16
    assert state.budgets == [1024]
    assert anchor.budgets[0] == 8000
    # Exactly what is left of 10,000 units once the header, the 200 kept for the closing lines, each part before
    # and each separator ("\n\n", 2 units, before every part) are counted: a separator left out of the count
    # would give a later part more than the cap holds.
    left = 10_000 - 200 - utf16_len(compose.header("compact")) - (2 + 1024) - (2 + 8000)
    assert tasks.budgets == [left - 2 - (2 + 200)]
    assert recovery.budgets == [left - 2 - tasks.budgets[0] - 2]
    assert recovery.budgets == [200]
    assert utf16_len(result.text) == 10_000 - 200
    assert result.omitted == []


def test_part_below_its_floor_is_named() -> None:
    anchor = FakePart("anchor", "a" * 9500, cap=9500, floor=9500)
    tasks = FakePart("tasks", "t" * 500, cap=4096, floor=600)
    result = compose.allocate("compact", [anchor, tasks])
    assert anchor.budgets == [9500]
    assert result.omitted == ["tasks"]
    assert result.text.endswith("session-workflow: omitted for space: tasks.")
    assert utf16_len(result.text) <= compose.CAP_UTF16


def test_session_start_writes_hook_json_then_calls_after_emit(
    monkeypatch: pytest.MonkeyPatch, capsysbinary: pytest.CaptureFixture[bytes]
) -> None:
    part = FakePart("anchor", "ANCHOR 😀", 100)
    monkeypatch.setattr(compose, "prepare_parts", lambda ctx: [part])
    compose.session_start(_ctx("resume"))
    body = json.loads(capsysbinary.readouterr().out)
    assert body["hookSpecificOutput"]["hookEventName"] == "SessionStart"
    assert body["hookSpecificOutput"]["additionalContext"].endswith("ANCHOR 😀")
    assert part.emitted == [True]


def test_session_start_prints_nothing_without_parts(
    monkeypatch: pytest.MonkeyPatch, capsysbinary: pytest.CaptureFixture[bytes]
) -> None:
    monkeypatch.setattr(compose, "prepare_parts", lambda ctx: [])
    compose.session_start(_ctx("compact"))
    assert capsysbinary.readouterr().out == b""


_parts = st.lists(
    st.tuples(
        st.sampled_from(["work state", "anchor", "tasks", "recovery"]),
        st.text(min_size=0, max_size=12_000),
        st.integers(min_value=0, max_value=12_000),
        st.integers(min_value=0, max_value=3_000),
    ),
    max_size=4,
)


@given(_parts)
def test_any_parts_stay_under_the_cap_and_name_what_they_cut(specs: list[tuple[str, str, int, int]]) -> None:
    parts: list[PreparedPart] = [FakePart(name, text, cap, floor) for name, text, cap, floor in specs]
    result = compose.allocate("compact", parts)
    assert utf16_len(result.text) <= compose.CAP_UTF16
    for name in result.omitted:
        assert name in result.text.rsplit("\n", 1)[-1]


def test_parts_without_state_on_disk_are_not_even_imported(tmp_path: Path) -> None:
    """A session with no anchors folder, no work state, no delivery record and no list of kept anchors (in a state
    dir that exists) loads neither part's module."""
    script = (
        "import json, sys; sys.path.insert(0, sys.argv[1])\n"
        "from session_workflow.core import context, places\nfrom session_workflow.hook import compose\n"
        "payload = {'source': 'startup', 'session_id': 's1', 'cwd': sys.argv[2]}\n"
        "env = {'CLAUDE_PLUGIN_DATA': sys.argv[3], 'CLAUDE_CONFIG_DIR': sys.argv[3], 'XDG_STATE_HOME': sys.argv[3]}\n"
        "assert compose.compose(context.HookContext.from_payload(payload, places.Places(env), 0.0)).text == ''\n"
        "print(sorted(m for m in sys.modules if m.startswith('session_workflow.')))"
    )
    (tmp_path / "proj").mkdir()
    (tmp_path / "data").mkdir()
    done = subprocess.run(
        [sys.executable, "-c", script, SRC, str(tmp_path / "proj"), str(tmp_path / "data")],
        capture_output=True,
        text=True,
        check=True,
    )
    loaded = set(ast.literal_eval(done.stdout))
    assert not loaded & {
        "session_workflow.anchor.part",
        "session_workflow.anchor.discover",
        "session_workflow.workstate.part",
        "session_workflow.workstate.state",
        "session_workflow.transcript.recovery",
    }


# --- resume: what the thread still holds is not sent again ----------------------------------------------------


def test_a_part_an_earlier_block_holds_whole_is_one_line_and_a_changed_one_is_whole() -> None:
    earlier = compose.allocate(
        "compact", [FakePart("anchor", "ANCHOR\n\nwith a blank line", 100), FakePart("tasks", "TASKS", 100)]
    )
    parts: list[PreparedPart] = [
        FakePart("anchor", "ANCHOR\n\nwith a blank line", 100),
        FakePart("tasks", "TASKS changed", 100),
    ]
    assert compose.allocate("resume", parts, earlier=[earlier.text]).text == (
        "session-workflow: state restored from disk at SessionStart (resume); it outranks anything earlier in this"
        " thread.\n\n"
        "Control anchor: unchanged since the session-workflow SessionStart (compact) block above, which still "
        "holds it.\n\n"
        "TASKS changed"
    )


def test_only_a_whole_part_counts_and_no_earlier_block_sends_everything() -> None:
    earlier = compose.allocate("startup", [FakePart("tasks", "TASKS and more", 100)]).text
    part = FakePart("tasks", "TASKS", 100)
    assert compose.allocate("resume", [part], earlier=[earlier]).text.endswith("\n\nTASKS")
    assert compose.allocate("resume", [part], earlier=[]).text.endswith("\n\nTASKS")
    assert compose.allocate("resume", [part]).text.endswith("\n\nTASKS")


def test_the_newest_block_holding_it_is_named() -> None:
    older = compose.allocate("startup", [FakePart("tasks", "TASKS", 100)]).text
    newer = compose.allocate("compact", [FakePart("tasks", "TASKS", 100)]).text
    text = compose.allocate("resume", [FakePart("tasks", "TASKS", 100)], earlier=[newer, older]).text
    assert text.endswith(
        "\n\nTask list: unchanged since the session-workflow SessionStart (compact) block above, which still holds it."
    )


def test_an_anchor_only_older_is_unchanged_but_an_edited_one_is_sent(tmp_path: Path) -> None:
    folder = tmp_path / ".claude" / "anchors"
    folder.mkdir(parents=True)
    anchor = folder / "a.md"
    anchor.write_text(
        "---\nformat: anchor/v1\nstep: 1\n---\n# A\n\n## Cursor\n- Step 1: x\n<!-- anchor:tail -->\nold\n"
    )
    os.utime(anchor, (1000.0, 1000.0))
    trust(anchor)

    def block(source: str, now: float) -> str:
        ctx = HookContext.from_payload(
            {"source": source, "session_id": "s", "cwd": str(tmp_path)}, Places(state_env()), now
        )
        part = anchor_part.prepare(ctx)
        assert isinstance(part, anchor_part.AnchorPart)
        parts.append(part)
        return compose.allocate(source, [part], earlier=earlier).text

    parts: list[anchor_part.AnchorPart] = []
    earlier: list[str] = []
    first = block("compact", 1000.0 + 120)
    earlier = [first]
    assert "Updated 2 min ago" in first
    later = block("resume", 1000.0 + 7200)
    assert later.endswith("\n\nControl anchor: " + UNCHANGED.format("compact"))
    assert parts[-1].held_above
    anchor.write_text(anchor.read_text().replace("- Step 1: x", "- Step 2: y"))
    os.utime(anchor, (1000.0, 1000.0))
    trust(anchor)
    assert "- Step 2: y" in block("resume", 1000.0 + 7200)


def test_an_anchor_shown_at_startup_is_unchanged_on_resume(tmp_path: Path) -> None:
    folder = tmp_path / ".claude" / "anchors"
    folder.mkdir(parents=True)
    (folder / "a.md").write_text("---\nformat: anchor/v1\n---\n# A\n\n## Cursor\n- Step 1: x\n")
    os.utime(folder / "a.md", (1000.0, 1000.0))
    trust(folder / "a.md")
    blocks: list[str] = []
    for source in ("startup", "resume"):
        payload = {"source": source, "session_id": "s", "cwd": str(tmp_path)}
        ctx = HookContext.from_payload(payload, Places(state_env()), 1060.0)
        part = anchor_part.prepare(ctx)
        assert part is not None
        blocks.append(compose.allocate(source, [part], earlier=blocks).text)
    assert "This session is a fresh start" in blocks[0]
    assert blocks[1].endswith("\n\nControl anchor: " + UNCHANGED.format("startup"))


# --- no failure is silent --------------------------------------------------------------------------------------


def _failing_ctx(source: str, state: Path) -> HookContext:
    payload: dict[str, object] = {"session_id": "s1", "cwd": "/nowhere", "source": source}
    return HookContext.from_payload(payload, Places({"XDG_STATE_HOME": str(state)}), 0.0)


def _doctor_lines(state: Path) -> list[str]:
    from session_workflow.cli.doctor import error_checks

    return [line for check in error_checks(Places({"XDG_STATE_HOME": str(state)})) for line in check.lines()]


def test_a_part_that_raises_is_logged_shown_by_doctor_and_named_in_the_block(
    calls: list[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    def broken(ctx: HookContext, *_: object) -> PreparedPart:
        raise ZeroDivisionError("a bug in the task part")

    monkeypatch.setattr(tasks, "prepare", broken)
    text = compose.compose(_failing_ctx("compact", tmp_path)).text
    assert "[work state]" in text and "[anchor]" in text and "[recovery]" in text
    assert text.endswith("session-workflow: could not be read, left out: tasks.")
    lines = _doctor_lines(tmp_path)
    assert lines[0].startswith("· errors: 1 recorded") and "errors.jsonl" in lines[1]
    assert "in SessionStart part tasks" in lines[2] and lines[2].endswith("ZeroDivisionError: a bug in the task part")


def test_a_part_that_raises_while_rendering_is_logged(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    class Broken(FakePart):
        def render(self, budget: int) -> str:
            raise RecursionError("deep")

    monkeypatch.setattr(compose, "prepare_parts", lambda ctx: [FakePart("anchor", "A", 10), Broken("tasks", "", 10)])
    text = compose.compose(_failing_ctx("resume", tmp_path)).text
    assert text.endswith("session-workflow: could not be read, left out: tasks.")
    assert "in SessionStart part tasks" in _doctor_lines(tmp_path)[2]


def test_a_composer_that_raises_still_names_what_it_left_out(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsysbinary: pytest.CaptureFixture[bytes]
) -> None:
    def broken(ctx: HookContext) -> list[PreparedPart]:
        raise KeyError("a bug in the composer")

    monkeypatch.setattr(compose, "prepare_parts", broken)
    compose.session_start(_failing_ctx("compact", tmp_path))
    text = json.loads(capsysbinary.readouterr().out)["hookSpecificOutput"]["additionalContext"]
    assert text.splitlines()[0] == compose.header("compact")
    left_out = "work state, anchor, tasks, run record, recovery"
    assert text.endswith(f"session-workflow: could not be read, left out: {left_out}.")
    lines = _doctor_lines(tmp_path)
    assert "in SessionStart (version" in lines[2] and lines[2].endswith("KeyError: 'a bug in the composer'")


def test_telemetry_that_raises_is_logged(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    class Noisy(FakePart):
        def after_emit(self, emitted: bool) -> None:
            raise OSError("telemetry")

    monkeypatch.setattr(compose, "prepare_parts", lambda ctx: [Noisy("anchor", "A", 10)])
    compose.session_start(_failing_ctx("compact", tmp_path))
    assert "in SessionStart after_emit anchor" in _doctor_lines(tmp_path)[2]


def test_a_composition_that_works_writes_no_error_log(calls: list[str], tmp_path: Path) -> None:
    assert "[tasks]" in compose.compose(_failing_ctx("compact", tmp_path)).text
    assert not (tmp_path / "session-workflow").exists()
    assert _doctor_lines(tmp_path) == ["✔ errors: none recorded"]


def notes_part(_ctx: HookContext) -> FakePart:
    """A new part's module's ``prepare``."""
    return FakePart("notes", "[notes]", 50)


def test_a_new_part_is_one_registry_entry(monkeypatch: pytest.MonkeyPatch, calls: list[str]) -> None:
    """Its entry says all: sources, presence, where its ``prepare`` lives and its label; the composer names none."""
    present = lambda ctx, folders, restored: restored  # noqa: E731
    extra = Part("notes", ("compact",), present, "tests.hook.test_compose:notes_part", label="Notes")
    monkeypatch.setattr(compose, "PARTS", (*parts.PARTS, extra))
    assert compose.compose(_ctx("compact")).text.endswith("[recovery]\n\n[notes]")
    assert "[notes]" not in compose.compose(_ctx("resume")).text
    assert compose.unchanged_line("notes", "resume").startswith("Notes: unchanged since")


def test_the_ledger_entry_is_stamped_in_utc_iso_seconds() -> None:
    """The compaction ledger sorts the hooks' lines and the mod's reminders as one list by this stamp."""
    ctx = HookContext.from_payload({"source": "compact", "session_id": "s1"}, Places({}), 2_000_000_000.0)
    entry = compose.ledger_entry(ctx, compose.allocate("compact", [FakePart("anchor", "A", 100)]))
    assert entry["ts"] == "2033-05-18T03:33:20Z"
    assert entry["source"] == "compact" and entry["session"] == "s1" and entry["parts"] == "anchor=1"


def test_the_composer_names_no_part() -> None:
    """Every fact about a part is its registry entry's (``hook.parts``): no part's name is written in the composer."""
    source = Path(compose.__file__).read_text(encoding="utf-8")
    texts = {node.value for node in ast.walk(ast.parse(source)) if isinstance(node, ast.Constant)}
    names = {part.name for part in parts.PARTS} | {part.label for part in parts.PARTS}
    assert len(parts.PARTS) == 5 and not texts & names
