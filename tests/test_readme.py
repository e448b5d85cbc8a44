"""Every command the README gives is one a test runs, so a renamed verb, option or id fails here.

The ``session-workflow …`` lines (the Usage block and the commands in the prose) run as ``--help`` through
``bin/session-workflow``: each verb must exist and take every option the line shows, and the Usage block must name
every verb the CLI has. The ``claude …`` commands are run with the real CLI by the e2e tests this file names
(``tests/e2e/test_quick_start.py`` runs the Quick start, ``plugin configure`` and the Uninstall from the README's
own text); the two set-up commands by ``tests/cli/test_fresh_machine.py`` (the demo) and CI itself (``.ci/run``).
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
from pathlib import Path

import pytest

from session_workflow.cli.main import GROUPS
from tests import readme

REPO = Path(__file__).resolve().parents[1]
BIN = REPO / "bin" / "session-workflow"
VERB = re.compile(r"[a-z][a-z-]*")
OPTION = re.compile(r"--[a-z][a-z-]*")
#: Each ``claude …`` command the README gives, and the test that runs it with the real CLI.
CLAUDE_COMMANDS = {
    "claude plugin marketplace add /path/to/session-workflow": "tests/e2e/test_quick_start.py",
    "claude plugin install session-workflow@session-workflow": "tests/e2e/test_quick_start.py",
    "claude plugin configure session-workflow@session-workflow": "tests/e2e/test_quick_start.py",
    "claude plugin uninstall session-workflow@session-workflow": "tests/e2e/test_quick_start.py",
    "claude plugin marketplace remove session-workflow": "tests/e2e/test_quick_start.py",
    "claude plugin list": "tests/e2e/test_quick_start.py",  # the pasted-over settings: "✘ disabled"
    'claude -p "/session-workflow:compaction-survival Migrate the billing service" --permission-mode acceptEdits'
    ' --allowedTools "Bash(session-workflow:*)"': "tests/e2e/test_quick_start.py",
    "claude --plugin-dir /path/to/session-workflow": "tests/e2e/harness.py",  # every other e2e test runs so
    'claude --allowedTools "Bash(session-workflow:*)"': "tests/e2e/test_fresh_machine.py",
    "claude --debug": "tests/e2e/harness.py",  # --debug-file: the hook runs the debug log names
}


def split_verbs(words: list[str]) -> list[tuple[list[str], list[str]]]:
    """One README line (``session-workflow state pause | resume | show [--json]``) as (verb, options) pairs: a
    group and at most one verb under it, the options the line shows for each alternative."""
    group: list[str] = []
    found: list[tuple[list[str], list[str]]] = []
    for part in " ".join(shlex.quote(word) for word in words[1:]).split(" '|' "):
        tokens = shlex.split(part)
        verb: list[str] = []
        for token in tokens:
            if not VERB.fullmatch(token) or len(group + verb) == 2:
                break
            verb.append(token)
        group = group or verb[:1]
        whole = verb if verb[:1] == group else group + verb
        found.append((whole, [option for token in tokens for option in OPTION.findall(token)]))
    return found


def readme_cli_lines() -> list[list[str]]:
    """The Usage block's lines and every ``session-workflow …`` command in the README's prose, as words."""
    prose = re.findall(r"`((?:/path/to/session-workflow/bin/)?session-workflow [^`]+)`", readme.README.read_text())
    commands = [shlex.split(command.replace("/path/to/session-workflow/bin/", "")) for command in prose]
    return readme.usage_lines() + commands


def package_cli_lines() -> list[list[str]]:
    """The ``session-workflow …`` lines of the wheel's own description (``references/python-package.md``)."""
    text = (REPO / "references" / "python-package.md").read_text(encoding="utf-8")
    lines = [shlex.split(line, comments=True) for block in readme.indented(text) for line in block.splitlines()]
    return [words for words in lines if words[:1] == ["session-workflow"]]


def run_help(verb: list[str], home: Path) -> str:
    env = {"PATH": os.environ["PATH"], "HOME": str(home), "LANG": "C.UTF-8"}
    done = subprocess.run([str(BIN), *verb, "--help"], capture_output=True, text=True, env=env, timeout=60)
    assert (done.returncode, done.stderr) == (0, ""), (verb, done.stderr)
    return done.stdout


def verb_names(help_text: str) -> list[str]:
    """The verbs a group's ``--help`` lists under its positional argument."""
    listing = help_text.split("positional arguments:\n", 1)[1].split("\n\n", 1)[0]
    return re.findall(r"^    ([a-z][a-z-]*)", listing, re.MULTILINE)


def test_the_readme_lines_are_read_as_verbs_and_options() -> None:
    line = ["session-workflow", "state", "pause", "|", "resume", "|", "show", "[--json]"]
    assert split_verbs(line) == [(["state", "pause"], []), (["state", "resume"], []), (["state", "show"], ["--json"])]
    step = ["session-workflow", "state", "step", "execute"]  # the step is a word of the user's, not a verb
    assert split_verbs(step) == [(["state", "step"], [])]
    assert split_verbs(["session-workflow", "doctor", "[--dir", "DIR]"]) == [(["doctor"], ["--dir"])]


@pytest.mark.parametrize("words", readme_cli_lines() + package_cli_lines(), ids=" ".join)
def test_each_readme_cli_line_names_a_verb_that_takes_its_options(words: list[str], tmp_path: Path) -> None:
    for verb, options in split_verbs(words):
        shown = run_help(verb, tmp_path)
        usage = shown.split("\n\n", 1)[0]
        assert usage.startswith(f"usage: session-workflow {' '.join(verb)} "), (verb, usage)
        assert [option for option in options if option not in usage] == [], (verb, usage)


def test_the_usage_block_names_every_verb_of_the_cli(tmp_path: Path) -> None:
    named = {" ".join(verb) for words in readme.usage_lines() for verb, _ in split_verbs(words)}
    missing = []
    for group in GROUPS:
        shown = run_help([group], tmp_path)
        verbs = verb_names(shown) if "positional arguments:\n" in shown else []
        missing += [f"{group} {verb}" for verb in verbs if f"{group} {verb}" not in named]
        missing += [group] if not verbs and group not in named else []
    assert missing == []


def test_each_claude_command_of_the_readme_is_run_by_a_test() -> None:
    text = readme.README.read_text(encoding="utf-8")
    blocks = [body for _, body, _ in readme.fenced(text)] + readme.indented(text)
    lines = [line.strip() for body in blocks for line in body.splitlines()]
    given = {line for line in lines if line.startswith("claude ")}
    given |= set(re.findall(r"`(claude [^`]+)`", text))
    given |= {f"claude --allowedTools {value}" for value in re.findall(r'`--allowedTools ("[^"]+")`', text)}
    assert given == set(CLAUDE_COMMANDS)
    for command, test in CLAUDE_COMMANDS.items():
        source = (REPO / test).read_text(encoding="utf-8")
        word = "configure" if "configure" in command else shlex.split(command)[1]
        assert word in source, (command, test)
    quick_start = (REPO / "tests" / "e2e" / "test_quick_start.py").read_text(encoding="utf-8")
    for title in ("Quick start", "Unattended runs", "Configuration", "Uninstall"):
        assert f'readme.section("{title}")' in quick_start
    piped = [line for line in lines if "| claude " in line]  # a claude command fed on stdin: run as written
    assert piped and all(line.split("| ", 1)[1].startswith("claude plugin configure") for line in piped), piped
    assert "--values-stdin" in quick_start


def test_the_readme_stays_within_12_kb() -> None:
    size = len(readme.README.read_bytes())
    assert size <= 12 * 1024, f"README.md is {size} bytes: move depth to references/"


def test_the_set_up_commands_are_the_ones_the_suite_runs() -> None:
    (block,) = readme.indented(readme.section("Developing"))
    commands = [line.split("#", 1)[0].strip() for line in block.splitlines()]
    assert commands == ["./bin/session-workflow demo", "bash .ci/run"]
    assert 'str(BIN), "demo"' in (REPO / "tests" / "cli" / "test_fresh_machine.py").read_text(encoding="utf-8")
    assert (REPO / ".ci" / "run").is_file()
