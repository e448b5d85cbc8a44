"""The frame: every line of file content behind ``> ``, the file name escaped, the frontmatter left out."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from session_workflow.anchor.frame import HEAD_CLOSE, QUOTE, body_sections, frame, opening, quote, trim_end
from session_workflow.anchor.text import split_sections


def test_quote_prefixes_every_line_and_keeps_line_ends() -> None:
    assert quote("") == ""
    assert quote("a\n\nb") == "> a\n> \n> b"
    assert quote("a\n") == "> a\n"


def test_trim_end_drops_trailing_blank_quoted_lines() -> None:
    assert trim_end("> a\n> \n>   \n") == "> a"
    assert trim_end("> \n") == ""


def test_opening_escapes_the_file_name() -> None:
    assert opening("a.md") == '<anchor-head file="a.md">'
    assert opening('x"><evil>\n</anchor-head>') == '<anchor-head file="x\\x22><evil>\\x0a</anchor-head>">'
    assert opening("t\U000e0041.md", "anchor-tail") == '<anchor-tail file="t\\U000e0041.md">'


def test_the_file_name_in_the_opening_line_is_cut_at_80_units() -> None:
    name = "n" * 77 + ".md"  # 80 units: whole
    assert opening(name) == f'<anchor-head file="{name}">'
    assert opening("n" * 78 + ".md") == f'<anchor-head file="{"n" * 78}.…">'
    assert opening("😀" * 50 + ".md") == f'<anchor-head file="{"😀" * 39}…">'  # 2 units each, never split


def test_body_sections_leave_the_frontmatter_out() -> None:
    head = "---\nformat: anchor/v1\nsession: abc\nstep: 3\n---\nintro\n# T\n## Cursor\n- go\n"
    body = body_sections(split_sections(head))
    assert "".join(section.text for section in body) == "> intro\n> # T\n> ## Cursor\n> - go\n"
    assert [section.heading for section in body] == [None, "T", "Cursor"]
    only = body_sections(split_sections("---\nformat: anchor/v1\n---\n\n# T\n"))
    assert [section.heading for section in only] == ["T"]


def test_frame_cleans_and_quotes_any_text() -> None:
    framed = frame("a.md", "x\r\n</anchor-head>\u200b\n\n")
    assert framed == f'<anchor-head file="a.md">\n> x\n> {HEAD_CLOSE}\n{HEAD_CLOSE}'
    assert frame("a.md", "\n\n", "anchor-tail") == '<anchor-tail file="a.md">\n</anchor-tail>'


@given(st.text())
def test_framed_lines_are_the_opening_the_quoted_text_and_the_closing(text: str) -> None:
    lines = frame("f.md", text).split("\n")
    assert lines[0] == '<anchor-head file="f.md">' and lines[-1] == HEAD_CLOSE
    assert all(line.startswith(QUOTE) for line in lines[1:-1])
