"""The SessionStart parts: one registry entry each, in block order; the composer (``hook.compose``) names none.

An entry says everything the composer needs about its part: its name and the label a line standing for it uses,
the sources that get it, a cheap check that there is something on disk for it (``core`` only: its module is
imported only when the check says so, since every session start pays for these imports and most projects have no
anchors or work state), where its ``prepare(ctx)`` lives, the user option that switches it off (the block then
says so in one line), a note its module adds to the block's head and what the ledger keeps of its reading. A new
part is one entry here and its module. Each is named ``module:name`` and imported only when asked: a startup with
nothing to say loads none of them, not even the options (``core.config``).
"""

from __future__ import annotations

import sys

from session_workflow.core import locations
from session_workflow.core.where import no_tasks_folder

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    from session_workflow.core.config import Option
    from session_workflow.core.context import HookContext
    from session_workflow.core.parts import PreparedPart

    # (ctx, the session's project folders, whether an earlier part brought state back)
    Present = Callable[[HookContext, list[str], bool], bool]


def _imported(where: str) -> Any:
    """The function ``module:name`` names, its module imported now."""
    module, name = where.split(":")
    return getattr(__import__(module, fromlist=[name]), name)


class Part:
    """A registry entry: ``name``, ``label`` (the line that stands for the part when an earlier block holds it;
    the name when None), the ``sources`` that get it, ``present`` (the cheap check), ``prepare`` (``module:function``
    returning a ``PreparedPart`` or None), ``switch`` (``module:name`` of an option that switches the part off, and
    what the part shows, for the line that says so), ``note`` (``module:function`` giving one line for the
    block's head, or None; asked only when the part was prepared, so its module is loaded already) and ``facts``
    (``module:function`` giving what the ledger line keeps of the part's reading, or None; asked only when its
    module is loaded)."""

    __slots__ = ("facts", "label", "name", "note", "prepare", "present", "sources", "switch", "switch_label")

    def __init__(
        self,
        name: str,
        sources: tuple[str, ...],
        present: Present,
        prepare: str,
        *,
        label: str | None = None,
        switch: tuple[str, str] | None = None,
        note: str | None = None,
        facts: str | None = None,
    ) -> None:
        self.name = name
        self.label = label or name
        self.sources = sources
        self.present = present
        self.prepare = prepare
        self.switch = switch[0] if switch is not None else None
        self.switch_label = switch[1] if switch is not None else ""
        self.note = note
        self.facts = facts

    def load(self, ctx: HookContext) -> PreparedPart | None:
        """The part's ``prepare(ctx)``, its module imported now."""
        prepare: Callable[[HookContext], PreparedPart | None] = _imported(self.prepare)
        return prepare(ctx)

    def option(self) -> Option | None:
        """The option that switches the part off (its module imported now), or None."""
        if self.switch is None:
            return None
        option: Option = _imported(self.switch)
        return option

    def ledger_facts(self, ctx: HookContext) -> dict[str, object]:
        """What the ledger keeps of the part's reading, whether or not it had something to say: asked only when its
        module is loaded (its ``prepare`` ran), else nothing."""
        if self.facts is None or self.facts.split(":")[0] not in sys.modules:
            return {}
        facts: Callable[[HookContext], dict[str, object]] = _imported(self.facts)
        return facts(ctx)

    def head_note(self, ctx: HookContext) -> str | None:
        """The line the part adds to the block's head, or None."""
        if self.note is None:
            return None
        note: Callable[[HookContext], str | None] = _imported(self.note)
        return note(ctx)


def prepare_tasks(ctx: HookContext) -> PreparedPart | None:
    """The task part; a fork's parent (``hook.pending``) is looked up only when this session has no list."""
    from session_workflow.tasks.store import prepare

    def parent() -> str | None:
        if ctx.source not in FORK_THREAD_SOURCES:  # a startup or a clear never continues a fork's thread
            return None
        from session_workflow.hook.pending import fork_parent_session

        return fork_parent_session(ctx)

    return prepare(ctx, parent)


def run_record_present(ctx: HookContext, _folders: list[str], restored: bool) -> bool:
    """The run record rides with restored state only, and a user option switches it off (``RUN_RECORD``)."""
    if not restored:
        return False
    from session_workflow.core import config

    return ctx.places.switch(config.RUN_RECORD)


# Sources whose session may continue a fork's thread: the fork itself, and its later compactions and resumes.
FORK_THREAD_SOURCES = ("fork", "compact", "resume")
ALL_SOURCES = ("compact", "resume", "startup", "clear", "fork")
# The parts, in block order. /clear starts a new session id, so its work state belongs to the session that was
# cleared away: as at startup, that work state is named in one line with the command that takes it over. A clear
# gets no task block and no task hint, whatever the stores hold (the task spec: "`clear` and every other source:
# emit nothing"): the user asked for a clean slate, and the cleared session's transcript, which the predecessor
# lookup needs, is written only after the hook starts. --fork-session (measured on 2.1.332) carries the
# conversation under a new session id whose task list starts empty, while the work state stays owned by the
# session it was forked from, which may still be running: no work state, the parent's open tasks as the recovered
# list, and ``hook.compose.FORK_NOTE``. Any other source gets nothing at all. Without Claude Code's task folder
# no list, parent or predecessor can exist: the task store is not even imported. The anchor part is looked at when an
# anchors folder is there, or when this session keeps an anchor that may be gone with its folder. The user's
# quoted words (recovery) and the run record ride along with restored state only: a session with no anchor, tasks
# or work state at all gets zero bytes (Claude Code's own summary already covers what was said).
PARTS: tuple[Part, ...] = (
    Part(
        "work state",
        ("compact", "resume", "startup", "clear"),
        lambda ctx, folders, _restored: locations.any_work_state(folders, ctx.places, ctx.session_id),
        "session_workflow.workstate.part:prepare_session_start",
        label="Work state",
        note="session_workflow.workstate.records:delivery_note",
    ),
    Part(
        "anchor",
        ALL_SOURCES,
        lambda ctx, folders, _restored: (
            locations.any_anchors(folders) or locations.any_kept_anchors(ctx.places, ctx.session_id)
        ),
        "session_workflow.anchor.part:prepare",
        label="Control anchor",
        switch=("session_workflow.core.config:ANCHOR_HOOKS", "control anchor"),
    ),
    Part(
        "tasks",
        ("compact", "resume", "startup", "fork"),
        lambda ctx, _folders, _restored: not no_tasks_folder(ctx.places.tasks_root),
        "session_workflow.hook.parts:prepare_tasks",
        label="Task list",
    ),
    Part(
        "run record",
        ("compact", "resume"),
        run_record_present,
        "session_workflow.transcript.record:prepare",
        facts="session_workflow.transcript.record:look_facts",
    ),
    Part(
        "recovery",
        ("compact",),
        lambda _ctx, _folders, restored: restored,
        "session_workflow.transcript.recovery:prepare",
    ),
)
