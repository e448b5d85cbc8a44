"""On the real CLI: the run never loses its own anchor to git or a full state folder.

(a) ``git stash --all && git stash pop`` puts the anchor's very bytes back at a new inode: after ``/compact`` it
is still injected, its cursor exactly once. (b) ``git clean -fdx`` deletes the git-ignored anchors folder: the
compact block says the anchor is gone, with the command that restores it, and the model runs that command
through the Bash tool. (c) With the user state folder full (a small tmpfs where this machine lets the test mount
one, else a file where the folder should be), ``anchor write`` exits non-zero and the anchor stays as it was.
"""

from __future__ import annotations

import contextlib
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.reliability.test_own_anchor import fill

from . import fake_api as F
from .fake_api import FakeAnthropic
from .harness import Claude
from .test_scenarios import ANCHOR_HEADING, after_compaction, has, lacks
from .test_trust import TRACK_TEXT, compact_block, make_track

pytestmark = pytest.mark.e2e

Body = dict[str, Any]
GIT = ["git", "-c", "user.name=t", "-c", "user.email=t@example.invalid", "-c", "init.defaultBranch=main"]
MARKER = "OWN-RUN-NEXT-ACTION"


def git_project(claude: Claude) -> None:
    subprocess.run([*GIT, "init", "-q", str(claude.project)], check=True)
    (claude.project / "README").write_text("x\n", encoding="utf-8")
    subprocess.run([*GIT, "-C", str(claude.project), "add", "README"], check=True)
    subprocess.run([*GIT, "-C", str(claude.project), "commit", "-qm", "init"], check=True)


def tool_output(fake_api: FakeAnthropic, needle: str) -> str:
    """The one tool result holding ``needle`` across all requests."""
    found = {r for body in fake_api.message_requests() for r in F.last_tool_results(body) if needle in r}
    assert len(found) == 1, found
    return found.pop()


def test_stash_all_and_pop_keeps_the_anchor_with_its_cursor_once(claude: Claude, fake_api: FakeAnthropic) -> None:
    git_project(claude)
    made: list[str] = []
    fake_api.script(
        *make_track(made, "Own run", MARKER),
        F.bash("git stash --all && git stash pop && ls .claude/anchors"),
        F.text("stashed and popped"),
        F.text("going on"),
    )
    claude.converse(["start", "stash it", "/compact", "go on"], ["--allowedTools", "Bash"])
    assert fake_api.pending_script() == 0, "the model's tool calls were not all made"
    (path,) = made
    assert Path(path).is_file()  # the pop put it back
    block = compact_block(after_compaction(fake_api))
    has(block, f"{ANCHOR_HEADING}`{path}`")
    assert block.count(f"Next action: {MARKER}") == 1, block
    lacks(block, "not created here", "changed outside the writers", "gone")


def test_git_clean_then_the_block_says_gone_and_the_model_restores_it(claude: Claude, fake_api: FakeAnthropic) -> None:
    git_project(claude)
    made: list[str] = []
    fake_api.script(
        *make_track(made, "Own run", MARKER),
        F.bash("git clean -fdx"),
        F.text("cleaned"),
        lambda body: F.bash(f"session-workflow anchor restore {made[0]}"),
        F.text("restored"),
        F.text("going on"),
    )
    claude.converse(["start", "clean up", "/compact", "restore it", "/compact", "go on"], ["--allowedTools", "Bash"])
    assert fake_api.pending_script() == 0, "the model's tool calls were not all made"
    (path,) = made
    gone = compact_block(after_compaction(fake_api, 0))
    has(
        gone,
        f"Control anchor gone: `{path}`, last written here at step 0, is no longer on disk; put it back with"
        f" `session-workflow anchor restore {path}`.",
    )
    lacks(gone, MARKER, "only if the user")
    # The restore prints the HEAD: the very request that carries its result holds the restored cursor.
    restored = tool_output(fake_api, "restored ")
    assert restored.startswith(f"restored {path} (step 0)\n## Control anchor: `{path}`\n"), restored
    assert restored.count(f"Next action: {MARKER}") == 1, restored
    assert Path(path).read_text(encoding="utf-8") == TRACK_TEXT.format(task="Own run", marker=MARKER)
    back = compact_block(after_compaction(fake_api, 1))
    has(back, f"{ANCHOR_HEADING}`{path}`")
    assert back.count(f"Next action: {MARKER}") == 1, back
    lacks(back, "gone")


@contextlib.contextmanager
def state_folder_that_fills(folder: Path) -> Iterator[bool]:
    """A 64 KiB tmpfs at ``folder``, the user's alone (True), or nothing mounted where this machine does not allow it
    (False)."""
    folder.mkdir(parents=True, exist_ok=True)
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=64k,mode=0700", "tmpfs", str(folder)], capture_output=True
    )
    try:
        yield mounted.returncode == 0
    finally:
        if mounted.returncode == 0:
            subprocess.run(["umount", "-l", str(folder)], capture_output=True, check=False)


def fill_or_block(folder: Path, tmpfs: bool) -> None:
    """Fill the tmpfs to the last byte; without one, put a file where the trust records' folder is."""
    if not tmpfs:
        shutil.rmtree(folder / "anchors")
        (folder / "anchors").write_text("in the way\n", encoding="utf-8")
        return
    fill(str(folder / "anchors"))


def test_a_full_state_folder_fails_anchor_write_and_keeps_the_anchor(claude: Claude, fake_api: FakeAnthropic) -> None:
    state = claude.home / ".local" / "state" / "session-workflow"
    made: list[str] = []
    seen: list[bytes] = []

    def fill_then_write(body: Body) -> F.Reply:
        seen.append(Path(made[0]).read_bytes())
        fill_or_block(state, tmpfs)
        newer = TRACK_TEXT.format(task="Own run", marker="REWRITTEN").replace("step: 0", "step: 4")
        return F.bash(f"session-workflow anchor write {made[0]} <<'ANCHOR_EOF'\n{newer}ANCHOR_EOF")

    # The trust records' folder fills: the state folder also holds the CLI's bytecode (hundreds of KiB).
    with state_folder_that_fills(state / "anchors") as tmpfs:
        fake_api.script(*make_track(made, "Own run", MARKER), fill_then_write, F.text("it failed"), F.text("on"))
        claude.converse(["start", "rewrite it", "/compact", "go on"], ["--allowedTools", "Bash"])
        assert fake_api.pending_script() == 0, "the model's tool calls were not all made"
        (path,) = made
        failed = tool_output(fake_api, "so it was left as it was")
        has(failed, f"session-workflow: cannot record {path} as this machine's", what="tool result")
        has(failed, "No space left on device" if tmpfs else "Not a directory", what="tool result")
        assert Path(path).read_bytes() == seen[0]
        block = compact_block(after_compaction(fake_api))
        lacks(block, "REWRITTEN")
        if tmpfs:  # the records are still readable: the anchor as it was is the run's own
            assert block.count(f"Next action: {MARKER}") == 1, block
