"""Fixtures for the end-to-end tests (``pytest -m e2e tests/e2e``).

* ``claude_bin`` (session): the native Claude Code binary, installed on first
  use by ``tools/install_claude_cli.sh``.  If it cannot be installed the tests
  FAIL with the installer's output; nothing is skipped.
* ``fake_api``: a fresh :class:`~fake_api.FakeAnthropic` on 127.0.0.1, stopped
  after the test.
* ``claude``: a :class:`~harness.Claude` sandbox in ``tmp_path`` (own HOME,
  CLAUDE_CONFIG_DIR, TMPDIR and project directory) wired to ``fake_api`` and
  loading this repository as a plugin (``--plugin-dir <repo>``).

No onboarding, trust or API-key prompt appears in ``-p`` mode with an empty
config dir and ``ANTHROPIC_API_KEY`` set, so no settings are written.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from .fake_api import FakeAnthropic
from .harness import Claude, ClaudeUnavailable, locate_claude

_install_error: list[str] = []


@pytest.fixture(scope="session")
def claude_bin() -> Path:
    if _install_error:
        pytest.fail(_install_error[0], pytrace=False)
    try:
        return locate_claude()
    except ClaudeUnavailable as exc:
        _install_error.append(f"Claude Code CLI unavailable, e2e tests cannot run:\n{exc}")
        pytest.fail(_install_error[0], pytrace=False)


@pytest.fixture
def fake_api() -> Iterator[FakeAnthropic]:
    with FakeAnthropic() as api:
        yield api


@pytest.fixture
def claude(claude_bin: Path, fake_api: FakeAnthropic, tmp_path: Path) -> Iterator[Claude]:
    sandbox = Claude(binary=claude_bin, api=fake_api, root=tmp_path)
    yield sandbox
    leaks = fake_api.leaks()
    assert not leaks, f"Claude Code tried to reach non-loopback hosts: {[r['path'] for r in leaks]}"
