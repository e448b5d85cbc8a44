"""Where a hook's bytecode goes: the plugin's data folder, never the plugin folder and never a project.

A marketplace install copies a checkout whole, so bytecode must not land in it; and a folder Python loads
bytecode from is code, so it must not be one a repository can fill. Claude Code sets ``CLAUDE_PLUGIN_DATA`` for
hooks, but the folder is taken only when it is absolute and resolves outside the hook's working directory and
``CLAUDE_PROJECT_DIR``; otherwise no bytecode is written (a test, the demo, a hostile value). Hot-path safe (os,
sys). The shims set ``sys.dont_write_bytecode`` before importing this, so nothing is written before the call.
"""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping


def _inside(real: str, folder: str) -> bool:
    if not os.path.isabs(folder) or "\x00" in folder:
        return False
    base = os.path.realpath(folder)
    return real == base or real.startswith(base.rstrip(os.sep) + os.sep)


def bytecode_folder(env: Mapping[str, str], cwd: str | None) -> str | None:
    """``<CLAUDE_PLUGIN_DATA>/pycache`` when that folder is absolute, exists and lies outside the project, else
    None."""
    data = env.get("CLAUDE_PLUGIN_DATA", "")
    if not os.path.isabs(data) or "\x00" in data:
        return None
    real = os.path.realpath(data)
    if not os.path.isdir(real):  # Claude Code makes it; a hook never makes a folder tree from a variable
        return None
    if any(_inside(real, folder) for folder in (env.get("CLAUDE_PROJECT_DIR", ""), cwd or "")):
        return None
    return os.path.join(data, "pycache")


def place() -> None:
    """Write this process's bytecode under ``bytecode_folder``, or none at all."""
    try:
        cwd: str | None = os.getcwd()
    except OSError:
        cwd = None
    folder = bytecode_folder(os.environ, cwd)
    sys.pycache_prefix = folder
    sys.dont_write_bytecode = folder is None
