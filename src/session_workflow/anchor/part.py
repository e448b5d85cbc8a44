"""The anchor part of the SessionStart block: ``prepare`` finds (``discover``), chooses (``choice``) and renders
(``block``) the session's anchor, and names the anchors it may not inject.

All file-system work happens in ``prepare`` (and, after a successful injection, in ``after_emit``); rendering is
pure. What was sent is kept in the compaction ledger (``core.ledger``, written by the composer), outside the project.
"""

from __future__ import annotations

import os
import stat

from session_workflow.anchor import registry
from session_workflow.anchor.age import FULL, tier_for
from session_workflow.anchor.block import (
    CAP,
    LINE_CAP,
    PATH_CAP,
    STARTUP_NOTE,
    STARTUP_NOTE_SHORT,
    AnchorBlock,
    display_name,
    display_path,
    with_notes,
)
from session_workflow.anchor.choice import idle_seconds, select, startup_window
from session_workflow.anchor.discover import OTHERS_NAMED
from session_workflow.anchor.frame import body_sections
from session_workflow.anchor.registry import adopt_command
from session_workflow.anchor.text import (
    closed_name,
    cursor_next_action,
    newest_step_next,
)
from session_workflow.core.gitignore import ensure_gitignore
from session_workflow.core.locations import anchors_dir
from session_workflow.core.parts import PreparedPart
from session_workflow.core.text import cut_utf16, one_line, shell_quote, utf16_len

TYPE_CHECKING = False
if TYPE_CHECKING:
    from session_workflow.anchor.choice import Selection
    from session_workflow.anchor.discover import Candidate, DirScan
    from session_workflow.core.context import HookContext


# The block's own phrases that change with the clock alone (``age_text``, the pointer's hours), masked when a
# resume compares its block with an earlier one, each on the line the block itself writes it: a line that starts
# "Updated <age> ago", one that starts "## Stale control anchor (untouched for <n>h)", one that ends
# "(updated <age> ago).", where <age> is "<1 min", "<n> min" or "<n>h" and <n> 1 to 9 digits. String methods, not a
# pattern: a resume (and its ledger line's digests) never pays for ``re``; tests/anchor/test_part.py holds the
# masking equal to the pattern.
MASK = "\x00"
_UPDATED, _AGO = "Updated ", " ago"
_STALE = "## Stale control anchor (untouched for "
_INLINE, _INLINE_END = "(updated ", " ago)."


def _digits(line: str, start: int) -> int:
    """The index after the run of 1 to 9 ASCII digits at ``start``, or -1."""
    end = start
    while end < len(line) and line[end] in "0123456789":
        end += 1
    return end if 1 <= end - start <= 9 else -1


def _age_end(line: str, start: int) -> int:
    """The index after the age (``age_text``) that starts at ``start``, or -1."""
    if line.startswith("<1 min", start):
        return start + 6
    end = _digits(line, start)
    if end < 0:
        return -1
    if line.startswith(" min", end):
        return end + 4
    return end + 1 if line.startswith("h", end) else -1


def _mask_line(line: str) -> str:
    """``line`` with its clock-driven phrase (at most one at its start and one at its end) masked."""
    if line.startswith(_UPDATED):
        end = _age_end(line, len(_UPDATED))
        if end >= 0 and line.startswith(_AGO, end):
            line = _UPDATED + _AGO + MASK + line[end + len(_AGO) :]
    elif line.startswith(_STALE):
        end = _digits(line, len(_STALE))
        if end >= 0 and line.startswith("h)", end):
            line = _STALE + ")" + MASK + line[end + 2 :]
    if line.endswith(_INLINE_END):
        start = line.rfind(_INLINE)
        if start >= 0 and _age_end(line, start + len(_INLINE)) == len(line) - len(_INLINE_END):
            line = line[:start] + _INLINE + _INLINE_END + MASK
    return line


UNTRUSTED_NAMED = 3


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
        self.folders = folders
        self.notes = notes
        self.floor = utf16_len(block.floor_text())
        self._rendered_text = ""
        self._block_budget = 0

    def render(self, budget: int) -> str:
        text = ""
        if self.notes:
            room = budget - utf16_len(self.notes) - 1
            text = with_notes(self.block.render(room), self.notes, budget) or "" if room > 0 else ""
        self._block_budget = room if text else budget
        text = text or self.block.render(budget)
        self._rendered_text = text
        return text

    def dropped_sections(self) -> int:
        """How many HEAD sections the sent block left out for space (all of them when only its floor fitted)."""
        if not self._rendered_text or self.block.tier != FULL or self.block.unfilled:
            return 0
        fit = self.block.render_full(self._block_budget)[1]
        return len(fit.dropped) if fit is not None else len(body_sections(self.block.anchor.sections))

    def stable(self, text: str) -> str:
        """``text`` with the ages the block states and its startup-only caveat masked: an anchor that is only older
        than in an earlier block of the thread, or was shown there at startup, is unchanged."""
        text = text.replace("\n" + STARTUP_NOTE, "").replace(STARTUP_NOTE_SHORT, "")
        if "ago" not in text and "untouched for" not in text:
            return text
        return "\n".join(_mask_line(line) for line in text.split("\n"))

    def after_emit(self, emitted: bool) -> None:
        for folder in self.folders:
            ensure_gitignore(folder)

    def ledger_facts(self) -> dict[str, object]:
        step = self.block.anchor.frontmatter.get("step", "")
        dropped = self.dropped_sections()
        return {
            "anchor": self.block.candidate.path if self._rendered_text else None,
            "step": one_line(step)[:20] or None if self._rendered_text else None,
            "tier": self.block.tier,
            **({"anchor_dropped": dropped} if dropped else {}),
        }


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


def changed_notes(changed: list[Candidate]) -> list[str]:
    """One line per anchor of ours changed outside the writers (at most ``UNTRUSTED_NAMED``): what happened, the
    step written here, and the commands that show it, keep it, or put ours back. The run's own: no user needed."""
    return [
        f"Control anchor changed outside the writers (not shown): {display_path(candidate.path)},"
        f" {_written_at(candidate.record)}; {registry.changed_advice(_command_path(candidate.path), _step(candidate))}."
        for candidate in changed[:UNTRUSTED_NAMED]
    ]


def kept_here(kept: list[str], projects: list[str]) -> list[str]:
    """The anchors of ``kept`` (the session's list, real paths) in the anchors folder of one of ``projects`` that
    are not closed: ``close`` renames an anchor (to ``*.closed.md``, or a free name beside it) and removes its
    record. Bounded: the session's list names at most 8 anchors, one ``lstat`` each."""
    if not kept:
        return []
    folders = {os.path.realpath(anchors_dir(directory)) for directory in projects}
    return [real for real in kept if os.path.dirname(real) in folders and not os.path.lexists(closed_name(real))]


def gone_anchors(records: registry.Registry, kept: list[str], projects: list[str]) -> list[tuple[str, registry.Record]]:
    """The anchors of ``kept`` here (``kept_here``) that are no longer on disk (deleted, ``git clean -fdx``) and
    that ``anchor restore`` can put back (their record stands)."""
    found = []
    for real in kept_here(kept, projects):
        record = records.read(real) if not os.path.lexists(real) else None
        if record is not None:
            found.append((real, record))
    return found


def gone_notes(ctx: HookContext, kept: list[str]) -> list[str]:
    """One line per anchor of this session's that is gone (``gone_anchors``), with the command that puts its last
    version back."""
    return [
        f"Control anchor gone: {display_path(real)}, {_written_at(record)}, is no longer on disk; put it"
        f" back with `{registry.restore_command(_command_path(real))}`."
        for real, record in gone_anchors(registry.Registry(ctx.places), kept, ctx.project_dirs())[:UNTRUSTED_NAMED]
    ]


def unlisted_notes(ctx: HookContext, selection: Selection) -> list[str]:
    """One line per anchor of this session's that is on disk but that the hook neither shows nor names elsewhere,
    with the reason: a link out of its folder (never followed), not a regular file, or unreadable."""
    seen = {
        candidate.real
        for found in selection.scans
        if found is not None
        for candidate in [*found.ranked, *found.untrusted]
    }
    lines = []
    for real in kept_here(selection.kept, ctx.project_dirs()):
        if real in seen:
            continue
        try:
            info = os.lstat(real)
        except (OSError, ValueError):
            continue  # gone: ``gone_notes`` names it
        if stat.S_ISLNK(info.st_mode):
            why = "it is now a link that leads out of its anchors folder, which the hooks never follow"
        elif not stat.S_ISREG(info.st_mode):
            why = "it is no longer a regular file"
        else:
            why = "it could not be read"
        lines.append(f"Control anchor kept by this session not shown: {display_path(real)}; {why}.")
    return lines[:UNTRUSTED_NAMED]


def _written_at(record: registry.Record | None) -> str:
    step = record.step if record is not None else None
    return f"last written here at step {step}" if step is not None else "last written here"


def _step(candidate: Candidate) -> int | None:
    return candidate.record.step if candidate.record is not None else None


def _command_path(path: str) -> str:
    """The path as the commands name it, or FILE when quoting it would take more than ``PATH_CAP`` units."""
    return path if utf16_len(shell_quote(path)) <= PATH_CAP else "FILE"


def _adopt_advice(path: str) -> str:
    command = adopt_command(path)
    return command if utf16_len(command) <= 2 * PATH_CAP else "session-workflow anchor adopt FILE"


def parallel_notes(tracks: list[Candidate]) -> list[str]:
    """One line per live anchor another session keeps (at most ``OTHERS_NAMED``)."""
    return [
        f"Parallel track: {display_name(track.name)} is kept by another session; leave it to that run."
        for track in tracks[:OTHERS_NAMED]
    ]


def prepare(ctx: HookContext) -> AnchorPart | UntrustedPart | None:
    """Load the anchor block for this session start, or None (no open anchor; at startup, none in the window).

    At startup only anchors updated within the startup window (6 h unless the ``startup_window_hours`` option
    says otherwise) compete: a crash restart resumes the run that was just active; the stale ones are still
    named among the others. Anchors not created here are only named.
    """
    selection = select(ctx)
    changed = [candidate for candidate in selection.untrusted if candidate.record is not None]
    strangers = [candidate for candidate in selection.untrusted if candidate.record is None]
    notes = gone_notes(ctx, selection.kept) + unlisted_notes(ctx, selection)
    notes += changed_notes(changed) + untrusted_notes(strangers)
    problem = registry.Registry(ctx.places).trust_problem() if selection.untrusted else None
    if problem is not None:  # why every anchor here reads as not created here
        notes.insert(0, problem)
    scan, chosen = selection.scan, selection.chosen
    if scan is None or chosen is None or chosen.anchor is None:
        return UntrustedPart(notes) if notes else None
    age = ctx.now - chosen.mtime
    tier = tier_for(
        ctx.source, max(0.0, age - idle_seconds(ctx)), chosen.anchor.parked is not None, startup_window(ctx)
    )
    if tier is None:
        return UntrustedPart(notes) if notes else None
    others = [candidate for candidate in scan.ranked if candidate is not chosen]
    block = AnchorBlock(chosen, chosen.anchor, tier, ctx.source, age, others, scan.total - 1)
    folders = [found.folder for found in selection.scans if found is not None]
    return AnchorPart(block, scan, ctx, folders, "\n".join(parallel_notes(selection.tracks) + notes))


def precompact_facts(ctx: HookContext, stepped: bool = False) -> tuple[str, str | None] | None:
    """(absolute anchor path, the cursor's next-action line or None) for the PreCompact hook; None without one.

    ``stepped``: the anchor's newest write was an ``anchor step``, so its ``next:`` (when it names one) is newer
    than the cursor's ``Next action`` line, which only a whole write changes.
    """
    chosen = select(ctx).chosen
    if chosen is None:
        return None
    section = chosen.anchor.cursor_section if chosen.anchor is not None else None
    newest = newest_step_next(section) if section is not None and stepped else None
    line = newest or (cursor_next_action(section) if section is not None else None)
    return os.path.abspath(chosen.path), (cut_utf16(one_line(line), LINE_CAP) if line else None)
