"""What a hook knows about the session it runs in, read once from the payload and the environment.

Everything here is cheap: the hot path builds one HookContext per run and every part reads from it. The
environment became the run's ``places`` (``core.places.Places``) at the entry (``hook.io.run_hook``, the CLI's
``main``): its folders are resolved there, once, on first use.
"""

from __future__ import annotations

from session_workflow.core.where import project_dir

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping

    from session_workflow.core.places import Places

# The field our mod's classic.SessionStart handler adds to the command hook's stdin, the one reliable way for the
# Python SessionStart hook to know the mod is loaded and delivers the work-state section.
MOD_PAYLOAD_KEY = "session_workflow_mod"

SOURCES = ("startup", "resume", "clear", "compact", "fork")

MAX_IDLE_SECONDS = 1000 * 365 * 86400.0


def _string(payload: Mapping[str, object], key: str) -> str | None:
    value = payload.get(key)
    return value if isinstance(value, str) and value and "\x00" not in value else None


def _seconds(payload: Mapping[str, object], key: str) -> float | None:
    value = payload.get(key)
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value) if 0 <= value < MAX_IDLE_SECONDS else None  # NaN fails both comparisons


class HookContext:
    """The parsed hook payload plus the run's places (from the environment) and the hook's start time."""

    __slots__ = (
        "_project",
        "cwd",
        "dry_run",
        "event",
        "idle_seconds",
        "mod_active",
        "now",
        "places",
        "session_id",
        "source",
        "transcript_path",
    )

    def __init__(
        self,
        *,
        event: str | None,
        source: str | None,
        session_id: str | None,
        cwd: str | None,
        transcript_path: str | None,
        mod_active: bool,
        places: Places,
        now: float,
        idle_seconds: float | None = None,
        project: str | None = None,
    ) -> None:
        self.event = event
        self.source = source
        self.session_id = session_id
        self.cwd = cwd
        self.transcript_path = transcript_path
        self.mod_active = mod_active
        self.places = places
        self.now = now
        # ``seconds_since_last_response`` (resume and fork): how long the conversation sat idle before this start.
        self.idle_seconds = idle_seconds
        # A CLI command that shows what a hook would do names the project; a hook finds it (``project_dir``).
        self._project: str | bool | None = project or False
        # A dry run (``inject --dry-run``) shows what the hook would inject and changes nothing on disk.
        self.dry_run = False

    @classmethod
    def from_payload(
        cls, payload: Mapping[str, object], places: Places, now: float, project: str | None = None
    ) -> HookContext:
        """Build the context; any field that is not a non-empty string (or, for the idle time, a number of seconds
        from 0 to a thousand years) is treated as absent."""
        marker = payload.get(MOD_PAYLOAD_KEY)
        return cls(
            event=_string(payload, "hook_event_name"),
            source=_string(payload, "source"),
            session_id=_string(payload, "session_id"),
            cwd=_string(payload, "cwd"),
            transcript_path=_string(payload, "transcript_path"),
            mod_active=marker is True or (type(marker) is int and marker == 1),
            places=places,
            now=now,
            idle_seconds=_seconds(payload, "seconds_since_last_response"),
            project=project,
        )

    def project_dir(self) -> str | None:
        """The session's project (``core.where.project_dir``: the folder Claude Code treats as the project,
        whatever subfolder the model ``cd``'d into), or None when not even the cwd is a folder."""
        if self._project is False:
            self._project = project_dir(self.places, self.cwd, self.transcript_path, hook=True)
        return self._project if isinstance(self._project, str) else None

    def project_dirs(self) -> list[str]:
        """The project as a list (empty without one), for the parts that look at each of a session's folders."""
        project = self.project_dir()
        return [project] if project else []
