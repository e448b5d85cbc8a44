"""The names of the plugin's folders and files, and the per-project paths the hooks, the writers and the composer
share (the user-level folders are resolved once per run by ``core.places``).

Kept tiny (os, no ``re``: ids become file names by string methods) so the SessionStart composer and the
prompt hook can ask "is there anything here at all?" before they import the part that would read it: a state-less
session pays for almost nothing.
"""

from __future__ import annotations

import os

TYPE_CHECKING = False
if TYPE_CHECKING:
    from session_workflow.core.places import Places

ANCHORS_SUBDIR = os.path.join(".claude", "anchors")
STATE_RELPATH = ".claude/session-workflow/work-state.json"
PLUGIN_DATA_ENV = "CLAUDE_PLUGIN_DATA"
CONFIG_ENV = "CLAUDE_CONFIG_DIR"
PROJECT_ENV = "CLAUDE_PROJECT_DIR"
# Set in Claude Code's Bash tool: the session a CLI command runs for.
SESSION_ENV = "CLAUDE_CODE_SESSION_ID"
RECORDS_FOLDER = "work-state-delivered"
APP_NAME = "session-workflow"
# The anchor trust and affinity records (``anchor.registry``), one file per anchor, under the user state dir.
TRUST_FOLDER = "anchors"
# Under the trust folder: per session, the anchors it keeps (``anchor.registry.kept_by``).
KEPT_FOLDER = "sessions"


def anchors_dir(project_dir: str) -> str:
    """Where a project's anchors live."""
    return os.path.join(project_dir, ANCHORS_SUBDIR)


def state_path(project_dir: str) -> str:
    """A project's work-state file."""
    return os.path.join(project_dir, *STATE_RELPATH.split("/"))


def shown(value: str) -> str:
    """A variable's value in a message: a name (``core.text.named``: escaped, in a code span), a very long one cut."""
    from session_workflow.core.text import cut_code_points, named

    return named(cut_code_points(value, 300))


def is_inside(path: str, folder: str) -> bool:
    """True when ``path`` is ``folder`` or lies below it; both must already be real (resolved) paths."""
    return path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)


def resolves_inside(path: str, folder: str) -> bool:
    """True when ``path``, symlinks resolved, lies inside ``folder`` (resolved too)."""
    try:
        return is_inside(os.path.realpath(path), os.path.realpath(folder))
    except (OSError, ValueError):
        return False


def leads_outside(project_dir: str, path: str) -> tuple[str, str] | None:
    """The first symlink on the way from ``project_dir`` down to ``path`` that resolves outside the project, as
    (the link, where it leads); None when every step stays inside. A path not below the project is itself named.

    Writers call this before they create a folder, open a lock or replace a file, so a planted ``.claude``,
    anchors folder, state folder, file or lock link can never aim a write elsewhere on the machine.
    """
    project = os.path.abspath(project_dir)
    root = os.path.realpath(project)
    target = os.path.abspath(path)
    if not is_inside(target, project):
        return target, target
    current = project
    for part in os.path.relpath(target, project).split(os.sep):
        current = os.path.join(current, part)
        if os.path.islink(current):
            real = os.path.realpath(current)
            if not is_inside(real, root):
                return current, real
    return None


# The characters Claude Code keeps when it turns a session or list id into a file name (its ``[^a-zA-Z0-9_-]``
# → ``-``); the bytes serve ``bytes.translate``, which checks many names at once.
SAFE_NAME_CHARACTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-"
SAFE_NAME_BYTES = SAFE_NAME_CHARACTERS.encode("ascii")
_SAFE_NAME_SET = frozenset(SAFE_NAME_CHARACTERS)


def is_safe_name(text: str) -> bool:
    """True when ``safe_name`` leaves ``text`` as it is (the empty name included)."""
    return not text or (text.isascii() and text.replace("-", "a").replace("_", "a").isalnum())


def safe_name(text: str, utf16: bool = False) -> str:
    """``text`` with every character but ASCII letters, digits, ``_`` and ``-`` made a ``-``, by string methods (a
    hook that needs it should not import ``re``). ``utf16``: Claude Code's mapping from an id to a file name, whose
    JavaScript pattern (no ``u`` flag) matches UTF-16 code units, so a character beyond U+FFFF is two."""
    if is_safe_name(text):
        return text
    astral = "--" if utf16 else "-"
    return "".join(char if char in _SAFE_NAME_SET else astral if char > "\uffff" else "-" for char in text)


def _fnv1a64_from(value: int, text: str) -> int:
    for byte in text.encode("utf-8", "surrogatepass"):
        value = ((value ^ byte) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return value


# The hash state after the folder part of the last path hashed: the hook looks up the trust records of up to
# 100 anchors of one folder in a row, and a byte costs about 75 ns here.
_last_folder = ("", 0xCBF29CE484222325)


def _fnv1a64(text: str) -> int:
    """64-bit FNV-1a of ``text``'s UTF-8, resumed from the state after its folder when that folder was the last."""
    global _last_folder
    cut = text.rfind("/") + 1
    folder, value = _last_folder
    if text[:cut] != folder:
        folder = text[:cut]
        value = _fnv1a64_from(0xCBF29CE484222325, folder)
        _last_folder = (folder, value)
    return _fnv1a64_from(value, text[cut:])


# The last sanitised prefix: the anchors of one folder share their first 64 characters when its path is that long.
_last_prefix = ("", "")


def record_name(session_id: str) -> str:
    """A file name for a session id: itself when already safe, else a sanitised prefix plus a hash (no clashes)."""
    global _last_prefix
    if len(session_id) <= 100 and is_safe_name(session_id):
        return f"{session_id}.key"
    prefix = session_id[:64]
    if prefix != _last_prefix[0]:
        _last_prefix = (prefix, safe_name(prefix))
    return f"{_last_prefix[1]}-{_fnv1a64(session_id):016x}.key"


def any_anchors(project_dirs: list[str]) -> bool:
    """True when some project dir has an anchors folder (the anchor part has something to look at)."""
    return any(os.path.isdir(anchors_dir(folder)) for folder in project_dirs)


def any_kept_anchors(places: Places, session_id: str | None) -> bool:
    """True when this session wrote or adopted an anchor somewhere (one ``lstat``): a project whose anchors folder
    is gone (``git clean -fdx``) still gets the line that says so, and a session that never kept one pays nothing."""
    index = places.kept_index(session_id)
    return index is not None and os.path.lexists(index)


def any_state_file(project_dirs: list[str]) -> bool:
    """True when some project dir holds a work-state file (what the reader would open, symlinks followed)."""
    return any(os.path.isfile(state_path(folder)) for folder in project_dirs)


def any_work_state(project_dirs: list[str], places: Places, session_id: str | None) -> bool:
    """True when the work-state part may have something to do: a state file, or this session's record to reset.

    Without project dirs the state may sit in the user-level fallback location, so the answer is True.
    """
    if not project_dirs or any_state_file(project_dirs):
        return True
    records = places.records(project_dirs)
    if records is None or not session_id:
        return False
    return os.path.lexists(os.path.join(records, record_name(session_id)))
