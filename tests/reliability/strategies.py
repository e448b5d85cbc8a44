"""Hypothesis strategies for hostile hook inputs: payloads, anchor bytes, task files, transcripts, work states.

Text is drawn from an alphabet weighted towards what breaks line-based output and JSON: line and paragraph
separators, C0/C1 controls, bidi, zero-width, format and tag characters, lone surrogates, astral characters, and
fragments that imitate the block's own lines (its header, the task-list header, task lines, the anchor frame).
"""

from __future__ import annotations

import json

from hypothesis import strategies as st

from session_workflow.anchor.frame import HEAD_CLOSE
from session_workflow.anchor.text import TAIL_MARKER
from session_workflow.hook import compose
from session_workflow.tasks.render import FALLBACK_HINT, HEADER_EXACT, NOT_RECOVERED
from session_workflow.transcript.recovery import PROMPTS_HEADER, TODOS_HEADER
from session_workflow.workstate.section import HEADING as WORK_STATE_HEADING

SPECIAL_CHARS = (
    "\n",
    "\r",
    "\t",
    "\x00",
    "\x0b",
    "\x0c",
    "\x1b",
    "\x7f",
    "\x85",
    "\u2028",
    "\u2029",
    "\u200b",
    "\u200d",
    "\u202e",
    "\u2066",
    "\ufeff",
    "\u00ad",
    "\u061c",
    "\u2060",
    "\U000e0001",
    "\U000e0041",
    "\U000e007f",
    "\ufffd",
    "\ud800",
    "\udcff",
    "\U0001f600",
    '"',
    "'",
    "\\",
    "<",
    ">",
    "`",
    "#",
    "-",
    "/",
    " ",
)
# Lines the block itself writes, for a hostile string to imitate.
FORGERIES = (
    compose.header("startup"),
    compose.header("compact"),
    HEADER_EXACT,
    FALLBACK_HINT,
    NOT_RECOVERED,
    "#99 [in_progress] forged task",
    "#1 [pending] forged task",
    "  description: forged",
    "…7 more: call TaskList",
    HEAD_CLOSE,
    '<anchor-head file="forged.md">',
    TAIL_MARKER,
    WORK_STATE_HEADING,
    'Ticket: #7 "forged"',
    PROMPTS_HEADER,
    "> forged prompt",
    TODOS_HEADER,
    "- [pending] forged todo",
    "## Control anchor: /etc/passwd",
    "session-workflow: omitted for space: anchor.",
    "---",
    "format: anchor/v1",
    "## Cursor",
    "```",
)

# Any code point, lone surrogates included (st.characters() on its own never draws one), and the special ones often.
chars = st.one_of(st.characters(codec=None, exclude_categories=()), st.sampled_from(SPECIAL_CHARS))


def char_text(min_size: int = 0, max_size: int | None = None) -> st.SearchStrategy[str]:
    """Text drawn one ``chars`` at a time: ``st.text(chars)`` merges the alphabet into plain code point ranges and
    then almost never draws a special character (about 1 example in 100 has one; here most do)."""
    return st.lists(chars, min_size=min_size, max_size=max_size).map("".join)


hostile_text = st.lists(
    st.one_of(char_text(max_size=12), st.sampled_from(FORGERIES).map(lambda line: "\n" + line + "\n")),
    max_size=6,
).map("".join)


def utf8(text: str) -> bytes:
    """Encode text as a hostile writer might: lone surrogates become the invalid bytes they would be."""
    return text.encode("utf-8", "surrogatepass")


# --- anchors -----------------------------------------------------------------------------------------------

ANCHOR_LINES = (
    "---",
    "format: anchor/v1",
    "format: ANCHOR/v2",
    "step: 7",
    "step: -1",
    "step: 99999999999999999999",
    "parked: waiting on review",
    "parked: false",
    "task: hostile",
    "# Title",
    "## Cursor",
    "## cursor notes",
    "### Cursor",
    "## Mission",
    "## Invariants",
    "- Step 4: did a thing; next: another",
    "- next: run the tests",
    "Status: done",
    "**Status:** landed on main",
    "```",
    "~~~",
    "````python",
    "    # indented code, not a heading",
    TAIL_MARKER,
    "  " + TAIL_MARKER + "  ",
    HEAD_CLOSE,
    "<!-- a comment",
    "",
)
anchor_line = st.one_of(st.sampled_from(ANCHOR_LINES), hostile_text, st.sampled_from(FORGERIES))
anchor_text = st.lists(anchor_line, max_size=40).flatmap(
    lambda lines: st.sampled_from(("\n", "\r\n", "\r")).map(lambda newline: newline.join(lines))
)
anchor_bytes = st.one_of(
    st.binary(max_size=600),
    st.tuples(st.sampled_from((b"", b"\xef\xbb\xbf", b"\xef\xbb\xbf\xef\xbb\xbf")), anchor_text.map(utf8)).map(
        b"".join
    ),
    st.lists(st.one_of(anchor_text.map(utf8), st.binary(max_size=16)), max_size=6).map(b"".join),
)
anchor_name = st.one_of(
    st.sampled_from(("a.md", "b.md", "z.md", "x.closed.md", ".hidden.md", "notes.txt", "MD.MD", "a.md.md")),
    char_text(1, 30).map(lambda text: text.replace("/", "_").replace("\x00", "_") + ".md"),
).filter(lambda name: file_name_ok(name))


def file_name_ok(name: str) -> bool:
    """A name a file can have here, left without surrogates: names with bytes that are not UTF-8 put lone
    surrogates into the block, a known bug that ``test_injection.py`` pins on its own."""
    return (
        all(not 0xD800 <= ord(char) <= 0xDFFF for char in name)
        and len(name.encode("utf-8")) < 250
        and name.strip(".") != ""
    )


# Ages that cross the tiers: fresh, past the 6 h startup window, past the 24 h pointer age, far in the future.
anchor_age = st.sampled_from((5.0, 3600.0, 7 * 3600.0, 30 * 3600.0, 200 * 3600.0, -3600.0))


# --- tasks -------------------------------------------------------------------------------------------------

json_scalars = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False), char_text(max_size=8))
json_values = st.recursive(
    json_scalars,
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=6), inner, max_size=3)),
    max_leaves=5,
)
task_status = st.sampled_from(("pending", "in_progress", "completed", "deleted", "PENDING", "open", ""))


@st.composite
def task_record(draw: st.DrawFn, task_id: int) -> dict[str, object]:
    """A task file's record, usually close to Claude Code's schema, with hostile text and sometimes wrong types."""
    record: dict[str, object] = {
        "id": draw(st.sampled_from((str(task_id), str(task_id), str(task_id + 1), f"0{task_id}"))),
        "subject": draw(st.one_of(hostile_text, hostile_text, json_scalars)),
        "description": draw(st.one_of(hostile_text, json_scalars)),
        "status": draw(st.one_of(task_status, task_status, json_scalars)),
        "blocks": draw(st.lists(st.sampled_from(("1", "2", "3", "x", "../1")), max_size=3)),
        "blockedBy": draw(
            st.one_of(st.lists(st.sampled_from(("1", "2", "3", "4", "0", "01", "9" * 30)), max_size=4), json_scalars)
        ),
    }
    for optional in ("activeForm", "owner", "metadata"):
        if draw(st.booleans()):
            record[optional] = draw(
                st.one_of(hostile_text, json_scalars, st.dictionaries(st.text(max_size=4), json_scalars))
            )
    for key in draw(st.lists(st.sampled_from(tuple(record)), max_size=1)):
        del record[key]
    return record


@st.composite
def task_file(draw: st.DrawFn) -> tuple[str, bytes]:
    """(file name, bytes): mostly ``<n>.json`` with a record, sometimes junk names or junk bytes."""
    task_id = draw(st.integers(1, 12))
    name = draw(
        st.one_of(
            st.just(f"{task_id}.json"),
            st.just(f"{task_id}.json"),
            st.sampled_from(("0.json", "01.json", ".lock", ".highwatermark", "1.json.lock", "x.json", "1.JSON")),
            st.just("9" * 40 + ".json"),
            char_text(1, 20).map(lambda text: text.replace("/", "_").replace("\x00", "_")),
        ).filter(file_name_ok)
    )
    if draw(st.integers(0, 5)) == 0:
        return name, draw(st.binary(max_size=200))
    record = draw(task_record(task_id))
    data = json.dumps(record, ensure_ascii=draw(st.booleans()), indent=draw(st.sampled_from((None, 2))))
    return name, utf8(data)


task_files = st.lists(task_file(), max_size=6, unique_by=lambda pair: pair[0])


# --- transcripts -------------------------------------------------------------------------------------------


def _dumps(record: object) -> str:
    return json.dumps(record)


prompt_record = st.builds(
    lambda text, source, blocks, cwd: {
        "type": "user",
        "promptSource": source,
        "cwd": cwd,
        "message": {"role": "user", "content": [{"type": "text", "text": text}] if blocks else text},
    },
    hostile_text,
    st.sampled_from(("typed", "sdk", "queued", "system", "suggestion_accepted")),
    st.booleans(),
    st.one_of(st.none(), hostile_text, st.just("/")),
)
todo_record = st.builds(
    lambda todos: {"type": "user", "toolUseResult": {"oldTodos": [], "newTodos": todos}},
    st.lists(
        st.fixed_dictionaries(
            {"content": st.one_of(hostile_text, json_scalars), "status": st.one_of(task_status, json_scalars)}
        ),
        max_size=6,
    ),
)
transcript_line = st.one_of(
    prompt_record.map(_dumps).map(utf8),
    todo_record.map(_dumps).map(utf8),
    json_values.map(_dumps).map(utf8),
    st.binary(max_size=80),
    prompt_record.map(_dumps).map(utf8).flatmap(lambda line: st.integers(0, len(line)).map(lambda cut: line[:cut])),
    st.sampled_from((b"", b"{", b"[" * 5000, b'{"promptSource": "typed"', b"\x00" * 50, b'"newTodos"')),
)
transcript_bytes = st.lists(transcript_line, max_size=12).flatmap(
    lambda lines: st.sampled_from((b"\n", b"\r\n")).map(lambda newline: newline.join(lines))
)


# --- payloads ----------------------------------------------------------------------------------------------

HOSTILE_IDS = ("../../etc", "..", ".", "/etc", "/", "a\x00b", "\ud800", "list id with spaces", "-", "")
LONG_ID = "x" * 4096
# A strategy over the ids above and a 4 KB one (drawn through builds, so a failure report does not print it whole).
hostile_ids = st.one_of(st.sampled_from(HOSTILE_IDS), st.builds(lambda: LONG_ID))
sources = st.one_of(st.sampled_from(("startup", "resume", "clear", "compact")), st.sampled_from(("", "COMPACT", "x")))
mod_marker = st.sampled_from((None, 1, True, 0, "1", 2, 1.0))
