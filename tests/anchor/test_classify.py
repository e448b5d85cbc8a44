"""The cheap paths of the anchor reader: string-method parsing, the bytes fast path and lazy classification.

Headings, fences, frontmatter pairs and done lines are matched with string methods so that the hook compiles no
regex; the patterns below are the rules they implement, and the properties check both agree on any line. The
bytes fast path (``AnchorText.from_bytes``) must read exactly what cleaning and splitting the whole text reads.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from session_workflow.anchor import discover
from session_workflow.anchor import text as anchor
from session_workflow.anchor.text import (
    DONE,
    LIVE,
    NOT_ANCHOR,
    PARKED,
    STEP_BULLET,
    AnchorText,
    heading_of,
    is_done_line,
    lines_of,
    next_label_end,
    parse_frontmatter,
    split_head,
)
from session_workflow.core.text import INVISIBLE_RANGES, shell_quote

# The rules as regexes (CommonMark ATX headings and fence openers; the frontmatter key; the done line).
HEADING = r"^ {0,3}(#{1,6})(?:[ \t]+(.*?))?[ \t]*$"
CLOSING_HASHES = r"(?:^|[ \t]+)#+[ \t]*$"
FENCE = r"^ {0,3}(`{3,}(?=[^`]*$)|~{3,})"
FRONTMATTER_PAIR = r"^([A-Za-z0-9_][A-Za-z0-9_.-]*)[ \t]*:(.*)$"
DONE_LINE = (
    r"^status[ .]*:?[ .]*(?:closed|done|complete|completed|landed|shipped|merged)"
    r"(?:[ .]+(?:on|to)[ .]+[^ ]+?)?[ .]*$"
)
SHELL_SAFE = r"[A-Za-z0-9_@%+=:,./-]+"  # shlex.quote's set: no ~
MARKER = "<!-- anchor:tail -->"

# Pieces that exercise every branch: markup, indentation, line ends, BOMs, controls, bidi, case folding traps.
PIECES = [
    *["\n", "\n", "\r\n", "\r", " ", "   ", "    ", "\t", "#", "###", "#######", "# ", "## Cursor", "# Title"],
    *["```", "````", "~~~", "```py", "``` a`b", "---", " --- ", "-\ufeff--", "format: anchor/v1", "Format: Anchor/x"],
    *["formats: anchor/v1", "parked: later", 'PARKED: "no"', "parked:", "Status: done", "**Status:** merged to main."],
    *["status . : done on x", "status: complete the migration", "STATUS: closed", "status: landed on ...", "tatus"],
    *["Sta\x01tus: done", MARKER, f" {MARKER} ", "<!-- anchor:\ufefftail -->", f"{MARKER}\x01", "</anchor-head>"],
    *["cursor", "CURSOR", "curſor", "İ", "ſ", "Σ", "\u00a0", "\u2028", "\u2029", "\u202e", "\u2066", "\ufeff"],
    *["\x00", "\x0b", "\x0c", "\x1c", "\x85", "\x7f", "\x9f", "—", "😀", "key: value", "a_b.c-d : v", ".x: y"],
    *["k\t: v", "title: T", "task: X", "step: 3", "- Step 4: did", "x", "on", "to", ":", "\ufffd", "'", '"'],
    *["\ud800", "\udc80", "\udcff", "\U000e0041", "\u00ad", "\\"],
]
texts = st.lists(st.sampled_from(PIECES) | st.text(max_size=3), max_size=50).map("".join)
raw_bytes = st.lists(
    st.sampled_from(PIECES).map(lambda piece: piece.encode("utf-8", "surrogatepass"))
    | st.sampled_from([b"\xff", b"\xef\xbb\xbf", b"\xc2", b"\xe2\x80", b"\xe2\x80\xa8", b"\xc2\x85", b"\xed\xa0\x80"])
    | st.binary(max_size=3),
    max_size=50,
).map(b"".join)
MANY = settings(max_examples=600, deadline=None, suppress_health_check=list(HealthCheck))


def reference_heading(line: str) -> tuple[int, str] | None:
    match = re.match(HEADING, line.rstrip("\r\n"))
    if match is None:
        return None
    return len(match.group(1)), re.sub(CLOSING_HASHES, "", match.group(2) or "").strip()


def reference_fence(line: str) -> str | None:
    match = re.match(FENCE, line.rstrip("\r\n"))
    return match.group(1) if match else None


def reference_frontmatter(head: str) -> dict[str, str] | None:
    """Line 1 is ``---`` (BOMs and blanks aside), up to the next such line; later keys win, quotes are dropped."""
    lines = head.split("\n")
    bare = [line.replace("\ufeff", "").strip() for line in lines]
    if not head or bare[0] != "---" or "---" not in bare[1:]:
        return None
    pairs = {}
    for line in lines[1 : bare.index("---", 1)]:
        match = re.match(FRONTMATTER_PAIR, line.rstrip("\r").replace("\ufeff", ""))
        if match:
            value = match.group(2).strip()
            if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
                value = value[1:-1].strip()
            pairs[match.group(1).lower()] = value
    return pairs


def reference_done(line: str) -> bool:
    cleaned = line.rstrip("\r\n").replace("\ufeff", "").replace("*", "").replace("#", "").strip().lower()
    return bool(re.match(DONE_LINE, " ".join(cleaned.split())))


def reference_quote(text: str) -> str:
    """Bare when shell-safe (shlex.quote's set), single-quoted when visible, else ``$'…'`` with each hidden
    character as its bytes."""
    if re.fullmatch(SHELL_SAFE, text):
        return text
    if "`" not in text and not any(map(invisible, text)):
        return "'" + text.replace("'", "'\\''") + "'"
    escaped = ""
    for char in text:
        code = ord(char)
        if char == "\\":
            escaped += "\\\\"
        elif 0xDC80 <= code <= 0xDCFF:
            escaped += f"\\x{code - 0xDC00:02x}"
        elif char in "'`" or invisible(char):
            escaped += "".join(f"\\x{byte:02x}" for byte in char.encode("utf-8", "surrogatepass"))
        else:
            escaped += char
    return "$'" + escaped + "'"


def invisible(char: str) -> bool:
    """What a shell line hides: anything not printable (controls, separators, surrogates, format characters) and
    the printable default-ignorables (combining grapheme joiner, fillers, variation selectors)."""
    return not char.isprintable() or re.match(f"[{INVISIBLE_RANGES}]", char) is not None


def reference_split_head(text: str) -> tuple[str, str | None]:
    offset = 0
    for line in re.findall(r"[^\n]*\n|[^\n]+\Z", text):
        if line.rstrip("\r\n").replace("\ufeff", "").strip() == MARKER:
            head = text[:offset]
            return (text, None) if not head.replace("\ufeff", "").strip() else (head, text[offset:])
        offset += len(line)
    return text, None


def facts(text: AnchorText) -> tuple[object, ...]:
    """Everything a reader of an AnchorText can observe."""
    sections = [(section.heading, section.level, section.text) for section in text.sections]
    classified = (text.head, text.tail, text.truncated, text.kind, text.parked, text.frontmatter)
    return (*classified, text.cursor, text.title, sections, text.cursor_line())


# --- string methods implement the rules ------------------------------------------------------------------------


@MANY
@given(line=texts)
def test_line_rules_match_their_patterns(line: str) -> None:
    for one in lines_of(line):
        assert heading_of(one) == reference_heading(one)
        assert anchor._fence_opener(one) == reference_fence(one)
        assert is_done_line(one) == reference_done(one)
        assert shell_quote(one) == reference_quote(one)


@MANY
@given(text=texts)
def test_frontmatter_and_split_match_their_references(text: str) -> None:
    for head in (text, "---\n" + text, "---\n" + text + "\n---\nbody"):
        assert parse_frontmatter(head) == reference_frontmatter(head)
    assert split_head(text) == reference_split_head(text)


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("# A #", (1, "A")),
        ("# A#", (1, "A#")),
        ("## # #", (2, "#")),
        ("# ###", (1, "")),
        ("#\tTab ##\t", (1, "Tab")),
        ("   ###### Six", (6, "Six")),
        ("    # four spaces", None),
        ("####### seven", None),
        ("#hash", None),
    ],
)
def test_heading_examples(line: str, expected: tuple[int, str] | None) -> None:
    assert heading_of(line) == expected


def test_step_bullet_is_compiled_on_first_use() -> None:
    match = STEP_BULLET.match("  * Step 12: shipped")
    assert match is not None and match.group(1) == "12"
    assert STEP_BULLET.match("Step 12") is None


# --- the bytes fast path reads what the whole-text path reads ---------------------------------------------------


@MANY
@given(data=raw_bytes, truncated=st.booleans())
def test_from_bytes_equals_decoding_everything(data: bytes, truncated: bool) -> None:
    assert facts(AnchorText.from_bytes(data, truncated)) == facts(
        AnchorText(data.decode("utf-8", "replace"), truncated)
    )


@pytest.mark.parametrize(
    "data",
    [
        b"---\nformat: anchor/v1\n---\n# A\n## Cursor\n- go\n<!-- anchor:tail -->\n\xc2\x9f log \x00\n",  # dirty TAIL
        b"# A\n## Cursor\n<!-- anchor:tail -->\n\x01\n",  # only a control below the marker: no TAIL text
        b"# A\n## Cursor\n<!-- anchor:tail -->\n \t\n\n",
        b"# A\n## Cursor\n<!-- anchor:tail -->",
        b"# A\r\n## Cursor\r\n<!-- anchor:tail -->\r\nlog\r\n",  # CRLF: the whole text is cleaned
        b"\xef\xbb\xbf# A\n<!-- anchor:\xef\xbb\xbftail -->\nlog\n",  # a BOM inside the marker still marks it
        b"# A\nsee <!-- anchor:tail --> inline\n## Cursor \xe2\x80\x94 now\n<!-- anchor:tail -->\nlog\n",
        b"# A\n\xe2\x80\xae## Cursor\n<!-- anchor:tail -->\nlog\n",  # a bidi override is removed before splitting
        b"  \n<!-- anchor:tail -->\n## Cursor\n",  # nothing above the marker: the whole file is the HEAD
    ],
)
def test_from_bytes_examples(data: bytes) -> None:
    assert facts(AnchorText.from_bytes(data)) == facts(AnchorText(data.decode("utf-8", "replace")))


def test_kind_needs_no_sections_when_the_frontmatter_says_anchor() -> None:
    text = AnchorText.from_bytes(b"---\nformat: anchor/v1\nparked: later\n---\n# A\n## Cursor\nStatus: done\n")
    assert text.kind == DONE and text._sections is None
    assert AnchorText("---\nformat: anchor/v1\n---\n# A\n").kind == LIVE
    assert AnchorText("---\nformat: anchor/v1\nparked: x\n---\n").kind == PARKED
    assert AnchorText("# Notes\n```\n## Cursor\n```\n").kind == NOT_ANCHOR


# --- the hook classifies many anchors without parsing them ------------------------------------------------------


def test_ranking_many_anchors_splits_only_the_chosen_one(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = tmp_path / ".claude" / "anchors"
    folder.mkdir(parents=True)
    for index in range(40):  # the newest live, the rest done or parked: every file is read to rank them
        parked = "parked: later\n" if index % 2 == 0 and index else ""
        body = "**Status:** done\n" if index % 2 else ""
        path = folder / f"run-{index:02d}.md"
        path.write_text(f"---\nformat: anchor/v1\n{parked}---\n# Run {index}\n{body}## Cursor\n- next\n{MARKER}\nlog\n")
        os.utime(path, (1_000_000 - index, 1_000_000 - index))
    splits: list[str] = []
    real = anchor.split_sections

    def counting(head: str) -> list[anchor.Section]:
        splits.append(head)
        return real(head)

    monkeypatch.setattr(anchor, "split_sections", counting)
    scan = discover.scan_dir(str(tmp_path))
    assert scan is not None and scan.total == 40 and len(scan.ranked) == 40
    assert [(candidate.name, candidate.kind) for candidate in scan.ranked[:2]] == [
        ("run-00.md", LIVE),
        ("run-02.md", PARKED),
    ]
    assert splits == []
    assert scan.ranked[0].title() == "Run 0" and len(splits) == 1


def test_importing_the_anchor_part_compiles_no_regex() -> None:
    src = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "src")
    code = (
        "import json, re, sys; compiled = []; real = re._compile\n"
        "def spy(*args): compiled.append(args[0]); return real(*args)\n"
        f"re._compile = spy; sys.path.insert(0, {src!r})\n"
        "import session_workflow.anchor.part\n"
        "print(compiled)"
    )
    result = subprocess.run([sys.executable, "-I", "-S", "-B", "-c", code], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"


STEP_PATTERN = r"^[ \t]*[-*+][ \t]+Step[ \t]+(\d{1,9})\b"
_STEP_LINES = st.from_regex(
    r"[ \t]{0,2}[-*+x]{0,2}[ \t]{0,2}(Step|step|Ste|)[ \t]{0,2}[0-9٣²]{0,11}[_a :.x\n]{0,2}", fullmatch=True
)


@given(_STEP_LINES | st.text(alphabet=" \t-*+Step019٣²_x:\n"))
def test_step_bullet_matches_as_its_pattern_does(line: str) -> None:
    """String methods, the pattern's meaning (``STEP_PATTERN``)."""
    expected = re.match(STEP_PATTERN, line)
    found = STEP_BULLET.match(line)
    assert (found.group(1) if found else None) == (expected.group(1) if expected else None)


@pytest.mark.parametrize("line", ["- Step 12: x", "* Step\t1234567890", "+\tStep 9_", "  - Step ٣٤ done", "-Step 1"])
def test_step_bullet_edges(line: str) -> None:
    expected = re.match(STEP_PATTERN, line)
    found = STEP_BULLET.match(line)
    assert (found.group(1) if found else None) == (expected.group(1) if expected else None)


# What next_label_end and the list marker's end mean: the patterns they stand for (string methods, so that PreCompact
# never imports ``re``).
NEXT_PATTERN = (
    r"(?i)^(?:[-*+]\s{1,8})?(?:\*\*)?next(?: action| step)?(?: [^:*\n]{0,40})?(?:\*\*)?\s{0,8}:\s{0,8}(?:\*\*)?\s{0,8}"
)
BULLET_PATTERN = r"^[-*+][ \t]{1,8}"
# Pieces the pattern turns on: markers, bold, the words in any case (and the letters re folds into them: İ ı ſ),
# runs of whitespace that straddle its bounds (Unicode ones too), colons, stars and line ends.
_LABEL_PIECES = st.sampled_from(
    [
        "-",
        "*",
        "+",
        "**",
        " ",
        "\t",
        "\u00a0",
        "\u2003",
        "\n",
        ":",
        "next",
        "NeXt",
        "nExT",
        " action",
        " ACTION",
        " step",
        " ſtep",
        " actıon",
        " actİon",
        " to do",
        "x",
        "ñ",
        "é",
    ]
)
_LABEL_LINES = st.lists(_LABEL_PIECES, max_size=12).map("".join) | st.builds(
    lambda lead, gap, words, tail: lead + "next" + words + gap + ":" + tail,
    st.sampled_from(["", "- ", "*\t", "**", "- **", "+" + " " * 8, "-" + " " * 9]),
    st.text(alphabet=" \t\u00a0*", max_size=12),
    st.text(alphabet="ab :*\n", max_size=46).map(lambda words: " " + words if words else ""),
    st.text(alphabet=" *x\u2003", max_size=24),
)


@given(_LABEL_LINES)
def test_next_label_matches_as_its_pattern_does(line: str) -> None:
    expected = re.match(NEXT_PATTERN, line)
    assert next_label_end(line) == (expected.end() if expected else -1)


@pytest.mark.parametrize(
    "line",
    [
        "- **Next action on resume**: port the consumer",
        "Next: x",
        "NEXT ACTION: port",
        "next step:\u00a0 **  go",
        "* Next" + " " * 9 + ": no",
        "next " + "a" * 40 + ": yes",
        "next " + "a" * 41 + ": no",
        "next " + "a" * 40 + " " * 8 + ": yes",
        "next actionable: yes",
        "Nexts: no",
        "-" + " " * 9 + "next: no",
    ],
)
def test_next_label_edges(line: str) -> None:
    expected = re.match(NEXT_PATTERN, line)
    assert next_label_end(line) == (expected.end() if expected else -1)


@given(st.text(alphabet="-*+ \tx", max_size=14))
def test_the_list_marker_matches_as_its_pattern_does(line: str) -> None:
    expected = re.match(BULLET_PATTERN, line)
    assert anchor._bullet_end(line) == (expected.end() if expected else 0)
