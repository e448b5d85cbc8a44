"""The ``session-workflow`` command: one argparse tree, each subcommand group in its own module.

Only the invoked group's module is imported: the model runs ``state step`` and ``anchor step`` after every step,
and importing every group (the demo alone pulls in shutil, subprocess, tempfile and uuid) doubled their cost.
``GROUPS`` names each group's module and its one-line help, so ``--help`` lists them all without importing any.
Errors are one line on stderr with exit 2 (bad arguments) or 1 (the operation failed); never a traceback.
"""

from __future__ import annotations

import argparse
import importlib
import sys

from session_workflow.cli.parser import CliError, OneLineParser

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence

# Group name → (its module, which has ``register(commands)``; the help line ``--help`` shows for it). In help
# order; tests/cli/test_main.py checks each line against the one its module registers.
GROUPS: dict[str, tuple[str, str]] = {
    "demo": ("session_workflow.cli.demo", "show the main job on a throwaway project"),
    "inject": (
        "session_workflow.cli.inject",
        "run the SessionStart hook (stdin payload), or show what it would inject (--dry-run)",
    ),
    "anchor": ("session_workflow.cli.anchor", "find, inspect and maintain control anchors"),
    "state": ("session_workflow.cli.state", "the work state (map, ticket, step) the hooks and the mod deliver"),
    "tasks": ("session_workflow.cli.tasks", "Claude Code's task lists: adopt a recovered one"),
}


def invoked_group(argv: Sequence[str]) -> str | None:
    """The group the command line names: its first argument that is not an option (the top level takes no
    option with a value)."""
    return next((arg for arg in argv if not arg.startswith("-")), None)


def build_parser(argv: Sequence[str] | None = None) -> argparse.ArgumentParser:
    """The tree with the invoked group registered by its module and every other group as a bare entry (its name
    and help line), which is all ``--help`` and the "invalid choice" error need."""
    chosen = invoked_group(sys.argv[1:] if argv is None else argv)
    parser = OneLineParser(prog="session-workflow", description=__doc__.splitlines()[0] if __doc__ else None)
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=OneLineParser)
    commands.required = True
    for name, (module, help_line) in GROUPS.items():
        if name == chosen:
            importlib.import_module(module).register(commands)
        else:
            commands.add_parser(name, help=help_line)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI; returns the exit code."""
    parser = build_parser(argv)
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
