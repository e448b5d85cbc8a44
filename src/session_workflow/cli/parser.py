"""The CLI's parser and error type, below every verb: each group module imports these, never the other way.

A verb (a group, or a group's subcommand) is a help line and a setup that adds its arguments. ``add_verbs`` builds
the parser of the verb the command line invokes and leaves every other one a bare entry, or out: the model runs
``state step`` and ``anchor step`` after every step, and building every verb's parser was a third of their cost.
"""

from __future__ import annotations

import argparse
import os
import sys

from session_workflow.core.errors import Failure

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Collection, Mapping, Sequence
    from typing import Any, NoReturn

    # A verb's setup: it gets the parser made for the verb and the arguments after the verb's name.
    Setup = Callable[["OneLineParser", Sequence[str]], None]
    # A verb: the help line its parent lists, and its setup.
    Verb = tuple[str, Setup]

FALLBACK_COLUMNS = 80


class CliError(Failure):
    """A failure of the command line (a bad argument, a refused request), printed as one line like any ``Failure``."""


def terminal_columns() -> int:
    """``shutil.get_terminal_size().columns`` without importing shutil (≈ 2 ms: it probes bz2 and lzma), which
    argparse's formatter does for every argument a parser adds (to check its metavar), not only for help."""
    try:
        columns = int(os.environ["COLUMNS"])
    except (KeyError, ValueError):
        columns = 0
    if columns <= 0:
        stdout = sys.__stdout__
        try:
            columns = os.get_terminal_size(stdout.fileno()).columns if stdout is not None else 0
        except (ValueError, OSError):  # no terminal, or a stdout closed or replaced by one without a descriptor
            columns = 0
    return columns or FALLBACK_COLUMNS


class HelpFormatter(argparse.HelpFormatter):
    """argparse's formatter, as wide as the terminal (as argparse makes it), found by ``terminal_columns``."""

    def __init__(self, prog: str, indent_increment: int = 2, max_help_position: int = 24, width: int | None = None):
        super().__init__(prog, indent_increment, max_help_position, terminal_columns() - 2 if width is None else width)


class RawDescriptionHelpFormatter(HelpFormatter, argparse.RawDescriptionHelpFormatter):
    """``HelpFormatter`` that keeps the description's line breaks."""


class OneLineParser(argparse.ArgumentParser):
    """An ArgumentParser whose errors are a single line and exit 2, and whose formatter imports no shutil."""

    def __init__(self, **kwargs: Any) -> None:
        kwargs.setdefault("formatter_class", HelpFormatter)
        super().__init__(**kwargs)

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message}\n")


def invoked(argv: Sequence[str]) -> str | None:
    """The verb a command line names: its first argument that is not an option (no level takes an option with a
    value before its verb)."""
    return next((arg for arg in argv if not arg.startswith("-")), None)


def alone(argv: Sequence[str], verbs: Collection[str]) -> str | None:
    """The verb whose parser ``add_verbs`` builds alone: the first argument, when it is one of ``verbs``.

    Anything before the verb may need every verb: ``-h``, or ``--he`` (argparse takes a prefix of ``--help``), asks
    for the listing, and ``--``, ``-`` or ``-1`` may be taken for the verb and named in the "invalid choice" error.
    """
    return argv[0] if argv and argv[0] in verbs else None


def add_verbs(
    parser: argparse.ArgumentParser,
    verbs: Mapping[str, Verb],
    argv: Sequence[str],
    dest: str,
    metavar: str,
    help: str | None = None,
) -> None:
    """Give ``parser`` the verbs, of which ``argv`` (what follows the parser's own name) invokes one.

    The invoked verb gets its parser set up. The others are left out when it is ``alone``; otherwise (no verb, an
    unknown one, something before it) they are bare entries: a name and a help line, all that the listing and the
    "invalid choice" error use.
    """
    # Each verb's usage starts with its parent's name (argparse's default, the parent's usage, is for a parent
    # with positionals before its verbs, which none has, and repeats a custom usage line).
    subcommands = parser.add_subparsers(
        dest=dest, metavar=metavar, parser_class=OneLineParser, required=True, help=help, prog=parser.prog
    )
    only = alone(argv, verbs)
    chosen = only or invoked(argv)
    for name, (help_line, setup) in verbs.items():
        if name == chosen:
            setup(subcommands.add_parser(name, help=help_line), argv[list(argv).index(name) + 1 :])
        elif only is None:
            subcommands.add_parser(name, help=help_line)
