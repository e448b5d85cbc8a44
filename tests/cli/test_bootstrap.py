"""The dependency bootstrap of ``bin/session-workflow``: where it installs, when, and what it says.

No test here touches the network: pip installs the real pinned wheels from the ``wheels`` folder
(``SESSION_WORKFLOW_WHEELS``), with no pip configuration (``PIP_CONFIG_FILE`` is the null device); "offline" is an
empty folder or a proxy that refuses, and a subprocess run with ``python -S`` is how filelock and platformdirs
become "missing".
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from session_workflow.cli import bootstrap
from session_workflow.cli.bootstrap import (
    DeferredDependencies,
    DependencyError,
    data_dir,
    find_pip,
    manual_command,
    pin_key,
    pip_candidates,
    plugin_id,
    python_version,
    requirements_text,
)
from session_workflow.core.deps import PIN_SETS, PINS, is_complete, pin_set

REPO = Path(__file__).resolve().parents[2]
SRC = str(REPO / "src")
BIN = str(REPO / "bin" / "session-workflow")
OWN_PIP = [sys.executable, "-m", "pip"]
# A proxy on the discard port: every fetch is refused at once, as on a machine with no network.
REFUSED = "http://127.0.0.1:9"
NO_NETWORK = {"HTTPS_PROXY": REFUSED, "https_proxy": REFUSED, "HTTP_PROXY": REFUSED, "http_proxy": REFUSED}
NO_NETWORK.update(NO_PROXY="", no_proxy="")

# The promised pins, written out: Python 3.11+ gets the newest releases, 3.9 and 3.10 the newest supporting 3.9.
NEW_PINS = (
    ("filelock", "4.3.1", "sha256:79e43df8e9fe509cd83a3899a7c186c8077cbbe4d200a1ed3705c2f3bb6bc487"),
    ("platformdirs", "4.14.9", "sha256:d0d3a23e7ff282cfa94b77f5a22b81030dcb68ba0430f90c74f4bd8d090782ea"),
)
OLD_PINS = (
    ("filelock", "3.19.1", "sha256:d38e30481def20772f5baf097c122c3babc4fcdb7e14e57049eb9d88c6dc017d"),
    ("platformdirs", "4.4.0", "sha256:abd01743f24e5287cd7a5db3752faf1a2d65353f38ec26d98e25a6db65958c85"),
)
NEW_KEY, OLD_KEY = "2b457598033eaae6", "84a0485cf8cadcdc"  # the folder names existing installs have
# What this interpreter installs: the messages' names, pip's requirement specifiers, the imported versions.
if sys.version_info >= (3, 11):
    WHAT, VERSIONS = "filelock 4.3.1 and platformdirs 4.14.9", "4.3.1 4.14.9"
    SPECS = "filelock==4.3.1 platformdirs==4.14.9"
else:
    WHAT, VERSIONS = "filelock 3.19.1 and platformdirs 4.4.0", "3.19.1 4.4.0"
    SPECS = "filelock==3.19.1 platformdirs==4.4.0"


def no_pip_config(monkeypatch: pytest.MonkeyPatch) -> None:
    """pip as on a machine with no pip configuration: no PIP_* variables, no config files."""
    for name in [name for name in os.environ if name.startswith("PIP_")]:
        monkeypatch.delenv(name)
    monkeypatch.setenv("PIP_CONFIG_FILE", os.devnull)


class Finder:
    """A deferred installer reading wheels from ``wheels``, writing its messages to ``said``."""

    def __init__(
        self, tmp_path: Path, wheels: Path, monkeypatch: pytest.MonkeyPatch, pips: list[list[str]] | None = None
    ) -> None:
        monkeypatch.setenv("CLAUDE_PLUGIN_DATA", str(tmp_path / "data"))
        no_pip_config(monkeypatch)
        self.said = io.StringIO()
        self.deps = DeferredDependencies(str(REPO), str(wheels), self.said, pips or [OWN_PIP])
        self.target = tmp_path / "data" / "python-deps" / pin_key()

    def provide(self) -> str:
        folder = self.deps.provide()
        sys.path.remove(folder)  # keep the test process's path clean
        return folder


# --- pins ------------------------------------------------------------------------------------------------------------


def test_the_pins_are_hash_pinned_per_python_version() -> None:
    assert PIN_SETS == (((3, 11), NEW_PINS, NEW_KEY), ((3, 9), OLD_PINS, OLD_KEY))
    assert bootstrap.describe(NEW_PINS) == "filelock 4.3.1 and platformdirs 4.14.9"
    assert bootstrap.describe(OLD_PINS) == "filelock 3.19.1 and platformdirs 4.4.0"
    assert bootstrap.describe() == WHAT
    assert requirements_text() == "".join(f"{n}=={v} --hash={d}\n" for n, v, d in PINS)


@pytest.mark.parametrize(
    ("version", "pins", "key"),
    [
        ((3, 8), OLD_PINS, OLD_KEY),
        ((3, 9), OLD_PINS, OLD_KEY),
        ((3, 10), OLD_PINS, OLD_KEY),
        ((3, 11), NEW_PINS, NEW_KEY),
        ((3, 14), NEW_PINS, NEW_KEY),
    ],
)
def test_python_3_11_is_where_the_newest_pins_start(version: tuple[int, int], pins: object, key: str) -> None:
    assert pin_set(version) == (pins, key)


def test_the_running_interpreter_gets_its_set() -> None:
    assert (PINS, pin_key()) == pin_set(sys.version_info[:2])
    assert " ".join(f"{name}=={version}" for name, version, _digest in PINS) == SPECS


NETWORK_MODULES = re.compile(r"^\s*(?:import|from)\s+(?:socket|ssl|urllib|http|ftplib|smtplib|requests)\b", re.M)


def test_the_manifest_declares_no_host_and_the_plugins_code_opens_no_connection() -> None:
    """``network.hosts`` is empty: the one-time install is pip's, reaching what the user's pip configuration says."""
    manifest = json.loads((REPO / ".claude-plugin" / "plugin.json").read_text())
    assert manifest["network"] == {"hosts": []}
    sources = [*(REPO / "src").rglob("*.py"), *(REPO / "hooks").rglob("*.py"), REPO / "bin" / "session-workflow"]
    assert len(sources) > 20
    assert [str(path) for path in sources if NETWORK_MODULES.search(path.read_text())] == []


@pytest.mark.parametrize(("pins", "key"), [(NEW_PINS, NEW_KEY), (OLD_PINS, OLD_KEY)])
def test_the_pin_key_is_the_hash_and_changes_with_any_pin(pins: tuple[tuple[str, str, str], ...], key: str) -> None:
    (known,) = [known for _oldest, known, _key in PIN_SETS if known == pins]
    assert pin_key(known) == key, "a PIN_SETS key is stale"
    assert key == hashlib.sha256(requirements_text(pins).encode("utf-8")).hexdigest()[:16]
    assert pin_key(tuple(list(known))) == key  # an equal set that is not the known one is hashed
    assert pin_key((pins[0], ("platformdirs", "4.4.1", pins[1][2]))) != key
    assert pin_key((pins[0], (*pins[1][:2], "sha256:0"))) != key


def test_manual_command_is_exact_and_quoted() -> None:
    assert manual_command(["/usr/bin/python3", "-m", "pip"], "/data dir/x") == (
        f"/usr/bin/python3 -m pip install --no-deps --only-binary :all: --target '/data dir/x' {SPECS}"
    )
    assert manual_command(["/usr/bin/pip3"], "/t", "/my wheels", "3.9") == (
        "/usr/bin/pip3 install --no-deps --only-binary :all: --python-version 3.9 --ignore-requires-python"
        f" --no-index --find-links '/my wheels' --target /t {SPECS}"
    )


# --- which pip -------------------------------------------------------------------------------------------------------


def test_pip_candidates_outside_a_venv_are_this_interpreter_then_path() -> None:
    found = pip_candidates("/usr/bin/python3", "/usr/bin/python3", "/usr", "/usr", ["/usr/bin/pip3", None], "3.9")
    assert found == [["/usr/bin/python3", "-m", "pip"], ["/usr/bin/pip3"]]


def test_pip_candidates_in_a_venv_add_the_base_interpreter() -> None:
    on_path = ["/v/bin/pip3", "/v/bin/pip3"]
    found = pip_candidates("/v/bin/python", "/v/bin/python", "/v", "/opt/py", on_path, "3.9")  # 3.9: no base exe
    assert found == [["/v/bin/python", "-m", "pip"], ["/opt/py/bin/python3.9", "-m", "pip"], ["/v/bin/pip3"]]
    found = pip_candidates("/v/bin/python", "/opt/py/bin/python3.11", "/v", "/opt/py", [], "3.11")
    assert found == [["/v/bin/python", "-m", "pip"], ["/opt/py/bin/python3.11", "-m", "pip"]]
    windows = pip_candidates("C:/v/python.exe", "", "C:/v", "C:/py", [], "3.12", "win32")
    assert windows == [["C:/v/python.exe", "-m", "pip"], [os.path.join("C:/py", "python.exe"), "-m", "pip"]]


def script(path: Path, body: str) -> str:
    path.write_text(f"#!/bin/sh\n{body}\n")
    path.chmod(0o755)
    return str(path)


def test_find_pip_takes_the_first_that_runs(tmp_path: Path) -> None:
    broken = script(tmp_path / "broken-pip", "exit 1")
    working = script(tmp_path / "pip3", "exit 0")
    candidates = [[str(tmp_path / "missing"), "-m", "pip"], [broken], [working], OWN_PIP]
    assert find_pip(candidates, str(tmp_path)) == [working]
    assert find_pip([[broken], [str(tmp_path / "missing")]], str(tmp_path)) is None


# --- where ---------------------------------------------------------------------------------------------------------


def test_plugin_data_wins(tmp_path: Path) -> None:
    env = {"CLAUDE_PLUGIN_DATA": str(tmp_path / "d"), "CLAUDECODE": "1", "XDG_CACHE_HOME": "/x"}
    assert data_dir("/plugin", env, "/home/u") == (str(tmp_path / "d"), None)


def test_inside_claude_code_a_plugin_dir_plugin_is_inline(tmp_path: Path) -> None:
    env = {"CLAUDECODE": "1", "CLAUDE_CONFIG_DIR": str(tmp_path / "cfg")}
    inline = str(tmp_path / "cfg" / "plugins" / "data" / "session-workflow-inline")
    assert data_dir("/plugin", env, "/home/u") == (inline, None)
    assert data_dir("/plugin", {"CLAUDECODE": "1"}, "/home/u") == (
        "/home/u/.claude/plugins/data/session-workflow-inline",
        None,
    )


def test_inside_claude_code_an_installed_plugin_uses_its_marketplace_id(tmp_path: Path) -> None:
    config = tmp_path / "cfg"
    plugins = config / "plugins"
    plugins.mkdir(parents=True)
    cached = tmp_path / "cache" / "my.market" / "session-workflow" / "0.1.0"
    cached.mkdir(parents=True)
    local = tmp_path / "checkout"
    local.mkdir()
    installed = {
        "version": 2,
        "plugins": {
            "other@my.market": [{"installPath": str(cached)}],
            "session-workflow@my.market": [{"scope": "user", "installPath": str(cached)}],
            "session-workflow@local-dev": [{"installPath": str(tmp_path / "elsewhere")}],
        },
    }
    (plugins / "installed_plugins.json").write_text(json.dumps(installed))
    markets = {"local-dev": {"source": {"source": "directory"}, "installLocation": str(local)}}
    (plugins / "known_marketplaces.json").write_text(json.dumps(markets))
    assert plugin_id(str(cached), str(config)) == "session-workflow@my.market"
    assert plugin_id(str(local), str(config)) == "session-workflow@local-dev"
    assert plugin_id(str(tmp_path / "unknown"), str(config)) == "session-workflow-inline"
    env = {"CLAUDECODE": "1", "CLAUDE_CONFIG_DIR": str(config)}
    assert data_dir(str(cached), env, "/h") == (str(plugins / "data" / "session-workflow-my-market"), None)


def test_broken_plugin_registries_fall_back_to_inline(tmp_path: Path) -> None:
    plugins = tmp_path / "plugins"
    plugins.mkdir()
    (plugins / "installed_plugins.json").write_text("{not json")
    (plugins / "known_marketplaces.json").write_text('["a list"]')
    assert plugin_id("/p", str(tmp_path)) == "session-workflow-inline"
    (plugins / "installed_plugins.json").write_text('{"plugins": {"session-workflow@m": "not a list"}}')
    assert plugin_id("/p", str(tmp_path)) == "session-workflow-inline"


@pytest.mark.parametrize(
    ("env", "platform", "expected"),
    [
        ({}, "linux", "/home/u/.cache/session-workflow"),
        ({"XDG_CACHE_HOME": "/xdg"}, "linux", "/xdg/session-workflow"),
        ({"XDG_CACHE_HOME": "relative"}, "linux", "/home/u/.cache/session-workflow"),
        ({"XDG_CACHE_HOME": "/xdg"}, "darwin", "/home/u/Library/Caches/session-workflow"),
        ({"CLAUDECODE": "0"}, "linux", "/home/u/.cache/session-workflow"),
    ],
)
def test_outside_claude_code_the_user_cache(env: dict[str, str], platform: str, expected: str) -> None:
    assert data_dir("/plugin", env, "/home/u", platform) == (expected, None)


# --- install ---------------------------------------------------------------------------------------------------


def test_first_use_installs_once_and_says_so(tmp_path: Path, wheels: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    finder = Finder(tmp_path, wheels, monkeypatch)
    target = finder.target
    assert finder.deps.provide() == str(target) and sys.path[-1] == str(target)
    assert finder.provide() == str(target)
    assert is_complete(str(target))
    assert (target / "filelock" / "__init__.py").is_file() and (target / "platformdirs" / "__init__.py").is_file()
    assert finder.said.getvalue() == (
        f"session-workflow: installed {WHAT} from {wheels} into {target} (once, for the writers)\n"
    )
    assert os.listdir(target.parent) == [pin_key()]  # the staging folder is gone


def test_without_its_own_pip_another_interpreters_pip_installs_for_this_version(
    tmp_path: Path, wheels: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A venv made ``--without-pip``: the first pip that runs (here a ``pip3`` on PATH) is told this version."""
    log = tmp_path / "pip-args"
    pip3 = script(tmp_path / "pip3", f'echo "$@" >> {log}\nexec {sys.executable} -m pip "$@"')
    finder = Finder(tmp_path, wheels, monkeypatch, [[str(tmp_path / "no-python"), "-m", "pip"], [pip3]])
    assert finder.provide() == str(finder.target) and is_complete(str(finder.target))
    probe, run = log.read_text().splitlines()
    assert probe == "--version"
    assert f" --only-binary :all: --python-version {python_version()} --ignore-requires-python --no-index" in run
    assert f" --no-index --find-links {wheels} " in run
    assert " --require-hashes " in run and " --no-deps " in run
    assert finder.said.getvalue().startswith(f"session-workflow: installed {WHAT} from")


def older_python_with_pip() -> str | None:
    """A Python 3.10 or 3.9 with pip on this machine, when the running one is 3.11+ (None otherwise)."""
    if sys.version_info < (3, 11):
        return None
    pyenv = Path(os.environ.get("PYENV_ROOT") or Path.home() / ".pyenv") / "versions"
    found = [shutil.which("python3.10"), shutil.which("python3.9")]
    found += [str(path) for minor in ("3.10", "3.9") for path in sorted(pyenv.glob(f"{minor}.*/bin/python3"))]
    runs = (
        c for c in found if c and subprocess.run([c, "-m", "pip", "--version"], capture_output=True).returncode == 0
    )
    return next(runs, None)


def test_an_older_pythons_pip_installs_the_newer_set(
    tmp_path: Path, wheels: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A python3 of 3.11+ without pip borrowing a 3.9 or 3.10 one: it installs this interpreter's set, although
    that set's Requires-Python rules out the pip's own interpreter."""
    older = older_python_with_pip()
    if older is None:
        pytest.skip("no Python 3.9 or 3.10 with pip here, or this is one")
    finder = Finder(tmp_path, wheels, monkeypatch, [[str(tmp_path / "no-python"), "-m", "pip"], [older, "-m", "pip"]])
    assert finder.provide() == str(finder.target) and is_complete(str(finder.target))
    assert finder.said.getvalue().startswith("session-workflow: installed filelock 4.3.1 and platformdirs 4.14.9 from")


def test_no_pip_anywhere_fails_in_one_line_naming_the_command(
    tmp_path: Path, wheels: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    python = str(tmp_path / "bin" / "python3")
    finder = Finder(tmp_path, wheels, monkeypatch, [[python, "-m", "pip"], [str(tmp_path / "pip3")]])
    with pytest.raises(DependencyError) as raised:
        finder.provide()
    assert str(raised.value) == (
        f"cannot install {WHAT}: no pip for {python}, its base interpreter or on"
        f" PATH; install one (`{python} -m ensurepip`, or the system's python3-pip package), then retry"
    )
    assert not finder.target.parent.exists()


def test_an_installed_pin_is_used_without_fetching(
    tmp_path: Path, wheels: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    Finder(tmp_path, wheels, monkeypatch).provide()
    empty = tmp_path / "no-wheels"
    empty.mkdir()
    again = Finder(tmp_path, empty, monkeypatch)
    assert again.provide() == str(again.target)
    assert again.said.getvalue() == ""


def test_a_changed_pin_reinstalls_and_removes_the_old_one(
    tmp_path: Path, wheels: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    finder = Finder(tmp_path, wheels, monkeypatch)
    old = finder.target.parent / "0123456789abcdef"
    (old / "filelock-3.12.0.dist-info").mkdir(parents=True)
    (old / "filelock-3.12.0.dist-info" / "RECORD").write_text("")
    finder.provide()
    assert finder.said.getvalue() == (
        f"session-workflow: dependency pins changed; reinstalled {WHAT} from {wheels} into {finder.target}\n"
    )
    assert os.listdir(finder.target.parent) == [pin_key()]


def test_the_other_pythons_set_is_kept_and_is_no_pin_change(
    tmp_path: Path, wheels: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A data folder shared by a 3.10 and a 3.12 interpreter: each installs its own set once, and keeps the other."""
    finder = Finder(tmp_path, wheels, monkeypatch)
    other = finder.target.parent / (OLD_KEY if pin_key() == NEW_KEY else NEW_KEY)
    (other / "filelock-9.9.9.dist-info").mkdir(parents=True)
    finder.provide()
    assert finder.said.getvalue() == (
        f"session-workflow: installed {WHAT} from {wheels} into {finder.target} (once, for the writers)\n"
    )
    assert sorted(os.listdir(finder.target.parent)) == sorted([NEW_KEY, OLD_KEY])


def test_offline_fails_once_with_the_exact_command(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    empty = tmp_path / "no-wheels"
    empty.mkdir()
    finder = Finder(tmp_path, empty, monkeypatch)
    target = finder.target
    with pytest.raises(DependencyError) as raised:
        finder.provide()
    message = str(raised.value)
    assert message == (
        f"cannot install {WHAT} (ERROR: Could not find a version that satisfies the"
        f" requirement {SPECS.split()[0]} (from versions: none)); run this once, then retry:"
        f" {manual_command(OWN_PIP, str(target), str(empty))}"
    )
    assert raised.value.code == 1 and "\n" not in message
    (empty / f"filelock-{PINS[0][1]}-py3-none-any.whl").write_bytes(b"arrived too late")
    with pytest.raises(DependencyError) as again:
        finder.provide()  # the same error, no second attempt in one process
    assert str(again.value) == message
    assert os.listdir(target.parent) == []  # no half-installed folder, no staging debris


def test_a_wheel_that_is_not_the_pinned_one_is_refused(
    tmp_path: Path, wheels: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    tampered = tmp_path / "tampered"
    shutil.copytree(wheels, tampered)
    name = f"platformdirs-{PINS[1][1]}-py3-none-any.whl"
    (tampered / name).write_bytes((wheels / name).read_bytes() + b"\0")
    finder = Finder(tmp_path, tampered, monkeypatch)
    with pytest.raises(DependencyError) as raised:
        finder.provide()
    assert "(ERROR: THESE PACKAGES DO NOT MATCH THE HASHES FROM THE REQUIREMENTS FILE." in str(raised.value)
    assert os.listdir(finder.target.parent) == []


def test_the_manual_command_completes_the_install(
    tmp_path: Path, wheels: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Running the printed command by hand leaves a folder the bootstrap accepts without installing again.

    The command runs for real (pip, from the wheels folder): one missing a pin, a version or the target leaves a
    folder the bootstrap refuses.
    """
    finder = Finder(tmp_path, tmp_path / "no-wheels", monkeypatch)
    command = manual_command(OWN_PIP, str(finder.target), str(wheels))
    done = subprocess.run(shlex.split(command), capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr
    assert finder.provide() == str(finder.target) and finder.said.getvalue() == ""


def test_tidy_keeps_every_sets_folder_and_young_staging(tmp_path: Path) -> None:
    """Stale pins' folders and staging older than an hour go; both sets' folders and younger staging stay."""
    parent = tmp_path / "python-deps"
    for name in (".install-old", ".install-young", "0123456789abcdef", NEW_KEY, OLD_KEY):
        (parent / name).mkdir(parents=True)
    now = time.time()
    os.utime(parent / ".install-old", (now - 3601, now - 3601))
    os.utime(parent / ".install-young", (now - 3599, now - 3599))
    bootstrap._tidy(str(parent), now)
    assert sorted(os.listdir(parent)) == sorted([".install-young", NEW_KEY, OLD_KEY])


# --- through the import system, in a fresh interpreter without site-packages ---------------------------------------


def run_python(code: str, env: dict[str, str], *flags: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, *flags, "-c", code], capture_output=True, text=True, env=env, timeout=60, check=False
    )


def child_env(tmp_path: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CLAUDE", "PYTHON", "SESSION_WORKFLOW", "PIP_"))}
    return {**env, "CLAUDE_PLUGIN_DATA": str(tmp_path / "data"), "PIP_CONFIG_FILE": os.devnull, **extra}


IMPORT_BOTH = """
import sys
sys.path.insert(0, {src!r})
from session_workflow.cli.bootstrap import install_import_hook
install_import_hook({root!r})
import filelock, platformdirs
print(filelock.__version__, platformdirs.__version__, filelock.__file__.startswith({data!r}))
"""


def test_a_missing_import_installs_on_first_use_only(tmp_path: Path, wheels: Path) -> None:
    code = IMPORT_BOTH.format(src=SRC, root=str(REPO), data=str(tmp_path / "data"))
    env = child_env(tmp_path, SESSION_WORKFLOW_WHEELS=str(wheels))
    first = run_python(code, env, "-S")
    assert (first.returncode, first.stdout) == (0, f"{VERSIONS} True\n"), first.stderr
    assert first.stderr.count("\n") == 1 and f"installed {WHAT}" in first.stderr
    second = run_python(code, child_env(tmp_path, **NO_NETWORK), "-S")
    assert (second.returncode, second.stdout, second.stderr) == (0, f"{VERSIONS} True\n", "")


def test_importable_dependencies_need_nothing(tmp_path: Path) -> None:
    code = IMPORT_BOTH.format(src=SRC, root=str(REPO), data=str(tmp_path / "data"))
    done = run_python(code, child_env(tmp_path, **NO_NETWORK))
    assert (done.returncode, done.stderr) == (0, "") and done.stdout.endswith(" False\n")
    assert not (tmp_path / "data").exists()


# The real bin script (which imports only the invoked group's module).
RUN_BIN = """
import runpy, sys
sys.path.insert(0, {src!r})
sys.argv = [{bin!r}, *{argv!r}]
runpy.run_path({bin!r}, run_name="__main__")
"""


def run_bin(tmp_path: Path, *argv: str) -> subprocess.CompletedProcess[str]:
    """Run the bin script without site-packages, on a machine whose network refuses every connection."""
    env = child_env(tmp_path, **NO_NETWORK)
    return run_python(RUN_BIN.format(src=SRC, bin=BIN, argv=list(argv)), env, "-S")


def test_bin_read_only_commands_never_install(tmp_path: Path) -> None:
    done = run_bin(tmp_path, "anchor", "list", str(tmp_path))
    assert (done.returncode, done.stdout) == (0, "")
    assert done.stderr == f"session-workflow: no open anchors in {tmp_path}\n"
    assert not (tmp_path / "data").exists()


def test_bin_offline_fails_in_one_line_with_the_command(tmp_path: Path) -> None:
    """filelock is missing (``python -S``), there is no pip configuration and the network refuses: one line, the
    exact command, exit 1."""
    done = run_bin(tmp_path, "anchor", "new", "--task", "t", "--dir", str(tmp_path))
    assert done.returncode == 1 and done.stdout == ""
    (line,) = done.stderr.splitlines()
    target = str(tmp_path / "data" / "python-deps" / pin_key())
    assert line.startswith(f"session-workflow: cannot install {WHAT} (ERROR: ")
    assert line.endswith(f"); run this once, then retry: {manual_command(OWN_PIP, target)}")
    assert not (tmp_path / ".claude").exists()


def test_bin_is_an_executable_script_that_runs_python3_isolated() -> None:
    assert Path(BIN).read_text().startswith("#!/bin/sh\n''''set -- -I -- \"$0\" \"$@\";")
    assert os.access(BIN, os.X_OK)


def test_bin_refuses_an_old_python_in_one_line() -> None:
    pyenv = Path(os.environ.get("PYENV_ROOT") or Path.home() / ".pyenv") / "versions"
    candidates = [shutil.which("python3.8"), *map(str, sorted(pyenv.glob("3.[5-8].*/bin/python3")))]
    runs = [c for c in candidates if c and subprocess.run([c, "-c", "pass"], capture_output=True).returncode == 0]
    if not runs:
        pytest.skip("no Python older than 3.9 here")
    old = runs[0]
    done = subprocess.run([old, BIN, "anchor", "list"], capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 1 and done.stdout == ""
    assert done.stderr.startswith("session-workflow: needs Python 3.9 or newer (this is 3.")
    assert done.stderr.count("\n") == 1


# --- nothing of the repository runs (issue 27) ---------------------------------------------------------------------


def test_pip_runs_without_python_and_pip_variables() -> None:
    environ = {"PATH": "/bin", "HOME": "/h", "PYTHONPATH": "/r", "PYTHONHOME": "/r", "PIP_PYTHON": "/r/py"}
    environ.update(PIP_CONFIG_FILE="/r/pip.conf", PIP_INDEX_URL="http://127.0.0.1:9", HTTPS_PROXY="http://127.0.0.1:9")
    assert bootstrap.pip_env(environ) == {
        "PATH": "/bin",
        "HOME": "/h",
        "HTTPS_PROXY": "http://127.0.0.1:9",
        "PIP_USER": "0",
        "PIP_REQUIRE_VIRTUALENV": "0",
        "PIP_NO_INPUT": "1",
        "PIP_DISABLE_PIP_VERSION_CHECK": "1",
    }
    assert bootstrap.pip_env({"PIP_CONFIG_FILE": os.devnull})["PIP_CONFIG_FILE"] == os.devnull


def test_a_pip_on_a_relative_path_entry_is_never_a_candidate(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "bin").mkdir()
    script(tmp_path / "bin" / "pip3", "exit 0")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("PATH", os.pathsep.join(["bin", "."]))
    assert all(not command[0].endswith("pip3") for command in bootstrap.default_pips())
    monkeypatch.setenv("PATH", str(tmp_path / "bin"))
    assert [str(tmp_path / "bin" / "pip3")] in bootstrap.default_pips()


def test_plugin_data_in_a_project_or_open_to_others_gives_way_to_the_default(tmp_path: Path) -> None:
    clone = tmp_path / "clone"
    (clone / "sub").mkdir(parents=True)
    (clone / ".git").mkdir()
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o775)
    env = {"CLAUDECODE": "1", "CLAUDE_CONFIG_DIR": str(tmp_path / "cfg")}
    default = str(tmp_path / "cfg" / "plugins" / "data" / "session-workflow-inline")
    ignored = "session-workflow: ignored CLAUDE_PLUGIN_DATA="
    cases = {
        str(clone / "data"): f"inside the project folder {clone}",
        "data": "not an absolute path",
        str(shared / "data"): f"{shared} is writable by others",
    }
    for given, why in cases.items():
        found = data_dir("/plugin", {**env, "CLAUDE_PLUGIN_DATA": given}, "/h", cwd=str(clone / "sub"))
        assert found == (default, f"{ignored}{given} ({why}); using {default}")
    project_env = {**env, "CLAUDE_PROJECT_DIR": str(tmp_path / "p"), "CLAUDE_PLUGIN_DATA": str(tmp_path / "p" / "d")}
    (tmp_path / "p").mkdir()
    assert data_dir("/plugin", project_env, "/h", cwd=str(clone))[1] == (
        f"{ignored}{tmp_path / 'p' / 'd'} (inside the project folder {tmp_path / 'p'}); using {default}"
    )
    mine = tmp_path / "mine"
    assert data_dir("/plugin", {**env, "CLAUDE_PLUGIN_DATA": str(mine)}, "/h", cwd=str(clone)) == (str(mine), None)
    assert data_dir("/plugin", {**env, "CLAUDE_PLUGIN_DATA": default}, "/h", cwd=str(tmp_path / "cfg")) == (
        default,
        None,
    )
