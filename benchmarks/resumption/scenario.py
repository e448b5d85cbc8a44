"""The scenario file: its documented JSON format (README.md, "Scenario format"), read and checked.

Every field the harness uses is checked here, with the scenario's id and the field's path in the message, so a
file written by someone else either runs as written or is refused before the model is loaded.
"""

from __future__ import annotations

import json

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

FORMAT = "resumption-scenarios/v1"
TOOLS = ("Bash", "Edit", "Write")
STATUSES = ("pending", "in_progress", "completed")


class ScenarioError(ValueError):
    """A scenario file that does not follow the format; the message names the scenario and the field."""


class Action:
    """One tool call the run made before the compaction, and what it returned."""

    __slots__ = (
        "background",
        "check",
        "command",
        "content",
        "exit",
        "file_path",
        "job_id",
        "match",
        "new",
        "old",
        "output",
        "tool",
    )

    def __init__(self, raw: dict[str, Any], where: str) -> None:
        self.tool = _choice(raw, "tool", TOOLS, where)
        self.output = _text(raw, "output", where, "")
        self.exit = _int(raw, "exit", where, 0)
        self.background = _bool(raw, "background", where, False)
        self.check = _bool(raw, "check", where, False)
        self.job_id = _text(raw, "id", where, "")
        self.command = self.file_path = self.old = self.new = self.content = ""
        if self.tool == "Bash":
            self.command = _text(raw, "command", where)
        else:
            self.file_path = _text(raw, "file_path", where)
            if self.tool == "Edit":
                self.old, self.new = _text(raw, "old_string", where), _text(raw, "new_string", where)
            else:
                self.content = _text(raw, "content", where)
        if self.background and (self.tool != "Bash" or not self.job_id):
            raise ScenarioError(f"{where}: a background action is a Bash command with an id")
        default = [self.command] if self.tool == "Bash" else [self.file_path]
        self.match = _match(raw.get("match", default), f"{where}.match")

    def is_step(self) -> bool:
        """A state-changing step done before the compaction (redoing it is a *redo*)."""
        return not self.background and not self.check


class Target:
    """An action the grader looks for: a tool (Bash or an edit of a file) and the substrings that identify it."""

    __slots__ = ("match", "tool")

    def __init__(self, raw: object, where: str) -> None:
        if not isinstance(raw, dict):
            raise ScenarioError(f"{where}: expected an object")
        self.tool = _choice(raw, "tool", ("Bash", "Edit"), where)
        key = "command" if self.tool == "Bash" else "file_path"
        default = [_text(raw, key, where)] if key in raw else None
        if "match" not in raw and default is None:
            raise ScenarioError(f"{where}: needs {key} or match")
        self.match = _match(raw.get("match", default), f"{where}.match")


class Scenario:
    """One resumption case: the project, what the run did, what Claude Code's summary kept, what comes next."""

    __slots__ = (
        "actions",
        "anchor_after",
        "anchor_task",
        "anchor_text",
        "domain",
        "files",
        "forbidden",
        "id",
        "language",
        "next",
        "project",
        "prompt",
        "rule",
        "summary",
        "tasks",
    )

    def __init__(self, raw: object, index: int) -> None:
        if not isinstance(raw, dict):
            raise ScenarioError(f"scenario {index}: expected an object")
        self.id = _text(raw, "id", f"scenario {index}")
        where = f"scenario {self.id!r}"
        self.domain = _text(raw, "domain", where, "")
        self.language = _text(raw, "language", where, "")
        self.project = _text(raw, "project", where, "project")
        if not self.project.replace("-", "").replace("_", "").isalnum():
            raise ScenarioError(f"{where}.project: letters, digits, - and _ only")
        self.prompt = _text(raw, "prompt", where)
        self.summary = _text(raw, "summary", where)
        files = raw.get("files", {})
        if not isinstance(files, dict) or not all(isinstance(v, str) for v in files.values()):
            raise ScenarioError(f"{where}.files: an object of relative path to text")
        for path in files:
            if path.startswith("/") or ".." in path.split("/") or not path:
                raise ScenarioError(f"{where}.files: {path!r} is not a relative path inside the project")
        self.files: dict[str, str] = files
        actions = raw.get("actions")
        if not isinstance(actions, list) or not actions:
            raise ScenarioError(f"{where}.actions: a non-empty list")
        self.actions = [Action(item, f"{where}.actions[{i}]") for i, item in enumerate(actions)]
        anchor = raw.get("anchor")
        self.anchor_after: int | None = None
        self.anchor_task = self.anchor_text = ""
        if anchor is not None:
            if not isinstance(anchor, dict):
                raise ScenarioError(f"{where}.anchor: an object")
            self.anchor_after = _int(anchor, "after", f"{where}.anchor")
            if not 0 <= self.anchor_after <= len(self.actions):
                raise ScenarioError(f"{where}.anchor.after: 0 to the number of actions")
            self.anchor_task = _text(anchor, "task", f"{where}.anchor")
            self.anchor_text = _text(anchor, "text", f"{where}.anchor")
        tasks = raw.get("tasks", [])
        if not isinstance(tasks, list):
            raise ScenarioError(f"{where}.tasks: a list")
        self.tasks = [
            (
                _text(task, "subject", f"{where}.tasks[{i}]"),
                _choice(task, "status", STATUSES, f"{where}.tasks[{i}]"),
                _text(task, "description", f"{where}.tasks[{i}]", ""),
            )
            for i, task in enumerate(tasks)
        ]
        self.next = Target(raw.get("next"), f"{where}.next")
        rule = raw.get("rule")
        self.rule = ""
        self.forbidden: list[list[str]] = []
        if rule is not None:
            if not isinstance(rule, dict):
                raise ScenarioError(f"{where}.rule: an object")
            self.rule = _text(rule, "text", f"{where}.rule")
            forbidden = rule.get("forbidden")
            if not isinstance(forbidden, list) or not forbidden:
                raise ScenarioError(f"{where}.rule.forbidden: a non-empty list of match lists")
            self.forbidden = [_match(item, f"{where}.rule.forbidden[{i}]") for i, item in enumerate(forbidden)]

    def steps(self) -> list[Action]:
        return [action for action in self.actions if action.is_step()]

    def jobs(self) -> list[Action]:
        return [action for action in self.actions if action.background]


def load(path: str) -> list[Scenario]:
    with open(path, encoding="utf-8") as handle:
        document = json.load(handle)
    return parse(document)


def parse(document: object) -> list[Scenario]:
    if not isinstance(document, dict) or document.get("format") != FORMAT:
        raise ScenarioError(f'a scenario file is an object with "format": "{FORMAT}"')
    items = document.get("scenarios")
    if not isinstance(items, list) or not items:
        raise ScenarioError('"scenarios": a non-empty list')
    scenarios = [Scenario(item, index) for index, item in enumerate(items)]
    ids = [scenario.id for scenario in scenarios]
    duplicates = sorted({name for name in ids if ids.count(name) > 1})
    if duplicates:
        raise ScenarioError(f"duplicate scenario ids: {', '.join(duplicates)}")
    return scenarios


# --- field readers -------------------------------------------------------------------------------------------

_MISSING = object()


def _get(raw: dict[str, Any], key: str, where: str, default: object) -> object:
    value = raw.get(key, default)
    if value is _MISSING:
        raise ScenarioError(f"{where}.{key}: missing")
    return value


def _text(raw: dict[str, Any], key: str, where: str, default: object = _MISSING) -> str:
    value = _get(raw, key, where, default)
    if not isinstance(value, str):
        raise ScenarioError(f"{where}.{key}: expected a string")
    return value


def _int(raw: dict[str, Any], key: str, where: str, default: object = _MISSING) -> int:
    value = _get(raw, key, where, default)
    if not isinstance(value, int) or isinstance(value, bool):
        raise ScenarioError(f"{where}.{key}: expected an integer")
    return value


def _bool(raw: dict[str, Any], key: str, where: str, default: bool) -> bool:
    value = raw.get(key, default)
    if not isinstance(value, bool):
        raise ScenarioError(f"{where}.{key}: expected true or false")
    return value


def _choice(raw: object, key: str, choices: tuple[str, ...], where: str) -> str:
    if not isinstance(raw, dict):
        raise ScenarioError(f"{where}: expected an object")
    value = raw.get(key)
    if value not in choices:
        raise ScenarioError(f"{where}.{key}: one of {', '.join(choices)}")
    return str(value)


def _match(value: object, where: str) -> list[str]:
    if not isinstance(value, list) or not value or not all(isinstance(item, str) and item.strip() for item in value):
        raise ScenarioError(f"{where}: a non-empty list of non-empty strings (all must occur)")
    return [str(item) for item in value]
