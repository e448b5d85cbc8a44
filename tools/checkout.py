"""A copy of the checkout as a commit of it would hold it, for the tools that change code in a copy.

Only the files git tracks or would add (``git ls-files --cached --others --exclude-standard``): nothing it
ignores, so no benchmark workload (4 GB), tox env, egg-info or cache is copied. Outside a git checkout (a
source archive) the tree is copied whole but for the caches.
"""

from __future__ import annotations

import os
import shutil
import subprocess

CACHES = (".git", ".cache", ".tox", "node_modules", "__pycache__", ".hypothesis", ".mypy_cache", ".ruff_cache")


def checkout_files(root: str) -> list[str] | None:
    """The checkout's files relative to ``root`` (deleted ones left out), or None when it is no git checkout."""
    argv = ["git", "-C", root, "ls-files", "-z", "--cached", "--others", "--exclude-standard"]
    try:
        listed = subprocess.run(argv, capture_output=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return None
    names = sorted({name for name in os.fsdecode(listed).split("\0") if name})
    return [name for name in names if os.path.lexists(os.path.join(root, name))]


def copy_checkout(root: str, target: str) -> None:
    """Copy the checkout at ``root`` into the new folder ``target`` (symlinks as links, modes kept)."""
    names = checkout_files(root)
    if names is None:
        shutil.copytree(root, target, ignore=shutil.ignore_patterns(*CACHES), symlinks=True)
        return
    for name in names:
        source, destination = os.path.join(root, name), os.path.join(target, name)
        os.makedirs(os.path.dirname(destination), exist_ok=True)
        if os.path.islink(source):
            os.symlink(os.readlink(source), destination)
        else:
            shutil.copy2(source, destination)
