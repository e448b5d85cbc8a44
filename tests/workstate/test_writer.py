"""The work-state writer: the fixed file format, edits and refusals, the journal, concurrency and crash safety.

The multi-process tests run a small slice by default (8 processes × 8 ``state step`` through the CLI's main,
6 random kills); ``SESSION_WORKFLOW_STRESS=1`` runs them at full size: 8 processes × 200 ``state step`` each,
in-process and again as 1,600 separate CLI processes, and 100 random kills.
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from session_workflow.core.locations import state_path
from session_workflow.workstate import writer as workstate_writer
from session_workflow.workstate.section import section, snapshot_key
from session_workflow.workstate.state import decode
from session_workflow.workstate.writer import WorkStateError
from tests.reliability.sizes import SCALE

REPO = Path(__file__).resolve().parents[2]
SRC = str(REPO / "src")
STRESS = os.environ.get("SESSION_WORKFLOW_STRESS") == "1"
NOW = 1_795_978_800.0  # 2026-11-29T19:00:00Z


def child_env() -> dict[str, str]:
    extra = os.environ.get("PYTHONPATH")
    return {**os.environ, "PYTHONPATH": SRC + (os.pathsep + extra if extra else "")}


def put(project: Path, owner: str = "s1", **fields: object) -> workstate_writer.Change:
    options: dict[str, object] = {"ticket": 34, "title": "Fix the parser", "map_number": 12, "map_given": True}
    options.update({"slug": "acme/widgets", **fields})
    return workstate_writer.set_ticket(state_path(str(project)), owner, now=NOW, **options)  # type: ignore[arg-type]


def read_state(project: Path) -> dict[str, object]:
    document = json.loads(Path(state_path(str(project))).read_bytes())
    assert isinstance(document, dict)
    return document


def journal(project: Path) -> list[dict[str, object]]:
    folder = Path(state_path(str(project))).parent
    lines: list[str] = []
    for name in ("work-state.log.1", "work-state.log"):
        if (folder / name).exists():
            lines += (folder / name).read_text().splitlines()
    return [json.loads(line) for line in lines]


def test_the_file_format_is_fixed(tmp_path: Path) -> None:
    put(tmp_path, step="execute")
    path = Path(state_path(str(tmp_path)))
    assert path == tmp_path / ".claude" / "session-workflow" / "work-state.json"
    expected_text = section(decode(path.read_bytes())[0], False, "acme/widgets")  # type: ignore[index]
    assert (
        path.read_text()
        == json.dumps(
            {
                "version": 1,
                "map": 12,
                "ticket": 34,
                "title": "Fix the parser",
                "url": "https://github.com/acme/widgets/issues/34",
                "step": "execute",
                "paused": False,
                "auto": False,
                "session": "s1",
                "updated_at": "2026-11-29T19:00:00Z",
                "section": {"key": '[12,34,"Fix the parser",false,false]', "text": expected_text},
            },
            indent=2,
        )
        + "\n"
    )
    assert (path.parent / ".gitignore").read_text() == "*\n"


def test_the_stored_section_and_key_follow_every_write(tmp_path: Path) -> None:
    put(tmp_path, step="plan")
    workstate_writer.set_step(state_path(str(tmp_path)), "s1", "verify", slug=None, now=NOW)
    document = read_state(tmp_path)
    loaded = decode(Path(state_path(str(tmp_path))).read_bytes())
    assert loaded is not None
    state, key, text = loaded
    assert key == snapshot_key(state, False)
    assert text == section(state, False, None)
    assert text is not None and "Step: verify" in text and document["step"] == "verify"


def test_set_on_the_same_ticket_edits_and_on_another_starts_afresh(tmp_path: Path) -> None:
    put(tmp_path, step="execute", auto=True, url="https://example.org/34")
    workstate_writer.set_paused(state_path(str(tmp_path)), "s1", True, slug=None, now=NOW)
    put(tmp_path, title="Fix the parser, really", map_number=None, map_given=False)
    edited = read_state(tmp_path)
    assert (edited["title"], edited["map"], edited["step"], edited["paused"], edited["auto"], edited["url"]) == (
        "Fix the parser, really",
        12,
        "execute",
        True,
        True,
        "https://example.org/34",
    )
    put(tmp_path, ticket=35, title="Next", map_number=None, map_given=False)
    fresh = read_state(tmp_path)
    assert (fresh["ticket"], fresh["map"], fresh["step"], fresh["paused"], fresh["auto"], fresh["url"]) == (
        35,
        None,
        "start",
        False,
        False,
        "https://github.com/acme/widgets/issues/35",
    )
    put(tmp_path, ticket="PROJ-7", title="Tracker", map_number=None, map_given=True)
    tracker = read_state(tmp_path)
    assert tracker["ticket"] == "PROJ-7" and "url" not in tracker and tracker["map"] is None


def test_set_takes_over_and_step_refuses_another_sessions_state(tmp_path: Path) -> None:
    put(tmp_path, owner="old", step="execute")
    path = state_path(str(tmp_path))
    before = Path(path).read_bytes()
    with pytest.raises(WorkStateError, match=r"belongs to session old, not this one; .* state adopt"):
        workstate_writer.set_step(path, "new", "verify", slug=None, now=NOW)
    with pytest.raises(WorkStateError, match=r"belongs to session old, not this one; .* state adopt"):
        workstate_writer.set_paused(path, "new", True, slug=None, now=NOW)
    assert Path(path).read_bytes() == before
    change = workstate_writer.adopt(path, "new", slug=None, now=NOW)
    assert change.before is not None and change.before.session == "old"
    assert read_state(tmp_path)["session"] == "new"
    workstate_writer.set_step(path, "new", "verify", slug=None, now=NOW)
    taken = put(tmp_path, owner="third", ticket=40, title="Mine now")
    assert taken.before is not None and taken.before.session == "new"
    assert read_state(tmp_path)["session"] == "third"


def test_changes_without_a_state_and_a_corrupt_state(tmp_path: Path) -> None:
    path = state_path(str(tmp_path))
    with pytest.raises(WorkStateError, match=r"no work state in .*state set"):
        workstate_writer.set_step(path, "s1", "verify", slug=None, now=NOW)
    with pytest.raises(WorkStateError, match=r"no work state in .*state set"):
        workstate_writer.adopt(path, "s1", slug=None, now=NOW)
    assert not os.path.exists(tmp_path / ".claude"), "a refused write creates no folder and no lock file"
    os.makedirs(os.path.dirname(path))
    Path(path).write_text('{"version": 1, "ticket": ')
    with pytest.raises(WorkStateError, match="not a valid work state; fix it, or start afresh with `state clear`"):
        workstate_writer.set_step(path, "s1", "verify", slug=None, now=NOW)
    assert Path(path).read_text() == '{"version": 1, "ticket": '
    put(tmp_path)
    assert read_state(tmp_path)["ticket"] == 34


def test_clear_removes_any_state_under_the_lock(tmp_path: Path) -> None:
    path = state_path(str(tmp_path))
    assert workstate_writer.clear(path, None, now=NOW) == (False, None)
    put(tmp_path, owner="someone-else")
    existed, before = workstate_writer.clear(path, "s1", now=NOW)
    assert existed and before is not None and before.ticket == 34
    assert not os.path.exists(path)
    Path(path).write_text("garbage")
    assert workstate_writer.clear(path, "s1", now=NOW) == (True, None)
    os.mkdir(path)
    with pytest.raises(WorkStateError, match="cannot clear"):
        workstate_writer.clear(path, "s1", now=NOW)


def test_the_journal_records_each_write_and_what_it_replaced(tmp_path: Path) -> None:
    path = state_path(str(tmp_path))
    put(tmp_path, step="plan")
    workstate_writer.set_step(path, "s1", "execute", slug=None, now=NOW)
    workstate_writer.set_paused(path, "s1", True, slug=None, now=NOW)
    workstate_writer.clear(path, None, now=NOW)
    assert journal(tmp_path) == [
        {
            "at": "2026-11-29T19:00:00Z",
            "op": "set",
            "by": "s1",
            "state": {"ticket": 34, "step": "plan", "paused": False},
            "was": None,
        },
        {
            "at": "2026-11-29T19:00:00Z",
            "op": "step",
            "by": "s1",
            "state": {"ticket": 34, "step": "execute", "paused": False},
            "was": {"ticket": 34, "step": "plan", "paused": False},
        },
        {
            "at": "2026-11-29T19:00:00Z",
            "op": "pause",
            "by": "s1",
            "state": {"ticket": 34, "step": "execute", "paused": True},
            "was": {"ticket": 34, "step": "execute", "paused": False},
        },
        {
            "at": "2026-11-29T19:00:00Z",
            "op": "clear",
            "by": None,
            "state": None,
            "was": {"ticket": 34, "step": "execute", "paused": True},
        },
    ]


def test_the_journal_rotates_once_past_its_bound(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(workstate_writer, "MAX_JOURNAL_BYTES", 1000)
    path = state_path(str(tmp_path))
    put(tmp_path)
    for index in range(30):
        workstate_writer.set_step(path, "s1", f"step-{index}", slug=None, now=NOW)
    folder = Path(path).parent
    assert (folder / "work-state.log.1").stat().st_size <= 1000 + 200
    assert (folder / "work-state.log").stat().st_size <= 1000 + 200
    assert journal(tmp_path)[-1]["state"] == {"ticket": 34, "step": "step-29", "paused": False}
    assert sorted(p.name for p in folder.iterdir()) == [
        ".gitignore",
        ".work-state.json.lock",
        "work-state.json",
        "work-state.log",
        "work-state.log.1",
    ]


WORKER = """
import os, sys, time
from session_workflow.cli.main import main
project, name, count, go, per_process = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4], sys.argv[5] == "1"
while not os.path.exists(go):
    time.sleep(0.001)
for index in range(count):
    argv = ["state", "step", f"{name}-{index}", "--dir", project, "--session", "s1"]
    if per_process:
        import subprocess
        code = subprocess.call([sys.executable, "-m", "session_workflow", *argv], stdout=subprocess.DEVNULL)
    else:
        code = main(argv)
    if code != 0:
        sys.exit(f"{name}-{index} exited {code}")
"""

READER = """
import json, os, sys, time
path, stop = sys.argv[1], sys.argv[2]
reads = bad = 0
while not os.path.exists(stop):
    time.sleep(0.001)
    try:
        with open(path, "rb") as handle:
            data = handle.read()
    except FileNotFoundError:
        continue
    reads += 1
    try:
        document = json.loads(data)
        assert document["version"] == 1 and document["section"]["text"]
    except Exception:
        bad += 1
print(reads, bad)
"""


@pytest.mark.parametrize(
    ("per_process", "count"),
    [
        (False, 200 if STRESS else 8),
        pytest.param(
            True,
            max(8, round(200 * SCALE)),  # the stress slice runs a share of the 200
            marks=[pytest.mark.slow, pytest.mark.skipif(not STRESS, reason="SESSION_WORKFLOW_STRESS=1 only")],
        ),
    ],
    ids=["in-process", "cli-processes"],
)
def test_concurrent_writers_lose_no_step_and_readers_never_see_a_torn_file(
    tmp_path: Path, per_process: bool, count: int
) -> None:
    put(tmp_path, step="start")
    path = state_path(str(tmp_path))
    go, stop = tmp_path / "go", tmp_path / "stop"
    env = child_env()
    readers = [
        subprocess.Popen([sys.executable, "-c", READER, path, str(stop)], stdout=subprocess.PIPE, env=env)
        for _ in range(2)
    ]
    workers = [
        subprocess.Popen(
            [sys.executable, "-c", WORKER, str(tmp_path), f"w{k}", str(count), str(go), "1" if per_process else "0"],
            stderr=subprocess.PIPE,
            env=env,
        )
        for k in range(8)
    ]
    go.touch()
    failures = [worker.communicate(timeout=600)[1].decode() for worker in workers]
    stop.touch()
    reads = [tuple(map(int, reader.communicate(timeout=60)[0].split())) for reader in readers]
    assert [worker.returncode for worker in workers] == [0] * 8, failures
    assert all(total > 0 and bad == 0 for total, bad in reads), reads

    entries = journal(tmp_path)
    steps = entries[1:]
    assert len(steps) == 8 * count
    for previous, entry in zip(entries, steps):
        assert entry["was"] == previous["state"], "a write did not build on the one before it"
    assert {entry["state"]["step"] for entry in steps} == {f"w{k}-{i}" for k in range(8) for i in range(count)}  # type: ignore[index]
    final = read_state(tmp_path)
    assert final["step"] == steps[-1]["state"]["step"]  # type: ignore[index]
    assert decode(Path(path).read_bytes()) is not None
    assert sorted(p.name for p in Path(path).parent.iterdir() if not p.name.startswith("work-state.log")) == [
        ".gitignore",
        ".work-state.json.lock",
        "work-state.json",
    ]


STALLING_WRITER = """
import os, sys, time
from session_workflow.cli.main import main
real_fsync = os.fsync
def stall(fd):
    real_fsync(fd)
    sys.stdout.write("mid-write\\n")
    sys.stdout.flush()
    time.sleep(120)
os.fsync = stall
main(["state", "step", "never-lands", "--dir", sys.argv[1], "--session", "s1"])
"""


def cli(*argv: str, timeout: float = 30) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "session_workflow", *argv],
        capture_output=True,
        text=True,
        env=child_env(),
        timeout=timeout,
    )


def test_a_writer_killed_mid_write_leaves_the_old_file_and_a_free_lock(tmp_path: Path) -> None:
    put(tmp_path, step="execute")
    path = Path(state_path(str(tmp_path)))
    before = path.read_bytes()
    child = subprocess.Popen(
        [sys.executable, "-c", STALLING_WRITER, str(tmp_path)], stdout=subprocess.PIPE, env=child_env()
    )
    assert child.stdout is not None
    assert child.stdout.readline() == b"mid-write\n"
    assert [p for p in path.parent.iterdir() if p.name.endswith(".tmp")], "the temp file should exist mid-write"
    child.send_signal(signal.SIGKILL)
    child.wait(timeout=10)
    assert path.read_bytes() == before
    started = time.monotonic()
    result = cli("state", "step", "verify", "--dir", str(tmp_path), "--session", "s1")
    assert result.returncode == 0, result.stderr
    assert time.monotonic() - started < 5, "the next writer waited on a dead writer's lock"
    assert read_state(tmp_path)["step"] == "verify"
    assert not [p for p in path.parent.iterdir() if p.name.endswith(".tmp")]


def test_writers_killed_at_random_points_always_leave_a_valid_state(tmp_path: Path) -> None:
    put(tmp_path, step="start")
    path = Path(state_path(str(tmp_path)))
    chooser = random.Random(6)
    options = ["--dir", str(tmp_path), "--session", "s1"]
    for index in range(100 if STRESS else 6):
        child = subprocess.Popen(
            [sys.executable, "-m", "session_workflow", "state", "step", f"k{index}", *options],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            env=child_env(),
        )
        time.sleep(chooser.uniform(0.0, 0.3))
        child.send_signal(signal.SIGKILL)
        child.wait(timeout=10)
        decoded = decode(path.read_bytes())
        assert decoded is not None and decoded[0].step in {"start"} | {f"k{i}" for i in range(index + 1)}
    result = cli("state", "step", "after", "--dir", str(tmp_path), "--session", "s1", timeout=10)
    assert result.returncode == 0, result.stderr
    assert read_state(tmp_path)["step"] == "after"
