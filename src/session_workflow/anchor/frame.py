"""The frame around the file content the hook injects: every line of it quoted with one prefix.

No plugin line starts with ``QUOTE``, and every line of file content does, so the plugin's own lines are
exactly the unquoted ones: no text in a file can forge a header, a task line or the end of its frame, whatever
characters it uses (by construction, not by recognising known tricks). The file name in the opening line is
escaped. Pure; shared by the SessionStart anchor part and the CLI that prints a HEAD as the hook frames it.
"""

from __future__ import annotations

from session_workflow.anchor.text import Section, clean_for_model, frontmatter_span, lines_of
from session_workflow.core.text import cut_utf16, escaped

# The prefix of every line of injected file content (the user-prompts part quotes with it too).
QUOTE = "> "
HEAD_CLOSE = "</anchor-head>"
NAME_CAP = 80


def quote(text: str) -> str:
    """Every line of ``text`` (split on ``\\n``) behind ``QUOTE``, line ends kept; "" stays ""."""
    if not text:
        return ""
    end = "\n" if text.endswith("\n") else ""
    body = text[: len(text) - len(end)]
    return QUOTE + body.replace("\n", "\n" + QUOTE) + end


def trim_end(quoted: str) -> str:
    """Quoted text without its trailing blank lines and final line end (the frame's closing line follows)."""
    lines = quoted.split("\n")
    while lines and not lines[-1][len(QUOTE) :].strip():
        lines.pop()
    return "\n".join(lines)


def opening(name: str, tag: str = "anchor-head") -> str:
    """The frame's opening line, the file name escaped (no quote, control or invisible character) and cut."""
    return f'<{tag} file="{cut_utf16(escaped(name, chr(34)), NAME_CAP)}">'


def body_sections(sections: list[Section]) -> list[Section]:
    """The HEAD's sections as the block shows them: the frontmatter left out (the block states the step and the
    age itself), every line quoted."""
    shown = list(sections)
    if shown and shown[0].heading is None:
        span = frontmatter_span(shown[0].text)
        if span is not None:
            rest = "".join(lines_of(shown[0].text)[span[1] + 1 :])
            shown[0:1] = [Section(None, 0, rest)] if rest.strip() else []
    return [Section(section.heading, section.level, quote(section.text)) for section in shown]


def frame(name: str, text: str, tag: str = "anchor-head") -> str:
    """Any text from a file framed as the hook frames a HEAD: the opening line, its lines quoted, the closing line
    (``anchor show --all`` frames the TAIL so, as ``anchor-tail``)."""
    quoted = trim_end(quote(clean_for_model(text)))
    return "\n".join([opening(name, tag), *([quoted] if quoted else []), f"</{tag}>"])
