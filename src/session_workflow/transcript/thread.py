"""What this plugin already put in the current thread: its SessionStart blocks after the last compaction.

On ``--resume`` Claude Code sends the thread's history again, and with it every SessionStart block stored in it
since the last compaction boundary (``attachment`` records of type ``hook_additional_context``; a compaction
never rewrites the file, so anything before the newest ``compact_boundary`` is no longer in the thread). A
resume block then needs to carry only what changed. Transcripts reach hundreds of MB, so only their last few MB
are read, backwards, and only lines holding one of the two record markers are parsed. Record shapes are Claude
Code 2.1.332's, measured (tests/fixtures/transcripts/README.md).

A compaction that follows a block never sent (``--resume`` then ``/compact`` at once: no request went out
between them) does not drop that block: Claude Code keeps it pending and delivers it after the compaction, beside
the compact block. Such a block is written to the transcript only after the compact hook ran, just before the
boundary, and the compact hook learns of it from the ledger (``hook.pending``); a later resume finds it here:
``blocks_in_thread`` counts the blocks between the newest boundary and the last answer (``assistant`` record)
before it as still in the thread.

A fork (``--resume <id> --fork-session``) carries its parent's thread under a new session id, but its transcript
does not exist yet when SessionStart runs and the payload names no parent: ``fork_parent`` finds the parent's
transcript from Claude Code's own command line, and says nothing when it cannot be sure (then every part is sent).
"""

from __future__ import annotations

import os

from session_workflow.core.boundedio import iter_marked_lines_from_end
from session_workflow.core.jsonload import loads

TAIL_BYTES = 4 << 20
# Enough for every block of a long chain of resumes; each is at most 10,000 UTF-16 units.
MAX_BLOCKS = 16
CONTEXT_MARKER = b'"hook_additional_context"'
BOUNDARY_MARKER = b'"compact_boundary"'
# On every answer's record (``"type":"assistant"``), and on few others: each hit is parsed and checked.
ANSWER_MARKER = b'"assistant"'
# A command line longer than this is not one we read for the forked session's id.
MAX_CMDLINE_BYTES = 64 * 1024
TRANSCRIPT_SUFFIX = ".jsonl"


def _record(line: bytes) -> dict[str, object] | None:
    try:
        record = loads(line)  # the hot path's loader: the standard json pulls in re and enum
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
    """The SessionStart texts starting with ``prefix`` still in the thread, newest first (at most ``MAX_BLOCKS``):
    those after the transcript's last compaction boundary, and those just before it that no answer followed (no
    request carried them, so Claude Code delivered them after the compaction); empty when there are none or the
    file cannot be read.

    Read backwards from the end, so any block found before a boundary is after the last one.
    """
    found: list[str] = []
    passed = False
    for line in iter_marked_lines_from_end(path, max_bytes, [CONTEXT_MARKER, BOUNDARY_MARKER, ANSWER_MARKER]):
        if not passed and CONTEXT_MARKER not in line and BOUNDARY_MARKER not in line:
            continue  # an answer after the boundary: the thread's own, nothing to parse
        record = _record(line)
        if record is None:
            continue
        if is_boundary(record):
            if passed:
                break
            passed = True
            continue
        if passed and record.get("type") == "assistant":
            break
        found.extend(text for text in reversed(session_start_texts(record)) if text.startswith(prefix))
        if len(found) >= MAX_BLOCKS:
            break
    return found[:MAX_BLOCKS]


def resumed_session(argv: list[str]) -> str | None:
    """The session id a ``--resume <id> --fork-session`` command line forks (``--resume=<id>`` and ``-r <id>``
    too); None for any other command line."""
    if "--fork-session" not in argv:
        return None
    for index, arg in enumerate(argv):
        if arg.startswith("--resume="):
            return arg[len("--resume=") :] or None
        if arg in ("--resume", "-r") and index + 1 < len(argv) and not argv[index + 1].startswith("-"):
            return argv[index + 1]
    return None


def parent_argv(pid: int) -> list[str]:
    """The command line of process ``pid`` (Linux ``/proc``), bounded; empty when it cannot be read."""
    try:
        fd = os.open(f"/proc/{pid}/cmdline", os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except (OSError, ValueError):
        return []
    chunks: list[bytes] = []
    size = 0
    try:
        while size <= MAX_CMDLINE_BYTES:
            chunk = os.read(fd, MAX_CMDLINE_BYTES + 1 - size)
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
    except OSError:
        return []
    finally:
        os.close(fd)
    if size > MAX_CMDLINE_BYTES:
        return []
    return b"".join(chunks).decode("utf-8", "surrogateescape").split("\0")


def fork_parent(transcript_path: str, pid: int | None = None) -> str | None:
    """The transcript of the session this fork was forked from, beside the fork's own; None when unsure.

    The hook's parent process is Claude Code itself, whose command line names the session ``--resume`` forks
    (read from Linux's ``/proc``; elsewhere, or for a fork made another way, None). Nothing here comes from the
    repository, and nothing is guessed: a wrong parent would tell the model that text it never saw is above.
    """
    folder = os.path.dirname(transcript_path)
    session = resumed_session(parent_argv(os.getppid() if pid is None else pid))
    if not session or "/" in session or "\0" in session or session.startswith("."):
        return None
    path = os.path.join(folder, session + TRANSCRIPT_SUFFIX)
    return path if path != transcript_path and os.path.isfile(path) else None
