"""The compaction ledger: what the plugin told the model, and when, for ``session-workflow log``.

One JSON line per SessionStart block the hook wrote (its source, each part's size, what was cut or held above,
the anchor's step), appended in the user's state folder, never the project (a repository must not be able to
plant a history, and ``git clean`` must not erase it). The mod keeps its checkpoint reminders beside it, one small
file per session (``REMINDERS_FOLDER``: a mod writes whole files only). Written only when a block or a reminder
was sent, bounded like every log here (``core.jsonlog``); hot-path safe: ``os`` and the flat JSON writer only.
"""

from __future__ import annotations

import os

from session_workflow.core.folders import make_private
from session_workflow.core.jsonlog import append_record
from session_workflow.core.locations import is_safe_name, user_state_dir

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping

LEDGER_NAME = "ledger.ndjson"
LEDGER_ROTATED = "ledger.1.ndjson"
# The mod's checkpoint reminders: ``<state>/reminders/<session id>.json``, a JSON list of its newest entries.
REMINDERS_FOLDER = "reminders"


def ledger_path(env: Mapping[str, str]) -> str | None:
    """The ledger file (None without a home): the same folder the trust records live under, from the environment
    alone, so the hooks and the CLI in any shell agree."""
    root = user_state_dir(env)
    return os.path.join(root, LEDGER_NAME) if root else None


def reminders_path(env: Mapping[str, str], session_id: str) -> str | None:
    """The file the mod keeps ``session_id``'s reminders in; None for an id that is not a plain file name (the mod
    writes none for such an id either)."""
    root = user_state_dir(env)
    if not root or not session_id or len(session_id) > 100 or not is_safe_name(session_id):
        return None
    return os.path.join(root, REMINDERS_FOLDER, session_id + ".json")


def append(env: Mapping[str, str], entry: Mapping[str, object]) -> bool:
    """Append one flat entry; False (never an exception) when it could not be written."""
    path = ledger_path(env)
    if path is None:
        return False
    folder = os.path.dirname(path)
    try:
        if not os.path.isdir(folder):
            make_private(folder)
    except OSError:
        return False
    return append_record(path, entry, os.path.join(folder, LEDGER_ROTATED))
