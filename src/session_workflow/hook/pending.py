"""What the ledger knows of this session's thread: a resume block Claude Code had not sent when a compaction
began (what it holds, for the compact block), and the session a fork continues (for its later blocks).

Measured on 2.1.332: ``--resume`` then ``/compact`` at once (one stream-json process, or a ``-p --resume … /compact``)
sends no request between the two hooks, and Claude Code keeps the resume block and delivers it after the
compaction, before the compact block, in the same request. The transcript cannot tell the compact hook: Claude Code
writes the resume block there only after that hook ran. So the ledger line of a resume block carries the
transcript's size when it was sent to Claude Code (``thread``) and a digest of each part it held whole
(``digests``); the compact hook reads the session's newest ledger line, and when it is a resume block and no answer
(an ``assistant`` record) was written to the transcript since, a part whose digest it holds is one line in the
compact block. Anything unsure (no ledger line, a rotated ledger, a transcript that shrank or grew by megabytes)
sends every part.

A fork's parent is named by Claude Code's command line only in the process that forked
(``transcript.thread.fork_parent``), and a ``/clear`` in that process starts a session that is no fork: so the
fork's ledger line records its ``parent``, and the fork's later blocks (its first compaction) take it from there.
Hot-path safe: ``os`` and the flat JSON reader only.
"""

from __future__ import annotations

import os

from session_workflow.core.boundedio import iter_marked_lines_from_end
from session_workflow.core.ledger import newest_start, session_starts
from session_workflow.core.locations import _fnv1a64

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping

    from session_workflow.core.context import HookContext

# The sources whose block a compaction that follows at once delivers after it (measured: resume).
PENDING_SOURCES = ("resume",)
# A transcript that grew by more than this since the block held a conversation: the block was sent.
MAX_GROWTH_BYTES = 4 << 20
ANSWER = b'"type":"assistant"'


def digest(text: str) -> str:
    """A part's stable text, as the ledger keeps it: 16 hex digits (FNV-1a 64 of its UTF-8)."""
    return f"{_fnv1a64(text):016x}"


def ledger_facts(ctx: HookContext, whole: Mapping[str, str]) -> dict[str, object]:
    """What a block's ledger line needs for a compaction that follows before it is sent: the transcript's size now
    and the digest of each part the block held whole (``whole``: name → stable text); empty for other sources."""
    if ctx.source not in PENDING_SOURCES or not ctx.transcript_path or not whole:
        return {}
    try:
        size = os.stat(ctx.transcript_path).st_size
    except (OSError, ValueError):
        return {}
    return {"thread": size, "digests": ",".join(f"{name}={digest(text)}" for name, text in whole.items())}


def pending(ctx: HookContext) -> tuple[str, dict[str, str]] | None:
    """(source, part name → digest) of this session's block that Claude Code will deliver after this compaction,
    or None when there is none or it is unsure."""
    if not ctx.transcript_path:
        return None
    newest = newest_start(ctx.places, ctx.session_id)
    return _unsent(newest, ctx.transcript_path) if newest is not None else None


def fork_parent_session(ctx: HookContext) -> str | None:
    """The session this one was forked from: at the fork, from Claude Code's command line; later, from the fork's
    ledger line. None for a session that is no fork, or when that is unknown."""
    if ctx.source == "fork":
        if not ctx.transcript_path:
            return None
        from session_workflow.transcript.thread import TRANSCRIPT_SUFFIX, fork_parent

        path = fork_parent(ctx.transcript_path)
        return os.path.basename(path)[: -len(TRANSCRIPT_SUFFIX)] or None if path else None
    if ctx.source not in ("compact", "resume"):  # a startup or a clear never continues a fork's thread
        return None
    for entry in session_starts(ctx.places, ctx.session_id):
        if entry.get("source") == "fork":
            parent = entry.get("parent")
            return parent if isinstance(parent, str) and parent else None
    return None


def _unsent(entry: Mapping[str, object], transcript: str) -> tuple[str, dict[str, str]] | None:
    """The entry's source and digests when no answer was written to ``transcript`` after it; else None."""
    source, size, digests = entry.get("source"), entry.get("thread"), entry.get("digests")
    if source not in PENDING_SOURCES or type(size) is not int or not isinstance(digests, str):
        return None
    try:
        now = os.stat(transcript).st_size
    except (OSError, ValueError):
        return None
    if now < size or now - size > MAX_GROWTH_BYTES:
        return None
    if now > size and next(iter_marked_lines_from_end(transcript, now - size, [ANSWER]), None) is not None:
        return None
    held = dict(item.partition("=")[::2] for item in digests.split(",") if "=" in item)
    return str(source), held
