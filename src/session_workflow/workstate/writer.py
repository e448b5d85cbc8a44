"""The work-state writer: every change is a read-modify-write under the file's lock (``atomic.update_file``).

Each write also stores the section text and its snapshot key in the file, built by the one builder, so the mod
(which cannot run Python) and our hooks deliver the same text. Each write appends one line to a journal beside
the state (``work-state.log``: what changed, from what, by whom), under the same lock, so the history of steps
is complete and ordered. The line is written just before the state is replaced, whole or not at all, and a line
that cannot be written (a full disk, RLIMIT_FSIZE, a planted link) refuses the write: every change that lands is
journaled. A writer killed between the two leaves a journal line whose change never landed, and the next
line's ``was`` shows it.
"""

from __future__ import annotations

import json
import os
import time

from session_workflow.core import atomic
from session_workflow.core.boundedio import read_prefix
from session_workflow.core.folders import make_private
from session_workflow.core.gitignore import ensure_gitignore
from session_workflow.core.jsonlog import MAX_LOG_BYTES, append_record
from session_workflow.core.text import escaped
from session_workflow.workstate.section import FORMAT_VERSION, WorkState, section, snapshot_key, ticket_label
from session_workflow.workstate.state import MAX_STATE_BYTES, decode

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

DEFAULT_STEP = "start"
JOURNAL_NAME = "work-state.log"
# The journal is rotated to ``work-state.log.1`` past this size, so it stays within twice the bound.
MAX_JOURNAL_BYTES = MAX_LOG_BYTES


class WorkStateError(Exception):
    """A change that cannot be made (no state, another session's state, a corrupt file); one line."""


class Change:
    """A write's state before (None when there was none) and after."""

    __slots__ = ("after", "before")

    def __init__(self, before: WorkState | None, after: WorkState) -> None:
        self.before = before
        self.after = after


def timestamp(now: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(now))


def encode(state: WorkState, slug: str | None) -> bytes:
    """The file's bytes: the state in the fixed field order plus the non-orphaned section and its key."""
    document: dict[str, object] = {
        "version": FORMAT_VERSION,
        "map": state.map,
        "ticket": state.ticket,
        "title": state.title,
    }
    if state.url is not None:
        document["url"] = state.url
    document.update(
        step=state.step,
        paused=state.paused,
        auto=state.auto,
        session=state.session,
        updated_at=state.updated_at,
        section={"key": snapshot_key(state, False), "text": section(state, False, slug)},
    )
    return (json.dumps(document, ensure_ascii=False, indent=2) + "\n").encode("utf-8", "replace")


def _describe(state: WorkState | None) -> dict[str, object] | None:
    return None if state is None else {"ticket": state.ticket, "step": state.step, "paused": state.paused}


def journal_path(path: str) -> str:
    return os.path.join(os.path.dirname(os.path.abspath(path)), JOURNAL_NAME)


def _append_journal(
    path: str, op: str, owner: str | None, before: WorkState | None, after: WorkState | None, now: float
) -> None:
    """One JSON line per write; the caller holds the state's lock. Refuses the write when the line cannot land."""
    journal = journal_path(path)
    entry = {
        "at": timestamp(now),
        "op": op,
        "by": owner,
        "state": _describe(after),
        "was": _describe(before),
    }
    if not append_record(journal, entry, journal + ".1", MAX_JOURNAL_BYTES):
        raise WorkStateError(
            f"cannot append to the journal {escaped(journal)} (disk full?); the work state is unchanged"
        )


def _no_state(path: str) -> WorkStateError:
    return WorkStateError(f"no work state in {escaped(path)}; start one with `session-workflow state set`")


def _current(path: str, data: bytes | None, creates: bool) -> WorkState | None:
    """The state a change starts from; a write that does not create one refuses a missing or corrupt file."""
    decoded = decode(data) if data is not None else None
    if decoded is not None:
        return decoded[0]
    if creates:
        return None
    if data is None:
        raise _no_state(path)
    raise WorkStateError(f"{escaped(path)} is not a valid work state; fix it, or start afresh with `state clear`")


def write(
    path: str,
    op: str,
    owner: str | None,
    change: Callable[[WorkState | None], WorkState],
    *,
    slug: str | None,
    now: float,
    creates: bool = False,
    private: bool = False,
) -> Change:
    """Apply ``change`` to the current state under the lock and store the result with its section.

    ``change`` raises WorkStateError to refuse; the file is then untouched. Only a write that ``creates`` (``set``)
    starts from no state or overwrites a corrupt one; the others refuse before creating any folder or lock file.
    ``private``: the user state folder's file, whose missing folders are made the user's alone.
    """
    if not creates and not os.path.lexists(path):
        raise _no_state(path)
    folder = os.path.dirname(os.path.abspath(path))
    try:
        if private:  # the user state dir's, not a project's
            make_private(folder)
        else:
            os.makedirs(folder, exist_ok=True)
    except OSError as error:
        raise WorkStateError(f"cannot create {escaped(folder)}: {error.strerror or error}") from error
    ensure_gitignore(folder)
    result: list[Change] = []

    def transform(data: bytes | None) -> bytes:
        before = _current(path, data, creates)
        after = change(before)
        after.updated_at = timestamp(now)
        encoded = encode(after, slug)
        result.append(Change(before, after))
        _append_journal(path, op, owner, before, after, now)
        return encoded

    try:
        atomic.update_file(path, transform)
    except atomic.WriteError as error:
        raise WorkStateError(str(error)) from error
    except OSError as error:
        raise WorkStateError(f"cannot write {escaped(path)}: {error.strerror or error}") from error
    return result[0]


def _copy(state: WorkState) -> WorkState:
    return WorkState(**{name: getattr(state, name) for name in WorkState.__slots__})


def _owned(path: str, state: WorkState | None, owner: str) -> WorkState:
    """A copy of the state when ``owner`` holds it; refuse otherwise, saying what to do."""
    if state is None:
        raise _no_state(path)
    if state.session != owner:
        holder = f"session {state.session}" if state.session else "no session"
        raise WorkStateError(
            f"the work state ({ticket_label(state.ticket)}, step {state.step or '(not set)'}) belongs to {holder}, "
            "not this one; if that session is gone, claim it with `session-workflow state adopt`"
        )
    return _copy(state)


def set_ticket(
    path: str,
    owner: str,
    *,
    ticket: int | str,
    title: str,
    now: float,
    map_number: int | None = None,
    map_given: bool = False,
    url: str | None = None,
    step: str | None = None,
    auto: bool | None = None,
    slug: str | None = None,
    private: bool = False,
) -> Change:
    """Put a ticket in play for ``owner``: the same ticket is edited (options not given keep their values),
    another starts afresh (no map, step ``DEFAULT_STEP``, not paused, auto off, the GitHub URL derived).

    ``map_number`` None is a whiteboard ticket; it is applied only when ``map_given``. ``private``: the file is the
    user state folder's (no project), whose folders are made the user's alone (``core.folders.make_private``).
    """

    def change(before: WorkState | None) -> WorkState:
        if before is not None and before.ticket == ticket:
            state = _copy(before)
            state.title = title
        else:
            state = WorkState(ticket=ticket, title=title, step=DEFAULT_STEP)
            if slug is not None and isinstance(ticket, int):
                state.url = f"https://github.com/{slug}/issues/{ticket}"
        if map_given:
            state.map = map_number
        if url is not None:
            state.url = url
        if step is not None:
            state.step = step
        if auto is not None:
            state.auto = auto
        state.session = owner
        return state

    return write(path, "set", owner, change, slug=slug, now=now, creates=True, private=private)


def set_step(path: str, owner: str, step: str, *, slug: str | None, now: float) -> Change:
    def change(before: WorkState | None) -> WorkState:
        state = _owned(path, before, owner)
        state.step = step
        return state

    return write(path, "step", owner, change, slug=slug, now=now)


def set_paused(path: str, owner: str, paused: bool, *, slug: str | None, now: float) -> Change:
    def change(before: WorkState | None) -> WorkState:
        state = _owned(path, before, owner)
        state.paused = paused
        return state

    return write(path, "pause" if paused else "resume", owner, change, slug=slug, now=now)


def adopt(path: str, owner: str, *, slug: str | None, now: float) -> Change:
    """Claim a state left by another session (a /clear starts a new session id; the old one is orphaned)."""

    def change(before: WorkState | None) -> WorkState:
        if before is None:
            raise _no_state(path)
        state = _copy(before)
        state.session = owner
        return state

    return write(path, "adopt", owner, change, slug=slug, now=now)


def clear(path: str, owner: str | None, *, now: float) -> tuple[bool, WorkState | None]:
    """Remove the state whoever owns it (clearing is the way out of any state, a corrupt one included).

    Returns (whether there was a file, the state it held when valid).
    """
    if not os.path.lexists(path):
        return False, None
    try:
        with atomic.locked(path):
            if not os.path.lexists(path):
                return False, None
            read = read_prefix(path, MAX_STATE_BYTES + 1)
            decoded = decode(read[0]) if read is not None else None
            before = decoded[0] if decoded is not None else None
            _append_journal(path, "clear", owner, before, None, now)
            os.unlink(path)
    except atomic.WriteError as error:
        raise WorkStateError(str(error)) from error
    except OSError as error:
        raise WorkStateError(f"cannot clear {escaped(path)}: {error.strerror or error}") from error
    return True, before
