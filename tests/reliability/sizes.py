"""Sizes, hypothesis profiles and the tallies behind the reliability summary (shared by conftest and the tests).

Every group runs twice over: a fast slice in the default run (small example counts and sizes, so five Python
versions in CI stay quick) and a full-size variant marked ``slow`` that only ``tox -e stress``
(``SESSION_WORKFLOW_STRESS=1 pytest -m slow tests/reliability``) runs. ``SESSION_WORKFLOW_STRESS_SCALE`` (a
fraction, default 1) shrinks every full size to that share of itself, never below the fast one: ``tox -e
stress-slice`` runs the full variants at a tenth, inside the CI budget.
"""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

STRESS_ENV = "SESSION_WORKFLOW_STRESS"
STRESS = os.environ.get(STRESS_ENV) == "1"
SCALE_ENV = "SESSION_WORKFLOW_STRESS_SCALE"


def _scale(raw: str | None) -> float:
    """The share of each full size to run: a number in (0, 1], else 1 (the full size)."""
    try:
        value = float(raw or "1")
    except ValueError:
        return 1.0
    return value if 0 < value <= 1 else 1.0


SCALE = _scale(os.environ.get(SCALE_ENV))

settings.register_profile(
    "reliability-fast",
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.large_base_example],
)
settings.register_profile(
    "reliability-stress",
    parent=settings.get_profile("reliability-fast"),
    # Thousands of fresh examples per property: replaying a database of old ones adds nothing at this size.
    database=None,
    print_blob=True,
)

GROUPS = {
    "test_fuzz_hooks": "fuzz",
    "test_hostile_fs": "hostile filesystem",
    "test_concurrency": "concurrency",
    "test_crash_safety": "crash safety",
    "test_injection": "injection",
    "test_symlinks": "symlink matrix",
    "test_trust": "anchor trust",
    "test_lost_writes": "lost writes",
}


class Size:
    """The numbers one variant of a test runs with: ``pick(fast, full)`` is the one for this variant."""

    __slots__ = ("full",)

    def __init__(self, full: bool) -> None:
        self.full = full

    def pick(self, fast: int, full: int) -> int:
        return max(fast, round(full * SCALE)) if self.full else fast

    def settings(self, fast_examples: int, full_examples: int) -> settings:
        """Hypothesis settings with this variant's example count."""
        base = settings.get_profile("reliability-stress" if self.full else "reliability-fast")
        return settings(base, max_examples=self.pick(fast_examples, full_examples))

    def __repr__(self) -> str:
        return ("full" if SCALE == 1 else f"full×{SCALE:g}") if self.full else "fast"


class Tally:
    """What one test exercised (hypothesis examples, kills, writes, reads), added to its group's summary."""

    __slots__ = ("counts",)

    def __init__(self) -> None:
        self.counts: dict[str, int] = {}

    def add(self, what: str, count: int = 1) -> None:
        self.counts[what] = self.counts.get(what, 0) + count


class Summary:
    """Per group: cases by outcome, the tallies, and the time spent."""

    def __init__(self) -> None:
        self.outcomes: dict[str, dict[str, int]] = {}
        self.counts: dict[str, dict[str, int]] = {}
        self.seconds: dict[str, float] = {}

    @staticmethod
    def group_of(nodeid: str) -> str | None:
        path = nodeid.split("::", 1)[0].replace(os.sep, "/")
        if "reliability/" not in path:
            return None
        module = path.rsplit("/", 1)[-1]
        module = module[: -len(".py")] if module.endswith(".py") else module
        return GROUPS.get(module, module)

    def outcome(self, group: str, outcome: str, seconds: float) -> None:
        slot = self.outcomes.setdefault(group, {})
        slot[outcome] = slot.get(outcome, 0) + 1
        self.seconds[group] = self.seconds.get(group, 0.0) + seconds

    def merge(self, group: str, tally: Tally) -> None:
        slot = self.counts.setdefault(group, {})
        for what, count in tally.counts.items():
            slot[what] = slot.get(what, 0) + count

    def lines(self, mode: str) -> list[str]:
        """One line per group and a total: cases, failures, xfailed/skipped, the tallies, seconds."""
        lines = [f"session-workflow reliability summary ({mode})"]
        total_outcomes: dict[str, int] = {}
        total_counts: dict[str, int] = {}
        for group in sorted(self.outcomes):
            outcomes = self.outcomes[group]
            counts = self.counts.get(group, {})
            lines.append(_line(group, outcomes, counts, self.seconds.get(group, 0.0)))
            _add(total_outcomes, outcomes)
            _add(total_counts, counts)
        lines.append(_line("total", total_outcomes, total_counts, sum(self.seconds.values())))
        return lines


def _add(into: dict[str, int], counts: dict[str, int]) -> None:
    for key, value in counts.items():
        into[key] = into.get(key, 0) + value


def _line(name: str, outcomes: dict[str, int], counts: dict[str, int], seconds: float) -> str:
    cases = sum(count for outcome, count in outcomes.items() if outcome != "skipped")
    failures = outcomes.get("failed", 0) + outcomes.get("xpassed", 0)
    parts = [f"{cases} cases", f"{failures} failures"]
    parts += [f"{outcomes[key]} {key}" for key in ("xfailed", "skipped") if outcomes.get(key)]
    parts += [f"{count:,} {what}" for what, count in sorted(counts.items())]
    parts.append(f"{seconds:.1f}s")
    return f"  {name:<19} " + ", ".join(parts)


SUMMARY = Summary()
