"""UserPromptSubmit hook: deliver the work-state section once per snapshot, between session starts.

It runs on every prompt, so the common path is a stat (no state) or two tiny reads (the state and this
session's delivery record). A step change keeps the snapshot key, so it delivers nothing: the conversation
carries steps, and the section names the command that prints the live one. When the mod is loaded, SessionStart
records the snapshot the mod put in the new thread's system prompt, so this hook delivers only what changed since
(a thread keeps its first system prompt until the next compaction, through --resume too). A state file deleted
mid-thread (``git clean -fdx``) is said gone once, while the thread still holds its snapshot.
"""

from __future__ import annotations

from session_workflow.core.locations import any_state_file, any_work_state
from session_workflow.hook.io import hook_json, run_hook, write_stdout

TYPE_CHECKING = False
if TYPE_CHECKING:
    from session_workflow.core.context import HookContext

# Said when this thread already holds an older snapshot: with the mod, in its system prompt, which Claude Code
# keeps as first sent until the next compaction; without it, in an earlier block of the conversation.
SUPERSEDES = (
    "session-workflow: the work state changed; this snapshot supersedes the one in the system prompt"
    " (or earlier in this conversation) until the next compaction refreshes it."
)


# Said once when this thread holds a snapshot (the session's delivery record says so) whose state file is gone
# (deleted, ``git clean -fdx``): the system prompt keeps the section until the next compaction (issue 40).
GONE = (
    "session-workflow: the work state is gone (its file was deleted, e.g. by `git clean -fdx`): the work-state"
    " snapshot in the system prompt (or earlier in this conversation) no longer holds; no ticket is in play until"
    " `session-workflow state set`."
)


def prompt_submit(ctx: HookContext) -> None:
    """Emit the section as additionalContext when its snapshot key differs from the one last delivered.

    Most projects have no work state: that is decided from the payload and a stat per project dir, before the
    reader (and ``json``, ``re``) is imported.
    """
    if not ctx.session_id:
        return
    folders = ctx.project_dirs()
    if folders and not any_state_file(folders):
        if any_work_state(folders, ctx.places, ctx.session_id):  # no state file, but this session's record: gone
            state_gone(ctx)
        return
    from session_workflow.workstate import state as workstate
    from session_workflow.workstate.records import DeliveryRecord
    from session_workflow.workstate.section import snapshot_key

    loaded = workstate.owned_state(ctx)
    if loaded is None:
        return
    record = DeliveryRecord.for_session(ctx)
    key = snapshot_key(loaded.state, False)
    if record is None or record.holds(key):
        return
    text = workstate.section_text(loaded)
    if text and record.holds_any():
        text = SUPERSEDES + "\n" + text
    if text and write_stdout(hook_json("UserPromptSubmit", text)):
        record.store(key)


def state_gone(ctx: HookContext) -> None:
    """Say once that the snapshot this thread holds names a state that is gone, and drop the session's record."""
    from session_workflow.workstate.records import DeliveryRecord

    record = DeliveryRecord.for_session(ctx)
    if record is not None and record.holds_any() and write_stdout(hook_json("UserPromptSubmit", GONE)):
        record.forget()


def main() -> None:
    """The UserPromptSubmit entry of hooks/hook.py."""
    run_hook(prompt_submit, "UserPromptSubmit")
