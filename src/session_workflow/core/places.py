"""Where this run's folders are: the one value every hook and command takes in place of the raw environment.

Built once at each entry (the hook context, ``core.context.HookContext.from_payload``; the CLI's ``main``) from
the environment, and handed down. Each folder is resolved on first use and kept: a SessionStart in a project with
nothing of ours asks for none of them, and one that needs the state folder three times (trust records, ledger,
error log) walks the rule once. The rules themselves (which variable counts, which a project's ``env`` block can
set: see ``core``'s docstring) live here alone; ``core.locations`` keeps the names and the per-project paths.

Only this class reads a folder variable; ``env`` stays reachable for the code that reads a variable's own value
(the user options, ``core.config``; the Bash tool's session and list ids). Hot-path safe: ``os`` and
``core.locations`` only, ``core.folders`` (lstat calls) when an ownership check is asked for.
"""

from __future__ import annotations

import os
import sys

from session_workflow.core.locations import (
    APP_NAME,
    CONFIG_ENV,
    KEPT_FOLDER,
    PLUGIN_DATA_ENV,
    PROJECT_ENV,
    RECORDS_FOLDER,
    SESSION_ENV,
    TRUST_FOLDER,
    is_inside,
    record_name,
    safe_name,
    shown,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping, Sequence

    from session_workflow.core.config import Option
    from session_workflow.core.folders import Problem

# Set over any env block in Claude Code's Bash tool, and in its hooks (measured): a CLI command that sees it runs
# in the Bash tool (a hook knows it is one).
BASH_TOOL_ENV = "CLAUDECODE"
LIST_ID_ENV = "CLAUDE_CODE_TASK_LIST_ID"
ERROR_LOG_NAME = "errors.jsonl"
LEDGER_NAME = "ledger.ndjson"


def _absolute(value: str) -> str | None:
    return value if os.path.isabs(value) and "\x00" not in value else None


def _real(path: str) -> str | None:
    """``path`` resolved; None for the empty path or one the file system cannot hold."""
    try:
        os.fsencode(path)  # a lone surrogate: 3.11 realpath raises for it, 3.9 hands it back unresolved
        return os.path.realpath(path) if path else None
    except (OSError, ValueError):
        return None


class Places:
    """The run's folders from one environment, each resolved on first use (None where there is none)."""

    __slots__ = ("_known", "env", "platform")

    def __init__(self, env: Mapping[str, str], platform: str = sys.platform) -> None:
        # Read only for a variable's own value: the options (``core.config``), the ids the Bash tool sets.
        self.env = env
        self.platform = platform
        self._known: dict[str, str | None] = {}

    def _once(self, key: str, compute: Callable[[], str | None]) -> str | None:
        known = self._known
        if key not in known:
            known[key] = compute()
        return known[key]

    def real(self, path: str) -> str | None:
        """``path`` resolved (None for the empty path or one the file system cannot hold), once per run: a
        SessionStart asks whether the same few folders lie in the project a dozen times, each a walk of lstat
        calls in Python."""
        return self._once("\x00" + path, lambda: _real(path))  # no folder's key: a path holds no NUL

    @property
    def in_bash_tool(self) -> bool:
        """True for a command run from Claude Code (its Bash tool), where ``CLAUDE_PROJECT_DIR`` can only come from
        a settings ``env`` block."""
        return self.env.get(BASH_TOOL_ENV) == "1"

    @property
    def home(self) -> str | None:
        """The user's home when absolute (no ``~`` without one: a test's environment never reaches the real one)."""
        return self._once("home", lambda: _absolute(self.env.get("HOME", "")))

    @property
    def config(self) -> str | None:
        """Claude Code's configuration folder: ``CLAUDE_CONFIG_DIR`` when absolute, else ``~/.claude`` (None without a
        home). A project's ``env`` block cannot set either (Claude Code drops CLAUDE_CONFIG_DIR, HOME and XDG_*
        there); a relative CLAUDE_CONFIG_DIR is ignored and named by ``ignored_folders``."""

        def compute() -> str | None:
            given = _absolute(self.env.get(CONFIG_ENV, ""))
            home = self.home
            return given or (os.path.join(home, ".claude") if home is not None else None)

        return self._once("config", compute)

    def config_or(self, home: str) -> str:
        """``config`` with ``home`` for ``~`` (the CLI's home, never None)."""
        return _absolute(self.env.get(CONFIG_ENV, "")) or os.path.join(home, ".claude")

    @property
    def state(self) -> str | None:
        """The user's state folder for this plugin: platformdirs' ``user_state_dir("session-workflow")`` (the tests'
        oracle; not shipped) computed from the environment alone, so the hooks (``python3 -I -S``: no platformdirs),
        the CLI in the Bash tool and in a terminal, and the mod find the same folder. ``XDG_STATE_HOME`` when
        absolute (on macOS too), else ``$HOME/.local/state`` (macOS: ``$HOME/Library/Application Support``).
        Without an absolute ``HOME`` either it is None where platformdirs would ask the password database: the mod
        cannot, and a test's environment never reaches the real home. A project's ``env`` block can set neither
        (Claude Code drops ``HOME`` and ``XDG_*`` there), so it lies outside the repository."""

        def compute() -> str | None:
            given = self.env.get("XDG_STATE_HOME", "")
            home = self.env.get("HOME", "")
            if given.startswith("/"):
                base = given
            elif home.startswith("/"):
                tail = "/Library/Application Support" if self.platform == "darwin" else "/.local/state"
                base = home.rstrip("/") + tail
            else:
                return None
            return os.path.join(base, APP_NAME) if "\x00" not in base else None

        return self._once("state", compute)

    @property
    def top(self) -> str | None:
        """Where the user's own chain of folders starts for the state folders: ``XDG_STATE_HOME`` when absolute
        (the state root), else the home (None without one). Neither can a project's ``env`` block set."""

        def compute() -> str | None:
            return _absolute(self.env.get("XDG_STATE_HOME", "")) or self.home

        return self._once("top", compute)

    def _below_state(self, name: str) -> str | None:
        state = self.state
        return os.path.join(state, name) if state else None

    @property
    def trust(self) -> str | None:
        """Where the anchor trust and affinity records live (``anchor.registry``), under ``state``."""
        return self._once("trust", lambda: self._below_state(TRUST_FOLDER))

    @property
    def error_log(self) -> str | None:
        """The error log (``core.errorlog``), under ``state``."""
        return self._once("error_log", lambda: self._below_state(ERROR_LOG_NAME))

    @property
    def ledger(self) -> str | None:
        """The compaction ledger (``core.ledger``), under ``state``."""
        return self._once("ledger", lambda: self._below_state(LEDGER_NAME))

    @property
    def tasks_root(self) -> str | None:
        """Claude Code's own task store, ``<config>/tasks`` (a relative ``CLAUDE_CONFIG_DIR`` is ignored, and no
        ``env`` block can set it); None without a home."""
        return self._once("tasks_root", lambda: os.path.join(self.config, "tasks") if self.config else None)

    def task_list_name(self, session_id: str | None) -> str | None:
        """The folder name of the session's task list: ``CLAUDE_CODE_TASK_LIST_ID``, else the session id, as Claude
        Code maps an id to a name (``safe_name``, UTF-16 units)."""
        raw = self.env.get(LIST_ID_ENV) or session_id
        return safe_name(raw, utf16=True) if raw else None

    def task_list_dir(self, session_id: str | None) -> str | None:
        """``<tasks_root>/<task_list_name>``: where Claude Code keeps this session's tasks (None when either is)."""
        root = self.tasks_root
        name = self.task_list_name(session_id)
        return os.path.join(root, name) if root is not None and name is not None else None

    def kept_index(self, session_id: str | None) -> str | None:
        """The file listing the anchors ``session_id`` wrote or adopted (None without a session or a state dir)."""
        folder = self.trust if session_id else None
        if folder is None or not session_id:
            return None
        return os.path.join(folder, KEPT_FOLDER, record_name(session_id)[: -len(".key")] + ".json")

    def foreign(self, folder: str, below_home: bool = False) -> Problem | None:
        """The one ownership check (``core.folders.foreign_level``) for a folder the plugin reads as authority, up
        to ``top`` (``below_home``: up to the home, for a folder under Claude Code's): the first level not the
        user's alone, or None (remembered per folder)."""
        from session_workflow.core.folders import foreign_level

        return foreign_level(folder, self.env.get("HOME") if below_home else self.top)

    def containing_project(self, path: str, project_dirs: Sequence[str]) -> str | None:
        """The first project dir (resolved) that ``path`` resolves inside, or None.

        A project dir that is the home folder or lies above it (a session run in ``~`` or ``/``) counts as none: its
        ``.claude/settings.json`` is the user's own settings file, and every user-level folder lies below it.
        Claude Code's configuration folder, where it puts CLAUDE_PLUGIN_DATA, is never inside one.
        """
        real = self.real(path)
        if real is None:  # no such name can exist (a lone surrogate): it is no folder of anyone's
            return None
        config = self.real(self.config or "")
        if config is not None and is_inside(real, config):
            return None
        home = self.env.get("HOME", "")
        real_home = self.real(home) if os.path.isabs(home) else None
        for folder in project_dirs:
            base = self.real(folder)
            if base is None or (real_home is not None and is_inside(real_home, base)):
                continue
            if is_inside(real, base):
                return base
        return None

    def outside_projects(self, path: str, project_dirs: Sequence[str]) -> bool:
        """True when ``path`` is absolute and resolves inside no project dir (``containing_project``).

        For a folder variable a project's ``env`` block can set whose content the plugin takes as authority: a
        folder inside the repository would be the repository's own content.
        """
        if not os.path.isabs(path) or "\x00" in path or self.real(path) is None:
            return False
        return self.containing_project(path, project_dirs) is None

    def records(self, project_dirs: Sequence[str]) -> str | None:
        """The folder of per-session delivery records under CLAUDE_PLUGIN_DATA (None when that is not set, or not
        an absolute path outside the project: ``outside_projects``)."""
        base = self.env.get(PLUGIN_DATA_ENV)
        return os.path.join(base, RECORDS_FOLDER) if base and self.outside_projects(base, project_dirs) else None

    def ignored_folders(self, project_dirs: Sequence[str]) -> list[str]:
        """One line per folder variable the hooks ignore: a relative ``CLAUDE_CONFIG_DIR`` or ``XDG_STATE_HOME``
        (the task store, the trust records), a ``CLAUDE_PLUGIN_DATA`` that is not absolute or lies in the project
        (the delivery records). Hot-path safe: ``core.text`` is imported only to show such a value."""
        lines = []
        for name, accepted in (
            (CONFIG_ENV, os.path.isabs),
            ("XDG_STATE_HOME", os.path.isabs),
            (PLUGIN_DATA_ENV, lambda path: self.outside_projects(path, project_dirs)),
        ):
            value = self.env.get(name)
            if value and not accepted(value):
                lines.append(
                    f"session-workflow: ignored {name}={shown(value)}: not an absolute path outside the project."
                )
        return lines

    def ignored_project(self) -> str | None:
        """The line that says why ``CLAUDE_PROJECT_DIR`` was ignored (or None): in the Bash tool a value came from a
        settings ``env`` block, a repository's one included, and would aim the writers at another project's
        anchors and work state."""
        given = self.env.get(PROJECT_ENV, "")
        if given and self.in_bash_tool:
            return f"session-workflow: ignored {PROJECT_ENV}={shown(given)}: Claude Code sets it for hooks, not here."
        return None

    def project_variable(self, hook: bool) -> str | None:
        """``CLAUDE_PROJECT_DIR`` when it may name the project (in a hook, or outside the Bash tool), else None."""
        return self.env.get(PROJECT_ENV) if hook or not self.in_bash_tool else None

    @property
    def session(self) -> str:
        """The session id Claude Code sets over any env block in its Bash tool (``CLAUDE_CODE_SESSION_ID``)."""
        return self.env.get(SESSION_ENV, "")

    def option(self, option: Option) -> object:
        """A user option's value (``core.config.lookup``)."""
        from session_workflow.core.config import lookup

        return lookup(option, self.env)[0]

    def switch(self, option: Option) -> bool:
        """A switch option: on or off."""
        return self.option(option) is True

    def hours(self, option: Option) -> float:
        """An option of hours."""
        value = self.option(option)
        assert isinstance(value, float)  # parse_hours and the hours defaults give floats
        return value
