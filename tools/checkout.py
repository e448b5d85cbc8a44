"""The checkout's files as a commit of it would hold them: for the tools that change code in a copy, and for the
tests that hold a copy or an install to exactly those files.

Only the files git tracks, and by default those it would add (``git ls-files --cached --others
--exclude-standard``): nothing it ignores, so no benchmark workload (4 GB), tox env, egg-info or cache. Outside a
git checkout (a source archive) the tree is copied whole but for the caches.
"""

from __future__ import annotations

import os
import shutil
import subprocess

CACHES = (".git", ".cache", ".tox", "node_modules", "__pycache__", ".hypothesis", ".mypy_cache", ".ruff_cache")


def checkout_files(root: str, others: bool = True) -> list[str] | None:
    """The checkout's files relative to ``root``, sorted (deleted ones left out; ``others``: the untracked ones git
    would add too), or None when it is no git checkout."""
    argv = ["git", "-C", root, "ls-files", "-z", "--cached", *(("--others", "--exclude-standard") if others else ())]
    try:
        listed = subprocess.run(argv, capture_output=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return None
    names = sorted({name for name in os.fsdecode(listed).split("\0") if name})
    return [name for name in names if os.path.lexists(os.path.join(root, name))]


def copy_checkout(root: str, target: str, others: bool = True) -> None:
    """Copy the checkout at ``root`` (``others``: see ``checkout_files``) into the new folder ``target`` (symlinks
    as links, modes kept)."""
    names = checkout_files(root, others)
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
