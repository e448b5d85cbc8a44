"""``session-workflow anchor …``: the read-only reports here, the writer's subcommands from ``anchor_writer``.

This module owns the ``anchor`` argparse tree; the writer's verbs (``new``, ``step``, ``write``, ``adopt``,
``close``) come from ``session_workflow.cli.anchor_writer.VERBS``.
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
from session_workflow.cli.parser import CliError, OneLineParser, add_verbs, alone
from session_workflow.core.text import escaped

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from session_workflow.cli.parser import Setup, Verb
    from session_workflow.core.places import Places

DIR_HELP = "a project directory (its .claude/anchors is used) or an anchors folder; default: the session's project"


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
        raise CliError(f"{escaped(value)}: no such directory", 2)
    return value


def _run_list(args: argparse.Namespace, places: Places) -> int:
    _print(
        list_anchors(_listed_dir(args.dir), time.time(), places),
        f"no open anchors in {escaped(resolve_folder(args.dir, places))}",
    )
    return 0


def _run_path(args: argparse.Namespace, places: Places) -> int:
    return _print_or_fail(anchor_path(args.dir, places))


def _run_show(args: argparse.Namespace, places: Places) -> int:
    return _print_or_fail(show_anchor(args.file, args.all, time.time(), places))


def _run_dormant(args: argparse.Namespace, places: Places) -> int:
    _print(
        list_dormant(_listed_dir(args.dir), time.time(), places),
        f"no dormant anchors (open, untouched > 72 h) in {escaped(resolve_folder(args.dir, places))}",
    )
    return 0


def _run_stale(args: argparse.Namespace, places: Places) -> int:
    _print(
        list_stale(_listed_dir(args.dir), places),
        f"no open anchor in {escaped(resolve_folder(args.dir, places))} is marked done in its content",
    )
    return 0


def _run_head_fit(args: argparse.Namespace, _places: Places) -> int:
    return _print_or_fail(head_fit_report(args.file))


def _setup_listing(run: Callable[[argparse.Namespace, Places], int]) -> Setup:
    """The setup of a listing: an optional DIR."""

    def setup(parser: OneLineParser, _argv: Sequence[str]) -> None:
        parser.add_argument("dir", nargs="?", metavar="DIR", help=DIR_HELP)
        parser.set_defaults(run=run)

    return setup


def _setup_path(parser: OneLineParser, _argv: Sequence[str]) -> None:
    parser.add_argument("dir", nargs="?", metavar="DIR", help="where to start; default: the session's project")
    parser.set_defaults(run=_run_path)


def _setup_show(parser: OneLineParser, _argv: Sequence[str]) -> None:
    parser.add_argument("file", nargs="?", metavar="FILE", help="the anchor; default: the one `anchor path` prints")
    parser.add_argument("--all", action="store_true", help="add the TAIL (decisions and history) below the HEAD")
    parser.set_defaults(run=_run_show)


def _setup_head_fit(parser: OneLineParser, _argv: Sequence[str]) -> None:
    parser.add_argument("file", metavar="FILE")
    parser.set_defaults(run=_run_head_fit)


# The read-only reports; the writer's verbs (new, step, write, adopt, close) follow them from ``cli.anchor_writer``.
REPORTS: dict[str, Verb] = {
    "list": ("open anchors: tier, age, title, cursor line (* = the one the hook injects)", _setup_listing(_run_list)),
    "path": (
        "print the nearest open anchor: the one the hook injects for this directory, else a parent's",
        _setup_path,
    ),
    "show": (
        "print an anchor's HEAD as the hook frames it (--all: and its TAIL); read anchors with this, not Read",
        _setup_show,
    ),
    "list-dormant": ("open, not done, untouched > 72 h (parked ones last)", _setup_listing(_run_dormant)),
    "list-stale": ("print (never run) the mv that closes each done anchor", _setup_listing(_run_stale)),
    "head-fit": ("how FILE's HEAD fits the injection budget", _setup_head_fit),
}


def setup(parser: OneLineParser, argv: Sequence[str]) -> None:
    """Set up the ``anchor`` group; the writer's module is imported unless a report is built alone."""
    parser.description = "Control anchors: the run's state file under <project>/.claude/anchors/*.md."
    verbs = dict(REPORTS)
    if alone(argv, REPORTS) is None:
        verbs.update(importlib.import_module("session_workflow.cli.anchor_writer").VERBS)
    add_verbs(parser, verbs, argv, "anchor_command", "SUBCOMMAND")
