"""Shared fixtures. ``wheels``: a folder holding the published wheels of every vendored set (``tools/vendor.py``),
fetched once per machine with pip, so ``tests/test_vendor.py`` can check that they still unpack to ``vendor/``.

The folder lives in the dev cache outside the plugin root (``$SESSION_WORKFLOW_DEV_CACHE``, default
``${XDG_CACHE_HOME:-~/.cache}/session-workflow-dev``); ``pip download`` fills it the first time, with the
developer's pip configuration, which is the one step that needs a package index (the plugin itself never does).

Hypothesis keeps its example database in the dev cache too (``<dev cache>/hypothesis``), not in ``.hypothesis/``
of the working directory: a marketplace install copies the plugin folder whole, ignored files included. For the
same reason a test fails when a ``__pycache__`` folder appears in the checkout while it runs (the folder is removed):
tox sets PYTHONDONTWRITEBYTECODE, but a test that starts a Python with an environment of its own (or ``-I``) drops it.

Every test also gets its own user state dir (``private_state_dir``), so the machine's anchor trust registry is
never read or written. ``golden_dir`` is a folder whose path has the same length wherever the suite runs.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import settings
from hypothesis.configuration import set_hypothesis_home_dir

from tools import vendor


def dev_cache() -> Path:
    given = os.environ.get("SESSION_WORKFLOW_DEV_CACHE")
    if given:
        return Path(given)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "session-workflow-dev"


set_hypothesis_home_dir(dev_cache() / "hypothesis")
# Every run but one draws the same examples: a property test that fails fails on every run of the same tree (issue
# 40 item 6: a backtick in a path was found on one run and missed on others). ``ci`` is the default profile: a
# fixed seed per test, no example database replaying what another run saved. tools/mutation.py runs the tests
# under ``mutation``, the same, so a score depends on neither luck nor a developer's cache. The one run that keeps
# drawing new examples is ``tox -e explore`` (``--hypothesis-profile=explore``: random, its finds kept in the
# database, so a failure it draws is replayed there until fixed).
settings.register_profile("ci", derandomize=True, database=None)
settings.register_profile("mutation", settings.get_profile("ci"))
settings.register_profile("explore", derandomize=False)
settings.load_profile("ci")

REPO = Path(__file__).resolve().parents[1]


def bytecode_folders() -> set[str]:
    found: set[str] = set()
    for base, dirs, _files in os.walk(REPO):
        dirs[:] = [name for name in dirs if name != ".git"]
        found.update(os.path.join(base, name) for name in dirs if name == "__pycache__")
    return found


_BEFORE: set[str] = set()


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--pause-after-collection",
        type=float,
        default=0.0,
        metavar="SECONDS",
        help="sleep this long between collection and the first test, as a loaded machine's serial run may: a test"
        " that read the clock at import then sees its fresh files from the future (not for CI)",
    )


def pytest_collection_finish(session: pytest.Session) -> None:
    pause = float(session.config.getoption("--pause-after-collection"))
    if pause > 0:
        time.sleep(pause)


def pytest_sessionstart(session: pytest.Session) -> None:
    _BEFORE.update(bytecode_folders())


def leaked_bytecode() -> list[str]:
    """Bytecode folders that appeared in the checkout since the session started, removed as they are found: the
    plugin folder holds only the plugin (a marketplace install copies it whole)."""
    leaked = sorted(bytecode_folders() - _BEFORE)
    for folder in leaked:
        shutil.rmtree(folder, ignore_errors=True)
    return leaked


@pytest.fixture(autouse=True)
def no_bytecode_in_the_checkout() -> Iterator[None]:
    """A test whose subprocess writes bytecode into the checkout fails (a Python run ``-I``, or with an environment
    of its own, drops tox's PYTHONDONTWRITEBYTECODE); on several workers it may be a neighbour's."""
    yield
    leaked = leaked_bytecode()
    if leaked:
        pytest.fail(f"bytecode written into the checkout while this test ran: {', '.join(leaked)}", pytrace=False)


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """Bytecode written outside any test (collection, a session fixture) fails the run too."""
    if hasattr(session.config, "workerinput"):
        return  # an xdist worker: the controller judges once every worker has finished
    leaked = leaked_bytecode()
    if leaked:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
        reporter = session.config.pluginmanager.get_plugin("terminalreporter")
        if reporter is not None:
            reporter.write_line(f"bytecode written into the checkout by this run: {', '.join(leaked)}", red=True)


@pytest.fixture(scope="session")
def wheels() -> Path:
    folder = dev_cache() / "wheels"
    try:
        for entry in vendor.SETS:
            vendor.download(entry, str(folder))
    except subprocess.CalledProcessError as error:
        pytest.fail(f"pip could not download the vendored wheels into {folder}: {error}", pytrace=False)
    return folder


@pytest.fixture(autouse=True)
def private_state_dir(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path_factory.mktemp("xdg-state")
    monkeypatch.setenv("XDG_STATE_HOME", str(folder))
    return folder


# What the block says depends on the length of the paths it names (it cuts by them, and a unix socket's path is
# bounded), never on where the test runs: pytest -n's worker folders, a long --basetemp or macOS's temp dir.
FIXED_PATH_CHARS = 64


@pytest.fixture()
def golden_dir() -> Iterator[Path]:
    """A folder whose path is exactly ``FIXED_PATH_CHARS`` characters, under a short temp dir of its own: for
    goldens and for any rule whose output depends on a path's length."""
    base = tempfile.mkdtemp(prefix="swg-", dir="/tmp" if os.path.isdir("/tmp") else None)
    room = FIXED_PATH_CHARS - len(base) - 1
    assert room >= 1, f"{base} leaves no room for a {FIXED_PATH_CHARS}-character path"
    folder = Path(base) / ("g" * room)
    folder.mkdir()
    try:
        yield folder
    finally:
        shutil.rmtree(base, ignore_errors=True)
