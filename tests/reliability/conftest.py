"""The ``size`` and ``tally`` fixtures and the end-of-run summary (cases, examples, failures per group)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from .sizes import SCALE, STRESS, STRESS_ENV, SUMMARY, Size, Tally


@pytest.fixture(params=[pytest.param(False, id="fast"), pytest.param(True, id="full", marks=pytest.mark.slow)])
def size(request: pytest.FixtureRequest) -> Size:
    """The fast slice (default run) or the full-size variant (``slow``; runs only with SESSION_WORKFLOW_STRESS=1)."""
    full = bool(request.param)
    if full and not STRESS:
        pytest.skip(f"full size runs in `tox -e stress` ({STRESS_ENV}=1)")
    return Size(full)


@pytest.fixture()
def tally(request: pytest.FixtureRequest) -> Iterator[Tally]:
    """Counts of what the test exercised, merged into its group's summary line."""
    counts = Tally()
    yield counts
    group = SUMMARY.group_of(request.node.nodeid)
    if group is not None:
        SUMMARY.merge(group, counts)


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    group = SUMMARY.group_of(report.nodeid)
    if group is None:
        return
    if hasattr(report, "wasxfail"):
        if report.when == "call":
            SUMMARY.outcome(group, "xfailed" if report.skipped else "xpassed", report.duration)
    elif report.failed:
        SUMMARY.outcome(group, "failed", report.duration)
    elif report.skipped and report.when == "setup":
        SUMMARY.outcome(group, "skipped", 0.0)
    elif report.passed and report.when == "call":
        SUMMARY.outcome(group, "passed", report.duration)


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    if not SUMMARY.outcomes:
        return
    mode = ("stress, full size" if SCALE == 1 else f"stress, {SCALE:g} of full size") if STRESS else "fast slice"
    lines = SUMMARY.lines(mode)
    terminalreporter.write_sep("=", lines[0])
    for line in lines[1:]:
        terminalreporter.write_line(line)
