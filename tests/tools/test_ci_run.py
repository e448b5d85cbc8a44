""".ci/run: under CI=true an interpreter tox cannot find fails the run, and a failing step never ends the run
green nor stops the steps after it (tox and the CLI installer are stubs here: nothing is installed or run)."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
STUB_TOX = """#!/bin/sh
case "$*" in *-l) sed -n 's/^envlist = //p' tox.ini | tr -d ' ' | tr , '\\n'; exit 0 ;; esac
printf '%s\\n' "$*" >> "$TOX_CALLS"
case "$*" in *"$TOX_FAILS"*) exit 1 ;; esac
"""


def run_ci(
    tmp_path: Path, *args: str, ci: str | None, fails: str = "no step", added: str = ""
) -> tuple[int, list[str]]:
    root = tmp_path / "checkout"
    (root / ".ci").mkdir(parents=True)
    (root / "tools").mkdir()
    shutil.copy2(REPO / ".ci" / "run", root / ".ci" / "run")
    tox_ini = (REPO / "tox.ini").read_text(encoding="utf-8")
    (root / "tox.ini").write_text(tox_ini.replace("\nenvlist = ", f"\nenvlist = {added}", 1), encoding="utf-8")
    (root / "tools" / "install_claude_cli.sh").write_text("exit 0\n", encoding="utf-8")
    cache = tmp_path / "cache"
    tox = cache / "ci-venv" / "bin" / "tox"
    tox.parent.mkdir(parents=True)
    tox.write_text(STUB_TOX, encoding="utf-8")
    tox.chmod(0o755)
    calls = tmp_path / "calls"
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(tmp_path),
        "SESSION_WORKFLOW_DEV_CACHE": str(cache),
        "TOX_CALLS": str(calls),
        "TOX_FAILS": fails,
    }
    if ci is not None:
        env["CI"] = ci
    done = subprocess.run(
        ["bash", str(root / ".ci" / "run"), *args], env=env, capture_output=True, text=True, timeout=60, check=False
    )
    return done.returncode, calls.read_text(encoding="utf-8").splitlines()


def test_under_ci_a_missing_interpreter_fails_the_run(tmp_path: Path) -> None:
    assert run_ci(tmp_path, "-e", "py313", ci="true") == (0, ["--skip-missing-interpreters false -e py313"])


def test_a_developer_keeps_toxs_skip(tmp_path: Path) -> None:
    assert run_ci(tmp_path, "-e", "py313", ci=None) == (0, ["-e py313"])


def test_every_step_runs_and_one_failing_fails_the_run(tmp_path: Path) -> None:
    code, calls = run_ci(tmp_path, ci="true", fails="py310,py311")
    assert code == 1
    assert len(calls) == 3 and all(call.startswith("--skip-missing-interpreters false ") for call in calls)
    envs = sorted(env for call in calls for env in call.rsplit(" -e ", 1)[1].split(","))
    listed = next(line for line in (REPO / "tox.ini").read_text(encoding="utf-8").splitlines() if "envlist" in line)
    assert envs == sorted(name.strip() for name in listed.split("=", 1)[1].split(","))  # all of tox's envlist


def test_an_env_no_step_names_runs_last(tmp_path: Path) -> None:
    code, calls = run_ci(tmp_path, ci=None, added="newcomer, ")
    assert code == 0 and len(calls) == 4 and calls[-1] == "-e newcomer"
