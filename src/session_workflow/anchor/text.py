"""The control anchor as text: split HEAD from TAIL, read the frontmatter, split and fit sections, classify.

Pure functions only (no I/O), shared by the SessionStart part, the read-only reports and the writer. Every
function accepts the file as written — CRLF line ends and a leading BOM included — and the splitting ones are
lossless, so a writer can rewrite one piece and put the rest back byte for byte. Lines are split on ``\\n``
only (``\\r\\n`` lines keep their ``\\r``); nothing here treats U+2028 or a form feed as a line end.

Sizes are UTF-16 code units, the unit Claude Code's additionalContext cap counts.
"""

from __future__ import annotations

from session_workflow.core.text import (
    INVISIBLE_RANGES,
    cut_utf16,
    has_invisible,
    shell_command,
    utf16_len,
    without_comments,
)

TAIL_MARKER = "<!-- anchor:tail -->"
BOM = "\ufeff"
_MARKER_BYTES = TAIL_MARKER.encode("ascii")
_UTF8_BOM = BOM.encode("utf-8")

# Headings, fences and frontmatter pairs are recognised with string methods and the rest of the patterns are plain
# strings that ``re`` compiles on first use, and ``re`` itself is imported only where a pattern is used: importing
# it costs about 0.2 J, and compiling 0.1-0.5 ms a pattern, which a hook that injects a plain anchor never needs.
_WORD_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_")
_FRONTMATTER_KEY = _WORD_CHARS | frozenset(".-")
# A done line (see ``is_done_line``): the word after "status".
_DONE_WORDS = ("closed", "done", "complete", "completed", "landed", "shipped", "merged")
_NOT_PARKED = frozenset(("", "false", "no", "none", "0", "null", "~"))
# Characters that must not reach the model from an anchor: C0/C1 controls other than tab and newline, and the
# invisible ones (bidi controls, zero-width and tag characters, the BOM...: ``core.text.INVISIBLE_RANGES``).
_UNSAFE = "[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f" + INVISIBLE_RANGES + "]"
# Everything ``clean_for_model`` changes: the unsafe characters and the line ends it rewrites.
_NOT_PLAIN = "[\r\u2028\u2029" + _UNSAFE[1:]
_PLAIN_ASCII = bytes(range(0x20, 0x7F)) + b"\t\n"


class _StepBullet:
    """The writer's cursor bullets, ``^[ \\t]*[-*+][ \\t]+Step[ \\t]+(\\d{1,9})\\b`` ("- Step 12: ...", any list
    marker), matched with string methods: the edit hook's re-vouch reads the step of every anchor it vouches, and
    ``re`` with ``enum`` would cost it about 0.2 J. ``match`` returns the step's digits as group 1, or None."""

    __slots__ = ()

    def match(self, text: str) -> _Digits | None:
        rest = text.lstrip(" \t")
        if rest[:1] not in ("-", "*", "+") or rest[1:2] not in (" ", "\t"):
            return None
        rest = rest[1:].lstrip(" \t")
        if not rest.startswith("Step") or rest[4:5] not in (" ", "\t"):
            return None
        rest = rest[4:].lstrip(" \t")
        count = 0
        while count < len(rest) and rest[count].isdecimal():
            count += 1
        # \d{1,9} then \b: a longer run of digits has a word character after any 9 of them, so it never matches.
        if not 0 < count <= 9 or (count < len(rest) and (rest[count].isalnum() or rest[count] == "_")):
            return None
        return _Digits(rest[:count])


class _Digits:
    """A match's group 1 (``_StepBullet``)."""

    __slots__ = ("digits",)

    def __init__(self, digits: str) -> None:
        self.digits = digits

    def group(self, index: int) -> str:
        if index != 1:
            raise IndexError("only group 1")
        return self.digits


STEP_BULLET = _StepBullet()


def _spaces(text: str, start: int, most: int) -> int:
    """How many whitespace characters (``str.isspace``: what ``\\s`` matches) begin at ``start``, at most ``most``."""
    count = 0
    while count < most and start + count < len(text) and text[start + count].isspace():
        count += 1
    return count


def _is(text: str, start: int, word: str) -> bool:
    """Whether ``word`` (lowercase ASCII) is at ``start`` as ``(?i)`` matches it: a character whose simple
    lowercase is the letter (so ``İ`` for i), or ``ı`` for i and ``ſ`` for s, which ``re`` counts the same."""
    if len(text) - start < len(word):
        return False
    for offset, letter in enumerate(word):
        char = text[start + offset]
        lower = "i" if char == "\u0130" else char.lower()
        if lower != letter and (letter, char) not in (("i", "\u0131"), ("s", "\u017f")):
            return False
    return True


def next_label_end(text: str) -> int:
    """Where the label a next-action line starts with ends ("- **Next action on resume**:", "Next:"), or -1: what
    ``re.match`` gives for ``(?i)^(?:[-*+]\\s{1,8})?(?:\\*\\*)?next(?: action| step)?(?: [^:*\\n]{0,40})?``
    ``(?:\\*\\*)?\\s{0,8}:\\s{0,8}(?:\\*\\*)?\\s{0,8}``, with string methods: PreCompact names the cursor's next
    action on every compaction, and ``re`` with ``enum`` would cost it about 0.2 J (tests/anchor/test_classify.py
    holds the two equal). Bounded, so linear on any line. Every way the pattern can match reaches the first colon
    after "next" (no piece before it may hold one), so the match is that colon's, when some way reaches it."""
    start = 2 if text.startswith("**") else 0
    if text[:1] in ("-", "*", "+"):
        run = _spaces(text, 1, 9)
        if 1 <= run <= 8:  # a bullet: past it, and past a bold mark
            start = 1 + run + (2 if text.startswith("**", 1 + run) else 0)
    if not _is(text, start, "next"):
        return -1
    after = start + 4
    colon = -1
    for word in ("action", "step", ""):
        if word and not (text.startswith(" ", after) and _is(text, after + 1, word)):
            continue
        colon = _label_colon(text, after + 1 + len(word) if word else after)
        if colon >= 0:
            break
    if colon < 0:
        return -1
    end = colon + 1 + _spaces(text, colon + 1, 8)
    end += 2 if text.startswith("**", end) else 0
    return end + _spaces(text, end, 8)


def _label_colon(text: str, start: int) -> int:
    """Where the colon is that ``(?: [^:*\\n]{0,40})?(?:\\*\\*)?\\s{0,8}:`` reaches from ``start``, or -1."""
    ends = [start]
    if text.startswith(" ", start):  # the free words: up to 40 characters, none a colon, a star or a line end
        run = 0
        while run < 40 and start + 1 + run < len(text) and text[start + 1 + run] not in ":*\n":
            run += 1
        ends += range(start + 1, start + 2 + run)
    for end in ends:
        end += 2 if text.startswith("**", end) else 0
        gap = _spaces(text, end, 9)
        if gap <= 8 and text.startswith(":", end + gap):
            return end + gap
    return -1


def _bullet_end(text: str) -> int:
    """Where a list marker before a line's text ends, ``^[-*+][ \\t]{1,8}``, or 0 (string methods, as above)."""
    if text[:1] not in ("-", "*", "+"):
        return 0
    run = 0
    while run < 8 and 1 + run < len(text) and text[1 + run] in " \t":
        run += 1
    return 1 + run if run else 0


def lines_of(text: str) -> list[str]:
    """Split on ``\\n`` keeping the line ends, so ``"".join(lines_of(t)) == t``."""
    lines = text.split("\n")
    last = lines.pop()
    result = [line + "\n" for line in lines]
    if last:
        result.append(last)
    return result


def _bare(line: str) -> str:
    """A line without its end and without a BOM, for comparisons."""
    return line.rstrip("\r\n").replace(BOM, "")


def _line_bounds(text: str, index: int) -> tuple[int, int]:
    """Start and end (past its ``\\n``, if any) of the line that holds ``text[index]``."""
    end = text.find("\n", index)
    return text.rfind("\n", 0, index) + 1, len(text) if end < 0 else end + 1


def _marker_offset(text: str) -> int | None:
    """Where the first line that is exactly the marker (stripped, BOMs removed) starts, or None."""
    if text.find(BOM, 1) >= 0:  # a BOM inside the marker still counts: compare line by line
        offset = 0
        for line in lines_of(text):
            if _bare(line).strip() == TAIL_MARKER:
                return offset
            offset += len(line)
        return None
    found = text.find(TAIL_MARKER)
    while found >= 0:
        start, end = _line_bounds(text, found)
        if _bare(text[start:end]).strip() == TAIL_MARKER:
            return start
        found = text.find(TAIL_MARKER, end)
    return None


def split_head(text: str) -> tuple[str, str | None]:
    """Return (HEAD, TAIL): TAIL starts at the first line that is exactly the marker (stripped) and includes it.

    ``head + tail == text``. No marker, or a marker with only whitespace above it, makes the whole text the
    HEAD and the TAIL None — an anchor never injects zero bytes.
    """
    offset = _marker_offset(text)
    if offset is None or not text[:offset].replace(BOM, "").strip():
        return text, None
    return text[:offset], text[offset:]


def tail_has_content(tail: str | None) -> bool:
    """True when there is something besides the marker line and whitespace below the marker."""
    if tail is None:
        return False
    return bool("".join(lines_of(tail)[1:]).strip())


def _frontmatter_body(head: str) -> tuple[int, int] | None:
    """Offsets of the frontmatter's inner lines: from below the opening ``---`` (line 1, a BOM allowed) to the
    start of the closing one; None without both. Reads no further than the closing line."""
    _start, end = _line_bounds(head, 0)
    if not head or _bare(head[:end]).strip() != "---":
        return None
    if head.find(BOM, 1) >= 0:  # a BOM inside a closing ``---`` still counts: compare line by line
        offset = end
        for line in lines_of(head[end:]):
            if _bare(line).strip() == "---":
                return end, offset
            offset += len(line)
        return None
    found = head.find("---", end)
    while found >= 0:
        start, stop = _line_bounds(head, found)
        if head[start:stop].strip() == "---":
            return end, start
        found = head.find("---", stop)
    return None


def frontmatter_span(head: str) -> tuple[int, int] | None:
    """Line indices (in ``lines_of(head)``) of the opening and closing ``---`` of the frontmatter, or None.

    The opening ``---`` must be line 1 (a BOM before it is allowed).
    """
    body = _frontmatter_body(head)
    return (0, 1 + head.count("\n", body[0], body[1])) if body is not None else None


def frontmatter_value(raw: str) -> str:
    """A frontmatter value without surrounding space and one pair of matching quotes."""
    value = raw.strip()
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
        value = value[1:-1].strip()
    return value


def parse_frontmatter(head: str) -> dict[str, str] | None:
    """The ``key: value`` pairs of the frontmatter (later keys win); None when there is no frontmatter.

    A key is ``[A-Za-z0-9_][A-Za-z0-9_.-]*`` at the start of the line, then spaces or tabs and a colon.
    """
    body = _frontmatter_body(head)
    if body is None:
        return None
    pairs: dict[str, str] = {}
    for line in head[body[0] : body[1]].split("\n"):
        key, colon, value = _bare(line).partition(":")
        key = key.rstrip(" \t")
        if colon and key and key[0] in _WORD_CHARS and _FRONTMATTER_KEY.issuperset(key):
            pairs[key.lower()] = frontmatter_value(value)
    return pairs


class Section:
    """A run of HEAD text from one heading to the next (the preamble has no heading, level 0)."""

    __slots__ = ("_size", "heading", "level", "text")

    def __init__(self, heading: str | None, level: int, text: str) -> None:
        self.heading = heading
        self.level = level
        self.text = text
        self._size: int | None = None

    @property
    def size(self) -> int:
        """Length in UTF-16 units, measured only when a fit needs it (ranking many anchors never does)."""
        if self._size is None:
            self._size = utf16_len(self.text)
        return self._size

    @property
    def label(self) -> str:
        """How a report names this section."""
        if self.heading is not None:
            return self.heading
        span = frontmatter_span(self.text)
        only_frontmatter = span is not None and not "".join(lines_of(self.text)[span[1] + 1 :]).strip()
        return "(frontmatter)" if only_frontmatter else "(text above the first heading)"

    def __repr__(self) -> str:
        return f"Section({self.heading!r}, {self.level}, {self.text!r})"


def heading_of(line: str) -> tuple[int, str] | None:
    """(level, heading text) when ``line`` is an ATX heading, else None (fences are the caller's concern).

    CommonMark: up to three spaces, one to six ``#``, then a space, a tab or the end of the line; a closing run
    of ``#`` (alone or after a space or tab) is not part of the text.
    """
    stripped = line.rstrip("\r\n")
    body = stripped.lstrip(" ")
    if len(stripped) - len(body) > 3 or not body.startswith("#"):
        return None
    rest = body.lstrip("#")
    level = len(body) - len(rest)
    if level > 6 or rest[:1] not in ("", " ", "\t"):
        return None
    text = rest.strip(" \t")
    unclosed = text.rstrip("#")
    if unclosed != text and unclosed[-1:] in ("", " ", "\t"):
        text = unclosed.rstrip(" \t")
    return level, text.strip()


def _fence_opener(line: str) -> str | None:
    """The run that opens a code fence: up to three spaces, then three or more tildes, or backticks with no
    backtick after them (in the info string)."""
    stripped = line.rstrip("\r\n")
    body = stripped.lstrip(" ")
    if len(stripped) - len(body) > 3:
        return None
    for char in "`~":
        run = len(body) - len(body.lstrip(char))
        if run >= 3:
            return body[:run] if char == "~" or "`" not in body[run:] else None
    return None


def _closes_fence(line: str, opener: str) -> bool:
    stripped = line.rstrip("\r\n")
    indent = len(stripped) - len(stripped.lstrip(" "))
    body = stripped.strip()
    return indent <= 3 and len(body) >= len(opener) and body == opener[0] * len(body)


def split_sections(head: str) -> list[Section]:
    """Split the HEAD at headings outside code fences and outside the frontmatter, losslessly.

    ``"".join(s.text for s in split_sections(h)) == h``. An empty preamble is left out; an unclosed fence runs
    to the end (as CommonMark reads it), so no heading after it counts.
    """
    lines = lines_of(head)
    span = frontmatter_span(head)
    first_body_line = span[1] + 1 if span else 0
    sections: list[Section] = []
    current: list[str] = []
    current_heading: tuple[int, str] | None = None
    fence: str | None = None
    for index, line in enumerate(lines):
        if index >= first_body_line:
            if fence is not None:
                if _closes_fence(line, fence):
                    fence = None
            elif line.lstrip(" ").startswith(("#", "`", "~")):
                fence = _fence_opener(line)
                found = heading_of(line) if fence is None else None
                if found is not None:
                    if current or current_heading is not None:
                        _append_section(sections, current_heading, current)
                    current, current_heading = [], found
        current.append(line)
    if current or current_heading is not None:
        _append_section(sections, current_heading, current)
    return sections


def _append_section(sections: list[Section], heading: tuple[int, str] | None, lines: list[str]) -> None:
    text = "".join(lines)
    if heading is None:
        if text:
            sections.append(Section(None, 0, text))
    else:
        sections.append(Section(heading[1], heading[0], text))


def cursor_index(sections: list[Section]) -> int | None:
    """Index of the first section whose heading contains "cursor" (any case), or None."""
    for index, section in enumerate(sections):
        if section.heading is not None and "cursor" in section.heading.lower():
            return index
    return None


def _has_format(frontmatter: dict[str, str]) -> bool:
    return frontmatter.get("format", "").lower().startswith("anchor/")


def is_done_line(line: str) -> bool:
    """A line that wholly says ``status: done`` (or closed, landed, merged to main…), markup aside.

    After removing ``*`` and ``#``, stripping, lower-casing and collapsing spaces: ``status``, spaces or dots, an
    optional colon, spaces or dots, one of the words, then only spaces and dots, or spaces and dots, ``on`` or
    ``to``, spaces and dots, and one word (which may hold dots) followed by nothing but spaces and dots. String
    operations only: a regex for this backtracked for seconds on one crafted line.
    """
    cleaned = " ".join(_bare(line).replace("*", "").replace("#", "").strip().lower().split())
    if not cleaned.startswith("status"):
        return False
    rest = cleaned[len("status") :].lstrip(" .")
    if rest.startswith(":"):
        rest = rest[1:].lstrip(" .")
    return any(rest.startswith(word) and _done_suffix(rest[len(word) :]) for word in _DONE_WORDS)


def _done_suffix(after: str) -> bool:
    """What may follow the done word: only spaces and dots, or ``[ .]+(on|to)[ .]+WORD[ .]*`` (WORD has no space)."""
    if not after.strip(" ."):
        return True
    target = after.lstrip(" .")
    if len(target) == len(after) or target[:2] not in ("on", "to"):
        return False
    word = target[2:]
    rest = word.lstrip(" .")
    if len(rest) == len(word):
        return False
    if not rest:  # only spaces and dots after on/to: the word is a dot past the first of them
        return "." in word[1:]
    return " " not in rest.rstrip(" .")


def _done_in(head: str, lowered: str) -> bool:
    """True when a line of ``head`` (a HEAD: a status line in the TAIL never counts) declares the work finished,
    given it lower-cased: only the lines holding "tatus" (any case) are looked at."""
    if "tatus" not in lowered:
        return False
    if len(lowered) != len(head):  # a character lower-cased into two: positions in ``lowered`` do not line up
        return any("tatus" in line.lower() and is_done_line(line) for line in lines_of(head))
    found = lowered.find("tatus")
    while found >= 0:
        start, end = _line_bounds(head, found)
        if is_done_line(head[start:end]):
            return True
        found = lowered.find("tatus", end)
    return False


def _parked(frontmatter: dict[str, str]) -> str | None:
    """The frontmatter ``parked:`` reason; None when absent, blank or false/no/none/0."""
    reason = frontmatter.get("parked")
    if reason is None or reason.strip().lower() in _NOT_PARKED:
        return None
    return reason


def section_body_lines(section: Section) -> list[str]:
    """The non-blank lines of a section below its heading, stripped."""
    lines = lines_of(section.text)
    body = lines[1:] if section.heading is not None else lines
    return [stripped for stripped in (_bare(line).strip() for line in body) if stripped]


def cursor_first_line(section: Section) -> str | None:
    """The first line under the cursor heading that is not a comment: the claim a reader can check against reality."""
    body = without_comments(section_body_lines(section))
    return body[0] if body else None


def cursor_next_action(section: Section) -> str | None:
    """What the cursor says comes next: its first ``Next action:`` line (any ``next…:`` label with text after it),
    else its newest ``- Step N`` entry, else its first line, without a list marker; comments are none of them.

    The newest step rather than the first line: ``anchor step`` adds its bullets newest first, but a hand edit may
    not, and the summary should keep the step the run last reached.
    """
    body = without_comments(section_body_lines(section))
    for line in body:
        end = next_label_end(line)
        if end >= 0 and line[end:].strip():
            return line
    steps = [(int(found.group(1)), line) for line in body for found in (STEP_BULLET.match(line),) if found]
    if not body:
        return None
    line = max(steps, key=lambda step: step[0])[1] if steps else body[0]
    return line[_bullet_end(line) :]


def newest_step_next(section: Section) -> str | None:
    """The ``next: …`` part of the cursor's newest ``- Step N`` entry (what ``anchor step "…; next: …"`` wrote),
    or None when that entry names no next action."""
    body = without_comments(section_body_lines(section))
    steps = [(int(found.group(1)), line) for line in body for found in (STEP_BULLET.match(line),) if found]
    if not steps:
        return None
    line = max(steps, key=lambda step: step[0])[1]
    at = line.lower().rfind("next:")
    return line[at:] if at >= 0 and line[at + 5 :].strip() else None


def newest_cursor_step(head: str) -> int | None:
    """The highest ``- Step N`` bullet in the HEAD's cursor section, or None."""
    sections = split_sections(head)
    index = cursor_index(sections)
    if index is None:
        return None
    steps = [int(m.group(1)) for m in map(STEP_BULLET.match, lines_of(sections[index].text)) if m]
    return max(steps) if steps else None


def title_of(head: str, sections: list[Section] | None = None) -> str | None:
    """The first level-1 heading, else the frontmatter ``title`` or ``task``; None when neither exists."""
    for section in split_sections(head) if sections is None else sections:
        if section.level == 1 and section.heading:
            return section.heading
    frontmatter = parse_frontmatter(head) or {}
    return frontmatter.get("title") or frontmatter.get("task") or None


def clean_for_model(text: str) -> str:
    """Normalise anchor text for injection: CRLF, CR and Unicode separators become LF; controls other than tab
    and newline, and invisible characters (a BOM among them), are removed."""
    text = text.replace("\r\n", "\n").replace("\r", "\n").replace("\u2028", "\n").replace("\u2029", "\n")
    if _is_plain(text):
        return text
    import re

    return re.sub(_UNSAFE, "", text)


class Fit:
    """What a budget keeps of a HEAD: the kept text and section indices (document order) and the dropped labels.

    ``size`` is the kept text's length in UTF-16 units. ``cursor_reserved`` means a cursor section exists and
    was placed first; ``cursor_cut`` that it alone did not fit and was cut at a line boundary (or inside its
    first line, when not even that fits).
    """

    __slots__ = ("cursor_cut", "cursor_heading", "cursor_reserved", "dropped", "kept", "size", "text")

    def __init__(
        self,
        text: str,
        size: int,
        kept: list[int],
        dropped: list[str],
        cursor_heading: str | None,
        cursor_cut: bool,
    ) -> None:
        self.text = text
        self.size = size
        self.kept = kept
        self.dropped = dropped
        self.cursor_heading = cursor_heading
        self.cursor_reserved = cursor_heading is not None
        self.cursor_cut = cursor_cut


def cut_at_line(text: str, budget: int) -> str:
    """The longest run of whole lines within ``budget`` UTF-16 units; inside the first line if none fits."""
    kept: list[str] = []
    used = 0
    for line in lines_of(text):
        size = utf16_len(line)
        if used + size > budget:
            break
        kept.append(line)
        used += size
    if kept:
        return "".join(kept)
    return cut_utf16(text.split("\n", 1)[0], budget)


def fit_sections(sections: list[Section], budget: int) -> Fit:
    """Reserve the cursor, then spend the rest top-down on whole sections; the first misfit ends the spend."""
    cursor = cursor_index(sections)
    cursor_heading = sections[cursor].heading if cursor is not None else None
    budget = max(0, budget)
    total = sum(section.size for section in sections)
    if total <= budget:
        everything = "".join(section.text for section in sections)
        return Fit(everything, total, list(range(len(sections))), [], cursor_heading, False)
    kept: dict[int, str] = {}
    used = 0
    cursor_cut = False
    if cursor is not None:
        section = sections[cursor]
        if section.size <= budget:
            kept[cursor] = section.text
            used = section.size
        else:
            cut = cut_at_line(section.text, budget)
            cursor_cut = True
            if cut:
                kept[cursor] = cut
            used = budget  # nothing else may follow a cut cursor
    for index, section in enumerate(sections):
        if index == cursor:
            continue
        if used + section.size > budget:
            break
        kept[index] = section.text
        used += section.size
    dropped = [section.label for index, section in enumerate(sections) if index not in kept]
    order = sorted(kept)
    text = "".join(kept[index] for index in order)
    size = utf16_len(text) if cursor_cut else used
    return Fit(text, size, order, dropped, cursor_heading, cursor_cut)


# The kinds an open anchor file can be, in rank order: a newer file never outranks a better kind.
LIVE, PARKED, DONE, NOT_ANCHOR = 0, 1, 2, 3
KIND_LABELS = ("live", "parked", "done", "not an anchor")


def _is_plain(text: str) -> bool:
    """True when ``clean_for_model`` would leave ``text`` (without a leading BOM) exactly as it is."""
    if text.isascii():
        return not text.encode("ascii").translate(None, _PLAIN_ASCII)
    flat = text.replace("\n", "").replace("\t", "")
    if flat.isprintable():
        return not has_invisible(flat)
    import re

    return re.search(_NOT_PLAIN, text) is None


def _text_below(data: bytes, start: int) -> bool:
    """Whether the bytes from ``start`` hold anything but whitespace once cleaned for the model."""
    for index in range(start, len(data)):
        byte = data[index]
        if byte in b" \t\n\r\x0b\x0c":
            continue
        if 0x21 <= byte <= 0x7E:  # printable ASCII: cleaning keeps it
            return True
        import re

        return bool(re.sub(_UNSAFE, "", data[start:].decode("utf-8", "replace")).strip())
    return False


def _plain_split(data: bytes) -> tuple[str, bool | None] | None:
    """(HEAD, whether text follows the marker line or None without one) of UTF-8 ``data``, decoding and checking
    only the HEAD and the marker line; None when that could differ from cleaning and splitting the whole text.

    Exact when neither the HEAD nor the marker line holds anything ``clean_for_model`` changes (CR, U+2028,
    controls, bidi) nor a BOM (past the first byte): then cleaning leaves every line up to the marker line as it
    is, so the same line is the first marker line of the cleaned text.
    """
    if data.startswith(_UTF8_BOM):
        data = data[len(_UTF8_BOM) :]
    found = data.find(_MARKER_BYTES)
    while found >= 0:
        end = data.find(b"\n", found)
        start, end = data.rfind(b"\n", 0, found) + 1, len(data) if end < 0 else end + 1
        line = data[start:end].decode("utf-8", "replace")
        if line.strip() == TAIL_MARKER:
            head = data[:start].decode("utf-8", "replace")
            # A blank HEAD makes the whole text the HEAD; a BOM may hide an earlier marker line.
            if not head or head.isspace() or BOM in head or BOM in line or not (_is_plain(head) and _is_plain(line)):
                return None
            return head, _text_below(data, end)
        found = data.find(_MARKER_BYTES, end)
    head = data.decode("utf-8", "replace")
    return (head, None) if BOM not in head and _is_plain(head) else None


_NOT_LOOKED = -1


class AnchorText:
    """One anchor file's HEAD as the reader sees it: cleaned for the model and classified once.

    Ranking many anchors needs only their kind, so the sections (and with them the cursor and the title) are
    split only when asked for, and ``from_bytes`` decodes and cleans no more than the HEAD when that is exact.
    """

    __slots__ = ("_cursor", "_sections", "frontmatter", "head", "kind", "parked", "tail", "truncated")

    def __init__(self, text: str, truncated: bool = False) -> None:
        head, tail = split_head(clean_for_model(text))
        self._classify(head, None if tail is None else tail_has_content(tail), truncated)

    @classmethod
    def from_bytes(cls, data: bytes, truncated: bool = False) -> AnchorText:
        """The same as ``AnchorText(data.decode("utf-8", "replace"), truncated)``, without decoding the TAIL."""
        plain = _plain_split(data)
        if plain is None:
            return cls(data.decode("utf-8", "replace"), truncated)
        anchor = cls.__new__(cls)
        anchor._classify(plain[0], plain[1], truncated)
        return anchor

    def _classify(self, head: str, text_below: bool | None, truncated: bool) -> None:
        """``text_below``: None without a marker, else whether the TAIL has text below its marker line."""
        self.head = head
        # A read that stopped below the marker leaves unread TAIL behind it.
        self.tail = text_below is not None and (truncated or text_below)
        self.truncated = truncated and text_below is None
        self._sections: list[Section] | None = None
        lowered = self.head.lower()
        # No section heading can name the cursor when the word is nowhere in the HEAD; else look when asked.
        self._cursor: int | None = _NOT_LOOKED if "cursor" in lowered else None
        self.frontmatter = parse_frontmatter(self.head) or {}
        self.parked = _parked(self.frontmatter)
        if not _has_format(self.frontmatter) and self.cursor is None:
            self.kind = NOT_ANCHOR
        elif _done_in(self.head, lowered):
            self.kind = DONE
        elif self.parked is not None:
            self.kind = PARKED
        else:
            self.kind = LIVE

    @property
    def sections(self) -> list[Section]:
        if self._sections is None:
            self._sections = split_sections(self.head)
        return self._sections

    @property
    def cursor(self) -> int | None:
        """Index of the cursor section, or None."""
        if self._cursor == _NOT_LOOKED:
            self._cursor = cursor_index(self.sections)
        return self._cursor

    @property
    def title(self) -> str | None:
        return title_of(self.head, self.sections)

    @property
    def size(self) -> int:
        return sum(section.size for section in self.sections)

    @property
    def cursor_section(self) -> Section | None:
        return self.sections[self.cursor] if self.cursor is not None else None

    def cursor_line(self) -> str | None:
        """The cursor's first line: what it still asserts."""
        section = self.cursor_section
        return cursor_first_line(section) if section is not None else None


def closed_name(path: str) -> str:
    """``x.md`` → ``x.closed.md``: the rename that closes an anchor."""
    return path[: -len(".md")] + ".closed.md"


def mv_command(path: str) -> str:
    """The exact command that closes the anchor at ``path``."""
    return shell_command("mv", path, closed_name(path))
