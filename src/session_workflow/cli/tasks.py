"""``session-workflow tasks adopt <sid>``: make the open tasks a SessionStart block recovered this session's own."""

from __future__ import annotations

import argparse
import os

from session_workflow.cli.parser import CliError, OneLineParser
from session_workflow.tasks.adopt import AdoptError, adopt, report
from session_workflow.tasks.store import LIST_ID_ENV, tasks_root

SESSION_ENV = "CLAUDE_CODE_SESSION_ID"


def _run_adopt(args: argparse.Namespace) -> int:
    own = os.environ.get(LIST_ID_ENV) or args.session
    if not own:
        raise CliError(f"no session: pass --session, or run it from Claude Code's Bash tool (it sets {SESSION_ENV})", 2)
    try:
        result = adopt(tasks_root(os.environ), args.predecessor, own)
    except (AdoptError, OSError) as error:
        raise CliError(str(error), 1) from error
    for line in report(result, args.predecessor):
        print(line)
    return 0


def register(commands: argparse._SubParsersAction[OneLineParser]) -> None:
    """Add the ``tasks`` command group."""
    tasks = commands.add_parser(
        "tasks",
        help="Claude Code's task lists: adopt a recovered one",
        description="The TaskCreate/TaskUpdate task lists under $CLAUDE_CONFIG_DIR/tasks.",
    )
    subcommands = tasks.add_subparsers(dest="tasks_command", metavar="SUBCOMMAND", parser_class=OneLineParser)
    subcommands.required = True
    adopt_parser = subcommands.add_parser(
        "adopt",
        help="copy another session's open tasks into this session's list, so TaskList and TaskUpdate see them",
    )
    adopt_parser.add_argument("predecessor", metavar="SID", help="the session (task list id) the block recovered")
    adopt_parser.add_argument(
        "--session",
        default=os.environ.get(SESSION_ENV),
        help=f"this session's id (default: ${SESSION_ENV}; ${LIST_ID_ENV} names the list instead when set)",
    )
    adopt_parser.set_defaults(run=_run_adopt)
