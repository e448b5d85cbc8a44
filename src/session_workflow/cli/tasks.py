"""``session-workflow tasks adopt <sid>``: make the open tasks a SessionStart block recovered this session's own."""

from __future__ import annotations

import argparse
import os

from session_workflow.cli.parser import CliError, OneLineParser, add_verbs
from session_workflow.core.places import LIST_ID_ENV
from session_workflow.tasks.adopt import AdoptError, adopt, report

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence

    from session_workflow.cli.parser import Verb
    from session_workflow.core.places import Places

SESSION_ENV = "CLAUDE_CODE_SESSION_ID"


def _run_adopt(args: argparse.Namespace, places: Places) -> int:
    own = places.env.get(LIST_ID_ENV) or args.session
    if not own:
        raise CliError(f"no session: pass --session, or run it from Claude Code's Bash tool (it sets {SESSION_ENV})", 2)
    root = places.tasks_root
    if root is None:
        raise CliError("no task store: HOME is not set and CLAUDE_CONFIG_DIR is not an absolute path", 1)
    try:
        result = adopt(root, args.predecessor, own)
    except (AdoptError, OSError) as error:
        raise CliError(str(error), 1) from error
    for line in report(result, args.predecessor):
        print(line)
    return 0


def _setup_adopt(parser: OneLineParser, _argv: Sequence[str]) -> None:
    parser.add_argument("predecessor", metavar="SID", help="the session (task list id) the block recovered")
    parser.add_argument(
        "--session",
        default=os.environ.get(SESSION_ENV),
        help=f"this session's id (default: ${SESSION_ENV}; ${LIST_ID_ENV} names the list instead when set)",
    )
    parser.set_defaults(run=_run_adopt)


VERBS: dict[str, Verb] = {
    "adopt": (
        "copy another session's open tasks into this session's list, so TaskList and TaskUpdate see them",
        _setup_adopt,
    ),
}


def setup(parser: OneLineParser, argv: Sequence[str]) -> None:
    """Set up the ``tasks`` group."""
    parser.description = "The TaskCreate/TaskUpdate task lists under $CLAUDE_CONFIG_DIR/tasks."
    add_verbs(parser, VERBS, argv, "tasks_command", "SUBCOMMAND")
