"""The one SessionStart hook: compose work state, anchor, tasks and recovery into one additionalContext.

Claude Code silently replaces a hook's additionalContext longer than 10,000 UTF-16 units with a 2 KB preview
and a file path, so this module owns the allocator that keeps every output inside that cap while losing the
least. Parts come from the registry ``PARTS`` (a new part is one entry and its module), in priority order; each
gets min(its own cap, what is left minus the floors reserved for the parts after it), renders within that, and
names anything it had to cut. On a resume or a fork, a part that an earlier block of the same thread (a fork's:
its parent's) still carries word for word is replaced by one line saying so; so is, at a compaction, a part that
the resume block Claude Code has not sent yet carries (``hook.pending``: it comes after the compaction too).
A part whose reading or rendering fails (a RecursionError on a deeply nested record, a MemoryError, a bug) is
named as unreadable; it costs only itself, the others still render, and the error goes to the error log
(``core.errorlog``), as does one of the composer itself, whose block then names every part as left out."""

from __future__ import annotations

import time

from session_workflow.core.context import SOURCES
from session_workflow.core.errors import record
from session_workflow.core.parts import Elsewhere, PreparedPart
from session_workflow.core.text import utf8_len, utf16_len
from session_workflow.hook.io import hook_json, run_hook, write_stdout
from session_workflow.hook.parts import PARTS

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from session_workflow.core.context import HookContext
    from session_workflow.hook.parts import Part

CAP_UTF16 = 10_000
SEPARATOR = "\n\n"
# Room kept for the closing "omitted for space" and "could not be read" lines, written only when needed.
OMITTED_NOTE_RESERVE = 200

# Sources whose thread keeps its history, earlier SessionStart blocks included. Measured on 2.1.332, a fork
# copies the thread into a new transcript that does not exist yet when the hook runs, and its payload names
# neither the parent session nor its transcript: the thread is the parent's (``transcript.thread.fork_parent``).
RESUME_SOURCES = ("resume", "fork")


# Which parts each SessionStart source gets, in block order.
PARTS_BY_SOURCE: dict[str, tuple[str, ...]] = {
    source: tuple(part.name for part in PARTS if source in part.sources)
    for source in SOURCES
    if any(source in part.sources for part in PARTS)
}

# The line after a fork's header, whatever follows (the anchor may be one line, held above): whose the work state
# and the tasks are, and that the parent may still write the anchor.
FORK_NOTE = (
    "This session is a fork: the session it was forked from keeps its work state (a work-state section carried in"
    " the system prompt is that session's) and its task list, and may still update the anchor: re-read it"
    " (`session-workflow anchor show`) before writing it."
)


# The block's one authority sentence, only where a summary or a gap exists for the restored state to outrank.
AUTHORITY = {
    "compact": "it outranks the summary of earlier context.",
    "resume": "it outranks anything earlier in this thread.",
    "fork": "it outranks anything earlier in this thread.",
}


class Composition:
    """The composed block and what each part spent, for the hook, the dry run and the demo."""

    __slots__ = ("errors", "failed", "omitted", "parts", "sizes", "text", "whole")

    def __init__(
        self,
        text: str,
        parts: list[PreparedPart],
        sizes: list[tuple[str, int, int]],
        omitted: list[str],
        failed: list[str] | None = None,
        errors: list[tuple[str, BaseException]] | None = None,
    ) -> None:
        self.text = text
        self.parts = parts
        self.sizes = sizes
        self.omitted = omitted
        self.failed = failed or []
        # The exceptions of the parts that failed to render, for the error log (``allocate`` stays pure).
        self.errors = errors or []
        # Each part the block holds whole, by name: its text (``hook.pending`` keeps a digest of its stable form).
        self.whole: dict[str, str] = {}


class FailedPart(PreparedPart):
    """A part whose reading raised: it renders nothing and is named as unreadable."""

    def __init__(self, name: str) -> None:
        self.name = name

    def render(self, budget: int) -> str:
        return ""


def header(source: str) -> str:
    """The block's first line; the source comes from a fixed set, so no input can make it claim another."""
    claim = AUTHORITY.get(source)
    return f"session-workflow: state restored from disk at SessionStart ({source})" + (f"; {claim}" if claim else ".")


def header_prefix() -> str:
    """What every block of ours starts with, whatever the source: the common start of every source's header."""
    first, *others = [header(source) for source in SOURCES]
    while not all(other.startswith(first) for other in others):
        first = first[:-1]
    return first


def unchanged_line(name: str, source: str) -> str:
    """The line that stands for a part an earlier block of this thread still carries whole."""
    label = next((part.label for part in PARTS if part.name == name), name)
    return f"{label}: unchanged since the session-workflow SessionStart ({source}) block above, which still holds it."


def earlier_source(part: PreparedPart, text: str, earlier: list[str]) -> str | None:
    """The source of the newest earlier block that holds ``text`` as one whole part, or None.

    Pure. A part sits between the header's and the next part's separators, so it is matched whole, with the
    part's own volatile pieces (an age) masked on both sides.
    """
    wanted = SEPARATOR + part.stable(text) + SEPARATOR
    for block in earlier:
        if wanted in part.stable(block) + SEPARATOR:
            return next((source for source in SOURCES if block.startswith(header(source) + "\n")), "earlier")
    return None


def prepare_parts(ctx: HookContext) -> list[PreparedPart]:
    """Load the parts this source gets, in block order; parts with nothing to say are left out.

    A part whose state another channel delivers (``Elsewhere``: the mod's work-state section) is left out too,
    but counts as restored state.
    """
    folders = ctx.project_dirs()
    prepared: list[PreparedPart] = []
    restored = False
    for part in PARTS:
        if ctx.source not in part.sources or not part.present(ctx, folders, restored):
            continue
        loaded = guarded(part, ctx)
        restored = restored or (loaded is not None and not isinstance(loaded, (FailedPart, SwitchedOff)))
        if loaded is not None and not isinstance(loaded, Elsewhere):
            prepared.append(loaded)
    return prepared


class SwitchedOff(PreparedPart):
    """The one line that stands for a part a variable switched off in a session that keeps it (never the part)."""

    def __init__(self, name: str, text: str) -> None:
        self.name = name
        self.text = text
        self.cap = self.floor = utf16_len(text)

    def render(self, budget: int) -> str:
        return self.text if budget >= self.floor else ""


def load(part: Part, ctx: HookContext) -> PreparedPart | None:
    """The part's ``prepare(ctx)``; when a variable switched it off (its ``switch``), the one line that says which
    variable and where it is set, never the part itself."""
    option = part.option()
    if option is None or ctx.places.switch(option):
        return part.load(ctx)
    from session_workflow.core import config

    line = config.switched_off_line(option, part.switch_label, ctx.places, ctx.project_dirs())
    return SwitchedOff(part.name, line) if line is not None else None


def guarded(part: Part, ctx: HookContext) -> PreparedPart | None:
    """``load(part, ctx)``, or a FailedPart when it raises: one bad record costs its part, never the block."""
    try:
        return load(part, ctx)
    except Exception as error:  # RecursionError, MemoryError, a bug
        _record(f"SessionStart part {part.name}", error, ctx)
        return FailedPart(part.name)


def _record(where: str, error: BaseException, ctx: HookContext) -> None:
    """Put ``error`` in the error log (``core.errors.record``: its module is loaded only then)."""
    record(where, error, ctx.places)


def allocate(
    source: str,
    parts: list[PreparedPart],
    cap: int = CAP_UTF16,
    earlier: list[str] | None = None,
    notes: Sequence[str] = (),
    unsent: tuple[str, Mapping[str, str]] | None = None,
) -> Composition:
    """Render each part in order within its share of the cap and join them into one block.

    Pure: the budget each part gets is min(its cap, what is left minus the floors of the parts after it); when
    that is below the part's own floor, the part (which outranks the later ones) may use what is left. A part
    that still cannot fit is left out and named in the closing line; one that failed (to read or to render) is
    named in the line after it. A part that one of the ``earlier`` blocks (of this thread, newest first) holds
    whole is replaced by ``unchanged_line``, and so is one whose stable text's digest ``unsent`` holds (the
    source of a block Claude Code delivers after this compaction, and its parts' digests: ``hook.pending``).
    ``notes`` (one line each: an option that did not parse, a folder variable ignored) follow the header.
    """
    head = "\n".join([header(source), *notes])
    remaining = cap - utf16_len(head) - OMITTED_NOTE_RESERVE
    texts: list[str] = []
    sizes: list[tuple[str, int, int]] = []
    omitted: list[str] = []
    failed: list[str] = []
    errors: list[tuple[str, BaseException]] = []
    whole: dict[str, str] = {}
    if unsent is not None:
        from session_workflow.hook.pending import digest
    for index, part in enumerate(parts):
        if isinstance(part, FailedPart):
            failed.append(part.name)
            continue
        remaining -= len(SEPARATOR)
        reserved = sum(later.floor + len(SEPARATOR) for later in parts[index + 1 :])
        budget = min(part.cap, remaining - reserved)
        if budget < part.floor:  # an earlier part outranks the floors kept for later ones
            budget = min(part.cap, remaining)
        try:
            text = part.render(budget) if budget >= part.floor else ""
            held = earlier_source(part, text, earlier) if earlier and text else None
            if held is None and unsent is not None and text and unsent[1].get(part.name) == digest(part.stable(text)):
                held = unsent[0]
        except Exception as error:  # as in ``guarded``: this part is lost, not the block
            errors.append((part.name, error))
            failed.append(part.name)
            continue
        units = utf16_len(text)
        if not text or units > budget:
            omitted.append(part.name)
            continue
        if held is None:
            whole[part.name] = text
        else:
            text = unchanged_line(part.name, held)
            units = utf16_len(text)
            part.held_above = True
        texts.append(text)
        remaining -= units
        sizes.append((part.name, units, utf8_len(text)))
    if not texts and not omitted and not failed:
        return Composition("", parts, sizes, omitted)
    block = SEPARATOR.join([head, *texts])
    if omitted:
        block += SEPARATOR + "session-workflow: omitted for space: " + ", ".join(omitted) + "."
    if failed:
        block += SEPARATOR + "session-workflow: could not be read, left out: " + ", ".join(failed) + "."
    composition = Composition(block, parts, sizes, omitted, failed, errors)
    composition.whole = whole
    return composition


def compose(ctx: HookContext) -> Composition:
    """Everything the SessionStart hook would inject for this context (no telemetry, no output).

    Every unexpected exception goes to the error log. When the composer itself raises, the block is the header
    and the line naming every part this source gets as left out: the run still learns that state was not
    restored, and ``doctor`` shows why.
    """
    source = ctx.source or ""
    if source not in PARTS_BY_SOURCE:
        return Composition("", [], [], [])
    try:
        composition = _compose(ctx, source)
    except Exception as error:  # a bug in the composer: the block still says what it left out
        _record("SessionStart", error, ctx)
        return allocate(source, [FailedPart(name) for name in PARTS_BY_SOURCE[source]])
    for name, failure in composition.errors:
        _record(f"SessionStart part {name}", failure, ctx)
    return composition


def _compose(ctx: HookContext, source: str) -> Composition:
    parts = prepare_parts(ctx)
    if not parts:  # nothing to say: no notes, no thread to read (the options module is not even loaded)
        return Composition("", parts, [], [])
    from session_workflow.core import config

    earlier = None
    if ctx.source in RESUME_SOURCES and ctx.transcript_path:
        from session_workflow.transcript.thread import blocks_in_thread, fork_parent

        try:
            thread = fork_parent(ctx.transcript_path) if ctx.source == "fork" else ctx.transcript_path
            earlier = blocks_in_thread(thread, header_prefix()) if thread else None
        except Exception as error:  # unsure what the thread holds: send everything
            _record("SessionStart thread", error, ctx)
            earlier = None
    unsent = None
    if ctx.source == "compact":
        from session_workflow.hook.pending import pending

        try:
            unsent = pending(ctx)
        except Exception as error:  # unsure what Claude Code still holds: send everything
            _record("SessionStart pending", error, ctx)
    notes = [*config.problems(ctx.places.env), *ctx.places.ignored_folders(ctx.project_dirs())]
    prepared = {part.name for part in parts}
    for entry in PARTS:
        note = entry.head_note(ctx) if entry.name in prepared else None  # its module is loaded already
        notes += [note] if note is not None else []
    if ctx.source == "fork":
        notes = [FORK_NOTE, *notes]
    return allocate(source, parts, earlier=earlier, notes=notes, unsent=unsent)


def session_start(ctx: HookContext) -> None:
    """Hook handler: write the block (or nothing) and then let each part record that it was emitted."""
    composition = compose(ctx)
    if not composition.text:
        return
    emitted = write_stdout(hook_json("SessionStart", composition.text))
    for part in composition.parts:
        try:
            part.after_emit(emitted)
        except Exception as error:  # a .gitignore never fails the hook, and is never silent
            _record(f"SessionStart after_emit {part.name}", error, ctx)
    if emitted:
        from session_workflow.core import ledger

        try:
            ledger.append(ctx.places, ledger_entry(ctx, composition))
        except Exception as error:  # the ledger never fails the hook, and is never silent
            _record("SessionStart ledger", error, ctx)


def ledger_entry(ctx: HookContext, composition: Composition) -> dict[str, object]:
    """The compaction ledger's line for a block that was sent: each part's size, what was cut, left out (unreadable)
    or stood for by one line (held above), and the anchor's facts. Flat values, so the hook imports no ``json``."""
    entry: dict[str, object] = {
        "ts": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(ctx.now)),
        "kind": "start",
        "source": ctx.source,
        "session": (ctx.session_id or "")[:200] or None,
        "project": next(iter(ctx.project_dirs()), None),
        "units": utf16_len(composition.text),
        "parts": ",".join(f"{name}={units}" for name, units, _bytes in composition.sizes),
        "cut": ",".join(composition.omitted),
        "failed": ",".join(composition.failed),
        "held": ",".join(part.name for part in composition.parts if part.held_above),
    }
    for part in composition.parts:
        entry.update(part.ledger_facts())
    for registered in PARTS:
        entry.update(registered.ledger_facts(ctx))
    if ctx.source == "resume":  # a compaction that follows before this block is sent needs these
        from session_workflow.hook.pending import ledger_facts

        # Stable forms only here: masking the ages takes ``re``, which no other source's block pays for.
        whole = composition.whole
        kept = {p.name: p.stable(whole[p.name]) for p in composition.parts if p.name in whole and p.digest_kept}
        entry.update(ledger_facts(ctx, kept))
    elif ctx.source == "fork":  # the fork's later blocks take its parent from here
        from session_workflow.hook.pending import fork_parent_session

        entry["parent"] = fork_parent_session(ctx)
    return entry


def main() -> None:
    """The SessionStart entry of hooks/hook.py."""
    run_hook(session_start, "SessionStart")
