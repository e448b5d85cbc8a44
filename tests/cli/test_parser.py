"""The parser below the verbs: only the invoked verb's parser is built, every usage and error line names the verbs
as typed, and the help formatter is as wide as argparse's without importing shutil (tests/cli/test_main.py checks
that a writer imports none)."""

from __future__ import annotations

import argparse
import os
import shutil
import sys
from collections.abc import Sequence

import pytest

from session_workflow.cli import main as cli
from session_workflow.cli.parser import OneLineParser, add_verbs, invoked, terminal_columns

TYPE_CHECKING = False
if TYPE_CHECKING:
    from session_workflow.cli.parser import Setup


def tree(argv: list[str]) -> tuple[OneLineParser, list[tuple[str, list[str]]]]:
    """A parser with verbs a, b, c (b takes one argument) and the setups that ran, with what they got."""
    ran: list[tuple[str, list[str]]] = []

    def setup_of(name: str) -> Setup:
        def setup(parser: OneLineParser, rest: Sequence[str]) -> None:
            ran.append((name, list(rest)))
            if name == "b":
                parser.add_argument("value")
            parser.set_defaults(verb=name)

        return setup

    parser = OneLineParser(prog="tool")
    add_verbs(parser, {name: (f"the {name} verb", setup_of(name)) for name in "abc"}, argv, "verb", "VERB")
    return parser, ran


def choices(parser: argparse.ArgumentParser) -> list[str]:
    action = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return list(action.choices)


def test_invoked_is_the_first_argument_that_is_not_an_option() -> None:
    assert invoked(["--flag", "-x", "state", "step"]) == "state"
    assert invoked(["-h"]) is None and invoked([]) is None


def test_only_the_invoked_verb_is_set_up_and_the_others_are_left_out() -> None:
    parser, ran = tree(["b", "--", "x"])
    assert ran == [("b", ["--", "x"])] and choices(parser) == ["b"]
    args = parser.parse_args(["b", "--", "x"])
    assert (args.verb, args.value) == ("b", "x")


@pytest.mark.parametrize(
    "argv", [[], ["nope"], ["-h", "b"], ["--help", "b", "x"], ["--he", "b"], ["--", "b"], ["-1", "b"], ["-", "b"]]
)
def test_every_verb_is_listed_when_the_listing_or_an_error_can_show_them(argv: list[str]) -> None:
    parser, ran = tree(argv)
    assert choices(parser) == ["a", "b", "c"]
    assert ran == ([("b", argv[2:])] if "b" in argv else [])
    assert "the a verb" in parser.format_help() and "the c verb" in parser.format_help()


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as exit_:
        cli.main(list(argv))
    out, err = capsys.readouterr()
    return int(exit_.value.code or 0), out, err


@pytest.mark.parametrize(
    ("argv", "error"),
    [
        (
            ["--bogus"],
            "session-workflow: error: unknown option '--bogus' in `session-workflow --bogus`; `session-workflow"
            " --help` lists what it takes",
        ),
        (
            ["anchor", "--bogus"],
            "session-workflow anchor: error: unknown option '--bogus' in `session-workflow anchor --bogus`;"
            " `session-workflow anchor --help` lists what it takes",
        ),
        (  # a missing required option does not hide the unknown one
            ["anchor", "new", "--bogus"],
            "session-workflow anchor new: error: unknown option '--bogus' in `session-workflow anchor new --bogus`;"
            " `session-workflow anchor new --help` lists what it takes",
        ),
        (
            ["doctor", "--dir", ".", "--bogus", "it's"],
            "session-workflow: error: unknown option '--bogus' in `session-workflow doctor --dir . --bogus"
            " 'it'\"'\"'s'`; `session-workflow doctor --help` lists what it takes",
        ),
        (
            ["doctor", "extra"],
            "session-workflow: error: unexpected argument 'extra' in `session-workflow doctor extra`;"
            " `session-workflow doctor --help` lists what it takes",
        ),
        (["anchor", "new", "--ta"], "session-workflow anchor new: error: argument --task: expected one argument"),
        (["state", "step"], "session-workflow state step: error: the following arguments are required: step"),
        (["anchor", "step", "F"], "session-workflow anchor step: error: the following arguments are required: TEXT"),
        (
            ["anchor", "bogus"],
            "session-workflow anchor: error: argument SUBCOMMAND: invalid choice: 'bogus' (choose from 'list', 'path',"
            " 'show', 'list-dormant', 'list-stale', 'head-fit', 'new', 'step', 'write', 'adopt', 'restore', 'close')",
        ),
        (
            ["state", "bogus"],
            "session-workflow state: error: argument ACTION: invalid choice: 'bogus' (choose from 'set', 'step',"
            " 'pause', 'resume', 'adopt', 'clear', 'show')",
        ),
        (
            ["tasks", "bogus"],
            "session-workflow tasks: error: argument SUBCOMMAND: invalid choice: 'bogus' (choose from 'adopt')",
        ),
    ],
)
def test_errors_are_one_line_naming_the_command_as_typed(
    capsys: pytest.CaptureFixture[str], argv: list[str], error: str
) -> None:
    assert run(capsys, *argv) == (2, "", error + "\n")


@pytest.mark.parametrize(("argv", "first", "verbs"), [([], "demo", list(cli.GROUPS)), (["state"], "set", None)])
def test_a_command_without_its_verb_prints_the_short_help_and_exits_2(
    capsys: pytest.CaptureFixture[str], argv: list[str], first: str, verbs: list[str] | None
) -> None:
    code, out, err = run(capsys, *argv)
    prog = " ".join(["session-workflow", *argv])
    assert (code, out) == (2, "")
    lines = err.splitlines()
    assert lines[0].startswith(f"usage: {prog} [-h]") and lines[1] == ""
    listed = [line.split()[0] for line in lines[2:] if line.startswith("  ")]
    assert listed == (verbs or listed) and listed[0] == first and len(listed) >= 3
    assert lines[-1] == f"`{prog} --help` says more; `{prog} {first} --help` shows one's options."


@pytest.mark.parametrize(
    ("argv", "verbs"),
    [
        (["anchor", "-h", "list"], ["list", "head-fit", "new", "step", "close"]),
        (["anchor", "--he", "step"], ["list", "head-fit", "new", "step", "close"]),
        (["state", "--h", "step"], ["set", "step", "pause", "resume", "adopt", "clear", "show"]),
    ],
)
def test_help_asked_before_a_verb_lists_every_verb(
    capsys: pytest.CaptureFixture[str], argv: list[str], verbs: list[str]
) -> None:
    code, out, _err = run(capsys, *argv)
    listed = [line.split()[0] for line in out.splitlines() if line.startswith("    ") and not line.startswith("     ")]
    assert code == 0 and set(verbs) <= set(listed)


@pytest.mark.parametrize(
    ("argv", "choices"),
    [
        (["-1", "state"], "'demo', 'doctor', 'log', 'inject', 'anchor', 'state', 'tasks'"),
        (["state", "-1", "step"], "'set', 'step', 'pause', 'resume', 'adopt', 'clear', 'show'"),
    ],
)
def test_a_token_taken_for_the_verb_is_refused_naming_every_verb(
    capsys: pytest.CaptureFixture[str], argv: list[str], choices: str
) -> None:
    code, _out, err = run(capsys, *argv)
    assert code == 2 and err.endswith(f"(choose from {choices})\n")


@pytest.mark.parametrize(
    ("argv", "usage"),
    [
        (["state", "step"], "usage: session-workflow state step [-h] [--dir DIR] [--session SESSION] step\n"),
        (["anchor", "step"], "usage: session-workflow anchor step [-h] [--session SESSION] FILE TEXT\n"),
        (["tasks", "adopt"], "usage: session-workflow tasks adopt [-h] [--session SESSION] SID\n"),
        (["demo"], "usage: session-workflow demo [-h] [--keep]\n"),
    ],
)
def test_a_verbs_usage_starts_with_the_command_as_typed(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, argv: list[str], usage: str
) -> None:
    monkeypatch.setenv("COLUMNS", "200")
    code, out, _err = run(capsys, *argv, "--help")
    assert code == 0 and out.startswith(usage)


@pytest.mark.parametrize("columns", ["97", "0", "-3", "wide", None])
def test_terminal_columns_is_what_shutil_says(monkeypatch: pytest.MonkeyPatch, columns: str | None) -> None:
    if columns is None:
        monkeypatch.delenv("COLUMNS", raising=False)
    else:
        monkeypatch.setenv("COLUMNS", columns)
    assert terminal_columns() == shutil.get_terminal_size().columns


def test_terminal_columns_asks_the_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("COLUMNS", raising=False)
    monkeypatch.setattr(os, "get_terminal_size", lambda _fd=0: os.terminal_size((133, 40)))
    assert terminal_columns() == shutil.get_terminal_size().columns == 133
    monkeypatch.setattr(sys, "__stdout__", None)
    assert terminal_columns() == 80
