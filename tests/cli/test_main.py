"""The top level of the CLI: --version, the help written for users, only the invoked group's module imported,
and the import hook every entry installs."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from session_workflow import __version__
from session_workflow.cli import main as cli
from session_workflow.core.places import Places
from tests.shell import shown_whole

REPO = Path(__file__).resolve().parents[2]
SRC = REPO / "src"


@pytest.mark.parametrize("name", ["demo", "doctor", "inject", "anchor", "state", "tasks"])
def test_the_top_level_help_is_the_same_whichever_group_is_invoked(name: str) -> None:
    assert cli.build_parser([name]).format_help() == cli.build_parser(["--help"]).format_help()


def modules_after(argv: list[str]) -> set[str]:
    """The modules a fresh interpreter holds once the CLI has built its parser for ``argv`` and parsed it."""
    code = (
        f"import sys; sys.path.insert(0, {str(SRC)!r}); from session_workflow.cli import main\n"
        f"try:\n    main.build_parser({argv!r}).parse_args({argv!r})\nexcept SystemExit:\n    pass\n"
        "print(' '.join(sorted(sys.modules)))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return set(done.stdout.split())


@pytest.mark.parametrize(
    ("argv", "group"),
    [
        (["state", "step", "verify"], "state"),
        (["anchor", "list"], "anchor"),
        (["inject", "--dry-run"], "inject"),
        (["demo", "--help"], "demo"),
        (["doctor"], "doctor"),
        (["--help"], None),
        (["nonsense"], None),
    ],
)
def test_only_the_invoked_group_is_imported(argv: list[str], group: str | None) -> None:
    imported = {name for name in modules_after(argv) if name.startswith("session_workflow.cli.")}
    expected = {"session_workflow.cli.main", "session_workflow.cli.parser"}
    if group:
        expected.add(f"session_workflow.cli.{group}")
    assert set(imported) >= expected
    assert not {f"session_workflow.cli.{other}" for other in cli.GROUPS if other != group} & set(imported)


@pytest.mark.parametrize(
    "argv", [["state", "step", "verify"], ["anchor", "step", "F", "done: x"], ["state", "show", "--json"]]
)
def test_a_writer_imports_no_shutil(argv: list[str]) -> None:
    assert "shutil" not in modules_after(argv)


def test_an_unknown_group_is_the_usual_one_line_error(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_:
        cli.main(["nonsense"])
    assert exit_.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1].startswith("session-workflow: error: argument GROUP: invalid choice: 'nonsense'")


def test_version_is_the_packages(capsys: pytest.CaptureFixture[str]) -> None:
    """The manifests and the built wheel agree with it: tests/test_packaging.py."""
    with pytest.raises(SystemExit) as done:
        cli.main(["--version"])
    assert done.value.code == 0 and capsys.readouterr().out == "session-workflow 0.1.0\n"


def test_the_help_names_every_group_with_an_example(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        cli.main(["--help"])
    out = capsys.readouterr().out
    assert out.startswith("usage: session-workflow [-h] [--version] [--debug] GROUP ...\n\nKeep a long Claude Code run")
    assert '"""' not in out and "argparse" not in out
    for group in ("demo", "doctor", "inject", "anchor", "state", "tasks"):
        assert re.search(rf"^  {group} +\S.*\n +e\.g\. session-workflow {group}\b", out, re.M), group
    for name in cli.GROUPS:  # the static table names the groups that exist
        with pytest.raises(SystemExit) as done:
            cli.main([name, "--help"])
        assert done.value.code == 0


def _broken_command(monkeypatch: pytest.MonkeyPatch) -> None:
    """The parsed command's handler raises what no handler expects (a bug)."""
    import argparse

    def broken(args: argparse.Namespace, places: Places) -> int:
        raise ZeroDivisionError("a bug in state show")

    class Parser:
        def parse_args(self, arguments: list[str]) -> argparse.Namespace:
            return argparse.Namespace(run=broken)

    monkeypatch.setattr(cli, "build_parser", lambda arguments: Parser())


@pytest.mark.parametrize("debug", [False, True])
def test_an_unexpected_error_is_one_line_logged_and_with_debug_its_traceback(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], debug: bool, private_state_dir: Path
) -> None:
    from session_workflow.core import errorlog

    _broken_command(monkeypatch)
    code = cli.main(["--debug", "state", "show", "--json"] if debug else ["state", "show", "--json"])
    err = capsys.readouterr().err.splitlines()
    log = shown_whole(str(private_state_dir / "session-workflow" / "errors.jsonl"))
    said = f"a bug, recorded in {log}: `session-workflow doctor` shows it"
    # A bug exits 70 (sysexits' EX_SOFTWARE), never an expected failure's 1, and its line says where it went.
    assert code == 70 and err[-1] == f"session-workflow: failed (ZeroDivisionError): a bug in state show; {said}"
    if debug:
        assert err[0] == "Traceback (most recent call last):" and err[-2] == "ZeroDivisionError: a bug in state show"
    else:
        assert len(err) == 1
    (entry,) = errorlog.entries(Places({"XDG_STATE_HOME": str(private_state_dir)}))
    assert (
        entry["where"] == "session-workflow state show" and entry["error"] == "ZeroDivisionError: a bug in state show"
    )


def test_debug_is_in_the_help_and_changes_nothing_else(
    capsys: pytest.CaptureFixture[str], private_state_dir: Path
) -> None:
    with pytest.raises(SystemExit):
        cli.main(["--debug", "--version"])
    assert capsys.readouterr().out == f"session-workflow {__version__}\n"
    with pytest.raises(SystemExit):
        cli.main(["--help"])
    assert "--debug     print the traceback of an unexpected error" in capsys.readouterr().out
    assert not (private_state_dir / "session-workflow").exists()
