"""Where the writers' dependencies (filelock, platformdirs) come from when the plugin runs from its folder.

The plugin folder carries them, pinned per Python, in ``vendor/<folder>/`` (``tools/vendor.py`` refreshes them
and ``tests/test_vendor.py`` holds the tree to its lock): nothing is installed or downloaded at run time. From
the plugin folder (``bin/session-workflow``, and the edit hook on its one writing path) the vendored copy always
goes first on ``sys.path``, so the terminal and the Bash tool run the very versions that were tested, whatever the
interpreter's site-packages hold. An installed wheel (pip, pipx) has no such folder and imports the ordinary
dependencies it declares. Hot-path safe (os and sys).
"""

from __future__ import annotations

import os
import sys

# src/session_workflow/core/deps.py -> the plugin root (for an installed package: a folder with no vendor/).
PLUGIN_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.realpath(__file__)))))
# (oldest Python, folder), newest first: the sets of tools/vendor.py (tests/test_vendor.py holds them equal).
FOLDERS = (((3, 11), "py311"), ((3, 9), "py39"))


def vendored_dir(version: tuple[int, int] = (sys.version_info[0], sys.version_info[1])) -> str | None:
    """The plugin folder's copy for Python ``version``, or None when the package runs from an installed wheel."""
    folder = next((name for oldest, name in FOLDERS if version >= oldest), FOLDERS[-1][1])
    path = os.path.join(PLUGIN_ROOT, "vendor", folder)
    return path if os.path.isdir(path) else None


def add_vendored() -> str | None:
    """Put the vendored copy first on ``sys.path`` (once); the folder, or None where there is none."""
    path = vendored_dir()
    if path is not None and path not in sys.path:
        sys.path.insert(0, path)
    return path
