"""No name reaches a terminal raw. Every CLI verb, run through ``bin/session-workflow`` in a
sandbox whose project folder and anchor file names hold an ESC sequence, a newline, a bidi override, a BEL and an
undecodable byte (in a listed file's name), prints no control or invisible character but the line ends, and no
preface gains a line.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from session_workflow.core.text import has_invisible

from .sandbox import REPO
from .test_cli_inputs import cli_env

BIN = str(REPO / "bin" / "session-workflow")
SESSION = "s-33"
# A repository-chosen folder and file names: what a clone or an unpacked archive can carry.
FOLDER = "shop\x1b[31m red\n\u202eevil\x07;$(x)"
# A name with an undecodable byte, which no argument can carry (the CLI refuses one): listed, never named by hand.
UNDECODABLE = "raw\udcff\x1b[2Jbyte.md"
PLANTED = "planted\x1b]0;pwned\x07\nNOT CREATED HERE: trust me\u2066.md"
ANCHOR = """---
format: anchor/v1
step: 0
---
# Hostile \x1b[2J run

## Cursor
- Next action: go on

## Resume steps
1. Read it.

<!-- anchor:tail -->

## Decisions log
- kept
"""


def raw_hidden(text: str) -> list[str]:
    """The characters of ``text`` a terminal acts on or a reader cannot see (the line end aside)."""
    return sorted({char for char in text if char != "\n" and (not char.isprintable() or has_invisible(char))})


class Cli:
    """``bin/session-workflow`` in the sandbox, every output kept."""

    def __init__(self, root: Path, project: Path) -> None:
        self.env = {**cli_env(str(root)), "CLAUDE_CODE_SESSION_ID": SESSION}
        self.project = project
        self.outputs: list[tuple[list[str], str]] = []

    def __call__(self, *argv: str, stdin: str = "", cwd: Path | None = None) -> str:
        done = subprocess.run(
            [sys.executable, BIN, *argv],
            input=stdin.encode("utf-8"),
            capture_output=True,
            cwd=os.fsencode(cwd or self.project),
            env=self.env,
            timeout=60,
        )
        assert b"Traceback" not in done.stderr, done.stderr.decode("utf-8", "replace")
        shown = (done.stdout + done.stderr).decode("utf-8", "surrogateescape")
        self.outputs.append((list(argv), shown))
        return shown


def test_every_command_escapes_every_name_it_shows(tmp_path: Path) -> None:
    project = tmp_path / FOLDER
    project.mkdir()
    cli = Cli(tmp_path, project)
    folder = project / ".claude" / "anchors"
    p = str(project)
    cli("anchor", "new", "--task", "Hostile \x1b[2J run", "--dir", p)
    (own,) = [str(path) for path in folder.iterdir() if path.suffix == ".md"]
    cli("anchor", "step", own, "done: x\x1b[1A; next: y")
    cli("anchor", "write", own, stdin=ANCHOR.replace("step: 0", "step: 1"))
    for argv in (["show", own], ["show", "--all", own], ["show"], ["path"], ["list", p], ["list-dormant", p]):
        cli("anchor", *argv)
    cli("anchor", "list-stale", p)
    cli("anchor", "head-fit", own)
    planted = folder / PLANTED
    planted.write_text(ANCHOR, encoding="utf-8")
    untrusted = cli("anchor", "show", str(planted))
    assert untrusted.startswith("NOT CREATED HERE: ") and "\\x0aNOT CREATED HERE: trust me" in untrusted.split("\n")[0]
    cli("anchor", "step", str(planted), "x")
    cli("anchor", "adopt", str(planted))
    planted.write_text(ANCHOR.replace("go on", "changed by hand"), encoding="utf-8")
    changed = cli("anchor", "show", "--all", str(planted))
    assert changed.startswith("CHANGED OUTSIDE THE WRITERS: ") and "trust me" in changed.split("\n")[0]
    cli("anchor", "step", str(planted), "x")
    cli("anchor", "write", str(planted), stdin=ANCHOR)
    cli("anchor", "restore", str(planted))
    cli("anchor", "restore", "--force", str(planted))
    cli("anchor", "write", own, stdin=ANCHOR.replace("step: 0", "step: 2").replace("go on", "status: done"))
    cli("anchor", "close", "--stale", "--dir", p)
    cli("anchor", "close", str(planted), "--outcome", "landed \x1b[0m")
    cli("anchor", "close", "--stale", "--yes", "--dir", p)
    (folder / UNDECODABLE).write_text(ANCHOR, encoding="utf-8")
    assert "raw\\xff\\x1b[2Jbyte.md" in cli("anchor", "list", p)
    cli("anchor", "head-fit", str(folder / "gone\x1b.md"))
    state = ["--dir", p]
    cli("state", "set", *state, "--ticket", "33", "--title", "t\x1b[2J", "--map", "none", "--session", SESSION)
    for action in (["step", "execute\x1b"], ["pause"], ["resume"], ["show"], ["show", "--json"], ["adopt"], ["clear"]):
        cli("state", action[0], *state, *action[1:])
    cli("state", "show", *state)
    cli("tasks", "adopt", "gone-list")
    cli("inject", "--dry-run", "--source", "compact", "--cwd", p)
    cli("inject", "--dry-run", "--cwd", p + "/missing\x1b")
    cli("log")
    cli("doctor")
    assert len(cli.outputs) > 30
    leaks = [(argv, [line for line in shown.splitlines() if raw_hidden(line)]) for argv, shown in cli.outputs]
    assert not [leak for leak in leaks if leak[1]], [leak for leak in leaks if leak[1]]
    # The names did reach the output, escaped: the sweep looked at lines that name them.
    assert any("shop\\x1b[31m red\\x0a\\u202eevil\\x07;$(x)" in shown for _argv, shown in cli.outputs)
