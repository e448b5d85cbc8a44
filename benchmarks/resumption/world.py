"""One scenario made real: the project on disk, the anchor written by the plugin's own CLI, the task store, the
transcript Claude Code would have written, the block the plugin's real SessionStart hook prints for it, and the
post-compaction request Claude Code would send.

The world lives in a temp folder of its own (HOME, CLAUDE_CONFIG_DIR, plugin data, XDG folders and the project),
so nothing of the caller's reaches the hook and the hook writes nothing outside it. A fresh world is built for
each arm: the hook records what it delivered, and a second compact in the same world is another case.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import uuid

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from benchmarks.resumption.scenario import Action, Scenario

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "src"))

from session_workflow.core.where import project_slug  # noqa: E402  (Claude Code's own folder-name rule)

HOOK = os.path.join(ROOT, "hooks", "hook.py")
CLI = os.path.join(ROOT, "bin", "session-workflow")
SESSION_ID = "7d1c0b52-3e8a-4c61-a0f4-5b9e2d7c4a18"
VERSION = "2.1.332"
ARMS = ("h0", "h1", "h2")
# The run record (issue 43) is a SessionStart part switched off by this option; h1 is the block without it.
RUN_RECORD_OFF = {"SESSION_WORKFLOW_RUN_RECORD": "0"}
HOOK_TIMEOUT_SECONDS = 30.0

# Claude Code's system prompt, condensed to what bears on a first action (the real one is ~15k tokens, which a
# 2-core CPU cannot prefill dozens of times in an hour); the same in every arm.
SYSTEM_PROMPT = """You are Claude Code, Anthropic's official CLI for Claude: an interactive agent that helps users \
with software engineering tasks. Use the instructions below and the tools available to you to assist the user.

# Doing tasks
- Work autonomously until the task is done; do not ask the user questions you can answer by looking.
- Before acting, make sure you know where the work stands. Never redo finished work or start a job that is \
already running.
- Follow the project's standing rules and the user's instructions exactly.

# Tool usage
- Act through the tools: one tool call at a time.
- Use Bash for commands, Read to read files, Edit to change a file, Write to create one.
- Keep text short: the next step is a tool call, not an explanation.
"""

TOOLS: list[dict[str, Any]] = [
    {
        "type": "function",
        "function": {
            "name": "Bash",
            "description": "Executes a bash command in the project directory and returns its output.",
            "parameters": {
                "type": "object",
                "properties": {
                    "command": {"type": "string", "description": "The command to execute"},
                    "description": {"type": "string", "description": "What the command does, in 5-10 words"},
                    "run_in_background": {"type": "boolean", "description": "Run it in the background"},
                },
                "required": ["command"],
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": "Read",
            "description": "Reads a file from the local filesystem.",
            "parameters": {
                "type": "object",
                "properties": {"file_path": {"type": "string", "description": "The absolute path to the file"}},
                "required": ["file_path"],
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": "Edit",
            "description": "Replaces old_string with new_string in a file.",
            "parameters": {
                "type": "object",
                "properties": {
                    "file_path": {"type": "string"},
                    "old_string": {"type": "string"},
                    "new_string": {"type": "string"},
                },
                "required": ["file_path", "old_string", "new_string"],
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": "Write",
            "description": "Writes a file to the local filesystem (overwrites).",
            "parameters": {
                "type": "object",
                "properties": {"file_path": {"type": "string"}, "content": {"type": "string"}},
                "required": ["file_path", "content"],
            },
        },
    },
]

SUMMARY_LEAD = (
    "This session is being continued from a previous conversation that ran out of context. The summary below"
    " covers the earlier portion of the conversation.\n\nSummary:\n"
)
SUMMARY_TAIL = (
    "\n\nIf you need specific details from before compaction (like exact code snippets, error messages, or content"
    " you generated), read the full transcript at: {transcript}\nContinue the conversation from where it left off"
    " without asking the user any further questions. Resume directly — do not acknowledge the summary, do not recap"
    ' what was happening, do not preface with "I\'ll continue" or similar. Pick up the last task as if the break'
    " never happened.\n\nThe messages after this summary are the most recent messages from before compaction, kept"
    " verbatim. The summary was written without seeing them, so something it says has not happened yet may already"
    " have happened in them."
)


class World:
    """The folders of one built scenario."""

    def __init__(self, root: str, project_name: str) -> None:
        self.root = root
        self.home = os.path.join(root, "home")
        self.config = os.path.join(root, "config")
        self.plugin_data = os.path.join(root, "plugin-data")
        self.xdg = os.path.join(root, "xdg")
        self.tmp = os.path.join(root, "tmp")
        self.project = os.path.join(self.home, "work", project_name)
        for folder in (self.home, self.config, self.plugin_data, self.xdg, self.tmp, self.project):
            os.makedirs(folder, exist_ok=True)

    def transcript(self) -> str:
        return os.path.join(self.config, "projects", project_slug(self.project), f"{SESSION_ID}.jsonl")

    def env(self, extra: dict[str, str] | None = None) -> dict[str, str]:
        """What Claude Code gives a hook: the world's HOME, config and plugin data, nothing of the caller's."""
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": self.home,
            "TMPDIR": self.tmp,
            "XDG_STATE_HOME": os.path.join(self.xdg, "state"),
            "XDG_DATA_HOME": os.path.join(self.xdg, "data"),
            "XDG_CONFIG_HOME": os.path.join(self.xdg, "config"),
            "XDG_CACHE_HOME": os.path.join(self.xdg, "cache"),
            "CLAUDE_CONFIG_DIR": self.config,
            "CLAUDE_PLUGIN_DATA": self.plugin_data,
            "CLAUDE_PLUGIN_ROOT": ROOT,
            "CLAUDE_PROJECT_DIR": self.project,
            "PYTHONDONTWRITEBYTECODE": "1",
        }
        env.update(extra or {})
        return env

    def absolute(self, relative: str) -> str:
        return os.path.join(self.project, relative)


# --- building the world ----------------------------------------------------------------------------------------


def _write(path: str, text: str) -> None:
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(text)


def _apply(world: World, action: Action) -> None:
    """A done edit or write lands on disk, as it did in the run."""
    path = world.absolute(action.file_path)
    if action.tool == "Write":
        _write(path, action.content)
        return
    with open(path, encoding="utf-8") as handle:
        text = handle.read()
    if action.old not in text:
        raise ValueError(f"{action.file_path}: old_string not found, the scenario's files do not match its edits")
    _write(path, text.replace(action.old, action.new, 1))


def _cli(world: World, argv: list[str], stdin: str = "") -> str:
    env = world.env({"CLAUDECODE": "1", "CLAUDE_CODE_SESSION_ID": SESSION_ID})
    done = subprocess.run(
        ["/bin/sh", CLI, *argv], input=stdin, env=env, cwd=world.project, capture_output=True, text=True, check=False
    )
    if done.returncode != 0:
        raise RuntimeError(f"session-workflow {' '.join(argv[:2])} failed: {done.stderr.strip()}")
    return done.stdout.strip()


def _write_anchor(world: World, scenario: Scenario) -> str:
    """The anchor as the run wrote it, through the plugin's CLI (`anchor new`, then `anchor write`)."""
    path = _cli(world, ["anchor", "new", "--task", scenario.anchor_task, "--dir", world.project]).splitlines()[-1]
    _cli(world, ["anchor", "write", path], scenario.anchor_text)
    return path


def _write_tasks(world: World, scenario: Scenario) -> None:
    folder = os.path.join(world.config, "tasks", SESSION_ID)
    for number, (subject, status, description) in enumerate(scenario.tasks, 1):
        record = {
            "id": str(number),
            "subject": subject,
            "description": description,
            "activeForm": subject,
            "status": status,
            "blocks": [],
            "blockedBy": [],
        }
        _write(os.path.join(folder, f"{number}.json"), json.dumps(record, indent=2))


class Transcript:
    """Claude Code 2.1.332's record shapes (tests/fixtures/transcripts), one parent chain, timestamps in order."""

    def __init__(self, world: World) -> None:
        self.world = world
        self.records: list[dict[str, Any]] = []
        self.parent: str | None = None
        self.calls = 0

    def _add(self, record: dict[str, Any], when: float) -> str:
        identity = str(uuid.uuid4())
        stamp = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(when)) + f".{int(when * 1000) % 1000:03d}Z"
        base = {"parentUuid": self.parent, "isSidechain": False, "uuid": identity, "timestamp": stamp}
        common = {"userType": "external", "entrypoint": "cli", "cwd": self.world.project, "sessionId": SESSION_ID}
        self.records.append({**base, **record, **common, "version": VERSION, "gitBranch": "main"})
        self.parent = identity
        return identity

    def prompt(self, text: str, when: float) -> None:
        message = {"role": "user", "content": text}
        self._add({"type": "user", "message": message, "promptSource": "typed"}, when)

    def call(self, name: str, arguments: dict[str, Any], result: str, use_result: dict[str, Any], when: float) -> None:
        self.calls += 1
        call_id = f"toolu_{self.calls:04d}{uuid.uuid4().hex[:18]}"
        content = [{"type": "tool_use", "id": call_id, "name": name, "input": arguments}]
        message = {"id": f"msg_{uuid.uuid4().hex[:24]}", "type": "message", "role": "assistant", "content": content}
        message.update({"model": "claude-opus-5-5", "stop_reason": "tool_use"})
        assistant = self._add({"type": "assistant", "message": message}, when)
        is_error = bool(use_result.get("is_error"))
        block = {"tool_use_id": call_id, "type": "tool_result", "content": result, "is_error": is_error}
        record = {"type": "user", "message": {"role": "user", "content": [block]}, "toolUseResult": use_result}
        self._add({**record, "sourceToolAssistantUUID": assistant}, when + 0.2)

    def write(self) -> None:
        _write(self.world.transcript(), "".join(json.dumps(record) + "\n" for record in self.records))


def bash_output(world: World, action: Action) -> tuple[str, dict[str, Any]]:
    """The tool result text and ``toolUseResult`` of a Bash call (a background start names its id and log)."""
    if action.background:
        text = (
            f"Command running in background with ID: {action.job_id}. Output is being written to:"
            f" {job_output(world, action)}. You will be notified when it completes. To check interim output, use"
            " Read on that file path."
        )
        result = {"stdout": "", "stderr": "", "interrupted": False, "isImage": False, "noOutputExpected": False}
        return text, {**result, "backgroundTaskId": action.job_id}
    text = action.output if action.exit == 0 else f"Error: Exit code {action.exit}\n{action.output}"
    result = {"stdout": action.output, "stderr": "", "interrupted": False, "isImage": False}
    return text, {**result, **({"is_error": True} if action.exit else {})}


def job_output(world: World, action: Action) -> str:
    """Where Claude Code 2.1.332 writes a background shell's output (tests/fixtures/transcripts/background.jsonl)."""
    return f"/tmp/claude-0/{project_slug(world.project)}/{SESSION_ID}/tasks/{action.job_id}.output"


def still_running(world: World, action: Action) -> str:
    """Claude Code's own ``task_status`` reminder for a live background shell, attached right after a compaction
    in every arm (measured on 2.1.332: references/how-it-works.md)."""
    return (
        f'<system-reminder>\nBackground shell {action.job_id} ("{description(action)}") is still running (command,'
        f" shown on one line: `{action.command}`). Do not start it again; to restart it, stop it with TaskStop first."
        f" You can read its output at {job_output(world, action)}.\n</system-reminder>"
    )


def description(action: Action) -> str:
    return action.command[:40]


def call_of(world: World, action: Action) -> tuple[str, dict[str, Any], str, dict[str, Any]]:
    """(tool name, input, result text, toolUseResult) of one action, paths absolute as Claude Code writes them."""
    if action.tool == "Bash":
        arguments: dict[str, Any] = {"command": action.command, "description": description(action)}
        if action.background:
            arguments["run_in_background"] = True
        text, use_result = bash_output(world, action)
        return "Bash", arguments, text, use_result
    path = world.absolute(action.file_path)
    if action.tool == "Edit":
        arguments = {"file_path": path, "old_string": action.old, "new_string": action.new}
        text = f"The file {path} has been updated successfully."
        return "Edit", arguments, text, {"filePath": path, "oldString": action.old, "newString": action.new}
    arguments = {"file_path": path, "content": action.content}
    text = f"File created successfully at: {path}"
    return "Write", arguments, text, {"type": "create", "filePath": path, "content": action.content}


def build(scenario: Scenario, root: str) -> tuple[World, list[tuple[str, dict[str, Any], str]]]:
    """Build ``scenario`` under ``root``; returns the world and the tool calls in order (name, input, result), the
    last of which is the one Claude Code keeps verbatim after the compaction."""
    world = World(root, scenario.project)
    for relative, text in scenario.files.items():
        _write(world.absolute(relative), text)
    _write_tasks(world, scenario)
    transcript = Transcript(world)
    calls: list[tuple[str, dict[str, Any], str]] = []
    anchor_path = ""
    count = len(scenario.actions)
    before = count if scenario.anchor_after is None else scenario.anchor_after
    now = time.time()
    transcript.prompt(scenario.prompt, now - 60.0 * (count + 2))
    for index, action in enumerate(scenario.actions):
        if index == scenario.anchor_after:
            anchor_path = _write_anchor(world, scenario)
            now = time.time()
            _anchor_call(transcript, calls, anchor_path, scenario, now - 0.5)
        when = now - 60.0 * (before - index) if index < before else now + 1.0 + (index - before)
        if action.tool != "Bash":
            _apply(world, action)
        name, arguments, text, use_result = call_of(world, action)
        transcript.call(name, arguments, text, use_result, when)
        calls.append((name, arguments, text))
    if scenario.anchor_after == count:
        anchor_path = _write_anchor(world, scenario)
        _anchor_call(transcript, calls, anchor_path, scenario, time.time())
    # The SessionStart(compact) hook runs before Claude Code writes the compaction's boundary and summary
    # (measured on 2.1.332), so the transcript the hook reads ends with the run's last call.
    transcript.write()
    return world, calls


def _anchor_call(
    transcript: Transcript, calls: list[tuple[str, dict[str, Any], str]], path: str, scenario: Scenario, when: float
) -> None:
    """The run's own anchor write, as the Bash call that made it (its cursor line is the anchor's newest step)."""
    cursor = next((line[2:] for line in scenario.anchor_text.splitlines() if line.startswith("- Step ")), "")
    command = f"session-workflow anchor step {shell_word(path)} {shell_word(cursor)}"
    text = f"{path}: step recorded"
    transcript.call("Bash", {"command": command, "description": "Record the step"}, text, {"stdout": text}, when)
    calls.append(("Bash", {"command": command}, text))


def shell_word(text: str) -> str:
    return "'" + text.replace("'", "'\\''") + "'"


def summary_message(scenario: Scenario, world: World) -> str:
    """Claude Code's continuation message around the scenario's (lossy) summary."""
    return SUMMARY_LEAD + scenario.summary + SUMMARY_TAIL.format(transcript=world.transcript())


# --- the hook ----------------------------------------------------------------------------------------------------


def hook_block(world: World, arm: str) -> str:
    """The block the plugin's real SessionStart hook prints for a compact in this world (h0: none), run as Claude
    Code runs it: a cold ``python3 -I -S hooks/hook.py SessionStart`` with the payload on stdin."""
    if arm == "h0":
        return ""
    payload = {
        "session_id": SESSION_ID,
        "transcript_path": world.transcript(),
        "cwd": world.project,
        "hook_event_name": "SessionStart",
        "source": "compact",
    }
    env = world.env(RUN_RECORD_OFF if arm == "h1" else None)
    done = subprocess.run(
        [sys.executable, "-I", "-S", HOOK, "SessionStart"],
        input=json.dumps(payload).encode("utf-8"),
        env=env,
        cwd=world.project,
        capture_output=True,
        timeout=HOOK_TIMEOUT_SECONDS,
        check=False,
    )
    if done.returncode != 0 or done.stderr:
        raise RuntimeError(f"the SessionStart hook failed ({done.returncode}): {done.stderr.decode(errors='replace')}")
    if not done.stdout:
        return ""
    document = json.loads(done.stdout)
    text = document["hookSpecificOutput"]["additionalContext"]
    return str(text)


# --- the request -----------------------------------------------------------------------------------------------


def request(
    scenario: Scenario, world: World, calls: list[tuple[str, dict[str, Any], str]], block: str
) -> list[dict[str, Any]]:
    """The post-compaction messages, OpenAI-shaped: the system prompt, Claude Code's summary message, the kept last
    tool call and its result, then the turn's reminders as Claude Code renders them for a model without system
    entries: (h1, h2) the hook's block, then in every arm Claude Code's own "still running" reminder for each live
    background shell. No other reminder is modelled: one the same in every arm only adds prefill time (and a 0.5B
    model answered "Today's date is ..." by running ``date``)."""
    system = SYSTEM_PROMPT + f"\n# Environment\nWorking directory: {world.project}\nPlatform: linux\n"
    name, arguments, result = calls[-1]
    call = {"id": "call_kept", "type": "function", "function": {"name": name, "arguments": json.dumps(arguments)}}
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": system},
        {"role": "user", "content": summary_message(scenario, world)},
        {"role": "assistant", "content": "", "tool_calls": [call]},
        {"role": "tool", "tool_call_id": "call_kept", "content": result},
    ]
    reminders = (
        [f"<system-reminder>\nSessionStart hook additional context: {block}\n</system-reminder>"] if block else []
    )
    reminders += [still_running(world, job) for job in scenario.jobs()]
    if reminders:
        messages.append({"role": "user", "content": "\n".join(reminders)})
    return messages


def new_root() -> str:
    return tempfile.mkdtemp(prefix="sw-resumption-")


def remove(root: str) -> None:
    shutil.rmtree(root, ignore_errors=True)
