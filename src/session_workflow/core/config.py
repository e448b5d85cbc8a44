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
# Every option the hooks read, in the manifest's order.
HOOK_OPTIONS: tuple[Option, ...] = (ANCHOR_HOOKS, STARTUP_WINDOW_HOURS)


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


def switch(option: Option, env: Mapping[str, str]) -> bool:
    return lookup(option, env)[0] is True


def hours(option: Option, env: Mapping[str, str]) -> float:
    value = lookup(option, env)[0]
    assert isinstance(value, float)  # parse_hours and the hours defaults give floats
    return value


def problems(env: Mapping[str, str], options: Sequence[Option] = HOOK_OPTIONS) -> list[str]:
    """One line per option whose variable did not parse (the default was used instead)."""
    return [problem for problem in (lookup(option, env)[1] for option in options) if problem is not None]
