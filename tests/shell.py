"""Hostile names, and how a test checks that a command the plugin suggests gives back exactly its words.

Two splitters: ``shlex.split`` (POSIX rules, which is what the single-quoted form is made for) wherever the command
has no ``$'…'`` word, which shlex does not read, and always a real ``bash`` in the C locale, in bytes, so a name's
undecodable bytes and its escapes are checked against the bytes on disk.
"""

from __future__ import annotations

import os
import shlex
import subprocess

from hypothesis import strategies as st

from session_workflow.core.text import escaped, has_invisible

# What breaks a command line or a terminal: spaces, substitutions, separators, quotes, a leading dash, a tilde,
# line breaks, ESC sequences, bidi and zero-width controls, tag characters, an undecodable byte (surrogateescape).
PIECES = (
    " ",
    "$(touch PWNED)",
    "`touch PWNED`",
    ";",
    "|",
    "&",
    "'",
    '"',
    "-",
    "--x",
    "~",
    "*",
    "\\",
    "\n",
    "\r",
    "\t",
    "\x1b[2J",
    "\x1b]0;title\x07",
    "\x7f",
    "\x85",
    "\u202e",
    "\u2066",
    "\u200b",
    "\ufeff",
    "\U000e0041",
    "\u2028",
    "\udcff",
    "\udc80",
    "é",
    "\U0001f600",
    "shop",
)
# A file name: any of those pieces and any character a name can hold (no NUL, no slash, no surrogate but the
# 128 that stand for undecodable bytes).
NAME_CHARS = st.characters(exclude_characters="\x00/").filter(
    lambda char: not "\ud800" <= char <= "\udfff"
) | st.sampled_from([chr(code) for code in range(0xDC80, 0xDD00)])
hostile_names = st.lists(
    st.sampled_from(PIECES) | st.text(NAME_CHARS, min_size=1, max_size=3), min_size=1, max_size=5
).map("".join)
# A command's word may also hold a slash (a path).
hostile_words = st.lists(hostile_names | st.just("/"), min_size=1, max_size=3).map("".join) | st.just("")


def bash_words(command: str) -> list[bytes]:
    """The words a real bash (C locale) makes of ``command``, as bytes."""
    done = subprocess.run(
        ["bash", "--norc", "--noprofile", "-c", "printf '%s\\0' " + command],
        capture_output=True,
        env={"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "LC_ALL": "C"},
        timeout=30,
        check=True,
    )
    return done.stdout.split(b"\0")[:-1]


def shown_path(path: str) -> str:
    """A path as a block's line shows it: escaped in its code span, and one over 300 UTF-16 units keeps its last 299
    behind "…" (``core.text.named``'s promise, written out here).

    The checkout, the temp folder and HOME can be anywhere and as long as a machine allows, so a test that writes
    the expected line builds the path's part of it here rather than pasting ``tmp_path`` in whole."""
    flat = escaped(path).replace("`", "\\x60")
    units = flat.encode("utf-16-le")
    if len(units) > 600:
        flat = "…" + units[-598:].decode("utf-16-le", "ignore")
    return f"`{flat}`"


def shown_whole(path: str) -> str:
    """A path as a command's own line shows it: escaped in its code span, whole (a terminal line has no cap)."""
    return "`" + escaped(path).replace("`", "\\x60") + "`"


def shown_value(value: str) -> str:
    """A variable's value as a message shows it: at most 300 code points (the first 299 and "…"), then escaped in
    its code span (``core.locations.shown``'s promise, written out here)."""
    cut = value if len(value) <= 300 else value[:299] + "…"
    return "`" + escaped(cut).replace("`", "\\x60") + "`"


def is_visible(command: str) -> bool:
    """One visible line: nothing a terminal acts on or a reader cannot see, and no backtick to end a code span."""
    return command.isprintable() and not has_invisible(command) and "`" not in command


def assert_splits(command: str, words: list[str]) -> None:
    """``command`` is visible, and bash (and shlex, where it can read it) split it into exactly ``words``."""
    assert is_visible(command), command
    if "$'" not in command:
        assert shlex.split(command) == words, command
    assert bash_words(command) == [os.fsencode(word) for word in words], command
