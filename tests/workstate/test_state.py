"""The work state on the hook path: reading and trusting the file, ownership, the git origin, the per-session
delivery record, and the SessionStart part."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from session_workflow.core import locations
from session_workflow.core.context import HookContext
from session_workflow.core.places import Places
from session_workflow.hook import compose
from session_workflow.workstate import part as workstate_part
from session_workflow.workstate import state as workstate
from session_workflow.workstate import writer as workstate_writer
from session_workflow.workstate.records import DeliveryRecord
from session_workflow.workstate.section import WorkState, section, snapshot_key

SESSION = "0b9f7c1e-2f4a-4c55-9d57-3b1c2a7e9f10"
NOW = 1_795_978_800.0


def put(project: Path, owner: str = SESSION, **fields: object) -> None:
    options: dict[str, object] = {"ticket": 34, "title": "Fix the parser", "map_number": 12, "map_given": True}
    options.update({"step": "execute", "slug": "acme/widgets", **fields})
    workstate_writer.set_ticket(locations.state_path(str(project)), owner, now=NOW, **options)  # type: ignore[arg-type]


def context(
    cwd: Path | None,
    data: Path | None,
    session: str | None = SESSION,
    source: str | None = None,
    transcript: Path | None = None,
) -> HookContext:
    payload: dict[str, object] = {"hook_event_name": "SessionStart" if source else "UserPromptSubmit"}
    for key, value in (("cwd", cwd), ("session_id", session), ("source", source), ("transcript_path", transcript)):
        if value is not None:
            payload[key] = str(value)
    env = {"CLAUDE_PLUGIN_DATA": str(data)} if data else {}
    return HookContext.from_payload(payload, Places(env), NOW)


def outside(project: Path) -> Path:
    """A plugin data folder beside the project, not in it (one in the project is the project's own content)."""
    return project.with_name(project.name + "-data")


def transcript_starting_in(path: Path, folder: Path) -> Path:
    path.write_text(json.dumps({"type": "user", "cwd": str(folder)}) + "\n")
    return path


def test_load_trusts_only_a_valid_bounded_regular_file(tmp_path: Path) -> None:
    put(tmp_path)
    path = locations.state_path(str(tmp_path))
    loaded = workstate.load(path, str(tmp_path))
    assert loaded is not None and loaded.state.ticket == 34 and loaded.stored_text is not None
    original = Path(path).read_text()
    for content in ("", "not json", "[]", '{"version": 2, "ticket": 1, "title": "t"}', "[" * 100_000):
        Path(path).write_text(content)
        assert workstate.load(path, None) is None, content[:30]
    document = json.loads(original)
    Path(path).write_text(json.dumps({**document, "notes": "x" * workstate.MAX_STATE_BYTES}))
    assert workstate.load(path, None) is None
    os.unlink(path)
    os.mkfifo(path)
    assert workstate.load(path, None) is None
    os.unlink(path)
    os.mkdir(path)
    assert workstate.load(path, None) is None


@pytest.mark.parametrize(
    "stored",
    [None, {"key": "k"}, {"key": "", "text": "x"}, {"key": "k", "text": "  \n"}, {"key": "k", "text": "x" * 1025}],
)
def test_an_untrustworthy_stored_section_is_rebuilt(tmp_path: Path, stored: object) -> None:
    put(tmp_path)
    path = Path(locations.state_path(str(tmp_path)))
    path.write_text(json.dumps({**json.loads(path.read_text()), "section": stored}))
    loaded = workstate.load(str(path), None)
    assert loaded is not None and loaded.stored_key is None and loaded.stored_text is None
    assert workstate.section_text(loaded) == section(loaded.state, False, None)


def test_the_stored_section_is_used_only_when_the_fields_build_it(tmp_path: Path) -> None:
    put(tmp_path, slug="acme/widgets")
    path = Path(locations.state_path(str(tmp_path)))
    document = json.loads(path.read_text())
    loaded = workstate.load(str(path), str(tmp_path))
    assert loaded is not None and loaded.stored_text is not None
    assert workstate.section_text(loaded) == loaded.stored_text, "no git read needed: the links come from the url"
    assert "https://github.com/acme/widgets/issues/12" in loaded.stored_text
    document["section"]["text"] = "STORED"
    path.write_text(json.dumps(document))
    loaded = workstate.load(str(path), str(tmp_path))
    assert loaded is not None and workstate.section_text(loaded) == section(loaded.state, False, None)
    document["title"] = "Edited by hand"
    path.write_text(json.dumps(document))
    (tmp_path / ".git").mkdir()
    (tmp_path / ".git" / "config").write_text('[remote "origin"]\n\turl = https://github.com/acme/widgets\n')
    loaded = workstate.load(str(path), str(tmp_path))
    assert loaded is not None
    rebuilt = workstate.section_text(loaded)
    assert rebuilt == section(loaded.state, False, "acme/widgets")
    assert rebuilt is not None and '"Edited by hand"' in rebuilt


def test_owned_state_follows_project_dirs_and_skips_orphaned_states(tmp_path: Path) -> None:
    start, moved = tmp_path / "start", tmp_path / "moved"
    start.mkdir()
    moved.mkdir()
    transcript = transcript_starting_in(tmp_path / "t.jsonl", start)
    put(moved, ticket=2, title="In cwd")
    compact = context(moved, None, source="compact", transcript=transcript)
    assert workstate.owned_state(compact) is None, "the project is where the session started, not its cwd"
    put(start, ticket=1, title="In start dir")
    assert workstate.owned_state(compact).state.ticket == 1  # type: ignore[union-attr]
    prompt = context(moved, None, transcript=transcript)
    assert workstate.owned_state(prompt).state.ticket == 1, "a prompt looks where compact looks"  # type: ignore[union-attr]
    startup = context(moved, None, source="startup")
    assert workstate.owned_state(startup).state.ticket == 2, "no transcript yet: the cwd"  # type: ignore[union-attr]
    put(start, owner="another-session", ticket=1, title="In start dir")
    assert workstate.owned_state(compact) is None, "an orphaned state is not this session's"
    assert workstate.owned_state(context(moved, None, session=None)) is None
    assert workstate.owned_state(context(moved, None, session="someone-else")) is None


def test_without_any_project_dir_the_user_state_dir_is_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(Places, "state", property(lambda _places: str(tmp_path / "user")))
    fallback = workstate.fallback_state_path(Places({}))
    assert fallback == str(tmp_path / "user" / "work-state.json")
    os.makedirs(tmp_path / "user")
    Path(fallback).write_bytes(workstate_writer.encode(WorkState(ticket=3, title="T", session=SESSION), None))
    assert workstate.owned_state(context(None, None)).path == fallback  # type: ignore[union-attr]
    monkeypatch.setattr(Places, "state", property(lambda _places: None))
    assert workstate.owned_state(context(None, None)) is None


@pytest.mark.parametrize(
    ("config", "slug"),
    [
        ('[remote "origin"]\n\turl = git@github.com:acme/widgets.git\n', "acme/widgets"),
        (
            '[core]\n\tbare = false\n[remote "upstream"]\n\turl = https://github.com/up/stream\n'
            '[Remote "origin"]\n\tfetch = +refs/heads/*:refs/remotes/origin/*\n'
            '\tURL = "https://github.com/acme/w.git" ; c\n',
            "acme/w",
        ),
        ('[remote "origin"] \n  url=https://github.com/acme/widgets # comment\n', "acme/widgets"),
        ('[remote "Origin"]\n\turl = https://github.com/acme/widgets\n', None),
        ('[remote "origin"]\n\turl = https://gitlab.com/acme/widgets\n', None),
        ("[core]\n\turl = https://github.com/acme/widgets\n", None),
        ("", None),
    ],
)
def test_origin_slug_from_the_git_config(tmp_path: Path, config: str, slug: str | None) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / ".git" / "config").write_text(config)
    assert workstate.origin_slug(str(tmp_path)) == slug


def test_origin_slug_in_subdirs_worktrees_and_submodules(tmp_path: Path) -> None:
    main = tmp_path / "main"
    (main / ".git" / "worktrees" / "wt").mkdir(parents=True)
    (main / ".git" / "config").write_text('[remote "origin"]\n\turl = git@github.com:acme/widgets.git\n')
    (main / "src" / "deep").mkdir(parents=True)
    assert workstate.origin_slug(str(main / "src" / "deep")) == "acme/widgets"
    worktree = tmp_path / "wt"
    worktree.mkdir()
    (worktree / ".git").write_text(f"gitdir: {main}/.git/worktrees/wt\n")
    (main / ".git" / "worktrees" / "wt" / "commondir").write_text("../..\n")
    assert workstate.origin_slug(str(worktree)) == "acme/widgets"
    module = main / "vendor" / "lib"
    module.mkdir(parents=True)
    (module / ".git").write_text("gitdir: ../../.git/modules/lib\n")
    (main / ".git" / "modules" / "lib").mkdir(parents=True)
    (main / ".git" / "modules" / "lib" / "config").write_text('[remote "origin"]\n\turl = https://github.com/x/lib\n')
    assert workstate.origin_slug(str(module)) == "x/lib"
    (module / ".git").write_text("not a gitfile")
    assert workstate.origin_slug(str(module)) is None
    assert workstate.origin_slug(str(tmp_path)) is None


def test_record_names_are_safe_and_distinct() -> None:
    assert locations.record_name(SESSION) == f"{SESSION}.key"
    unsafe = ["../../etc/passwd", "a.b", "a/b", "x" * 4000, "nul\x00byte", "\ud800"]
    names = [locations.record_name(session) for session in unsafe]
    assert len(set(names)) == len(names)
    assert locations.record_name("a-b") not in names
    for name in names:
        assert "/" not in name and "\x00" not in name and len(name) <= 90 and name.isascii()


def test_the_delivery_record_lives_under_plugin_data_one_file_per_session(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    record = DeliveryRecord.for_session(context(tmp_path, outside(tmp_path)))
    assert record is not None
    assert record.path == str(outside(tmp_path) / "work-state-delivered" / f"{SESSION}.key")
    assert not record.holds("k")
    record.store("k")
    assert record.holds("k") and not record.holds("other")
    record.forget()
    assert not record.holds("k")
    monkeypatch.setattr(Places, "state", property(lambda _places: str(tmp_path / "user")))
    fallback = DeliveryRecord.for_session(context(tmp_path, Path("relative")))
    assert fallback is not None and fallback.folder == str(tmp_path / "user" / "work-state-delivered")
    monkeypatch.setattr(Places, "state", property(lambda _places: None))
    assert DeliveryRecord.for_session(context(tmp_path, None)) is None
    assert DeliveryRecord.for_session(context(tmp_path, tmp_path, session=None)) is None


def test_storing_a_record_prunes_month_old_ones(tmp_path: Path) -> None:
    folder = tmp_path / "work-state-delivered"
    folder.mkdir()
    for name, age_days in (("old.key", 31), ("dead-hook.key.123.tmp", 40), ("recent.key", 29), ("other.txt", 90)):
        (folder / name).write_text("k")
        os.utime(folder / name, (NOW - age_days * 86400, NOW - age_days * 86400))
    record = DeliveryRecord.for_session(context(tmp_path / "proj", tmp_path))
    assert record is not None
    record.store("k")
    assert sorted(p.name for p in folder.iterdir()) == [".pruned", f"{SESSION}.key", "other.txt", "recent.key"]


def test_the_part_is_all_or_nothing_and_resets_the_record(tmp_path: Path) -> None:
    put(tmp_path)
    ctx = context(tmp_path, outside(tmp_path), source="startup")
    part = workstate_part.prepare(ctx)
    assert isinstance(part, workstate_part.WorkStatePart)
    loaded = workstate.owned_state(ctx)
    assert loaded is not None
    assert (part.name, part.cap, part.floor) == ("work state", 1024, len(part.text.encode()))
    assert part.text == loaded.stored_text
    assert part.render(part.floor - 1) == ""
    part.after_emit(True)
    record = DeliveryRecord.for_session(ctx)
    assert record is not None and not record.holds(part.key), "a part that was not placed records nothing"
    assert part.render(part.floor) == part.text
    part.after_emit(True)
    assert record.holds(snapshot_key(loaded.state, False))
    part.after_emit(False)
    assert not record.holds(part.key), "a failed stdout leaves the next prompt to deliver"


def test_prepare_gives_nothing_for_an_orphaned_or_absent_state_and_resets_the_record(tmp_path: Path) -> None:
    ctx = context(tmp_path, outside(tmp_path), source="compact")
    record = DeliveryRecord.for_session(ctx)
    assert record is not None
    record.store("stale")
    assert workstate_part.prepare(ctx) is None
    assert not record.holds("stale")
    put(tmp_path, owner="another-session")
    record.store("stale")
    assert workstate_part.prepare(ctx) is None
    assert not record.holds("stale")


def test_the_session_start_block_leads_with_the_section_unless_the_mod_delivers_it(tmp_path: Path) -> None:
    put(tmp_path)
    ctx = context(tmp_path, outside(tmp_path), source="compact")
    loaded = workstate.owned_state(ctx)
    assert loaded is not None and loaded.stored_text is not None
    composition = compose.compose(ctx)
    assert composition.text.split("\n\n")[1] == loaded.stored_text
    payload = {"hook_event_name": "SessionStart", "source": "compact", "cwd": str(tmp_path), "session_id": SESSION}
    with_mod = HookContext.from_payload({**payload, "session_workflow_mod": 1}, Places({}), NOW)
    assert loaded.stored_text not in compose.compose(with_mod).text
