"""CLI bad inputs: one line on stderr, a non-zero exit, never a traceback.

The fuzz fills each command's DIR or FILE argument with a generated bad value (bytes that are not UTF-8, a path
that does not exist and may hold control characters or a newline, the wrong kind of file, nothing at all) and
runs the real ``bin/session-workflow``; every command is also run from a working directory deleted under it.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile

import pytest
from hypothesis import given
from hypothesis import strategies as st

from .sandbox import REPO
from .sizes import Size, Tally

BIN = str(REPO / "bin" / "session-workflow")
SLOT = "{}"
# Each command with the argument the fuzz fills in, and whether that argument names a directory or a file.
COMMANDS = (
    (("anchor", "list", SLOT), "dir"),
    (("anchor", "list-dormant", SLOT), "dir"),
    (("anchor", "list-stale", SLOT), "dir"),
    (("anchor", "new", "--task", "t", "--dir", SLOT), "dir"),
    (("anchor", "close", "--stale", "--dir", SLOT), "dir"),
    (("anchor", "head-fit", SLOT), "file"),
    (("anchor", "step", SLOT, "did it"), "file"),
    (("anchor", "write", SLOT), "file"),
    (("anchor", "close", SLOT, "--outcome", "done"), "file"),
    (("state", "show", "--dir", SLOT), "dir"),
    (("state", "set", "--dir", SLOT, "--ticket", "1", "--title", "t", "--map", "none", "--session", "s"), "dir"),
    (("inject", "--dry-run", "--cwd", SLOT), "dir"),
)
# Run from a deleted directory, each needs the cwd (the state commands fall back to the user state folder).
NEEDS_CWD = (
    ("anchor", "list"),
    ("anchor", "list-dormant"),
    ("anchor", "list-stale"),
    ("anchor", "path"),
    ("anchor", "new", "--task", "t"),
    ("anchor", "close", "--stale"),
    ("anchor", "step", "a.md", "x"),
    ("anchor", "write", "a.md"),
    ("anchor", "close", "a.md", "--outcome", "x"),
    ("anchor", "head-fit", "a.md"),
    ("inject", "--dry-run"),
)


def cli_env(root: str) -> dict[str, str]:
    """No session, no project, and every user folder inside ``root``."""
    env = {key: value for key, value in os.environ.items() if not key.startswith(("CLAUDE_", "SESSION_WORKFLOW_"))}
    env.update(HOME=root, XDG_STATE_HOME=os.path.join(root, "state"), XDG_DATA_HOME=os.path.join(root, "data"))
    env.update(XDG_CONFIG_HOME=os.path.join(root, "config"), CLAUDE_CONFIG_DIR=os.path.join(root, "claude"))
    return env


def check_one_line_failure(result: subprocess.CompletedProcess[bytes]) -> None:
    assert result.returncode != 0, (result.stdout, result.stderr)
    assert b"Traceback" not in result.stderr, result.stderr.decode("utf-8", "replace")
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith(b"session-workflow"), result.stderr


@st.composite
def bad_value(draw: st.DrawFn, root: str, kind: str) -> bytes:
    """A bad DIR or FILE: not UTF-8, missing (maybe with controls), the wrong kind of file, or empty."""
    name = draw(st.text(st.characters(exclude_characters="/\x00", exclude_categories=("Cs",)), max_size=12))
    odd = draw(st.sampled_from(["", "\n", "\r", "\x1b[2J", "\t", "\u2028", "\u202e", "\U000e0041"]))
    missing = os.fsencode(os.path.join(root, "missing", name + odd + name))
    invalid = draw(st.binary(min_size=1, max_size=6).map(lambda data: data.replace(b"\0", b"")).filter(_not_utf8))
    wrong = os.path.join(root, "a-file.txt" if kind == "dir" else "a-dir")
    return draw(
        st.sampled_from([os.fsencode(root) + b"/" + invalid + os.fsencode(name), missing, os.fsencode(wrong), b""])
    )


def _not_utf8(data: bytes) -> bool:
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return True
    return False


def test_bad_arguments_give_one_line(size: Size, tally: Tally) -> None:
    with tempfile.TemporaryDirectory() as root:
        os.mkdir(os.path.join(root, "a-dir"))
        with open(os.path.join(root, "a-file.txt"), "w") as handle:
            handle.write("not an anchor\n")
        env = cli_env(root)

        @size.settings(12, 300)
        @given(data=st.data(), command=st.sampled_from(COMMANDS))
        def prop(data: st.DataObject, command: tuple[tuple[str, ...], str]) -> None:
            tally.add("cli runs")
            template, kind = command
            value = data.draw(bad_value(root, kind))
            argv = [value if part == SLOT else os.fsencode(part) for part in template]
            result = subprocess.run(
                [os.fsencode(sys.executable), os.fsencode(BIN), *argv],
                input=b"",
                capture_output=True,
                cwd=root,
                env=env,
                timeout=60,
            )
            check_one_line_failure(result)

        prop()


@pytest.mark.parametrize("argv", NEEDS_CWD, ids=" ".join)
def test_a_deleted_working_directory_gives_one_line(argv: tuple[str, ...], tally: Tally) -> None:
    tally.add("cli runs")
    with tempfile.TemporaryDirectory() as root:
        gone = os.path.join(root, "gone")
        os.mkdir(gone)
        script = 'cd "$1" && rmdir "$1" && shift && exec "$@"'
        result = subprocess.run(
            ["sh", "-c", script, "sh", gone, sys.executable, BIN, *argv],
            input=b"",
            capture_output=True,
            env=cli_env(root),
            timeout=60,
        )
        check_one_line_failure(result)
        assert b"the current directory no longer exists" in result.stderr or b"no such anchor" in result.stderr
