"""The first action of a reply, read leniently, and its grade: right, redo, relaunch, violation, other or none.

Small open models seldom emit a clean structured tool call, so the reply is read in this order and the first
action found wins: the structured ``tool_calls``; a ``<tool_call>`` tag's JSON; a JSON object in the text with a
tool name and arguments (or a bare ``command``); the first command line of a fenced code block; a line that
starts with ``$ ``. Everything here is a pure function of the reply and the scenario: the same reply always gets
the same grade.
"""

from __future__ import annotations

import json
import math
import re

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from benchmarks.resumption.scenario import Scenario

OUTCOMES = ("right", "redo", "relaunch", "violation", "other", "none")
EDIT_TOOLS = ("Edit", "Write", "MultiEdit", "NotebookEdit")
TOOL_NAMES = {"bash": "Bash", "read": "Read", "edit": "Edit", "write": "Write", "multiedit": "MultiEdit"}
SHELL_FENCES = ("", "bash", "sh", "shell", "console", "zsh")


class Action:
    """A parsed first action: the tool, its command (Bash) or file path, and where in the reply it was found."""

    __slots__ = ("command", "file_path", "source", "tool")

    def __init__(self, tool: str, command: str = "", file_path: str = "", source: str = "") -> None:
        self.tool = tool
        self.command = command
        self.file_path = file_path
        self.source = source

    def as_dict(self) -> dict[str, str]:
        return {"tool": self.tool, "command": self.command, "file_path": self.file_path, "source": self.source}


def _from_call(name: object, arguments: object, source: str) -> Action | None:
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments)
        except ValueError:
            return None
    if not isinstance(name, str) or not isinstance(arguments, dict):
        return None
    tool = TOOL_NAMES.get(name.strip().lower(), name.strip())
    command = arguments.get("command", arguments.get("cmd", ""))
    path = arguments.get("file_path", arguments.get("path", arguments.get("filePath", "")))
    command = " ".join(command) if isinstance(command, list) else command
    return Action(tool, command if isinstance(command, str) else "", path if isinstance(path, str) else "", source)


def _from_object(value: object, source: str) -> Action | None:
    """A tool call written as JSON: ``{"name": .., "arguments": ..}`` (or ``parameters``/``input``), a function
    wrapper, or a bare ``{"command": ..}``."""
    if isinstance(value, list) and value:
        return _from_object(value[0], source)
    if not isinstance(value, dict):
        return None
    if isinstance(value.get("function"), dict):
        return _from_object(value["function"], source)
    name = value.get("name", value.get("tool", value.get("tool_name")))
    for key in ("arguments", "parameters", "input", "args"):
        if key in value and name is not None:
            return _from_call(name, value[key], source)
    if isinstance(value.get("command"), str):
        return Action("Bash", value["command"], "", source)
    return None


def _json_objects(text: str) -> list[object]:
    """Every top-level JSON value that starts at a ``{`` or ``[`` in ``text`` and parses, in order."""
    found: list[object] = []
    decoder = json.JSONDecoder()
    index = 0
    while True:
        starts = [position for position in (text.find("{", index), text.find("[", index)) if position >= 0]
        if not starts:
            return found
        start = min(starts)
        try:
            value, end = decoder.raw_decode(text, start)
        except ValueError:
            index = start + 1
            continue
        found.append(value)
        index = end


def _code_command(text: str) -> Action | None:
    """The first command line of the first shell-like fenced block, or a ``$ `` line."""
    for match in re.finditer(r"```([A-Za-z]*)[ \t]*\n(.*?)(?:```|\Z)", text, re.S):
        if match.group(1).lower() not in SHELL_FENCES:
            continue
        for line in match.group(2).splitlines():
            line = line.strip()
            if line.startswith("$ "):
                line = line[2:].strip()
            if line and not line.startswith("#"):
                return Action("Bash", line, "", "code block")
    for line in text.splitlines():
        if line.strip().startswith("$ ") and line.strip()[2:].strip():
            return Action("Bash", line.strip()[2:].strip(), "", "dollar line")
    return None


def first_action(message: dict[str, Any]) -> Action | None:
    """The reply's first action (``message`` is an OpenAI-shaped assistant message), or None."""
    for call in message.get("tool_calls") or []:
        function = call.get("function", {}) if isinstance(call, dict) else {}
        action = _from_call(function.get("name"), function.get("arguments"), "tool_calls")
        if action is not None:
            return action
    text = message.get("content") or ""
    if not isinstance(text, str):
        return None
    for match in re.finditer(r"<tool_call>\s*(.*?)\s*(?:</tool_call>|\Z)", text, re.S):
        for value in _json_objects(match.group(1)):
            action = _from_object(value, "tool_call tag")
            if action is not None:
                return action
    for value in _json_objects(text):
        action = _from_object(value, "json in text")
        if action is not None:
            return action
    return _cut_call(text) or _code_command(text)


def _cut_call(text: str) -> Action | None:
    """A tool call cut short by the output limit (its JSON never closes): its name and first command or path."""
    name = re.search(r'\{\s*"name"\s*:\s*"(\w+)"', text)
    if name is None:
        return None
    value = re.compile(r'"(command|file_path)"\s*:\s*"((?:[^"\\]|\\.)*)"').search(text, name.end())
    if value is None:
        return None
    try:
        argument = json.loads(f'"{value.group(2)}"')
    except ValueError:
        return None
    key = "command" if value.group(1) == "command" else "file_path"
    return _from_call(name.group(1), {key: argument}, "cut call")


# --- grading -------------------------------------------------------------------------------------------------


def _words(text: str) -> str:
    return " ".join(text.replace("\\\n", " ").split())


def _matches(tool: str, match: list[str], action: Action) -> bool:
    """Whether ``action`` is the target: a Bash command holding every substring, or an edit of the file (a Bash
    command that writes it in place counts as an edit too)."""
    if tool == "Bash":
        return action.tool == "Bash" and all(_words(part) in _words(action.command) for part in match)
    if action.tool in EDIT_TOOLS:
        path = action.file_path.replace("\\", "/")
        return any(path == part or path.endswith("/" + part.lstrip("/")) for part in match)
    writes = ("sed -i", "perl -pi", "> ", ">>", "tee ", "patch ", "cat >", "python -c", "python3 -c")
    return (
        action.tool == "Bash"
        and any(part in action.command for part in match)
        and any(word in action.command for word in writes)
    )


def grade(scenario: Scenario, action: Action | None) -> str:
    """The outcome, most serious first: a rule's forbidden action, the running job started again, the next action,
    a done step again, anything else (the plugin's own commands too: bookkeeping); none when no action was read."""
    if action is None:
        return "none"
    # A job's id names it, it does not run it: ``kill bg_lychee`` must not match the job ``lychee …``.
    for job in scenario.jobs():
        action = Action(action.tool, action.command.replace(job.job_id, ""), action.file_path, action.source)
    if action.tool == "Bash" and action.command.split(" ", 1)[0].rsplit("/", 1)[-1] == "session-workflow":
        return "other"  # the plugin's own bookkeeping (an anchor step quotes the next command: it is not running it)
    if any(_matches("Bash", forbidden, action) for forbidden in scenario.forbidden):
        return "violation"
    if any(_matches("Bash", job.match, action) for job in scenario.jobs()):
        return "relaunch"
    if _matches(scenario.next.tool, scenario.next.match, action):
        return "right"
    for step in scenario.steps():
        if _matches("Bash" if step.tool == "Bash" else "Edit", step.match, action):
            return "redo"
    return "other"


def wilson(successes: int, n: int, z: float = 1.959963984540054) -> tuple[float, float]:
    """The Wilson score interval (95 % by default) for a share; (0, 1) when there are no runs."""
    if n == 0:
        return (0.0, 1.0)
    share = successes / n
    denominator = 1 + z * z / n
    centre = (share + z * z / (2 * n)) / denominator
    half = z * math.sqrt(share * (1 - share) / n + z * z / (4 * n * n)) / denominator
    return (max(0.0, centre - half), min(1.0, centre + half))
