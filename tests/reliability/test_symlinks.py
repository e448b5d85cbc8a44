"""The symlink matrix: every place a link can be planted, leading outside the project or to
another spot inside it, against the hooks and against the writers.

What must hold in every cell: no file a link points at changes, nothing outside the project is written, and no
content reached through a link out of the folder meant reaches the block. A writer whose path crosses a link out
of the project refuses with one line and exit 2; a lock path that is a link is never opened; ``anchor step`` on a
link to another anchor of the same folder updates the target and leaves the link a link.

The fast slice runs every cell in-process; ``tox -e stress`` runs each again through the real hook shim and the
real ``bin/session-workflow``, as Claude Code and the Bash tool run them.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import subprocess
import sys
from pathlib import Path

import filelock
import pytest

from session_workflow.cli import main as cli
from session_workflow.core import atomic

from .sandbox import REPO, Sandbox, run_in_process, run_shim, sandbox, snapshot, work_state_json
from .sizes import Size, Tally

SECRET = "SECRET-OUTSIDE-CONTENT"
SESSION = "matrix-session"
ANCHOR = "---\nformat: anchor/v1\nstep: 1\n---\n# {title}\n\n## Cursor\n- Next action: {marker}\n"

# Where a link is planted (relative to the project) and what it stands in for.
TARGETS = {
    "claude": (".claude", "dir"),
    "anchors": (".claude/anchors", "dir"),
    "state": (".claude/session-workflow", "dir"),
    "anchor": (".claude/anchors/a.md", "file"),
    "anchor-lock": (".claude/anchors/.a.md.lock", "file"),
    "state-file": (".claude/session-workflow/work-state.json", "file"),
    "state-lock": (".claude/session-workflow/.work-state.json.lock", "file"),
    "journal": (".claude/session-workflow/work-state.log", "file"),
}
WHERES = ("outside", "inside")
CELLS = [(target, where) for target in TARGETS for where in WHERES] + [("anchor", "same-folder")]
ANCHOR_COMMANDS = ("new", "step", "write", "adopt", "close")
STATE_COMMANDS = ("set", "step", "clear")


class World:
    """A project with a trusted anchor and a work state, one planted link, and the files the link may reach."""

    def __init__(self, box: Sandbox, target: str, where: str) -> None:
        self.box = box
        self.target = target
        self.where = where
        self.project = box.project
        self.outside = os.path.join(box.root, "outside")
        self.elsewhere = os.path.join(box.project, "elsewhere")
        self.base = self.outside if where == "outside" else self.elsewhere
        self.victims: dict[str, bytes] = {}
        # A valid state the hook's session owns: only the path policy may keep its title out of the block.
        self.state = work_state_json(box.session, title=SECRET)
        self._build()

    def anchor_path(self) -> str:
        return os.path.join(self.box.anchors(), "a.md")

    def _victim(self, path: str, data: bytes, watch: bool = True) -> str:
        """A file a link reaches; ``watch``: no write may change it (a folder link inside the project is the
        project's own folder, where the writers may change the anchor and state they find)."""
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as handle:
            handle.write(data)
        if watch:
            self.victims[path] = data
        return path

    def _secret_anchor(self, path: str, watch: bool = True) -> None:
        self._victim(path, ANCHOR.format(title="Secret", marker=SECRET).encode(), watch)
        self.box.trust(path)  # vouched for at its real path: only the path policy may keep it out

    def _build(self) -> None:
        box = self.box
        relative, kind = TARGETS[self.target]
        link = os.path.join(self.project, *relative.split("/"))
        if self.target not in ("claude", "anchors"):
            box.write_anchor("a.md", ANCHOR.format(title="Ours", marker="OUR-NEXT-ACTION").encode())
        if self.target not in ("claude", "state", "state-file"):
            box.write_state(work_state_json(SESSION))
        os.makedirs(self.base, exist_ok=True)
        if kind == "dir":
            real = os.path.join(self.base, "linked")
            os.makedirs(real)
            watch = self.where == "outside"
            if self.target == "claude":
                self._secret_anchor(os.path.join(real, "anchors", "a.md"), watch)
                self._victim(os.path.join(real, "session-workflow", "work-state.json"), self.state, watch)
            elif self.target == "anchors":
                self._secret_anchor(os.path.join(real, "a.md"), watch)
            else:
                self._victim(os.path.join(real, "work-state.json"), self.state, watch)
            self._victim(os.path.join(real, "victim"), SECRET.encode())
            os.makedirs(os.path.dirname(link), exist_ok=True)
            with contextlib.suppress(FileNotFoundError):
                os.rmdir(link)
            os.symlink(real, link)
        elif self.where == "same-folder":
            os.replace(link, os.path.join(os.path.dirname(link), "b.md"))
            box.trust(os.path.join(os.path.dirname(link), "b.md"))
            os.symlink("b.md", link)
        else:
            real = os.path.join(self.base, os.path.basename(relative).lstrip("."))
            if self.target == "anchor":
                os.unlink(link)
                self._secret_anchor(real)
            else:
                self._victim(real, self.state if self.target == "state-file" else SECRET.encode())
            with contextlib.suppress(FileNotFoundError):
                os.unlink(link)
            os.makedirs(os.path.dirname(link), exist_ok=True)
            os.symlink(real, link)

    def check_victims(self) -> None:
        for path, data in self.victims.items():
            with open(path, "rb") as handle:
                assert handle.read() == data, f"{path} (reached through the {self.target} link) was changed"


def _cell_id(cell: tuple[str, str]) -> str:
    return f"{cell[0]}-{cell[1]}"


# --- hooks -----------------------------------------------------------------------------------------------------


def secret_may_show(target: str, where: str) -> bool:
    """Only a link that stays where it is meant may be followed: a folder or state link inside the project, or
    an anchor link to another anchor of the same folder (whose content is ours, so it carries no secret)."""
    return target in ("claude", "anchors", "state", "state-file") and where == "inside"


@pytest.mark.parametrize("cell", CELLS, ids=_cell_id)
def test_hooks_never_follow_a_link_out_of_the_folder_meant(cell: tuple[str, str], size: Size, tally: Tally) -> None:
    target, where = cell
    with sandbox() as box:
        world = World(box, target, where)
        before = snapshot(world.outside) if os.path.isdir(world.outside) else {}
        env = box.env()
        for event in ("SessionStart", "PreCompact", "UserPromptSubmit"):
            payload = box.payload(event, source="compact")
            if size.full:
                run = run_shim(event, json.dumps(payload).encode(), env)
                assert (run.code, run.stderr) == (0, b"")
                out = run.stdout
            else:
                out = run_in_process(event, payload, env)
            tally.add("hook runs")
            text = out.decode("utf-8", "replace")
            if not secret_may_show(target, where):
                assert SECRET not in text, f"{event} showed content reached through the {target} link"
            if event == "SessionStart" and target == "anchor" and where == "same-folder":
                assert "OUR-NEXT-ACTION" in text  # the in-folder link is followed to its trusted target
        world.check_victims()
        if before:
            assert snapshot(world.outside) == before, "a hook wrote outside the project"


# --- writers ---------------------------------------------------------------------------------------------------


def anchor_argv(command: str, world: World) -> list[str]:
    path = world.anchor_path()
    return {
        "new": ["anchor", "new", "--dir", world.project, "--task", "Another run"],
        "step": ["anchor", "step", path, "did one thing"],
        "write": ["anchor", "write", path],
        "adopt": ["anchor", "adopt", path],
        "close": ["anchor", "close", path, "--outcome", "done"],
    }[command]


def state_argv(command: str, world: World) -> list[str]:
    common = ["--dir", world.project]
    return {
        "set": ["state", "set", "--ticket", "3", "--title", "Matrix", *common, "--session", SESSION],
        "step": ["state", "step", "review", *common, "--session", SESSION],
        "clear": ["state", "clear", *common],
    }[command]


def touches(target: str, command: str, group: str) -> bool:
    """Whether ``command``'s path crosses the planted link."""
    if target == "claude":
        return True
    if group == "anchor":
        return target == "anchors" or (target in ("anchor", "anchor-lock") and command != "new")
    return target in ("state", "state-file", "state-lock", "journal")


def run_writer(argv: list[str], env: dict[str, str], full: bool, stdin: bytes) -> tuple[int, str]:
    """(exit code, stderr) of one CLI command: in-process, or (full) the real bin script in a subprocess."""
    if full:
        done = subprocess.run(
            [sys.executable, str(REPO / "bin" / "session-workflow"), *argv],
            input=stdin,
            env=env,
            capture_output=True,
            timeout=60,
        )
        return done.returncode, done.stderr.decode("utf-8", "replace")
    saved = (sys.stdin, sys.stdout, sys.stderr)
    err = io.StringIO()
    sys.stdin = io.TextIOWrapper(io.BytesIO(stdin), encoding="utf-8")
    sys.stdout, sys.stderr = io.StringIO(), err
    try:
        code = cli.main(argv)
    finally:
        sys.stdin, sys.stdout, sys.stderr = saved
    return code, err.getvalue()


@pytest.mark.parametrize("command", [f"anchor-{c}" for c in ANCHOR_COMMANDS] + [f"state-{c}" for c in STATE_COMMANDS])
@pytest.mark.parametrize("cell", CELLS, ids=_cell_id)
def test_writers_refuse_links_out_of_the_project(
    cell: tuple[str, str], command: str, size: Size, tally: Tally, monkeypatch: pytest.MonkeyPatch
) -> None:
    target, where = cell
    group, verb = command.split("-", 1)
    with sandbox() as box:
        world = World(box, target, where)
        before = snapshot(world.outside) if os.path.isdir(world.outside) else {}
        env = {key: value for key, value in box.env().items() if key != "CLAUDE_PLUGIN_DATA"}
        for key, value in env.items():
            monkeypatch.setenv(key, value)
        argv = anchor_argv(verb, world) if group == "anchor" else state_argv(verb, world)
        stdin = ANCHOR.format(title="Rewritten", marker="NEW").replace("step: 1", "step: 5").encode()
        code, err = run_writer(argv, env, size.full, stdin)
        tally.add("writer runs")
        crossed = touches(target, verb, group)
        if crossed and where == "outside":
            assert code == 2, (argv, code, err)
            assert err.count("\n") == 1 and "outside the project" in err, err
        elif not crossed:
            assert code == 0, (argv, code, err)
        if target == "anchor-lock" and crossed:
            assert code != 0, "a lock path that is a symlink was opened"
        if group == "anchor" and target == "anchor" and where == "same-folder" and verb in ("step", "write", "adopt"):
            assert code == 0, err
            assert os.path.islink(world.anchor_path()), "the in-folder link was replaced by a copy"
        if group == "anchor" and target == "anchor" and where == "same-folder" and verb == "step":
            with open(os.path.join(box.anchors(), "b.md"), encoding="utf-8") as handle:
                assert "- Step 2: did one thing" in handle.read()
        assert "Traceback" not in err
        world.check_victims()
        if before:
            assert snapshot(world.outside) == before, f"{argv} wrote outside the project"


@pytest.mark.parametrize("kind", ["link-to-file", "dangling-link", "link-to-dir", "fifo"])
def test_a_lock_path_that_is_not_a_plain_file_is_never_opened(
    kind: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Whatever filelock does with links (3.19, pinned for 3.9 and 3.10, truncates through them), it never gets one."""
    victim = tmp_path / "victim"
    victim.write_bytes(SECRET.encode())
    path = tmp_path / "a.md"
    lock = tmp_path / ".a.md.lock"
    if kind == "link-to-file":
        lock.symlink_to(victim)
    elif kind == "dangling-link":
        lock.symlink_to(tmp_path / "nowhere")
    elif kind == "link-to-dir":
        lock.symlink_to(tmp_path)
    else:
        os.mkfifo(lock)

    class NeverOpened:
        def __init__(self, *args: object, **kwargs: object) -> None:
            raise AssertionError(f"filelock was handed {lock} ({kind})")

    monkeypatch.setattr(filelock, "FileLock", NeverOpened)
    with pytest.raises(atomic.WriteError, match="refusing to open it"), atomic.locked(str(path)):
        pass
    assert victim.read_bytes() == SECRET.encode()
    assert not (tmp_path / "nowhere").exists()
