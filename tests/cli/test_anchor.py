"""``session-workflow anchor`` listings: stdout is exactly the list; an empty one says so on stderr."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from session_workflow.cli import main as cli


@pytest.mark.parametrize(
    ("listing", "said"),
    [
        ("list", "no open anchors in {folder}"),
        ("list-dormant", "no dormant anchors (open, untouched > 72 h) in {folder}"),
        ("list-stale", "no open anchor in {folder} is marked done in its content"),
    ],
)
def test_an_empty_listing_says_so(tmp_path: Path, capsys: pytest.CaptureFixture[str], listing: str, said: str) -> None:
    folder = tmp_path / ".claude" / "anchors"
    folder.mkdir(parents=True)
    assert cli.main(["anchor", listing, str(tmp_path)]) == 0
    out, err = capsys.readouterr()
    assert (out, err) == ("", f"session-workflow: {said.format(folder=folder)}\n")


def test_a_listing_with_rows_prints_only_them(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = tmp_path / ".claude" / "anchors"
    folder.mkdir(parents=True)
    anchor = folder / "2026-01-01-old.md"
    anchor.write_text("---\nformat: anchor/v1\n---\n# Mission\nx\n\n## Cursor\n- Next action: y\n")
    then = time.time() - 100 * 3600
    os.utime(anchor, (then, then))
    assert cli.main(["anchor", "list-dormant", str(tmp_path)]) == 0
    out, err = capsys.readouterr()
    assert err == "" and out.startswith("`2026-01-01-old.md`  100h  ")
