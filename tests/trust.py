"""Vouch for an anchor a test wrote by hand, as ``session-workflow anchor adopt`` would."""

from __future__ import annotations

import os

from session_workflow.anchor.writer import vouch_as_read
from session_workflow.core.places import Places

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from pathlib import Path


def state_env() -> dict[str, str]:
    """The environment keys that locate this test's registry (``tests/conftest.py`` gives each test its own)."""
    return {"XDG_STATE_HOME": os.environ["XDG_STATE_HOME"]}


def trust(path: str | Path, env: Mapping[str, str] | None = None, session: str | None = None) -> None:
    """Record ``path`` as this machine's anchor, as it is now, its kind too (call it after the last write or utime)."""
    vouch_as_read(str(path), Places(env if env is not None else state_env()), session, "adopt", 0.0)
