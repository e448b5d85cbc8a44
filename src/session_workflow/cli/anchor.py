"""``session-workflow anchor …``: the read-only reports here, the writer's subcommands from ``anchor_writer``.

This module owns the ``anchor`` argparse tree. The writer (``new``, ``step``, ``close``) registers its
subcommands into the same tree through ``anchor_writer.register(subcommands)``.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
import time

from session_workflow.anchor.report import (
    anchor_path,
    head_fit_report,
    list_anchors,
    list_dormant,
    list_stale,
    resolve_folder,
    show_anchor,
)
from session_workflow.cli.parser import CliError, OneLineParser

DIR_HELP = "a project directory (its .claude/anchors is used) or an anchors folder; default: the current directory"


def _print(lines: list[str], empty: str | None = None) -> None:
    """Print a report; an empty listing says so on stderr, so stdout stays exactly the list (scripts read it)."""
    for line in lines:
        print(line)
    if not lines and empty is not None:
        print(f"session-workflow: {empty}", file=sys.stderr)


def _print_or_fail(report: tuple[list[str], int]) -> int:
    """A report that may be a refusal: on a non-zero code its first line is the one-line error."""
    lines, code = report
    if code:
        raise CliError(lines[0], code)
    _print(lines)
    return 0


def _listed_dir(value: str | None) -> str | None:
    """A DIR that is not a directory is a mistake to name, not an empty listing."""
    if value is not None and not os.path.isdir(value):
        raise CliError(f"{value}: no such directory", 2)
    return value


def _run_list(args: argparse.Namespace) -> int:
    _print(list_anchors(_listed_dir(args.dir), time.time()), f"no open anchors in {resolve_folder(args.dir)}")
    return 0


def _run_path(args: argparse.Namespace) -> int:
    return _print_or_fail(anchor_path(args.dir))


def _run_show(args: argparse.Namespace) -> int:
    return _print_or_fail(show_anchor(args.file, args.all, time.time()))


def _run_dormant(args: argparse.Namespace) -> int:
    _print(
        list_dormant(_listed_dir(args.dir), time.time()),
        f"no dormant anchors (open, untouched > 72 h) in {resolve_folder(args.dir)}",
    )
    return 0


def _run_stale(args: argparse.Namespace) -> int:
    _print(
        list_stale(_listed_dir(args.dir)), f"no open anchor in {resolve_folder(args.dir)} is marked done in its content"
    )
    return 0


def _run_head_fit(args: argparse.Namespace) -> int:
    return _print_or_fail(head_fit_report(args.file))


def _register_writer(subcommands: argparse._SubParsersAction[OneLineParser]) -> None:
    """Add ``new``/``step``/``close`` when the writer module is present."""
    try:
        anchor_writer = importlib.import_module("session_workflow.anchor.writer")
    except ModuleNotFoundError as error:
        if error.name != "session_workflow.anchor.writer":
            raise
        return
    anchor_writer.register(subcommands)


def register(commands: argparse._SubParsersAction[OneLineParser]) -> None:
    """Add the ``anchor`` command group."""
    anchor = commands.add_parser(
        "anchor",
        help="find, inspect and maintain control anchors",
        description="Control anchors: the run's state file under <project>/.claude/anchors/*.md.",
    )
    subcommands = anchor.add_subparsers(dest="anchor_command", metavar="SUBCOMMAND", parser_class=OneLineParser)
    subcommands.required = True

    listing = subcommands.add_parser(
        "list", help="open anchors: tier, age, title, cursor line (* = the one the hook injects)"
    )
    listing.add_argument("dir", nargs="?", metavar="DIR", help=DIR_HELP)
    listing.set_defaults(run=_run_list)

    path = subcommands.add_parser(
        "path", help="print the nearest open anchor: the one the hook injects for this directory, else a parent's"
    )
    path.add_argument("dir", nargs="?", metavar="DIR", help="where to start; default: the current directory")
    path.set_defaults(run=_run_path)

    show = subcommands.add_parser(
        "show",
        help="print an anchor's HEAD as the hook frames it (--all: and its TAIL); read anchors with this, not Read",
    )
    show.add_argument("file", nargs="?", metavar="FILE", help="the anchor; default: the one `anchor path` prints")
    show.add_argument("--all", action="store_true", help="add the TAIL (decisions and history) below the HEAD")
    show.set_defaults(run=_run_show)

    dormant = subcommands.add_parser("list-dormant", help="open, not done, untouched > 72 h (parked ones last)")
    dormant.add_argument("dir", nargs="?", metavar="DIR", help=DIR_HELP)
    dormant.set_defaults(run=_run_dormant)

    stale = subcommands.add_parser("list-stale", help="print (never run) the mv that closes each done anchor")
    stale.add_argument("dir", nargs="?", metavar="DIR", help=DIR_HELP)
    stale.set_defaults(run=_run_stale)

    fit = subcommands.add_parser("head-fit", help="how FILE's HEAD fits the injection budget")
    fit.add_argument("file", metavar="FILE")
    fit.set_defaults(run=_run_head_fit)

    _register_writer(subcommands)
