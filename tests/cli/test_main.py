"""The CLI imports only the invoked group's module, and its help still lists every group as the modules say."""

from __future__ import annotations

import importlib
import subprocess
import sys
from pathlib import Path

import pytest

from session_workflow.cli import main as cli
from session_workflow.cli.parser import OneLineParser

SRC = Path(__file__).resolve().parents[2] / "src"


def eager_help() -> str:
    """The top-level help of a tree in which every group module registered itself."""
    parser = OneLineParser(prog="session-workflow", description=(cli.__doc__ or "").splitlines()[0])
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=OneLineParser)
    for module, _help in cli.GROUPS.values():
        importlib.import_module(module).register(commands)
    return parser.format_help()


def test_the_help_table_says_what_each_group_module_registers() -> None:
    assert cli.build_parser(["--help"]).format_help() == eager_help()
    for name in cli.GROUPS:
        assert cli.build_parser([name]).format_help() == eager_help()


def cli_modules_after(argv: list[str]) -> list[str]:
    code = (
        f"import sys; sys.path.insert(0, {str(SRC)!r}); from session_workflow.cli import main\n"
        f"try:\n    main.build_parser({argv!r}).parse_args({argv!r})\nexcept SystemExit:\n    pass\n"
        "print(' '.join(sorted(m for m in sys.modules if m.startswith('session_workflow.cli.'))))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return done.stdout.split()


@pytest.mark.parametrize(
    ("argv", "group"),
    [
        (["state", "step", "verify"], "state"),
        (["anchor", "list"], "anchor"),
        (["inject", "--dry-run"], "inject"),
        (["demo", "--help"], "demo"),
        (["--help"], None),
        (["nonsense"], None),
    ],
)
def test_only_the_invoked_group_is_imported(argv: list[str], group: str | None) -> None:
    imported = cli_modules_after(argv)
    expected = {"session_workflow.cli.main", "session_workflow.cli.parser"}
    if group:
        expected.add(f"session_workflow.cli.{group}")
    assert set(imported) - {"session_workflow.cli.bootstrap"} >= expected
    assert not {f"session_workflow.cli.{other}" for other in cli.GROUPS if other != group} & set(imported)


def test_an_unknown_group_is_the_usual_one_line_error(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_:
        cli.main(["nonsense"])
    assert exit_.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1].startswith("session-workflow: error: argument COMMAND: invalid choice: 'nonsense'")
