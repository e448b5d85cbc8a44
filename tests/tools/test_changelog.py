"""tools/changelog.py: the unreleased section is the fragments' user lines in issue order; a release moves them
into CHANGELOG.md above the sections already released and removes them."""

from __future__ import annotations

from pathlib import Path

import pytest

from tools import changelog

HEAD = "# Changelog\n\nUnreleased changes live in `changelog.d/`.\n"


def repo(tmp_path: Path) -> Path:
    (tmp_path / "changelog.d").mkdir()
    (tmp_path / "CHANGELOG.md").write_text(HEAD + "\n## 0.1.0 — 2026-01-02\n\n- The first.\n", encoding="utf-8")
    (tmp_path / "changelog.d" / "9.md").write_text("- Nine.\n", encoding="utf-8")
    (tmp_path / "changelog.d" / "10.md").write_text(
        "- Ten, a bullet\n  on two lines.\n\n## Contributors\n- `core/x.py`: for the reviewer.\n", encoding="utf-8"
    )
    (tmp_path / "changelog.d" / "notes.md").write_text("## Contributors\n- only for the reviewer\n", encoding="utf-8")
    return tmp_path


def test_the_section_is_every_fragments_user_lines_in_issue_order(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = repo(tmp_path)
    assert changelog.main(["--root", str(root)]) == 0
    assert capsys.readouterr().out == "## Unreleased\n\n- Nine.\n- Ten, a bullet\n  on two lines.\n"


def test_a_release_writes_the_section_above_the_released_ones_and_removes_the_fragments(tmp_path: Path) -> None:
    root = repo(tmp_path)
    assert changelog.main(["--root", str(root), "--release", "0.2.0", "--date", "2026-12-04"]) == 0
    assert (root / "CHANGELOG.md").read_text(encoding="utf-8") == (
        HEAD + "\n## 0.2.0 — 2026-12-04\n\n- Nine.\n- Ten, a bullet\n  on two lines.\n"
        "\n## 0.1.0 — 2026-01-02\n\n- The first.\n"
    )
    assert list((root / "changelog.d").iterdir()) == []
    assert changelog.main(["--root", str(root), "--release", "0.3.0"]) == 1  # nothing left to release
