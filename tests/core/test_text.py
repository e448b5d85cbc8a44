"""Units, cuts and one-line flattening: the measures every part of the block relies on."""

from __future__ import annotations

import json
import re
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from session_workflow.core.text import (
    cut_code_points,
    cut_utf8,
    cut_utf16,
    duration_text,
    named,
    one_line,
    shell_command,
    shell_quote,
    utf8_len,
    utf16_len,
    without_comments,
)
from session_workflow.workstate.section import WorkState, section, slug_of_issue_url
from session_workflow.workstate.state import decode
from tests.mod_tables import check_mod_table
from tests.reliability.strategies import char_text
from tests.shell import assert_splits, bash_words, hostile_words

REPO = Path(__file__).resolve().parents[2]

# Lone surrogates, tag, format and astral characters among any others: what the measures must hold for.
any_text = char_text()


def emitted_utf8(text: str) -> int:
    """The bytes ``text`` takes in the hook's output, where a lone surrogate becomes U+FFFD (three bytes)."""
    return len(text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace").encode("utf-8"))


def test_utf16_counts_astral_characters_as_two() -> None:
    assert utf16_len("a€😀") == 4
    assert utf8_len("a€😀") == 8


# Code points of every UTF-8 length, both surrogate halves, and the edges between the lengths and of the astral plane.
_UNIT_EDGES = [
    "a",
    "\x7f",
    "\x80",
    "é",
    "\u07ff",
    "\u0800",
    "€",
    "\ud83d",
    "\ude00",
    "\uffff",
    "\U00010000",
    "😀",
    "\U0010ffff",
]


@given(st.lists(st.sampled_from(_UNIT_EDGES) | st.characters(), max_size=12).map("".join))
def test_utf16_len_is_the_length_of_the_utf16_encoding(text: str) -> None:
    """Astral characters two units, every other code point (a lone surrogate included) one, as UTF-16 has them."""
    assert utf16_len(text) == len(text.encode("utf-16-le", "surrogatepass")) // 2


def test_one_line_flattens_controls_and_strips_invisibles() -> None:
    forged = "fix\n#9 [pending] forged\r\x00\t tab\u2028sep \u202eevil\u200b zero\ufeff"
    assert one_line(forged) == "fix #9 [pending] forged tab sep evil zero"


def test_one_line_replaces_lone_surrogates() -> None:
    assert one_line("a\ud800b") == "a b"


def test_cut_utf8_keeps_marker_inside_bound_and_whole_characters() -> None:
    assert cut_utf8("ééé", 6) == "ééé"
    cut = cut_utf8("éééé", 6)
    assert utf8_len(cut) <= 6 and cut.endswith("…") and cut == "é…"


def test_cut_utf16_never_splits_a_surrogate_pair() -> None:
    assert cut_utf16("😀😀😀", 4) == "😀…"
    assert cut_utf16("abc", 0) == ""


def test_cut_code_points() -> None:
    assert cut_code_points("abcdef", 4) == "abc…"
    assert cut_code_points("abc", 4) == "abc"


def test_a_lone_surrogate_counts_as_the_three_bytes_it_is_sent_as() -> None:
    assert utf8_len("\ud800") == emitted_utf8("\ud800") == 3
    assert utf16_len("\ud800") == 1


@given(any_text, st.integers(min_value=0, max_value=64))
def test_cuts_stay_within_bound(text: str, bound: int) -> None:
    assert emitted_utf8(text) <= utf8_len(text)
    assert emitted_utf8(cut_utf8(text, bound)) <= utf8_len(cut_utf8(text, bound)) <= bound
    assert utf16_len(cut_utf16(text, bound)) <= bound
    assert len(cut_code_points(text, bound)) <= bound


@given(any_text)
def test_one_line_has_no_line_breaks_or_controls(text: str) -> None:
    flat = one_line(text)
    assert not any(ch in flat for ch in "\n\r\x00\u2028\u2029\u202e\u200b")
    assert flat == flat.strip()
    flat.encode("utf-8")


@given(any_text)
def test_one_line_fast_path_matches_the_full_flattening(text: str) -> None:

    from session_workflow.core import text as textutil

    slow = re.sub(textutil._BREAKING, " ", re.sub(textutil._INVISIBLE, "", text)).strip()
    assert one_line(text) == slow


# --- invisible characters ---------------------------------------------------------------------------------------


def _format_characters() -> list[str]:
    import unicodedata

    return [chr(code) for code in range(0x110000) if unicodedata.category(chr(code)) == "Cf"]


def test_every_format_character_and_the_tag_block_are_stripped() -> None:
    from session_workflow.core.text import has_invisible, strip_invisible

    hidden = _format_characters() + [chr(code) for code in range(0xE0000, 0xE0080)]
    assert [char for char in hidden if strip_invisible(f"a{char}b") != "ab"] == []
    assert all(has_invisible(char) for char in hidden)
    assert one_line("".join(hidden) + " x ") == "x"


def test_printable_invisibles_are_caught_without_the_regex() -> None:

    from session_workflow.core import text as textutil

    printable = {chr(code) for code in range(0x110000) if chr(code).isprintable()}
    caught = {char for char in printable if re.match(textutil._INVISIBLE, char)}
    assert caught <= textutil._hidden_printables()  # it may name code points an older Unicode leaves unassigned
    assert one_line("❤\ufe0f e\u034f\U000e0101") == "❤ e"


def test_lengths_are_counted_after_stripping() -> None:
    tagged = "".join(chr(0xE0000 + ord(char)) for char in "hidden instruction")
    flat = one_line("v" * 100 + tagged * 50)
    assert flat == "v" * 100 and cut_utf8(flat, 160) == flat


def test_escaped_shows_exactly_what_is_there_on_one_line() -> None:
    from session_workflow.core.text import escaped

    assert escaped("/plain/path name.md") == "/plain/path name.md"
    assert escaped('a\nb\\c"d\u202ee\U000e0041f\udcff', '"') == "a\\x0ab\\\\c\\x22d\\u202ee\\U000e0041f\\xff"
    assert escaped("é😀") == "é😀"


@given(st.text())
def test_escaped_is_one_visible_line(text: str) -> None:
    from session_workflow.core.text import escaped, has_invisible

    shown = escaped(text, '"')
    assert shown.isprintable() or not [c for c in shown if not c.isprintable() and ord(c) > 0x7E]
    assert "\n" not in shown and '"' not in shown and not has_invisible(shown)
    shown.encode("utf-8")


def test_without_comments_takes_out_html_comments_across_lines() -> None:
    lines = ["<!-- a -->", "keep <!-- b --> this", "<!-- open", "still inside", "--> after", "<!---->x", "  ", "y <!--"]
    assert without_comments(lines) == ["keep  this", "after", "x", "y"]
    assert without_comments(["-->", "<!-- x --><!-- y -->"]) == ["-->"]


# --- one table for the mod (hooks/mod/text.ts) -----------------------------------------------------------------------

MOD_TEXT = REPO / "hooks" / "mod" / "text.ts"
MOD_GOLDEN = REPO / "tests" / "mod" / "python-text.ts"


def mod_spans(name: str) -> set[int]:
    """The code points of one span table of hooks/mod/text.ts (``export const NAME ... = [[0x.., 0x..], ...]``)."""
    source = MOD_TEXT.read_text(encoding="utf-8")
    block = source[source.index(f"export const {name}") :]
    block = block[: block.index("\n]\n")]
    points: set[int] = set()
    for first, last in re.findall(r"\[(0x[0-9a-f]+), (0x[0-9a-f]+)\]", block):
        points.update(range(int(first, 16), int(last, 16) + 1))
    return points


def test_the_mods_cleaner_tables_are_what_one_line_does_over_every_code_point() -> None:
    """What Python's ``one_line`` strips and what it breaks on, over all of Unicode, are the mod's two tables
    (tests/mod/text.test.ts holds the mod's ``oneLine`` to the same tables)."""
    stripped, breaking = set(), set()
    for code in range(0x110000):
        flat = one_line("a" + chr(code) + "b")
        if flat == "ab":
            stripped.add(code)
        elif flat == "a b":
            breaking.add(code)
        else:
            assert flat == "a" + chr(code) + "b", hex(code)
    assert mod_spans("INVISIBLE_SPANS") == stripped and len(stripped) == 4206
    assert mod_spans("BREAKING_SPANS") == breaking


def python_text_cases() -> dict[str, object]:
    """What the Python side gives for the mod's golden inputs: sections (workstate/section.py), shell quotes and
    commands (core/text.py)."""
    sections = []
    for fields in MOD_SECTION_FIELDS:
        slug = slug_of_issue_url(fields["url"])  # type: ignore[arg-type]
        sections.append({"fields": fields, "slug": slug, "text": section(WorkState(**fields), False, slug)})  # type: ignore[arg-type]
    quotes = [{"path": path, "quoted": shell_quote(path)} for path in MOD_QUOTED_PATHS]
    commands = [{"words": words, "command": shell_command(*words)} for words in MOD_COMMANDS]
    return {"sections": sections, "quotes": quotes, "commands": commands, "states": state_file_cases()}


# Every bound the section shares with the mod, crossed by generated fields: the stored URL's 300 characters (a plain
# URL, and an issue URL whose links the slug would give), the title's 120 and the step's 60 code points in ASCII,
# two-, three- and four-byte (astral: two UTF-16 units) characters, and all of them at once against 1024 bytes.
PADS = ("a", "é", "中", "🙂")


def section_fields(**values: object) -> dict[str, object]:
    return values


GENERATED_SECTION_FIELDS: list[dict[str, object]] = [
    *(
        {"ticket": 34, "title": "t", "map": 2, "url": "https://t.example/" + "u" * (length - 18), "step": "s"}
        for length in range(296, 305)
    ),
    *(
        {
            "ticket": 34,
            "title": "t",
            "map": 2,
            "url": f"https://github.com/o/r/issues/{'0' * (length - 32)}34",
            "step": "s",
        }
        for length in range(296, 305)
    ),
    *(section_fields(ticket=7, title=pad * n, map=None, url=None, step="s") for pad in PADS for n in (119, 120, 121)),
    *(section_fields(ticket=7, title="t", map=None, url=None, step=pad * n) for pad in PADS for n in (59, 60, 61)),
    *(
        {
            "ticket": "P-" + "9" * 62,
            "title": pad * 121,
            "map": 10**12 - 1,
            "url": "http://x.example/" + "v" * 283,
            "step": pad * 61,
            "paused": True,
            "auto": True,
        }
        for pad in PADS
    ),
]


def state_file_cases() -> list[dict[str, object]]:
    """Work-state files generated around the bounds the mod's reader shares with Python's (``decode``): 64 KiB in
    UTF-8 bytes (not UTF-16 units: padded with one-, two-, three- and four-byte characters, at the byte bound and at
    the count where the UTF-16 units would reach it), a 256-character owner, a 64-character tracker id, an issue
    number under 10^12. Each is ``prefix + pad * count + suffix``; ``owner`` is the session Python's reader gives
    the state to (None: refused, or no owner it can name), which the mod's ``parseWorkState`` must give too."""
    base: dict[str, object] = {"version": 1, "ticket": 34, "title": "Fix the parser", "map": 12, "step": "plan"}
    variants: list[tuple[dict[str, object], str, set[int]]] = []
    for pad in PADS:
        document = {**base, "session": "owner-1", "notes": "@PAD@"}
        fixed = utf8_len(json.dumps(document, ensure_ascii=False)) - len("@PAD@")
        at_bytes = (65_536 - fixed) // utf8_len(pad)
        at_units = (65_536 - fixed) // utf16_len(pad)
        counts = {at_bytes + step for step in (-1, 0, 1, 2)} | {at_units + step for step in (-1, 0, 1)}
        counts.add((80_000 - fixed) // utf8_len(pad))
        variants.append((document, pad, counts))
    for length in (255, 256, 257):
        variants.append(({**base, "session": "s" * length}, "", {0}))
        variants.append(({**base, "session": "é" + "s" * (length - 1)}, "", {0}))
    for length in (63, 64, 65):
        variants.append(({**base, "session": "owner-1", "ticket": "P" * length}, "", {0}))
    for number in (0, 1, 10**12 - 1, 10**12):
        variants.append(({**base, "session": "owner-1", "ticket": number}, "", {0}))
        variants.append(({**base, "session": "owner-1", "map": number}, "", {0}))
    cases: list[dict[str, object]] = []
    for document, pad, counts in variants:
        text = json.dumps(document, ensure_ascii=False)
        prefix, suffix = text.split("@PAD@") if "@PAD@" in text else (text, "")
        for count in sorted(counts):
            decoded = decode((prefix + pad * count + suffix).encode("utf-8"))
            owner = decoded[0].session if decoded is not None else None
            cases.append({"prefix": prefix, "pad": pad, "count": count, "suffix": suffix, "owner": owner})
    return cases


MOD_SECTION_FIELDS: list[dict[str, object]] = [
    {"ticket": 34, "title": "Fix the parser", "map": 12, "url": "https://github.com/o/r/issues/34", "step": "execute"},
    {"ticket": "PROJ-7", "title": 'A "quoted"\u202e title\xad\tover\n lines', "map": None, "url": None, "step": ""},
    {"ticket": 9, "title": "🙂" * 130, "map": 3, "url": "http://tracker.example/9", "step": "é" * 80, "auto": True},
    {"ticket": 5, "title": "t", "map": 1, "url": "https://github.com/o/r/issues/x", "step": "  plan \u2028 it "},
    {
        "ticket": 77,
        "title": "🙂" * 200,
        "map": 2,
        "url": "https://github.com/own-er/na.me/issues/77" + "7" * 250,
        "step": "🙂" * 70,
        "paused": True,
        "auto": True,
    },
    {
        "ticket": 8,
        "title": "x",
        "map": 4,
        "url": "https://github.com/own-er/na.me/issues/8",
        "step": "go",
        "paused": True,
    },
]
MOD_SECTION_FIELDS += GENERATED_SECTION_FIELDS
MOD_QUOTED_PATHS = [
    "/p/.claude/anchors/a.md",
    '/home/dev/My Proj/.claude/anchors/it\'s "the" run.md',
    "/p/\u202eevil\tx.md",
    "/p/\U000e0041🙂 ok.md",
    "/p/a\xa0b.md",
    "/p/\udc80x.md",
    "/p/\\back.md",
    "/p/$(rm -rf ~)`x`.md",
    "~other/x.md",
    "",
    "/p/\x1b[31mred\x1b[0m.md",
    "/p/\udcffx\ud800.md",
]
MOD_COMMANDS = [
    ["session-workflow", "anchor", "step", "/srv/shop;cd;touch X;#/.claude/anchors/a.md"],
    ["git", "-C", "/home/u/My Shop$(touch X)`y`|z", "log", "--oneline", "-10"],
    ["x", "-n", "~", "it's", "a\nb\x1b[2J\u202ec\U000e0041", "\\", ""],
]


def test_the_mods_golden_texts_are_what_python_gives() -> None:
    """tests/mod/python-text.ts (the mod's test holds ``sectionOf`` and ``shellQuote`` to it) is exactly what
    ``section`` and ``shell_quote`` give; SESSION_WORKFLOW_UPDATE_GOLDEN=1 writes it anew."""
    header = (
        "// Generated by tests/core/test_text.py (SESSION_WORKFLOW_UPDATE_GOLDEN=1): what the Python side gives for\n"
        "// these inputs, which that test holds it to; tests/mod/text.test.ts holds the mod to it.\n"
    )
    check_mod_table(MOD_GOLDEN, "PYTHON_TEXT", header, python_text_cases())


@settings(max_examples=300, deadline=None)
@given(st.lists(hostile_words, min_size=1, max_size=4))
def test_a_command_splits_back_into_exactly_its_words_on_one_visible_line(words: list[str]) -> None:
    """Spaces, $(), backticks, ;, |, quotes, a leading -, newlines, ESC, bidi controls, undecodable bytes: bash
    (C locale, in bytes) and shlex give back exactly the words, and the line shows every one of them."""
    assert_splits(shell_command(*words), words)


def test_a_word_is_bare_only_in_shlex_quotes_safe_set() -> None:
    assert shell_command("git", "-C", "/p/a-b_1.2:x@y%z+=,", "log") == "git -C /p/a-b_1.2:x@y%z+=, log"
    assert shell_quote("~other/x") == "'~other/x'"  # a bare ~ at a word's start is another user's home
    assert bash_words(shell_command("~root", "")) == [b"~root", b""]
    assert shell_quote("My Shop;touch X;#") == "'My Shop;touch X;#'"
    assert shell_quote("it's") == "'it'\\''s'"
    assert shell_quote("a`id`") == "$'a\\x60id\\x60'"  # no backtick ends the code span the command is shown in
    # Hidden characters as their bytes, which bash reads back in any locale (\u would stay literal in C).
    assert shell_quote("/p/\x1b[2J\u202e\udcff\n") == "$'/p/\\x1b[2J\\xe2\\x80\\xae\\xff\\x0a'"


def test_a_duration_is_minutes_under_an_hour_and_whole_hours_above() -> None:
    assert [duration_text(s) for s in (-5, 0, 59.9, 60, 3599, 3600, 96 * 3600 + 3599)] == [
        "<1 min",
        "<1 min",
        "<1 min",
        "1 min",
        "59 min",
        "1h",
        "96h",
    ]


# --- named: the one way a name is shown in prose -------------------------------


def test_a_name_is_one_code_span_nothing_in_it_can_close() -> None:
    assert named("plan.md (the user confirmed it)") == "`plan.md (the user confirmed it)`"
    assert named("a`b``c") == "`a\\x60b\\x60\\x60c`"  # escaped as shell_quote writes a backtick
    assert named("x\n## Control anchor: y") == "`x\\x0a## Control anchor: y`"
    assert named("") == '""'


def test_a_cut_name_keeps_its_start_or_its_end_within_the_cap() -> None:
    assert named("abcdefghij", 5) == "`abcd…`"
    assert named("/long/path/to/file.md", 8, keep_end=True) == "`…file.md`"
    assert named("short", 5) == "`short`"


@given(any_text)
def test_no_text_makes_a_name_that_closes_its_span(text: str) -> None:
    shown = named(text, 40)
    assert shown == '""' or (shown.startswith("`") and shown.endswith("`") and shown.count("`") == 2)
    assert "\n" not in shown
