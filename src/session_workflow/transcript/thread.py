"""What this plugin already put in the current thread: its SessionStart blocks after the last compaction.

On ``--resume`` Claude Code sends the thread's history again, and with it every SessionStart block stored in it
since the last compaction boundary (``attachment`` records of type ``hook_additional_context``; a compaction
never rewrites the file, so anything before the newest ``compact_boundary`` is no longer in the thread). A
resume block then needs to carry only what changed. Transcripts reach hundreds of MB, so only their last few MB
are read, backwards, and only lines holding one of the two record markers are parsed. Record shapes are Claude
Code 2.1.332's, measured (tests/fixtures/transcripts/README.md).
"""

from __future__ import annotations

import json

from session_workflow.core.boundedio import iter_marked_lines_from_end

TAIL_BYTES = 4 << 20
# Enough for every block of a long chain of resumes; each is at most 10,000 UTF-16 units.
MAX_BLOCKS = 16
CONTEXT_MARKER = b'"hook_additional_context"'
BOUNDARY_MARKER = b'"compact_boundary"'


def _record(line: bytes) -> dict[str, object] | None:
    try:
        record = json.loads(line)
    except (ValueError, RecursionError):
        return None
    return record if isinstance(record, dict) else None


def session_start_texts(record: dict[str, object]) -> list[str]:
    """The SessionStart additionalContext texts an attachment record stores; empty for any other record."""
    attachment = record.get("attachment")
    if record.get("type") != "attachment" or not isinstance(attachment, dict):
        return []
    if attachment.get("type") != "hook_additional_context" or attachment.get("hookEvent") != "SessionStart":
        return []
    content = attachment.get("content")
    return [text for text in content if isinstance(text, str)] if isinstance(content, list) else []


def is_boundary(record: dict[str, object]) -> bool:
    return record.get("type") == "system" and record.get("subtype") == "compact_boundary"


def blocks_in_thread(path: str, prefix: str, max_bytes: int = TAIL_BYTES) -> list[str]:
    """The SessionStart texts starting with ``prefix`` after the transcript's last compaction boundary, newest
    first (at most ``MAX_BLOCKS``); empty when there are none or the file cannot be read.

    Read backwards from the end, so any block found before a boundary is after the last one.
    """
    found: list[str] = []
    for line in iter_marked_lines_from_end(path, max_bytes, [CONTEXT_MARKER, BOUNDARY_MARKER]):
        record = _record(line)
        if record is None:
            continue
        if is_boundary(record):
            break
        found.extend(text for text in reversed(session_start_texts(record)) if text.startswith(prefix))
        if len(found) >= MAX_BLOCKS:
            break
    return found[:MAX_BLOCKS]
