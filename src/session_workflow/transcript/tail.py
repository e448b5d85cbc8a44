"""The transcript's tail, read once, backwards, for every part that looks in it.

The run record (``record``) and the prompt recovery (``recovery``) both want a few kinds of records from the end of
Claude Code's transcript, which carries whole request bodies and reaches hundreds of MB. At a compaction both run:
one pass over the last ``TAIL_BYTES`` serves both (one read of the tail, one search per marker), each reader taking
only the lines that hold one of its own markers, until every reader is done or the tail is read.
"""

from __future__ import annotations

from session_workflow.core.boundedio import iter_marked_from_end

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Protocol

    class Reader(Protocol):
        """A reader of the pass. ``markers``: the byte strings of the lines it wants now (it changes the list as
        it learns, and empties it when done); ``take``: each such line, last first, with its offset in the file
        and the markers of the pass it holds; True when it changed its markers."""

        markers: list[bytes]

        def take(self, line: bytes, at: int, held: tuple[bytes, ...]) -> bool: ...


# How much of the transcript's end is read, by every reader.
TAIL_BYTES = 4 << 20
# A compaction's boundary record, as Claude Code writes it (compact JSON; inside a string its quotes are escaped).
BOUNDARY_MARKER = b'"subtype":"compact_boundary"'


def read_back(path: str, readers: Sequence[Reader], max_bytes: int = TAIL_BYTES) -> None:
    """One backward pass over the last ``max_bytes`` of ``path`` for all ``readers``: each line that holds a marker
    of one goes to that one. Stops once no reader wants anything more. Plain loops: this runs for each of hundreds
    of lines."""
    if len(readers) == 1:  # its own list is the pass's
        reader = readers[0]
        for line, at, held in iter_marked_from_end(path, max_bytes, reader.markers):
            reader.take(line, at, held)
        return
    markers = _wanted(readers)
    for line, at, held in iter_marked_from_end(path, max_bytes, markers):
        changed = False
        for reader in readers:
            mine = reader.markers
            for marker in held:
                if marker in mine:
                    changed = reader.take(line, at, held) or changed
                    break
        if changed:
            markers[:] = _wanted(readers)


def _wanted(readers: Sequence[Reader]) -> list[bytes]:
    """Every reader's markers, each once, in order."""
    return list(dict.fromkeys(marker for reader in readers for marker in reader.markers))
