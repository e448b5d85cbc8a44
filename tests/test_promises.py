"""The promised numbers and selection rules, each held as a literal at its boundary.

One module for every promise (not spread over the mirrored modules) because it is the contract a reader checks
against the README and the seeds, and because ``tools/mutants.py`` names it as the suite each mutant of a promise
must fail. Numbers are written out here, never read from the module under test: a changed constant must fail
a test. Each boundary is tried on both sides (just under is shown whole, just over is cut or refused), and each
rule gets inputs on which it and its neighbouring rules disagree. Wording is not asserted: only sizes, ids,
and whether a piece of content reached the block.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest

from session_workflow.anchor import part as anchor_part
from session_workflow.cli import doctor, health
from session_workflow.core.context import HookContext
from session_workflow.core.parts import PreparedPart
from session_workflow.core.places import Places
from session_workflow.core.text import utf8_len, utf16_len
from session_workflow.hook import compose, precompact, prompt_submit
from session_workflow.tasks import store as tasks
from session_workflow.workstate.section import WorkState
from tests.tasks.test_store import NOW, SESSION, make_ctx, touch, write_task
from tests.trust import state_env, trust

HOUR = 3600.0
TASK_LINE = re.compile(r"^#(\d+) \[(pending|in_progress)\]", re.MULTILINE)


class TextPart(PreparedPart):
    """A part that renders its text cut to the budget (by UTF-16 units, as the composer measures)."""

    def __init__(self, name: str, text: str, cap: int) -> None:
        self.name, self.text, self.cap, self.floor = name, text, cap, 1

    def render(self, budget: int) -> str:
        out, units = [], 0
        for char in self.text:
            units += 2 if ord(char) > 0xFFFF else 1
            if units > budget:
                break
            out.append(char)
        return "".join(out)


def project_ctx(project: Path, source: str = "compact", session: str = SESSION, **env: str) -> HookContext:
    """A SessionStart context for ``project`` (no transcript: the cwd is the project dir)."""
    payload = {"hook_event_name": "SessionStart", "source": source, "session_id": session, "cwd": str(project)}
    base = {"CLAUDE_CONFIG_DIR": str(project / "no-config"), **state_env()}
    return HookContext.from_payload(payload, Places({**base, **env}), NOW)


def write_anchor(project: Path, name: str, body: str, age: float, frontmatter: str = "format: anchor/v1") -> Path:
    folder = project / ".claude" / "anchors"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text(f"---\n{frontmatter}\n---\n# Title\n\n## Cursor\n- Next action: go\n\n{body}", encoding="utf-8")
    os.utime(path, (NOW - age, NOW - age))
    trust(path)
    return path


def write_state(project: Path, session: str | None = SESSION, **fields: object) -> None:
    """A state file as the writer leaves it, minus the stored section (the reader builds it from the fields)."""
    document: dict[str, object] = {"version": 1, "ticket": 34, "title": "Fix the parser", "map": 12, "step": "plan"}
    if session is not None:
        document["session"] = session
    document.update(fields)
    folder = project / ".claude" / "session-workflow"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "work-state.json").write_text(json.dumps(document), encoding="utf-8")


def part_sizes(ctx: HookContext) -> dict[str, tuple[int, int]]:
    """(UTF-16 units, UTF-8 bytes) of each part the composer emitted for ``ctx``."""
    return {name: (units, size) for name, units, size in compose.compose(ctx).sizes}


def tasks_text(tmp_path: Path, budget: int = 10_000) -> str:
    """The task part rendered with more budget than its cap (the composer never offers more than 10,000)."""
    part = tasks.prepare(make_ctx(tmp_path))
    assert part is not None
    return part.render(budget)


def shown_ids(text: str) -> list[int]:
    return [int(number) for number, _status in TASK_LINE.findall(text)]


# --- 10,000 UTF-16 units: the whole SessionStart block --------------------------------------------------------


@pytest.mark.parametrize("char", ["x", "😀"])
def test_the_block_fills_up_to_10000_utf16_units_and_no_further(char: str) -> None:
    """A part that could say 30,000 units is cut so the block is at most 10,000 units (astral: 2 units each)."""
    block = compose.allocate("compact", [TextPart("big", char * 30_000, cap=30_000)]).text
    assert 9_500 <= utf16_len(block) <= 10_000


def test_the_omitted_note_fits_within_10000_units_too() -> None:
    """A full block that also names a part it left out: the closing note is inside the 10,000 units."""
    parts: list[PreparedPart] = [TextPart("big", "x" * 30_000, cap=30_000), TextPart("refused", "", cap=100)]
    composition = compose.allocate("compact", parts)
    assert composition.omitted == ["refused"]
    assert 9_500 <= utf16_len(composition.text) <= 10_000


def test_a_block_under_10000_units_is_emitted_whole() -> None:
    text = "y" * 9_000
    block = compose.allocate("compact", [TextPart("big", text, cap=30_000)]).text
    assert text in block and utf16_len(block) < 10_000


def test_the_real_parts_at_their_largest_stay_within_10000_units(golden_dir: Path) -> None:
    """A huge anchor, a full task store, a large work state: every part over-asks and the block holds 10,000."""
    write_anchor(golden_dir, "a.md", "".join(f"## S{n}\n" + "😀" * 400 + "\n\n" for n in range(60)), HOUR)
    for task_id in range(1, 80):
        write_task(golden_dir / "tasks" / SESSION, task_id, "in_progress", "é" * 200, "😀" * 200)
    write_state(golden_dir, title="😀" * 200, step="😀" * 100, auto=True)
    ctx = project_ctx(golden_dir, CLAUDE_CONFIG_DIR=str(golden_dir))
    text = compose.compose(ctx).text
    assert 9_000 <= utf16_len(text) <= 10_000


# --- 8,000 UTF-16 units: the anchor block ------------------------------------------------------------------------


def test_the_anchor_block_is_at_most_8000_units(tmp_path: Path) -> None:
    write_anchor(tmp_path, "a.md", "".join(f"## S{n}\n" + "w" * 700 + "\n\n" for n in range(60)), HOUR)
    units, _bytes = part_sizes(project_ctx(tmp_path))["anchor"]
    assert 7_000 <= units <= 8_000


def test_an_anchor_under_8000_units_is_shown_whole(tmp_path: Path) -> None:
    body = "".join(f"## S{n}\nmarker-{n} " + "w" * 600 + "\n\n" for n in range(10))
    write_anchor(tmp_path, "a.md", body, HOUR)
    text = compose.compose(project_ctx(tmp_path)).text
    assert all(f"marker-{n} " in text for n in range(10))


# --- 4,096 bytes, 40 tasks, 160 and 300 bytes: the task block --------------------------------------------------


def test_a_full_store_fills_the_task_block_to_4096_bytes_and_no_further(tmp_path: Path) -> None:
    for task_id in range(1, 61):
        write_task(tmp_path / "tasks" / SESSION, task_id, "pending", "s" * 150, mtime=NOW - task_id)
    text = tasks_text(tmp_path)
    assert 3_800 <= utf8_len(text) <= 4_096
    shown = len(shown_ids(text))
    assert shown < 40 and re.search(rf"\b{60 - shown} more\b", text)


def test_a_task_block_under_4096_bytes_is_shown_whole(tmp_path: Path) -> None:
    for task_id in range(1, 21):  # about 3,400 bytes
        write_task(tmp_path / "tasks" / SESSION, task_id, "pending", "s" * 150)
    text = tasks_text(tmp_path)
    assert sorted(shown_ids(text)) == list(range(1, 21)) and "more" not in text


def thirty_tasks_of(tmp_path: Path, size: int) -> str:
    """30 open tasks whose whole block is exactly ``size`` bytes when all are shown: their subjects are measured
    once at 100 bytes each, then lengthened by what is left (each at most 160 bytes, so none is cut)."""
    store = tmp_path / "tasks" / SESSION
    for task_id in range(1, 31):
        write_task(store, task_id, "pending", "s" * 100)
    whole = tasks_text(tmp_path)
    assert len(shown_ids(whole)) == 30
    extra = size - utf8_len(whole)
    assert 0 <= extra <= 30 * 60
    for task_id in range(1, 31):
        write_task(store, task_id, "pending", "s" * (100 + extra // 30 + (task_id <= extra % 30)))
    return tasks_text(tmp_path)


def test_30_tasks_filling_exactly_4096_bytes_are_all_shown(tmp_path: Path) -> None:
    """The bound is inclusive: a block of exactly 4,096 bytes is shown whole (``<`` for ``<=`` showed 29)."""
    text = thirty_tasks_of(tmp_path, 4_096)
    assert sorted(shown_ids(text)) == list(range(1, 31)) and "more" not in text
    assert utf8_len(text) == 4_096


def test_30_tasks_one_byte_over_4096_show_29_and_count_the_last(tmp_path: Path) -> None:
    text = thirty_tasks_of(tmp_path, 4_097)
    assert len(shown_ids(text)) == 29 and re.search(r"\b1 more\b", text)
    assert utf8_len(text) <= 4_096


def test_the_composer_gives_the_task_block_at_most_4096_bytes(tmp_path: Path) -> None:
    for task_id in range(1, 61):
        write_task(tmp_path / "tasks" / SESSION, task_id, "pending", "s" * 150)
    _units, size = part_sizes(make_ctx(tmp_path))["tasks"]
    assert 3_800 <= size <= 4_096


@pytest.mark.parametrize(("count", "shown"), [(40, 40), (41, 40)])
def test_at_most_40_tasks_are_shown(tmp_path: Path, count: int, shown: int) -> None:
    for task_id in range(1, count + 1):
        write_task(tmp_path / "tasks" / SESSION, task_id, "pending", "t")
    text = tasks_text(tmp_path)
    assert len(shown_ids(text)) == shown
    assert bool(re.search(r"\b1 more\b", text)) == (count > shown)


def shown_prefix(text: str, value: str) -> str:
    """The longest start of ``value`` that ``text`` shows (however the line around it is framed)."""
    low, high = 0, len(value)
    while low < high:
        middle = (low + high + 1) // 2
        low, high = (middle, high) if value[:middle] in text else (low, middle - 1)
    return value[:low]


@pytest.mark.parametrize(
    ("subject", "whole"),
    [("a" * 160, True), ("é" * 80, True), ("a" * 161, False), ("é" * 80 + "a", False), ("😀" * 41, False)],
)
def test_a_subject_is_cut_past_160_bytes(tmp_path: Path, subject: str, whole: bool) -> None:
    write_task(tmp_path / "tasks" / SESSION, 1, "pending", subject)
    shown = shown_prefix(tasks_text(tmp_path), subject)
    assert (shown == subject) == whole
    assert 150 <= utf8_len(shown) <= 160


@pytest.mark.parametrize(("description", "whole"), [("é" * 150, True), ("é" * 150 + "a", False), ("d" * 301, False)])
def test_an_in_progress_description_is_cut_past_300_bytes(tmp_path: Path, description: str, whole: bool) -> None:
    write_task(tmp_path / "tasks" / SESSION, 1, "in_progress", "go", description)
    shown = shown_prefix(tasks_text(tmp_path), description)
    assert (shown == description) == whole
    assert 290 <= utf8_len(shown) <= 300


# --- 1,024 bytes: the work-state section ---------------------------------------------------------------------------


def test_the_work_state_section_is_at_most_1024_bytes(tmp_path: Path) -> None:
    """Every field at its own longest, in 4-byte characters: the section would be larger, and is cut at 1,024."""
    url = "https://example.com/" + "u" * 280
    write_state(tmp_path, ticket="T" * 64, title="😀" * 200, step="😀" * 100, url=url, auto=True, paused=True)
    _units, size = part_sizes(project_ctx(tmp_path))["work state"]
    assert 1_000 <= size <= 1_024


def test_a_small_work_state_section_is_shown_whole(tmp_path: Path) -> None:
    write_state(tmp_path, title="Fix the parser", step="execute")
    text = compose.compose(project_ctx(tmp_path)).text
    assert "Fix the parser" in text and "execute" in text and "…" not in text


# --- 600 characters: the PreCompact request ----------------------------------------------------------------------


def _anchor_facts(path_length: int, char: str = "p") -> tuple[str, str]:
    return ("/" + char * path_length + ".md", "next: ship it")


@pytest.mark.parametrize("char", ["p", "😀"])
def test_the_precompact_request_is_at_most_600_utf16_units(char: str) -> None:
    ticket = WorkState(ticket=34, title="Fix the parser", step="execute", session=SESSION)
    text = precompact.instructions(_anchor_facts(700, char), ticket, 3)
    assert 580 <= utf16_len(text) <= 600


def test_a_precompact_request_under_600_is_whole() -> None:
    ticket = WorkState(ticket=34, title="Fix the parser", step="execute", session=SESSION)
    text = precompact.instructions(_anchor_facts(100), ticket, 3)
    assert utf16_len(text) < 600
    assert all(piece in text for piece in ("p" * 100 + ".md", "ship it", "#34", "Fix the parser", "execute", "3 "))


# --- 6 h and 24 h: the anchor's age --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("source", "age", "injected"),
    [
        ("startup", 6 * HOUR - 60, True),
        ("startup", 6 * HOUR + 60, False),
        ("compact", 6 * HOUR + 60, True),
        ("resume", 6 * HOUR + 60, True),
    ],
)
def test_startup_injects_only_an_anchor_updated_within_6_hours(
    tmp_path: Path, source: str, age: float, injected: bool
) -> None:
    write_anchor(tmp_path, "a.md", "## Mission\nmission-marker\n", age)
    text = compose.compose(project_ctx(tmp_path, source)).text
    assert ("a.md" in text) == injected


@pytest.mark.parametrize(("age", "full"), [(24 * HOUR - 60, True), (24 * HOUR + 60, False)])
def test_an_anchor_older_than_24_hours_is_only_a_pointer(tmp_path: Path, age: float, full: bool) -> None:
    write_anchor(tmp_path, "a.md", "## Mission\nmission-marker\n", age)
    text = compose.compose(project_ctx(tmp_path)).text
    assert "a.md" in text
    assert ("mission-marker" in text) == full


# --- the task selection rules ----------------------------------------------------------------------------------------


def test_in_progress_is_selected_first_even_when_oldest(tmp_path: Path) -> None:
    """The in-progress task is the oldest file and the lowest id: newest-first alone would drop it."""
    write_task(tmp_path / "tasks" / SESSION, 1, "in_progress", "the one in progress", mtime=NOW - 10_000)
    for task_id in range(2, 47):
        write_task(tmp_path / "tasks" / SESSION, task_id, "pending", "p", mtime=NOW - 100 + task_id)
    shown = shown_ids(tasks_text(tmp_path))
    assert 1 in shown and len(shown) == 40


def test_within_a_status_the_newest_files_are_selected(tmp_path: Path) -> None:
    """File age runs against id order here: the 40 newest files win, not the 40 highest ids."""
    for task_id in range(1, 46):
        write_task(tmp_path / "tasks" / SESSION, task_id, "pending", "p", mtime=NOW - 1000 * task_id)
    assert sorted(shown_ids(tasks_text(tmp_path))) == list(range(1, 41))


def test_files_of_the_same_age_are_selected_highest_id_first(tmp_path: Path) -> None:
    for task_id in range(1, 46):
        write_task(tmp_path / "tasks" / SESSION, task_id, "pending", "p", mtime=NOW - 100)
    assert sorted(shown_ids(tasks_text(tmp_path))) == list(range(6, 46))


def _sibling(tmp_path: Path, session: str, age: float, subject: str) -> None:
    write_task(tmp_path / "tasks" / session, 1, "pending", subject)
    touch(tmp_path / "projects" / f"{session}.jsonl", NOW - age)


def test_the_fallback_recovers_exactly_one_older_candidate(tmp_path: Path) -> None:
    touch(tmp_path / "projects" / f"{SESSION}.jsonl", NOW - 50)
    _sibling(tmp_path, "older", 100, "from the older session")
    _sibling(tmp_path, "newer", 10, "from a newer session")  # newer than this one: never a predecessor
    assert "from the older session" in tasks_text(tmp_path)


def test_two_older_candidates_are_ambiguous(tmp_path: Path) -> None:
    """The newest older session is not picked: two candidates give the hint and no task of either."""
    touch(tmp_path / "projects" / f"{SESSION}.jsonl", NOW - 50)
    _sibling(tmp_path, "older", 100, "from the older session")
    _sibling(tmp_path, "oldest", 200, "from the oldest session")
    text = tasks_text(tmp_path)
    assert text and shown_ids(text) == [] and "from the" not in text


# --- work-state ownership --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("owner", "owned"), [(SESSION, True), ("another-session", False), (None, False)])
def test_only_a_state_this_session_owns_is_delivered(
    tmp_path: Path,
    tmp_path_factory: pytest.TempPathFactory,
    owner: str | None,
    owned: bool,
    capsysbinary: pytest.CaptureFixture[bytes],
) -> None:
    """The orphan rule (another owner) and the owner rule (no owner at all) on every hook that shows the state."""
    write_state(tmp_path, session=owner, title="owned-title")
    data = tmp_path_factory.mktemp("data")  # outside the project: delivery records in it would be the project's
    env = {"CLAUDE_PLUGIN_DATA": str(data), "CLAUDE_CONFIG_DIR": str(tmp_path / "none")}
    ctx = project_ctx(tmp_path, **env)
    assert ("work state" in part_sizes(ctx)) == owned
    prompt = dict(hook_event_name="UserPromptSubmit", session_id=SESSION, cwd=str(tmp_path), prompt="hi")
    prompt_submit.prompt_submit(HookContext.from_payload(prompt, Places(env), NOW))
    precompact.pre_compact(HookContext.from_payload({**prompt, "hook_event_name": "PreCompact"}, Places(env), NOW))
    assert (capsysbinary.readouterr().out.count(b"owned-title") == 2) == owned


# --- the anchor choice ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("names", "chosen"),
    [
        (["a.closed.md", "b.md"], "b.md"),  # the newer file is closed
        (["a.closed.md"], None),
        (["aclosed.md", "b.md"], "aclosed.md"),  # not a .closed.md name: open
        (["a.closed.md.md", "b.md"], "a.closed.md.md"),
    ],
)
def test_a_closed_md_name_is_closed(tmp_path: Path, names: list[str], chosen: str | None) -> None:
    for age, name in enumerate(names):
        write_anchor(tmp_path, name, f"## Mission\nbody of {name}\n", HOUR + age)
    part = anchor_part.prepare(project_ctx(tmp_path))
    assert (part.block.candidate.name if isinstance(part, anchor_part.AnchorPart) else None) == chosen


def test_parked_outranks_done_and_live_outranks_both(tmp_path: Path) -> None:
    write_anchor(tmp_path, "done.md", "## Status\nStatus: done\n", HOUR)
    write_anchor(tmp_path, "parked.md", "## Mission\nm\n", 2 * HOUR, "format: anchor/v1\nparked: waiting on review")
    part = anchor_part.prepare(project_ctx(tmp_path))
    assert isinstance(part, anchor_part.AnchorPart) and part.block.candidate.name == "parked.md"
    write_anchor(tmp_path, "live.md", "## Mission\nm\n", 3 * HOUR)
    part = anchor_part.prepare(project_ctx(tmp_path))
    assert isinstance(part, anchor_part.AnchorPart) and part.block.candidate.name == "live.md"


# --- session-workflow doctor ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(("says", "ok"), [("3.8.99", False), ("3.9.0", True), ("2.7.18", False), ("3.13.1", True)])
def test_doctor_wants_a_python3_of_3_9_or_newer_and_calls_it_essential(tmp_path: Path, says: str, ok: bool) -> None:
    script = tmp_path / "python3"
    script.write_text(f"#!/bin/sh\necho {says}\n")
    script.chmod(0o755)
    check = health.python_check({"PATH": str(tmp_path)})
    assert (check.mark == health.OK, check.essential) == (ok, not ok)


@pytest.mark.parametrize(("agent", "can"), [("claude-code_2-1-286_agent", False), ("claude-code_2-1-287_agent", True)])
def test_doctor_knows_the_mod_needs_claude_code_2_1_287(agent: str, can: bool) -> None:
    assert (health.mod_check({"AI_AGENT": agent}).mark != health.FAIL) == can


def test_doctor_exits_non_zero_only_for_an_essential_failure() -> None:
    fine, broken = health.Check(health.FAIL, "a fix"), health.Check(health.FAIL, "no python3", essential=True)
    assert doctor.verdict([fine]).startswith("nothing essential is missing")
    assert doctor.exit_code([fine, health.Check(health.INFO, "unknown")]) == 0
    assert doctor.exit_code([fine, broken]) == 1
