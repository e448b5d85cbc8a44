"""``session-workflow demo``: it runs the real hook twice and shows both injections with their true sizes."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from session_workflow.cli import demo
from session_workflow.core.text import utf16_len

BIN = Path(__file__).resolve().parents[2] / "bin" / "session-workflow"
# A heading naming the source, the injected text, and the line giving its size against the 10,000-unit cap.
INJECTION = re.compile(
    r"^=+ SessionStart \((\w+)\)[^\n]*\n(.*?)\n=+ ([\d,]+) of 10,?000 UTF-16 units =+$", re.MULTILINE | re.DOTALL
)


def test_demo_shows_the_startup_and_compact_injections_with_their_sizes() -> None:
    done = subprocess.run([sys.executable, str(BIN), "demo"], capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    injections = INJECTION.findall(done.stdout)
    assert [source for source, _text, _size in injections] == ["startup", "compact"], done.stdout
    for source, text, size in injections:
        assert int(size.replace(",", "")) == utf16_len(text) > 0
        assert text.startswith("session-workflow:") and f"({source})" in text.split("\n", 1)[0]
        # The three kinds of state the demo made, as the hook read them back from disk.
        assert "Ledger migration" in text and "ledger API" in text and "Port the invoice writer" in text
    # Only a compaction quotes the user's last prompts.
    assert [("Go ahead with the invoice writer" in text) for _source, text, _size in injections] == [False, True]


def planted(tmp_path: Path) -> tuple[Path, Path, Path]:
    """A repository folder with its own ``session_workflow/``, a ``PYTHONPATH`` folder with a ``sitecustomize.py``,
    and the folder each writes a file into when it runs."""
    repo, path = tmp_path / "repo", tmp_path / "path"
    ran = tmp_path / "ran"
    for folder, name in ((repo / "session_workflow", "__init__.py"), (path, "sitecustomize.py")):
        folder.mkdir(parents=True)
        (folder / name).write_text(f"open({str(ran / name)!r}, 'w').close()\n")
    ran.mkdir()
    return repo, path, ran


def test_the_demo_runs_no_code_of_the_folder_it_starts_in_nor_of_pythonpath(tmp_path: Path) -> None:
    """Started in a repository's folder whose ``env`` block set ``PYTHONPATH``, the demo's own CLI calls
    import neither the repository's ``session_workflow/`` nor a ``sitecustomize.py`` on that path."""
    repo, path, ran = planted(tmp_path)
    env = {**os.environ, "PYTHONPATH": str(path)}
    # As the Bash tool runs it: the script itself, whose shell line starts python3 isolated.
    done = subprocess.run(
        [str(BIN), "demo"], cwd=repo, env=env, capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr
    assert [source for source, _text, _size in INJECTION.findall(done.stdout)] == ["startup", "compact"]
    assert sorted(ran.iterdir()) == []


def test_an_installed_copys_cli_calls_run_no_code_of_the_folder_nor_of_pythonpath(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """From an installed copy (no ``bin/`` beside the package) the demo runs its CLI through ``DEMO_CLI``: isolated
    too, so the repository's folder and its ``PYTHONPATH`` stay out of it."""
    repo, path, ran = planted(tmp_path)
    monkeypatch.setattr(demo, "in_checkout", lambda: False)
    argv = demo.cli_argv("--version")
    assert str(BIN) not in argv
    argv.insert(1, "-B")  # this checkout's src stands in for site-packages: no bytecode into the plugin folder
    env = {**os.environ, "PYTHONPATH": str(path)}
    done = subprocess.run(argv, cwd=repo, env=env, capture_output=True, text=True, timeout=60, check=False)
    assert (done.returncode, done.stderr) == (0, "")
    assert done.stdout.startswith("session-workflow ")
    assert sorted(ran.iterdir()) == []
