"""Red team round 4 (issue 41, and issue 40 item 6): each finding, on the real hook entry (cold, as Claude Code
starts it) or the real CLI as the Bash tool runs it.

1. Planted files (a ``git pull`` adding 120 tracked files to ``.claude/anchors/``, files unpacked with mtimes in
   2099) never push the session's own anchor out of its block: the session's kept anchors are looked up first.
4. A planted name never reads as the plugin's sentence: every name shown is in a code span it cannot close.
5. ``anchor list``/``show`` stay inside the session's project (an anchors folder linked to a sibling's is not ours).
6. The anchors folder stays out of git whatever the repository ships there.
7. The CLI's bytecode folder is the user's alone up the chain.
8. From the Bash tool, ``CLAUDE_PLUGIN_DATA`` never chooses where the CLI writes.
"""

from __future__ import annotations

import os
import time

from .sandbox import Sandbox, sandbox
from .test_own_anchor import cold_block, new_anchor
from .test_trust import anchor_text

FAR_FUTURE = 4_070_908_800.0  # 2099-01-01


def plant(box: Sandbox, count: int, mtime: float | None = None) -> None:
    """``count`` anchor-shaped files no writer of this machine made (a pull, an unpacked archive)."""
    for index in range(count):
        path = box.write_anchor(f"planted-{index:03}.md", anchor_text(f"PLANTED{index}").encode(), trusted=False)
        if mtime is not None:
            os.utime(path, (mtime, mtime))


# --- 1. the session's own anchor is found first ------------------------------------------------------------------


def test_120_planted_newer_files_leave_the_sessions_anchor_in_its_block() -> None:
    with sandbox() as box:
        new_anchor(box, "OURS")
        plant(box, 120, time.time() + 0.5)  # newer than ours, not yet in the future
        text = cold_block(box)
        assert text.count("- Next action: OURS") == 1, text
        assert "PLANTED" not in text


def test_planted_files_from_2099_never_keep_the_sessions_anchor_out() -> None:
    with sandbox() as box:
        new_anchor(box, "OURS")
        plant(box, 120, FAR_FUTURE)
        text = cold_block(box)
        assert text.count("- Next action: OURS") == 1, text
        assert "PLANTED" not in text


def test_a_kept_anchor_not_shown_is_named_with_the_reason() -> None:
    with sandbox() as box:
        path = new_anchor(box, "OURS")
        outside = os.path.join(box.root, "elsewhere.md")
        os.replace(path, outside)
        os.symlink(outside, path)  # now a link out of the anchors folder, which the hook never follows
        plant(box, 120, time.time() + 0.5)
        text = cold_block(box)
        assert "OURS" not in text
        named = [line for line in text.splitlines() if line.startswith("Control anchor kept by this session")]
        assert len(named) == 1 and "leads out of its anchors folder" in named[0], text
        os.unlink(path)
        os.mkdir(path)
        assert "no longer a regular file" in cold_block(box)
