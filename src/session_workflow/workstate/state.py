"""The work state on the hook path: find and read the state file, decide ownership, derive the repo slug.

Hot path: bounded reads, no locks (the writer replaces the file atomically, so a read sees the old or the new
state). A state owned by another
session is orphaned here: it is never delivered, and at a new session (``foreign_state``) only named.
"""

from __future__ import annotations

import os

from session_workflow.core.boundedio import read_prefix, read_prefix_and_stat, read_text_prefix
from session_workflow.core.jsonload import loads
from session_workflow.core.locations import resolves_inside, state_path
from session_workflow.core.text import utf8_len
from session_workflow.workstate.section import (
    MAX_SECTION_BYTES,
    WorkState,
    parse_state,
    repo_slug,
    section,
    slug_of_issue_url,
    snapshot_key,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from session_workflow.core.context import HookContext
    from session_workflow.core.places import Places

# The writer's files are a few hundred bytes; a larger one is not ours to trust (the mod applies the same bound).
MAX_STATE_BYTES = 64 * 1024
MAX_GIT_FILE_BYTES = 64 * 1024
MAX_ANCESTORS = 64

# Compiled on first use (re caches them): only a rebuild reads the git config.
_CONFIG_SECTION = r'\s*\[\s*([A-Za-z0-9.-]+)(?:\s+"((?:[^"\\]|\\.)*)")?\s*\]'
_CONFIG_URL = r"(?i)\s*url\s*=(.*)"


def fallback_state_path(places: Places) -> str | None:
    """Where the state lives when there is no project dir at all."""
    folder = places.state
    return os.path.join(folder, "work-state.json") if folder else None


class LoadedState:
    """A trusted state read from ``path``, with the section text and key the writer stored beside it and the file's
    mtime (when the writer last wrote it)."""

    __slots__ = ("mtime", "path", "project_dir", "state", "stored_key", "stored_text")

    def __init__(
        self,
        path: str,
        project_dir: str | None,
        state: WorkState,
        stored_key: str | None,
        stored_text: str | None,
        mtime: float = 0.0,
    ) -> None:
        self.mtime = mtime
        self.path = path
        self.project_dir = project_dir
        self.state = state
        self.stored_key = stored_key
        self.stored_text = stored_text


def decode(data: bytes) -> tuple[WorkState, str | None, str | None] | None:
    """(state, stored key, stored section text) from a state file's bytes; None unless it is a valid state.

    A stored section that is malformed, blank or over the byte bound is ignored (the reader rebuilds it).
    """
    if len(data) > MAX_STATE_BYTES:
        return None
    try:
        document = loads(data)
    except (ValueError, RecursionError):
        return None
    state = parse_state(document)
    if state is None or not isinstance(document, dict):
        return None
    stored = document.get("section")
    key = stored.get("key") if isinstance(stored, dict) else None
    text = stored.get("text") if isinstance(stored, dict) else None
    if not (isinstance(key, str) and key and isinstance(text, str) and text.strip()):
        return state, None, None
    if utf8_len(text) > MAX_SECTION_BYTES:
        return state, None, None
    return state, key, text


def load(path: str, project_dir: str | None) -> LoadedState | None:
    """Read one state file, bounded; None when it is absent, not a regular file, too large or invalid."""
    read = read_prefix_and_stat(path, MAX_STATE_BYTES + 1)
    if read is None:
        return None
    decoded = decode(read[0])
    if decoded is None:
        return None
    return LoadedState(path, project_dir, *decoded, mtime=read[1].st_mtime)


def _candidates(ctx: HookContext) -> list[tuple[str, str | None]]:
    dirs = ctx.project_dirs()
    if dirs:
        return [(state_path(folder), folder) for folder in dirs]
    fallback = fallback_state_path(ctx.places)
    return [(fallback, None)] if fallback else []


def _states(ctx: HookContext) -> list[LoadedState]:
    """Every valid state in ``ctx.project_dirs()`` order; one reached through a symlink out of its project is not
    read."""
    found: list[LoadedState] = []
    for path, project_dir in _candidates(ctx):
        if project_dir is not None and not resolves_inside(path, project_dir):
            continue
        if project_dir is None and ctx.places.foreign(os.path.dirname(path)) is not None:
            continue  # the user state dir's state, in a folder another user could have filled
        loaded = load(path, project_dir)
        if loaded is not None:
            found.append(loaded)
    return found


def owned_state(ctx: HookContext) -> LoadedState | None:
    """The first state, in ``ctx.project_dirs()`` order, that this session owns; others are orphaned here."""
    if not ctx.session_id:
        return None
    return next((loaded for loaded in _states(ctx) if loaded.state.session == ctx.session_id), None)


def foreign_state(ctx: HookContext) -> LoadedState | None:
    """The first state another session (or none) owns, when this session owns none: what a new session names."""
    states = _states(ctx)
    if any(ctx.session_id and loaded.state.session == ctx.session_id for loaded in states):
        return None
    return next((loaded for loaded in states if loaded.state.session != ctx.session_id), None)


def unreadable_state(ctx: HookContext) -> str | None:
    """The first state file, in ``ctx.project_dirs()`` order, that is there but is not a valid state (cut short,
    edited into something else): the block names it, as ``state show`` does, rather than drop it without a word."""
    for path, project_dir in _candidates(ctx):
        if project_dir is not None and not resolves_inside(path, project_dir):
            continue
        if project_dir is None and ctx.places.foreign(os.path.dirname(path)) is not None:
            continue  # the user state dir's state, in a folder another user could have filled
        read = read_prefix(path, MAX_STATE_BYTES + 1)
        if read is not None and decode(read[0]) is None:
            return path
    return None


def section_text(loaded: LoadedState) -> str | None:
    """The section as the state's own fields build it.

    The stored text saves a git read only when it is exactly what the fields give (with the links the writer
    derived, or none), so a hand-edited file cannot put words of its own into the block; otherwise the section is
    rebuilt with the slug of the origin remote.
    """
    state = loaded.state
    if loaded.stored_text is not None and loaded.stored_key == snapshot_key(state, False):
        for slug in {slug_of_issue_url(state.url), None}:
            if loaded.stored_text == section(state, False, slug):
                return loaded.stored_text
    slug = origin_slug(loaded.project_dir) if loaded.project_dir else None
    return section(state, False, slug)


def _git_dir_of(folder: str) -> str | None:
    """The git dir of a work tree root: ``.git`` itself, or where a ``gitdir:`` file (worktree, submodule) points."""
    dot_git = os.path.join(folder, ".git")
    if os.path.isdir(dot_git):
        return dot_git
    read = read_text_prefix(dot_git, MAX_GIT_FILE_BYTES)
    if read is None or not read[0].startswith("gitdir:"):
        return None
    target = read[0][len("gitdir:") :].strip()
    return os.path.normpath(os.path.join(folder, target)) if target else None


def git_config_path(start: str) -> str | None:
    """The config file of the repository holding ``start`` (a linked worktree's shared one via ``commondir``)."""
    folder = os.path.abspath(start)
    for _ in range(MAX_ANCESTORS):
        if os.path.lexists(os.path.join(folder, ".git")):
            git_dir = _git_dir_of(folder)
            if git_dir is None:
                return None
            common = read_text_prefix(os.path.join(git_dir, "commondir"), MAX_GIT_FILE_BYTES)
            if common is not None and common[0].strip():
                git_dir = os.path.normpath(os.path.join(git_dir, common[0].strip()))
            return os.path.join(git_dir, "config")
        parent = os.path.dirname(folder)
        if parent == folder:
            return None
        folder = parent
    return None


def _config_value(raw: str) -> str:
    """A git config value: quotes removed, a ``#``/``;`` comment outside quotes dropped, outer blanks trimmed."""
    chars: list[str] = []
    quoted = False
    escaped = False
    for char in raw:
        if escaped:
            chars.append(char)
            escaped = False
        elif char == "\\":
            escaped = True
        elif char == '"':
            quoted = not quoted
        elif char in "#;" and not quoted:
            break
        else:
            chars.append(char)
    return "".join(chars).strip()


def origin_url(config_text: str) -> str | None:
    """The first ``url`` of ``[remote "origin"]`` in a git config's text."""
    import re  # only when a section is rebuilt from the git config

    in_origin = False
    for line in config_text.splitlines():
        header = re.match(_CONFIG_SECTION, line)
        if header is not None:
            in_origin = header.group(1).lower() == "remote" and header.group(2) == "origin"
            continue
        entry = re.match(_CONFIG_URL, line) if in_origin else None
        if entry is not None:
            return _config_value(entry.group(1))
    return None


def origin_slug(project_dir: str) -> str | None:
    """``owner/name`` of the project's GitHub origin, read from the git config without a subprocess; None on
    any failure (the section then goes without links)."""
    config = git_config_path(project_dir)
    read = read_text_prefix(config, MAX_GIT_FILE_BYTES) if config else None
    return repo_slug(origin_url(read[0])) if read else None
