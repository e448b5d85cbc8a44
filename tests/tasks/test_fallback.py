"""The fallback's cost stays flat in the number of sibling transcripts, and its answers stay the conservative ones.

The lookup lists the tasks root once and stats only the siblings that have a task list; these tests pin that it
still finds exactly what probing every sibling would (odd names, sidecars, an unlistable root) and that the read
caps fail closed.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from session_workflow.core.parts import PreparedPart
from session_workflow.tasks import store as tasks
from session_workflow.tasks.render import NOT_RECOVERED
from session_workflow.tasks.store import Ambiguous
from tests.tasks.test_store import NOW, SESSION, make_ctx, render, touch, write_task

RECOVERED = (
    "STRUCTURED TASK LIST (compact-proof, recovered from session {0}; TaskList and TaskUpdate cannot see these here"
    " until you run `session-workflow tasks adopt {0}`, which copies them into this session's list under the same"
    " ids):"
)


def test_only_siblings_with_a_task_list_are_stat_ed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    projects = tmp_path / "projects"
    for n in range(200):
        touch(projects / f"{n:08d}-0000-4000-8000-000000000000.jsonl", NOW - 1000 - n)
    write_task(tmp_path / "tasks" / "prev", 1, subject="Carry on")
    touch(projects / "prev.jsonl", NOW - 100)
    stated: list[str] = []
    real_stat = os.stat

    def spy(path: str) -> os.stat_result:
        stated.append(path)
        return real_stat(path)

    monkeypatch.setattr(os, "stat", spy)
    assert render(make_ctx(tmp_path)) == RECOVERED.format("prev") + "\n#1 [pending] Carry on"
    assert [path for path in stated if path.startswith(str(projects))] == [
        str(projects / f"{SESSION}.jsonl"),
        str(projects / "prev.jsonl"),
    ]


def test_missing_tasks_root_lists_no_transcripts(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    touch(tmp_path / "projects" / "prev.jsonl", NOW - 100)
    listed: list[str] = []
    real_listdir = os.listdir

    def spy(path: str) -> list[str]:
        listed.append(path)
        return real_listdir(path)

    monkeypatch.setattr(os, "listdir", spy)
    assert tasks.prepare(make_ctx(tmp_path)) is None
    assert [os.fspath(path) for path in listed if "projects" in os.fspath(path)] == []


def test_a_sibling_is_matched_through_its_sanitised_id(tmp_path: Path) -> None:
    write_task(tmp_path / "tasks" / "prev-v2", 3, subject="From the odd name")
    touch(tmp_path / "projects" / "prev.v2.jsonl", NOW - 100)
    assert render(make_ctx(tmp_path)) == RECOVERED.format("prev-v2") + "\n#3 [pending] From the odd name"


def test_two_siblings_that_sanitise_to_one_list_are_ambiguous(tmp_path: Path) -> None:
    write_task(tmp_path / "tasks" / "a-b", 1)
    touch(tmp_path / "projects" / "a-b.jsonl", NOW - 100)
    touch(tmp_path / "projects" / "a.b.jsonl", NOW - 200)
    assert render(make_ctx(tmp_path)) == NOT_RECOVERED


def test_a_live_sidecar_never_counts_even_when_a_list_bears_its_name(tmp_path: Path) -> None:
    write_task(tmp_path / "tasks" / "side.live", 1, subject="sidecar")
    touch(tmp_path / "projects" / "side.live.jsonl", NOW - 100)
    assert tasks.prepare(make_ctx(tmp_path)) is None
    write_task(tmp_path / "tasks" / "real", 1, subject="real")
    touch(tmp_path / "projects" / "real.jsonl", NOW - 100)
    assert render(make_ctx(tmp_path)) == RECOVERED.format("real") + "\n#1 [pending] real"


def test_an_unlistable_tasks_root_still_probes_every_sibling(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write_task(tmp_path / "tasks" / "prev", 1, subject="Behind a closed root")
    touch(tmp_path / "projects" / "prev.jsonl", NOW - 100)
    touch(tmp_path / "projects" / "other.jsonl", NOW - 200)
    real_listdir = os.listdir

    def denied_root(path: str) -> list[str]:
        if path == str(tmp_path / "tasks"):
            raise PermissionError(13, "Permission denied", path)
        return real_listdir(path)

    monkeypatch.setattr(os, "listdir", denied_root)
    assert render(make_ctx(tmp_path)) == RECOVERED.format("prev") + "\n#1 [pending] Behind a closed root"


def test_many_small_finished_lists_are_all_ruled_out(tmp_path: Path) -> None:
    for n in range(99):
        session = f"done-{n}"
        for task_id in (1, 2, 3):
            write_task(tmp_path / "tasks" / session, task_id, "completed")
        touch(tmp_path / "projects" / f"{session}.jsonl", NOW - 200 - n)
    write_task(tmp_path / "tasks" / "prev", 7, subject="Still open")
    touch(tmp_path / "projects" / "prev.jsonl", NOW - 100)
    assert render(make_ctx(tmp_path)) == RECOVERED.format("prev") + "\n#7 [pending] Still open"


def test_a_finished_list_longer_than_the_per_list_cap_is_ambiguous(tmp_path: Path) -> None:
    write_task(tmp_path / "tasks" / "prev", 1, subject="Open")
    touch(tmp_path / "projects" / "prev.jsonl", NOW - 100)
    write_task(tmp_path / "tasks" / "long", 1, "pending", "too old to be read")
    for task_id in range(2, tasks.MAX_TASK_FILES_READ + 2):
        write_task(tmp_path / "tasks" / "long", task_id, "completed")
    touch(tmp_path / "projects" / "long.jsonl", NOW - 200)
    assert render(make_ctx(tmp_path)) == NOT_RECOVERED


def test_a_recovered_list_reads_only_its_newest_files(tmp_path: Path) -> None:
    for task_id in range(1, 251):
        write_task(tmp_path / "tasks" / "prev", task_id, "completed" if task_id < 250 else "pending")
    touch(tmp_path / "projects" / "prev.jsonl", NOW - 100)
    assert render(make_ctx(tmp_path)) == "\n".join(
        [RECOVERED.format("prev"), "#250 [pending] task 250", "…50 older task files not read: call TaskList"]
    )


@pytest.mark.parametrize(
    ("names", "plain"),
    [
        ([], True),
        (["0b9f7c1e-2f4a.jsonl", "0b9f7c1e-2f4a", "memory", "x_y.live.jsonl"], True),
        (["a.b.jsonl"], False),
        (["x.jsonl.jsonl"], False),
        (["notes.md"], False),
        (["caf\u00e9.jsonl"], False),
        (["a b.jsonl"], False),
        (["bad\udcff.jsonl"], False),
        ([".jsonl", ".live.jsonl"], True),
    ],
)
def test_listings_that_need_no_sanitising_are_recognised(names: list[str], plain: bool) -> None:
    assert tasks.ids_need_no_sanitising(names) is plain


# Session names that sanitise to each other, a sidecar, and names no list can match, so the fast path and the
# probe of every sibling meet every case where they could differ.
sibling_names = st.sampled_from(["a", "b", "a-b", "a.b", "a b", "x.live", "x", "\u00e9", "-", "c_1"])
sibling = st.tuples(
    sibling_names,
    st.sampled_from(["transcript", "sidecar", "none"]),
    st.integers(-300, 50),
    st.sampled_from(["open", "closed", "malformed", "empty", "file", "none"]),
)


def lay_out(root: Path, siblings: list[tuple[str, str, int, str]], odd_file: bool) -> None:
    """Sibling transcripts (or sidecars) of the given ages and task lists of the given kinds under ``root``."""
    projects = root / "projects"
    projects.mkdir()
    (root / "tasks").mkdir()
    if odd_file:
        (projects / "notes.md").write_text("")
    for name, transcript, age, store in siblings:
        if transcript != "none":
            suffix = ".live.jsonl" if transcript == "sidecar" else ".jsonl"
            touch(projects / f"{name}{suffix}", NOW + age)
        list_dir = root / "tasks" / name
        if store in ("open", "closed"):
            write_task(list_dir, 1, "pending" if store == "open" else "completed")
        elif store == "malformed":
            list_dir.mkdir(exist_ok=True)
            (list_dir / "1.json").write_text("{")
        elif store == "empty":
            list_dir.mkdir(exist_ok=True)
        elif store == "file" and not list_dir.exists():
            list_dir.write_text("")


def lookup(root: Path) -> object:
    """What the predecessor lookup answers, in comparable form."""
    found = tasks.find_predecessor(make_ctx(root), str(root / "tasks"), SESSION, tasks.MAX_FALLBACK_FILES_READ)
    if isinstance(found, Ambiguous) or found is None:
        return found
    return found[0], [(task.id, task.status) for task in found[1].open_tasks]


def answers_alike(
    monkeypatch: pytest.MonkeyPatch, siblings: list[tuple[str, str, int, str]], odd_file: bool, name: str, value: object
) -> None:
    """The lookup answers the same with ``tasks.<name>`` replaced by ``value`` as without."""
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        lay_out(root, siblings, odd_file)
        listed = lookup(root)
        with monkeypatch.context() as patch:
            patch.setattr(tasks, name, value)
            assert listed == lookup(root)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(siblings=st.lists(sibling, max_size=6, unique_by=lambda item: item[0]), odd_file=st.booleans())
def test_listing_the_root_finds_what_probing_every_sibling_finds(
    monkeypatch: pytest.MonkeyPatch, siblings: list[tuple[str, str, int, str]], odd_file: bool
) -> None:
    answers_alike(monkeypatch, siblings, odd_file, "list_dir_names", lambda _root: None)


def fill(projects: Path, count: int) -> None:
    """``count`` sibling transcripts without a task list, older than every other sibling of a test."""
    projects.mkdir(parents=True, exist_ok=True)
    for n in range(count):
        (projects / f"{n:08d}-1111-4000-8000-000000000000.jsonl").write_text("{}\n")
        os.utime(projects / f"{n:08d}-1111-4000-8000-000000000000.jsonl", (NOW - 5000, NOW - 5000))


def test_more_than_1000_transcripts_are_never_listed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    projects = tmp_path / "projects"
    fill(projects, 2000)
    write_task(tmp_path / "tasks" / "prev", 1, subject="Carry on")
    write_task(tmp_path / "tasks" / "done", 1, "completed")
    touch(projects / "prev.jsonl", NOW - 100)
    touch(projects / "done.jsonl", NOW - 200)
    read: list[str] = []
    real_scandir = os.scandir

    class Counting:
        def __init__(self, path: str) -> None:
            self.inner = real_scandir(path)
            self.counted = os.fspath(path) == str(projects)

        def __enter__(self) -> Counting:
            return self

        def __exit__(self, *_exc: object) -> None:
            self.inner.close()

        def __iter__(self) -> Counting:
            return self

        def __next__(self) -> os.DirEntry[str]:
            entry = next(self.inner)
            if self.counted:  # the task lists are listed too; only the transcript folder's reads count here
                read.append(entry.name)
            return entry

    monkeypatch.setattr(os, "scandir", Counting)
    assert render(make_ctx(tmp_path)) == RECOVERED.format("prev") + "\n#1 [pending] Carry on"
    assert len(read) == 1001


def test_exactly_1000_entries_are_listed_whole(tmp_path: Path) -> None:
    """Up to 1,000 entries the folder is listed, so a transcript whose name sanitising changes is still matched."""
    fill(tmp_path / "projects", 999)
    write_task(tmp_path / "tasks" / "prev-v2", 3, subject="From the odd name")
    touch(tmp_path / "projects" / "prev.v2.jsonl", NOW - 100)
    assert render(make_ctx(tmp_path)) == RECOVERED.format("prev-v2") + "\n#3 [pending] From the odd name"
    fill(tmp_path / "projects", 1000)  # one more entry: looked up by list name, so the odd name is not a candidate
    assert tasks.prepare(make_ctx(tmp_path)) is None


def test_a_large_folder_and_an_unlistable_root_give_the_hint(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fill(tmp_path / "projects", 1001)
    write_task(tmp_path / "tasks" / "prev", 1)
    touch(tmp_path / "projects" / "prev.jsonl", NOW - 100)
    monkeypatch.setattr(tasks, "list_dir_names", lambda _root: None)
    assert render(make_ctx(tmp_path)) == NOT_RECOVERED
    for extra in range(10, 1001):
        (tmp_path / "projects" / f"{extra:08d}-1111-4000-8000-000000000000.jsonl").unlink()
    assert render(make_ctx(tmp_path)) == RECOVERED.format("prev") + "\n#1 [pending] task 1"


plain_names = st.sampled_from(["a", "b", "a-b", "x", "-", "c_1", "0b9f7c1e-2f4a"])
plain_sibling = st.tuples(
    plain_names,
    st.sampled_from(["transcript", "sidecar", "none"]),
    st.integers(-300, 50),
    st.sampled_from(["open", "closed", "malformed", "empty", "file", "none"]),
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(siblings=st.lists(plain_sibling, max_size=6, unique_by=lambda item: item[0]), odd_file=st.booleans())
def test_looking_lists_up_by_name_finds_what_listing_the_folder_finds(
    monkeypatch: pytest.MonkeyPatch, siblings: list[tuple[str, str, int, str]], odd_file: bool
) -> None:
    """For Claude Code's names (nothing to sanitise), the large-folder path answers as the listing does."""
    answers_alike(monkeypatch, siblings, odd_file, "MAX_LISTED_TRANSCRIPTS", 0)


def test_a_sibling_that_recorded_another_project_is_no_candidate(tmp_path: Path) -> None:
    """``shop-a`` and ``shop.a`` share one transcript folder: the folder it recorded decides."""
    other = tmp_path / "shop.a"
    other.mkdir()
    write_task(tmp_path / "tasks" / "theirs", 1, subject="Rotate the prod DB password")
    touch(tmp_path / "projects" / "theirs.jsonl", NOW - 100, other)
    assert tasks.prepare(make_ctx(tmp_path)) is None
    write_task(tmp_path / "tasks" / "ours", 2, subject="Ours")
    touch(tmp_path / "projects" / "ours.jsonl", NOW - 200)
    assert render(make_ctx(tmp_path)) == RECOVERED.format("ours") + "\n#2 [pending] Ours"


def test_a_parent_named_by_the_hook_is_taken_whatever_older_sessions_hold(tmp_path: Path) -> None:
    """A fork's parent: its list, never the ambiguity two older candidates give; an empty parent list
    says nothing (TaskList in the fork would show nothing either)."""
    for name, age in (("a", 100), ("b", 200)):
        write_task(tmp_path / "tasks" / name, 1, subject=f"from {name}")
        touch(tmp_path / "projects" / f"{name}.jsonl", NOW - age)
    assert render(make_ctx(tmp_path)) == NOT_RECOVERED and "call TaskList" not in NOT_RECOVERED
    recovered = render_part(tasks.prepare(make_ctx(tmp_path), lambda: "b"))
    assert recovered == RECOVERED.format("b") + "\n#1 [pending] from b"
    write_task(tmp_path / "tasks" / "done", 1, "completed")
    assert tasks.prepare(make_ctx(tmp_path), lambda: "done") is None
    assert tasks.prepare(make_ctx(tmp_path), lambda: "never-made-a-task") is None


def render_part(part: PreparedPart | None) -> str | None:
    return None if part is None else part.render(10_000)


@pytest.mark.parametrize("parent", [False, True])
def test_a_predecessors_or_parents_long_list_is_recovered_unlisted(tmp_path: Path, parent: bool) -> None:
    """A predecessor's (or a fork's parent's) list of 1,500 tasks Claude Code only created: probed, not listed,
    and recovered as a listing would: its newest open task, the older files counted."""
    from tests.tasks.test_store import write_run

    write_run(tmp_path / "tasks" / "prev", 1500)
    write_task(tmp_path / "tasks" / "prev", 1500, "pending", "Carry on")
    touch(tmp_path / "projects" / "prev.jsonl", NOW - 100)
    ctx = make_ctx(tmp_path)
    part = tasks.prepare(ctx, (lambda: "prev") if parent else None)
    assert part is not None
    assert part.render(10_000) == "\n".join(
        [RECOVERED.format("prev"), "#1500 [pending] Carry on", "…1300 older task files not read: call TaskList"]
    )
