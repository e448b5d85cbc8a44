"""tools/checkout.py: the mutation tools' copy holds what a commit would, never an ignored 4 GB workload."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from tools import checkout


def git(root: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True)


def test_the_copy_holds_tracked_and_new_files_and_leaves_out_ignored_and_deleted(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    (root / "src").mkdir(parents=True)
    git(root, "init", "-q")
    (root / ".gitignore").write_text("results/\n*.egg-info/\n", encoding="utf-8")
    (root / "src" / "kept.py").write_text("kept\n", encoding="utf-8")
    (root / "src" / "gone.py").write_text("gone\n", encoding="utf-8")
    (root / "tool.sh").write_text("#!/bin/sh\n", encoding="utf-8")
    (root / "tool.sh").chmod(0o755)
    git(root, "add", ".")
    (root / "src" / "gone.py").unlink()  # deleted in the work tree, still in the index
    (root / "src" / "new.py").write_text("new, not yet added\n", encoding="utf-8")
    os.symlink("kept.py", root / "src" / "link.py")
    for ignored in ("results/workload/big.bin", "src/pkg.egg-info/PKG-INFO"):
        (root / ignored).parent.mkdir(parents=True, exist_ok=True)
        (root / ignored).write_text("ignored\n", encoding="utf-8")

    target = tmp_path / "copy"
    checkout.copy_checkout(str(root), str(target))
    copied = sorted(str(path.relative_to(target)) for path in target.rglob("*") if not path.is_dir())
    assert copied == [".gitignore", "src/kept.py", "src/link.py", "src/new.py", "tool.sh"]
    assert os.readlink(target / "src" / "link.py") == "kept.py"
    assert os.access(target / "tool.sh", os.X_OK)


def test_outside_git_the_tree_is_copied_but_for_the_caches(tmp_path: Path) -> None:
    root = tmp_path / "archive"
    for name in ("src/a.py", "src/__pycache__/a.pyc", ".mypy_cache/x", "README.md"):
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text("x\n", encoding="utf-8")
    target = tmp_path / "copy"
    checkout.copy_checkout(str(root), str(target))
    copied = sorted(str(path.relative_to(target)) for path in target.rglob("*") if not path.is_dir())
    assert copied == ["README.md", "src/a.py"]
