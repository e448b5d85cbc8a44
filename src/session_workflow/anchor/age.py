"""How old an anchor is, for the model and for people: which block its age earns, and the words for the age.

Pure functions of an age in seconds (the reader's clock minus the file's mtime), shared by the SessionStart part,
the reports and the block; hot-path safe (no imports beyond ``core.text``).
"""

from __future__ import annotations

from session_workflow.core.text import duration_text

STARTUP_MAX_AGE = 6 * 3600
POINTER_AGE = 24 * 3600
DORMANT_AGE = 72 * 3600
FULL, POINTER, PARKED_TIER = "full", "pointer", "parked"

# An mtime this far past the reader's clock is "in the future"; closer is ordinary clock granularity.
FUTURE_SLACK_SECONDS = 1.0


def tier_for(source: str | None, age: float, parked: bool, startup_window: float = STARTUP_MAX_AGE) -> str | None:
    """Which block an anchor gets: None at startup when older than the window (6 h unless configured), and always
    with a window of 0 ("never at startup", a future mtime's age below 0 included); parked; pointer past 24 h;
    else full."""
    if source == "startup" and startup_window <= 0:
        return None
    if source == "startup" and age > startup_window:
        return None
    if parked:
        return PARKED_TIER
    return POINTER if age > POINTER_AGE else FULL


def age_text(age: float) -> str:
    """An age for people: minutes under an hour, whole hours above; a future mtime says so, never "<1 min"."""
    return "future" if age < -FUTURE_SLACK_SECONDS else duration_text(age)


def updated_text(age: float) -> str:
    """ "updated 5 min ago", or that the mtime is in the future (a skewed clock or a crafted file)."""
    if age < -FUTURE_SLACK_SECONDS:
        return "updated at a future time (its mtime is ahead of this clock)"
    return f"updated {age_text(age)} ago"
