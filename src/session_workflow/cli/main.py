"""The ``session-workflow`` command: one argparse tree, each subcommand group in its own module.

Only the invoked group's module is imported: the model runs ``state step`` and ``anchor step`` after every step,
and importing every group (the demo alone pulls in shutil, subprocess, tempfile and uuid) doubled their cost.
``GROUPS`` names each group's module, its one-line help and an example, so ``--help`` lists them without importing any.
Errors are one line on stderr (``core.errors.guard``) with exit 2 (bad arguments) or 1 (the operation failed); an
unexpected one, a bug, exits 70, goes to the error log (which ``doctor`` shows) and its line says where; ``--debug``
(first) prints its traceback too. ``main`` builds the run's ``core.places.Places`` once and hands it to the verb.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys

from session_workflow import __version__
from session_workflow.cli.parser import OneLineParser, RawDescriptionHelpFormatter, add_verbs
from session_workflow.core.errors import guard
from session_workflow.core.locations import PLUGIN_DATA_ENV, SESSION_ENV
from session_workflow.core.places import BASH_TOOL_ENV, Places
from session_workflow.core.text import escaped, has_invisible, is_utf8

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import MutableMapping, Sequence

    from session_workflow.cli.parser import Setup

DESCRIPTION = """\
Keep a long Claude Code run on course across context compaction. The plugin's SessionStart hook puts the
run's control anchor, open tasks and work state back after /compact, resume and /clear; this command writes
and inspects them (inside Claude Code the plugin puts it on the Bash tool's PATH)."""

# Group name → (its module, whose ``setup(parser, argv)`` adds the group's arguments or verbs; its help line; one
# example for the top-level help). In help order.
GROUPS: dict[str, tuple[str, str, str]] = {
    "demo": ("session_workflow.cli.demo", "show the main job on a throwaway project", "session-workflow demo"),
    "doctor": (
        "session_workflow.cli.doctor",
        "check that the plugin can work here: one line per check, with its fix",
        "session-workflow doctor",
    ),
    "log": (
        "session_workflow.cli.log",
        "what the plugin told the model at each SessionStart, and each checkpoint reminder",
        "session-workflow log --all",
    ),
    "inject": (
        "session_workflow.cli.inject",
        "run the SessionStart hook (stdin payload), or show what it would inject (--dry-run)",
        "session-workflow inject --dry-run --source compact",
    ),
    "anchor": (
        "session_workflow.cli.anchor",
        "find, inspect and maintain control anchors",
        'session-workflow anchor new --task "Port X"',
    ),
    "state": (
        "session_workflow.cli.state",
        "the work state (map, ticket, step) the hooks and the mod deliver",
        "session-workflow state set --ticket 34 --title 'Fix Y'",
    ),
    "tasks": (
        "session_workflow.cli.tasks",
        "Claude Code's task lists: adopt a recovered one",
        "session-workflow tasks adopt SID",
    ),
}


def _epilog() -> str:
    width = max(len(name) for name in GROUPS)
    rows = [
        f"  {name:<{width}}  {what}\n  {'':<{width}}    e.g. {example}" for name, (_m, what, example) in GROUPS.items()
    ]
    return "groups:\n" + "\n".join(rows) + "\n\n`session-workflow GROUP --help` lists a group's commands."


def _group(module: str) -> Setup:
    """A group's setup: its module's ``setup``, imported only when the group is the one invoked."""

    def setup(parser: OneLineParser, argv: Sequence[str]) -> None:
        importlib.import_module(module).setup(parser, argv)

    return setup


def build_parser(argv: Sequence[str] | None = None) -> argparse.ArgumentParser:
    """The tree with the invoked group set up by its module (``add_verbs``); the others are bare entries or out."""
    parser = OneLineParser(
        prog="session-workflow",
        usage="session-workflow [-h] [--version] [--debug] GROUP ...",
        description=DESCRIPTION,
        epilog=_epilog(),
        formatter_class=RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"session-workflow {__version__}")
    parser.add_argument("--debug", action="store_true", help="print the traceback of an unexpected error")
    groups = {name: (help_line, _group(module)) for name, (module, help_line, _example) in GROUPS.items()}
    arguments = sys.argv[1:] if argv is None else argv
    add_verbs(parser, groups, arguments, "command", "GROUP", argparse.SUPPRESS)
    return parser


def from_claude_code(env: MutableMapping[str, str]) -> None:
    """In Claude Code's Bash tool (``CLAUDECODE``, or a session id and no hook: Claude Code sets both over any env
    block) ``CLAUDE_PLUGIN_DATA`` can only come from a settings ``env`` block, a repository's included: Claude Code
    sets it for hooks alone. So it is dropped there, and never chooses where the CLI writes (``inject``'s delivery
    records go to the user's state folder)."""
    if env.get(BASH_TOOL_ENV) == "1" or env.get(SESSION_ENV):
        env.pop(PLUGIN_DATA_ENV, None)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI; returns the exit code. Every way in (bin script, ``-m``, console script) comes through here,
    and every failure is one line on stderr, never a traceback."""
    for stream in (sys.stdout, sys.stderr):
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None:  # a path with undecodable bytes prints as escapes instead of raising
            reconfigure(errors="backslashreplace")
    from_claude_code(os.environ)
    arguments = list(sys.argv[1:] if argv is None else argv)
    debug = arguments[:1] == ["--debug"]
    arguments = arguments[1:] if debug else arguments
    for argument in arguments:
        if not is_utf8(argument):
            return _fail(f"an argument is not valid UTF-8: {escaped(argument)}", 2)
    args = build_parser(arguments).parse_args(arguments)
    places = Places(os.environ)  # the command's one entry: its folders resolved on first use, once
    # The error log names the command by its words, never an argument's value (it may be the user's text).
    words = [argument for argument in arguments[:2] if argument.replace("-", "").isalnum()]

    def say(message: str) -> None:
        _fail(message, 1)

    code: int = guard(
        " ".join(["session-workflow", *words]), lambda: args.run(args, places), lambda: places, say, debug
    )
    return code


def _fail(message: str, code: int) -> int:
    """Print ``message`` as one line. Its names arrive escaped and its commands quoted where it was made, and it is
    printed as it is, so a command in it stays exact; one that still holds a control character, an undecodable
    byte or the like (a message from outside: an exception's text) is escaped whole."""
    shown = message if message.isprintable() and not has_invisible(message) else escaped(message)
    print(f"session-workflow: {shown}", file=sys.stderr)
    return code


if __name__ == "__main__":
    raise SystemExit(main())
