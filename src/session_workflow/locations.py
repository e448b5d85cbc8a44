"""Where the plugin's state lives on disk: one place for the paths the hooks, the writers and the composer share.

Kept tiny and import-free (os only) so the SessionStart composer can ask "is there anything here at all?" before
it imports the part that would read it: an anchor-less, state-less session pays for almost nothing.
"""

from __future__ import annotations

import os

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping

ANCHORS_SUBDIR = os.path.join(".claude", "anchors")
STATE_RELPATH = ".claude/session-workflow/work-state.json"
PLUGIN_DATA_ENV = "CLAUDE_PLUGIN_DATA"
RECORDS_FOLDER = "work-state-delivered"


def anchors_dir(project_dir: str) -> str:
    """Where a project's anchors live."""
    return os.path.join(project_dir, ANCHORS_SUBDIR)


def state_path(project_dir: str) -> str:
    """A project's work-state file."""
    return os.path.join(project_dir, *STATE_RELPATH.split("/"))


def records_dir(env: Mapping[str, str]) -> str | None:
    """The folder of per-session delivery records under CLAUDE_PLUGIN_DATA (None when that is not set)."""
    base = env.get(PLUGIN_DATA_ENV)
    return os.path.join(base, RECORDS_FOLDER) if base and os.path.isabs(base) else None


def any_anchors(project_dirs: list[str]) -> bool:
    """True when some project dir has an anchors folder (the anchor part has something to look at)."""
    return any(os.path.isdir(anchors_dir(folder)) for folder in project_dirs)


def any_work_state(project_dirs: list[str], env: Mapping[str, str]) -> bool:
    """True when the work-state part may have something to do: a state file, or delivery records to reset.

    Without project dirs the state may sit in the user-level fallback location, so the answer is True.
    """
    if not project_dirs or any(os.path.isfile(state_path(folder)) for folder in project_dirs):
        return True
    records = records_dir(env)
    return records is not None and os.path.isdir(records)
