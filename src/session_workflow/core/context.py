"""What a hook knows about the session it runs in, read once from the payload and the environment.

Everything here is cheap: the hot path builds one HookContext per run and every part reads from it.
"""

from __future__ import annotations

import os

from session_workflow.core.boundedio import iter_lines_from_start
from session_workflow.core.jsonload import loads

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping

# The field our mod's classic.SessionStart handler adds to the command hook's stdin, the one reliable way for the
# Python SessionStart hook to know the mod is loaded and delivers the work-state section.
MOD_PAYLOAD_KEY = "session_workflow_mod"

SOURCES = ("startup", "resume", "clear", "compact", "fork")

MAX_IDLE_SECONDS = 1000 * 365 * 86400.0
# How far from the top of a transcript we look for the first record that names a cwd.
START_DIR_SCAN_BYTES = 1 << 20


def _string(payload: Mapping[str, object], key: str) -> str | None:
    value = payload.get(key)
    return value if isinstance(value, str) and value and "\x00" not in value else None


def _seconds(payload: Mapping[str, object], key: str) -> float | None:
    value = payload.get(key)
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value) if 0 <= value < MAX_IDLE_SECONDS else None  # NaN fails both comparisons


class HookContext:
    """The parsed hook payload plus the environment and the hook's start time."""

    __slots__ = (
        "_start_dir",
        "cwd",
        "dry_run",
        "env",
        "event",
        "idle_seconds",
        "mod_active",
        "now",
        "session_id",
        "source",
        "transcript_path",
    )

    def __init__(
        self,
        *,
        event: str | None,
        source: str | None,
        session_id: str | None,
        cwd: str | None,
        transcript_path: str | None,
        mod_active: bool,
        env: Mapping[str, str],
        now: float,
        idle_seconds: float | None = None,
    ) -> None:
        self.event = event
        self.source = source
        self.session_id = session_id
        self.cwd = cwd
        self.transcript_path = transcript_path
        self.mod_active = mod_active
        self.env = env
        self.now = now
        # ``seconds_since_last_response`` (resume and fork): how long the conversation sat idle before this start.
        self.idle_seconds = idle_seconds
        self._start_dir: str | bool | None = False
        # A dry run (``inject --dry-run``) shows what the hook would inject and changes nothing on disk.
        self.dry_run = False

    @classmethod
    def from_payload(cls, payload: Mapping[str, object], env: Mapping[str, str], now: float) -> HookContext:
        """Build the context; any field that is not a non-empty string (or, for the idle time, a number of seconds
        from 0 to a thousand years) is treated as absent."""
        marker = payload.get(MOD_PAYLOAD_KEY)
        return cls(
            event=_string(payload, "hook_event_name"),
            source=_string(payload, "source"),
            session_id=_string(payload, "session_id"),
            cwd=_string(payload, "cwd"),
            transcript_path=_string(payload, "transcript_path"),
            mod_active=marker is True or (type(marker) is int and marker == 1),
            env=env,
            now=now,
            idle_seconds=_seconds(payload, "seconds_since_last_response"),
        )

    def start_dir(self) -> str | None:
        """The directory the session started in: the cwd of the transcript's first record that has one.

        Any failure reading it (a MemoryError, an I/O error the reader did not expect) leaves it unknown: every
        part looks here first, so an exception would cost the whole block.
        """
        if self._start_dir is False:
            try:
                self._start_dir = session_start_dir(self.transcript_path) if self.transcript_path else None
            except Exception:
                self._start_dir = None
        return self._start_dir if isinstance(self._start_dir, str) else None

    def project_dirs(self) -> list[str]:
        """Where to look for project state, best first.

        After compact, resume or clear, and in a running session's PreCompact and UserPromptSubmit, the session
        may have wandered (cd) away from the project it works on, so the directory it started in comes first and
        the payload cwd second; at startup (no transcript yet) only the cwd counts.
        """
        candidates = [self.start_dir()] if self.source != "startup" else []
        candidates.append(self.cwd)
        ordered: list[str] = []
        for candidate in candidates:
            if candidate and os.path.isabs(candidate) and candidate not in ordered:
                ordered.append(candidate)
        return ordered


def session_start_dir(transcript_path: str) -> str | None:
    """Read a transcript from its top, line by line, and return the first record's ``cwd``; skip bad lines (a
    line nested too deep for the parser among them)."""
    for line in iter_lines_from_start(transcript_path, START_DIR_SCAN_BYTES):
        if b'"cwd"' not in line:
            continue
        try:
            record = loads(line)
        except (ValueError, RecursionError):
            continue
        if isinstance(record, dict):
            cwd = record.get("cwd")
            if isinstance(cwd, str) and cwd and "\x00" not in cwd:
                return cwd
    return None
