"""Statistics and the printed table of a benchmark run: medians and spreads, ratios to the floors, growth slopes.

Pure functions over plain data (the runner's ``Measured`` records), so the smoke test can check them exactly.
"""

from __future__ import annotations

import statistics

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence

FLOOR_P = "floor-p"
FLOOR_J = "floor-j"
# Growing the transcript from the second-largest size to the largest (10×) may add at most this share of one J,
# or this fraction of the smaller case's cost (a costly case is noisier): a reader that is not bounded adds 10×.
FLAT_SHARE_OF_J = 0.10
FLAT_GROWTH = 0.10
RSS_TARGET = 2.0
# A count dimension (anchors, task files, sibling transcripts, delivery records) from 1,000 to 100,000 may add at
# most this much (#19): a cost linear in the count adds a hundredfold.
FLAT_COUNT_J = 0.20
COUNT_GROUPS = ("anchors", "tasks", "siblings", "records")


def quartiles(values: Sequence[float]) -> tuple[float, float, float]:
    """(25th percentile, median, 75th percentile); one value is its own spread."""
    if not values:
        raise ValueError("no values")
    if len(values) == 1:
        return values[0], values[0], values[0]
    low, mid, high = statistics.quantiles(values, n=4, method="inclusive")
    return low, mid, high


def slope(points: Sequence[tuple[float, float]]) -> float:
    """Least-squares slope of y over x (0 for fewer than two distinct x)."""
    if len({x for x, _y in points}) < 2:
        return 0.0
    mean_x = sum(x for x, _y in points) / len(points)
    mean_y = sum(y for _x, y in points) / len(points)
    spread = sum((x - mean_x) ** 2 for x, _y in points)
    return sum((x - mean_x) * (y - mean_y) for x, y in points) / spread


def human_size(size: float) -> str:
    """2 MB, 200 MB, 8 KB: the workload sizes as the issue names them (binary units)."""
    for unit, scale in (("MB", 1 << 20), ("KB", 1 << 10)):
        if size >= scale:
            value = size / scale
            return f"{value:.0f} {unit}" if value == int(value) else f"{value:.1f} {unit}"
    return f"{size:.0f} B"


class Measured:
    """One scenario's samples and what it is: wall ms, CPU ms and peak RSS KiB per run, and each run's ratio to
    the P and J runs of the same round (the floors drift with the machine's load; a round's runs share it)."""

    __slots__ = (
        "check",
        "cpu_ms",
        "exit_codes",
        "growth",
        "hook",
        "key",
        "label",
        "output",
        "paired_j",
        "paired_p",
        "rss_kib",
        "rss_target",
        "target",
        "wall_ms",
    )

    def __init__(
        self,
        key: str,
        label: str,
        *,
        target: float | None = None,
        growth: tuple[str, float] | None = None,
        check: str = "ok",
        output: str = "",
        hook: bool = False,
        rss_target: float = RSS_TARGET,
    ) -> None:
        self.key = key
        self.rss_target = rss_target
        self.hook = hook
        self.label = label
        self.target = target
        self.growth = growth
        self.check = check
        self.output = output
        self.wall_ms: list[float] = []
        self.cpu_ms: list[float] = []
        self.rss_kib: list[int] = []
        self.paired_p: list[float] = []
        self.paired_j: list[float] = []
        self.exit_codes: list[int] = []

    @property
    def measured(self) -> bool:
        return bool(self.wall_ms)

    def median(self) -> float:
        return quartiles(self.wall_ms)[1]

    def in_j(self) -> float:
        """The median of the per-round ratios to J: each run against the J run of the same round."""
        return quartiles(self.paired_j)[1]

    def peak_rss(self) -> int:
        return max(self.rss_kib)


class Verdict:
    """A target's outcome: the value, the bound, and pass/MISS/n/a."""

    __slots__ = ("bound", "name", "result", "value")

    def __init__(self, name: str, value: float | None, bound: float, result: str) -> None:
        self.name = name
        self.value = value
        self.bound = bound
        self.result = result

    def as_dict(self) -> dict[str, object]:
        return {"name": self.name, "value": self.value, "bound": self.bound, "result": self.result}


def ratio(numerator: float, denominator: float) -> float:
    return numerator / denominator if denominator else float("nan")


def verdicts(results: Sequence[Measured], rss_resolution_kib: int) -> list[Verdict]:
    """Every target the issue sets: time ratios to J, peak RSS ≤ 2× J's, and flatness in transcript size."""
    by_key = {result.key: result for result in results}
    floor = by_key[FLOOR_J]
    found: list[Verdict] = []
    for result in results:
        if result.target is None:
            continue
        name = f"{result.label}: median ≤ {result.target:.2f} J"
        if not result.measured or result.check != "ok":
            found.append(Verdict(name, None, result.target, "n/a"))
            continue
        value = result.in_j()
        found.append(Verdict(name, value, result.target, "pass" if value <= result.target else "MISS"))
    for result in results:
        if not result.hook or not result.measured:
            continue
        value = ratio(result.peak_rss(), max(floor.peak_rss(), rss_resolution_kib))
        name = f"{result.label}: peak RSS ≤ {result.rss_target:g}× J's"
        found.append(Verdict(name, value, result.rss_target, "pass" if value <= result.rss_target else "MISS"))
    for group in ("compact", "scale"):
        series = growth_series(results, group)
        if len(series) < 2:
            continue
        # The two largest sizes: a bounded reader may still grow up to its bound, never past it.
        smaller, larger = series[-2], series[-1]
        value = larger.in_j() - smaller.in_j()
        flat = value <= FLAT_SHARE_OF_J or larger.in_j() <= smaller.in_j() * (1 + FLAT_GROWTH)
        sizes = f"{human_size(_size(smaller))} → {human_size(_size(larger))}"
        name = f"{group} flat in transcript size: {sizes} adds ≤ {FLAT_SHARE_OF_J:.2f} J or ≤ {FLAT_GROWTH:.0%}"
        found.append(Verdict(name, value, FLAT_SHARE_OF_J, "pass" if flat else "MISS"))
    for low, high in hundredfold_pairs(results):  # issue 42: 100× scale adds ≤ 0.4 J to each hook over 1×
        value = high.in_j() - low.in_j()
        name = f"{high.label} rises ≤ {HUNDREDFOLD_J:.2f} J over {low.label.rsplit(', ', 1)[-1]}"
        found.append(Verdict(name, value, HUNDREDFOLD_J, "pass" if value <= HUNDREDFOLD_J else "MISS"))
    for group in COUNT_GROUPS:
        series = growth_series(results, group)
        if len(series) < 2:
            continue
        larger = series[-1]
        # From a hundredth of the largest count (1,000 of 100,000), or the smallest measured.
        smaller = max((r for r in series[:-1] if _size(r) * 100 <= _size(larger)), key=_size, default=series[0])
        value = larger.in_j() - smaller.in_j()
        name = f"{group} flat: {_size(smaller):,.0f} → {_size(larger):,.0f} adds ≤ {FLAT_COUNT_J:.2f} J"
        found.append(Verdict(name, value, FLAT_COUNT_J, "pass" if value <= FLAT_COUNT_J else "MISS"))
    return found


HUNDREDFOLD_J = 0.40


def hundredfold_pairs(results: Sequence[Measured]) -> list[tuple[Measured, Measured]]:
    """(smallest factor, largest factor) of each hook measured at several scales (keys ``x<factor>-<hook>``)."""
    by_hook: dict[str, list[tuple[int, Measured]]] = {}
    for result in results:
        factor, _sep, hook = result.key[1:].partition("-")
        if result.key[:1] == "x" and factor.isdigit() and hook and result.measured and result.check == "ok":
            by_hook.setdefault(hook, []).append((int(factor), result))
    pairs = []
    for found in by_hook.values():
        if len(found) > 1:
            found.sort(key=lambda pair: pair[0])
            pairs.append((found[0][1], found[-1][1]))
    return pairs


def growth_series(results: Sequence[Measured], group: str) -> list[Measured]:
    """A growth group's measured, checked scenarios, smallest first."""
    series = [r for r in results if r.growth and r.growth[0] == group and r.measured and r.check == "ok"]
    return sorted(series, key=_size)


def _size(result: Measured) -> float:
    return result.growth[1] if result.growth else 0.0


GROWTH_UNITS = {
    "compact": (100 << 20, "100 MB"),
    "scale": (100 << 20, "100 MB"),
    "anchors": (1000, "1,000 anchors"),
    "tasks": (1000, "1,000 task files"),
    "siblings": (1000, "1,000 siblings"),
    "records": (1000, "1,000 records"),
}
GROWTH_NAMES = {
    "anchors": "anchors (compact) by anchor files",
    "tasks": "tasks (compact) by task files in the list",
    "siblings": "siblings (startup fallback) by sibling transcripts",
    "records": "records (startup, work state) by delivery records",
}


def growth_lines(results: Sequence[Measured]) -> list[str]:
    """Each growth group's medians, its least-squares slope, and what the whole range adds, in ms and in J."""
    floor = next(result for result in results if result.key == FLOOR_J).median()
    lines: list[str] = []
    for group, (unit, unit_label) in GROWTH_UNITS.items():
        series = growth_series(results, group)
        if not series:
            continue
        name = GROWTH_NAMES.get(group, f"{group} by transcript size")
        steps = ", ".join(f"{_x_label(group, _size(r))}: {r.median():.1f} ms ({r.in_j():.2f} J)" for r in series)
        per_unit = slope([(_size(r), r.median()) for r in series]) * unit
        added = series[-1].median() - series[0].median()
        lines.append(f"growth, {name}: {steps}")
        lines.append(
            f"  slope {per_unit:+.2f} ms per {unit_label} ({ratio(per_unit, floor):+.3f} J);"
            f" {_x_label(group, _size(series[0]))} → {_x_label(group, _size(series[-1]))} adds {added:+.1f} ms"
            f" ({series[-1].in_j() - series[0].in_j():+.2f} J)"
        )
    return lines


def _x_label(group: str, size: float) -> str:
    return f"{size:,.0f}" if group in COUNT_GROUPS else human_size(size)


def _cell_ms(values: Sequence[float]) -> str:
    low, mid, high = quartiles(values)
    return f"{mid:7.1f} ({low:.1f}–{high:.1f})"


def table_lines(results: Sequence[Measured], rss_resolution_kib: int) -> list[str]:
    """The main table: one row per scenario, floors first."""
    by_key = {result.key: result for result in results}
    j = by_key[FLOOR_J]
    header = (
        f"{'scenario':<46} {'wall ms median (IQR)':<24} {'×P':>5} {'×J (IQR)':<18} {'cpu×J':>6}"
        f" {'RSS MB':>7} {'×J':>5}  {'target':<8} {'result':<6} output"
    )
    lines = [header, "-" * len(header)]
    for result in results:
        if not result.measured:
            lines.append(
                f"{result.label:<46} {'n/a':<24} {'':>5} {'':>18} {'':>6} {'':>7} {'':>5}  "
                f"{_target(result):<8} {'n/a':<6} {result.check}"
            )
            continue
        paired = quartiles(result.paired_j)
        rss = result.peak_rss()
        rss_text = f"≤{rss_resolution_kib / 1024:.1f}" if rss <= rss_resolution_kib else f"{rss / 1024:.1f}"
        outcome = ""
        if result.target is not None:
            outcome = "pass" if result.in_j() <= result.target else "MISS"
        if result.check != "ok":
            outcome = "CHECK"
        lines.append(
            f"{result.label:<46} {_cell_ms(result.wall_ms):<24}"
            f" {quartiles(result.paired_p)[1]:5.2f}"
            f" {f'{paired[1]:5.2f} ({paired[0]:.2f}–{paired[2]:.2f})':<18}"
            f" {ratio(quartiles(result.cpu_ms)[1], quartiles(j.cpu_ms)[1]):6.2f}"
            f" {rss_text:>7} {ratio(rss, j.peak_rss()):5.2f}  {_target(result):<8} {outcome:<6}"
            f" {result.output if result.check == 'ok' else result.check}"
        )
    return [line.rstrip() for line in lines]


def _target(result: Measured) -> str:
    return f"≤{result.target:.2f} J" if result.target is not None else ""
