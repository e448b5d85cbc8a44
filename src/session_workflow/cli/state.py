"""``session-workflow state …``: put a ticket in play and move its step; the hooks and the mod deliver it.

Where the state lives and who owns it is ``DESCRIPTION`` (the ``state --help`` text).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

from session_workflow.cli.parser import CliError, OneLineParser, RawDescriptionHelpFormatter, add_verbs
from session_workflow.core.atomic import lock_path
from session_workflow.core.boundedio import read_prefix
from session_workflow.core.locations import SESSION_ENV, leads_outside, state_path
from session_workflow.core.text import escaped, one_line, visible_json
from session_workflow.core.where import command_project_dir
from session_workflow.workstate import writer as workstate_writer
from session_workflow.workstate.section import (
    MAX_STEP_POINTS,
    MAX_URL_CHARS,
    WorkState,
    display_title,
    is_session_id,
    is_url,
    parse_ticket,
    ticket_label,
)
from session_workflow.workstate.state import MAX_STATE_BYTES, decode, fallback_state_path, origin_slug

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from session_workflow.cli.parser import Setup, Verb
    from session_workflow.core.places import Places
    from session_workflow.workstate.writer import Change

MAX_TITLE_POINTS = 1024
WHITEBOARD = "none"
DESCRIPTION = """\
The work state (map, ticket, step) that the session-workflow hooks and mod deliver to the agent.

Where: --dir, else the session's project: the folder Claude Code started in (CLAUDE_PROJECT_DIR outside its
Bash tool, where only a settings env block sets it; in the Bash tool, the first cwd of this session's
transcript), whatever subfolder the shell is in; else the current directory. Only when none of them is a
folder does the state go to the user-level state dir. The file is
<dir>/.claude/session-workflow/work-state.json; each write also appends a line to work-state.log beside it.

Who: --session, else CLAUDE_CODE_SESSION_ID (set in Claude Code's Bash tool). set, step, pause, resume and
adopt need one; show and clear do not. A state owned by another session is orphaned there: it is never
delivered, and step, pause and resume refuse it until adopt claims it. set takes a state over (and says so).

Exit 0 done, 1 refused or failed, 2 bad arguments; every error is one line.
"""


class Location:
    """The state file a command works on and the project dir it belongs to (None for the user-level fallback)."""

    __slots__ = ("path", "project_dir")

    def __init__(self, path: str, project_dir: str | None) -> None:
        self.path = path
        self.project_dir = project_dir

    def slug(self) -> str | None:
        return origin_slug(self.project_dir) if self.project_dir else None


def locate(dir_arg: str | None, places: Places) -> Location:
    """Find the state file (the rules are in ``DESCRIPTION``)."""
    if dir_arg:
        return Location(state_path(dir_arg), dir_arg)
    try:
        cwd: str | None = os.getcwd()
    except OSError:
        cwd = None
    project, ignored = command_project_dir(places, cwd)
    if ignored:
        print(ignored, file=sys.stderr)
    if project:
        return Location(state_path(project), project)
    fallback = fallback_state_path(places)
    if fallback is None:
        raise CliError("no project directory and no user state directory; pass --dir", 1)
    return Location(fallback, None)


def _directory(value: str) -> str:
    if not os.path.isdir(value):
        raise argparse.ArgumentTypeError(f"not a directory: {value!r}")
    return os.path.abspath(value)


def _session(value: str) -> str:
    if not is_session_id(value):
        raise argparse.ArgumentTypeError("a session id is 1-256 printable ASCII characters without spaces")
    return value


def _ticket(value: str) -> int | str:
    text = value.strip()
    number = text[1:] if text.startswith("#") else text
    ticket = parse_ticket(int(number)) if number.isascii() and number.isdigit() else parse_ticket(text)
    if ticket is None:
        raise argparse.ArgumentTypeError(
            f"expected an issue number (34 or #34) or a tracker id such as PROJ-12, got {value!r}"
        )
    return ticket


def _map(value: str) -> int | str:
    if value.strip().lower() == WHITEBOARD:
        return WHITEBOARD
    ticket = _ticket(value)
    if not isinstance(ticket, int):
        raise argparse.ArgumentTypeError(f"expected a map issue number (12 or #12) or 'none', got {value!r}")
    return ticket


def _one_line_of_at_most(what: str, limit: int) -> Callable[[str], str]:
    """An argparse type: the value flattened to one line, neither empty nor over ``limit`` code points."""

    def convert(value: str) -> str:
        text = one_line(value)
        if not text:
            raise argparse.ArgumentTypeError(f"the {what} is empty")
        if len(text) > limit:
            raise argparse.ArgumentTypeError(f"the {what} is longer than {limit} characters")
        return text

    return convert


_title = _one_line_of_at_most("title", MAX_TITLE_POINTS)
_step = _one_line_of_at_most("step", MAX_STEP_POINTS)


def _url(value: str) -> str:
    if len(value) > MAX_URL_CHARS or not is_url(value):
        raise argparse.ArgumentTypeError(f"expected an http(s) URL without spaces, at most {MAX_URL_CHARS} characters")
    return value


def _owner(args: argparse.Namespace, places: Places) -> str | None:
    owner: str | None = args.session or places.session or None
    if owner is not None and not is_session_id(owner):
        raise CliError(f"{SESSION_ENV} is not a usable session id; pass --session", 2)
    return owner


def summary(state: WorkState) -> str:
    """One line naming the ticket in play, safe for a terminal."""
    map_text = "whiteboard" if state.map is None else f"map #{state.map}"
    paused = ", paused" if state.paused else ""
    auto = ", auto" if state.auto else ""
    step = one_line(state.step) or "(not set)"
    return f'{ticket_label(state.ticket)} "{display_title(state.title)}" ({map_text}), step {step}{paused}{auto}'


def confined(where: Location) -> Location:
    """Refuse (exit 2) a state folder, state file, lock or journal reached through a symlink out of the project."""
    if where.project_dir is None:
        return where
    for path in (where.path, lock_path(where.path), workstate_writer.journal_path(where.path)):
        escape = leads_outside(where.project_dir, path)
        if escape is not None:
            link, real = (one_line(part) for part in escape)
            raise CliError(f"{escaped(link)} leads outside the project ({escaped(real)}); refusing to write there", 2)
    return where


def _apply(
    args: argparse.Namespace, places: Places, operation: Callable[[str, str, str | None, float], Change]
) -> Change:
    """Run one writer operation as this session, on this project's file; its refusals become one-line errors."""
    owner = _owner(args, places)
    if owner is None:
        raise CliError(f"no session id: run this inside Claude Code (it sets {SESSION_ENV}) or pass --session ID", 2)
    where = confined(locate(args.dir, places))
    try:
        return operation(where.path, owner, where.slug(), time.time())
    except workstate_writer.WorkStateError as error:
        raise CliError(str(error), 1) from error


def _run_set(args: argparse.Namespace, places: Places) -> int:
    change = _apply(
        args,
        places,
        lambda path, owner, slug, now: workstate_writer.set_ticket(
            path,
            owner,
            ticket=args.ticket,
            title=args.title,
            map_number=None if args.map in (None, WHITEBOARD) else args.map,
            map_given=args.map is not None,
            url=args.url,
            step=args.step,
            auto=args.auto,
            slug=slug,
            now=now,
            private=os.path.abspath(path) == fallback_state_path(places),
        ),
    )
    before = change.before
    if before is not None and before.session != change.after.session:
        print(f"session-workflow: took the work state over from session {before.session or '(none)'}", file=sys.stderr)
    print(f"work state: {summary(change.after)}")
    return 0


def _run_step(args: argparse.Namespace, places: Places) -> int:
    change = _apply(
        args,
        places,
        lambda path, owner, slug, now: workstate_writer.set_step(path, owner, args.step, slug=slug, now=now),
    )
    was = one_line(change.before.step if change.before else "") or "(not set)"
    note = " (still paused: run `session-workflow state resume` before working on)" if change.after.paused else ""
    print(f"work state: {ticket_label(change.after.ticket)} step {was} -> {change.after.step}{note}")
    return 0


def _run_pause_or_resume(args: argparse.Namespace, places: Places) -> int:
    paused = args.action == "pause"
    change = _apply(
        args,
        places,
        lambda path, owner, slug, now: workstate_writer.set_paused(path, owner, paused, slug=slug, now=now),
    )
    print(f"work state: {summary(change.after)}")
    return 0


def _run_adopt(args: argparse.Namespace, places: Places) -> int:
    change = _apply(
        args, places, lambda path, owner, slug, now: workstate_writer.adopt(path, owner, slug=slug, now=now)
    )
    previous = change.before.session if change.before else None
    origin = "already this session's" if previous == change.after.session else f"from session {previous or '(none)'}"
    print(f"work state: adopted {summary(change.after)}, {origin}")
    return 0


def _run_clear(args: argparse.Namespace, places: Places) -> int:
    where = confined(locate(args.dir, places))
    try:
        existed, before = workstate_writer.clear(where.path, _owner(args, places), now=time.time())
    except workstate_writer.WorkStateError as error:
        raise CliError(str(error), 1) from error
    if not existed:
        print(f"work state: nothing to clear in {escaped(where.path)}")
    elif before is None:
        print(f"work state: removed an invalid state file {escaped(where.path)}")
    else:
        print(f"work state: cleared {summary(before)}")
    return 0


def _run_show(args: argparse.Namespace, places: Places) -> int:
    where = locate(args.dir, places)
    owner = _owner(args, places)
    read = read_prefix(where.path, MAX_STATE_BYTES + 1)
    if read is None and os.path.lexists(where.path):
        raise CliError(f"{escaped(where.path)} is not a readable regular file", 1)
    decoded = decode(read[0]) if read is not None else None
    if read is not None and decoded is None:
        raise CliError(
            f"{escaped(where.path)} is not a valid work state; fix it, or start afresh with `state clear`", 1
        )
    state = decoded[0] if decoded is not None else None
    orphaned = None if state is None or owner is None else state.session != owner
    if args.json:
        document = json.loads(read[0]) if read is not None else None
        shown = json.dumps({"path": where.path, "orphaned": orphaned, "state": document}, ensure_ascii=False, indent=2)
        print(visible_json(shown))
        return 0
    if state is None:
        print(f"no work state in {escaped(where.path)}")
        return 0
    if orphaned is None:
        ownership = f"{state.session or '(none)'} (no session id here to compare)"
    else:
        ownership = f"{state.session or '(none)'} ({'another session: orphaned here' if orphaned else 'this session'})"
    rows = [
        ("path", escaped(where.path)),
        ("map", "none (whiteboard ticket)" if state.map is None else f"#{state.map}"),
        ("ticket", f'{ticket_label(state.ticket)} "{display_title(state.title)}"'),
        ("url", one_line(state.url or "") or "(none)"),
        ("step", (one_line(state.step) or "(not set)") + (" (paused)" if state.paused else "")),
        ("auto", "on" if state.auto else "off"),
        ("owner", one_line(ownership)),
        ("updated", one_line(state.updated_at or "(unknown)")),
    ]
    print("\n".join(f"{name:<8} {value}" for name, value in rows))
    return 0


def _common(parser: OneLineParser) -> None:
    """The options every action takes."""
    parser.add_argument("--dir", type=_directory, help="the project directory (default: see `state --help`)")
    parser.add_argument("--session", type=_session, help=f"the owner session id (default: ${SESSION_ENV})")


def _action(run: Callable[[argparse.Namespace, Places], int]) -> Setup:
    """The setup of an action with only the common options."""

    def setup(parser: OneLineParser, _argv: Sequence[str]) -> None:
        _common(parser)
        parser.set_defaults(run=run)

    return setup


def _setup_set(parser: OneLineParser, _argv: Sequence[str]) -> None:
    _common(parser)
    parser.add_argument("--ticket", required=True, type=_ticket, help="issue number (34, #34) or tracker id (PROJ-12)")
    parser.add_argument("--title", required=True, type=_title, help="the ticket's title (stored as data)")
    parser.add_argument("--map", type=_map, help="the map issue number, or 'none' for a whiteboard ticket")
    parser.add_argument("--url", type=_url, help="the ticket's URL (default: the GitHub issue of the origin remote)")
    default_step = workstate_writer.DEFAULT_STEP
    parser.add_argument("--step", type=_step, help=f"the step (default for a new ticket: {default_step})")
    parser.add_argument("--auto", action=argparse.BooleanOptionalAction, help="an autonomous run (default: off)")
    parser.set_defaults(run=_run_set)


def _setup_step(parser: OneLineParser, _argv: Sequence[str]) -> None:
    _common(parser)
    parser.add_argument("step", type=_step, help="the new step, e.g. plan, execute, verify")
    parser.set_defaults(run=_run_step)


def _setup_show(parser: OneLineParser, _argv: Sequence[str]) -> None:
    _common(parser)
    parser.add_argument("--json", action="store_true", help="print the path, orphaned flag and stored file as JSON")
    parser.set_defaults(run=_run_show)


VERBS: dict[str, Verb] = {
    "set": ("put a ticket in play for this session", _setup_set),
    "step": ("move this session's ticket to another step", _setup_step),
    "pause": ("checkpoint the ticket: paused until resumed", _action(_run_pause_or_resume)),
    "resume": ("resume the ticket", _action(_run_pause_or_resume)),
    "adopt": ("claim an orphaned state for this session", _action(_run_adopt)),
    "clear": ("remove the work state (no ticket in play)", _action(_run_clear)),
    "show": ("print the live work state", _setup_show),
}


def setup(parser: OneLineParser, argv: Sequence[str]) -> None:
    """Set up the ``state`` group."""
    parser.description = DESCRIPTION
    parser.formatter_class = RawDescriptionHelpFormatter
    add_verbs(parser, VERBS, argv, "action", "ACTION")
