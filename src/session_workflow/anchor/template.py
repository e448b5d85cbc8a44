"""The new anchor's template (what ``anchor new`` writes into each section) and the rule that tells an anchor whose
HEAD still holds only that template: created, never filled.

Such an anchor says nothing the run wrote: its HEAD is the template's prompts, HTML comments a reader would
otherwise take as the cursor or the next action. The hook injects one line for it instead (``block``).
"""

from __future__ import annotations

from session_workflow.anchor.text import section_body_lines
from session_workflow.core.text import escaped, shell_command, shell_quote

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Callable

    from session_workflow.anchor.text import AnchorText

# The HEAD in survival order (the hook spends its budget top-down on whole sections), each with what goes there.
HEAD_SECTIONS: tuple[tuple[str, str], ...] = (
    (
        "Mission",
        "The goal in a sentence or two and the hard constraints. Quote every user instruction that constrains"
        " the mechanism word for word with an id (U1, U2, ...); a reversal is quoted too and names what it replaces.",
    ),
    (
        "Cursor",
        "Done / in progress / the NEXT ACTION on resume: one imperative step and the precondition to check"
        ' before it; a pending question to re-ask verbatim. `anchor step` adds "- Step N: ..." lines here,'
        " newest first.",
    ),
    ("Resume steps", ""),  # filled in with absolute paths by ``resume_steps``
    (
        "Invariants",
        "Decisions and constraints that hold for the whole run, so a fresh context does not reopen them.",
    ),
    (
        "Parallel tracks",
        "Only when a peer run shares these trees: its anchor's path and the surface this track never touches.",
    ),
    (
        "In-flight work",
        "Background jobs the cursor waits on: ids, log paths, and 'do not relaunch over the same output'.",
    ),
    (
        "Last-known-good",
        "The recoverable state: commit hashes, branches and PRs, tags, files written, the checkpoint reached.",
    ),
    (
        "Plan pointer",
        "Where the full plan lives (a path), so this file stays a cursor and not a second copy of the plan.",
    ),
)
TAIL_SECTIONS: tuple[tuple[str, str], ...] = (
    ("Decisions log", "Append-only: why the non-obvious calls were made (date, decision, reason)."),
    ("Folded history", "Closed phases and finished cursor entries, one line each, moved here to keep the HEAD small."),
)
RESUME_HEADING = "Resume steps"
# The three resume steps as (how the line starts, how it ends): the paths between are the anchor's own.
_PRINT_LEAD = "1. Print this anchor: `"
_RESUME_LINES = (
    (
        _PRINT_LEAD + "session-workflow anchor show ",
        "` (`--all` adds the TAIL; never Read or cat it, which Claude Code re-attaches whole after each compaction).",
    ),
    ("2. Check the durable state before trusting the cursor: ", "; where they disagree, they win."),
    (
        "3. Continue from the Cursor's newest entry: verify its precondition first, so a half-done step is"
        " finished, not redone.",
        "",
    ),
)
_TEMPLATE_HEADINGS = frozenset(heading for heading, _prompt in HEAD_SECTIONS)
_TEMPLATE_PROMPTS = frozenset(f"<!-- {prompt} -->" for _heading, prompt in HEAD_SECTIONS if prompt)


def _git_check(git_root: str, word: Callable[[str], str]) -> str:
    """Step 2's middle: the two git commands on ``git_root`` as ``word`` writes it."""
    log = " ".join(("git", "-C", word(git_root), "log", "--oneline", "-10"))
    status = " ".join(("git", "-C", word(git_root), "status", "--short"))
    return f"`{log}` and `{status}`, then the artifacts named in Last-known-good"


def resume_steps(anchor_path: str, project_dir: str, git_root: str | None) -> list[str]:
    """Resume steps in absolute paths: they run after a restart, wherever the shell happens to be. Every command
    is ``shell_command``'s, so a folder named ``shop;touch X;#`` or ``My Shop`` is one argument, never a command."""
    check = (
        _git_check(git_root, shell_command)
        if git_root
        else f"the artifacts named in Last-known-good (under {escaped(project_dir)})"
    )
    (_start, print_end), (check_start, check_end), (last, _none) = _RESUME_LINES
    show = shell_command("session-workflow", "anchor", "show", anchor_path)
    return [f"{_PRINT_LEAD}{show}{print_end}", f"{check_start}{check}{check_end}", last]


def requoted_resume(text: str, git_root: str) -> str:
    """``text`` with the Resume step 2 that earlier writers wrote for ``git_root`` (the folder unquoted in both git
    commands) replaced by today's quoted one: the next write mends an old anchor, and changes nothing else."""
    (_print, _end), (check_start, check_end), _last = _RESUME_LINES
    old = f"{check_start}{_git_check(git_root, str)}{check_end}"
    if shell_quote(git_root) == git_root or old not in text:
        return text
    new = f"{check_start}{_git_check(git_root, shell_command)}{check_end}"
    lines = text.split("\n")
    return "\n".join(new + line[len(old) :] if line.rstrip("\r") == old else line for line in lines)


def _template_resume(body: list[str]) -> bool:
    """Whether a Resume steps section holds just the template's three steps (any paths in them)."""
    return len(body) == len(_RESUME_LINES) and all(
        line.startswith(start) and line.endswith(end) and len(line) >= len(start) + len(end)
        for line, (start, end) in zip(body, _RESUME_LINES)
    )


def is_unfilled(anchor: AnchorText) -> bool:
    """True when the HEAD holds nothing but the template: ``format: anchor/…`` frontmatter and, below it, only the
    template's own headings, each with nothing but its prompt (or the writer's three resume steps), and at most
    one level-1 title with nothing under it.

    Exact on purpose: any line the run wrote (a cursor step, a word under a heading, a heading of its own, an
    edited prompt or resume step) makes the anchor filled, shown as usual; a cut read never counts as unfilled.
    """
    if anchor.truncated or "<!--" not in anchor.head:
        return False
    if not anchor.frontmatter.get("format", "").lower().startswith("anchor/"):
        return False
    titles = 0
    for section in anchor.sections:
        body = section_body_lines(section)
        if section.heading is None:
            if section.label != "(frontmatter)":
                return False
        elif section.level == 1:
            titles += 1
            if body or titles > 1:
                return False
        elif section.level != 2 or section.heading not in _TEMPLATE_HEADINGS:
            return False
        elif section.heading == RESUME_HEADING:
            if not _template_resume(body):
                return False
        elif not _TEMPLATE_PROMPTS.issuperset(body):
            return False
    return True
