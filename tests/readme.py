"""The README's commands as a reader copies them: its sections, fenced blocks (a list item's included) and the
indented blocks, so the tests that run them fail when the README changes without them."""

from __future__ import annotations

import re
import shlex
import textwrap
from pathlib import Path

README = Path(__file__).resolve().parents[1] / "README.md"
#: Where the README's examples put the checkout.
CHECKOUT = "/path/to/session-workflow"
FENCE = re.compile(r"^( *)```(\w*)\n(.*?)^\1```$", re.MULTILINE | re.DOTALL)
SETTINGS_FILE = re.compile(r"`([~./\w-]*settings(?:\.local)?\.json)`")


def section(title: str) -> str:
    """The text of ``## <title>`` up to the next ``## `` heading outside a fenced block."""
    lines: list[str] = []
    inside = fence = False
    for line in README.read_text(encoding="utf-8").splitlines(True):
        if line.lstrip().startswith("```"):
            fence = not fence
        if line.startswith("## ") and not fence:
            if inside:
                break
            inside = line == f"## {title}\n"
        elif inside:
            lines.append(line)
    assert lines, f"the README has no section {title!r}"
    return "".join(lines)


def fenced(text: str) -> list[tuple[str, str, str]]:
    """Each fenced block of ``text`` as (language, body dedented, the text before it since the previous block)."""
    found: list[tuple[str, str, str]] = []
    last = 0
    for match in FENCE.finditer(text):
        indent = match.group(1)
        body = "".join(
            line[len(indent) :] if line.startswith(indent) else line for line in match.group(3).splitlines(True)
        )
        found.append((match.group(2), body, text[last : match.start()]))
        last = match.end()
    return found


def indented(text: str) -> list[str]:
    """Each block indented by four spaces after a blank line (Markdown's code blocks), dedented."""
    blocks = re.findall(r"(?:^|\n)\n((?:    .*\n)+)", text)
    return [textwrap.dedent(block) for block in blocks]


def settings_recipes() -> list[tuple[str, str]]:
    """The Quick start's JSON blocks, each with the settings file the text before it names last: (file, JSON)."""
    return [
        (SETTINGS_FILE.findall(before)[-1], body)
        for language, body, before in fenced(section("Quick start"))
        if language == "json"
    ]


def usage_lines() -> list[list[str]]:
    """The ``session-workflow …`` lines of the Usage block as words, without their comments."""
    (block,) = indented(section("Usage"))
    lines = [shlex.split(line, comments=True) for line in block.splitlines()]
    return [words for words in lines if words[:1] == ["session-workflow"]]
