"""Per-session delivery records: the snapshot key our hooks last delivered in one session.

SessionStart writes one when its block (or the mod) carried the section, UserPromptSubmit reads it on every
prompt, so a snapshot reaches the model once per thread. One small file per session, replaced whole (no lock),
and only when its key changes; old records are pruned at most once a day (a stamp file's mtime says when).
"""

from __future__ import annotations

import os

from session_workflow.core.boundedio import read_prefix, read_prefix_and_stat
from session_workflow.core.folders import make_private, problem_line
from session_workflow.core.locations import RECORDS_FOLDER, record_name
from session_workflow.workstate.state import MAX_STATE_BYTES

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence

    from session_workflow.core.context import HookContext
    from session_workflow.core.folders import Problem
    from session_workflow.core.places import Places

# A key is ASCII JSON of at most a state file's fields, each character escaped to at most six bytes.
MAX_RECORD_BYTES = 6 * MAX_STATE_BYTES
MAX_SESSION_ID_CHARS = 4096
RECORD_MAX_AGE_SECONDS = 30 * 24 * 3600
MAX_RECORDS_SCANNED = 4096
DAY_SECONDS = 24 * 3600
# Its mtime is when the folder was last pruned; not a ``.key`` or ``.tmp`` name, so pruning never removes it.
PRUNE_STAMP = ".pruned"


def _touch(path: str, now: float) -> bool:
    """Create ``path`` if missing and set its mtime to ``now``; never through a symlink, never blocking."""
    flags = os.O_WRONLY | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
    try:
        fd = os.open(path, flags, 0o600)
    except OSError:
        return False
    try:
        os.utime(fd, (now, now))
    except (OSError, NotImplementedError):
        return False
    finally:
        os.close(fd)
    return True


def _unlink_quietly(path: str) -> None:
    try:
        os.unlink(path)
    except OSError:
        return


def delivery_folder(places: Places, project_dirs: Sequence[str]) -> str | None:
    """Where delivery records are read, written and pruned, for the hooks and ``inject`` alike (the Bash tool gets
    ``CLAUDE_PLUGIN_DATA`` from a project's ``env`` block alone): under CLAUDE_PLUGIN_DATA when it is an absolute
    path outside the projects (``Places.records``), else the user state dir; and only when that folder and the ones
    above it up to the home (the state root) are the user's alone (``Places.foreign``). None otherwise.
    """
    folder, found = _delivery_folder(places, project_dirs)
    return folder if found is None else None


def delivery_note(ctx: HookContext) -> str | None:
    """The one line that says the delivery records are not used, naming the folder and the fix (None: they are): the
    work-state part's note in the block's head (``hook.parts``)."""
    found = _delivery_folder(ctx.places, ctx.project_dirs())[1]
    return problem_line("work state's delivery records", found) if found is not None else None


def _delivery_folder(places: Places, project_dirs: Sequence[str]) -> tuple[str | None, Problem | None]:
    folder = places.records(project_dirs)
    below_home = folder is not None
    if folder is None:
        fallback = places.state
        folder = os.path.join(fallback, RECORDS_FOLDER) if fallback else None
    return folder, places.foreign(folder, below_home) if folder is not None else None


class DeliveryRecord:
    """The snapshot key our hooks last delivered in one session: one small file, replaced whole (no lock)."""

    __slots__ = ("folder", "now", "path")

    def __init__(self, folder: str, name: str, now: float) -> None:
        self.folder = folder
        self.path = os.path.join(folder, name)
        self.now = now

    @classmethod
    def for_session(cls, ctx: HookContext) -> DeliveryRecord | None:
        """Under CLAUDE_PLUGIN_DATA, else the user state dir; None without a usable session id or location, or when
        the folder is not the user's alone (``delivery_folder``)."""
        if not ctx.session_id or len(ctx.session_id) > MAX_SESSION_ID_CHARS:
            return None
        folder = delivery_folder(ctx.places, ctx.project_dirs())
        return cls(folder, record_name(ctx.session_id), ctx.now) if folder else None

    def holds(self, key: str) -> bool:
        return self._holding(key) is not None

    def _holding(self, key: str) -> os.stat_result | None:
        """The record's fstat when it holds exactly ``key``, else None."""
        read = read_prefix_and_stat(self.path, MAX_RECORD_BYTES)
        return read[1] if read is not None and read[0] == key.encode("ascii") else None

    def holds_any(self) -> bool:
        """Whether some snapshot was delivered in this session (one that ``holds`` did not match: it changed)."""
        return read_prefix(self.path, 1) is not None

    def store(self, key: str) -> None:
        """Record ``key`` (temp file + os.replace, so a reader never sees half of it), then prune old records.

        A record that already holds ``key`` is not rewritten: its mtime is only refreshed once a day, so that
        pruning, which goes by mtime, never drops the record of a session still in use.
        """
        held = self._holding(key)
        if held is not None:
            if not 0 <= self.now - held.st_mtime < DAY_SECONDS:
                _touch(self.path, self.now)
            return
        temp = f"{self.path}.{os.getpid()}.tmp"
        try:
            make_private(self.folder)
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
        """Remove records (and a killed hook's temp files) untouched for a month: sessions leave one file each.

        At most once a day, and at most ``MAX_RECORDS_SCANNED`` entries a time, so a start never pays for
        listing thousands of records.
        """
        stamp = os.path.join(self.folder, PRUNE_STAMP)
        try:
            pruned_at = os.stat(stamp, follow_symlinks=False).st_mtime
        except OSError:
            pruned_at = None
        if pruned_at is not None and 0 <= self.now - pruned_at < DAY_SECONDS:
            return
        if not _touch(stamp, self.now):
            return
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
