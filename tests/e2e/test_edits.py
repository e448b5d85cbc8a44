"""On the real CLI: an anchor the session edits with Claude Code's Edit and Write tools keeps its
trust; a planted anchor the model edits stays "not created here".

The runs use ``--permission-mode bypassPermissions``, the usual mode of unattended work, where Edit and Write on
``.claude/`` files are allowed. Both builds run: the repository (with the mod) and a copy without the mod.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from session_workflow.anchor import registry
from session_workflow.core.places import Places

from . import fake_api as F
from .fake_api import FakeAnthropic
from .harness import Claude, new_session_id
from .test_scenarios import ANCHOR_HEADING, DELIVERIES, MOD_LOADED, after_compaction, has, lacks, plugin_without_mod
from .test_trust import PLANTED, compact_block

pytestmark = pytest.mark.e2e

Body = dict[str, Any]

# Claude Code refuses bypassPermissions as root unless it is told it runs in a sandbox (this one is).
BYPASS = ["--permission-mode", "bypassPermissions"]
SANDBOX = {"IS_SANDBOX": "1"}


def run_env() -> dict[str, str]:
    """The sandbox flag (the PostToolUse hook takes filelock from the plugin folder's vendored copy)."""
    return dict(SANDBOX)


TEXT = """---
format: anchor/v1
task: Port the parser
step: 0
---

# Port the parser

## Mission
Port the parser to grammar v2.

## Cursor
- Done: the setup.
Next action: WRITTEN-BY-THE-CLI

<!-- anchor:tail -->

## Decisions log
- TAIL-ONLY-DECISION
"""


@pytest.fixture(params=DELIVERIES)
def build(request: pytest.FixtureRequest, claude: Claude) -> str:
    """The repository ("mod") or a copy without the mod ("hooks"): the command hooks do the work in both."""
    if request.param == "hooks" and MOD_LOADED:
        claude.plugin_dir = plugin_without_mod(claude.root / "plugin-hooks-only")
    return str(request.param)


WRITTEN = TEXT.replace("WRITTEN-BY-THE-CLI", "EDITED-BY-EDIT").replace(
    "- Done: the setup.", "- Step 1: WHOLE-BY-WRITE\n- Done: the setup."
)


def test_edit_and_write_keep_a_cli_made_anchor_trusted(claude: Claude, fake_api: FakeAnthropic, build: str) -> None:
    sid = new_session_id()
    made: list[str] = []
    trusted: dict[str, bool] = {}
    state = {"HOME": str(claude.home)}

    def write_whole(body: Body) -> F.Reply:
        made.append(F.anchor_path_from(body))
        return F.bash(f"session-workflow anchor write {made[0]} <<'ANCHOR_EOF'\n{TEXT}ANCHOR_EOF")

    def edit(body: Body) -> F.Reply:
        edit_input = {"file_path": made[0], "old_string": "WRITTEN-BY-THE-CLI", "new_string": "EDITED-BY-EDIT"}
        return F.tool_use("Edit", {**edit_input, "replace_all": False})

    def write(body: Body) -> F.Reply:
        trusted["after Edit"] = registry.Registry(Places(state)).is_ours(made[0])
        return F.tool_use("Write", {"file_path": made[0], "content": WRITTEN})

    def done(body: Body) -> F.Reply:
        trusted["after Write"] = registry.Registry(Places(state)).is_ours(made[0])
        return F.text("edited the anchor")

    def step(body: Body) -> F.Reply:
        return F.bash(f'session-workflow anchor step {made[0]} "AFTER-THE-EDITS"')

    fake_api.script(
        F.bash('session-workflow anchor new --task "Port the parser"'),
        write_whole,
        lambda body: F.tool_use("Read", {"file_path": made[0]}),
        edit,
        write,
        done,
        step,
        F.text("stepped"),
    )
    claude.converse(["port the parser", "/compact", "go on"], BYPASS, run_env(), session_id=sid)
    assert fake_api.pending_script() == 0, "the model's tool calls were not all made"
    (path,) = made
    assert Path(path).read_text(encoding="utf-8").count("EDITED-BY-EDIT") == 1
    assert trusted == {"after Edit": True, "after Write": True}

    block = compact_block(after_compaction(fake_api))
    has(block, f"{ANCHOR_HEADING}`{path}`", "- Step 1: WHOLE-BY-WRITE")
    assert block.count("Next action: EDITED-BY-EDIT") == 1, block
    lacks(block, "not created here", "adopt", "TAIL-ONLY-DECISION", "WRITTEN-BY-THE-CLI")
    stepped = F.last_tool_results(fake_api.main_requests()[-1])
    assert any(f"step 0 -> 2  {path}" in result for result in stepped), stepped  # the frontmatter said 0
    assert "- Step 2: AFTER-THE-EDITS" in Path(path).read_text(encoding="utf-8")


def test_a_planted_anchor_the_model_edits_stays_not_created_here(
    claude: Claude, fake_api: FakeAnthropic, build: str
) -> None:
    planted = claude.project / ".claude" / "anchors" / "committed.md"
    planted.parent.mkdir(parents=True)
    planted.write_text(PLANTED, encoding="utf-8")
    edit_input = {"file_path": str(planted), "old_string": "Planted", "new_string": "MODEL-EDITED-PLANTED"}
    fake_api.script(
        F.tool_use("Read", {"file_path": str(planted)}),
        F.tool_use("Edit", {**edit_input, "replace_all": False}),
        F.tool_use("Write", {"file_path": str(planted), "content": PLANTED + "\nMODEL-WROTE-PLANTED\n"}),
        F.text("edited it as the README said"),
        F.text("going on"),
    )
    claude.converse(["do what the repository's anchor says", "/compact", "go on"], BYPASS, run_env())
    assert fake_api.pending_script() == 0, "the model's tool calls were not all made"
    assert "MODEL-WROTE-PLANTED" in planted.read_text(encoding="utf-8")
    assert not registry.Registry(Places({"HOME": str(claude.home)})).is_ours(str(planted))

    block = compact_block(after_compaction(fake_api))
    has(block, f"Open anchor not created here (not shown): `{planted}`", f"`session-workflow anchor adopt {planted}`")
    lacks(block, "REPO-PLANTED-CURSOR", "MODEL-EDITED-PLANTED", "MODEL-WROTE-PLANTED", ANCHOR_HEADING)
