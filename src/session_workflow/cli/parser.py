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
from session_workflow.core.text import escaped

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
    """An ArgumentParser whose errors are a single line and exit 2, and whose formatter imports no shutil.

    ``add_verbs`` tells it what followed its name (``given``) and its verbs (``verbs``), so that a command with no
    verb prints the short help (usage, one line per verb; exit 2, the convention for a missing argument) and an
    option it does not know is named with the command as typed, not hidden behind "GROUP is required".
    """

    def __init__(self, **kwargs: Any) -> None:
        kwargs.setdefault("formatter_class", HelpFormatter)
        super().__init__(**kwargs)
        self.given: list[str] = []
        self.verbs: list[tuple[str, str]] = []

    def error(self, message: str) -> NoReturn:
        unknown = self._unknown_word(message)
        if unknown is not None:
            self.exit(2, f"{self.prog}: error: {self._unknown_message(unknown)}\n")
        if self.verbs and not self.given and message.startswith("the following arguments are required: "):
            self.exit(2, self.short_help())
        self.exit(2, f"{self.prog}: error: {escaped(message)}\n")

    def short_help(self) -> str:
        """The usage line, each verb with its help line, and where the whole help is."""
        width = max(len(name) for name, _ in self.verbs)
        rows = [f"  {name:<{width}}  {help_line}" for name, help_line in self.verbs]
        more = f"`{self.prog} --help` says more; `{self.prog} {self.verbs[0][0]} --help` shows one's options."
        return "\n".join([self.format_usage().rstrip(), "", *rows, "", more]) + "\n"

    def _unknown_word(self, message: str) -> str | None:
        """The first word argparse did not take: from "unrecognized arguments", or, when a verb is missing, an
        option before where the verb should be (argparse reports only the missing verb)."""
        if message.startswith("unrecognized arguments: "):
            return message[len("unrecognized arguments: ") :].split(" ")[0]
        if message.startswith("the following arguments are required: "):
            return next((word for word in self._options_given() if not self._knows(word)), None)
        return None

    def _options_given(self) -> list[str]:
        """The words after this parser's name that read as options (up to ``--``; a negative number is a value)."""
        words = self.given[: self.given.index("--")] if "--" in self.given else self.given
        return [word for word in words if word.startswith("-") and word != "-" and not word[1:].isdigit()]

    def _knows(self, word: str) -> bool:
        """An option of this parser, or a prefix argparse takes for one (``--he``), ``--opt=value`` included."""
        name = word.split("=", 1)[0]
        return any(
            option == name or (name.startswith("--") and option.startswith(name))
            for option in self._option_string_actions
        )

    def _unknown_message(self, word: str) -> str:
        import shlex

        typed = " ".join(shlex.quote(part) for part in [*self.prog.split(" "), *self.given])
        verbs: list[str] = []
        for part in self.given:
            if part.startswith("-") or part == word or len(verbs) == 2:
                break
            verbs.append(part)
        what = "unknown option" if word.startswith("-") else "unexpected argument"
        helper = " ".join([self.prog, *verbs, "--help"])
        return escaped(f"{what} {word!r} in `{typed}`; `{helper}` lists what it takes")


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
    if isinstance(parser, OneLineParser):
        parser.given = list(argv)
        parser.verbs = [(name, help_line) for name, (help_line, _setup) in verbs.items()]
    only = alone(argv, verbs)
    chosen = only or invoked(argv)
    for name, (help_line, setup) in verbs.items():
        if name == chosen:
            rest = argv[list(argv).index(name) + 1 :]
            chosen_parser = subcommands.add_parser(name, help=help_line)
            chosen_parser.given = list(rest)
            setup(chosen_parser, rest)
        elif only is None:
            subcommands.add_parser(name, help=help_line)
