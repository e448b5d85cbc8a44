"""Where the writers' one dependency (filelock) comes from when the plugin runs from its folder.

The plugin folder carries it, pinned per Python, in ``vendor/py<major><minor>/`` (``tools/vendor.py`` refreshes it
and ``tests/test_vendor.py`` holds the tree to its lock): nothing is installed or downloaded at run time. The
folders' names are the sets, read here from the tree, so the sets are written only in ``tools/vendor.py``. The
module that takes the lock loads the library (``core.atomic``, only where there is no flock), and
``bin/session-workflow`` and the doctor put the same copy first on ``sys.path``, so the terminal and the Bash tool
run the very versions that were tested, whatever the interpreter's site-packages hold. An installed wheel (pip,
pipx) has no such folder and imports the ordinary dependency it declares. Hot-path safe (os and sys).
"""

from __future__ import annotations

import os
import sys

# src/session_workflow/core/deps.py -> the plugin root (for an installed package: a folder with no vendor/).
PLUGIN_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.realpath(__file__)))))


def vendored_dir(version: tuple[int, int] = (sys.version_info[0], sys.version_info[1])) -> str | None:
    """The plugin folder's copy for Python ``version``: the newest ``vendor/py3NN`` set whose Python is not newer;
    None when there is none (the package runs from an installed wheel)."""
    base = os.path.join(PLUGIN_ROOT, "vendor")
    try:
        names = os.listdir(base)
    except OSError:
        return None
    sets = sorted((int(name[3:]), name) for name in names if name[:3] == "py3" and name[3:].isdigit())
    return next((os.path.join(base, name) for minor, name in reversed(sets) if version >= (3, minor)), None)


def add_vendored() -> str | None:
    """Put the vendored copy first on ``sys.path`` (once); the folder, or None where there is none."""
    path = vendored_dir()
    if path is not None and path not in sys.path:
        sys.path.insert(0, path)
    return path
