"""Text measures and cuts shared by every part of the injected block.

Claude Code caps a hook's additionalContext in UTF-16 code units, the specs bound some parts in UTF-8
bytes, and everything that comes from disk may carry control characters meant to forge a line. These
helpers are the one place where those units are counted and where text is made safe to print on one line.
"""

from __future__ import annotations

ELLIPSIS = "…"

# Characters that can hide or reorder text without being control characters: zero-width spaces and joiners,
# the word joiner and invisible operators, the BOM, and the bidi embeddings, overrides and isolates.
_INVISIBLE = "[\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff\u061c\u180e]"
# C0/C1 controls, Unicode line and paragraph separators, any whitespace run, and lone surrogates
# (which JSON can smuggle in and which would make the hook's stdout unencodable). Both are compiled on first use
# (re caches them): compiling these classes costs more than most hooks spend on everything else.
_BREAKING = "(?:[\x00-\x1f\x7f-\x9f\u2028\u2029\ud800-\udfff]|\\s)+"


def utf16_len(text: str) -> int:
    """Length in UTF-16 code units, the unit Claude Code's 10,000 cap counts (astral characters are two)."""
    return len(text.encode("utf-16-le", "surrogatepass")) // 2


def utf8_len(text: str) -> int:
    """Length in UTF-8 bytes; a lone surrogate counts three, as the U+FFFD the hook's output turns it into."""
    return len(text.encode("utf-8", "surrogatepass"))


def one_line(text: str) -> str:
    """Flatten text to one printable line: invisible and bidi controls go, control and space runs become one space."""
    if text.isprintable():  # no control, separator but the ASCII space, invisible or surrogate: no regex needed
        return " ".join(text.split()) if "  " in text else text.strip()
    import re  # only here: importing re costs a hook that never needs it a third of its start

    return re.sub(_BREAKING, " ", re.sub(_INVISIBLE, "", text)).strip()


def cut_utf8(text: str, max_bytes: int, marker: str = ELLIPSIS) -> str:
    """Cut text to at most ``max_bytes`` UTF-8 bytes on a code-point boundary, the marker inside the bound."""
    if utf8_len(text) <= max_bytes:
        return text
    room = max_bytes - utf8_len(marker)
    if room < 0:
        return ""
    kept = text.encode("utf-8", "replace")[:room].decode("utf-8", "ignore")
    return kept + marker


def cut_utf16(text: str, max_units: int, marker: str = ELLIPSIS) -> str:
    """Cut text to at most ``max_units`` UTF-16 units, never splitting a surrogate pair, the marker inside."""
    if utf16_len(text) <= max_units:
        return text
    room = max_units - utf16_len(marker)
    if room < 0:
        return ""
    used = 0
    for index, char in enumerate(text):
        used += 2 if ord(char) > 0xFFFF else 1
        if used > room:
            return text[:index] + marker
    return text + marker


def cut_code_points(text: str, max_points: int, marker: str = ELLIPSIS) -> str:
    """Cut text to at most ``max_points`` code points, the marker inside the bound."""
    if len(text) <= max_points:
        return text
    room = max_points - len(marker)
    return text[:room] + marker if room >= 0 else ""
