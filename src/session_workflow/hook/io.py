"""Hook process plumbing: read the payload once, write one hook JSON, never fail the session."""

from __future__ import annotations

import os
import sys
import time

from session_workflow.core.context import HookContext
from session_workflow.core.errors import guard
from session_workflow.core.jsonload import loads, quote_ascii
from session_workflow.core.places import Places

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import BinaryIO

# A real payload is a few hundred bytes; anything far larger is not one of Claude Code's.
MAX_PAYLOAD_BYTES = 1 << 20


def parse_payload(data: bytes) -> dict[str, object] | None:
    """Parse hook stdin; None for anything but a JSON object (bad JSON, wrong type, oversized)."""
    if len(data) > MAX_PAYLOAD_BYTES:
        return None
    try:
        payload = loads(data)
    except (ValueError, RecursionError):
        return None
    return payload if isinstance(payload, dict) else None


def hook_json(event: str, text: str) -> bytes:
    """The only shape Claude Code accepts for added context; ASCII-escaped so any stdout encoding works.

    A lone surrogate (an undecodable byte in a file name, a ``\\ud800`` in some JSON) becomes U+FFFD: the Messages
    API rejects a request that carries one, and every later request of the session with it.
    """
    if not text.isascii() and not _is_utf8(text):  # only a surrogate stops UTF-8: skip the codec's import
        text = text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")
    # json.dumps of {"hookSpecificOutput": {"hookEventName": event, "additionalContext": text}}, ASCII, with its
    # default separators, written out so that printing a block does not import json.
    fields = f'"hookEventName": {quote_ascii(event)}, "additionalContext": {quote_ascii(text)}'
    return ('{"hookSpecificOutput": {' + fields + "}}").encode("ascii")


def _is_utf8(text: str) -> bool:
    """``core.text.is_utf8``, imported only for a text that is not ASCII (most blocks are)."""
    from session_workflow.core.text import is_utf8

    return is_utf8(text)


def write_stdout(data: bytes) -> bool:
    """Write bytes to stdout and flush; False when the pipe is gone."""
    try:
        sys.stdout.buffer.write(data)
        sys.stdout.buffer.flush()
    except (OSError, ValueError):
        return False
    return True


def run_hook(handler: Callable[[HookContext], None], event: str, stdin: BinaryIO | None = None) -> None:
    """Read the payload, build the context and run ``handler`` inside the one error guard (``core.errors.guard``):
    an error goes to the error log, never further (a hook must exit 0)."""
    places = Places(os.environ)  # the hook's one entry: its folders resolved on first use, once

    def run() -> int:
        stream = stdin if stdin is not None else sys.stdin.buffer
        payload = parse_payload(stream.read(MAX_PAYLOAD_BYTES + 1))
        if payload is not None:
            handler(HookContext.from_payload(payload, places, time.time()))
        return 0

    guard(event, run, lambda: places)
