"""The task block: lookup in Claude Code's task store, the conservative fallback, and the bounded render.

The numbered tests (1-9) are the task block's first promises, one each; the rest pin the ones that came after.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Callable

import pytest

from session_workflow.core import boundedio
from session_workflow.core.context import HookContext
from session_workflow.core.places import Places
from session_workflow.core.text import utf8_len
from session_workflow.hook import compose
from session_workflow.tasks import store as tasks
from session_workflow.tasks.render import (
    FALLBACK_HINT,
    HEADER_EXACT,
    NOT_RECOVERED,
    Task,
    TaskHintPart,
    TaskListPart,
    render_block,
)

REPO = Path(__file__).resolve().parents[2]
SESSION = "0b9f7c1e-2f4a-4c55-9d57-3b1c2a7e9f10"
NOW = 2_000_000_000.0


def write_task(
    list_dir: Path,
    task_id: int,
    status: str = "pending",
    subject: str = "",
    description: str = "",
    blocked_by: list[str] | None = None,
    mtime: float | None = None,
    **extra: object,
) -> Path:
    """A task file the way Claude Code writes it (pretty-printed, every schema field present)."""
    list_dir.mkdir(parents=True, exist_ok=True)
    record = {
        "id": str(task_id),
        "subject": subject or f"task {task_id}",
        "description": description,
        "activeForm": "Working",
        "status": status,
        "blocks": [],
        "blockedBy": blocked_by or [],
        **extra,
    }
    path = list_dir / f"{task_id}.json"
    path.write_text(json.dumps(record, indent=2, ensure_ascii=False), encoding="utf-8")
    if mtime is not None:
        os.utime(path, (mtime, mtime))
    return path


def make_ctx(
    root: Path,
    *,
    source: str = "compact",
    session_id: str = SESSION,
    transcript: Path | None = None,
    env: dict[str, str] | None = None,
    cwd: str = "/nowhere",
) -> HookContext:
    payload: dict[str, object] = {
        "hook_event_name": "SessionStart",
        "source": source,
        "session_id": session_id,
        "cwd": cwd,
        "transcript_path": str(transcript if transcript is not None else root / "projects" / f"{session_id}.jsonl"),
    }
    project = project_of(root)
    project.mkdir(parents=True, exist_ok=True)
    variables = {"CLAUDE_CONFIG_DIR": str(root), "CLAUDE_PROJECT_DIR": str(project), **(env or {})}
    return HookContext.from_payload(payload, Places(variables), NOW)


def project_of(root: Path) -> Path:
    """The project every session of these tests ran in (``touch`` records it as a transcript's first ``cwd``)."""
    return root / "proj"


def render(ctx: HookContext, budget: int = 10_000) -> str | None:
    """The task part at ``budget`` (by default all the composer can ever offer, so the part's own cap binds)."""
    part = tasks.prepare(ctx)
    return None if part is None else part.render(budget)


def touch(path: Path, mtime: float, project: Path | None = None) -> Path:
    """A transcript whose session ran in ``project`` (by default the tests' one: ``project_of``)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    cwd = project if project is not None else project_of(path.parent.parent)
    path.write_text(json.dumps({"type": "user", "cwd": str(cwd)}) + "\n")
    os.utime(path, (mtime, mtime))
    return path


# --- 1. exact open tasks render on compact, startup and resume, with or without a transcript


@pytest.mark.parametrize("source", ["compact", "startup", "resume"])
def test_1_exact_tasks_render_for_each_source_without_transcript(tmp_path: Path, source: str) -> None:
    write_task(tmp_path / "tasks" / SESSION, 1, subject="Write the parser")
    ctx = make_ctx(tmp_path, source=source)
    assert ctx.transcript_path is not None and not os.path.exists(ctx.transcript_path)
    expected = HEADER_EXACT + "\n#1 [pending] Write the parser"
    assert render(ctx) == expected
    assert expected in compose.compose(ctx).text


def test_1_exact_tasks_render_with_transcript_present(tmp_path: Path) -> None:
    write_task(tmp_path / "tasks" / SESSION, 4, status="in_progress", subject="Go")
    transcript = touch(tmp_path / "projects" / f"{SESSION}.jsonl", NOW - 10)
    assert render(make_ctx(tmp_path, transcript=transcript)) == HEADER_EXACT + "\n#4 [in_progress] Go"


# --- 2. ordering, numeric ids, blocked-by, description truncation


def test_2_ordering_blocked_by_and_description_truncation(tmp_path: Path) -> None:
    list_dir = tmp_path / "tasks" / SESSION
    write_task(list_dir, 1, subject="Write the parser", mtime=NOW - 50)
    write_task(list_dir, 2, "in_progress", "Refactor lookup", "Keep the exact directory first.", mtime=NOW - 40)
    write_task(list_dir, 3, subject="Ship it", blocked_by=["1", "2", "7", "99", "2"], mtime=NOW - 30)
    write_task(list_dir, 10, "in_progress", "Long one", "d" * 400, mtime=NOW - 20)
    write_task(list_dir, 7, "completed", "Done already")
    write_task(list_dir, 8, "deleted", "Gone")
    assert render(make_ctx(tmp_path)) == "\n".join(
        [
            HEADER_EXACT,
            "#2 [in_progress] Refactor lookup",
            "  description: Keep the exact directory first.",
            "#10 [in_progress] Long one",
            "  description: " + "d" * 297 + "…",
            "#1 [pending] Write the parser",
            "#3 [pending] Ship it (blocked by #1,#2)",
        ]
    )


def test_2_subject_truncation_is_utf8_safe(tmp_path: Path) -> None:
    write_task(tmp_path / "tasks" / SESSION, 1, subject="é" * 100)
    line = (render(make_ctx(tmp_path)) or "").splitlines()[1]
    subject = line[len("#1 [pending] ") :]
    assert subject == "é" * 78 + "…" and utf8_len(subject) == 159


def test_2_blockers_that_may_be_open_stay_listed(tmp_path: Path) -> None:
    list_dir = tmp_path / "tasks" / SESSION
    write_task(list_dir, 1, subject="Blocked", blocked_by=["2", "3", "x", "04", "5"])
    (list_dir / "2.json").write_text("{broken")
    write_task(list_dir, 3, "completed")
    write_task(list_dir, 5, "pending")
    assert "#1 [pending] Blocked (blocked by #2,#5)" in (render(make_ctx(tmp_path)) or "")


def test_2_many_blockers_are_counted_not_listed(tmp_path: Path) -> None:
    list_dir = tmp_path / "tasks" / SESSION
    for task_id in range(2, 14):
        write_task(list_dir, task_id)
    write_task(list_dir, 1, subject="Last", blocked_by=[str(n) for n in range(2, 14)])
    assert "#1 [pending] Last (blocked by #2,#3,#4,#5,#6,#7,#8,#9 and 4 more)" in (render(make_ctx(tmp_path)) or "")


# --- 3. completed and deleted excluded; a valid empty store emits nothing and never falls back


def test_3_closed_tasks_never_render(tmp_path: Path) -> None:
    list_dir = tmp_path / "tasks" / SESSION
    write_task(list_dir, 1, "completed", "closed one")
    write_task(list_dir, 2, "deleted", "deleted one")
    write_task(list_dir, 3, "pending", "open one")
    assert render(make_ctx(tmp_path)) == HEADER_EXACT + "\n#3 [pending] open one"


def test_3_valid_empty_store_emits_nothing_and_does_not_fall_back(tmp_path: Path) -> None:
    list_dir = tmp_path / "tasks" / SESSION
    write_task(list_dir, 1, "completed")
    (list_dir / ".lock").write_text("")
    (list_dir / ".highwatermark").write_text("1")
    write_task(tmp_path / "tasks" / "older", 1, "pending", "would be recovered")
    touch(tmp_path / "projects" / "older.jsonl", NOW - 100)
    ctx = make_ctx(tmp_path)
    assert tasks.prepare(ctx) is None
    assert compose.compose(ctx).text == ""


def test_3_empty_directory_is_a_valid_empty_store(tmp_path: Path) -> None:
    (tmp_path / "tasks" / SESSION).mkdir(parents=True)
    write_task(tmp_path / "tasks" / "older", 1)
    touch(tmp_path / "projects" / "older.jsonl", NOW - 100)
    assert tasks.prepare(make_ctx(tmp_path)) is None


# --- 4. missing exact directory + exactly one older sibling: recover it and name it


def test_4_one_older_sibling_is_recovered_and_named(tmp_path: Path) -> None:
    transcript = touch(tmp_path / "projects" / f"{SESSION}.jsonl", NOW - 10)
    write_task(tmp_path / "tasks" / "prev-session", 2, "in_progress", "Carry on", "from before")
    touch(tmp_path / "projects" / "prev-session.jsonl", NOW - 100)
    assert render(make_ctx(tmp_path, transcript=transcript)) == "\n".join(
        [
            "STRUCTURED TASK LIST (compact-proof, recovered from session prev-session; TaskList and TaskUpdate"
            " cannot see these here until you run `session-workflow tasks adopt prev-session`, which copies them"
            " into this session's list under the same ids):",
            "#2 [in_progress] Carry on",
            "  description: from before",
        ]
    )


def test_4_an_id_a_shell_takes_for_an_option_gets_the_read_only_header(tmp_path: Path) -> None:
    write_task(tmp_path / "tasks" / "-rf", 1, subject="Carry on")
    touch(tmp_path / "projects" / "-rf.jsonl", NOW - 100)
    text = render(make_ctx(tmp_path)) or ""
    assert text.startswith(
        "STRUCTURED TASK LIST (compact-proof, recovered from session -rf; read-only here: TaskList and TaskUpdate"
        " cannot see or change these tasks):\n"
    )
    assert "tasks adopt" not in text and "TaskUpdate to change" not in text


def test_4_without_current_transcript_hook_start_is_the_bound(tmp_path: Path) -> None:
    write_task(tmp_path / "tasks" / "prev", 1, subject="Old work")
    touch(tmp_path / "projects" / "prev.jsonl", NOW - 1)
    write_task(tmp_path / "tasks" / "future", 1, subject="Not yet")
    touch(tmp_path / "projects" / "future.jsonl", NOW + 1)
    assert "recovered from session prev;" in (render(make_ctx(tmp_path)) or "")


def test_4_siblings_without_a_task_list_are_never_opened(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Only a sibling with a task list is opened, for the project it recorded (its first ``cwd``)."""
    write_task(tmp_path / "tasks" / "prev", 1)
    (tmp_path / "tasks" / "quiet").mkdir()
    candidate = touch(tmp_path / "projects" / "prev.jsonl", NOW - 100)
    quiet = [touch(tmp_path / "projects" / f"{name}.jsonl", NOW - 200) for name in ("quiet", "no-list")]
    opened: list[str] = []
    real_open = os.open

    def spy(path: str, *args: int) -> int:
        opened.append(os.fspath(path))
        return real_open(path, *args)

    monkeypatch.setattr(os, "open", spy)
    assert tasks.prepare(make_ctx(tmp_path)) is not None
    assert str(candidate) in opened and not {str(path) for path in quiet} & set(opened)


# --- 5. ambiguity fails closed; newer siblings and ineligible ones are ignored; no cwd


def test_5_two_eligible_candidates_fail_closed_to_the_hint(tmp_path: Path) -> None:
    for name, age in (("a", 100), ("b", 200)):
        write_task(tmp_path / "tasks" / name, 1, subject=f"from {name}")
        touch(tmp_path / "projects" / f"{name}.jsonl", NOW - age)
    assert render(make_ctx(tmp_path)) == NOT_RECOVERED


def test_5_newer_sibling_is_ignored(tmp_path: Path) -> None:
    transcript = touch(tmp_path / "projects" / f"{SESSION}.jsonl", NOW - 50)
    write_task(tmp_path / "tasks" / "older", 1, subject="from older")
    touch(tmp_path / "projects" / "older.jsonl", NOW - 100)
    write_task(tmp_path / "tasks" / "newer", 1, subject="from newer")
    touch(tmp_path / "projects" / "newer.jsonl", NOW - 10)
    assert "recovered from session older;" in (render(make_ctx(tmp_path, transcript=transcript)) or "")


def test_5_ineligible_candidates_do_not_count(tmp_path: Path) -> None:
    write_task(tmp_path / "tasks" / "good", 1, subject="real")
    touch(tmp_path / "projects" / "good.jsonl", NOW - 100)
    write_task(tmp_path / "tasks" / "closed", 1, "completed")
    touch(tmp_path / "projects" / "closed.jsonl", NOW - 100)
    (tmp_path / "tasks" / "broken").mkdir()
    (tmp_path / "tasks" / "broken" / "1.json").write_text("nope")
    touch(tmp_path / "projects" / "broken.jsonl", NOW - 100)
    write_task(tmp_path / "tasks" / "sidecar", 1)
    touch(tmp_path / "projects" / "sidecar.live.jsonl", NOW - 100)
    write_task(tmp_path / "tasks" / "notranscript", 1)
    assert "recovered from session good;" in (render(make_ctx(tmp_path)) or "")


def test_5_recovery_ignores_cwd(tmp_path: Path) -> None:
    write_task(tmp_path / "tasks" / "prev", 1)
    touch(tmp_path / "projects" / "prev.jsonl", NOW - 100)
    texts = {render(make_ctx(tmp_path, cwd=cwd)) for cwd in ("/nowhere", str(tmp_path), "/")}
    assert len(texts) == 1 and "recovered from session prev;" in (texts.pop() or "")


def test_5_missing_store_and_no_candidate_emits_nothing(tmp_path: Path) -> None:
    touch(tmp_path / "projects" / "prev.jsonl", NOW - 100)
    assert tasks.prepare(make_ctx(tmp_path)) is None
    assert tasks.prepare(make_ctx(tmp_path, transcript=tmp_path / "no-such-dir" / "x.jsonl")) is None


def test_5_explicit_list_id_never_falls_back(tmp_path: Path) -> None:
    write_task(tmp_path / "tasks" / "prev", 1)
    touch(tmp_path / "projects" / "prev.jsonl", NOW - 100)
    assert tasks.prepare(make_ctx(tmp_path, env={"CLAUDE_CODE_TASK_LIST_ID": "team-list"})) is None


# --- 6. malformed files are skipped; all malformed gives the hint; the hook exits 0


MALFORMED = {
    "not json": b"{nope",
    "not an object": b"[1, 2]",
    "binary": bytes(range(256)),
    "bad utf-8": b'{"id": "\xff"}',
    "id mismatch": json.dumps({"id": "9", "subject": "s", "description": "", "status": "pending"}).encode(),
    "missing description": json.dumps(
        {"id": "{id}", "subject": "s", "status": "pending", "blocks": [], "blockedBy": []}
    ).encode(),
    "unknown status": json.dumps(
        {"id": "{id}", "subject": "s", "description": "", "status": "doing", "blocks": [], "blockedBy": []}
    ).encode(),
    "blockedBy not strings": json.dumps(
        {"id": "{id}", "subject": "s", "description": "", "status": "pending", "blocks": [], "blockedBy": [2]}
    ).encode(),
}


@pytest.mark.parametrize("kind", sorted(MALFORMED))
def test_6_malformed_file_is_named_and_valid_siblings_render(tmp_path: Path, kind: str) -> None:
    list_dir = tmp_path / "tasks" / SESSION
    write_task(list_dir, 1, subject="valid")
    (list_dir / "2.json").write_bytes(MALFORMED[kind].replace(b"{id}", b"2"))
    assert render(make_ctx(tmp_path)) == (
        HEADER_EXACT + "\n#1 [pending] valid\n…task file 2.json could not be read: call TaskList"
    )


def test_6_at_most_3_malformed_files_are_named_newest_first(tmp_path: Path) -> None:
    list_dir = tmp_path / "tasks" / SESSION
    write_task(list_dir, 1, subject="valid")
    for task_id in (2, 3, 4):
        (list_dir / f"{task_id}.json").write_bytes(b'{"id": ')
    named = "\n…task files 4.json, 3.json, 2.json could not be read: call TaskList"
    assert render(make_ctx(tmp_path)) == HEADER_EXACT + "\n#1 [pending] valid" + named
    (list_dir / "10.json").write_bytes(b"[")
    named = "\n…task files 10.json, 4.json, 3.json and 1 more could not be read: call TaskList"
    assert render(make_ctx(tmp_path)) == HEADER_EXACT + "\n#1 [pending] valid" + named


def test_6_the_named_files_are_in_the_floor_and_never_cut(tmp_path: Path) -> None:
    list_dir = tmp_path / "tasks" / SESSION
    write_task(list_dir, 1, subject="valid")
    (list_dir / "2.json").write_bytes(b"{")
    part = tasks.prepare(make_ctx(tmp_path))
    assert part is not None
    named = "\n…task file 2.json could not be read: call TaskList"
    assert part.floor == len((HEADER_EXACT + "\n…1 more: call TaskList" + named).encode("utf-8"))
    assert part.render(part.floor) == HEADER_EXACT + "\n#1 [pending] valid" + named
    assert part.render(part.floor - 1) == ""


def test_6_all_malformed_emits_the_hint(tmp_path: Path) -> None:
    list_dir = tmp_path / "tasks" / SESSION
    list_dir.mkdir(parents=True)
    for index, data in enumerate(MALFORMED.values(), start=1):
        (list_dir / f"{index}.json").write_bytes(data.replace(b"{id}", str(index).encode()))
    write_task(list_dir, 99, "completed")
    part = tasks.prepare(make_ctx(tmp_path))
    named = "…task files 8.json, 7.json, 6.json and 5 more could not be read: call TaskList"
    assert isinstance(part, TaskHintPart) and part.render(4096) == FALLBACK_HINT + "\n" + named
    assert part.open_count == 0 and part.render(part.floor - 1) == ""


def test_6_oversized_and_non_regular_task_files_are_malformed(tmp_path: Path) -> None:
    list_dir = tmp_path / "tasks" / SESSION
    write_task(list_dir, 1, subject="x" * (tasks.MAX_TASK_FILE_BYTES + 10))
    with open(list_dir / "2.json", "wb") as huge:
        huge.truncate(50 * 1024 * 1024)
    (list_dir / "3.json").mkdir()
    os.mkfifo(list_dir / "4.json")
    (list_dir / "5.json").symlink_to("/dev/zero")
    start = time.monotonic()
    named = "…task files 5.json, 4.json, 3.json and 2 more could not be read: call TaskList"
    assert render(make_ctx(tmp_path)) == FALLBACK_HINT + "\n" + named
    assert time.monotonic() - start < 5


def test_6_unreadable_store_emits_the_hint(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write_task(tmp_path / "tasks" / SESSION, 1)

    store = str(tmp_path / "tasks" / SESSION)

    def denying(real: Callable[[str], object]) -> Callable[[str], object]:
        def denied(path: str) -> object:
            if os.fspath(path) == store:
                raise PermissionError(13, "Permission denied", path)
            return real(path)

        return denied

    # Root reads any folder, so the refusal is simulated, for either way of listing.
    monkeypatch.setattr(os, "listdir", denying(os.listdir))
    monkeypatch.setattr(os, "scandir", denying(os.scandir))
    assert render(make_ctx(tmp_path)) == FALLBACK_HINT


def run_hook(tmp_path: Path, payload: bytes) -> subprocess.CompletedProcess[bytes]:
    env = {
        "PATH": os.environ.get("PATH", ""),
        "HOME": str(tmp_path / "home"),
        "CLAUDE_CONFIG_DIR": str(tmp_path),
    }
    return subprocess.run(
        [sys.executable, str(REPO / "hooks" / "hook.py"), "SessionStart"],
        input=payload,
        capture_output=True,
        env=env,
        cwd=str(tmp_path),
        timeout=30,
        check=False,
    )


def test_6_hook_exits_0_with_malformed_files_and_bad_stdin(tmp_path: Path) -> None:
    list_dir = tmp_path / "tasks" / SESSION
    write_task(list_dir, 1, subject="still here")
    (list_dir / "2.json").write_bytes(b"\x00\xff garbage")
    payload = {"hook_event_name": "SessionStart", "source": "compact", "session_id": SESSION, "cwd": str(tmp_path)}
    done = run_hook(tmp_path, json.dumps(payload).encode())
    assert done.returncode == 0 and done.stderr == b""
    context = json.loads(done.stdout)["hookSpecificOutput"]["additionalContext"]
    assert HEADER_EXACT + "\n#1 [pending] still here\n…task file 2.json could not be read: call TaskList" in context
    bad = run_hook(tmp_path, b"{not json")
    assert (bad.returncode, bad.stdout, bad.stderr) == (0, b"", b"")


# --- 7. control characters cannot forge lines or headers


def test_7_forged_subject_and_description_stay_on_their_line(tmp_path: Path) -> None:
    list_dir = tmp_path / "tasks" / SESSION
    write_task(list_dir, 1, subject="real\n#9 [pending] forged\r\n" + HEADER_EXACT)
    write_task(
        list_dir, 2, "in_progress", "a\u2028b\u200b\u202ec\x00d\x1b[31m", "line1\n\n#3 [in_progress] x\t\u2029end"
    )
    assert render(make_ctx(tmp_path)) == "\n".join(
        [
            HEADER_EXACT,
            "#2 [in_progress] a bc d [31m",
            "  description: line1 #3 [in_progress] x end",
            "#1 [pending] real #9 [pending] forged " + HEADER_EXACT,
        ]
    )


def test_7_blank_subject_renders_without_trailing_space(tmp_path: Path) -> None:
    list_dir = tmp_path / "tasks" / SESSION
    list_dir.mkdir(parents=True)
    record = {"id": "1", "subject": " \n\t", "description": "", "status": "pending", "blocks": [], "blockedBy": []}
    (list_dir / "1.json").write_text(json.dumps(record))
    assert render(make_ctx(tmp_path)) == HEADER_EXACT + "\n#1 [pending]"


# --- 8. more than 40 tasks and multibyte text stay within 4096 bytes with the exact omitted count


def test_8_hundred_multibyte_tasks_fit_with_exact_omitted_count(tmp_path: Path) -> None:
    list_dir = tmp_path / "tasks" / SESSION
    for task_id in range(1, 101):
        status = "in_progress" if task_id % 10 == 0 else "pending"
        write_task(list_dir, task_id, status, "任务😀é" * 20, "描述" * 100, mtime=NOW - task_id)
    text = render(make_ctx(tmp_path)) or ""
    lines = text.split("\n")
    task_lines = [line for line in lines if line.startswith("#")]
    assert utf8_len(text) <= 4096
    assert lines[0] == HEADER_EXACT
    assert lines[-1] == f"…{100 - len(task_lines)} more: call TaskList"
    assert 0 < len(task_lines) < 40


def test_8_at_most_40_tasks_even_when_they_all_fit(tmp_path: Path) -> None:
    list_dir = tmp_path / "tasks" / SESSION
    for task_id in range(1, 46):
        write_task(list_dir, task_id, subject="s", mtime=NOW - 1000 + task_id)
    lines = (render(make_ctx(tmp_path)) or "").split("\n")
    assert lines[-1] == "…5 more: call TaskList"
    assert [line.split()[0] for line in lines[1:-1]] == [f"#{n}" for n in range(6, 46)]


def test_8_selection_prefers_in_progress_then_newest(tmp_path: Path) -> None:
    list_dir = tmp_path / "tasks" / SESSION
    # The in-progress task is the oldest file: only "in progress first" selects it.
    write_task(list_dir, 1, "in_progress", "old but in progress", "x" * 300, mtime=NOW - 2000)
    for task_id in range(2, 30):
        write_task(list_dir, task_id, subject="p" * 150, mtime=NOW - 1000 + task_id * (1 if task_id % 2 else -1))
    text = render(make_ctx(tmp_path)) or ""
    shown = [int(line.split()[0][1:]) for line in text.split("\n") if line.startswith("#")]
    by_priority = [1, *range(29, 2, -2), *range(2, 30, 2)]
    assert 15 < len(shown) < 29
    assert shown == [1, *sorted(by_priority[1 : len(shown)])]


def test_8_every_budget_is_respected_and_floor_is_exact(tmp_path: Path) -> None:
    list_dir = tmp_path / "tasks" / SESSION
    for task_id in range(1, 60):
        write_task(list_dir, task_id, "in_progress" if task_id < 5 else "pending", "ü" * task_id, "desc " * task_id)
    part = tasks.prepare(make_ctx(tmp_path))
    assert isinstance(part, TaskListPart) and part.open_count == 59
    assert part.floor == utf8_len(HEADER_EXACT + "\n…59 more: call TaskList")
    assert part.render(part.floor) == HEADER_EXACT + "\n…59 more: call TaskList"
    assert part.render(part.floor - 1) == ""
    for budget in [*range(part.floor, 4200, 7), *range(4200, 10_001, 97)]:
        text = part.render(budget)
        shown = sum(1 for line in text.split("\n") if line.startswith("#"))
        assert utf8_len(text) <= min(budget, 4096)
        assert text.endswith(f"…{59 - shown} more: call TaskList")


def test_8_a_task_too_big_for_the_room_left_is_skipped_not_cut() -> None:
    big = Task(1, "in_progress", "b" * 160, "d" * 300, [], 3.0)
    small = Task(2, "pending", "s", "", [], 2.0)
    text = render_block(HEADER_EXACT, [big, small], 0, utf8_len(HEADER_EXACT) + 200)
    assert text == HEADER_EXACT + "\n#2 [pending] s\n…1 more: call TaskList"


# --- 9. clear emits nothing (the spec: "`clear` and every other source: emit nothing"); startup still recovers


CLEARED = "5d1e0c9a-7b1f-4e0a-9c3d-2a6b8f4e1c70"


def recovered_block(source: str) -> str:
    return "\n".join(
        [
            f"session-workflow: state restored from disk at SessionStart ({source}).",
            "",
            f"STRUCTURED TASK LIST (compact-proof, recovered from session {CLEARED}; TaskList and TaskUpdate"
            f" cannot see these here until you run `session-workflow tasks adopt {CLEARED}`, which copies them"
            " into this session's list under the same ids):",
            "#3 [in_progress] Finish the lexer",
            "  description: rule 7 left",
        ]
    )


def test_9_clear_emits_no_task_block_where_startup_recovers_the_same_store(tmp_path: Path) -> None:
    # Measured on 2.1.332: /clear gives a new session id whose transcript does not exist yet at SessionStart; the
    # cleared session's transcript sits beside it, older than the hook's start.
    write_task(tmp_path / "tasks" / CLEARED, 3, "in_progress", "Finish the lexer", "rule 7 left")
    touch(tmp_path / "projects" / f"{CLEARED}.jsonl", NOW - 30)
    assert compose.compose(make_ctx(tmp_path, source="startup")).text == recovered_block("startup")
    assert compose.compose(make_ctx(tmp_path, source="clear")).text == ""


def test_9_clear_emits_nothing_whatever_the_stores_hold(tmp_path: Path) -> None:
    """The session's own list, two candidates (the hint at startup), an unreadable list: never a line at clear."""
    for name, age in ((CLEARED, 30), ("other-session", 60)):
        write_task(tmp_path / "tasks" / name, 1, subject="Open")
        touch(tmp_path / "projects" / f"{name}.jsonl", NOW - age)
    assert compose.compose(make_ctx(tmp_path, source="startup")).text.endswith("\n\n" + NOT_RECOVERED)
    assert compose.compose(make_ctx(tmp_path, source="clear")).text == ""
    write_task(tmp_path / "tasks" / SESSION, 1, "in_progress", "Own task")
    (tmp_path / "tasks" / SESSION / "2.json").write_text("{broken", encoding="utf-8")
    assert "#1 [in_progress] Own task" in compose.compose(make_ctx(tmp_path, source="startup")).text
    assert compose.compose(make_ctx(tmp_path, source="clear")).text == ""
    (tmp_path / "tasks" / SESSION / "1.json").unlink()  # all malformed: the hint at startup
    assert FALLBACK_HINT in compose.compose(make_ctx(tmp_path, source="startup")).text
    assert compose.compose(make_ctx(tmp_path, source="clear")).text == ""


# --- lookup extras: config dir, list id, sanitising, file names, bounded work


def test_claude_config_dir_and_home_locate_the_store(tmp_path: Path) -> None:
    write_task(tmp_path / "config" / "tasks" / SESSION, 1, subject="in config dir")
    write_task(tmp_path / "home" / ".claude" / "tasks" / SESSION, 1, subject="in home")
    base = {"session_id": SESSION, "source": "startup"}
    env = {"CLAUDE_CONFIG_DIR": str(tmp_path / "config"), "HOME": str(tmp_path / "home")}
    assert "in config dir" in (render(HookContext.from_payload(base, Places(env), NOW)) or "")
    assert "in home" in (render(HookContext.from_payload(base, Places({"HOME": str(tmp_path / "home")}), NOW)) or "")
    # A relative CLAUDE_CONFIG_DIR is not a folder of Claude Code's: the home's store it is.
    relative = {**env, "CLAUDE_CONFIG_DIR": "config"}
    assert "in home" in (render(HookContext.from_payload(base, Places(relative), NOW)) or "")


def test_task_list_id_env_wins_over_session_id(tmp_path: Path) -> None:
    write_task(tmp_path / "tasks" / "shared-list", 1, subject="shared")
    write_task(tmp_path / "tasks" / SESSION, 1, subject="own")
    assert "shared" in (render(make_ctx(tmp_path, env={"CLAUDE_CODE_TASK_LIST_ID": "shared-list"})) or "")
    assert "own" in (render(make_ctx(tmp_path, env={"CLAUDE_CODE_TASK_LIST_ID": ""})) or "")


@pytest.mark.parametrize(
    ("raw", "directory"), [("../escape", "---escape"), ("a.b/c d", "a-b-c-d"), ("..", "--"), ("ok_ID-1", "ok_ID-1")]
)
def test_list_ids_are_sanitised_like_claude_code(tmp_path: Path, raw: str, directory: str) -> None:
    assert tasks.sanitize_list_id(raw) == directory
    write_task(tmp_path / "tasks" / directory, 1, subject="found")
    write_task(tmp_path / "escape", 1, subject="escaped")
    assert "found" in (render(make_ctx(tmp_path, env={"CLAUDE_CODE_TASK_LIST_ID": raw})) or "")
    assert "found" in (render(make_ctx(tmp_path, session_id=raw)) or "")


@pytest.mark.parametrize(
    ("raw", "directory"), [("sprint-\U0001f680", "sprint---"), ("\U0001f680", "--"), ("\u00e9\U0001f680x", "---x")]
)
def test_an_astral_character_in_a_list_id_is_two_dashes_as_in_claude_code(
    tmp_path: Path, raw: str, directory: str
) -> None:
    """Claude Code 2.1.332 names a list folder ``id.replace(/[^a-zA-Z0-9_-]/g, "-")``: a JavaScript pattern
    without the ``u`` flag matches UTF-16 code units, so a character beyond U+FFFF (two units) is two dashes
    (checked with node on a rocket, U+1F680, then "a": ``--a``)."""
    assert tasks.sanitize_list_id(raw) == directory
    write_task(tmp_path / "tasks" / directory, 1, subject="found")
    assert "found" in (render(make_ctx(tmp_path, env={"CLAUDE_CODE_TASK_LIST_ID": raw})) or "")


def test_non_task_files_are_ignored_not_malformed(tmp_path: Path) -> None:
    list_dir = tmp_path / "tasks" / SESSION
    write_task(list_dir, 1, "completed")
    for name in (".lock", ".highwatermark", "1.json.lock", ".2.json", "01.json", "abc.json", "3.JSON", "٣.json", "4"):
        (list_dir / name).write_text("{garbage")
    assert tasks.prepare(make_ctx(tmp_path)) is None


def test_no_session_id_and_no_list_id_means_nothing(tmp_path: Path) -> None:
    write_task(tmp_path / "tasks" / "x", 1)
    ctx = HookContext.from_payload({"source": "compact"}, Places({"CLAUDE_CONFIG_DIR": str(tmp_path)}), NOW)
    assert tasks.prepare(ctx) is None


def test_hundred_thousand_files_stay_fast_and_reads_are_capped(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    list_dir = tmp_path / "tasks" / SESSION
    list_dir.mkdir(parents=True)
    completed = b'{"id":"%d","subject":"s","description":"","status":"completed","blocks":[],"blockedBy":[]}'
    for task_id in range(1, 100_001):
        fd = os.open(list_dir / f"{task_id}.json", os.O_WRONLY | os.O_CREAT, 0o644)
        os.write(fd, completed % task_id)
        os.close(fd)
    write_task(list_dir, 100_000, "in_progress", "newest")
    write_task(list_dir, 5, "pending", "ancient")
    reads: list[str] = []
    real_read = boundedio.read_prefix_and_stat

    def counting(path: str, max_bytes: int) -> tuple[bytes, os.stat_result] | None:
        reads.append(path)
        return real_read(path, max_bytes)

    monkeypatch.setattr(tasks, "read_prefix_and_stat", counting)
    start = time.monotonic()
    text = render(make_ctx(tmp_path)) or ""
    assert time.monotonic() - start < 5
    assert len(reads) == tasks.MAX_TASK_FILES_READ == 200
    assert reads[0].endswith("/100000.json") and reads[-1].endswith("/99801.json")
    assert text == HEADER_EXACT + "\n#100000 [in_progress] newest\n…99800 older task files not read: call TaskList"


def test_capped_store_without_open_tasks_read_gives_the_hint(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(tasks, "MAX_TASK_FILES_READ", 2)
    list_dir = tmp_path / "tasks" / SESSION
    write_task(list_dir, 1, "pending")
    write_task(list_dir, 2, "completed")
    write_task(list_dir, 3, "completed")
    assert render(make_ctx(tmp_path)) == FALLBACK_HINT


def test_fallback_fails_closed_when_a_candidate_cannot_be_read_in_full(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(tasks, "MAX_TASK_FILES_READ", 2)
    write_task(tmp_path / "tasks" / "prev", 1, "pending")
    write_task(tmp_path / "tasks" / "prev", 2, "completed")
    write_task(tmp_path / "tasks" / "prev", 3, "completed")
    touch(tmp_path / "projects" / "prev.jsonl", NOW - 100)
    assert render(make_ctx(tmp_path)) == NOT_RECOVERED


@pytest.mark.parametrize(
    ("name", "valid"),
    [
        ("1", True),
        ("9" * 18, True),
        ("1" * 19, False),
        ("0", False),
        ("01", False),
        ("", False),
        ("+1", False),
        ("1_0", False),
        (" 1", False),
        ("\u0661", False),
        ("\u00b2", False),
        ("12a", False),
    ],
)
def test_task_ids_are_claude_codes_own(name: str, valid: bool) -> None:
    """``/^[1-9]\\d*$/`` in ASCII digits, at most 18 of them; ``int()`` alone would take most of the rest."""
    assert tasks.is_task_id(name) is valid


# A list Claude Code only created tasks in (2.1.332 writes ``.highwatermark`` on a delete, a reset or a skipped id,
# never on a TaskCreate) holds 1.json … M.json: one of 1,000 or more is probed by name, not listed.
COMPLETED = b'{"id":"%d","subject":"s","description":"","status":"completed","blocks":[],"blockedBy":[]}'


def write_run(list_dir: Path, last: int, skip: tuple[int, ...] = ()) -> None:
    """Completed tasks 1 … ``last`` but ``skip``, as Claude Code numbers them (the newest written last)."""
    list_dir.mkdir(parents=True, exist_ok=True)
    for task_id in range(1, last + 1):
        if task_id not in skip:
            (list_dir / f"{task_id}.json").write_bytes(COMPLETED % task_id)


def no_listing(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Records every listing of a list directory (``list_task_ids``) the hook makes."""
    listed: list[str] = []
    real = tasks.list_task_ids

    def counting(directory: str) -> list[int] | tasks.Unreadable | None:
        listed.append(directory)
        return real(directory)

    monkeypatch.setattr(tasks, "list_task_ids", counting)
    return listed


@pytest.mark.parametrize("last", [1000, 1001, 1999, 2000, 2001, 4097, 12_345])
def test_a_run_of_1000_or_more_without_a_mark_is_probed_to_its_last_id(tmp_path: Path, last: int) -> None:
    write_run(tmp_path, last)
    assert tasks.task_ids(str(tmp_path)) == range(1, last + 1)


def test_a_long_list_without_a_mark_reads_its_newest_200_and_counts_the_rest_unlisted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    list_dir = tmp_path / "tasks" / SESSION
    write_run(list_dir, 1500)
    write_task(list_dir, 1500, "in_progress", "newest", blocked_by=["1499", "1301", "1600"])
    write_task(list_dir, 1301, "pending", "oldest read")
    (list_dir / ".lock").write_text("")
    listed = no_listing(monkeypatch)
    text = render(make_ctx(tmp_path))
    assert listed == []
    # #1499 is completed and #1600 does not exist: only the open #1301 still blocks
    assert text == "\n".join(
        [
            HEADER_EXACT,
            "#1500 [in_progress] newest (blocked by #1301)",
            "#1301 [pending] oldest read",
            "…1300 older task files not read: call TaskList",
        ]
    )


@pytest.mark.parametrize("mark", ["700", "99999", "garbage", ""])
def test_a_list_with_a_high_water_mark_is_listed_whatever_the_mark_says(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, mark: str
) -> None:
    """Claude Code deleted a task there (or the mark lies): below the mark there may be gaps, so the count of the
    older files comes from the listing."""
    list_dir = tmp_path / "tasks" / SESSION
    write_run(list_dir, 1500, skip=(700,))
    write_task(list_dir, 1500, "pending", "newest")
    (list_dir / ".highwatermark").write_text(mark)
    listed = no_listing(monkeypatch)
    text = render(make_ctx(tmp_path))
    assert listed == [str(list_dir)]
    assert text == HEADER_EXACT + "\n#1500 [pending] newest\n…1299 older task files not read: call TaskList"


@pytest.mark.parametrize("gap", [1499, 1400, 1301, 1000, 1])
def test_a_file_gone_from_the_run_without_a_mark_makes_the_hook_list_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, gap: int
) -> None:
    """A file deleted by hand (Claude Code raises the mark first) where the probe or the reads meet it: the list
    is read as listed, the newest 200 files there, and the count exact."""
    list_dir = tmp_path / "tasks" / SESSION
    write_run(list_dir, 1500, skip=(gap,))
    write_task(list_dir, 1500, "pending", "newest")
    listed = no_listing(monkeypatch)
    text = render(make_ctx(tmp_path))
    assert listed == [str(list_dir)]
    assert text == HEADER_EXACT + "\n#1500 [pending] newest\n…1299 older task files not read: call TaskList"


def test_what_the_probe_cannot_see_is_what_claude_codes_numbering_never_leaves(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The limit of not listing, pinned: a file deleted by hand below the 200 read is still counted, and one put
    past the run's end by hand (Claude Code would have numbered it 1501) is not seen. TaskList, which the line
    names, lists the folder."""
    list_dir = tmp_path / "tasks" / SESSION
    write_run(list_dir, 1500, skip=(5,))
    write_task(list_dir, 1500, "pending", "newest")
    write_task(list_dir, 5000, "pending", "by hand")
    listed = no_listing(monkeypatch)
    text = render(make_ctx(tmp_path))
    assert listed == []
    assert text == HEADER_EXACT + "\n#1500 [pending] newest\n…1300 older task files not read: call TaskList"


def test_malformed_files_in_a_probed_run_are_named_not_a_reason_to_list(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    list_dir = tmp_path / "tasks" / SESSION
    write_run(list_dir, 1500)
    write_task(list_dir, 1498, "pending", "open")
    (list_dir / "1500.json").write_bytes(b'{"id":"1500","subj')  # cut mid-write
    (list_dir / "1499.json").write_bytes(COMPLETED % 7)  # another id than its name
    os.mkdir(list_dir / "1497.json.d")
    listed = no_listing(monkeypatch)
    text = render(make_ctx(tmp_path))
    assert listed == []
    assert text == "\n".join(
        [
            HEADER_EXACT,
            "#1498 [pending] open",
            "…1300 older task files not read: call TaskList",
            "…task files 1500.json, 1499.json could not be read: call TaskList",
        ]
    )


def test_a_short_or_unlistable_list_is_listed_as_before(tmp_path: Path) -> None:
    """Below 1,000 ids, or without 1.json, the list is listed (a few hundred names cost less than the probes)."""
    write_run(tmp_path / "short", 999)
    short = tasks.task_ids(str(tmp_path / "short"))
    assert isinstance(short, list) and sorted(short) == list(range(1, 1000))
    write_run(tmp_path / "no-first", 1500, skip=(1,))
    assert isinstance(tasks.task_ids(str(tmp_path / "no-first")), list)
    assert tasks.task_ids(str(tmp_path / "missing")) is None
    (tmp_path / "file").write_text("")
    assert tasks.task_ids(str(tmp_path / "file")) is None


@pytest.mark.parametrize(("newest", "gap"), [(5000, 2000), (5000, 4000), (7000, 6000)])
def test_a_file_missing_at_a_probed_id_below_the_read_window_hides_no_newer_task(
    tmp_path: Path, newest: int, gap: int
) -> None:
    """The probe takes an absent id for the run's end only when the next id is absent too: a file removed by
    hand at one of the ids it checks (doubling: 2,000, 4,000; halving: 6,000 of 7,000) must not cut the list
    there and hide the newest tasks."""
    list_dir = tmp_path / "tasks" / SESSION
    write_run(list_dir, newest, skip=(gap,))
    write_task(list_dir, newest, "in_progress", "the task under way")
    probed = tasks.task_ids(str(list_dir))
    assert probed is not None and not isinstance(probed, tasks.Unreadable) and max(probed) == newest
    text = render(make_ctx(tmp_path))
    assert text is not None and f"#{newest} [in_progress] the task under way" in text


def test_a_delete_claude_code_makes_while_the_hook_probes_hides_no_newer_task(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Claude Code raises the high-water mark, then unlinks the file: a delete of #2,000 and #2,001 right after the
    probe found no mark (two files, so no gap shows where the probe looks) is seen by the mark's second look, and
    the list is read from a listing."""
    list_dir = tmp_path / "tasks" / SESSION
    write_run(list_dir, 5000)
    write_task(list_dir, 5000, "in_progress", "the task under way")
    real = tasks._exists
    deleted: list[bool] = []

    def racing(path: str) -> bool | None:
        answer = real(path)
        if path.endswith(tasks.HIGH_WATER_MARK) and not deleted:
            (list_dir / tasks.HIGH_WATER_MARK).write_text("2000")
            (list_dir / "2000.json").unlink()
            (list_dir / "2001.json").unlink()
            deleted.append(True)
        return answer

    monkeypatch.setattr(tasks, "_exists", racing)
    text = render(make_ctx(tmp_path))
    assert deleted and text is not None and "#5000 [in_progress] the task under way" in text


def test_a_probed_run_whose_listing_then_fails_gets_the_hint_not_silence(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A file gone from the newest 200 sends the probed run to a listing; a folder that can be searched but not
    listed (simulated: root ignores modes) then gives the hint, never a silent empty list."""
    list_dir = tmp_path / "tasks" / SESSION
    write_run(list_dir, 1500, skip=(1450,))
    write_task(list_dir, 1499, "in_progress", "the task under way")
    monkeypatch.setattr(tasks, "list_task_ids", lambda directory: tasks.UNREADABLE)
    text = render(make_ctx(tmp_path))
    assert text is not None and "TaskList" in text
