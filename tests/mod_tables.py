"""The TypeScript tables the mod's tests read (``tests/mod/python-*.ts``), generated from what Python gives."""

from __future__ import annotations

import json
import os
from pathlib import Path


def check_mod_table(path: Path, name: str, header: str, cases: object) -> None:
    """Hold the table at ``path`` (``header``, then ``export const NAME = <cases as JSON>``) to what Python gives
    now, so the mod's test and Python's cannot drift apart; SESSION_WORKFLOW_UPDATE_GOLDEN=1 writes it anew."""
    text = f"{header}export const {name} = {json.dumps(cases, ensure_ascii=True, indent=2)}\n"
    if os.environ.get("SESSION_WORKFLOW_UPDATE_GOLDEN") == "1":
        path.write_text(text, encoding="ascii")
    assert path.read_text(encoding="ascii") == text
