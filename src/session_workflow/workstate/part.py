"""The work-state part of the SessionStart block, the note of what the mod delivered instead, and the one line
that names another session's state at a new session.

A work-state file has no trust record: one a repository ships (a clone gets a fresh mtime) must not have its
title and step put before the model with the advice to take it over. So the line gives ticket, title and step
only when the owner is a session of this machine: its transcript lies beside this session's, in Claude Code's own
folder, which no repository writes (one ``stat``). Any other state is named by its path alone.
"""

from __future__ import annotations

import os

from session_workflow.core import config
from session_workflow.core.locations import STATE_RELPATH, is_safe_name
from session_workflow.core.parts import Elsewhere, PreparedPart
from session_workflow.core.text import cut_code_points, duration_text, named, one_line, utf8_len, utf16_len
from session_workflow.workstate.records import DeliveryRecord
from session_workflow.workstate.section import (
    MAX_SECTION_BYTES,
    MAX_STEP_POINTS,
    WorkState,
    display_title,
    snapshot_key,
    ticket_label,
)
from session_workflow.workstate.state import foreign_state, owned_state, section_text, unreadable_state

TYPE_CHECKING = False
if TYPE_CHECKING:
    from session_workflow.core.context import HookContext

PATH_CAP = 300
UNREADABLE_NOTE = (
    "Work state: {path} is not a valid work state, so it was left out; fix it, or start afresh with"
    " `session-workflow state clear`."
)


class WorkStatePart(PreparedPart):
    """The section in the SessionStart block: all or nothing (it is small and its lines depend on each other)."""

    name = "work state"
    cap = MAX_SECTION_BYTES

    def __init__(self, text: str, key: str, record: DeliveryRecord | None) -> None:
        self.text = text
        self.key = key
        self.record = record
        self.floor = utf8_len(text)
        self.placed = False

    def render(self, budget: int) -> str:
        """The section when it fits the budget (UTF-8 bytes, never fewer than UTF-16 units), else nothing."""
        self.placed = self.floor <= budget
        return self.text if self.placed else ""

    def after_emit(self, emitted: bool) -> None:
        """Reset the per-session record: the block carried this snapshot, or the next prompt must deliver it."""
        if self.record is None:
            return
        if emitted and self.placed:
            self.record.store(self.key)
        else:
            self.record.forget()


class ForeignStatePart(PreparedPart):
    """One line naming a state another session owns, with the command that takes it over: never its section."""

    name = "work state"
    cap = MAX_SECTION_BYTES

    def __init__(self, text: str) -> None:
        self.text = text
        self.floor = utf8_len(text)

    def render(self, budget: int) -> str:
        return self.text if self.floor <= budget else ""


def age_words(age: float) -> str:
    """``updated 5 min ago`` (minutes under an hour, whole hours above), or that the mtime is ahead of the clock."""
    return "updated at a future time" if age < -60 else f"updated {duration_text(age)} ago"


def foreign_line(state: WorkState, age: float) -> str:
    """The line: the file's ticket, title and step as quoted one-line data, how old, and the adopt command."""
    step = cut_code_points(one_line(state.step), MAX_STEP_POINTS) or "(not set)"
    paused = ", paused" if state.paused else ""
    return (
        f"Work state of another session (its section is not given to this one): {ticket_label(state.ticket)}"
        f' "{display_title(state.title)}", step {step}{paused}, {age_words(age)}. If this session carries on with'
        " that ticket, take it over first: `session-workflow state adopt`."
    )


def stranger_line(path: str) -> str:
    """The line for a state no session of this machine is known to have written: its path, nothing of its text."""
    shown = named(path)
    shown = shown if utf16_len(shown) <= PATH_CAP else named(STATE_RELPATH)
    return (
        f"Work state not written by a session of this machine (not shown): {shown}; only if the user says it is"
        " theirs: `session-workflow state show`, then `session-workflow state adopt`."
    )


def written_here(ctx: HookContext, owner: str | None) -> bool:
    """True when ``owner`` is a session of this machine in this project: its transcript beside this session's."""
    transcript = ctx.transcript_path
    if not owner or not is_safe_name(owner) or not transcript or not os.path.isabs(transcript):
        return False
    return os.path.isfile(os.path.join(os.path.dirname(transcript), owner + ".jsonl"))


# Where a new session id starts with no work state of its own, so a state left by another session is named.
FOREIGN_SOURCES = ("startup", "clear")


def prepare_foreign(ctx: HookContext) -> PreparedPart | None:
    """The line for a state another session owns, at ``startup`` (when its file changed within the startup
    window: an older one is history, not a crash to recover from) and at ``clear``; None otherwise."""
    if ctx.source not in FOREIGN_SOURCES:
        return None
    loaded = foreign_state(ctx)
    if loaded is None:
        return None
    age = ctx.now - loaded.mtime
    if ctx.source == "startup" and age > ctx.places.hours(config.STARTUP_WINDOW_HOURS) * 3600:
        return None
    if not written_here(ctx, loaded.state.session):
        return ForeignStatePart(stranger_line(loaded.path))
    return ForeignStatePart(foreign_line(loaded.state, age))


class UnreadablePart(PreparedPart):
    """The one line naming a state file that is there but could not be read: the run knows its ticket is not
    shown, and where to look."""

    name = "work state"

    def __init__(self, path: str) -> None:
        shown = named(path)
        self.text = UNREADABLE_NOTE.format(path=shown if utf16_len(shown) <= PATH_CAP else named(STATE_RELPATH))
        self.cap = self.floor = utf8_len(self.text)

    def render(self, budget: int) -> str:
        return self.text if budget >= self.floor else ""


def unreadable_part(ctx: HookContext) -> UnreadablePart | None:
    """The line naming this session's project's broken state file, or None when there is none."""
    path = unreadable_state(ctx)
    return UnreadablePart(path) if path is not None else None


def note_mod_delivery(ctx: HookContext, record: bool) -> bool:
    """The mod delivers the section: say whether this session owns a work state, and (``record``) note the
    snapshot the mod puts in a new thread's system prompt, so UserPromptSubmit does not repeat it."""
    loaded = owned_state(ctx)
    delivery = DeliveryRecord.for_session(ctx) if record and not ctx.dry_run else None
    if delivery is not None:
        if loaded is None:
            delivery.forget()
        else:
            delivery.store(snapshot_key(loaded.state, False))
    return loaded is not None


def prepare(ctx: HookContext) -> PreparedPart | None:
    """The work-state part for SessionStart; without an owned state, the line naming a broken state file, else at a
    new session the line naming another session's state (``prepare_foreign``), else None; and the delivery record
    reset.

    The reset happens here because a part that says nothing gets no ``after_emit``: a new context without the
    section must let the next prompt deliver it, even if the same snapshot returns (adopted back, say).
    """
    record = DeliveryRecord.for_session(ctx)
    loaded = owned_state(ctx)
    text = section_text(loaded) if loaded is not None else None
    if loaded is None or not text:
        if record is not None and not ctx.dry_run:
            record.forget()
        return (unreadable_part(ctx) or prepare_foreign(ctx)) if loaded is None else None
    return WorkStatePart(text, snapshot_key(loaded.state, False), record)


def prepare_session_start(ctx: HookContext) -> PreparedPart | None:
    """The composer's factory: ``prepare``, or with the mod (which puts the section in a new thread's system
    prompt) ``Elsewhere`` when this session owns a state, else the line naming a broken or another session's state.

    A resumed thread keeps the system prompt it was first sent, so there the delivery is not recorded and the
    UserPromptSubmit hook still delivers any change.
    """
    if not ctx.mod_active:
        return prepare(ctx)
    if note_mod_delivery(ctx, record=ctx.source != "resume"):
        return Elsewhere("work state")
    return unreadable_part(ctx) or prepare_foreign(ctx)
