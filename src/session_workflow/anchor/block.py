"""The anchor block's text: the chosen anchor (full HEAD, pointer or parked) and the notes around it, within a
budget. Pure: everything here renders what ``discover`` and ``choice`` already loaded."""

from __future__ import annotations

from session_workflow.anchor.age import FULL, POINTER, updated_text
from session_workflow.anchor.discover import HEAD_READ_BYTES, OTHERS_NAMED
from session_workflow.anchor.frame import HEAD_CLOSE, NAME_CAP, QUOTE, body_sections, opening, trim_end
from session_workflow.anchor.template import is_unfilled
from session_workflow.anchor.text import (
    DONE,
    KIND_LABELS,
    LIVE,
    NOT_ANCHOR,
    TAIL_MARKER,
    AnchorText,
    fit_sections,
    mv_command,
)
from session_workflow.core.text import ELLIPSIS, cut_utf16, named, one_line, shell_command, shell_quote, utf16_len

TYPE_CHECKING = False
if TYPE_CHECKING:
    from session_workflow.anchor.discover import Candidate
    from session_workflow.anchor.text import Fit, Section


CAP = 8000
POINTER_LIMIT = 1200
PATH_CAP = 300
LINE_CAP = 240
DROP_NAMES_CAP = 400
# Said at startup only (the session may be for another task); a resume that follows still holds it.
STARTUP_NOTE = "This session is a fresh start: if it was started for a different task, ignore this anchor."
STARTUP_NOTE_SHORT = " Ignore it if this session is for another task."


def display_path(path: str) -> str:
    """A path as every line shows it (``core.text.named``); an absurdly long one keeps its end (the file name)."""
    return named(path, PATH_CAP, keep_end=True)


def display_name(name: str) -> str:
    return named(name, NAME_CAP)


def _close_advice(path: str) -> str:
    command = mv_command(path)
    return command if utf16_len(command) <= 2 * PATH_CAP else "rename it to *.closed.md"


def unfilled_line(path: str) -> str:
    """The one line an anchor still holding only its template injects: where it is, that it was never filled, and
    the command that writes it (its template's prompts are comments, never the run's state)."""
    target = path if utf16_len(shell_quote(path)) <= 2 * PATH_CAP else "FILE"
    return (
        f"Control anchor {display_path(path)}: created, not filled yet. Write it whole with"
        f" `{shell_command('session-workflow', 'anchor', 'write', target)} <<'EOF'`, the anchor's text, then a line"
        f" `EOF` (`{shell_command('session-workflow', 'anchor', 'show', target)}` prints the template)."
    )


def show_command(path: str, whole: bool = False) -> str:
    """The command that prints an anchor as the hook frames it (``--all``: with its TAIL), in backticks.

    The model reads an anchor through this, never the Read tool: Claude Code re-attaches every file the model
    read before a compaction, whole, TAIL included, beside the block that already carries the HEAD.
    """
    bare = shell_command("session-workflow", "anchor", "show", *(["--all"] if whole else []))
    command = shell_command("session-workflow", "anchor", "show", *(["--all"] if whole else []), path)
    return f"`{command}`" if utf16_len(command) <= 2 * PATH_CAP else f"`{bare}`"


def named_list(names: list[str], total: int) -> str:
    """At most ``OTHERS_NAMED`` names, then "and N more" for the rest of ``total``."""
    shown = names[:OTHERS_NAMED]
    rest = total - len(shown)
    text = ", ".join(shown)
    return f"{text} and {rest} more" if rest > 0 else text


class AnchorBlock:
    """Pure rendering of the chosen anchor (full HEAD, pointer or parked) with the notes around it."""

    __slots__ = ("_body", "age", "anchor", "candidate", "others", "others_total", "source", "tier", "unfilled")

    def __init__(
        self,
        candidate: Candidate,
        anchor: AnchorText,
        tier: str,
        source: str | None,
        age: float,
        others: list[Candidate],
        others_total: int,
    ) -> None:
        self.candidate = candidate
        self.anchor = anchor
        self.tier = tier
        self.source = source
        self.age = age
        self.others = others
        self.others_total = others_total
        self._body: list[Section] | None = None
        self.unfilled = is_unfilled(anchor)

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
            labels.append(f"{display_name(other.name)}{kind}")
        lines = [f"Other open anchors here: {named_list(labels, self.others_total)}."]
        done = [other for other in self.others[:OTHERS_NAMED] if other.kind == DONE]
        if done:
            lines.append("Marked done in-content but never closed; if finished, close with:")
            lines.extend(_close_advice(other.path) for other in done)
        return lines

    def _trailer(self, compact: bool) -> list[str]:
        return self._others_note(compact)

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
            parts.append(f"The cursor section {display_name(fit.cursor_heading or '')} was cut at a line boundary.")
        elif fit.cursor_reserved and fit.dropped:
            parts.append(
                f"The cursor section {display_name(fit.cursor_heading or '')} was reserved and is shown whole."
            )
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
        if self.unfilled:
            return unfilled_line(self.candidate.path)
        if self.tier == FULL:
            return self._full_floor()
        variants = self._short_variants()
        return variants[-1] if variants else ""

    def render(self, budget: int) -> str:
        """The block within ``budget`` UTF-16 units ("" when not even the floor fits); one line when unfilled."""
        if self.unfilled:
            line = unfilled_line(self.candidate.path)
            return line if utf16_len(line) <= budget else ""
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
