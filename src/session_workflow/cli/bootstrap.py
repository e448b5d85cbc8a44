"""Make filelock and platformdirs importable for the writers when the plugin runs from a checkout.

A plugin loaded with ``claude --plugin-dir`` (or from a marketplace) is a folder, not an installed package, so
nothing installed its two dependencies. Only the writers need them, so the install is deferred: a finder at the
end of ``sys.meta_path`` is consulted only when ``import filelock`` or ``import platformdirs`` fails everywhere
else. It then has pip install the pinned, hash-checked pure wheels once into ``<data dir>/python-deps/<pin key>/``
and puts that folder on ``sys.path``. The pins depend on the running Python: 3.11 and newer get the newest releases
(filelock 4.2+ no longer imports asyncio, ssl and the rest at ``import filelock``, a writer's largest cost), 3.9
and 3.10 the newest that still support 3.9; each set has its own folder, so interpreters of both kinds share a data
folder without reinstalling in turn. pip is the user's own, with the user's configuration (index, proxy,
certificates): the plugin itself reaches no host. A python3 without pip (a venv made ``--without-pip``, a system
python3 without its pip package) borrows one: its base interpreter's, then ``pip3`` or ``pip`` on PATH, told this
interpreter's version (a pure wheel fits any). ``SESSION_WORKFLOW_WHEELS`` names a folder of wheel files that pip
installs from instead of an index (offline machines, tests); the hashes are checked all the same. The pin key is a
hash of the pins, so a changed pin gets a fresh folder (and folders of pins no set has any more are removed); an
install that fails says so in one line with the command to run. Read-only commands and ``--help`` never trigger an
install.

Nothing of the repository runs: pip runs in the staging folder (never the working directory, which ``-m`` would
put first on ``sys.path``), without the ``PYTHON*`` variables and without ``PIP_*`` ones (a project's
``.claude/settings.json`` ``env`` block sets those, and ``PIP_PYTHON`` or ``PIP_CONFIG_FILE`` would run its code);
pip's own configuration files still apply. A ``pip3`` on PATH counts only from an absolute PATH entry. And the
dependency folder from ``CLAUDE_PLUGIN_DATA`` (which that ``env`` block can set for the Bash tool) is used only
outside every project folder of the call, owned by this user and writable by no one else (see ``data_dir``).
"""

from __future__ import annotations

import os
import sys

from session_workflow.cli.parser import CliError
from session_workflow.core.deps import DEPS_FOLDER, PIN_SETS, PINS, is_complete
from session_workflow.core.locations import config_dir

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence
    from importlib.machinery import ModuleSpec
    from types import ModuleType
    from typing import TextIO

    from session_workflow.core.deps import Pins

PLUGIN_NAME = "session-workflow"
# src/session_workflow/cli/bootstrap.py -> the plugin root (a checkout; for an installed package, its site folder).
PLUGIN_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.realpath(__file__)))))
WHEELS_ENV = "SESSION_WORKFLOW_WHEELS"
STAGING_PREFIX = ".install-"
# A staging folder older than this belongs to an install that was killed; younger ones may still be running.
STALE_STAGING_SECONDS = 3600.0
PIP_TIMEOUT_SECONDS = 600.0
PROBE_TIMEOUT_SECONDS = 60.0
MAX_CONFIG_BYTES = 1 << 20


class DependencyError(CliError):
    """The dependencies could not be installed; the message is one line and names the command to run.

    A CliError, so raised from inside a writer's ``import filelock`` it still ends as one line and exit 1.
    """


def requirements_text(pins: Pins = PINS) -> str:
    """The hash-pinned requirements file pip installs from."""
    return "".join(f"{name}=={version} --hash={digest}\n" for name, version, digest in pins)


def pin_key(pins: Pins = PINS) -> str:
    """A short stable hash of the pins: the install folder's name, so a changed pin never reuses old files.

    A known set's key is written out in ``PIN_SETS``: every writer run asks for it, and hashlib (OpenSSL) is a
    noticeable share of a writer's start. tests/cli/test_bootstrap.py checks that each is this hash.
    """
    for _oldest, known, key in PIN_SETS:
        if pins is known:
            return key
    import hashlib

    return hashlib.sha256(requirements_text(pins).encode("utf-8")).hexdigest()[:16]


def describe(pins: Pins = PINS) -> str:
    """``filelock 4.3.1 and platformdirs 4.14.9`` for messages."""
    names = [f"{name} {version}" for name, version, _digest in pins]
    return ", ".join(names[:-1]) + " and " + names[-1] if len(names) > 1 else "".join(names)


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


def default_data_dir(plugin_root: str, env: Mapping[str, str], home: str, platform: str = sys.platform) -> str:
    """The user-level folder for the dependencies: the plugin's data folder in Claude Code, else the user cache.

    The Bash tool's shell has ``CLAUDECODE=1``, and the folder is ``<config dir>/plugins/data/<plugin id>``
    (config dir: ``CLAUDE_CONFIG_DIR`` or ``~/.claude``, which a project's ``env`` block cannot set).
    """
    if env.get("CLAUDECODE") == "1":
        config = config_dir(env, home)
        return os.path.join(config, "plugins", "data", _sanitise(plugin_id(plugin_root, config)))
    return user_cache_dir(env, home, platform)


def project_folders(env: Mapping[str, str], cwd: str | None) -> list[str]:
    """The folders a repository's content may fill for this call, resolved: the working directory, the work tree
    holding it (the nearest folder at or above it with a ``.git``) and ``CLAUDE_PROJECT_DIR``."""
    found = []
    if cwd is not None:
        folder = os.path.realpath(cwd)
        found.append(folder)
        while not os.path.lexists(os.path.join(folder, ".git")) and os.path.dirname(folder) != folder:
            folder = os.path.dirname(folder)
        if os.path.lexists(os.path.join(folder, ".git")):
            found.append(folder)
    given = _absolute(env.get("CLAUDE_PROJECT_DIR"))
    if given:
        found.append(os.path.realpath(given))
    return found


def insecure(path: str, uid: int) -> str | None:
    """Why code under ``path`` could be someone else's (None when it cannot): the folder, or its nearest existing
    ancestor when it is not there yet, must be this user's and writable by no group or other; every folder above
    it this user's or root's, and writable by others only when sticky (``/tmp``), as OpenSSH asks of ``~/.ssh``."""
    import stat

    current, first = path, True
    while True:
        try:
            info = os.stat(current)
        except FileNotFoundError:
            info = None
        except OSError as error:
            return f"cannot check {current}: {error.strerror or error}"
        if info is not None and first:
            first = False
            if info.st_uid != uid:
                return f"{current} is not owned by this user"
            if info.st_mode & 0o022:
                return f"{current} is writable by others"
        elif info is not None:
            if info.st_uid not in (uid, 0):
                return f"{current} is owned by another user"
            if info.st_mode & 0o022 and not info.st_mode & stat.S_ISVTX:
                return f"{current} is writable by others"
        parent = os.path.dirname(current)
        if parent == current:
            return None
        current = parent


def data_dir(
    plugin_root: str,
    env: Mapping[str, str],
    home: str,
    platform: str = sys.platform,
    cwd: str | None = None,
) -> tuple[str, str | None]:
    """Where the dependencies go, and the one line that says why ``CLAUDE_PLUGIN_DATA`` was not used (or None).

    Hooks get ``CLAUDE_PLUGIN_DATA`` from Claude Code, but in the Bash tool only a project's ``env`` block sets it,
    so the folder it names holds code this CLI imports only when it is absolute, resolves outside every project
    folder of the call and passes ``insecure``; otherwise the user-level default (``default_data_dir``) is used.
    """
    fallback = default_data_dir(plugin_root, env, home, platform)
    raw = env.get("CLAUDE_PLUGIN_DATA")
    if not raw:
        return fallback, None
    given = _absolute(raw)
    real = os.path.realpath(given) if given else None
    why = "not an absolute path" if real is None else _refusal(real, env, cwd)
    if given is not None and why is None:
        return given, None
    if real == os.path.realpath(fallback):
        return fallback, None
    from session_workflow.core.text import escaped

    why = escaped(why or "")
    said = f"session-workflow: ignored CLAUDE_PLUGIN_DATA={escaped(raw)} ({why}); using {escaped(fallback)}"
    return fallback, said


def _refusal(real: str, env: Mapping[str, str], cwd: str | None) -> str | None:
    """Why the resolved data folder ``real`` may not hold the dependencies, or None."""
    if cwd is None:
        try:
            cwd = os.getcwd()
        except OSError:  # deleted under the shell: CLAUDE_PROJECT_DIR and the folder's owner still count
            cwd = None
    from session_workflow.core.locations import containing_project

    inside = containing_project(real, project_folders(env, cwd), env)
    if inside is not None:
        return f"inside the project folder {inside}"
    uid = getattr(os, "getuid", None)
    return insecure(real, uid()) if uid is not None else None


def python_version() -> str:
    """This interpreter's ``3.9``, for another interpreter's pip (``--python-version``)."""
    return f"{sys.version_info[0]}.{sys.version_info[1]}"


def pip_candidates(
    executable: str,
    base_executable: str,
    prefix: str,
    base_prefix: str,
    on_path: Sequence[str | None],
    version: str,
    platform: str = sys.platform,
) -> list[list[str]]:
    """The pips to try, in order: this interpreter's, its base interpreter's (in a venv), then those on PATH.

    A venv made ``--without-pip`` still has its base interpreter, which often has pip; on 3.9 the venv's
    ``sys._base_executable`` is the venv's own python, so the base is also looked for under ``sys.base_prefix``.
    """
    found = [[executable, "-m", "pip"]]
    if prefix != base_prefix:
        inside = "python.exe" if platform.startswith("win") else os.path.join("bin", f"python{version}")
        found += [[base_executable, "-m", "pip"], [os.path.join(base_prefix, inside), "-m", "pip"]]
    found += [[path] for path in on_path if path]
    unique: list[list[str]] = []
    for command in found:
        if command[0] and command not in unique:
            unique.append(command)
    return unique


def absolute_path(value: str) -> str:
    """A PATH value without its relative entries: those name folders under the working directory."""
    return os.pathsep.join(entry for entry in value.split(os.pathsep) if os.path.isabs(entry))


def default_pips() -> list[list[str]]:
    """``pip_candidates`` for the running interpreter (a ``pip3`` or ``pip`` from an absolute PATH entry only)."""
    import shutil

    base = getattr(sys, "_base_executable", "") or sys.executable
    path = absolute_path(os.environ.get("PATH", ""))
    on_path = [shutil.which("pip3", path=path), shutil.which("pip", path=path)] if path else []
    return pip_candidates(sys.executable, base, sys.prefix, sys.base_prefix, on_path, python_version())


def pip_env(environ: Mapping[str, str]) -> dict[str, str]:
    """The environment pip runs in: ``environ`` without ``PYTHON*`` and ``PIP_*`` variables, plus the pip settings
    a ``--target`` install needs.

    A project's ``env`` block can set both kinds (``PYTHONPATH``, ``PIP_PYTHON``, ``PIP_CONFIG_FILE``, ``PIP_LOG``
    would run code or write files of its choosing); pip's configuration files, found from HOME and XDG_*, which that
    block cannot set, still give the user's index, proxy and certificates. ``PIP_CONFIG_FILE`` passes only as the
    null device, which turns configuration off, never on.
    """
    env = {name: value for name, value in environ.items() if not name.startswith(("PYTHON", "PIP_"))}
    if environ.get("PIP_CONFIG_FILE") == os.devnull:
        env["PIP_CONFIG_FILE"] = os.devnull
    env.update(PIP_USER="0", PIP_REQUIRE_VIRTUALENV="0", PIP_NO_INPUT="1", PIP_DISABLE_PIP_VERSION_CHECK="1")
    return env


def find_pip(candidates: Sequence[Sequence[str]], cwd: str) -> list[str] | None:
    """The first candidate that runs (``pip --version`` exits 0, run in ``cwd``), or None."""
    import subprocess

    for command in candidates:
        try:
            done = subprocess.run(
                [*command, "--version"],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                cwd=cwd,
                env=pip_env(os.environ),
                timeout=PROBE_TIMEOUT_SECONDS,
                check=False,
            )
        except (OSError, subprocess.SubprocessError):
            continue
        if done.returncode == 0:
            return list(command)
    return None


def pip_arguments(target: str, wheels: str | None, version: str | None) -> list[str]:
    """What follows ``pip install`` besides the requirements: ``version`` is given for another interpreter's pip.

    That pip checks Requires-Python against its own interpreter even when told another's (pip issue 12216), so a
    3.10 pip would refuse the 3.11 set for a 3.12 python3; the pins are chosen for ``version``, so it is skipped.
    """
    arguments = ["--no-deps", "--only-binary", ":all:"]
    if version is not None:
        arguments += ["--python-version", version, "--ignore-requires-python"]
    if wheels:
        arguments += ["--no-index", "--find-links", wheels]
    return [*arguments, "--target", target]


def manual_command(pip: Sequence[str], target: str, wheels: str | None = None, version: str | None = None) -> str:
    """The one command that, run by hand, leaves ``target`` complete (``version``: for another interpreter's pip)."""
    import shlex

    specs = [f"{name}=={pinned}" for name, pinned, _digest in PINS]
    return shlex.join([*pip, "install", *pip_arguments(target, wheels, version), *specs])


def _last_error_line(output: str) -> str:
    from session_workflow.core.text import cut_code_points, one_line

    lines = [one_line(line) for line in output.splitlines() if line.strip()]
    errors = [line for line in lines if line.startswith("ERROR")] or lines
    return cut_code_points(errors[0], 200) if errors else "no output"


def _run_pip(pip: Sequence[str], arguments: Sequence[str], staging: str, site: str) -> str | None:
    """Install the pins into ``site``; returns pip's first error line on failure, None on success."""
    import subprocess

    requirements = os.path.join(staging, "requirements.txt")
    with open(requirements, "w", encoding="utf-8") as handle:
        handle.write(requirements_text())
    command = [*pip, "install", "--quiet", "--require-hashes", "--timeout", "20", "--retries", "1", *arguments]
    try:
        done = subprocess.run(
            [*command, "-r", requirements],
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            errors="replace",
            cwd=staging,
            env=pip_env(os.environ),
            timeout=PIP_TIMEOUT_SECONDS,
            check=False,
        )
    except (OSError, subprocess.SubprocessError) as error:
        return f"cannot run pip: {error}"
    if done.returncode != 0:
        return _last_error_line(done.stderr + "\n" + done.stdout)
    return None if is_complete(site) else "pip finished but the packages are not there"


def _stale(names: Sequence[str]) -> list[str]:
    """The install folders among ``names`` that belong to no pin set (older pins); not staging folders."""
    known = {key for _oldest, _pins, key in PIN_SETS}
    return [name for name in names if name not in known and not name.startswith(".")]


def _tidy(parent: str, now: float) -> None:
    """Remove the folders of pins no set has any more and staging folders of killed installs.

    Every set's folder stays: a data folder shared by a 3.10 and a 3.12 interpreter must not reinstall in turn.
    """
    import shutil

    try:
        names = os.listdir(parent)
    except OSError:
        return
    stale = _stale(names)
    for name in names:
        path = os.path.join(parent, name)
        if name.startswith(STAGING_PREFIX):
            try:
                if now - os.stat(path).st_mtime < STALE_STAGING_SECONDS:
                    continue
            except OSError:
                continue
        elif name not in stale:
            continue
        shutil.rmtree(path, ignore_errors=True)


def install(target: str, pips: Sequence[Sequence[str]], wheels: str | None, stderr: TextIO) -> None:
    """Install the pins into ``target`` via a staging folder renamed into place, so a reader never sees half.

    The first pip of ``pips`` that runs does it; ``pips[0]`` is this interpreter's own, any other is told this
    interpreter's version. One line on stderr either way: what was installed where, or why not and the command to
    run. Two processes racing both install; the first rename wins and the other discards its copy.
    """
    import contextlib
    import shutil
    import tempfile
    import time

    what = describe()
    own = list(pips[0])
    parent = os.path.dirname(target)
    try:
        os.makedirs(parent, exist_ok=True)
        previous = _stale(os.listdir(parent))
    except OSError as error:
        raise DependencyError(f"cannot create {parent}: {error.strerror or error}") from error
    staging = tempfile.mkdtemp(prefix=STAGING_PREFIX, dir=parent)
    try:
        pip = find_pip(pips, staging)
        if pip is None:
            shutil.rmtree(staging, ignore_errors=True)
            with contextlib.suppress(OSError):
                os.rmdir(parent)  # nothing to install with: leave no empty folder behind
            raise DependencyError(
                f"cannot install {what}: no pip for {own[0]}, its base interpreter or on PATH; install one"
                f" (`{own[0]} -m ensurepip`, or the system's python3-pip package), then retry"
            )
        version = None if pip == own else python_version()
        site = os.path.join(staging, "site")
        problem = _run_pip(pip, pip_arguments(site, wheels, version), staging, site)
        if problem is not None:
            command = manual_command(pip, target, wheels, version)
            raise DependencyError(f"cannot install {what} ({problem}); run this once, then retry: {command}")
        try:
            os.rename(site, target)
        except OSError:
            if not is_complete(target):
                os.rename(target, os.path.join(staging, "incomplete"))
                os.rename(site, target)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    _tidy(parent, time.time())
    source = f" from {wheels}" if wheels else ""
    if previous:
        print(f"session-workflow: dependency pins changed; reinstalled {what}{source} into {target}", file=stderr)
    else:
        print(f"session-workflow: installed {what}{source} into {target} (once, for the writers)", file=stderr)
    stderr.flush()


class DeferredDependencies:
    """A meta-path finder that installs the pins the first time an import of one of them fails everywhere else."""

    def __init__(
        self,
        plugin_root: str,
        wheels: str | None = None,
        stderr: TextIO | None = None,
        pips: Sequence[Sequence[str]] | None = None,
    ) -> None:
        self.plugin_root = plugin_root
        self.wheels = wheels if wheels is not None else _absolute(os.environ.get(WHEELS_ENV))
        self.stderr = stderr
        self.pips = pips
        self.modules = frozenset(name for name, _version, _digest in PINS)
        self.folder: str | None = None
        self.failure: DependencyError | None = None

    def target(self) -> str:
        folder, refused = data_dir(self.plugin_root, os.environ, os.path.expanduser("~"))
        if refused is not None:
            stderr = self.stderr or sys.stderr
            print(refused, file=stderr)
            stderr.flush()
        return os.path.join(folder, DEPS_FOLDER, pin_key())

    def provide(self) -> str:
        """The folder holding the pins, installing them on first use; raises the same error on every call."""
        if self.failure is not None:
            raise self.failure
        if self.folder is None:
            folder = self.target()
            try:
                if not is_complete(folder):
                    install(folder, self.pips or default_pips(), self.wheels, self.stderr or sys.stderr)
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
    plugin_root: str = PLUGIN_ROOT, wheels: str | None = None, stderr: TextIO | None = None
) -> DeferredDependencies:
    """Register the deferred installer once (last on ``sys.meta_path``, so an importable copy always wins).

    ``cli.main.main`` calls it, so every way in (``bin/session-workflow``, ``python -m session_workflow``, the
    console script) gets it.
    """
    for finder in sys.meta_path:
        if isinstance(finder, DeferredDependencies):
            return finder
    finder = DeferredDependencies(plugin_root, wheels, stderr)
    sys.meta_path.append(finder)
    return finder
