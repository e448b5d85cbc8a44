"""``benchmarks/mod_tool_call.py`` on a tiny run, so the mod's per-tool-call benchmark cannot rot (no timing)."""

from __future__ import annotations

import subprocess
import sys

import pytest

from .harness import REPO_ROOT

pytestmark = pytest.mark.e2e


def test_every_scenario_is_timed_with_and_without_the_mod() -> None:
    argv = [sys.executable, str(REPO_ROOT / "benchmarks" / "mod_tool_call.py"), "--calls", "3", "--rounds", "1"]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    rows = [line for line in done.stdout.splitlines() if line.startswith("| ") and not line.startswith("| scenario")]
    keys = [row.split("|")[1].strip().split(":")[0] for row in rows]
    assert keys == ["anchor-less", "kept-below", "kept-above", "subagent", "writer"], done.stdout
