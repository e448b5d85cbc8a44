"""How the plugin makes and checks its own folders: the user's alone, or not trusted.

``os.makedirs(path, mode=0o700)`` gives only the last level that mode (the levels above get the default, and the
umask trims both): under umask 002 a new state folder is 0775, under 000 0777, and a group member could replace
the records folder with one of their own. So every folder the plugin creates under the user's state, cache and
data folders is made here, each level 0700 whatever the umask (``make_private``), and a folder whose records the
hooks take as authority is read only when it and every folder above it up to the user's root (the state root, or
the home) are owned by the user and writable by no one else (``foreign_level``); else ``problem_line`` names the
folder and the fix. Hot-path safe: ``lstat`` calls only (a handful per folder, remembered per process).
"""

from __future__ import annotations

import os
import stat

TYPE_CHECKING = False
if TYPE_CHECKING:
    # (the folder, what is wrong with it, the command that fixes it)
    Problem = tuple[str, str, str]

PRIVATE_MODE = 0o700
# Group or other may write: anyone in the group could rename the folder away and put their own in its place.
_SHARED_WRITE = stat.S_IWGRP | stat.S_IWOTH

# (folder, top) -> the verdict of ``foreign_level``: a hook asks once per folder, however many records it reads.
_checked: dict[tuple[str, str | None], Problem | None] = {}


def make_private(folder: str) -> None:
    """Create ``folder`` and every missing level above it, each 0700 whatever the umask; levels that exist are left
    as they are (``foreign_level`` judges them). Raises ``OSError`` as ``os.makedirs`` would."""
    missing = []
    current = os.path.abspath(folder)
    while not os.path.isdir(current):
        missing.append(current)
        parent = os.path.dirname(current)
        if parent == current:
            break
        current = parent
    for level in reversed(missing):
        try:
            os.mkdir(level, PRIVATE_MODE)
        except FileExistsError:
            if not os.path.isdir(level):
                raise
            continue  # another process made it just now, the same way
        # The umask may have taken bits of the owner's too (077 keeps 0700, 277 would not): set it on the folder
        # just made, never through a link put in its place.
        fd = os.open(level, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_NOFOLLOW", 0))
        try:
            os.fchmod(fd, PRIVATE_MODE)
        finally:
            os.close(fd)
    _checked.clear()  # a verdict on a folder that was missing no longer holds


def foreign_level(folder: str, top: str | None) -> Problem | None:
    """The first folder on the way from ``folder`` up that is not this user's alone (with why and the fix: a folder
    of another user's cannot be taken over, so it is moved aside and the writers make a new one), or None.

    Symlinks resolved, every level from ``folder`` up to ``top`` (inclusive) must be owned by this user (or root,
    who can write anywhere anyway) and writable by no group or other (a level not there yet is skipped: nothing
    can be read from it). When ``folder`` does not lie below ``top`` (a link leads elsewhere, or there is no top),
    the levels above it are checked up to ``/``, and may be writable by others when sticky (``/tmp``): OpenSSH's
    rule for ``~/.ssh``.
    No check where there are no user ids (Windows).
    """
    getuid = getattr(os, "getuid", None)
    if getuid is None:
        return None
    key = (folder, top)
    if key in _checked:
        return _checked[key]
    verdict = _walk(folder, top, getuid())
    _checked[key] = verdict
    return verdict


def _walk(folder: str, top: str | None, uid: int) -> Problem | None:
    try:
        current = os.path.realpath(folder)
        stop = os.path.realpath(top) if top else None
    except (OSError, ValueError):
        return folder, "cannot be resolved", f"ls -ld {folder}"
    below = stop is not None and (current == stop or current.startswith(stop.rstrip(os.sep) + os.sep))
    first = True  # the folder itself (its nearest existing level): the user's alone, wherever it lies
    while True:
        try:
            info = os.lstat(current)
        except FileNotFoundError:
            info = None
        except OSError as error:
            return current, f"cannot be checked ({error.strerror or error})", f"ls -ld {current}"
        if info is not None:
            strict = below or first
            if not stat.S_ISDIR(info.st_mode):
                return current, "is not a folder", f"mv {current} {current}.not-mine"
            if info.st_uid not in (uid, 0):  # root's: root can write anywhere anyway
                return current, f"is owned by another user (uid {info.st_uid})", f"mv {current} {current}.not-mine"
            if info.st_mode & _SHARED_WRITE and (strict or not info.st_mode & stat.S_ISVTX):
                mode = stat.S_IMODE(info.st_mode)
                return current, f"is writable by others (mode {mode:04o})", f"chmod go-w {current}"
            first = False
        if below and current == stop:
            return None
        parent = os.path.dirname(current)
        if parent == current:
            return None
        current = parent


def problem_line(what: str, found: Problem) -> str:
    """The one line that says ``what`` (the trust records, the delivery records) is not read, and the fix."""
    from session_workflow.core.text import escaped

    level, why, fix = found
    return (
        f"session-workflow: ignored the {what}: {escaped(level)} {why}, so another user may have put them there;"
        f" fix: `{escaped(fix)}`"
    )
