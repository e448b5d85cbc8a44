"""Every folder the plugin makes under the user's state and data folders is 0700 whatever the
umask (each level it makes), and records are trusted only from a folder chain that is the user's alone."""

from __future__ import annotations

import io
import json
import os
import stat
import sys
import time
from pathlib import Path

import pytest

from session_workflow.anchor import registry
from session_workflow.anchor.part import prepare
from session_workflow.anchor.writer import create_anchor
from session_workflow.cli.main import main
from session_workflow.core import atomic, folders
from session_workflow.core.context import HookContext
from session_workflow.core.places import Places
from session_workflow.hook import tool_edit
from session_workflow.workstate.records import DeliveryRecord, delivery_folder
from tests.trust import state_env, trust

SESSION = "3c1e9b7a-8d2f-4e6a-b5c4-1a2b3c4d5e6f"
NOBODY = 65534
ANCHOR = "---\nformat: anchor/v1\nstep: 2\n---\n# Port billing\n\n## Cursor\n- Next action: port the refund consumer\n"
as_root = pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="chown needs root")


@pytest.fixture(autouse=True)
def fresh_verdicts() -> None:
    """Each test changes owners and modes after a look: no verdict of an earlier look may stand."""
    folders._checked.clear()


@pytest.fixture()
def umask() -> object:
    def set_umask(mask: int) -> None:
        os.umask(mask)

    before = os.umask(0o022)
    os.umask(before)
    yield set_umask
    os.umask(before)


def modes_below(base: Path, path: Path) -> dict[str, str]:
    """The mode of every folder from ``base`` (exclusive) down to ``path``."""
    found = {}
    current = path
    while current != base:
        found[str(current.relative_to(base))] = oct(stat.S_IMODE(current.stat().st_mode))
        current = current.parent
    return found


@pytest.mark.parametrize("mask", [0o000, 0o002, 0o022, 0o277])
def test_every_level_the_trust_records_need_is_made_0700_whatever_the_umask(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, umask: object, mask: int
) -> None:
    """A fresh home without ~/.local: the writer makes .local, state, session-workflow, anchors, sessions."""
    home = tmp_path / "home"
    project = tmp_path / "project"
    home.mkdir(mode=0o700)
    project.mkdir()
    monkeypatch.delenv("XDG_STATE_HOME")
    env = {"HOME": str(home)}
    umask(mask)  # type: ignore[operator]
    create_anchor(str(project), "Port billing", time.time(), Places(env), SESSION)
    os.umask(0o022)
    kept = Path(Places(env).trust or "") / "sessions"
    assert set(modes_below(home, kept).values()) == {"0o700"}, modes_below(home, kept)
    assert len(modes_below(home, kept)) == 5


@pytest.mark.parametrize("mask", [0o000, 0o002])
def test_the_edit_markers_and_delivery_records_folders_are_0700_whatever_the_umask(
    tmp_path: Path, umask: object, mask: int
) -> None:
    state = Path(os.environ["XDG_STATE_HOME"])
    umask(mask)  # type: ignore[operator]
    marker = tool_edit.marker_path(Places(state_env()), SESSION, "toolu_1")
    assert marker is not None and tool_edit._store(marker, b"x", time.time())
    DeliveryRecord(str(tmp_path / "data" / "deep" / "work-state-delivered"), "s.key", time.time()).store("k")
    os.umask(0o022)
    assert set(modes_below(state, Path(marker).parent).values()) == {"0o700"}
    assert set(modes_below(tmp_path, tmp_path / "data" / "deep" / "work-state-delivered").values()) == {"0o700"}


def trusted_anchor(tmp_path: Path) -> Path:
    anchors = tmp_path / "project" / ".claude" / "anchors"
    anchors.mkdir(parents=True)
    path = anchors / "a.md"
    path.write_text(ANCHOR, encoding="utf-8")
    trust(path, session=SESSION)
    folders._checked.clear()
    assert registry.Registry(Places(state_env())).is_ours(str(path))
    folders._checked.clear()
    return path


def context(project: Path) -> HookContext:
    return HookContext(
        event="SessionStart",
        source="compact",
        session_id=SESSION,
        cwd=str(project),
        transcript_path=None,
        mod_active=False,
        places=Places(state_env()),
        now=time.time(),
    )


def block_notes(project: Path) -> str:
    part = prepare(context(project))
    assert part is not None
    return part.render(10_000)


@as_root
def test_a_trust_folder_of_another_user_is_not_trusted_and_the_block_names_it(tmp_path: Path) -> None:
    """A group member who puts their own anchors/ folder in place plants records: they are never read."""
    path = trusted_anchor(tmp_path)
    folder = Places(state_env()).trust or ""
    os.chown(folder, NOBODY, NOBODY)
    assert not registry.Registry(Places(state_env())).is_ours(str(path))
    assert registry.Registry(Places(state_env())).kept_by(SESSION) == []
    text = block_notes(path.parents[2])
    assert "port the refund consumer" not in text  # not injected as the run's own
    line = next(line for line in text.splitlines() if line.startswith("session-workflow: ignored the anchors'"))
    assert f"{folder} is owned by another user (uid {NOBODY})" in line
    assert f"fix: `mv {folder} {folder}.not-mine`" in line


@as_root
def test_a_sessions_folder_of_another_user_lists_nothing(tmp_path: Path) -> None:
    trusted_anchor(tmp_path)
    os.chown(os.path.join(Places(state_env()).trust or "", "sessions"), NOBODY, NOBODY)
    assert registry.Registry(Places(state_env())).kept_by(SESSION) == []


@pytest.mark.parametrize("level", ["anchors", "session-workflow", "state root"])
@pytest.mark.parametrize("mode", [0o775, 0o757, 0o777])
def test_a_folder_others_may_write_on_the_way_up_is_not_trusted(tmp_path: Path, level: str, mode: int) -> None:
    path = trusted_anchor(tmp_path)
    folder = Path(Places(state_env()).trust or "")
    target = {"anchors": folder, "session-workflow": folder.parent, "state root": folder.parent.parent}[level]
    target.chmod(mode)
    try:
        assert not registry.Registry(Places(state_env())).is_ours(str(path))
        line = registry.Registry(Places(state_env())).trust_problem()
        assert line is not None and f"{target} is writable by others (mode {mode:04o})" in line
        assert f"fix: `chmod go-w {target}`" in line
    finally:
        target.chmod(0o700)
    folders._checked.clear()
    assert registry.Registry(Places(state_env())).is_ours(str(path))  # the fix line's command is all it takes


def test_a_folder_above_the_state_root_is_not_judged(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The chain ends at the user's state root (here XDG_STATE_HOME): /tmp above it is everyone's, and sticky."""
    path = trusted_anchor(tmp_path)
    parent = Path(os.environ["XDG_STATE_HOME"]).parent
    parent.chmod(0o777)
    try:
        assert registry.Registry(Places(state_env())).is_ours(str(path))
    finally:
        parent.chmod(0o700)


@as_root
def test_a_folder_of_root_is_trusted_by_another_user(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Root can write anywhere: its folders (writable by no one else) are as safe as the user's own."""
    path = trusted_anchor(tmp_path)
    monkeypatch.setattr(os, "getuid", lambda: NOBODY)
    assert registry.Registry(Places(state_env())).trust_problem() is None and registry.Registry(
        Places(state_env())
    ).is_ours(str(path))


def test_another_owner_is_refused_without_root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Where the test cannot chown (not root), this user's id is made another: every folder is then foreign."""
    path = trusted_anchor(tmp_path)
    uid = os.getuid()
    if uid == 0:
        pytest.skip("root's folders are trusted by every user (root can write anywhere): the chown tests hold it")
    monkeypatch.setattr(os, "getuid", lambda: uid + 1)
    assert not registry.Registry(Places(state_env())).is_ours(str(path))
    folder = Places(state_env()).trust or ""
    assert registry.Registry(Places(state_env())).trust_problem() == (
        f"session-workflow: ignored the anchors' trust records: {folder} is owned by another user (uid {uid}),"
        f" so another user may have put them there; fix: `mv {folder} {folder}.not-mine`"
    )


def test_a_writer_refuses_to_record_in_a_folder_others_may_write(tmp_path: Path) -> None:
    path = trusted_anchor(tmp_path)
    folder = Path(Places(state_env()).trust or "")
    folder.chmod(0o777)
    with pytest.raises(atomic.WriteError, match="is writable by others"):
        trust(path)


def test_a_symlinked_plugin_folder_is_judged_where_it_leads(tmp_path: Path) -> None:
    """<state root>/session-workflow as a link to a folder elsewhere: that folder must be the user's alone, and the
    folders above it up to / the user's or root's, writable by others only when sticky (as /tmp)."""
    elsewhere = tmp_path / "elsewhere" / "session-workflow"
    elsewhere.mkdir(parents=True, mode=0o700)
    (tmp_path / "elsewhere").chmod(0o700)
    (Path(os.environ["XDG_STATE_HOME"]) / "session-workflow").symlink_to(elsewhere)
    path = trusted_anchor(tmp_path)
    assert str(elsewhere) in os.path.realpath(Places(state_env()).trust or "")
    (tmp_path / "elsewhere").chmod(0o777)  # not sticky: anyone could rename session-workflow away
    folders._checked.clear()
    try:
        assert not registry.Registry(Places(state_env())).is_ours(str(path))
        assert f"{tmp_path / 'elsewhere'} is writable by others" in (
            registry.Registry(Places(state_env())).trust_problem() or ""
        )
        (tmp_path / "elsewhere").chmod(0o1777)  # sticky: only the owner may rename what is in it
        folders._checked.clear()
        assert registry.Registry(Places(state_env())).is_ours(str(path))
    finally:
        (tmp_path / "elsewhere").chmod(0o700)


# --- the delivery records: the hooks and ``inject`` read, write and prune only where they are the user's ----------


def delivery_setup(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path, Path]:
    project = tmp_path / "project"
    (project / ".claude" / "session-workflow").mkdir(parents=True)
    state = {"version": 1, "ticket": 34, "title": "Fix the parser", "map": 12, "step": "plan", "session": SESSION}
    (project / ".claude" / "session-workflow" / "work-state.json").write_text(json.dumps(state), encoding="utf-8")
    data = tmp_path / "data"
    records = data / "work-state-delivered"
    records.mkdir(parents=True, mode=0o700)
    data.chmod(0o700)
    old = records / "old-session.key"
    old.write_text("k")
    os.utime(old, (time.time() - 40 * 86_400, time.time() - 40 * 86_400))
    monkeypatch.setenv("CLAUDE_PLUGIN_DATA", str(data))
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "config"))
    monkeypatch.delenv("CLAUDE_PROJECT_DIR", raising=False)
    monkeypatch.delenv("CLAUDECODE", raising=False)
    return project, data, old


def run_inject(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    payload = {"session_id": SESSION, "source": "startup", "cwd": str(project), "hook_event_name": "SessionStart"}
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(json.dumps(payload).encode())))
    assert main(["inject"]) == 0


@pytest.mark.parametrize("how", ["writable by others", "owned by another user"])
def test_inject_writes_and_prunes_no_delivery_record_in_a_folder_not_the_users(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], how: str
) -> None:
    """In the Bash tool only a project's env block sets CLAUDE_PLUGIN_DATA: ``inject`` must not write or prune
    there unless the hooks would (the same function decides for both)."""
    project, data, old = delivery_setup(tmp_path, monkeypatch)
    if how == "writable by others":
        data.chmod(0o777)
    elif os.geteuid() == 0:
        os.chown(data, NOBODY, NOBODY)
    else:
        uid = os.getuid()
        monkeypatch.setattr(os, "getuid", lambda: uid + 1)  # this user's folders are then another user's
    run_inject(project, monkeypatch)
    out = capsys.readouterr().out
    assert "Fix the parser" in out  # the block still carries the state, and says why no record is kept
    assert (
        f"session-workflow: ignored the work state's delivery records: {data} is {how}"
        in json.loads(out)["hookSpecificOutput"]["additionalContext"]
    )
    assert sorted(os.listdir(data / "work-state-delivered")) == ["old-session.key"]  # nothing written, nothing pruned
    assert old.exists()


def test_inject_writes_and_prunes_where_the_folder_is_the_users(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    project, data, old = delivery_setup(tmp_path, monkeypatch)
    run_inject(project, monkeypatch)
    assert not old.exists() and (data / "work-state-delivered" / f"{SESSION}.key").exists()


def test_the_delivery_folder_is_one_function_for_hooks_and_cli(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    project, data, _old = delivery_setup(tmp_path, monkeypatch)
    env = dict(os.environ)
    assert delivery_folder(Places(env), [str(project)]) == str(data / "work-state-delivered")
    data.chmod(0o770)
    folders._checked.clear()
    assert delivery_folder(Places(env), [str(project)]) is None


REPO = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("mask", ["000", "002"])
def test_the_clis_bytecode_folders_are_0700_and_a_shared_one_is_not_used(tmp_path: Path, mask: str) -> None:
    """Bytecode is code: ``bin/session-workflow`` makes <state folder>/session-workflow/pycache 0700 at each level, and
    keeps none in a pycache folder another user could write."""
    import shlex
    import subprocess

    cache = tmp_path / "state"
    env = {"PATH": os.environ["PATH"], "HOME": str(tmp_path), "XDG_STATE_HOME": str(cache)}
    bin_script, folder = shlex.quote(str(REPO / "bin" / "session-workflow")), shlex.quote(str(tmp_path))
    command = f"umask {mask}; exec {bin_script} anchor list {folder}"  # quoted: the checkout may hold a space
    subprocess.run(["sh", "-c", command], env=env, capture_output=True, check=True, timeout=120)
    pycache = cache / "session-workflow" / "pycache"
    assert set(modes_below(tmp_path, pycache).values()) == {"0o700"}
    assert any(pycache.rglob("*.pyc"))
    for found in pycache.rglob("*.pyc"):
        found.unlink()
    pycache.chmod(0o777)
    subprocess.run(["sh", "-c", command], env=env, capture_output=True, check=True, timeout=120)
    assert not any(pycache.rglob("*.pyc"))
