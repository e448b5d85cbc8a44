"""The plugin's user options, read one way by the hooks and the CLI: hot-path safe (no imports beyond core.text).

Each option is a ``userConfig`` field of ``.claude-plugin/plugin.json`` (``claude plugin configure``, the
``/config`` menu). Claude Code exports a field the user has set to hooks as ``CLAUDE_PLUGIN_OPTION_<KEY>`` (the
key upper-cased; a boolean as ``true``/``false``, a number as written) and exports nothing for a field left at
its default (measured on 2.1.332), so the defaults live here as well and a test holds them equal to the
manifest's. ``SESSION_WORKFLOW_<KEY>`` overrides the option: it works where no option reaches (the Bash tool's
shell, a test, a one-off run). A value that does not parse counts as the default and is named by ``problems``,
once, in whatever the caller shows (the injected block, the CLI), never raised.
"""

from __future__ import annotations

from session_workflow.core.text import cut_code_points, one_line

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping, Sequence

    from session_workflow.core.places import Places

OPTION_PREFIX = "CLAUDE_PLUGIN_OPTION_"
OVERRIDE_PREFIX = "SESSION_WORKFLOW_"
SHOWN_VALUE_POINTS = 40
MAX_HOURS = 8760.0  # a year: past that, a window is no longer a window

_TRUE = frozenset(("1", "true", "yes", "on"))
_FALSE = frozenset(("0", "false", "no", "off"))


def parse_switch(text: str) -> bool | None:
    """``1/true/yes/on`` or ``0/false/no/off`` in any case; None for anything else."""
    word = text.strip().lower()
    return True if word in _TRUE else False if word in _FALSE else None


def parse_hours(text: str) -> float | None:
    """A finite number of hours from 0 to 8,760; None otherwise."""
    try:
        hours = float(text.strip())
    except ValueError:
        return None
    return hours if 0.0 <= hours <= MAX_HOURS else None  # NaN fails both comparisons


class Option:
    """One user option: its manifest key, default (and how to say it), parser and what a valid value is."""

    __slots__ = ("default", "default_text", "expected", "key", "parse")

    def __init__(
        self, key: str, default: object, default_text: str, parse: Callable[[str], object | None], expected: str
    ) -> None:
        self.key = key
        self.default = default
        self.default_text = default_text
        self.parse = parse
        self.expected = expected

    def names(self) -> tuple[str, str]:
        """The environment variables read, the override first."""
        upper = self.key.upper()
        return OVERRIDE_PREFIX + upper, OPTION_PREFIX + upper


ANCHOR_HOOKS = Option("anchor_hooks", True, "on", parse_switch, "on or off (true/false, 1/0)")
STARTUP_WINDOW_HOURS = Option("startup_window_hours", 6.0, "6 h", parse_hours, "a number of hours from 0 to 8760")
# The run record after a compaction or a resume (issue 43): off compares a block without it to the full block.
RUN_RECORD = Option("run_record", True, "on", parse_switch, "on or off (true/false, 1/0)")
# Every option the hooks read, in the manifest's order.
HOOK_OPTIONS: tuple[Option, ...] = (ANCHOR_HOOKS, STARTUP_WINDOW_HOURS, RUN_RECORD)


def lookup(option: Option, env: Mapping[str, str]) -> tuple[object, str | None]:
    """The option's value and, when the variable that set it did not parse, the one line that says so.

    An empty variable counts as unset (a shell's ``X=`` is how one clears an override).
    """
    for name in option.names():
        raw = env.get(name)
        if raw is None or not raw.strip():
            continue
        parsed = option.parse(raw)
        if parsed is not None:
            return parsed, None
        shown = cut_code_points(one_line(raw), SHOWN_VALUE_POINTS)
        fallback = f"using the default, {option.default_text}"
        return option.default, f"session-workflow: ignored {name}={shown!r}: not {option.expected}; {fallback}."
    return option.default, None


def problems(env: Mapping[str, str], options: Sequence[Option] = HOOK_OPTIONS) -> list[str]:
    """One line per option whose variable did not parse (the default was used instead)."""
    return [problem for problem in (lookup(option, env)[1] for option in options) if problem is not None]


MAX_SETTINGS_BYTES = 1 << 20


def switched_off_by(option: Option, env: Mapping[str, str]) -> tuple[str, str] | None:
    """(the variable, its value) that switched ``option`` off, or None when it is on (or off by default)."""
    for name in option.names():
        raw = env.get(name)
        if raw is None or not raw.strip():
            continue
        return (name, raw) if option.parse(raw) is False else None
    return None


def _settings(path: str) -> dict[str, object]:
    """A settings file's top object, read boundedly (hot-path safe: ``core.jsonload``); {} for anything else."""
    from session_workflow.core.boundedio import read_prefix
    from session_workflow.core.jsonload import loads

    read = read_prefix(path, MAX_SETTINGS_BYTES)
    if read is None or read[1] > MAX_SETTINGS_BYTES:
        return {}
    try:
        document = loads(read[0])
    except (ValueError, RecursionError):
        return {}
    return document if isinstance(document, dict) else {}


def _names(document: dict[str, object], option: Option, name: str) -> bool:
    """Whether a settings document sets ``name`` in its ``env`` block, or (an option's variable) the option in a
    ``pluginConfigs`` entry, which Claude Code exports as ``CLAUDE_PLUGIN_OPTION_<KEY>``."""
    env = document.get("env")
    if isinstance(env, dict) and name in env:
        return True
    configs = document.get("pluginConfigs")
    if not name.startswith(OPTION_PREFIX) or not isinstance(configs, dict):
        return False
    for entry in configs.values():
        options = entry.get("options") if isinstance(entry, dict) else None
        if isinstance(options, dict) and option.key in options:
            return True
    return False


def where_set(option: Option, name: str, project_dirs: Sequence[str], config_dir: str | None) -> str:
    """Where ``name`` was set, as far as a hook can tell: the environment it got cannot say whether a project's
    ``env`` block, the user's settings or the shell set a variable, so the settings files that name it are named
    (the project's first: a repository's file can switch a part off), else what it may have been."""
    import os

    files = [
        (os.path.join(folder, ".claude", leaf), f"this project's .claude/{leaf}")
        for folder in project_dirs
        for leaf in ("settings.json", "settings.local.json")
    ]
    if config_dir is not None:
        files.append((os.path.join(config_dir, "settings.json"), "the user's settings.json"))
    naming = []
    for path, label in files:
        if label not in naming and _names(_settings(path), option, name):
            naming.append(label)
    if naming:
        return "set in the environment by " + " and ".join(naming)
    if name.startswith(OPTION_PREFIX):
        return (
            f"set in the environment, possibly by Claude Code from the plugin's {option.key} option or by a"
            " settings file this hook cannot see"
        )
    return "set in the environment (the shell Claude Code started from, or a settings env block this hook cannot see)"


def switched_off_line(option: Option, label: str, places: Places, project_dirs: Sequence[str]) -> str | None:
    """The one line that says the part ``option`` switches off (``label``: what it shows), which this session keeps,
    is switched off: by which variable and where it is set; never the part itself. None when it is on: costs
    nothing then. A part's registry entry names its option (``hook.parts.Part.switch``)."""
    found = switched_off_by(option, places.env)
    if found is None:
        return None
    name, raw = found
    shown = cut_code_points(one_line(raw), SHOWN_VALUE_POINTS)
    where = where_set(option, name, project_dirs, places.config)
    return f"session-workflow: this session's {label} is not shown: {name}={shown!r} switches it off, {where}."
