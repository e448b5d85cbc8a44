"""A marketplace install from a checkout (measured on 2.1.332): what it copies, and the options it shows.

``claude plugin install`` from a directory marketplace copies the plugin folder whole, ignored files included
(only ``.git`` is left out), so the dev caches live outside it: tox's work dir and the test CLI go to the dev
cache (``$SESSION_WORKFLOW_DEV_CACHE``). The first test's checkout is the repository's tracked files after the CLI
installer has run in it, as the tests run it; the second installs from this checkout itself, after whatever ran
in it before (in ``bash .ci/run``: the unit envs of 3.10-3.13, the e2e tests before this file, and whatever of
3.9's suite, the stress slice, lint, type, layout and validate runs beside e2e).
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from tools.checkout import checkout_files, copy_checkout

from .harness import REPO_ROOT, Claude

pytestmark = pytest.mark.e2e


def tracked_files(others: bool = False) -> list[str]:
    """The checkout's tracked files (``others``: and the untracked ones git would add) that are in the work tree."""
    names = checkout_files(str(REPO_ROOT), others)
    assert names is not None, f"{REPO_ROOT} is no git checkout"
    return names


def installed_copy(claude: Claude) -> Path:
    version = json.loads((REPO_ROOT / ".claude-plugin" / "plugin.json").read_text(encoding="utf-8"))["version"]
    return claude.config_dir / "plugins" / "cache" / "session-workflow" / "session-workflow" / str(version)


def test_install_copies_no_dev_cache_and_shows_the_options(claude: Claude, claude_bin: Path, tmp_path: Path) -> None:
    checkout = tmp_path / "checkout"
    files = tracked_files()
    copy_checkout(str(REPO_ROOT), str(checkout), others=False)
    dev_cache = tmp_path / "dev-cache"
    dev_cache.mkdir()
    (dev_cache / "claude-cli").symlink_to(claude_bin.parents[3])  # <prefix>/node_modules/<pkg>/claude
    env = {**claude.env(), "SESSION_WORKFLOW_DEV_CACHE": str(dev_cache)}
    installer = subprocess.run(
        ["bash", str(checkout / "tools" / "install_claude_cli.sh")],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert installer.returncode == 0, installer.stderr
    assert installer.stdout.strip().startswith(str(dev_cache)) and not (checkout / ".cache").exists()
    work_dir = next(line for line in (checkout / "tox.ini").read_text().splitlines() if line.startswith("work_dir"))
    assert work_dir.split("=", 1)[1].strip().startswith("{env:SESSION_WORKFLOW_DEV_CACHE:")

    claude.run(["plugin", "marketplace", "add", str(checkout)]).check()
    installed = claude.run(["plugin", "install", "session-workflow@session-workflow"]).check()
    options = json.loads((checkout / ".claude-plugin" / "plugin.json").read_text())["userConfig"]
    assert len(options) == 6 and "6 userConfig options not yet set" in installed.stdout + installed.stderr
    copy = installed_copy(claude)
    copied = sorted(str(p.relative_to(copy)) for p in copy.rglob("*") if p.is_file())
    assert copied == sorted(files)

    shown = claude.run(["plugin", "configure", "session-workflow@session-workflow"]).check().stdout
    assert "anchor_hooks — Re-inject the control anchor" in shown
    assert "startup_window_hours — Startup window (hours)" in shown
    assert "nudge_margin — Checkpoint nudge margin" in shown
    assert "stale_minutes — Stale cursor after (minutes)" in shown
    assert "status_line — Show the run's state on the status line" in shown


def test_an_install_from_this_checkout_after_the_suite_copies_exactly_its_files(claude: Claude) -> None:
    # The files a developer has not added yet are theirs to mind; an ignored one (a cache, a build) is a leak.
    files = tracked_files(others=True)
    claude.run(["plugin", "marketplace", "add", str(REPO_ROOT)]).check()
    claude.run(["plugin", "install", "session-workflow@session-workflow"]).check()
    copy = installed_copy(claude)
    # Claude Code writes its mod typings into the folder it loads a mod from (``.claude-plugin/types/``, with a
    # ``.gitignore`` of its own) whenever an e2e test or ``claude plugin test`` loads this checkout: its own
    # artifact, rewritten at each load, never the plugin's.
    generated = ".claude-plugin/types/"
    copied = sorted(
        name
        for name in (str(path.relative_to(copy)) for path in copy.rglob("*") if path.is_file())
        if not name.startswith(generated)
    )
    assert [name for name in copied if name not in files] == []
    assert copied == [name for name in files if not name.startswith(generated)]
