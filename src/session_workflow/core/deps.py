"""Which pinned dependencies the writers need, and where their first-use install put them.

Below every package, so a hook that must run a writer (the PostToolUse hook re-vouching an edited anchor, which
takes the anchor's lock) can find the folder ``cli.bootstrap`` installed filelock into and put it on the path,
without the installer itself: a hook never runs pip. Hot-path safe (os and sys).
"""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping

    # Pure wheels: (name, version, sha256 of the wheel).
    Pins = tuple[tuple[str, str, str], ...]

DEPS_FOLDER = "python-deps"
PLUGIN_DATA_ENV = "CLAUDE_PLUGIN_DATA"

# (oldest Python, pins, pin key), newest first; the key is sha256 of requirements_text(pins), first 16 hex digits
# (see pin_key). An interpreter gets the first set whose oldest Python it is at least (pin_set).
PIN_SETS: tuple[tuple[tuple[int, int], Pins, str], ...] = (
    # Newest releases (both need 3.11); filelock 4.2+ imports no asyncio.
    (
        (3, 11),
        (
            ("filelock", "4.3.1", "sha256:79e43df8e9fe509cd83a3899a7c186c8077cbbe4d200a1ed3705c2f3bb6bc487"),
            ("platformdirs", "4.14.9", "sha256:d0d3a23e7ff282cfa94b77f5a22b81030dcb68ba0430f90c74f4bd8d090782ea"),
        ),
        "2b457598033eaae6",
    ),
    # Newest releases that still support Python 3.9 (filelock 3.20 and platformdirs 4.5 need 3.10).
    (
        (3, 9),
        (
            ("filelock", "3.19.1", "sha256:d38e30481def20772f5baf097c122c3babc4fcdb7e14e57049eb9d88c6dc017d"),
            ("platformdirs", "4.4.0", "sha256:abd01743f24e5287cd7a5db3752faf1a2d65353f38ec26d98e25a6db65958c85"),
        ),
        "84a0485cf8cadcdc",
    ),
)


def pin_set(version: tuple[int, int]) -> tuple[Pins, str]:
    """The pins and pin key for Python ``version`` (major, minor): the first set it is new enough for, else the
    oldest (bin/session-workflow refuses a Python older than 3.9 before any import)."""
    _oldest, pins, key = next((entry for entry in PIN_SETS if version >= entry[0]), PIN_SETS[-1])
    return pins, key


# The running interpreter's set: what the installer installs, checks and names by default.
PINS, PIN_KEY = pin_set(sys.version_info[:2])


def is_complete(folder: str, pins: Pins = PINS) -> bool:
    """True when pip finished installing every pinned version into ``folder`` (its dist-info records)."""
    return all(
        os.path.isfile(os.path.join(folder, f"{name.replace('-', '_')}-{version}.dist-info", "RECORD"))
        for name, version, _digest in pins
    )


def add_installed(env: Mapping[str, str]) -> bool:
    """Put the folder the writers' install made under the plugin data (``CLAUDE_PLUGIN_DATA``, which Claude Code
    sets for hooks) on ``sys.path`` when that install is complete; False when there is none (nothing is installed
    here: the first writer run does that, never a hook)."""
    base = env.get(PLUGIN_DATA_ENV, "")
    if not os.path.isabs(base) or "\x00" in base:
        return False
    folder = os.path.join(base, DEPS_FOLDER, PIN_KEY)
    if not is_complete(folder):
        return False
    if folder not in sys.path:
        sys.path.append(folder)
    return True
