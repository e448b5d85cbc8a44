"""The anchor part of the SessionStart block: find the open anchors, choose one, render it within a budget.

All file-system work happens in ``prepare`` (and, after a successful injection, in ``after_emit``); rendering
is pure. Reads are bounded: a HEAD is read up to what an 8,000-unit budget can use plus a margin for naming what
was dropped, and open files are read newest first only until the choice and the names the block shows are
settled (at most ``MAX_CLASSIFIED``). Ranking needs only each file's kind, which ``AnchorText.from_bytes`` finds
in its HEAD without splitting it into sections; only the chosen anchor is split and fitted. Telemetry goes to
``<anchors>/log.ndjson``, rotated past 256 KB into one old copy, ``log.1.ndjson``.
"""

from __future__ import annotations

import os
import stat
import time

from session_workflow.anchor import registry
from session_workflow.anchor.frame import HEAD_CLOSE, NAME_CAP, QUOTE, body_sections, opening, trim_end
from session_workflow.anchor.registry import Identity, Record, adopt_command
from session_workflow.anchor.text import (
    DONE,
    FULL,
    FUTURE_SLACK_SECONDS,
    KIND_LABELS,
    LIVE,
    NOT_ANCHOR,
    POINTER,
    TAIL_MARKER,
    AnchorText,
    cursor_next_action,
    fit_sections,
    mv_command,
    shell_quote,
    split_head,
    tier_for,
    updated_text,
)
from session_workflow.core import config
from session_workflow.core.boundedio import read_prefix, read_prefix_as
from session_workflow.core.gitignore import ensure_gitignore
from session_workflow.core.jsonlog import MAX_LOG_BYTES, append_record
from session_workflow.core.locations import anchors_dir, resolves_inside
from session_workflow.core.text import ELLIPSIS, cut_utf16, escaped, one_line, utf16_len
from session_workflow.hook.parts import PreparedPart

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping
    from typing import Optional

    from session_workflow.anchor.text import Fit, Section
    from session_workflow.hook.context import HookContext

    Listed = tuple[float, str, Optional[str], Identity]  # an alias, evaluated on 3.9: no ``str | None``

CAP = 8000
# A HEAD is read in two steps: most anchors end (or reach their tail marker) within the first read; a larger
# HEAD is read up to what the 8,000-unit budget can use (at most 3 bytes a unit) plus room to name what it drops.
FIRST_READ_BYTES = 16 * 1024
HEAD_READ_BYTES = 64 * 1024
# Directory entries looked at, and open files read to classify them (newest first); the rest are only counted.
MAX_LISTED = 10_000
MAX_CLASSIFIED = 100
OTHERS_NAMED = 5
POINTER_LIMIT = 1200
PATH_CAP = 300
TITLE_CAP = 120
LINE_CAP = 240
DROP_NAMES_CAP = 400
LOG_NAME = "log.ndjson"
LOG_MAX_BYTES = MAX_LOG_BYTES
LOG_ROTATED_NAME = "log.1.ndjson"
# Said at startup only (the session may be for another task); a resume that follows still holds it.
STARTUP_NOTE = "This session is a fresh start: if it was started for a different task, ignore this anchor."
STARTUP_NOTE_SHORT = " Ignore it if this session is for another task."
# The block's own phrases that change with the clock alone (``age_text``, the pointer's hours), masked when a
# resume compares its block with an earlier one. Anchored to the lines the block itself writes; linear.
_AGE = "(?:<1 min|[0-9]{1,9} min|[0-9]{1,9}h)"
_VOLATILE = (
    rf"(?m)^(Updated ){_AGE}( ago)|^(## Stale control anchor \(untouched for )[0-9]{{1,9}}h(\))"
    rf"|(\(updated ){_AGE}( ago\)\.)$"
)
UNTRUSTED_NAMED = 3
_DIR_FLAGS = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)


class Candidate:
    """One open anchor file: found by the listing, read and classified on demand.

    ``real`` is its resolved path (inside its anchors folder) and ``identity`` what ``stat`` said of it, which
    the trust registry compares; ``record`` is that registry entry once looked up, and ``recorded_kind`` the kind
    it holds for this very identity, which ranks the file without reading it (``load`` reads it when chosen).
    """

    __slots__ = ("anchor", "identity", "mtime", "name", "path", "real", "record", "recorded_kind")

    def __init__(
        self,
        path: str,
        mtime: float,
        name: str | None = None,
        real: str | None = None,
        identity: Identity | None = None,
    ) -> None:
        self.path = path
        self.name = os.path.basename(path) if name is None else name
        self.mtime = mtime
        self.real = path if real is None else real
        self.identity = identity
        self.anchor: AnchorText | None = None
        self.record: Record | None = None
        self.recorded_kind: int | None = None

    @property
    def kind(self) -> int:
        if self.anchor is not None:
            return self.anchor.kind
        return self.recorded_kind if self.recorded_kind is not None else NOT_ANCHOR

    def load(self) -> bool:
        """Read the HEAD if it was ranked by its recorded kind alone; False when the file is gone, unreadable, or no
        longer the identity the listing saw (and the registry vouched for)."""
        if self.anchor is None:
            identity = self.identity.as_tuple() if self.identity is not None else None  # what the trust check saw
            self.anchor = head_of(lambda size: read_prefix_as(self.path, size, identity))
        return self.anchor is not None

    def title(self) -> str:
        """The anchor's title on one line, or its file name when it has none."""
        title = self.anchor.title if self.anchor is not None else None
        return cut_utf16(one_line(title or "") or self.name, TITLE_CAP)


def is_open_name(name: str) -> bool:
    """An open anchor's file name: ``*.md`` but not ``*.closed.md`` nor hidden (editor locks, temp files)."""
    return name.endswith(".md") and not name.endswith(".closed.md") and not name.startswith(".")


def list_open(folder: str) -> list[Candidate]:
    """The regular ``*.md`` files of an anchors folder that are not closed, newest first (ties by name).

    A symlink is followed only to a file inside the same folder; loops, dangling links, links elsewhere,
    directories, FIFOs and devices are skipped.
    """
    return _candidates(folder, *_open_files(folder))


def _open_files(folder: str) -> tuple[str, list[Listed]]:
    """The folder's real path, and (-mtime, name, real path or None, identity) of each open anchor, sorted:
    ``list_open`` without the Candidates.

    Where the platform allows, the folder is listed through a descriptor, so each stat resolves one name
    instead of the whole path. Only a symlink pays for resolving its target (its real path is kept); a plain
    file's real path is made only for the files that become Candidates.
    """
    found: list[Listed] = []
    try:
        real_folder = os.path.realpath(folder)
        listing: int | str = os.open(folder, _DIR_FLAGS) if os.scandir in os.supports_fd else folder
    except (OSError, ValueError):
        return folder, []
    try:
        with os.scandir(listing) as entries:
            for count, entry in enumerate(entries):
                if count >= MAX_LISTED:
                    break
                name = entry.name
                if not is_open_name(name):
                    continue
                real = None
                try:
                    info = entry.stat()
                    if entry.is_symlink():
                        real = os.path.realpath(os.path.join(folder, name))
                        if os.path.dirname(real) != real_folder:
                            continue
                except (OSError, ValueError):
                    continue
                if stat.S_ISREG(info.st_mode):
                    found.append((-info.st_mtime, name, real, Identity.of(info)))
    except (OSError, ValueError):
        return real_folder, []
    finally:
        if isinstance(listing, int):
            os.close(listing)
    found.sort()
    return real_folder, found


def _candidates(folder: str, real_folder: str, files: list[Listed]) -> list[Candidate]:
    prefix, real_prefix = os.path.join(folder, ""), os.path.join(real_folder, "")
    return [
        Candidate(prefix + name, -negative_mtime, name, real or real_prefix + name, identity)
        for negative_mtime, name, real, identity in files
    ]


def read_anchor(path: str, max_bytes: int = HEAD_READ_BYTES) -> AnchorText | None:
    """Read a HEAD boundedly: a first small read, a second one only when the marker was not reached."""
    return head_of(lambda size: _read_bytes(path, size), max_bytes)


def head_of(read: Callable[[int], tuple[bytes, bool] | None], max_bytes: int = HEAD_READ_BYTES) -> AnchorText | None:
    """The HEAD as the hook sees it, from ``read(n)``: up to ``n`` bytes from the start, and whether more follow."""
    first = read(min(FIRST_READ_BYTES, max_bytes))
    if first is None:
        return None
    data, truncated = first
    if truncated and max_bytes > FIRST_READ_BYTES and split_head(data.decode("utf-8", "replace"))[1] is None:
        second = read(max_bytes)
        if second is None:
            return None
        data, truncated = second
    if truncated and b"\n" in data:
        data = data[: data.rindex(b"\n") + 1]  # the last line was cut by the read
    return AnchorText.from_bytes(data, truncated)


def kind_of_bytes(data: bytes) -> int:
    """The kind the hook finds in an anchor file holding ``data``: what a writer records beside its identity."""
    anchor = head_of(lambda size: (data[:size], len(data) > size))
    return anchor.kind if anchor is not None else NOT_ANCHOR


def _read_bytes(path: str, max_bytes: int) -> tuple[bytes, bool] | None:
    read = read_prefix(path, max_bytes)
    if read is None:
        return None
    data, size = read
    return data, size > len(data)


def rank(candidates: list[Candidate]) -> list[Candidate]:
    """Candidates in listing order (newest first), stably re-ranked live < parked < done < not anchor-shaped."""
    return sorted(candidates, key=lambda candidate: candidate.kind)


class DirScan:
    """The open anchors of one anchors folder, ranked; files past the classification cap only counted.

    ``untrusted`` are the open files the registry does not vouch for: never read, only named.
    """

    __slots__ = ("directory", "folder", "ranked", "total", "untrusted")

    def __init__(
        self,
        directory: str,
        folder: str,
        ranked: list[Candidate],
        total: int,
        untrusted: list[Candidate] | None = None,
    ) -> None:
        self.directory = directory
        self.folder = folder
        self.ranked = ranked
        self.total = total
        self.untrusted = untrusted or []


def scan_folder(
    folder: str,
    directory: str,
    classify: bool = True,
    limit: int | None = None,
    vouch: Callable[[Candidate], bool] | None = None,
) -> DirScan | None:
    """The open anchors of ``folder``, read and ranked (or, unclassified, only listed); None when none.

    Without ``limit`` (the hook) at most ``MAX_CLASSIFIED`` files are read, newest first, and reading stops once
    the ranking's head is settled: when ``OTHERS_NAMED`` + 1 live anchors are found, the chosen one and every
    name the block shows are live. With ``limit`` (the reports) up to that many files are all read. Files that
    vanish or turn unreadable between the listing and the read are left out. With ``vouch`` (the hooks) a file
    it refuses is not read at all and lands in ``untrusted``, and one it ranks by its record's kind (the hook's
    ``Trust``; the reports, which show every file's title, rank by text) is not read either: ``select`` reads the
    one it chooses.
    """
    real_folder, listed = _open_files(folder)
    if not classify:
        return DirScan(directory, folder, _candidates(folder, real_folder, listed), len(listed)) if listed else None
    readable: list[Candidate] = []
    untrusted: list[Candidate] = []
    unreadable = live = 0
    for candidate in _candidates(folder, real_folder, listed[: limit or MAX_CLASSIFIED]):
        if vouch is not None and not vouch(candidate):
            untrusted.append(candidate)
            continue
        if candidate.recorded_kind is None and not candidate.load():
            unreadable += 1
            continue
        readable.append(candidate)
        live += candidate.kind == LIVE
        if live > OTHERS_NAMED and limit is None:
            break
    total = len(listed) - unreadable - len(untrusted)
    if not readable and not untrusted:
        return None
    return DirScan(directory, folder, rank(readable), total, untrusted)


def scan_dir(directory: str, classify: bool = True, vouch: Callable[[Candidate], bool] | None = None) -> DirScan | None:
    """The open anchors of a project directory (see ``scan_folder``); an anchors folder that resolves outside
    the project is not looked at."""
    folder = anchors_dir(directory)
    if not resolves_inside(folder, directory):
        return None
    return scan_folder(folder, directory, classify, vouch=vouch)


def chosen_scan(
    directories: list[str], vouch: Callable[[Candidate], bool] | None = None
) -> tuple[DirScan | None, list[DirScan | None]]:
    """The first directory (best first) with a readable open anchor, classified; the others only listed."""
    scans: list[DirScan | None] = []
    chosen: DirScan | None = None
    for directory in directories:
        scan = scan_dir(directory, classify=chosen is None, vouch=vouch)
        if chosen is None and scan is not None and (scan.ranked or vouch is None):
            chosen = scan
        scans.append(scan)
    return chosen, scans


def injected_anchor(directory: str) -> Candidate | None:
    """The anchor the hook would choose in ``directory`` (tiers aside); ``anchor path`` run there prints it."""
    scan = scan_dir(directory)
    return scan.ranked[0] if scan is not None else None


def display_path(path: str) -> str:
    """A path on one line, escaped; an absurdly long one keeps its end (the file name) behind an ellipsis."""
    flat = escaped(path)
    if utf16_len(flat) <= PATH_CAP:
        return flat
    return ELLIPSIS + cut_utf16(flat[::-1], PATH_CAP - utf16_len(ELLIPSIS), "")[::-1]


def _name(name: str) -> str:
    return cut_utf16(escaped(name), NAME_CAP)


def _close_advice(path: str) -> str:
    command = mv_command(path)
    return command if utf16_len(command) <= 2 * PATH_CAP else "rename it to *.closed.md"


def show_command(path: str, whole: bool = False) -> str:
    """The command that prints an anchor as the hook frames it (``--all``: with its TAIL), in backticks.

    The model reads an anchor through this, never the Read tool: Claude Code re-attaches every file the model
    read before a compaction, whole, TAIL included, beside the block that already carries the HEAD.
    """
    bare = "session-workflow anchor show" + (" --all" if whole else "")
    command = f"{bare} {shell_quote(path)}"
    return f"`{command}`" if utf16_len(command) <= 2 * PATH_CAP else f"`{bare}`"


def named_list(names: list[str], total: int) -> str:
    """At most ``OTHERS_NAMED`` names, then "and N more" for the rest of ``total``."""
    shown = names[:OTHERS_NAMED]
    rest = total - len(shown)
    text = ", ".join(shown)
    return f"{text} and {rest} more" if rest > 0 else text


class Move:
    """The session started in one directory and now runs in another; the anchor came from ``chosen``."""

    __slots__ = ("chosen", "cwd", "other", "start")

    def __init__(self, start: str, cwd: str, chosen: str, other: DirScan | None) -> None:
        self.start = start
        self.cwd = cwd
        self.chosen = chosen
        self.other = other

    def note(self, compact: bool) -> str:
        other_dir = self.cwd if self.chosen == self.start else self.start
        where = f"This session started in {display_path(self.start)}; its cwd is now {display_path(self.cwd)}."
        source = f"The anchor above is from {display_path(self.chosen)}"
        if self.other is None:
            return f"{where} {source}; {display_path(other_dir)} has no open anchor."
        if compact:
            return f"{where} {source}; the other has {self.other.total} open anchor(s): `session-workflow anchor list`."
        names = named_list([_name(c.name) for c in self.other.ranked], self.other.total)
        return f"{where} {source}; open anchors in {display_path(anchors_dir(other_dir))}: {names}."


class AnchorBlock:
    """Pure rendering of the chosen anchor (full HEAD, pointer or parked) with the notes around it."""

    __slots__ = ("_body", "age", "anchor", "candidate", "move", "others", "others_total", "source", "tier")

    def __init__(
        self,
        candidate: Candidate,
        anchor: AnchorText,
        tier: str,
        source: str | None,
        age: float,
        others: list[Candidate],
        others_total: int,
        move: Move | None,
    ) -> None:
        self.candidate = candidate
        self.anchor = anchor
        self.tier = tier
        self.source = source
        self.age = age
        self.others = others
        self.others_total = others_total
        self.move = move
        self._body: list[Section] | None = None

    @property
    def body(self) -> list[Section]:
        """The HEAD's sections as the frame shows them (quoted, no frontmatter), built once."""
        if self._body is None:
            self._body = body_sections(self.anchor.sections)
        return self._body

    @property
    def body_size(self) -> int:
        """What the whole HEAD costs in the block, in UTF-16 units."""
        return sum(section.size for section in self.body)

    # --- shared pieces -------------------------------------------------------------------------------------

    def _others_note(self, compact: bool) -> list[str]:
        if self.others_total <= 0:
            return []
        if compact:
            return [f"{self.others_total} other open anchor(s) here: `session-workflow anchor list` names them."]
        labels = []
        for other in self.others[:OTHERS_NAMED]:
            kind = "" if other.kind == LIVE else f" ({KIND_LABELS[other.kind]})"
            labels.append(f"{_name(other.name)}{kind}")
        lines = [f"Other open anchors here: {named_list(labels, self.others_total)}."]
        done = [other for other in self.others[:OTHERS_NAMED] if other.kind == DONE]
        if done:
            lines.append("Marked done in-content but never closed; if finished, close with:")
            lines.extend(_close_advice(other.path) for other in done)
        return lines

    def _trailer(self, compact: bool) -> list[str]:
        notes = self._others_note(compact)
        if self.move is not None:
            notes.append(self.move.note(compact))
        return notes

    def _cursor_line(self) -> str | None:
        """The cursor's first line, as one line: file content, so the blocks show it quoted on a line of its own
        (any line of the file can be it, a copy of the block's header included)."""
        line = self.anchor.cursor_line()
        return cut_utf16(one_line(line), LINE_CAP) if line else None

    def _title(self) -> str:
        return self.candidate.title()

    # --- full ----------------------------------------------------------------------------------------------

    def _full_top(self, compact: bool) -> list[str]:
        lines = [f"## Control anchor: {display_path(self.candidate.path)}"]
        if compact:
            guidance = "Verify it against git log and files, then continue from its cursor."
            if self.source == "startup":
                guidance += STARTUP_NOTE_SHORT
            return [*lines, guidance]
        lines.append("Verify it against durable state (git log, the files on disk), then continue from its cursor.")
        if self.source == "startup":
            lines.append(STARTUP_NOTE)
        elif self.source == "fork":
            lines.append(
                "This session is a fork: the session it was forked from keeps its work state (a work-state section "
                "carried in the system prompt is that session's) and its task list, and may still update this "
                "anchor: re-read it (`session-workflow anchor show`) before writing it."
            )
        step = one_line(self.anchor.frontmatter.get("step", ""))[:20]
        status = updated_text(self.age).capitalize() + (f", step {step}" if step else "") + "."
        if self.anchor.tail:
            status += (
                f" Its TAIL (below `{TAIL_MARKER}`, decisions and history) stays on disk:"
                f" {show_command(self.candidate.path, whole=True)} prints it."
            )
        lines.append(status)
        if self.anchor.kind == DONE:
            lines.append(f"It says its work is done; if so, close it: {_close_advice(self.candidate.path)}")
        elif self.anchor.kind == NOT_ANCHOR:
            lines.append("It has no `format: anchor/…` frontmatter and no Cursor heading; it is the newest open file.")
        return lines

    def _drop_note(self, fit: Fit) -> str | None:
        parts = []
        if fit.dropped:
            names = []
            used = 0
            for label in fit.dropped:
                name = cut_utf16(one_line(label), 60)
                if used + utf16_len(name) + 2 > DROP_NAMES_CAP:
                    break
                names.append(name)
                used += utf16_len(name) + 2
            rest = len(fit.dropped) - len(names)
            listed = ", ".join(names) + (f" and {rest} more section(s)" if rest else "")
            parts.append(f"Not shown for space (in `session-workflow anchor show`): {listed}.")
        if fit.cursor_cut:
            parts.append(f'The cursor section "{_name(fit.cursor_heading or "")}" was cut at a line boundary.')
        elif fit.cursor_reserved and fit.dropped:
            parts.append(f'The cursor section "{_name(fit.cursor_heading or "")}" was reserved and is shown whole.')
        if self.anchor.truncated:
            parts.append(f"The HEAD goes on past the first {HEAD_READ_BYTES // 1024} KB, which is all that was read.")
        return " ".join(parts) if parts else None

    def _assemble(self, top: list[str], fit: Fit, trailer: list[str]) -> tuple[str, int]:
        """The full block and its size, measured piece by piece (the HEAD's size is already known)."""
        frame = opening(self.candidate.name)
        stripped = trim_end(fit.text)
        note = self._drop_note(fit)
        before = "\n".join([*top, frame]) + "\n"
        after = "\n".join([HEAD_CLOSE, *([note] if note else []), *trailer])
        body = stripped + "\n" if stripped else ""  # a blank HEAD leaves no unquoted line inside the frame
        body_size = fit.size - (len(fit.text) - len(stripped)) + 1 if stripped else 0
        return before + body + after, utf16_len(before) + body_size + utf16_len(after)

    def _render_full(self, budget: int, compact: bool) -> tuple[str, Fit] | None:
        """The full block within ``budget``, shrinking the HEAD budget by however much the assembly overflowed."""
        top = self._full_top(compact)
        trailer = self._trailer(compact)
        head_budget = budget - self._assemble(top, fit_sections([], 0), trailer)[1] - 1  # the HEAD's own line end
        for _attempt in range(8):
            if head_budget <= len(QUOTE) + len(ELLIPSIS):  # a cut first line must keep its quote
                return None
            fit = fit_sections(self.body, head_budget)
            if not fit.text:
                return None
            text, size = self._assemble(top, fit, trailer)
            if size <= budget:
                return text, fit
            head_budget = min(head_budget, fit.size) - (
                size - budget
            )  # below what this fit kept, or it refits the same
        return None

    def render_full(self, budget: int) -> tuple[str, Fit | None]:
        """The full block within ``budget`` and the HEAD fit it used (None when only the floor fitted)."""
        best: tuple[str, Fit] | None = None
        for compact in (False, True):
            rendered = self._render_full(budget, compact)
            if rendered is None:
                continue
            if best is None or _keeps_more(rendered[1], best[1]):
                best = rendered
        floor = self._full_floor()
        floor_fits = utf16_len(floor) <= budget
        if best is not None and not (floor_fits and self._cut_below_floor(best[1])):
            return best
        return (floor if floor_fits else ""), None

    def _cut_below_floor(self, fit: Fit) -> bool:
        """A cursor cut so short that it loses the line the floor shows is worse than the floor."""
        line = self.anchor.cursor_line()
        return fit.cursor_cut and line is not None and line not in fit.text

    def head_room(self, budget: int) -> int:
        """What the HEAD may spend in the full block at ``budget`` with no notes around it."""
        return budget - self._assemble(self._full_top(False), fit_sections([], 0), [])[1] - 1  # the HEAD's line end

    def _full_floor(self) -> str:
        lines = [f"## Control anchor: {display_path(self.candidate.path)}"]
        cursor = self._cursor_line()
        if cursor:
            lines.append(f"Cursor:\n{QUOTE}{cursor}")
        lines.append(
            f"Its HEAD ({self.anchor.size:,} chars) is not shown for space: `session-workflow anchor show <that path>`"
            " prints it; verify it against git log and files, then continue from its cursor."
        )
        return "\n".join(lines)

    # --- pointer and parked ----------------------------------------------------------------------------------

    def _pointer_variants(self) -> list[str]:
        path = display_path(self.candidate.path)
        hours = int(max(0.0, self.age) // 3600)
        cursor = self._cursor_line()
        asserts = f"Its cursor still asserts:\n{QUOTE}{cursor}" if cursor else "It has no cursor line."
        core = [
            f"## Stale control anchor (untouched for {hours}h): {path}",
            f"Title: {self._title()}",
            asserts,
            "Check that against durable state (git log, the files on disk) before acting on it. If the work goes on, "
            f"print it with {show_command(self.candidate.path)} and continue from its cursor; if it is finished, "
            "close it:",
            _close_advice(self.candidate.path),
        ]
        minimal = [core[0], asserts, f"If finished, close it: {_close_advice(self.candidate.path)}"]
        return [
            "\n".join(core + self._trailer(False)),
            "\n".join(core + self._trailer(True)),
            "\n".join(core),
            "\n".join(minimal),
            "\n".join([core[0], asserts, "If finished, rename it to *.closed.md."]),
        ]

    def _parked_variants(self) -> list[str]:
        path = display_path(self.candidate.path)
        reason = cut_utf16(one_line(self.anchor.parked or ""), LINE_CAP)
        core = [
            f"## Parked control anchor: {path}",
            f'"{self._title()}" is parked: {reason} ({updated_text(self.age)}).',
            "Leave it unless the user asks for it. To resume it, remove `parked:` from its frontmatter, then print it "
            f"with {show_command(self.candidate.path)} and continue from its cursor. To close it:",
            _close_advice(self.candidate.path),
        ]
        return [
            "\n".join(core + self._trailer(False)),
            "\n".join(core + self._trailer(True)),
            "\n".join(core),
            "\n".join([core[0], f"Parked: {reason}", "To close it, rename it to *.closed.md."]),
        ]

    def _short_variants(self) -> list[str]:
        variants = self._pointer_variants() if self.tier == POINTER else self._parked_variants()
        return [text for text in variants if utf16_len(text) < POINTER_LIMIT]

    # --- the contract ----------------------------------------------------------------------------------------

    def floor_text(self) -> str:
        """The least this block says that is still true: path, cursor line, and that the rest was dropped."""
        if self.tier == FULL:
            return self._full_floor()
        variants = self._short_variants()
        return variants[-1] if variants else ""

    def render(self, budget: int) -> str:
        """The block within ``budget`` UTF-16 units ("" when not even the floor fits)."""
        if self.tier == FULL:
            return self.render_full(budget)[0]
        for text in self._short_variants():
            if utf16_len(text) <= budget:
                return text
        return ""


def _keeps_more(candidate: Fit, best: Fit) -> bool:
    """Prefer the wordier variant unless the compact one keeps the cursor whole or more sections."""
    if best.cursor_cut != candidate.cursor_cut:
        return best.cursor_cut
    return len(candidate.dropped) < len(best.dropped)


def with_notes(text: str, notes: str, budget: int) -> str | None:
    """``text`` and ``notes`` on their own lines when both fit ``budget``; None when they do not."""
    joined = f"{text}\n{notes}" if text and notes else text or notes
    return joined if utf16_len(joined) <= budget else None


class AnchorPart(PreparedPart):
    """The chosen anchor, ready for the composer; telemetry and .gitignore follow a successful injection.

    ``notes`` (parallel tracks, anchors not created here) follow the block when the budget has room for them.
    """

    name = "anchor"
    cap = CAP

    def __init__(
        self, block: AnchorBlock, scan: DirScan, ctx: HookContext, folders: list[str], notes: str = ""
    ) -> None:
        self.block = block
        self.scan = scan
        self.source = ctx.source
        self.session_id = ctx.session_id
        self.now = ctx.now
        self.folders = folders
        self.notes = notes
        self.floor = utf16_len(block.floor_text())
        self._rendered_text = ""

    def render(self, budget: int) -> str:
        text = ""
        if self.notes:
            room = budget - utf16_len(self.notes) - 1
            text = with_notes(self.block.render(room), self.notes, budget) or "" if room > 0 else ""
        text = text or self.block.render(budget)
        self._rendered_text = text
        return text

    def stable(self, text: str) -> str:
        """``text`` with the ages the block states and its startup-only caveat masked: an anchor that is only older
        than in an earlier block of the thread, or was shown there at startup, is unchanged."""
        text = text.replace("\n" + STARTUP_NOTE, "").replace(STARTUP_NOTE_SHORT, "")
        if "ago" not in text and "untouched for" not in text:
            return text
        import re

        return re.sub(_VOLATILE, lambda match: "".join(group or "" for group in match.groups()) + "\x00", text)

    def after_emit(self, emitted: bool) -> None:
        for folder in self.folders:
            ensure_gitignore(folder)
        event = ("unchanged" if self.held_above else "inject") if emitted else "inject_failed"
        append_log(self.scan.folder, self.log_record(event if self._rendered_text else "omitted"))

    def log_record(self, event: str) -> dict[str, object]:
        return {
            "ts": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(self.now)),
            "event": event,
            "source": self.source,
            "session": (self.session_id or "")[:200] or None,
            "file": self.block.candidate.name,
            "tier": self.block.tier,
            "open_anchors": self.scan.total,
            "dir": self.scan.directory,
            "chars": len(self._rendered_text),
        }


def append_log(folder: str, record: dict[str, object], max_bytes: int = LOG_MAX_BYTES) -> bool:
    """Append one JSON line to ``<anchors>/log.ndjson`` (rotated to ``log.1.ndjson`` past 256 KB)."""
    path = os.path.join(folder, LOG_NAME)
    return append_record(path, record, os.path.join(folder, LOG_ROTATED_NAME), max_bytes)


class UntrustedPart(PreparedPart):
    """Only anchors this machine did not make: each named in one line with the command that adopts it."""

    name = "anchor"
    cap = CAP

    def __init__(self, notes: list[str]) -> None:
        self.notes = notes
        self.floor = utf16_len(notes[0])

    def render(self, budget: int) -> str:
        for count in range(len(self.notes), 0, -1):
            text = "\n".join(self.notes[:count])
            if utf16_len(text) <= budget:
                return text
        return ""


class Trust:
    """The registry's view for one hook run: does this machine's writer (or an adopt) vouch for a file as it is?

    ``by_record``: a file still of the identity its record names is ranked by the kind recorded there, unread.
    """

    __slots__ = ("by_record", "env")

    def __init__(self, env: Mapping[str, str], by_record: bool = True) -> None:
        self.env = env
        self.by_record = by_record

    def vouch(self, candidate: Candidate) -> bool:
        if candidate.identity is None:
            return False
        candidate.record = registry.read(self.env, candidate.real)
        if candidate.record is None or not candidate.record.vouches_for(candidate.identity):
            return False
        if self.by_record:
            candidate.recorded_kind = candidate.record.kind_of(candidate.identity)
        return True


def untrusted_notes(untrusted: list[Candidate]) -> list[str]:
    """One line per anchor not created here (at most ``UNTRUSTED_NAMED``): its path and the adopt command."""
    lines = [
        f"Open anchor not created here (not shown): {display_path(candidate.path)}; only if the user says it is"
        f" theirs: `{_adopt_advice(candidate.path)}`"
        for candidate in untrusted[:UNTRUSTED_NAMED]
    ]
    rest = len(untrusted) - len(lines)
    if rest > 0:
        lines.append(f"{rest} more open anchor(s) not created here: `session-workflow anchor list` names them.")
    return lines


def _adopt_advice(path: str) -> str:
    command = adopt_command(path)
    return command if utf16_len(command) <= 2 * PATH_CAP else "session-workflow anchor adopt FILE"


def parallel_notes(tracks: list[Candidate]) -> list[str]:
    """One line per live anchor another session keeps (at most ``OTHERS_NAMED``)."""
    return [
        f"Parallel track: {_name(track.name)} is kept by another session; leave it to that run."
        for track in tracks[:OTHERS_NAMED]
    ]


class Selection:
    """The anchor a session start (or PreCompact) gets, the parallel tracks beside it, the untrusted files."""

    __slots__ = ("chosen", "scan", "scans", "tracks", "untrusted")

    def __init__(
        self,
        scan: DirScan | None,
        scans: list[DirScan | None],
        chosen: Candidate | None,
        tracks: list[Candidate],
        untrusted: list[Candidate],
    ) -> None:
        self.scan = scan
        self.scans = scans
        self.chosen = chosen
        self.tracks = tracks
        self.untrusted = untrusted


def is_future(candidate: Candidate, now: float) -> bool:
    """An mtime past the hook's clock (a skewed clock, a crafted file): it may never outrank a present one."""
    return candidate.mtime > now + FUTURE_SLACK_SECONDS


def startup_window(ctx: HookContext) -> float:
    """The startup window in seconds (6 h unless the ``startup_window_hours`` option says otherwise)."""
    return config.hours(config.STARTUP_WINDOW_HOURS, ctx.env) * 3600


def idle_seconds(ctx: HookContext) -> float:
    """How long a resumed or forked conversation sat idle since its last reply (0 for any other source).

    Such a conversation is as current as its last reply: an anchor updated shortly before that reply is the run's
    live state however long the session then sat idle, so the tiers count the anchor's age from the last reply,
    not from now. The block still shows the true age.
    """
    return (ctx.idle_seconds or 0.0) if ctx.source in ("resume", "fork") else 0.0


def select(ctx: HookContext, by_record: bool = True) -> Selection:
    """Choose the anchor for this session: trusted files only; among those that the source's tier admits, the
    one this session keeps (the registry's affinity), else the best ranked (live, then newest first).

    ``resume`` and ``compact`` keep the session id, so affinity is exact there. A ``/clear`` or a fork gets a new
    id, and nothing at hook time ties it to the old one (measured on 2.1.332: the new transcript does not exist
    yet when SessionStart and PreCompact run), so it starts newest first until its first write records it.

    A live anchor whose newest keeper is another session is a parallel track. Files with a future mtime rank
    after present ones of their kind. Files are ranked by the kinds their records hold, unread (``by_record``); when
    the chosen one, finally read, is gone, unreadable or of another kind, every file is read and ranked by its text.
    """
    scan, scans = chosen_scan(ctx.project_dirs(), Trust(ctx.env, by_record).vouch)
    window = startup_window(ctx)
    idle = idle_seconds(ctx)
    untrusted = [
        candidate
        for found in scans
        if found is not None
        for candidate in found.untrusted
        if tier_for(ctx.source, ctx.now - candidate.mtime - idle, False, window) is not None
    ]
    if scan is None:
        return Selection(None, scans, None, [], untrusted)
    scan.ranked.sort(key=lambda candidate: (candidate.kind, is_future(candidate, ctx.now)))
    eligible = [c for c in scan.ranked if tier_for(ctx.source, ctx.now - c.mtime - idle, False, window) is not None]
    session = ctx.session_id
    mine = [c for c in eligible if session and c.record is not None and session in c.record.sessions]
    chosen = mine[0] if mine else (eligible[0] if eligible else None)
    tracks = [
        c
        for c in scan.ranked
        if mine
        and c is not chosen
        and c.kind == LIVE
        and c.record is not None
        and c.record.sessions
        and session not in c.record.sessions
    ]
    shown = [*scan.ranked[: OTHERS_NAMED + 1], *tracks[:OTHERS_NAMED]]
    if chosen is not None and chosen.anchor is None:
        ranked_as = chosen.kind
        if not _unchanged(chosen) or not chosen.load() or chosen.kind != ranked_as:
            # Not what its record said (gone, unreadable, or other text since the listing): it was ranked, and
            # counted among the live ones that end the scan, by that record, so rank every file by its text instead.
            return select(ctx, by_record=False)
    if not all(_unchanged(candidate) for candidate in shown):
        return select(ctx, by_record=False)  # a file the block would name is gone or changed since the listing
    return Selection(scan, scans, chosen, tracks, untrusted)


def _unchanged(candidate: Candidate) -> bool:
    """A file ranked unread, by its record, is still there and still the identity the listing saw (one stat)."""
    if candidate.anchor is not None:
        return True
    try:
        info = os.stat(candidate.path)
    except (OSError, ValueError):
        return False
    return candidate.identity is not None and Identity.of(info).as_tuple() == candidate.identity.as_tuple()


def prepare(ctx: HookContext) -> AnchorPart | UntrustedPart | None:
    """Load the anchor block for this session start, or None (no open anchor; at startup, none in the window).

    At startup only anchors updated within the startup window (6 h unless the ``startup_window_hours`` option
    says otherwise) compete: a crash restart resumes the run that was just active; the stale ones are still
    named among the others. Anchors not created here are only named.
    """
    directories = ctx.project_dirs()
    selection = select(ctx)
    notes = untrusted_notes(selection.untrusted)
    scan, chosen = selection.scan, selection.chosen
    if scan is None or chosen is None or chosen.anchor is None:
        return UntrustedPart(notes) if notes else None
    age = ctx.now - chosen.mtime
    tier = tier_for(
        ctx.source, max(0.0, age - idle_seconds(ctx)), chosen.anchor.parked is not None, startup_window(ctx)
    )
    if tier is None:
        return UntrustedPart(notes) if notes else None
    move = None
    if len(directories) == 2:
        scans = selection.scans
        other = scans[1] if directories[0] == scan.directory else scans[0]
        move = Move(directories[0], directories[1], scan.directory, other)
    others = [candidate for candidate in scan.ranked if candidate is not chosen]
    block = AnchorBlock(chosen, chosen.anchor, tier, ctx.source, age, others, scan.total - 1, move)
    folders = [found.folder for found in selection.scans if found is not None]
    return AnchorPart(block, scan, ctx, folders, "\n".join(parallel_notes(selection.tracks) + notes))


def precompact_facts(ctx: HookContext) -> tuple[str, str | None] | None:
    """(absolute anchor path, the cursor's next-action line or None) for the PreCompact hook; None without one."""
    chosen = select(ctx).chosen
    if chosen is None:
        return None
    section = chosen.anchor.cursor_section if chosen.anchor is not None else None
    line = cursor_next_action(section) if section is not None else None
    return os.path.abspath(chosen.path), (cut_utf16(one_line(line), LINE_CAP) if line else None)
