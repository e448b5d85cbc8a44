"""The run's places: built once at the entry, each folder resolved once, on first use, and none that is not used."""

from __future__ import annotations

import io
import json
from collections import Counter
from pathlib import Path

import pytest

from session_workflow.core.places import Places
from session_workflow.hook import compose
from session_workflow.hook.io import run_hook
from tests.hook.test_session_start import Project


def count_rules(monkeypatch: pytest.MonkeyPatch) -> tuple[list[Places], Counter[str]]:
    """Every Places built from now on, and how often each of its folder rules ran (over all of them)."""
    built: list[Places] = []
    ran: Counter[str] = Counter()
    init, once = Places.__init__, Places._once

    def counted_init(self: Places, *args: object, **kwargs: object) -> None:
        init(self, *args, **kwargs)  # type: ignore[arg-type]
        built.append(self)

    def counted_once(self: Places, key: str, compute: object) -> str | None:
        def counting() -> str | None:
            ran[key] += 1
            return compute()  # type: ignore[operator, no-any-return]

        return once(self, key, counting)

    monkeypatch.setattr(Places, "__init__", counted_init)
    monkeypatch.setattr(Places, "_once", counted_once)
    return built, ran


def session_start(project: Project, source: str, monkeypatch: pytest.MonkeyPatch) -> str:
    """The SessionStart hook's stdout, run through its entry as Claude Code runs it."""
    for name, value in project.env().items():
        monkeypatch.setenv(name, value)
    stdout = io.BytesIO()
    monkeypatch.setattr("sys.stdout", io.TextIOWrapper(stdout))
    run_hook(compose.session_start, "SessionStart", io.BytesIO(json.dumps(project.payload(source)).encode()))
    return stdout.getvalue().decode()


def test_a_full_session_start_builds_its_places_once_and_runs_each_folder_rule_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Anchor (trust records), tasks, work state, recovered prompts and the ledger: one Places, each rule once."""
    project = Project(tmp_path)
    project.anchor()
    project.task(1, "Write the CSV writer", "in_progress")
    project.work_state()
    project.prompts("please ship the exporter")
    built, ran = count_rules(monkeypatch)
    assert "Control anchor" in session_start(project, "compact", monkeypatch)
    assert len(built) == 1
    assert {"state", "trust", "ledger", "config", "tasks_root"} <= set(ran)
    assert max(ran.values()) == 1, ran


def test_a_session_start_with_nothing_of_ours_resolves_only_what_it_asks(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A startup in a project with no state: no ledger, error log or task store is resolved (nothing reads them)."""
    project = Project(tmp_path)
    built, ran = count_rules(monkeypatch)
    assert session_start(project, "startup", monkeypatch) == ""
    assert len(built) == 1
    assert not {"ledger", "error_log"} & set(ran) and max(ran.values(), default=0) == 1, ran


def test_without_a_home_no_folder_is_made_up() -> None:
    places = Places({"HOME": "relative", "XDG_STATE_HOME": "also-relative", "CLAUDE_CONFIG_DIR": "rel"})
    assert (places.home, places.config, places.state, places.trust, places.ledger, places.error_log) == (None,) * 6
    assert places.tasks_root is None and places.kept_index("s") is None and places.task_list_dir("s") is None


def test_the_folders_under_the_state_folder() -> None:
    places = Places({"HOME": "/home/u"})
    state = "/home/u/.local/state/session-workflow"
    assert (places.state, places.trust, places.ledger) == (state, f"{state}/anchors", f"{state}/ledger.ndjson")
    assert (
        places.error_log == f"{state}/errors.jsonl" and places.kept_index("s1") == f"{state}/anchors/sessions/s1.json"
    )
    assert places.config == "/home/u/.claude" and places.tasks_root == "/home/u/.claude/tasks"
