"""Per-session delivery records: the snapshot key our hooks last delivered in one session.

SessionStart writes one when its block (or the mod) carried the section, UserPromptSubmit reads it on every
prompt, so a snapshot reaches the model once per thread. One small file per session, replaced whole (no lock).
"""

from __future__ import annotations

import os

from session_workflow.core.boundedio import read_prefix
from session_workflow.core.locations import RECORDS_FOLDER, record_name, records_dir, user_state_dir
from session_workflow.workstate.state import MAX_STATE_BYTES

TYPE_CHECKING = False
if TYPE_CHECKING:
    from session_workflow.hook.context import HookContext

# A key is ASCII JSON of at most a state file's fields, each character escaped to at most six bytes.
MAX_RECORD_BYTES = 6 * MAX_STATE_BYTES
MAX_SESSION_ID_CHARS = 4096
RECORD_MAX_AGE_SECONDS = 30 * 24 * 3600
MAX_RECORDS_SCANNED = 4096


def _unlink_quietly(path: str) -> None:
    try:
        os.unlink(path)
    except OSError:
        return


class DeliveryRecord:
    """The snapshot key our hooks last delivered in one session: one small file, replaced whole (no lock)."""

    __slots__ = ("folder", "now", "path")

    def __init__(self, folder: str, name: str, now: float) -> None:
        self.folder = folder
        self.path = os.path.join(folder, name)
        self.now = now

    @classmethod
    def for_session(cls, ctx: HookContext) -> DeliveryRecord | None:
        """Under CLAUDE_PLUGIN_DATA, else the user state dir; None without a usable session id or location."""
        if not ctx.session_id or len(ctx.session_id) > MAX_SESSION_ID_CHARS:
            return None
        folder = records_dir(ctx.env)
        if folder is None:
            fallback = user_state_dir()
            folder = os.path.join(fallback, RECORDS_FOLDER) if fallback else None
        return cls(folder, record_name(ctx.session_id), ctx.now) if folder else None

    def holds(self, key: str) -> bool:
        read = read_prefix(self.path, MAX_RECORD_BYTES)
        return read is not None and read[0] == key.encode("ascii")

    def holds_any(self) -> bool:
        """Whether some snapshot was delivered in this session (one that ``holds`` did not match: it changed)."""
        return read_prefix(self.path, 1) is not None

    def store(self, key: str) -> None:
        """Record ``key`` (temp file + os.replace, so a reader never sees half of it), then prune old records."""
        temp = f"{self.path}.{os.getpid()}.tmp"
        try:
            os.makedirs(self.folder, mode=0o700, exist_ok=True)
            fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_NOFOLLOW", 0), 0o600)
            try:
                os.write(fd, key.encode("ascii"))
            finally:
                os.close(fd)
            os.replace(temp, self.path)
        except OSError:
            _unlink_quietly(temp)
            return
        self._prune()

    def forget(self) -> None:
        """Drop the record, so the next prompt delivers the section again."""
        _unlink_quietly(self.path)

    def _prune(self) -> None:
        """Remove records (and a killed hook's temp files) untouched for a month: sessions leave one file each."""
        try:
            with os.scandir(self.folder) as entries:
                for index, entry in enumerate(entries):
                    if index >= MAX_RECORDS_SCANNED:
                        break
                    ours = entry.name.endswith((".key", ".tmp")) and entry.is_file(follow_symlinks=False)
                    if ours and self.now - entry.stat(follow_symlinks=False).st_mtime > RECORD_MAX_AGE_SECONDS:
                        os.unlink(entry.path)
        except OSError:
            return
