"""The contract between the SessionStart composer and each part it places in the one block.

A part does its I/O once, in its module's ``prepare(ctx)`` (which returns None when it has nothing to say),
and then renders purely, as often as the composer asks, within whatever budget it is given.
"""

from __future__ import annotations


class PreparedPart:
    """A part with its data loaded, ready to render against a budget.

    ``cap`` is the most the part ever wants and ``floor`` the least in which it can still say something true
    (a header and an exact omitted count, say); both in the part's own unit. Parts that count UTF-8 bytes are
    safe to budget in UTF-16 units: a string never has more UTF-16 units than UTF-8 bytes.
    """

    name = "part"
    cap = 0
    floor = 0
    # Set by the composer when an earlier block of the thread holds the rendered text and one line stood for it.
    held_above = False
    # Whether a block's ledger line may keep a digest of this part's text (``hook.pending``): False for text taken
    # from the transcript (commands, prompts), whose short secrets an unkeyed digest would let a reader search for.
    digest_kept = True

    def render(self, budget: int) -> str:
        """Return the part's text within ``budget`` (``budget`` ≥ ``floor``)."""
        raise NotImplementedError

    def stable(self, text: str) -> str:
        """``text`` (or an earlier block holding it) with what changes by itself masked, such as an age: a resume
        block leaves out a part whose stable text an earlier block of the thread still carries."""
        return text

    def ledger_facts(self) -> dict[str, object]:
        """What the compaction ledger keeps of this part beyond its size (the anchor: its path and step)."""
        return {}

    def after_emit(self, emitted: bool) -> None:
        """Called once after stdout was written (True) or failed (False); ``.gitignore`` and the like go here."""


class Elsewhere(PreparedPart):
    """What a part's ``prepare`` returns when another channel delivers its state (the mod's work-state section in
    the system prompt): the composer leaves it out of the block but counts it as restored state."""

    def __init__(self, name: str) -> None:
        self.name = name

    def render(self, budget: int) -> str:
        return ""
