"""Make filelock and platformdirs importable for ``bin/session-workflow`` when the plugin runs from a checkout.

A plugin loaded with ``claude --plugin-dir`` (or from a marketplace) is a folder, not an installed package, so
nothing installed its two dependencies. Only the writers need them, so the install is deferred: a finder at the
end of ``sys.meta_path`` is consulted only when ``import filelock`` or ``import platformdirs`` fails everywhere
else. It then installs the pinned, hash-checked wheels once into ``<data dir>/python-deps/<pin key>/`` and puts
that folder on ``sys.path``. The pin key is a hash of the pins, so a changed pin gets a fresh folder (and the
old ones are removed); an install that cannot reach an index fails with the exact command to run by hand.
Read-only commands and ``--help`` never trigger an install.
"""

from __future__ import annotations

import os
import sys

from session_workflow.cli.parser import CliError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence
    from importlib.machinery import ModuleSpec
    from types import ModuleType
    from typing import TextIO

# Newest releases that still support Python 3.9 (filelock 3.20 and platformdirs 4.5 need 3.10). Pure wheels.
PINS: tuple[tuple[str, str, str], ...] = (
    ("filelock", "3.19.1", "sha256:d38e30481def20772f5baf097c122c3babc4fcdb7e14e57049eb9d88c6dc017d"),
    ("platformdirs", "4.4.0", "sha256:abd01743f24e5287cd7a5db3752faf1a2d65353f38ec26d98e25a6db65958c85"),
)
# sha256 of requirements_text(PINS), first 16 hex digits (see pin_key).
PIN_KEY = "84a0485cf8cadcdc"
PLUGIN_NAME = "session-workflow"
DEPS_FOLDER = "python-deps"
STAGING_PREFIX = ".install-"
# A staging folder older than this belongs to an install that was killed; younger ones may still be running.
STALE_STAGING_SECONDS = 3600.0
PIP_TIMEOUT_SECONDS = 600.0
MAX_CONFIG_BYTES = 1 << 20


class DependencyError(CliError):
    """The dependencies could not be installed; the message is one line and names the command to run.

    A CliError, so raised from inside a writer's ``import filelock`` it still ends as one line and exit 1.
    """


def requirements_text(pins: Sequence[tuple[str, str, str]] = PINS) -> str:
    """The hash-pinned requirements file pip installs from."""
    return "".join(f"{name}=={version} --hash={digest}\n" for name, version, digest in pins)


def pin_key(pins: Sequence[tuple[str, str, str]] = PINS) -> str:
    """A short stable hash of the pins: the install folder's name, so a changed pin never reuses old files.

    ``PINS``' own key is ``PIN_KEY``, written out: every writer run asks for it, and hashlib (OpenSSL) is a
    noticeable share of a writer's start. tests/cli/test_bootstrap.py checks that it is this hash.
    """
    if pins is PINS:
        return PIN_KEY
    import hashlib

    return hashlib.sha256(requirements_text(pins).encode("utf-8")).hexdigest()[:16]


def describe(pins: Sequence[tuple[str, str, str]] = PINS) -> str:
    """``filelock 3.19.1 and platformdirs 4.4.0`` for messages."""
    names = [f"{name} {version}" for name, version, _digest in pins]
    return ", ".join(names[:-1]) + " and " + names[-1] if len(names) > 1 else "".join(names)


def is_complete(folder: str, pins: Sequence[tuple[str, str, str]] = PINS) -> bool:
    """True when pip finished installing every pinned version into ``folder`` (its dist-info records)."""
    return all(
        os.path.isfile(os.path.join(folder, f"{name.replace('-', '_')}-{version}.dist-info", "RECORD"))
        for name, version, _digest in pins
    )


def _sanitise(plugin_id: str) -> str:
    """Claude Code's data-folder name for a plugin id (``session-workflow@market`` → ``session-workflow-market``)."""
    import re

    return re.sub(r"[^A-Za-z0-9_-]", "-", plugin_id)


def _load_json(path: str) -> object:
    import json

    from session_workflow.core.boundedio import read_text_prefix

    read = read_text_prefix(path, MAX_CONFIG_BYTES)
    if read is None or read[1]:
        return None
    try:
        return json.loads(read[0])
    except ValueError:
        return None


def _same_or_inside(path: object, folder: str) -> bool:
    """True when ``folder`` is ``path`` or lies inside it (both resolved)."""
    if not isinstance(path, str) or not path:
        return False
    base = os.path.realpath(path)
    return folder == base or folder.startswith(base.rstrip(os.sep) + os.sep)


def plugin_id(plugin_root: str, config: str, name: str = PLUGIN_NAME) -> str:
    """The id Claude Code files this plugin's data under (measured on 2.1.332).

    A marketplace install is ``<name>@<marketplace>``: found in ``plugins/installed_plugins.json`` by its
    install path, or by a directory marketplace whose folder holds this plugin. Anything else was loaded with
    ``--plugin-dir``, whose data folder is ``<name>-inline``.
    """
    root = os.path.realpath(plugin_root)
    plugins_dir = os.path.join(config, "plugins")
    installed = _load_json(os.path.join(plugins_dir, "installed_plugins.json"))
    markets = _load_json(os.path.join(plugins_dir, "known_marketplaces.json"))
    entries = installed.get("plugins") if isinstance(installed, dict) else None
    for key, installs in entries.items() if isinstance(entries, dict) else ():
        if not isinstance(key, str) or not key.startswith(name + "@"):
            continue
        market = markets.get(key[len(name) + 1 :]) if isinstance(markets, dict) else None
        for item in installs if isinstance(installs, list) else ():
            path = item.get("installPath") if isinstance(item, dict) else None
            if isinstance(path, str) and path and os.path.realpath(path) == root:
                return key
        if isinstance(market, dict) and _same_or_inside(market.get("installLocation"), root):
            return key
    return f"{name}-inline"


def _absolute(value: str | None) -> str | None:
    return value if value and os.path.isabs(value) and "\x00" not in value else None


def user_cache_dir(env: Mapping[str, str], home: str, platform: str = sys.platform) -> str:
    """platformdirs' ``user_cache_dir("session-workflow")``, computed by hand: platformdirs may be what is missing."""
    if platform == "darwin":
        return os.path.join(home, "Library", "Caches", PLUGIN_NAME)
    if platform.startswith("win"):
        base = _absolute(env.get("LOCALAPPDATA")) or os.path.join(home, "AppData", "Local")
        return os.path.join(base, PLUGIN_NAME, "Cache")
    return os.path.join(_absolute(env.get("XDG_CACHE_HOME")) or os.path.join(home, ".cache"), PLUGIN_NAME)


def config_dir(env: Mapping[str, str], home: str) -> str:
    """Claude Code's configuration folder: ``CLAUDE_CONFIG_DIR`` or ``~/.claude``."""
    return _absolute(env.get("CLAUDE_CONFIG_DIR")) or os.path.join(home, ".claude")


def data_dir(plugin_root: str, env: Mapping[str, str], home: str, platform: str = sys.platform) -> str:
    """Where the dependencies go: the plugin's persistent data folder, or the user cache outside Claude Code.

    Hooks get ``CLAUDE_PLUGIN_DATA``; the Bash tool's shell does not, but it has ``CLAUDECODE=1``, and the
    folder is ``<config dir>/plugins/data/<plugin id>`` (config dir: ``CLAUDE_CONFIG_DIR`` or ``~/.claude``).
    """
    given = _absolute(env.get("CLAUDE_PLUGIN_DATA"))
    if given:
        return given
    if env.get("CLAUDECODE") == "1":
        config = config_dir(env, home)
        return os.path.join(config, "plugins", "data", _sanitise(plugin_id(plugin_root, config)))
    return user_cache_dir(env, home, platform)


def manual_command(python: str, target: str, pins: Sequence[tuple[str, str, str]] = PINS) -> str:
    """The one command that, run by hand while online, leaves ``target`` complete."""
    import shlex

    specs = [f"{name}=={version}" for name, version, _digest in pins]
    return shlex.join([python, "-m", "pip", "install", "--no-deps", "--target", target, *specs])


def _pip_env() -> dict[str, str]:
    """pip settings a user's config must not override for a ``--target`` install."""
    env = dict(os.environ)
    env.update(PIP_USER="0", PIP_REQUIRE_VIRTUALENV="0", PIP_NO_INPUT="1", PIP_DISABLE_PIP_VERSION_CHECK="1")
    return env


def _last_error_line(output: str) -> str:
    from session_workflow.core.text import cut_code_points, one_line

    lines = [one_line(line) for line in output.splitlines() if line.strip()]
    errors = [line for line in lines if line.startswith("ERROR")] or lines
    return cut_code_points(errors[-1], 200) if errors else "no output"


def _run_pip(pip_command: Sequence[str], staging: str, site: str) -> str | None:
    """Install the pins into ``site``; returns pip's last error line on failure, None on success."""
    import subprocess

    requirements = os.path.join(staging, "requirements.txt")
    with open(requirements, "w", encoding="utf-8") as handle:
        handle.write(requirements_text())
    command = [*pip_command, "install", "--quiet", "--no-deps", "--only-binary", ":all:", "--require-hashes"]
    command += ["--timeout", "20", "--retries", "1", "--target", site, "-r", requirements]
    try:
        done = subprocess.run(
            command,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            errors="replace",
            env=_pip_env(),
            timeout=PIP_TIMEOUT_SECONDS,
            check=False,
        )
    except (OSError, subprocess.SubprocessError) as error:
        return f"cannot run pip: {error}"
    if done.returncode != 0:
        return _last_error_line(done.stderr + "\n" + done.stdout)
    return None if is_complete(site) else "pip finished but the packages are not there"


def _tidy(parent: str, keep: str, now: float) -> None:
    """Remove other pins' folders and staging folders of killed installs."""
    import shutil

    try:
        names = os.listdir(parent)
    except OSError:
        return
    for name in names:
        path = os.path.join(parent, name)
        if name == keep:
            continue
        if name.startswith(STAGING_PREFIX):
            try:
                if now - os.stat(path).st_mtime < STALE_STAGING_SECONDS:
                    continue
            except OSError:
                continue
        shutil.rmtree(path, ignore_errors=True)


def install(target: str, pip_command: Sequence[str], python: str, stderr: TextIO) -> None:
    """Install the pins into ``target`` via a staging folder renamed into place, so a reader never sees half.

    Two processes racing both install; the first rename wins and the other discards its copy.
    """
    import shutil
    import tempfile
    import time

    parent = os.path.dirname(target)
    try:
        os.makedirs(parent, exist_ok=True)
        previous = [name for name in os.listdir(parent) if not name.startswith(".")]
    except OSError as error:
        raise DependencyError(f"cannot create {parent}: {error.strerror or error}") from error
    what = describe()
    if previous:
        print(f"session-workflow: dependency pins changed; reinstalling {what} into {target}", file=stderr)
    else:
        print(f"session-workflow: installing {what} into {target} (once, for the writers)", file=stderr)
    stderr.flush()
    staging = tempfile.mkdtemp(prefix=STAGING_PREFIX, dir=parent)
    try:
        site = os.path.join(staging, "site")
        problem = _run_pip(pip_command, staging, site)
        if problem is not None:
            raise DependencyError(
                f"cannot install {what} ({problem}); run this once, then retry: {manual_command(python, target)}"
            )
        try:
            os.rename(site, target)
        except OSError:
            if not is_complete(target):
                os.rename(target, os.path.join(staging, "incomplete"))
                os.rename(site, target)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    _tidy(parent, os.path.basename(target), time.time())


class DeferredDependencies:
    """A meta-path finder that installs the pins the first time an import of one of them fails everywhere else."""

    def __init__(
        self, plugin_root: str, pip_command: Sequence[str] | None = None, stderr: TextIO | None = None
    ) -> None:
        self.plugin_root = plugin_root
        self.pip_command = list(pip_command) if pip_command else [sys.executable, "-m", "pip"]
        self.stderr = stderr
        self.modules = frozenset(name for name, _version, _digest in PINS)
        self.folder: str | None = None
        self.failure: DependencyError | None = None

    def target(self) -> str:
        home = os.path.expanduser("~")
        return os.path.join(data_dir(self.plugin_root, os.environ, home), DEPS_FOLDER, pin_key())

    def provide(self) -> str:
        """The folder holding the pins, installing them on first use; raises the same error on every call."""
        if self.failure is not None:
            raise self.failure
        if self.folder is None:
            folder = self.target()
            try:
                if not is_complete(folder):
                    install(folder, self.pip_command, sys.executable, self.stderr or sys.stderr)
            except DependencyError as error:
                self.failure = error
                raise
            self.folder = folder
            if folder not in sys.path:
                sys.path.append(folder)
        return self.folder

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> ModuleSpec | None:
        if path is not None or fullname not in self.modules:
            return None
        from importlib.machinery import PathFinder

        return PathFinder.find_spec(fullname, [self.provide()])


def install_import_hook(
    plugin_root: str, pip_command: Sequence[str] | None = None, stderr: TextIO | None = None
) -> DeferredDependencies:
    """Register the deferred installer (last on ``sys.meta_path``, so an importable copy always wins)."""
    finder = DeferredDependencies(plugin_root, pip_command, stderr)
    sys.meta_path.append(finder)
    return finder
