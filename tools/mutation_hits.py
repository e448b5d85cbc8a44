"""pytest plugin for ``tools/mutation.py``: trampoline hits made in a hook subprocess count for the test that ran it.

mutmut learns which tests reach a function from its trampoline's hits in the pytest process, and runs only
those tests on that function's mutants. Many tests run the hooks as ``python -I -S hooks/<shim>.py``; the
mutated code runs there too (``tools/mutation.py`` puts mutmut on the copy's ``src/``), but its hits would die
with the subprocess. So the copy's mutmut appends them to the file ``HITS`` names, and this plugin hands them to
mutmut before its own teardown hook files the test's hits.
"""

from __future__ import annotations

import os

import pytest

HITS = "MUTMUT_SUBPROCESS_HITS"  # set by tools/mutation.py (HITS) to a file in its copy


def taken_hits(path: str) -> list[str]:
    """The names filed in ``path`` since the last call; the file is emptied."""
    try:
        with open(path, "r+", encoding="utf-8") as hits:
            names = hits.read().split()
            hits.seek(0)
            hits.truncate()
    except FileNotFoundError:
        return []
    return names


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_teardown(item: pytest.Item) -> None:
    names = taken_hits(os.environ.get(HITS, ""))
    if names and os.environ.get("MUTANT_UNDER_TEST") == "stats":
        from mutmut.state import state  # type: ignore[import-not-found, unused-ignore]

        state()._stats.update(names)
