"""Keep the plugin's state folders out of the user's git status (hot-path safe: os only)."""

from __future__ import annotations

import os


def ensure_gitignore(folder: str) -> None:
    """Create ``<folder>/.gitignore`` holding ``*`` when missing; never touch an existing one."""
    target = os.path.join(folder, ".gitignore")
    if os.path.lexists(target):
        return
    try:
        fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o644)
    except OSError:
        return
    try:
        os.write(fd, b"*\n")
    except OSError:
        pass
    finally:
        os.close(fd)
