"""On the real CLI: a folder name never becomes a command through the run's own anchor.

The project lives in a folder named with a space, ``$()`` and ``;`` (as ``git clone`` keeps such names). The model
makes its anchor with ``anchor new``, steps it, and after ``/compact`` copies Resume step 2's first command from the
injected block, verbatim, into the Bash tool: it runs exactly ``git -C <that folder> log --oneline -10`` and
nothing else, so none of the files the name's commands would create exists.
"""

from __future__ import annotations

import os
import shlex
import subprocess
from pathlib import Path
from typing import Any

import pytest

from . import fake_api as F
from .fake_api import FakeAnthropic
from .harness import Claude
from .test_own_anchor import GIT, tool_output
from .test_scenarios import after_compaction, has
from .test_trust import compact_block

pytestmark = pytest.mark.e2e

Body = dict[str, Any]
# Unquoted, ``git -C <root>/<this> log …`` would run ``touch SUBSHELL`` (the $()) and ``touch CHAINED`` (after ;).
FOLDER = "my shop$(touch SUBSHELL);touch CHAINED;#"
SIDE_EFFECTS = ("SUBSHELL", "CHAINED")


class ShopClaude(Claude):
    """The sandbox with its project in ``FOLDER``."""

    @property
    def project(self) -> Path:
        return self.root / FOLDER


def step_two(block: str) -> str:
    """The first command (between backticks) of the block's Resume step 2 line, exactly as the model reads it."""
    (line,) = [line for line in block.splitlines() if "2. Check the durable state before trusting the cursor" in line]
    return line.split("`")[1]


def test_resume_step_two_run_verbatim_runs_git_log_on_the_folder_and_nothing_else(
    claude_bin: Path, fake_api: FakeAnthropic, tmp_path: Path
) -> None:
    claude = ShopClaude(binary=claude_bin, api=fake_api, root=tmp_path)
    project = claude.project
    subprocess.run([*GIT, "init", "-q", str(project)], check=True)
    (project / "README").write_text("x\n", encoding="utf-8")
    subprocess.run([*GIT, "-C", str(project), "add", "README"], check=True)
    subprocess.run([*GIT, "-C", str(project), "commit", "-qm", "the shop's first commit"], check=True)
    made: list[str] = []
    ran: list[str] = []

    def step_it(body: Body) -> F.Reply:
        made.append(F.anchor_path_from(body))
        return F.bash(f"session-workflow anchor step {shlex.quote(made[0])} 'done: set up; next: resume'")

    def follow_step_two(body: Body) -> F.Reply:
        ran.append(step_two(compact_block(body)))
        return F.bash(ran[0])

    fake_api.script(
        F.bash('session-workflow anchor new --task "Shop run"'),
        step_it,
        F.text("stepped"),
        follow_step_two,
        F.text("checked the durable state"),
    )
    claude.converse(["start", "/compact", "resume"], ["--allowedTools", "Bash"], {})
    assert fake_api.pending_script() == 0, "the model's tool calls were not all made"
    has(compact_block(after_compaction(fake_api)), "done: set up; next: resume")
    (command,) = ran
    assert shlex.split(command) == ["git", "-C", str(project), "log", "--oneline", "-10"], command
    assert "the shop's first commit" in tool_output(fake_api, "the shop's first commit")
    created = [name for _dir, _dirs, files in os.walk(tmp_path) for name in files if name in SIDE_EFFECTS]
    assert not created, f"the folder name ran as a command: {created}"
    leaks = fake_api.leaks()
    assert not leaks, f"Claude Code tried to reach non-loopback hosts: {[r['path'] for r in leaks]}"
