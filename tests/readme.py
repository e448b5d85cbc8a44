"""The README's commands as a reader copies them: its sections, fenced blocks (a list item's included) and the
indented blocks, so the tests that run them fail when the README changes without them."""

from __future__ import annotations

import json
import re
import shlex
import textwrap
from pathlib import Path
from typing import Any

README = Path(__file__).resolve().parents[1] / "README.md"
#: Where the README's examples put the checkout.
CHECKOUT = "/path/to/session-workflow"
FENCE = re.compile(r"^( *)```(\w*)\n(.*?)^\1```$", re.MULTILINE | re.DOTALL)
SETTINGS_FILE = re.compile(r"`([~./\w-]*settings(?:\.local)?\.json)`")
TARGET = re.compile(r'add to the `"(\w+)"` (object|list)(?: of the `"(\w+)"` object)?')


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


class Recipe:
    """A settings step of the Quick start: the file it names, the keys down to the object or list it adds to, and
    what it adds there (the fenced JSON: a key and its value, or one list item)."""

    def __init__(self, file: str, path: list[str], kind: str, body: str) -> None:
        self.file = file
        self.path = path
        self.kind = kind
        self.value: Any = json.loads("{" + body + "}") if kind == "object" else json.loads(body)

    def apply(self, settings: dict[str, Any]) -> dict[str, Any]:
        """``settings`` with the step done as the README says: every other key kept, the objects made if missing."""
        out: dict[str, Any] = json.loads(json.dumps(settings))
        target = out
        for key in self.path[:-1]:
            target = target.setdefault(key, {})
        if self.kind == "object":
            target.setdefault(self.path[-1], {}).update(self.value)
        elif self.value not in target.setdefault(self.path[-1], []):
            target[self.path[-1]].append(self.value)
        return out


def settings_recipes() -> list[Recipe]:
    """The Quick start's JSON blocks, each with the settings file the text before it names last and the object or
    list it says to add to (``add to the `"allow"` list of the `"permissions"` object``)."""
    recipes = []
    for language, body, before in fenced(section("Quick start")):
        if language != "json":
            continue
        text = " ".join(before.split())
        found = TARGET.findall(text)
        assert found, f"no 'add to the ... object/list' before {body!r}"
        name, kind, parent = found[-1]
        recipes.append(Recipe(SETTINGS_FILE.findall(before)[-1], [parent, name] if parent else [name], kind, body))
    return recipes


def usage_lines() -> list[list[str]]:
    """The ``session-workflow …`` lines of the Usage block as words, without their comments."""
    (block,) = indented(section("Usage"))
    lines = [shlex.split(line, comments=True) for line in block.splitlines()]
    return [words for words in lines if words[:1] == ["session-workflow"]]
