"""``session-workflow anchor new | step | write | adopt | close``: the writers' verbs and their handlers.

The writing itself is ``anchor.writer``'s; this module parses, picks the project and the session, and prints.
``cli.anchor`` imports it only when a writer verb (or the whole group's help) is asked for.
"""

from __future__ import annotations

import os
import sys
import time

from session_workflow.anchor.report import head_fit_report, resolve_folder, show_anchor, stale_paths
from session_workflow.anchor.text import mv_command
from session_workflow.anchor.writer import (
    MAX_STDIN_BYTES,
    Refusal,
    adopt_anchor,
    close_anchor,
    create_anchor,
    default_project_dir,
    open_anchor_path,
    rename_closed,
    restore_anchor,
    restore_path,
    step_anchor,
    write_anchor,
)
from session_workflow.core.locations import ANCHORS_SUBDIR, SESSION_ENV
from session_workflow.core.text import escaped, one_line
from session_workflow.workstate.section import is_session_id

TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse
    from collections.abc import Sequence

    from session_workflow.cli.parser import OneLineParser, Verb
    from session_workflow.core.places import Places


def _project_dir(option: str | None, places: Places) -> str:
    """The ``--dir`` value as a project directory; an anchors folder itself (as ``list`` accepts) is taken too."""
    if option is None:
        return default_project_dir(places, os.getcwd())
    if not os.path.isdir(option):
        raise Refusal(f"--dir {escaped(option)}: no such directory")
    directory = os.path.abspath(option)
    if directory.endswith(os.sep + ANCHORS_SUBDIR):
        return os.path.dirname(os.path.dirname(directory))
    return directory


def _fit_lines(path: str) -> list[str]:
    """The head-fit lines worth seeing after every write: the size verdict, any drops, any warnings."""
    lines, code = head_fit_report(path)
    if code:
        return []
    return [
        line
        for line in lines
        if line.startswith(("HEAD:", "warning:")) or (line.startswith("would drop:") and not line.endswith(": nothing"))
    ]


def _session(args: argparse.Namespace, places: Places) -> str | None:
    """The session that keeps what this command writes: ``--session``, else the Bash tool's session id."""
    if args.session is not None:
        if not is_session_id(args.session):
            raise Refusal("--session: a session id is 1-256 visible ASCII characters")
        return str(args.session)
    given = places.session
    return given if is_session_id(given) else None


def _run_new(args: argparse.Namespace, places: Places) -> int:
    task = one_line(args.task)
    if not task:
        raise Refusal("--task is empty: name the run's task in a few words")
    path = create_anchor(_project_dir(args.dir, places), task, time.time(), places, _session(args, places))
    print(escaped(path))
    return 0


def _run_step(args: argparse.Namespace, places: Places) -> int:
    path = open_anchor_path(args.file)
    previous, step = step_anchor(path, args.text, places, _session(args, places), time.time())
    print(f"step {previous} -> {step}  {escaped(path)}")
    for line in _fit_lines(path):
        print(line)
    return 0


def _run_write(args: argparse.Namespace, places: Places) -> int:
    path = open_anchor_path(args.file)
    if sys.stdin is None or sys.stdin.isatty():
        raise Refusal("write reads the whole anchor from stdin; pipe it in with a heredoc")
    data = sys.stdin.buffer.read(MAX_STDIN_BYTES + 1)
    if len(data) > MAX_STDIN_BYTES:
        raise Refusal(f"stdin is larger than {MAX_STDIN_BYTES} bytes; an anchor is a cursor, not a transcript")
    step = write_anchor(path, data, places, _session(args, places), time.time(), args.force)
    print(f"wrote {escaped(path)} (step {step})")
    for line in _fit_lines(path):
        print(line)
    return 0


def _run_close(args: argparse.Namespace, places: Places) -> int:
    if args.stale:
        if args.file is not None or args.outcome is not None:
            raise Refusal("close --stale takes no FILE and no --outcome")
        return _close_stale(_project_dir(args.dir, places), args.yes, places)
    if args.file is None or args.outcome is None:
        raise Refusal('close needs FILE --outcome "..." (or --stale)')
    if args.yes or args.dir is not None:
        raise Refusal("--yes and --dir go with close --stale")
    path = open_anchor_path(args.file)
    print(f"closed {escaped(path)} -> {escaped(close_anchor(path, args.outcome, time.time(), places))}")
    return 0


def _run_adopt(args: argparse.Namespace, places: Places) -> int:
    paths = [open_anchor_path(file) for file in args.files]
    session = _session(args, places)
    for path in paths:
        adopt_anchor(path, places, session, time.time())
        print(f"adopted {escaped(path)}: the hooks now inject its HEAD (until it changes outside the writers)")
    return 0


def _run_restore(args: argparse.Namespace, places: Places) -> int:
    path = restore_path(args.file)
    restored = restore_anchor(path, places, _session(args, places), time.time(), args.force)
    step = f"step {restored.step}" if restored.step is not None else "the last version written here"
    if not restored.written:
        print(f"{escaped(path)} is already {step}, as this machine's writers left it: nothing to restore")
    else:
        print(
            f"restored {escaped(path)} ({step}){'' if restored.whole else ', its HEAD only: the file was over 64 KiB'}"
        )
        if restored.kept is not None:
            print(f"the changed file it replaced is kept as {escaped(restored.kept)}")
    # The run continues from it in this very turn: the block that named the gone anchor had no cursor to give.
    lines, code = show_anchor(path, False, time.time(), places)
    if not code:
        print("\n".join(lines))
    return 0


def _close_stale(directory: str, yes: bool, places: Places) -> int:
    paths = stale_paths(directory, places)
    if not paths:
        print(f"no open anchor in {escaped(resolve_folder(directory, places))} is marked done in its content")
        return 0
    if not yes:
        for path in paths:
            print(mv_command(path))
        print(
            f"# {len(paths)} rename(s) shown, none done: run `session-workflow anchor close --stale --yes` to do them"
        )
        return 0
    for path in paths:
        print(f"closed {escaped(path)} -> {escaped(rename_closed(path, places))}")
    return 0


def _session_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--session", help=f"the session that keeps this anchor (default: ${SESSION_ENV})")


def _setup_new(parser: OneLineParser, _argv: Sequence[str]) -> None:
    parser.description = "Create <dir>/.claude/anchors/<date>-<slug>.md from the template (never overwrites)."
    parser.add_argument("--task", required=True, help="the run's task in a few words (title, file name)")
    parser.add_argument(
        "--dir", help="the project directory; default: the session's project (where Claude Code started), else ."
    )
    _session_option(parser)
    parser.set_defaults(run=_run_new)


def _setup_step(parser: OneLineParser, _argv: Sequence[str]) -> None:
    parser.description = "N is one more than the larger of the frontmatter step and the newest Step bullet."
    parser.add_argument("file", metavar="FILE")
    parser.add_argument("text", metavar="TEXT", help='what was done and what is next, e.g. "done: X; next: Y"')
    _session_option(parser)
    parser.set_defaults(run=_run_step)


def _setup_write(parser: OneLineParser, _argv: Sequence[str]) -> None:
    parser.description = (
        "Atomic, locked, keeps the file mode; the step counter never goes backwards. Use this instead of the"
        " Write/Edit tools, which ask for permission under .claude/. Refused (exit 2) when the stored anchor's"
        " frontmatter step is newer than the text's: another writer moved it on since you read it."
    )
    parser.add_argument("file", metavar="FILE")
    parser.add_argument("--force", action="store_true", help="write even when the stored anchor's step is newer")
    _session_option(parser)
    parser.set_defaults(run=_run_write)


def _setup_adopt(parser: OneLineParser, _argv: Sequence[str]) -> None:
    parser.description = (
        "The hooks inject only anchors this machine's writers made or an adopt vouched for, as they are now; an"
        " anchor that arrived with the repository (clone, pull, unzip) or was edited by hand is only named. Read it"
        " first: once adopted, its HEAD is injected as the run's source of truth."
    )
    parser.add_argument("files", metavar="FILE", nargs="+")
    _session_option(parser)
    parser.set_defaults(run=_run_adopt)


def _setup_restore(parser: OneLineParser, _argv: Sequence[str]) -> None:
    parser.description = (
        "Puts back the copy this machine's writers keep of an anchor's last version (outside the repository):"
        " after a git clean, a deletion, or a change outside the writers (refused unless --force, which keeps the"
        " changed file beside it as FILE.changed-<time>)."
    )
    parser.add_argument("file", metavar="FILE")
    parser.add_argument("--force", action="store_true", help="restore over a file changed since (kept beside it)")
    _session_option(parser)
    parser.set_defaults(run=_run_restore)


def _setup_close(parser: OneLineParser, _argv: Sequence[str]) -> None:
    parser.description = (
        'close FILE --outcome "...": stub + rename, atomically. close --stale [--yes]: the done-in-content'
        " anchors' renames, shown (or done with --yes)."
    )
    parser.add_argument("file", metavar="FILE", nargs="?")
    parser.add_argument("--outcome", help="one line: what the run delivered")
    parser.add_argument("--stale", action="store_true", help="find the anchors marked done but never renamed")
    parser.add_argument("--yes", action="store_true", help="with --stale: do the renames instead of showing them")
    parser.add_argument("--dir", help="with --stale: the project directory (default as for new)")
    parser.set_defaults(run=_run_close)


# The ``anchor`` group's writing verbs, listed after its reports (``cli.anchor``).
VERBS: dict[str, Verb] = {
    "new": ("create a new anchor and print its path", _setup_new),
    "step": ('record a step: "- Step N: TEXT" on top of the cursor, step: N in the frontmatter', _setup_step),
    "write": ("replace FILE with the whole anchor read from stdin (a heredoc)", _setup_write),
    "adopt": ("vouch for a hand-made or cloned anchor, so the hooks inject its HEAD", _setup_adopt),
    "restore": ("put back the last version of FILE this machine wrote (gone, or changed: --force)", _setup_restore),
    "close": ("close FILE: rewrite it to a landed stub and rename it *.closed.md (or --stale)", _setup_close),
}
