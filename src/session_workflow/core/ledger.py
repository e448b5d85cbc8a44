"""The compaction ledger: what the plugin told the model, and when, for ``session-workflow log``.

One JSON line per SessionStart block the hook wrote (its source, each part's size, what was cut or held above,
the anchor's step), appended in the user's state folder, never the project (a repository must not be able to
plant a history, and ``git clean`` must not erase it). The mod keeps its checkpoint reminders beside it, one small
file per session (``REMINDERS_FOLDER``: a mod writes whole files only). Written only when a block or a reminder
was sent, bounded like every log here (``core.jsonlog``); hot-path safe: ``os`` and the flat JSON reader and writer
only. A hook reads back the session's newest block line (``session_starts``): what the resume block held, a fork's
parent, where the run record's last look reached.
"""

from __future__ import annotations

import os

from session_workflow.core.boundedio import iter_marked_lines_from_end
from session_workflow.core.jsonload import loads, quote_ascii
from session_workflow.core.locations import is_safe_name

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator, Mapping

    from session_workflow.core.places import Places

# A ledger is at most 256 KiB before it rotates; its tail holds a session's newest line.
LEDGER_TAIL_BYTES = 256 * 1024

LEDGER_ROTATED = "ledger.1.ndjson"
# The mod's checkpoint reminders: ``<state>/reminders/<session id>.json``, a JSON list of its newest entries.
REMINDERS_FOLDER = "reminders"


def reminders_path(places: Places, session_id: str) -> str | None:
    """The file the mod keeps ``session_id``'s reminders in; None for an id that is not a plain file name (the mod
    writes none for such an id either)."""
    root = places.state
    if not root or not session_id or len(session_id) > 100 or not is_safe_name(session_id):
        return None
    return os.path.join(root, REMINDERS_FOLDER, session_id + ".json")


def session_starts(places: Places, session_id: str | None, holding: bytes = b"") -> Iterator[dict[str, object]]:
    """The session's block lines in the ledger's tail, newest first; only those whose text holds ``holding`` (a
    key and its value, as the flat writer writes them), when given: the search skips the rest unparsed."""
    path = places.ledger
    if path is None or not session_id:
        return
    session = session_id[:200]
    marker = holding or ('"session":' + quote_ascii(session)).encode("ascii")
    for line in iter_marked_lines_from_end(path, LEDGER_TAIL_BYTES, [marker]):
        try:
            entry = loads(line.decode("ascii"))
        except (ValueError, RecursionError, UnicodeDecodeError):
            continue
        if isinstance(entry, dict) and entry.get("session") == session and entry.get("kind") == "start":
            yield entry


def newest_start(places: Places, session_id: str | None) -> dict[str, object] | None:
    """The session's newest block line (``session_starts``)."""
    return next(session_starts(places, session_id), None)


def append(places: Places, entry: Mapping[str, object]) -> bool:
    """Append one flat entry; False (never an exception) when it could not be written."""
    from session_workflow.core.folders import make_private
    from session_workflow.core.jsonlog import append_record

    path = places.ledger  # the same folder the trust records live under: hooks and CLI in any shell agree
    if path is None:
        return False
    folder = os.path.dirname(path)
    try:
        if not os.path.isdir(folder):
            make_private(folder)
    except OSError:
        return False
    return append_record(path, entry, os.path.join(folder, LEDGER_ROTATED))
