"""The pre-commit configuration runs ruff's check and format at the version tox's lint env pins, so a commit that
passes the hook passes CI's lint (read offline: nothing is fetched)."""

from __future__ import annotations

import configparser
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[2]


def test_the_hooks_are_ruff_check_and_format_at_the_lint_envs_pin() -> None:
    config = yaml.safe_load((REPO / ".pre-commit-config.yaml").read_text(encoding="utf-8"))
    hooks = [hook for repo in config["repos"] for hook in repo["hooks"]]
    assert [hook["entry"].split()[:2] for hook in hooks] == [["ruff", "check"], ["ruff", "format"]]
    tox = configparser.ConfigParser(interpolation=None)
    tox.read(REPO / "tox.ini", encoding="utf-8")
    pin = tox["testenv:lint"]["deps"].strip()
    assert pin.startswith("ruff==")
    assert all(hook["additional_dependencies"] == [pin] for hook in hooks)
    assert all("--force-exclude" in hook["entry"] for hook in hooks)  # vendor/ stays out, as in tox
