"""``session-workflow log``: what the plugin told the model at each SessionStart, and each checkpoint reminder.

Reads the compaction ledger (``core.ledger``): the hook's lines for the blocks it sent and the mod's reminders,
newest first, for this session (``CLAUDE_CODE_SESSION_ID`` or ``--session``) or, with ``--all``, for every session
of this project. Every value shown is escaped: a ledger line names paths a repository chose.
"""

from __future__ import annotations

import json
import os

from session_workflow.anchor.writer import default_project_dir
from session_workflow.core.boundedio import read_prefix
from session_workflow.core.jsonload import quote_ascii
from session_workflow.core.ledger import LEDGER_ROTATED, reminders_path
from session_workflow.core.text import escaped, one_line

TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse
    from collections.abc import Collection, Iterator, Mapping, Sequence

    from session_workflow.cli.parser import OneLineParser
    from session_workflow.core.places import Places

# What one read of a ledger file may cost: the ledger rotates past 256 KiB, so two files hold at most ~512 KiB.
MAX_READ_BYTES = 1024 * 1024
MAX_REMINDER_FILE_BYTES = 64 * 1024
SHOWN = 50  # entries listed unless --limit says otherwise


def _lines(path: str, limit: int, marks: Collection[str] | None = None) -> Iterator[dict[str, object]]:
    """The JSON objects of a ledger file, in file order; a torn or foreign line is skipped. With ``marks`` only the
    lines holding one of them are parsed: a session's id as the hook quotes it (``quote_ascii``), so ``log`` in one
    session of a busy machine parses its own lines, not the whole ledger."""
    read = read_prefix(path, limit)
    for line in (read[0] if read else b"").decode("utf-8", "replace").splitlines():
        if marks is not None and not any(mark in line for mark in marks):
            continue
        try:
            value = json.loads(line)
        except ValueError:
            continue
        if isinstance(value, dict):
            yield value


def entries(places: Places, sessions: set[str] | None, project: str | None) -> list[dict[str, object]]:
    """Ledger entries of ``sessions`` (None: any) in ``project`` (None: any), newest first; reminders included."""
    path = places.ledger
    found: list[dict[str, object]] = []
    marks = {quote_ascii(session) for session in sessions} if sessions is not None else None
    if path is not None:
        for name in (os.path.join(os.path.dirname(path), LEDGER_ROTATED), path):
            found.extend(_lines(name, MAX_READ_BYTES, marks))
    if project is not None:
        real = os.path.realpath(project)
        resolved: dict[object, str | None] = {}  # a ledger names a few projects a thousand times: one realpath each
        for entry in found:
            value = entry.get("project")
            if type(value) is str and value not in resolved:
                resolved[value] = _real(value)
        found = [entry for entry in found if type(entry.get("project")) is str and resolved[entry["project"]] == real]
    if sessions is not None:
        found = [entry for entry in found if entry.get("session") in sessions]
    known = sessions if sessions is not None else {str(entry.get("session")) for entry in found}
    for session in sorted(known):
        found.extend(_reminders(places, session))
    # Newest first; entries of the same second keep the order they were written in, reversed.
    order = sorted(enumerate(found), key=lambda pair: (str(pair[1].get("ts", "")), pair[0]), reverse=True)
    return [entry for _index, entry in order]


def _real(value: object) -> str | None:
    return os.path.realpath(value) if isinstance(value, str) and os.path.isabs(value) else None


def _reminders(places: Places, session: str) -> list[dict[str, object]]:
    """The mod's reminders for ``session`` (a JSON list it rewrites whole), as ledger entries."""
    path = reminders_path(places, session)
    read = read_prefix(path, MAX_REMINDER_FILE_BYTES) if path else None
    try:
        listed = json.loads(read[0] if read else b"[]")
    except ValueError:
        return []
    if not isinstance(listed, list):
        return []
    return [{**item, "kind": "reminder", "session": session} for item in listed if isinstance(item, dict)]


def _int(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def render(entry: Mapping[str, object]) -> str:
    """One entry as one line: when, what, and (a block) each part's size, what was cut, the anchor's step."""
    when = escaped(one_line(str(entry.get("ts", "?"))))
    session = escaped(one_line(str(entry.get("session") or "?")))[:8]
    if entry.get("kind") == "reminder":
        tokens, threshold = _int(entry.get("tokens")), _int(entry.get("threshold"))
        fill = f" at {tokens:,} of {threshold:,} tokens" if tokens is not None and threshold is not None else ""
        anchor = escaped(str(entry.get("anchor") or ""))
        return f"{when}  reminder  session {session}  checkpoint reminder{fill}" + (f": {anchor}" if anchor else "")
    source = escaped(one_line(str(entry.get("source") or "?")))
    sizes = []
    for item in str(entry.get("parts") or "").split(","):
        name, _sep, units = item.rpartition("=")
        if name and units.isdigit():
            sizes.append(f"{escaped(one_line(name))} {int(units):,}")
    total = _int(entry.get("units"))
    line = f"{when}  {source}  session {session}  " + (" · ".join(sizes) or "no part")
    line += f" = {total:,} of 10,000 units" if total is not None else ""
    for key, label in (("cut", "cut for space"), ("failed", "could not be read"), ("held", "unchanged, held above")):
        value = one_line(str(entry.get(key) or ""))
        if value:
            line += f"; {label}: {escaped(value)}"
    inside = _inside_cuts(entry)
    if inside:
        line += f"; not shown for space: {inside}"
    step = entry.get("step")
    if entry.get("anchor"):
        line += f"; anchor {escaped(str(entry['anchor']))}" + (
            f" at step {escaped(one_line(str(step)))}" if step else ""
        )
    return line


# The cuts inside a part a block entry counts (issue 43): counts only, the ledger keeps no text of them.
INSIDE_CUTS = (
    ("anchor_dropped", "anchor section"),
    ("tasks_hidden", "open task"),
    ("record_cut", "run-record action"),
    ("record_shells_cut", "unfinished background shell"),
)


def _inside_cuts(entry: Mapping[str, object]) -> str:
    """What the parts left out inside themselves: HEAD sections, open tasks, run-record actions and shells (and how
    many repeated actions the record folded into one line)."""
    named = []
    for key, label in INSIDE_CUTS:
        count = _int(entry.get(key))
        if count:
            named.append(f"{count:,} {label}{'s' if count != 1 else ''}")
    folded = _int(entry.get("record_folded"))
    if folded:
        named.append(f"{folded:,} repeated action{'s' if folded != 1 else ''} folded")
    return ", ".join(named)


def _run(args: argparse.Namespace, places: Places) -> int:
    session = args.session or places.session or None
    project = default_project_dir(places, os.getcwd())
    sessions = None if args.all or session is None else {session}
    found = entries(places, sessions, project)
    if args.json:
        print(json.dumps(found[: args.limit], ensure_ascii=True, indent=1))
        return 0
    scope = "this project" if sessions is None else f"session {escaped(one_line(session or ''))}"
    if not found:
        print(f"session-workflow: nothing sent yet for {scope} ({escaped(project)})")
        return 0
    print(f"{len(found)} entr{'y' if len(found) == 1 else 'ies'} for {scope}, newest first:")
    for entry in found[: args.limit]:
        print(render(entry))
    if len(found) > args.limit:
        print(f"... and {len(found) - args.limit} older (--limit N shows more)")
    return 0


def setup(parser: OneLineParser, _argv: Sequence[str]) -> None:
    """Set up ``log``: no verbs, a few flags."""
    parser.description = (
        "What the plugin told the model: each SessionStart block it sent (source, each part's size in UTF-16"
        " units, what was cut, the anchor's step) and each checkpoint reminder, newest first. Kept in your state"
        " folder, never the project."
    )
    parser.add_argument("--all", action="store_true", help="every session of this project, not only this one")
    parser.add_argument("--session", help="the session to show (default: $CLAUDE_CODE_SESSION_ID)")
    parser.add_argument("--limit", type=int, default=SHOWN, help=f"at most this many entries (default {SHOWN})")
    parser.add_argument("--json", action="store_true", help="the entries as JSON")
    parser.set_defaults(run=_run)
