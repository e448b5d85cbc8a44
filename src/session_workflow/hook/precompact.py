"""PreCompact hook: ask the summariser to keep the pointers that let the next turn find its state again.

PreCompact cannot inject context, but Claude Code appends its plain stdout to the summariser's instructions.
SessionStart(compact) puts the full state back from disk a moment later; what the summary must not lose is
where that state lives and what comes next, so a model reading only the summary can still find its way.
"""

from __future__ import annotations

from session_workflow.core import locations
from session_workflow.core.text import cut_code_points, cut_utf16, escaped, one_line, utf16_len
from session_workflow.core.where import no_tasks_folder
from session_workflow.hook.io import run_hook, write_stdout

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence

    from session_workflow.core.context import HookContext
    from session_workflow.transcript.record import Scan
    from session_workflow.workstate.section import WorkState

MAX_CHARS = 600
TITLE_CHARS = 80
STEP_CHARS = 80
# Claude Code also copies a manual /compact's PreCompact output into the conversation, so the request says
# whom it is for and that the assistant has nothing to do about it.
LEAD = (
    "session-workflow, to the summariser only (nothing for the assistant to do): keep these verbatim in the"
    " summary; the plugin restores the state they name from disk after the compaction:\n"
)


def instructions(
    anchor: tuple[str, str | None] | None,
    ticket: WorkState | None,
    open_tasks: int,
    in_flight: Sequence[tuple[str, str]] = (),
    own: bool = True,
) -> str:
    """The request to the summariser, at most 600 characters, every value flattened to its one line. ``own``:
    the open tasks are this session's list, which TaskList shows; else another session's (a recovered list), which
    it does not.

    Empty when there is no state to keep. ``in_flight``: (kind, id) of the background shells and subagents
    started and not reported finished, named only with some state to keep (``transcript.record``).
    """
    lines = []
    if anchor is not None:
        from session_workflow.anchor.block import display_path
        from session_workflow.anchor.text import next_label_end

        path, next_action = anchor
        line = one_line(next_action or "")
        action = line[max(next_label_end(line), 0) :]
        shown = display_path(path)
        lines.append(f"- the control anchor file {shown}" + (f" and its next action: {action}" if action else ""))
    if ticket is not None:
        from session_workflow.workstate.section import ticket_label

        number = one_line(ticket_label(ticket.ticket))
        title = cut_code_points(one_line(ticket.title).replace('"', "'"), TITLE_CHARS)
        step = cut_code_points(one_line(ticket.step), STEP_CHARS)
        lines.append(f'- ticket {number} "{title}"' + (f" at step: {step}" if step else ""))
    if open_tasks and own:
        lines.append(f"- that {open_tasks} open task(s) persist on disk (TaskList shows them; they are not lost)")
    elif open_tasks:
        lines.append(f"- that {open_tasks} open task(s) of an earlier session persist on disk (not in TaskList yet)")
    if not lines:
        return ""
    if in_flight:  # second: the summary dispatching a live subagent again overwrites its output
        named = ", ".join(f"{kind} `{cut_code_points(escaped(task_id, '`'), 40)}`" for kind, task_id in in_flight)
        lines.insert(1, f"- the work still in flight, started and not reported finished (not to start again): {named}")
    text = LEAD
    for index, line in enumerate(lines):  # whole lines: a cut one would be a stub ("- th…") of another request
        piece = ("\n" if index else "") + line
        if utf16_len(text + piece) > MAX_CHARS:
            return text if index else text + cut_utf16(piece, MAX_CHARS - utf16_len(text))
        text += piece
    return text


def pre_compact(ctx: HookContext) -> None:
    """Hook handler: print the request when some state exists, else nothing. Each part's module is imported only
    where there is something on disk for it (SessionStart's presence checks, ``hook.compose``)."""
    folders = ctx.project_dirs()
    loaded = None
    if locations.any_work_state(folders, ctx.places, ctx.session_id):
        from session_workflow.workstate import state as workstate

        loaded = workstate.owned_state(ctx)
    open_tasks, own = 0, True
    if not no_tasks_folder(ctx.places.tasks_root):
        from session_workflow.tasks import store as tasks
        from session_workflow.tasks.render import HEADER_EXACT

        task_part = tasks.prepare(ctx)
        open_tasks = getattr(task_part, "open_count", 0) if task_part is not None else 0
        own = getattr(task_part, "header", HEADER_EXACT) == HEADER_EXACT  # a recovered list is not in TaskList
    anchored = locations.any_anchors(folders) or locations.any_kept_anchors(ctx.places, ctx.session_id)
    # The transcript is read only where there is state to keep: the work in flight is named only beside it.
    found = _run_record(ctx) if loaded or open_tasks or anchored else None
    stepped = found is not None and found.stepped
    anchor = None
    if anchored:
        from session_workflow.core import config

        if ctx.places.switch(config.ANCHOR_HOOKS):
            from session_workflow.anchor import part as anchor_part

            anchor = anchor_part.precompact_facts(ctx, stepped)
    in_flight = [(flight.kind, flight.task_id) for flight in found.flights] if found is not None else []
    text = instructions(anchor, loaded.state if loaded else None, open_tasks, in_flight, own)
    if text:
        write_stdout(text.encode("utf-8") + b"\n")


def _run_record(ctx: HookContext) -> Scan | None:
    """What the transcript says since the anchor's last write (whether it was a step, the work in flight); None
    without a transcript or with the run record switched off."""
    from session_workflow.core import config

    if not ctx.transcript_path or not ctx.places.switch(config.RUN_RECORD):
        return None
    from session_workflow.transcript.record import known_look, scan

    path = ctx.transcript_path
    return scan(path, "precompact", recall=lambda: known_look(ctx.places, ctx.session_id, path))


def main() -> None:
    """The PreCompact entry of hooks/hook.py."""
    run_hook(pre_compact, "PreCompact")
