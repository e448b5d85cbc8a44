"""The dependency bootstrap of ``bin/session-workflow``: where it installs, when, and what it says — with a fake pip.

No test here touches the network: pip is a script that writes a package into ``--target`` (or fails like an
offline pip), and a subprocess run with ``python -S`` is how filelock and platformdirs become "missing".
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import shlex
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from session_workflow.cli import bootstrap
from session_workflow.cli.bootstrap import (
    PINS,
    DeferredDependencies,
    DependencyError,
    data_dir,
    is_complete,
    manual_command,
    pin_key,
    plugin_id,
    requirements_text,
)

REPO = Path(__file__).resolve().parents[2]
SRC = str(REPO / "src")
BIN = str(REPO / "bin" / "session-workflow")

FAKE_PIP = """
import json, os, sys
args = sys.argv[1:]
with open(os.environ["FAKE_PIP_LOG"], "a") as log:
    log.write(json.dumps(args) + "\\n")
if os.environ.get("FAKE_PIP_OFFLINE"):
    sys.stderr.write("WARNING: Retrying after connection broken\\n")
    sys.stderr.write("ERROR: Could not find a version that satisfies the requirement filelock==3.19.1\\n")
    sys.stderr.write("ERROR: No matching distribution found for filelock==3.19.1\\n")
    sys.exit(1)
target = args[args.index("--target") + 1]
for spec in open(args[args.index("-r") + 1]).read().split():
    if "==" in spec:
        name, version = spec.split("==")
        os.makedirs(os.path.join(target, name))
        with open(os.path.join(target, name, "__init__.py"), "w") as module:
            module.write(f"FAKE_VERSION = {version!r}\\n")
        os.makedirs(os.path.join(target, f"{name}-{version}.dist-info"))
        open(os.path.join(target, f"{name}-{version}.dist-info", "RECORD"), "w").close()
"""

# ``python -m pip install --no-deps --target DIR name==version…`` as pip lays it out, for the manual command.
FAKE_PIP_MODULE = """
import os, sys
args = sys.argv[1:]
assert args[:5] == ["-m", "pip", "install", "--no-deps", "--target"], args
target, specs = args[5], args[6:]
for name, version in (spec.split("==") for spec in specs):
    os.makedirs(os.path.join(target, name))
    open(os.path.join(target, name, "__init__.py"), "w").close()
    os.makedirs(os.path.join(target, f"{name}-{version}.dist-info"))
    open(os.path.join(target, f"{name}-{version}.dist-info", "RECORD"), "w").close()
"""


@pytest.fixture
def fake_pip(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[list[str], Path]:
    script = tmp_path / "fake_pip.py"
    script.write_text(FAKE_PIP)
    log = tmp_path / "pip.log"
    monkeypatch.setenv("FAKE_PIP_LOG", str(log))
    monkeypatch.delenv("FAKE_PIP_OFFLINE", raising=False)
    return [sys.executable, str(script)], log


def pip_calls(log: Path) -> list[list[str]]:
    return [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []


class Finder:
    """A deferred installer writing its messages to ``said``, and the folder it installs into."""

    def __init__(self, tmp_path: Path, pip: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
        monkeypatch.setenv("CLAUDE_PLUGIN_DATA", str(tmp_path / "data"))
        self.said = io.StringIO()
        self.deps = DeferredDependencies(str(REPO), pip, self.said)
        self.target = tmp_path / "data" / "python-deps" / pin_key()

    def provide(self) -> str:
        folder = self.deps.provide()
        sys.path.remove(folder)  # keep the test process's path clean
        return folder


# --- pins ------------------------------------------------------------------------------------------------------------


def test_pins_are_hash_pinned_and_support_python_3_9() -> None:
    assert requirements_text() == (
        "filelock==3.19.1 --hash=sha256:d38e30481def20772f5baf097c122c3babc4fcdb7e14e57049eb9d88c6dc017d\n"
        "platformdirs==4.4.0 --hash=sha256:abd01743f24e5287cd7a5db3752faf1a2d65353f38ec26d98e25a6db65958c85\n"
    )
    assert bootstrap.describe() == "filelock 3.19.1 and platformdirs 4.4.0"


def test_the_pin_key_changes_with_any_pin() -> None:
    key = pin_key()
    assert len(key) == 16 and key == pin_key(PINS)
    assert key == hashlib.sha256(requirements_text().encode("utf-8")).hexdigest()[:16], "PIN_KEY is stale"
    bumped = (PINS[0], ("platformdirs", "4.4.1", PINS[1][2]))
    assert pin_key(bumped) != key
    assert pin_key((PINS[0], (*PINS[1][:2], "sha256:0"))) != key


def test_manual_command_is_exact_and_quoted() -> None:
    assert manual_command("/usr/bin/python3", "/data dir/x") == (
        "/usr/bin/python3 -m pip install --no-deps --target '/data dir/x' filelock==3.19.1 platformdirs==4.4.0"
    )


# --- where ---------------------------------------------------------------------------------------------------------


def test_plugin_data_wins(tmp_path: Path) -> None:
    env = {"CLAUDE_PLUGIN_DATA": str(tmp_path / "d"), "CLAUDECODE": "1", "XDG_CACHE_HOME": "/x"}
    assert data_dir("/plugin", env, "/home/u") == str(tmp_path / "d")


def test_inside_claude_code_a_plugin_dir_plugin_is_inline(tmp_path: Path) -> None:
    env = {"CLAUDECODE": "1", "CLAUDE_CONFIG_DIR": str(tmp_path / "cfg")}
    assert data_dir("/plugin", env, "/home/u") == str(tmp_path / "cfg" / "plugins" / "data" / "session-workflow-inline")
    assert data_dir("/plugin", {"CLAUDECODE": "1"}, "/home/u") == (
        "/home/u/.claude/plugins/data/session-workflow-inline"
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
    assert data_dir(str(cached), env, "/h") == str(plugins / "data" / "session-workflow-my-market")


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
    assert data_dir("/plugin", env, "/home/u", platform) == expected


# --- install -------------------------------------------------------------------------------------------------------


def test_first_use_installs_once_and_says_so(
    tmp_path: Path, fake_pip: tuple[list[str], Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    pip, log = fake_pip
    finder = Finder(tmp_path, pip, monkeypatch)
    target = finder.target
    assert finder.deps.provide() == str(target) and sys.path[-1] == str(target)
    assert finder.provide() == str(target)
    assert is_complete(str(target))
    assert finder.said.getvalue() == (
        f"session-workflow: installing filelock 3.19.1 and platformdirs 4.4.0 into {target} (once, for the writers)\n"
    )
    (call,) = pip_calls(log)
    assert call[:1] == ["install"] and "--require-hashes" in call and "--no-deps" in call
    assert call[call.index("--only-binary") + 1] == ":all:"
    assert os.listdir(target.parent) == [pin_key()]  # the staging folder is gone


def test_an_installed_pin_is_used_without_pip(
    tmp_path: Path, fake_pip: tuple[list[str], Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    pip, log = fake_pip
    Finder(tmp_path, pip, monkeypatch).provide()
    again = Finder(tmp_path, pip, monkeypatch)
    assert again.provide() == str(again.target)
    assert len(pip_calls(log)) == 1
    assert again.said.getvalue() == ""


def test_a_changed_pin_reinstalls_and_removes_the_old_one(
    tmp_path: Path, fake_pip: tuple[list[str], Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    pip, log = fake_pip
    finder = Finder(tmp_path, pip, monkeypatch)
    old = finder.target.parent / "0123456789abcdef"
    (old / "filelock-3.12.0.dist-info").mkdir(parents=True)
    (old / "filelock-3.12.0.dist-info" / "RECORD").write_text("")
    finder.provide()
    assert finder.said.getvalue() == (
        "session-workflow: dependency pins changed; reinstalling filelock 3.19.1 and platformdirs 4.4.0"
        f" into {finder.target}\n"
    )
    assert len(pip_calls(log)) == 1
    assert os.listdir(finder.target.parent) == [pin_key()]


def test_offline_fails_once_with_the_exact_command(
    tmp_path: Path, fake_pip: tuple[list[str], Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    pip, log = fake_pip
    monkeypatch.setenv("FAKE_PIP_OFFLINE", "1")
    finder = Finder(tmp_path, pip, monkeypatch)
    target = finder.target
    with pytest.raises(DependencyError) as raised:
        finder.provide()
    message = str(raised.value)
    assert message == (
        "cannot install filelock 3.19.1 and platformdirs 4.4.0 (ERROR: No matching distribution found for"
        f" filelock==3.19.1); run this once, then retry: {manual_command(sys.executable, str(target))}"
    )
    assert raised.value.code == 1 and "\n" not in message
    with pytest.raises(DependencyError):
        finder.provide()
    assert len(pip_calls(log)) == 1
    assert os.listdir(target.parent) == []  # no half-installed folder, no staging debris


def test_the_manual_command_completes_the_install(
    tmp_path: Path, fake_pip: tuple[list[str], Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Running the printed command by hand leaves a folder the bootstrap accepts without pip.

    The command runs for real, with a stand-in interpreter whose ``-m pip install`` lays out what pip would
    (package and dist-info per ``name==version``, in ``--target``): a command missing a pin, a version or the
    target leaves a folder the bootstrap refuses.
    """
    pip, log = fake_pip
    finder = Finder(tmp_path, pip, monkeypatch)
    python = tmp_path / "python-online"
    python.write_text(f"#!{sys.executable}\n{FAKE_PIP_MODULE}")
    python.chmod(0o755)
    command = manual_command(str(python), str(finder.target))
    done = subprocess.run(shlex.split(command), capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    assert finder.provide() == str(finder.target) and pip_calls(log) == [] and finder.said.getvalue() == ""


def test_stale_staging_is_removed_and_a_young_one_kept(tmp_path: Path) -> None:
    parent = tmp_path / "python-deps"
    for name in (".install-old", ".install-young", "oldpin", "keep"):
        (parent / name).mkdir(parents=True)
    now = time.time()
    os.utime(parent / ".install-old", (now - 7200, now - 7200))
    bootstrap._tidy(str(parent), "keep", now)
    assert sorted(os.listdir(parent)) == [".install-young", "keep"]


# --- through the import system, in a fresh interpreter without site-packages ---------------------------------------


def run_python(code: str, env: dict[str, str], *flags: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, *flags, "-c", code], capture_output=True, text=True, env=env, timeout=60, check=False
    )


def child_env(tmp_path: Path, log: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CLAUDE", "PYTHON", "FAKE_PIP"))}
    return {**env, "CLAUDE_PLUGIN_DATA": str(tmp_path / "data"), "FAKE_PIP_LOG": str(log), **extra}


IMPORT_BOTH = """
import sys
sys.path.insert(0, {src!r})
from session_workflow.cli.bootstrap import install_import_hook
install_import_hook({root!r}, {pip!r})
import filelock, platformdirs
print(getattr(filelock, "FAKE_VERSION", "real"), getattr(platformdirs, "FAKE_VERSION", "real"))
"""


def test_a_missing_import_installs_on_first_use_only(tmp_path: Path, fake_pip: tuple[list[str], Path]) -> None:
    pip, log = fake_pip
    code = IMPORT_BOTH.format(src=SRC, root=str(REPO), pip=pip)
    first = run_python(code, child_env(tmp_path, log), "-S")
    assert (first.returncode, first.stdout) == (0, "3.19.1 4.4.0\n"), first.stderr
    assert first.stderr.count("\n") == 1 and "installing filelock 3.19.1 and platformdirs 4.4.0" in first.stderr
    second = run_python(code, child_env(tmp_path, log), "-S")
    assert (second.returncode, second.stdout, second.stderr) == (0, "3.19.1 4.4.0\n", "")
    assert len(pip_calls(log)) == 1


def test_importable_dependencies_need_nothing(tmp_path: Path, fake_pip: tuple[list[str], Path]) -> None:
    pip, log = fake_pip
    done = run_python(IMPORT_BOTH.format(src=SRC, root=str(REPO), pip=pip), child_env(tmp_path, log))
    assert (done.returncode, done.stdout, done.stderr) == (0, "real real\n", "")
    assert pip_calls(log) == [] and not (tmp_path / "data").exists()


# The real bin script, with the CLI cut down to the anchor group (so the test does not depend on the others).
RUN_BIN = """
import runpy, sys
sys.path.insert(0, {src!r})
from session_workflow.cli import anchor as anchor_cli
from session_workflow.cli import main as cli
from session_workflow.cli.parser import OneLineParser
def anchor_only(_argv=None):
    parser = OneLineParser(prog="session-workflow")
    commands = parser.add_subparsers(dest="command", parser_class=OneLineParser)
    commands.required = True
    anchor_cli.register(commands)
    return parser
cli.build_parser = anchor_only
sys.argv = [{bin!r}, *{argv!r}]
runpy.run_path({bin!r}, run_name="__main__")
"""


def run_bin(tmp_path: Path, log: Path, *argv: str) -> subprocess.CompletedProcess[str]:
    """Run the bin script without site-packages; the real pip it calls is cut off from every index."""
    env = child_env(tmp_path, log, PIP_CONFIG_FILE=os.devnull, PIP_NO_INDEX="1", PIP_FIND_LINKS="")
    return run_python(RUN_BIN.format(src=SRC, bin=BIN, argv=list(argv)), env, "-S")


def test_bin_read_only_commands_never_install(tmp_path: Path) -> None:
    done = run_bin(tmp_path, tmp_path / "log", "anchor", "list", str(tmp_path))
    assert (done.returncode, done.stdout, done.stderr) == (0, "", "")
    assert not (tmp_path / "data").exists()


def test_bin_offline_fails_in_one_line_with_the_command(tmp_path: Path) -> None:
    """filelock is missing (``python -S``) and pip can reach no index: one line, the exact command, exit 1."""
    done = run_bin(tmp_path, tmp_path / "log", "anchor", "new", "--task", "t", "--dir", str(tmp_path))
    assert done.returncode == 1 and done.stdout == ""
    lines = done.stderr.splitlines()
    assert len(lines) == 2 and "Traceback" not in done.stderr
    assert lines[0].startswith("session-workflow: installing filelock 3.19.1 and platformdirs 4.4.0 into ")
    target = str(tmp_path / "data" / "python-deps" / pin_key())
    assert lines[1].startswith("session-workflow: cannot install filelock 3.19.1 and platformdirs 4.4.0 (")
    assert lines[1].endswith(f"run this once, then retry: {manual_command(sys.executable, target)}")
    assert not (tmp_path / ".claude").exists()


def test_bin_is_an_executable_python3_script() -> None:
    assert Path(BIN).read_text().startswith("#!/usr/bin/env python3\n")
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
