"""PreCompact hook: ask the summariser to keep the pointers that let the next turn find its state again.

PreCompact cannot inject context, but Claude Code appends its plain stdout to the summariser's instructions.
SessionStart(compact) puts the full state back from disk a moment later; what the summary must not lose is
where that state lives and what comes next, so a model reading only the summary can still find its way.
"""

from __future__ import annotations

from session_workflow import anchor_part, tasks, workstate
from session_workflow.hookio import run_hook, write_stdout
from session_workflow.textutil import cut_code_points, cut_utf16, one_line

TYPE_CHECKING = False
if TYPE_CHECKING:
    from session_workflow.context import HookContext

MAX_CHARS = 600
TITLE_CHARS = 80
STEP_CHARS = 80


def instructions(anchor: tuple[str, str | None] | None, ticket: tuple[str, str, str] | None, open_tasks: int) -> str:
    """The request to the summariser, at most 600 characters; empty when there is no state to keep."""
    lines = []
    if anchor is not None:
        path, next_action = anchor
        lines.append(f"- the control anchor file {one_line(path)}" + (f" and its next action: {next_action}" if next_action else ""))
    if ticket is not None:
        number, title, step = ticket
        lines.append(f'- ticket {number} "{title}" at step: {step}' if step else f'- ticket {number} "{title}"')
    if open_tasks:
        lines.append(f"- that {open_tasks} open task(s) persist on disk (TaskList shows them; they are not lost)")
    if not lines:
        return ""
    text = "session-workflow: keep these verbatim in the summary; the state they name is restored from disk:\n"
    return cut_utf16(text + "\n".join(lines), MAX_CHARS)


def pre_compact(ctx: HookContext) -> None:
    """Hook handler: print the request when some state exists, else nothing."""
    # PreCompact precedes SessionStart(compact) of the same session: look where that will look.
    ctx.source = "compact"
    loaded = workstate.owned_state(ctx)
    ticket = None
    if loaded is not None:
        state = loaded.state
        number = f"#{state.ticket}" if isinstance(state.ticket, int) else one_line(str(state.ticket))
        title = cut_code_points(one_line(state.title).replace('"', "'"), TITLE_CHARS)
        ticket = (number, title, cut_code_points(one_line(state.step), STEP_CHARS))
    task_part = tasks.prepare(ctx)
    open_tasks = getattr(task_part, "open_count", 0) if task_part is not None else 0
    text = instructions(anchor_part.precompact_facts(ctx), ticket, open_tasks)
    if text:
        write_stdout(text.encode("utf-8") + b"\n")


def main() -> None:
    """Entry point of hooks/pre_compact.py."""
    run_hook(pre_compact)
