"""The ``session-workflow`` command: one argparse tree, each subcommand group in its own module.

Errors are one line on stderr with exit 2 (bad arguments) or 1 (the operation failed); never a traceback.
"""

from __future__ import annotations

import argparse
import sys

from session_workflow.cli.parser import CliError, OneLineParser

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence


def build_parser() -> argparse.ArgumentParser:
    from session_workflow.cli import anchor as anchor_cli
    from session_workflow.cli import demo
    from session_workflow.cli import inject as inject_cli
    from session_workflow.cli import state as state_cli
    from session_workflow.cli import tasks as tasks_cli

    parser = OneLineParser(prog="session-workflow", description=__doc__.splitlines()[0] if __doc__ else None)
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=OneLineParser)
    commands.required = True
    demo.register(commands)
    inject_cli.register(commands)
    anchor_cli.register(commands)
    state_cli.register(commands)
    tasks_cli.register(commands)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI; returns the exit code."""
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        code: int = args.run(args)
    except CliError as error:
        print(f"session-workflow: {error}", file=sys.stderr)
        return error.code
    except KeyboardInterrupt:
        return 130
    return code


if __name__ == "__main__":
    raise SystemExit(main())
