"""Domain-free checks of the machine and settings a session runs with, for ``session-workflow doctor``.

Each check takes the environment and paths it looks at and returns ``Check`` results; ``cli.doctor`` adds the
checks that need the domain (anchors, work state, the writers' dependencies) and prints them. Everything a check
puts in its text that came from the environment or a file is escaped (``core.text.escaped``), so a file name or a
settings value can never draw a line of its own (a forged ✔). Files are read bounded (``core.boundedio``: regular
files only, never a FIFO).
"""

from __future__ import annotations

import os

from session_workflow.core.boundedio import read_text_prefix
from session_workflow.core.config import parse_switch
from session_workflow.core.text import escaped, shell_command

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

OK = "✔"
FAIL = "✘"
# Neither fine nor broken: what a shell cannot know, or what is expected (a stranger's anchor).
INFO = "·"

MIN_PYTHON = (3, 9)
PROBE_TIMEOUT_SECONDS = 10.0
MAX_SETTINGS_BYTES = 1 << 20
PERMISSION_RULE = "Bash(session-workflow:*)"
PLUGIN_NAME = "session-workflow"
# Which settings file wins for a key they share (measured on 2.1.332 with ``enabledPlugins``), first wins.
SETTINGS_PRECEDENCE = ("managed", "project local", "project", "user")
# ``claude plugin enable --scope`` for the file a value came from (managed settings have none).
SCOPES = {"user": "user", "project local": "local", "project": "project"}
TODO_TOOLS_ENV = "CLAUDE_CODE_ENABLE_TODO_TOOLS"
MODEL_ENV = "ANTHROPIC_MODEL"
# The versions per family that have the task tools by default (measured on 2.1.332; a trailing date dropped).
TASK_TOOL_MODELS: dict[str, set[tuple[int, ...]]] = {
    "opus": {(4, 5), (4, 6), (4, 7)},
    "sonnet": {(4,), (4, 0), (4, 5), (4, 6), (5,)},
    "haiku": {(4, 5)},
}
# The first Claude Code build that loads hooks modules (the mod; README, "The system prompt"). The Bash tool
# names its build in AI_AGENT=claude-code_<major>-<minor>-<patch>_agent (measured on 2.1.332).
MOD_MIN_VERSION = (2, 1, 287)
AGENT_ENV = "AI_AGENT"
# Prints the version of whatever python3 is found, a Python 2 included, under the hooks' own flags.
VERSION_PROBE = "import sys; print('%d.%d.%d' % tuple(sys.version_info[:3]))"


class Check:
    """One line of the doctor's screen: a mark, what was found, and how to fix it (or what to do) when any.

    ``essential``: a failure here means the plugin cannot work (the exit code says so).
    """

    __slots__ = ("essential", "fix", "mark", "text")

    def __init__(self, mark: str, text: str, fix: str | None = None, essential: bool = False) -> None:
        self.mark = mark
        self.text = text
        self.fix = fix
        self.essential = essential

    def lines(self) -> list[str]:
        head = [f"{self.mark} {self.text}"]
        if self.fix is None:
            return head
        return [*head, f"  {'fix' if self.mark == FAIL else 'how'}: {self.fix}"]


def which(name: str, env: Mapping[str, str]) -> str | None:
    """``name`` resolved on ``env``'s PATH, as Claude Code's spawn of a hook command (or the Bash tool) would."""
    import shutil

    return shutil.which(name, path=env.get("PATH", os.defpath))


def parse_version(text: str) -> tuple[int, ...] | None:
    """``3.11.4`` → (3, 11, 4); None for anything else."""
    parts = text.strip().split(".")
    if not 2 <= len(parts) <= 3 or not all(part.isascii() and part.isdigit() for part in parts):
        return None
    return tuple(int(part) for part in parts)


def probe_python(python: str) -> str | None:
    """The version ``python -I -S`` reports (the hooks' flags), or None when it does not run or says nothing."""
    import subprocess

    try:
        done = subprocess.run(
            [python, "-I", "-S", "-c", VERSION_PROBE],
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=PROBE_TIMEOUT_SECONDS,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout[:64].decode("ascii", "replace").strip() if done.returncode == 0 else None


def launched_python(launcher: str, env: Mapping[str, str], project: str | None) -> str | None:
    """The python3 ``launcher`` (hooks/python.sh, hooks.json's and the CLI's) picks for a hook of ``project``:
    its own answer to ``--which``, in the environment Claude Code gives a hook (the project as
    ``CLAUDE_PROJECT_DIR`` and working directory). None when it finds none."""
    import subprocess

    given = {**env, "CLAUDE_PROJECT_DIR": project} if project else dict(env)
    try:
        done = subprocess.run(
            ["/bin/sh", launcher, "--which"],
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=PROBE_TIMEOUT_SECONDS,
            check=False,
            env=given,
            cwd=project if project and os.path.isdir(project) else None,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    found = os.fsdecode(done.stdout[:4096]).strip("\n")
    return found if done.returncode == 0 and os.path.isabs(found) else None


def python_check(env: Mapping[str, str], launcher: str | None = None, project: str | None = None) -> Check:
    """The ``python3`` the hooks run (``python3 -I -S``, chosen by ``launcher`` when there is one, else the first
    on PATH): found and 3.9 or newer. Essential."""
    python = launched_python(launcher, env, project) if launcher is not None else which("python3", env)
    fix = "install Python 3.9+ so that `python3` runs it (e.g. apt install python3), first on PATH"
    if python is None:
        where = "on PATH outside the project" if launcher is not None else "on PATH"
        return Check(FAIL, f"python3 for the hooks: none {where}; the hooks cannot run", fix, essential=True)
    reported = probe_python(python)
    version = parse_version(reported) if reported is not None else None
    where = escaped(python)
    if version is None:
        said = f"said {escaped(reported)}" if reported else "did not run"
        return Check(FAIL, f"python3 for the hooks: {where} {said} under -I -S", fix, essential=True)
    shown = ".".join(map(str, version))
    if version[:2] < MIN_PYTHON:
        return Check(FAIL, f"python3 for the hooks: {where} is Python {shown}; they need 3.9+", fix, essential=True)
    return Check(OK, f"python3 for the hooks: {where}, Python {shown}")


def command_check(env: Mapping[str, str], own: str, in_claude_code: bool, runs_from: str | None = None) -> Check:
    """The ``session-workflow`` on PATH is ``own`` (this plugin's bin/session-workflow), not a pip or pipx copy
    that shadows it (its writers and hooks may be another version's). ``runs_from``: the folder Claude Code runs
    the enabled plugin from (``enabled_run_folder``), whose ``bin`` its Bash tool gets, this copy's or not."""
    found = which("session-workflow", env)
    own_dir = escaped(os.path.dirname(own))
    if not os.path.isfile(own):
        where = escaped(found) if found else "none on PATH"
        return Check(INFO, f"session-workflow on PATH: {where}; this copy is an installed package, not a plugin folder")
    if found is not None and os.path.realpath(found) == os.path.realpath(own):
        return Check(OK, f"session-workflow on PATH: {escaped(found)} (this plugin's)")
    if found is not None:
        return Check(
            FAIL,
            f"session-workflow on PATH: {escaped(found)} shadows this plugin's {escaped(own)}",
            f"remove the other copy (pipx uninstall session-workflow, or pip uninstall session-workflow),"
            f" or put {own_dir} first on PATH",
        )
    if in_claude_code:
        return Check(
            FAIL,
            "session-workflow on PATH: none, though this is Claude Code's shell: is the plugin loaded here?",
            f"run `/plugin` in Claude Code; load it with"
            f" `{shell_command('claude', '--plugin-dir', os.path.dirname(os.path.dirname(own)))}` or install it",
        )
    root = os.path.dirname(os.path.dirname(own))
    if runs_from is not None and not _same_path(runs_from, root):
        given = f"{escaped(os.path.join(runs_from, 'bin'))}, the copy it runs (below), not this one's"
        return Check(
            INFO, f"session-workflow on PATH: none in this shell (Claude Code puts {given} on its Bash tool's PATH)"
        )
    return Check(
        INFO,
        f"session-workflow on PATH: none in this shell (Claude Code puts {own_dir} on its Bash tool's PATH)",
    )


def _nearest_existing(folder: str) -> str:
    current = folder
    while not os.path.lexists(current):
        parent = os.path.dirname(current)
        if parent == current:
            break
        current = parent
    return current


def _can_create_in(folder: str) -> str | None:
    """None when a file can be created (and is at once removed) in ``folder``, else why not."""
    import tempfile

    try:
        fd, path = tempfile.mkstemp(prefix=".session-workflow-doctor-", dir=folder)
    except OSError as error:
        return error.strerror or str(error)
    try:
        os.close(fd)
    finally:
        os.unlink(path)
    return None


def writable_check(folder: str | None) -> Check:
    """The trust folder (``core.places.Places.trust``) takes a new file; a folder not made yet, its nearest
    existing parent does (the first write makes it). Nothing is left behind. Essential: without it no anchor
    is ever trusted, so none is injected."""
    what = "trust folder (the anchors' trust records)"
    if folder is None:
        fix = "set HOME (or XDG_STATE_HOME) to an absolute path"
        return Check(FAIL, f"{what}: none: HOME is not an absolute path", fix, essential=True)
    shown = escaped(folder)
    existing = _nearest_existing(folder)
    if not os.path.isdir(existing):
        fix = f"move {escaped(existing)} out of the way"
        return Check(FAIL, f"{what}: {shown} cannot be made: {escaped(existing)} is not a folder", fix, essential=True)
    problem = _can_create_in(existing)
    if problem is not None:
        fix = f"make {escaped(existing)} writable for this user"
        return Check(FAIL, f"{what}: {shown} is not writable ({escaped(problem)})", fix, essential=True)
    if existing != folder:
        return Check(OK, f"{what}: {shown} (made by the first write; {escaped(existing)} is writable)")
    return Check(OK, f"{what}: {shown} (writable)")


class Settings:
    """One settings file Claude Code may read for this workspace, as far as it was readable."""

    __slots__ = ("document", "label", "path", "problem", "trusted_only")

    def __init__(self, label: str, path: str, trusted_only: bool = False) -> None:
        self.label = label
        self.path = path
        # An untrusted workspace drops this file's ``permissions.allow`` (project .claude/settings.json).
        self.trusted_only = trusted_only
        self.document: dict[str, object] = {}
        self.problem: str | None = None

    def load(self) -> Settings:
        """Read the file boundedly; an absent one is empty, an unreadable or invalid one names its problem."""
        import json

        if not os.path.lexists(self.path):
            return self
        read = read_text_prefix(self.path, MAX_SETTINGS_BYTES)
        if read is None or read[1]:
            self.problem = "not a readable file of at most 1 MB"
            return self
        try:
            document = json.loads(read[0])
        except json.JSONDecodeError as error:  # the line a user fixes: a trailing comma after an added line
            self.problem = f"not valid JSON (line {error.lineno}, column {error.colno}: {error.msg})"
            return self
        except (ValueError, RecursionError):
            self.problem = "not valid JSON"
            return self
        if isinstance(document, dict):
            self.document = document
        else:
            self.problem = "not a JSON object"
        return self

    def section(self, key: str) -> dict[str, object]:
        value = self.document.get(key)
        return value if isinstance(value, dict) else {}


def managed_settings_path(platform: str) -> str | None:
    """The managed (organisation) settings file Claude Code reads on ``platform`` (``sys.platform``), where known."""
    if platform.startswith("linux"):
        return "/etc/claude-code/managed-settings.json"
    if platform == "darwin":
        return "/Library/Application Support/ClaudeCode/managed-settings.json"
    return None


def settings_files(config: str, project: str | None, managed: str | None = None) -> list[Settings]:
    """The settings files that apply to ``project``, loaded: the user's, then the project's local and shared ones,
    then the managed one when there is a path for it."""
    files = [Settings("user", os.path.join(config, "settings.json"))]
    if project is not None:
        claude = os.path.join(project, ".claude")
        files.append(Settings("project local", os.path.join(claude, "settings.local.json")))
        files.append(Settings("project", os.path.join(claude, "settings.json"), trusted_only=True))
    if managed is not None:
        files.append(Settings("managed", managed))
    return [item.load() for item in files]


def _json_file(path: str) -> object:
    """The JSON document at ``path`` (bounded), or None when it is absent, unreadable or not JSON."""
    import json

    read = read_text_prefix(path, MAX_SETTINGS_BYTES)
    if read is None or read[1]:
        return None
    try:
        return json.loads(read[0])
    except (ValueError, RecursionError):
        return None


def _object(value: object, key: str) -> dict[str, object]:
    found = value.get(key) if isinstance(value, dict) else None
    return found if isinstance(found, dict) else {}


def _same_path(first: str, second: str) -> bool:
    return os.path.realpath(first) == os.path.realpath(second)


def _enabled(plugin_id: str, files: Sequence[Settings]) -> tuple[object, Settings | None]:
    """The ``enabledPlugins`` value Claude Code takes for ``plugin_id`` and the file it comes from (managed over
    local over project over user); (None, None) when no file names it: then the plugin is off (measured)."""
    for label in SETTINGS_PRECEDENCE:
        for item in files:
            if item.label == label and plugin_id in item.section("enabledPlugins"):
                return item.section("enabledPlugins")[plugin_id], item
    return None, None


def run_folder(config: str, plugin_id: str, entry: Mapping[str, object]) -> str | None:
    """The folder Claude Code runs an installed plugin from: a directory marketplace's own folder (its
    ``marketplace.json`` source for the plugin), else the installed copy (``installPath``)."""
    market = plugin_id.partition("@")[2]
    known = _object(_json_file(os.path.join(config, "plugins", "known_marketplaces.json")), market)
    location = known.get("installLocation")
    if _object(known, "source").get("source") == "directory" and isinstance(location, str):
        if not os.path.isdir(location):  # the clone moved or was deleted: Claude Code fails to load it (cache-miss)
            return os.path.normpath(location)
        manifest = _json_file(os.path.join(location, ".claude-plugin", "marketplace.json"))
        listed = manifest.get("plugins") if isinstance(manifest, dict) else None
        for plugin in listed if isinstance(listed, list) else []:
            source = plugin.get("source") if isinstance(plugin, dict) else None
            if isinstance(plugin, dict) and plugin.get("name") == PLUGIN_NAME and isinstance(source, str):
                return os.path.normpath(os.path.join(location, source))
    path = entry.get("installPath")
    return path if isinstance(path, str) else None


def installed_index(config: str) -> str:
    """Claude Code's record of installed plugins."""
    return os.path.join(config, "plugins", "installed_plugins.json")


def installs(config: str, project: str | None) -> list[tuple[str, Mapping[str, object]]]:
    """(plugin id, install entry) of each install of this plugin that applies to ``project``: user scope, or a
    local or project scope recorded for that folder."""
    applying: list[tuple[str, Mapping[str, object]]] = []
    for plugin_id, entries in _object(_json_file(installed_index(config)), "plugins").items():
        if plugin_id.partition("@")[0] != PLUGIN_NAME or not isinstance(entries, list):
            continue
        for entry in entries:
            where = entry.get("projectPath") if isinstance(entry, dict) else None
            if isinstance(entry, dict) and (
                entry.get("scope") == "user" or (project and isinstance(where, str) and _same_path(where, project))
            ):
                applying.append((plugin_id, entry))
    return applying


def enabled_run_folder(config: str, files: Sequence[Settings], project: str | None) -> str | None:
    """The folder Claude Code runs this plugin from here, when an install that applies is enabled; else None."""
    for plugin_id, entry in installs(config, project):
        if _enabled(plugin_id, files)[0] is True:
            return run_folder(config, plugin_id, entry)
    return None


def plugin_check(config: str, files: Sequence[Settings], project: str | None, root: str, loaded: bool) -> Check:
    """Whether Claude Code has this plugin installed for ``project`` and enabled there, and runs it from ``root``
    (this copy). Installed but disabled is essential (the hooks never run), unless ``loaded``: this shell is
    Claude Code's and has this copy's command (``--plugin-dir``)."""
    what = "Claude Code plugin"
    index = installed_index(config)
    applying = installs(config, project)
    if not applying:
        if loaded:
            return Check(OK, f"{what}: {PLUGIN_NAME} loaded in this session, not installed (--plugin-dir)")
        return Check(
            FAIL,
            f"{what}: {PLUGIN_NAME} is not installed for this project (none in {escaped(index)}); Claude Code runs"
            " none of its hooks here",
            "install it (README, Quick start), or load it for one session: claude --plugin-dir <plugin folder>",
            essential=True,
        )
    disabled: list[tuple[str, Settings | None]] = []
    for plugin_id, entry in applying:
        value, source = _enabled(plugin_id, files)
        if value is not True:
            disabled.append((plugin_id, source))
            continue
        folder = run_folder(config, plugin_id, entry)
        shown = escaped(plugin_id)
        if folder is not None and not os.path.isdir(folder):
            market = plugin_id.partition("@")[2]
            return Check(
                FAIL,
                f"{what}: {shown} is enabled, but the folder Claude Code loads it from, {escaped(folder)}, is gone"
                " (moved or deleted): Claude Code fails to load it (cache-miss) and runs none of its hooks",
                f"{escaped(shell_join(['claude', 'plugin', 'marketplace', 'remove', market]))}, then add the"
                f" marketplace again from where the plugin is now ({escaped(root)}) and install it (README, Quick"
                " start)",
                essential=True,
            )
        if folder is None or _same_path(folder, root):
            return Check(OK, f"{what}: {shown} installed and enabled here, run from {escaped(folder or root)}")
        return Check(
            FAIL,
            f"{what}: {shown} is enabled, but Claude Code runs it from {escaped(folder)}, not this copy"
            f" {escaped(root)}",
            f"run that copy's doctor ({escaped(os.path.join(folder, 'bin', PLUGIN_NAME))} doctor), or install this"
            " folder's marketplace instead",
        )
    plugin_id, source = disabled[0]
    shown = escaped(plugin_id)
    broken = unreadable(files)
    if source is None and broken is not None:
        return Check(
            INFO,
            f"{what}: {shown} is installed; whether it is enabled is unknown while {escaped(broken.path)}"
            " cannot be read (above)",
        )
    if source is None:
        said = f'no settings file that applies here has "{shown}": true in "enabledPlugins"'
    else:
        said = f'"{shown}": {escaped(json_text(source.section("enabledPlugins")[plugin_id]))} in {escaped(source.path)}'
    scope = SCOPES.get(source.label if source is not None else "user")
    fix = (
        f"{escaped(shell_join(['claude', 'plugin', 'enable', plugin_id, '--scope', scope]))}, or set"
        f' "{shown}": true in the "enabledPlugins" object of {escaped(source.path if source else files[0].path)}'
        if scope is not None
        else "your organisation's managed settings turn it off: ask its administrator"
    )
    if loaded:
        return Check(
            FAIL, f"{what}: {shown} runs here from --plugin-dir but is disabled for this project ({said})", fix
        )
    return Check(FAIL, f"{what}: {shown} is installed but disabled for this project ({said})", fix, essential=True)


def json_text(value: object) -> str:
    """A settings value as JSON would show it (``false``, ``"no"``)."""
    import json

    return json.dumps(value)


def shell_join(words: Sequence[str]) -> str:
    """A command line with each word quoted for a POSIX shell."""
    import shlex

    return " ".join(shlex.quote(word) for word in words)


def settings_checks(files: Sequence[Settings]) -> list[Check]:
    """One essential ✘ per settings file that applies here but cannot be read (invalid JSON, with its line): Claude
    Code does not apply such a file, so nothing it sets (``enabledPlugins``, ``env``, ``permissions``) holds."""
    return [
        Check(
            FAIL,
            f"settings: {escaped(item.path)} is {item.problem}; Claude Code applies none of it (enabledPlugins, env,"
            " permissions)",
            "fix the file at that line (a trailing comma or a missing quote?), then run the doctor again",
            essential=True,
        )
        for item in files
        if item.problem is not None
    ]


def unreadable(files: Sequence[Settings]) -> Settings | None:
    """The first settings file that cannot be read: while it is, what it would say is unknown (``settings_checks``
    names it once; no other line fails for it)."""
    return next((item for item in files if item.problem is not None), None)


def _problems(files: Sequence[Settings]) -> str:
    bad = [f"{escaped(item.path)} is {item.problem}" for item in files if item.problem is not None]
    return f" ({'; '.join(bad)})" if bad else ""


def permission_check(files: Sequence[Settings]) -> Check:
    """Whether ``Bash(session-workflow:*)`` is allowed by a settings file that applies here (an unattended run
    needs it: without it each writer call waits for approval)."""
    what = f"permission rule {PERMISSION_RULE}"
    holding = [item for item in files if PERMISSION_RULE in _allowed(item)]
    firm = [item for item in holding if not item.trusted_only]
    if firm:
        return Check(OK, f"{what}: in {escaped(firm[0].path)}{_problems(files)}")
    user = files[0].path if files else "~/.claude/settings.json"
    local = files[1].path if len(files) > 1 else ".claude/settings.local.json"
    broken = unreadable(files)
    if not holding and broken is not None:
        return Check(INFO, f"{what}: unknown while {escaped(broken.path)} cannot be read (above)")
    if holding:
        return Check(
            INFO,
            f"{what}: only in {escaped(holding[0].path)}, which an untrusted workspace ignores{_problems(files)}",
            f"trust the workspace, or put the rule in {escaped(local)} or {escaped(user)}",
        )
    return Check(
        FAIL,
        f"{what}: in no settings file that applies here; each writer call asks for approval{_problems(files)}",
        f'add "{PERMISSION_RULE}" to "permissions": {{"allow": [...]}} in {escaped(user)} (a rule given with'
        " --allowedTools or --settings is not visible from a shell)",
    )


def _allowed(item: Settings) -> list[str]:
    allow = item.section("permissions").get("allow")
    return [rule for rule in allow if isinstance(rule, str)] if isinstance(allow, list) else []


def session_model(env: Mapping[str, str], files: Sequence[Settings]) -> tuple[str, str] | None:
    """The model a session here starts with, as far as a shell can see, and where that is set:
    ``ANTHROPIC_MODEL`` in this shell, else a settings file's ``model`` or ``env.ANTHROPIC_MODEL`` (managed over
    local over project over user). None: Claude Code's default (or a ``--model`` no shell can see)."""
    if env.get(MODEL_ENV):
        return env[MODEL_ENV], "this shell"
    for label in SETTINGS_PRECEDENCE:
        for item in files:
            if item.label != label:
                continue
            for value in (item.section("env").get(MODEL_ENV), item.document.get("model")):
                if isinstance(value, str) and value:
                    return value, item.path
    return None


def model_version(model: str, family: str) -> tuple[int, ...] | None:
    """The version in a model id after ``claude-<family>-`` (``claude-opus-4-5-20251101`` → (4, 5), the date
    dropped; a Bedrock or Vertex name alike), or None when the id is not of that family."""
    key = f"claude-{family}-"
    at = model.find(key)
    if at < 0:
        return None
    version: list[int] = []
    for part in model[at + len(key) :].split("-"):
        digits = part.split("@")[0].split(":")[0].split("[")[0]
        if not digits.isascii() or not digits.isdigit() or len(digits) >= 8:
            break
        version.append(int(digits))
    return tuple(version)


def has_task_tools_by_default(model: str) -> bool:
    """Whether Claude Code 2.1.332 offers TaskCreate/TaskUpdate to ``model`` without ``CLAUDE_CODE_ENABLE_TODO_TOOLS``
    (measured per model): the 3.x models, claude-opus-4-5 to 4-7, claude-sonnet-4 to 4-6 and 5, claude-haiku-4-5.
    Not claude-opus-4, 4-0 and 4-1 (Claude Code sends claude-opus-5-5 for them), nor the aliases (``opus``,
    ``sonnet`` name the newest), nor any later model."""
    lowered = model.lower()
    if "claude-3" in lowered:
        return True
    version = {family: model_version(lowered, family) for family in TASK_TOOL_MODELS}
    return any(found is not None and found in TASK_TOOL_MODELS[family] for family, found in version.items())


def task_tools_check(env: Mapping[str, str], files: Sequence[Settings]) -> Check:
    """Whether Claude Code's task tools are on: ``CLAUDE_CODE_ENABLE_TODO_TOOLS`` in this shell or in a settings
    file's ``env``; unset, they are on only up to the 4.x models, so ✘ when the session's model is a later one
    (Claude Code's default is)."""
    found = [("this shell", env.get(TODO_TOOLS_ENV))]
    found += [(item.path, _env_value(item)) for item in files]
    where, raw = next(((where, raw) for where, raw in found if raw is not None), ("", None))
    setting = parse_switch(raw) if raw is not None else None
    user = files[0].path if files else "~/.claude/settings.json"
    opt_in = f'add "{TODO_TOOLS_ENV}": "1" to the "env" object of {escaped(user)}'
    if raw is not None and setting is not None:
        shown = f"{TODO_TOOLS_ENV}={escaped(raw)} in {escaped(where)}"
        if setting:
            return Check(OK, f"task tools: on ({shown})")
        return Check(FAIL, f"task tools: off ({shown}): the run's open tasks are not kept", f"remove it, or {opt_in}")
    said = f"={escaped(raw)} in {escaped(where)} is not on or off" if raw is not None else " unset"
    broken = unreadable(files)
    if raw is None and broken is not None:
        return Check(INFO, f"task tools: unknown while {escaped(broken.path)} cannot be read (above)")
    model = session_model(env, files)
    if model is not None and has_task_tools_by_default(model[0]):
        shown = f"{escaped(model[0])} (in {escaped(model[1])})"
        return Check(
            INFO, f"task tools: on by default for {shown}; {TODO_TOOLS_ENV}{said}", f"on a later model, {opt_in}"
        )
    named = f"the model {escaped(model[0])} (in {escaped(model[1])})" if model else "Claude Code's default model"
    return Check(
        FAIL,
        f"task tools: off: {TODO_TOOLS_ENV}{said}, and {named} is past the 4.x line; the run's open tasks are not kept",
        f"{opt_in} (a --model of 4.x or earlier has them without it)",
    )


def _env_value(item: Settings) -> str | None:
    value = item.section("env").get(TODO_TOOLS_ENV)
    return value if isinstance(value, str) else None


def agent_version(agent: str | None) -> tuple[int, int, int] | None:
    """The Claude Code build the Bash tool names in ``AI_AGENT`` (``claude-code_2-1-332_agent``), else None."""
    if not agent or not agent.startswith("claude-code_"):
        return None
    fields = agent[len("claude-code_") :].split("_")
    parts = fields[0].split("-") if len(fields) > 1 else []
    if len(parts) != 3 or not all(part.isascii() and part.isdigit() and len(part) <= 6 for part in parts):
        return None
    return int(parts[0]), int(parts[1]), int(parts[2])


def mod_check(env: Mapping[str, str]) -> Check:
    """Whether the mod (the work state in the system prompt, the status line, the nudge) can be loaded here.

    A shell cannot see it: the mod leaves no mark outside Claude Code's process, so this says what the build
    allows and how to look, never a guess. Without it the SessionStart hook delivers the work state itself.
    """
    what = "mod (work state in the system prompt, status line)"
    how = "in Claude Code, `/plugin` shows whether session-workflow's hooks module loaded"
    version = agent_version(env.get(AGENT_ENV))
    if version is None:
        return Check(INFO, f"{what}: unknown (not Claude Code's Bash tool)", how)
    shown = ".".join(map(str, version))
    if version < MOD_MIN_VERSION:
        return Check(
            FAIL,
            f"{what}: Claude Code {shown} predates hooks modules (2.1.287); the hooks deliver the work state",
            "update Claude Code (`claude update`)",
        )
    return Check(INFO, f"{what}: unknown (Claude Code {shown} can load it; a shell cannot see whether it did)", how)
