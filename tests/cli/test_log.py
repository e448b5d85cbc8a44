"""``session-workflow log`` and the compaction ledger behind it: what the plugin sent, and when.

The blocks come from the real shim under a cold ``python3 -I -S`` (as Claude Code runs it), the reminders from the
file the mod keeps (its writing is held by tests/mod/checkpoint.test.ts), the listing from the real CLI.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from session_workflow.cli import log
from session_workflow.core.ledger import reminders_path
from session_workflow.core.places import Places
from tests.reliability.sandbox import Sandbox, sandbox, snapshot, task_json
from tests.reliability.test_own_anchor import cold_block, new_anchor
from tests.reliability.test_trust import anchor_text, cli
from tests.transcript.test_record import Calls


def _ledger(box: Sandbox) -> list[dict[str, object]]:
    path = Places(box.env()).ledger
    assert path is not None
    return [json.loads(line) for line in Path(path).read_text().splitlines()] if os.path.exists(path) else []


def _keep_reminder(box: Sandbox, ts: str, anchor: str) -> None:
    """The mod's file, as checkpoint.ts `noteReminder` leaves it."""
    path = reminders_path(Places(box.env()), box.session)
    assert path is not None
    os.makedirs(os.path.dirname(path), exist_ok=True)
    Path(path).write_text(json.dumps([{"ts": ts, "anchor": anchor, "tokens": 152_000, "threshold": 167_000}]))


def test_two_compactions_and_a_reminder_are_listed_newest_first_with_their_sizes() -> None:
    with sandbox() as box:
        anchor = new_anchor(box)
        first = cold_block(box)
        second = cold_block(box)
        entries = _ledger(box)
        assert [entry["source"] for entry in entries] == ["compact", "compact"]
        units = len(first.encode("utf-16-le")) // 2
        assert entries[0]["units"] == units and entries[1]["units"] == len(second.encode("utf-16-le")) // 2
        assert entries[0]["anchor"] == anchor and entries[0]["step"] == "2" and entries[0]["project"] == box.project
        sizes = dict(item.split("=") for item in str(entries[0]["parts"]).split(","))
        assert list(sizes) == ["anchor"] and int(sizes["anchor"]) < units <= 10_000
        _keep_reminder(box, "2099-01-01T00:00:00Z", anchor)  # newest: after both blocks
        done = cli(box, "log")
        assert done.returncode == 0, done.stderr
        lines = done.stdout.splitlines()
        assert lines[0] == f"3 entries for session {box.session}, newest first:"
        assert lines[1] == (
            f"2099-01-01T00:00:00Z  reminder  session {box.session[:8]}  checkpoint reminder at 152,000 of 167,000"
            f" tokens: {anchor}"
        )
        for line in lines[2:]:
            assert "  compact  " in line and f"anchor {int(sizes['anchor']):,} = {units:,} of 10,000 units" in line
            assert line.endswith(f"; anchor {anchor} at step 2")
        shown = json.loads(cli(box, "log", "--json").stdout)
        assert [entry["kind"] for entry in shown] == ["reminder", "start", "start"]


def test_only_a_block_that_was_sent_is_recorded_and_never_in_the_project() -> None:
    with sandbox() as box:
        assert cold_block(box, "startup") == "" and cold_block(box) == ""  # nothing to say: nothing recorded
        assert _ledger(box) == []
        nothing = f"session-workflow: nothing sent yet for session {box.session} ({box.project})\n"
        assert cli(box, "log").stdout == nothing
        new_anchor(box)
        assert cold_block(box) and len(_ledger(box)) == 1
        assert not [name for name in snapshot(box.project) if "ledger" in name or name.endswith(".ndjson")]


def test_all_lists_every_session_of_this_project_and_no_other_project() -> None:
    with sandbox() as box:
        new_anchor(box)
        cold_block(box)
        mine = box.session
        box.session = "another-session"
        new_anchor(box)
        cold_block(box)
        assert len(cli(box, "log", session=mine).stdout.splitlines()) == 2  # the heading and its one block
        listed = cli(box, "log", "--all").stdout.splitlines()
        assert listed[0] == "2 entries for this project, newest first:"
        assert "session another-  " in listed[1] and f"session {mine[:8]}  " in listed[2]
        elsewhere = os.path.join(box.root, "elsewhere")
        os.makedirs(elsewhere)
        moved = cli(box, "log", "--all", "--session", mine)
        assert moved.returncode == 0 and len(moved.stdout.splitlines()) == 3


def test_a_hostile_path_in_the_ledger_is_shown_escaped() -> None:
    with sandbox() as box:
        anchor = new_anchor(box)
        cold_block(box)
        _keep_reminder(box, "2099-01-01T00:00:00Z", anchor + "\n\x1b[2Jforged\u202e")
        shown = cli(box, "log").stdout
        assert "\x1b" not in shown and "\u202e" not in shown and "\nforged" not in shown
        assert f"{anchor}\\x0a\\x1b[2Jforged\\u202e" in shown  # the path exactly, nothing hidden


def test_a_broken_ledger_line_costs_only_itself() -> None:
    with sandbox() as box:
        new_anchor(box)
        cold_block(box)
        path = Places(box.env()).ledger
        assert path is not None
        with open(path, "ab") as handle:
            handle.write(b'{"torn": \n[1, 2]\n\xff\xfe\n')
        cold_block(box)
        done = cli(box, "log")
        assert done.returncode == 0 and done.stdout.splitlines()[0].startswith("2 entries for session")


def test_a_block_that_cut_anchor_sections_tasks_and_actions_names_each_cut_by_count_only() -> None:
    """The ledger said "nothing cut" when sections were dropped and tasks not shown; now it counts both,
    and the run record's actions, and keeps none of their text (a command can carry a secret)."""
    with sandbox() as box:
        path = cli(box, "anchor", "new", "--dir", box.project, "--task", "Big run").stdout.strip()
        sections = "".join(f"## Notes {index}\n" + f"note {index} " * 300 + "\n\n" for index in range(12))
        text = anchor_text(extra=sections).replace("step: 1", "step: 2")
        assert cli(box, "anchor", "write", path, stdin=text.encode()).returncode == 0
        for number in range(1, 61):
            box.write_task(f"{number}.json", task_json(number, f"Task number {number} " + "s" * 120))
        calls = Calls()
        for index in range(60):
            calls.bash(f"make target-{index} TOKEN=SECRET-{index}")
        calls.bash("make target-59 TOKEN=SECRET-59")
        box.write_transcript(calls.save(Path(box.root) / "t.jsonl").read_bytes())
        block = cold_block(box)
        assert "RUN RECORD (" in block and "STRUCTURED TASK LIST" in block
        entry = _ledger(box)[-1]
        counts = {key: int(str(entry[key])) for key in ("anchor_dropped", "tasks_hidden", "record_cut")}
        assert counts["anchor_dropped"] >= 1 and counts["tasks_hidden"] >= 20 and counts["record_cut"] >= 1
        assert entry["record_folded"] == 1 and entry["record_actions"] == 61
        ledger = Path(str(Places(box.env()).ledger)).read_text()
        assert "SECRET" not in ledger and "make target" not in ledger
        line = cli(box, "log").stdout.splitlines()[1]
        assert (
            f"; not shown for space: {entry['anchor_dropped']} anchor sections, {entry['tasks_hidden']} open tasks,"
            f" {entry['record_cut']} run-record actions, 1 repeated action folded; anchor " in line
        )
        shown = json.loads(cli(box, "log", "--json").stdout)[0]
        assert {key: shown[key] for key in ("anchor_dropped", "tasks_hidden", "record_cut")} == {
            key: entry[key] for key in ("anchor_dropped", "tasks_hidden", "record_cut")
        }


def test_a_session_gets_its_own_lines_of_a_thousand_and_no_line_that_only_names_it(tmp_path: Path) -> None:
    """``log`` parses only the lines that hold the session's quoted id: of 1,000 lines from 20 sessions (two
    projects, one through a link), exactly this session's 50 in this project, newest first; a fork's line that
    names it as its parent, or a line with its id cut into another session's, is not one of them."""
    from session_workflow.cli.log import entries
    from session_workflow.core.jsonload import dumps_flat_object

    env = {"HOME": str(tmp_path / "home")}
    project = tmp_path / "project"
    project.mkdir()
    (tmp_path / "link").symlink_to(project)
    path = Places(env).ledger
    assert path is not None
    os.makedirs(os.path.dirname(path))
    sessions = [f"session-{index:02d}" for index in range(20)]
    lines = []
    for index in range(1000):
        where = str(tmp_path / "link") if index % 40 == 0 else str(project) if index % 2 == 0 else "/other"
        entry = {"ts": f"2026-01-01T00:{index // 60 % 60:02d}:{index % 60:02d}Z", "kind": "start", "units": index}
        entry.update(session=sessions[index % 20], project=where, source="compact")
        lines.append(dumps_flat_object(entry))
    fork = {"ts": "2026-02-01T00:00:00Z", "kind": "start", "session": "fork", "parent": "session-00"}
    lines += [dumps_flat_object({**fork, "project": str(project)}), '{"session":"session-0","project":"x"}']
    Path(path).write_text("\n".join(lines[:500]) + "\n")
    Path(os.path.join(os.path.dirname(path), "ledger.1.ndjson")).write_text("\n".join(lines[500:]) + "\n")
    found = entries(Places(env), {"session-00"}, str(project))
    assert [entry["units"] for entry in found] == sorted(range(0, 1000, 20), reverse=True)
    everyone = entries(Places(env), None, str(project))
    assert len(everyone) == 501 and everyone[0]["session"] == "fork"


def test_shells_the_record_cut_for_space_are_named_by_count() -> None:
    entry = {"ts": "t", "session": "s", "source": "resume", "parts": "run record=900", "record_shells_cut": 3}
    assert log.render(entry).endswith("; not shown for space: 3 unfinished background shells")
    assert "background shell" not in log.render({**entry, "record_shells_cut": 0})
