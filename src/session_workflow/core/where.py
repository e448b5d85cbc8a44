"""Which folder is the session's project: one rule for every hook, every CLI command and, ported once in
``hooks/mod/where.ts``, the mod (where Claude Code keeps the task list is ``core.places``').

The project is the folder Claude Code treats as the project. Measured on 2.1.332: that is the folder ``claude``
started in. It reads ``.claude/settings.json`` there and in no folder above (not at a ``.git`` root); it gives the
hooks that folder as ``CLAUDE_PROJECT_DIR``, over any settings ``env`` block, whatever subfolder the model ``cd``'d
into (the payload's ``cwd`` follows the ``cd``); it writes it as the first ``cwd`` of the session's transcript (a
``/clear`` too: the shell goes back there first). Its Bash tool gets no ``CLAUDE_PROJECT_DIR`` of its own, only
a settings ``env`` block's, a repository's included, which is why it is ignored there; but it gets
``CLAUDE_CODE_SESSION_ID``, which the engine sets over any env block, and that session's transcript (under
Claude Code's configuration folder, which no env block can move) names the folder. Os and string methods only:
the hooks run this.
"""

from __future__ import annotations

import os

from session_workflow.core.jsonload import loads
from session_workflow.core.locations import is_safe_name

TYPE_CHECKING = False
if TYPE_CHECKING:
    from session_workflow.core.places import Places

# How far from the top of a transcript we look for the first record that names a cwd.
START_DIR_SCAN_BYTES = 1 << 20
# How many project folders of Claude Code's the transcript search looks into when the slug does not find it.
MAX_PROJECT_DIRS = 10_000
MAX_SESSION_ID = 128


def _folder(path: str | None) -> str | None:
    return path if path and "\x00" not in path and os.path.isabs(path) and os.path.isdir(path) else None


def project_dir(
    places: Places, cwd: str | None, transcript_path: str | None = None, *, hook: bool = False
) -> str | None:
    """The session's project: ``CLAUDE_PROJECT_DIR`` in a hook (Claude Code's, set over any env block) or in a
    terminal (the user's own), never in the Bash tool; else the first ``cwd`` of the session's transcript
    (``transcript_path``, else the one ``CLAUDE_CODE_SESSION_ID`` names); else ``cwd``. Each counts only as an
    absolute path to an existing folder; None when none is."""
    given = _folder(places.project_variable(hook))
    if given:
        return given
    transcript = transcript_path or session_transcript(places, cwd)
    start = _folder(session_start_dir(transcript)) if transcript else None
    return start or _folder(cwd)


def command_project_dir(
    places: Places, cwd: str | None, transcript_path: str | None = None
) -> tuple[str | None, str | None]:
    """A CLI command's project (``project_dir``) and the one line that says why ``CLAUDE_PROJECT_DIR`` was ignored
    (or None): in the Bash tool a value came from a settings ``env`` block, a repository's one included, and would
    aim the writers at another project's anchors and work state."""
    return project_dir(places, cwd, transcript_path), places.ignored_project()


def session_start_dir(transcript_path: str) -> str | None:
    """The first ``cwd`` a transcript's records name, read from its top line by line (bad lines, one nested too deep
    for the parser among them, are skipped). Any failure leaves it unknown: every part of the block asks."""
    from session_workflow.core.boundedio import iter_lines_from_start  # a hook whose project is given never reads

    try:
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
    except Exception:
        return None
    return None


def project_slug(path: str) -> str:
    """Claude Code's folder name for a project under ``<config>/projects``: every UTF-16 unit but an ASCII letter or
    digit a ``-`` (its JavaScript pattern has no ``u`` flag); past 200 units (a folder name holds 255 bytes) the
    first 200 and ``-`` the base-36 magnitude of the path's 32-bit string hash (``h * 31 + unit``), as 2.1.332."""
    slug = "".join(char if char.isascii() and char.isalnum() else "--" if char > "\uffff" else "-" for char in path)
    if len(slug) <= 200:
        return slug
    units = path.encode("utf-16-le", "surrogatepass")
    value = 0
    for index in range(0, len(units), 2):
        value = (value * 31 + units[index] + (units[index + 1] << 8)) & 0xFFFFFFFF
    value = abs(value - (1 << 32) if value >= 1 << 31 else value)
    digits = ""
    while True:
        value, digit = divmod(value, 36)
        digits = "0123456789abcdefghijklmnopqrstuvwxyz"[digit] + digits
        if not value:
            return f"{slug[:200]}-{digits}"


def session_transcript(places: Places, cwd: str | None) -> str | None:
    """The transcript of the session ``CLAUDE_CODE_SESSION_ID`` names: under the slug of ``cwd`` or of a folder above
    it (Claude Code keeps its Bash tool's shell inside the project), else in any of Claude Code's project folders
    (a slug too long is cut and hashed). None without a session or a configuration folder."""
    session = places.session
    config = places.config
    if not session or len(session) > MAX_SESSION_ID or not is_safe_name(session) or config is None:
        return None
    projects = os.path.join(config, "projects")
    name = session + ".jsonl"
    folder = os.path.abspath(cwd) if cwd and os.path.isabs(cwd) and "\x00" not in cwd else None
    while folder:
        path = os.path.join(projects, project_slug(folder), name)
        if os.path.isfile(path):
            return path
        parent = os.path.dirname(folder)
        folder = parent if parent != folder else None
    try:
        with os.scandir(projects) as entries:
            for index, entry in enumerate(entries):
                path = os.path.join(entry.path, name)
                if index >= MAX_PROJECT_DIRS:
                    break
                if os.path.isfile(path):
                    return path
    except OSError:
        return None
    return None


def no_tasks_folder(root: str | None) -> bool:
    """True when Claude Code's task folder ``root`` (``Places.tasks_root``) is surely absent (nothing there, or a
    file on the way): no list, fork parent or predecessor can exist, and a hook need not even import the task store.
    False when it is there, when that cannot be told (the store then says what it can), or for None."""
    try:
        if root is not None:
            os.lstat(root)
    except (FileNotFoundError, NotADirectoryError):
        return True
    except (OSError, ValueError):
        pass  # cannot tell: the store's own reads find out and say so
    return False
