"""The work-state part of the SessionStart block, and the note of what the mod delivered instead."""

from __future__ import annotations

from session_workflow.core.locations import STATE_RELPATH
from session_workflow.core.text import escaped, utf8_len, utf16_len
from session_workflow.hook.parts import PreparedPart
from session_workflow.workstate.records import DeliveryRecord
from session_workflow.workstate.section import MAX_SECTION_BYTES, snapshot_key
from session_workflow.workstate.state import owned_state, section_text, unreadable_state

TYPE_CHECKING = False
if TYPE_CHECKING:
    from session_workflow.hook.context import HookContext

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


class UnreadablePart(PreparedPart):
    """The one line naming a state file that is there but could not be read: the run knows its ticket is not
    shown, and where to look."""

    name = "work state"

    def __init__(self, path: str) -> None:
        shown = escaped(path)
        self.text = UNREADABLE_NOTE.format(path=shown if utf16_len(shown) <= PATH_CAP else STATE_RELPATH)
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
    """The work-state part for SessionStart; without an owned state, the line naming a broken state file or None,
    and the delivery record reset.

    The reset happens here because a part that says nothing gets no ``after_emit``: a new context without the
    section must let the next prompt deliver it, even if the same snapshot returns (adopted back, say).
    """
    record = DeliveryRecord.for_session(ctx)
    loaded = owned_state(ctx)
    text = section_text(loaded) if loaded is not None else None
    if loaded is None or not text:
        if record is not None and not ctx.dry_run:
            record.forget()
        return unreadable_part(ctx) if loaded is None else None
    return WorkStatePart(text, snapshot_key(loaded.state, False), record)
