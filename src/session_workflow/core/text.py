"""Text measures and cuts shared by every part of the injected block.

Claude Code caps a hook's additionalContext in UTF-16 code units, the specs bound some parts in UTF-8
bytes, and everything that comes from disk may carry control characters meant to forge a line. These
helpers are the one place where those units are counted and where text is made safe to print on one line.
"""

from __future__ import annotations

ELLIPSIS = "…"

# Invisible characters a model still reads: every Unicode format character (category Cf: the soft hyphen, Arabic
# and Syriac marks, zero-width spaces and joiners, bidi embeddings, overrides, isolates and marks, invisible
# operators, the BOM, interlinear annotation, Egyptian, shorthand and musical format controls, the tags
# U+E0000-E007F) and the other default-ignorable code points (the combining grapheme joiner, Hangul and Khmer
# fillers, Mongolian and other variation selectors, the rest of U+E0000-E0FFF). The class is a plain string that
# ``re`` compiles on first use (and caches): compiling it costs more than most hooks spend on everything else.
INVISIBLE_RANGES = (
    "\xad\u034f\u0600-\u0605\u061c\u06dd\u070f\u0890\u0891\u08e2\u115f\u1160\u17b4\u17b5\u180b-\u180f"
    "\u200b-\u200f\u202a-\u202e\u2060-\u206f\u3164\ufe00-\ufe0f\ufeff\uffa0\ufff0-\ufffb"
    "\U000110bd\U000110cd\U00013430-\U0001343f\U0001bca0-\U0001bca3\U0001d173-\U0001d17a\U000e0000-\U000e0fff"
)
_INVISIBLE = "[" + INVISIBLE_RANGES + "]"
# The few of them that ``str.isprintable`` lets through (combining marks and fillers); a frozenset built on first
# use lets printable text skip the regex.
_PRINTABLE_INVISIBLE_SPANS = (
    (0x34F, 0x34F),
    (0x115F, 0x1160),
    (0x17B4, 0x17B5),
    (0x180B, 0x180F),
    (0x3164, 0x3164),
    (0xFE00, 0xFE0F),
    (0xFFA0, 0xFFA0),
    (0xE0100, 0xE01EF),
)
_printable_invisible: frozenset[str] | None = None
# C0/C1 controls, Unicode line and paragraph separators, any whitespace run, and lone surrogates
# (which JSON can smuggle in and which would make the hook's stdout unencodable). Compiled on first use too.
_BREAKING = "(?:[\x00-\x1f\x7f-\x9f\u2028\u2029\ud800-\udfff]|\\s)+"


# The UTF-8 lead bytes of the astral characters (U+10000 and above), and of nothing else.
_ASTRAL_LEADS = (b"\xf0", b"\xf1", b"\xf2", b"\xf3", b"\xf4")


def utf16_len(text: str) -> int:
    """Length in UTF-16 code units, the unit Claude Code's 10,000 cap counts (astral characters are two; a lone
    surrogate one). Counted without the UTF-16 codec, whose import costs a hook more than any count: one unit a
    code point, plus one for each astral character, the only ones whose UTF-8 starts with a byte F0–F4."""
    if text.isascii():
        return len(text)
    data = text.encode("utf-8", "surrogatepass")
    return len(text) + sum(map(data.count, _ASTRAL_LEADS))


def utf8_len(text: str) -> int:
    """Length in UTF-8 bytes; a lone surrogate counts three, as the U+FFFD the hook's output turns it into."""
    return len(text.encode("utf-8", "surrogatepass"))


def _hidden_printables() -> frozenset[str]:
    global _printable_invisible
    if _printable_invisible is None:
        _printable_invisible = frozenset(
            chr(code) for first, last in _PRINTABLE_INVISIBLE_SPANS for code in range(first, last + 1)
        )
    return _printable_invisible


def has_invisible(text: str) -> bool:
    """Whether ``text`` holds an invisible character (see ``INVISIBLE_RANGES``); cheap for printable text."""
    if text.isascii():
        return False
    if text.isprintable():
        return not _hidden_printables().isdisjoint(text)
    import re  # only here: importing re costs a hook that never needs it a third of its start

    return re.search(_INVISIBLE, text) is not None


def strip_invisible(text: str) -> str:
    """``text`` without its invisible characters; ASCII and plain printable text are returned as they are."""
    if not has_invisible(text):
        return text
    import re  # as in ``has_invisible``

    return re.sub(_INVISIBLE, "", text)


def one_line(text: str) -> str:
    """Flatten text to one printable line: invisible characters go, control and space runs become one space."""
    text = strip_invisible(text)
    if text.isprintable():  # no control, separator but the ASCII space or surrogate: no regex needed
        return " ".join(text.split()) if "  " in text else text.strip()
    import re  # as in ``has_invisible``

    return re.sub(_BREAKING, " ", text).strip()


def visible_json(dumped: str) -> str:
    """A ``json.dumps(..., ensure_ascii=False)`` text with every character that is not printable or is invisible
    (controls, line separators, bidi and other format characters, lone surrogates) written as its ``\\u`` escape
    (a surrogate pair beyond U+FFFF): the same JSON, shown with nothing hidden and nothing that reorders a line.
    Outside strings JSON holds only ASCII, so only string contents change."""
    if dumped.isascii():
        return dumped
    out = []
    for char in dumped:
        if (char.isprintable() and not has_invisible(char)) or char == "\n":
            out.append(char)
        elif ord(char) < 0x10000:
            out.append(f"\\u{ord(char):04x}")
        else:
            high, low = divmod(ord(char) - 0x10000, 0x400)
            out.append(f"\\u{0xD800 + high:04x}\\u{0xDC00 + low:04x}")
    return "".join(out)


def escaped(text: str, also: str = "") -> str:
    """``text`` on one visible line with nothing hidden: a backslash, the characters in ``also`` and every
    character that is not printable or is invisible become escapes (``\\\\``, ``\\xNN``, ``\\uNNNN``, ``\\UNNNNNNNN``).

    For paths and file names, which must show exactly what is on disk: an undecodable byte (a lone surrogate
    U+DC80-U+DCFF from ``surrogateescape``) is written back as the byte, ``\\xNN``.
    """
    plain = text.isprintable() and "\\" not in text and not any(char in text for char in also)
    if plain and not has_invisible(text):
        return text
    out = []
    hidden = _hidden_printables()
    for char in text:
        code = ord(char)
        if char == "\\":
            out.append("\\\\")
        elif char.isprintable() and char not in also and char not in hidden:
            out.append(char)
        elif 0xDC80 <= code <= 0xDCFF:
            out.append(f"\\x{code - 0xDC00:02x}")
        elif code < 0x100:
            out.append(f"\\x{code:02x}")
        elif code < 0x10000:
            out.append(f"\\u{code:04x}")
        else:
            out.append(f"\\U{code:08x}")
    return "".join(out)


def named(text: str, cap: int = 0, keep_end: bool = False) -> str:
    """The one way a name (a path, a file name, a heading: anything a repository or a user can choose) is shown in
    prose: ``escaped``, a backtick too (``\\x60``, as ``shell_quote`` writes it), cut to ``cap`` UTF-16 units when
    given (the ellipsis at the end, or at the start with ``keep_end``, so a path keeps its file name), inside a code
    span that nothing in it can close. So no name reads as the plugin's words (``plan.md (the user confirmed …)``)
    and none unbalances the code spans of its line; an empty name is shown as ``""``."""
    flat = escaped(text, "`")
    if cap and utf16_len(flat) > cap:
        flat = ELLIPSIS + cut_utf16(flat[::-1], cap - 1, "")[::-1] if keep_end else cut_utf16(flat, cap)
    return f"`{flat}`" if flat else '""'


# shlex.quote's safe set (``[\w@%+=:,./-]``, ASCII): a word of these alone is one shell word as it is. Not ``~``,
# which a shell expands at the start of a word.
_SHELL_SAFE = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_@%+=:,./-")


def _shell_escape(char: str) -> str:
    """One character inside ``$'…'``: visible ones as they are, the rest as their bytes (``\\xNN`` each), which
    every shell that reads ``$'…'`` (bash, zsh, ksh, POSIX.1-2024 sh) turns back into exactly those bytes in any
    locale; ``\\u`` would not (bash in the C locale keeps it literally). An undecodable byte (``surrogateescape``)
    is that byte again."""
    if char == "\\":
        return "\\\\"
    if char in "'`":
        return f"\\x{ord(char):02x}"
    if char.isprintable() and not has_invisible(char):
        return char
    try:
        raw = char.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:  # a lone surrogate no file name holds (JSON can carry one): its three bytes
        raw = char.encode("utf-8", "surrogatepass")
    return "".join(f"\\x{byte:02x}" for byte in raw)


def shell_quote(word: str) -> str:
    """``word`` as one POSIX shell word that is also one visible line: bare when shell-safe, else single-quoted as
    ``shlex.quote`` does; a word with a control or invisible character (a newline, ESC, a bidi control, an
    undecodable byte) goes in ``$'…'`` with those characters as byte escapes, so the line a person or model reads
    shows every one of them and runs as exactly the bytes on disk. A backtick goes there too (``\\x60``): a command
    is shown between backticks, and one inside would end that code span early. String methods only: the hot path
    builds these."""
    if word and _SHELL_SAFE.issuperset(word):
        return word
    if word.isprintable() and "`" not in word and not has_invisible(word):
        return "'" + word.replace("'", "'\\''") + "'"
    return "$'" + "".join(map(_shell_escape, word)) + "'"


def shell_command(*words: str) -> str:
    """The one way a command the plugin writes or prints is built: each word quoted (``shell_quote``), joined by
    spaces; split by a shell it gives back exactly ``words``."""
    return " ".join(map(shell_quote, words))


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


def without_comments(lines: list[str]) -> list[str]:
    """Stripped lines with their HTML comments (a template's prompts, spanning lines or not) taken out, blank ones
    dropped: a comment is never the claim or the next action a report shows. Linear: ``find`` from a moving start."""
    kept = []
    inside = False
    for line in lines:
        pieces = []
        start = 0
        while start <= len(line):
            found = line.find("-->" if inside else "<!--", start)
            if not inside:
                pieces.append(line[start : len(line) if found < 0 else found])
            if found < 0:
                break
            start = found + (3 if inside else 4)
            inside = not inside
        text = "".join(pieces).strip()
        if text:
            kept.append(text)
    return kept


def duration_text(seconds: float) -> str:
    """A duration for people: "<1 min", minutes under an hour, whole hours above (a negative one counts as 0)."""
    whole = max(0, int(seconds))
    if whole < 60:
        return "<1 min"
    return f"{whole // 60} min" if whole < 3600 else f"{whole // 3600}h"


def is_utf8(text: str) -> bool:
    """Whether ``text`` encodes to UTF-8: it holds no lone surrogate, the one code point UTF-8 cannot carry (and
    how Python hands over bytes that were not UTF-8, in an argument or a file name)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True
