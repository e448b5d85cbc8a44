"""Time the real hook commands against the interpreter floor: ``python benchmarks/run.py`` (``tox -e bench``).

Each hook runs exactly as ``hooks/hooks.json`` registers it (``${CLAUDE_PLUGIN_ROOT}`` substituted, ``python3``
being the interpreter under test), in a fresh process, with its JSON payload on stdin and the environment
Claude Code gives hooks, against generated workloads (``benchmarks/workload.py``). Two floors run in the same
rounds, interleaved in a shuffled order: P = ``python3 -I -c pass`` and J = ``python3 -I -S -c "import json"``.
Every scenario is first run once and checked (exit 0, no stderr, the expected parts in its output), so no
timing is of a hook that silently did nothing. See benchmarks/README.md for how to read the table.
"""

from __future__ import annotations

import argparse
import json
import marshal
import os
import platform
import random
import re
import shutil
import subprocess
import sys
import tempfile
import time
import uuid

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

from benchmarks import report, workload  # noqa: E402
from benchmarks.report import FLOOR_J, FLOOR_P, Measured  # noqa: E402

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

HOOKS_JSON = os.path.join(ROOT, "hooks", "hooks.json")
LAUNCHER = os.path.join(ROOT, "hooks", "python.sh")
# How the machine leads hooks.json's /bin/sh hooks/python.sh to a python3 (issue 42): ``binary``, --python's own
# folder first on PATH (else a workload folder whose python3 links to it); ``shim``, a version manager's shims
# folder first (pyenv's: what a Python developer's PATH holds); ``nobc``, ``binary`` with
# PYTHONDONTWRITEBYTECODE=1 in the hooks' environment.
SETUPS = ("binary", "shim", "nobc")
CLI = os.path.join(ROOT, "bin", "session-workflow")
SPAWN = os.path.join(ROOT, "benchmarks", "spawn.py")
RESULTS = os.path.join(ROOT, "benchmarks", "results")
README = os.path.join(ROOT, "benchmarks", "README.md")
README_BEGIN = "<!-- bench:table -->"
README_END = "<!-- /bench:table -->"
PLUGIN_ROOT_VAR = "${CLAUDE_PLUGIN_ROOT}"
# Variables of the calling shell that would change what the hooks or writers see; the rest pass through.
DROPPED_ENV_PREFIXES = ("CLAUDE", "SESSION_WORKFLOW_", "PYTHON", "XDG_", "VIRTUAL_ENV", "PIP_USER")
CHECK_TIMEOUT_SECONDS = 600.0
JOB_TIMEOUT_SECONDS = 30.0
HOOK_MODULES = ("session_workflow.hook.compose", "session_workflow.hook.prompt_submit")
ENTRY_LABEL = "entry alone: hooks.json's command, no handler"
# The targets (#19), as ratios to J.
TARGETS = {
    # Issue 42 tightened #19's: every empty-project hook ≤ 0.8 J; compact, resume, fork and PreCompact (the full
    # project) ≤ 1.1 J; the writers ≤ 3.0 J, and PostToolUse on an Edit of the anchor ≤ 1.5 J.
    "ss-anchorless": 0.8,
    "pc-anchorless": 0.8,
    "ss-compact": 1.1,
    "ss-resume": 1.1,
    "ss-fork": 1.1,
    "pc-full": 1.1,
    "tool-post-anchor": 1.5,
    # #43: the compact hook with the run record, a 200 MB transcript and 2,000 actions since the cursor.
    "ss-record": 1.25,
    "ss-scale": 2.0,
    "ups-unchanged": 1.05,
    "ups-no-state": 0.70,
    # #25: the edit hooks on a path that is no anchor (nearly every Write and Edit) cost the floor.
    "tool-pre": 0.70,
    "tool-post": 0.70,
    # Issue #32: on a machine that never ran the CLI, with and without PYTHONDONTWRITEBYTECODE.
    "writer-state-step": 3.0,
    "writer-anchor-step": 3.0,
    "writer-anchor-new": 3.0,
    "writer-anchor-write": 3.0,
    "writer-state-set": 3.0,
    "writer-state-step-nobc": 5.0,
    "writer-anchor-step-nobc": 5.0,
    # Issue 42: `log` over a ledger of 1,000 entries.
    "log-1000": 2.0,
}
# Peak RSS against J's: every hook ≤ 2×, the scale case ≤ 1.5×.
RSS_TARGETS = {"ss-scale": 1.5}


class Scenario:
    """One command to time: how it is run, what it must print, and which target or growth series it is in.

    ``argv`` is None when the command cannot run here (``reason`` says why); writers' argv may hold ``{n}``,
    replaced by the run's index so each run records a new step.
    """

    __slots__ = (
        "argv",
        "before",
        "cwd",
        "env",
        "expect",
        "growth",
        "key",
        "label",
        "payload",
        "reason",
        "rss_target",
        "target",
    )

    def __init__(
        self,
        key: str,
        label: str,
        argv: list[str] | None,
        *,
        env: dict[str, str],
        cwd: str,
        payload: bytes = b"",
        expect: tuple[str, ...] | None = None,
        growth: tuple[str, float] | None = None,
        reason: str = "",
        before: tuple[list[str], bytes] | None = None,
    ) -> None:
        self.key = key
        self.label = label
        self.argv = argv
        self.env = env
        self.cwd = cwd
        self.payload = payload
        self.expect = expect
        self.growth = growth
        self.reason = reason
        # A command (argv, stdin) run untimed right before each timed run: PostToolUse after its PreToolUse.
        self.before = before
        self.target = TARGETS.get(key)
        self.rss_target = RSS_TARGETS.get(key, report.RSS_TARGET)

    def argv_for(self, run: int) -> list[str]:
        assert self.argv is not None
        return [arg.replace("{n}", str(run)) for arg in self.argv]


# --- hooks.json --------------------------------------------------------------------------------------------


def hook_argvs(spec: Mapping[str, object], event: str, source: str | None, python: str) -> list[list[str]]:
    """The commands hooks.json runs for ``event`` (and SessionStart ``source``), as argv lists.

    Exec form (``command`` + ``args``) is run as is; a shell string goes through ``/bin/sh -c`` as Claude Code
    does. ``${CLAUDE_PLUGIN_ROOT}`` becomes the repo and a bare ``python3``/``python`` the interpreter under test.
    """
    hooks = spec.get("hooks")
    groups = hooks.get(event) if isinstance(hooks, dict) else None
    found: list[list[str]] = []
    for group in groups if isinstance(groups, list) else []:
        matcher = group.get("matcher") if isinstance(group, dict) else None
        matched = source is None or not isinstance(matcher, str) or matcher in ("", "*")
        if not matched and not re.fullmatch(str(matcher), str(source)):
            continue
        for hook in group.get("hooks", []) if isinstance(group, dict) else []:
            if not isinstance(hook, dict) or hook.get("type") != "command" or not isinstance(hook.get("command"), str):
                continue
            command = hook["command"].replace(PLUGIN_ROOT_VAR, ROOT)
            if isinstance(hook.get("args"), list):
                program = python if command in ("python3", "python") else command
                found.append([program, *(str(arg).replace(PLUGIN_ROOT_VAR, ROOT) for arg in hook["args"])])
            else:
                found.append(["/bin/sh", "-c", command])
    return found


def missing_script(argv: Sequence[str]) -> str | None:
    """The first ``*.py`` argument under the plugin root that does not exist (a part not written yet)."""
    for arg in argv[1:]:
        if arg.startswith(ROOT) and arg.endswith(".py") and not os.path.isfile(arg):
            return os.path.relpath(arg, ROOT)
    return None


# --- scenarios ---------------------------------------------------------------------------------------------


def base_env(load: workload.Workload) -> dict[str, str]:
    env = {name: value for name, value in os.environ.items() if not name.startswith(DROPPED_ENV_PREFIXES)}
    env["HOME"] = load.home
    return env


def hook_env(load: workload.Workload, session: workload.Session, plugin_data: str | None = None) -> dict[str, str]:
    """What Claude Code adds for a plugin hook, pointed into the workload."""
    env = base_env(load)
    env.update(
        CLAUDE_PLUGIN_ROOT=ROOT,
        CLAUDE_PLUGIN_DATA=plugin_data or load.plugin_data,
        CLAUDE_PROJECT_DIR=session.project,
        CLAUDE_CONFIG_DIR=session.config,
    )
    return env


def session_start_payload(session: workload.Session, source: str) -> bytes:
    payload: dict[str, object] = {
        "session_id": session.session_id,
        "transcript_path": session.transcript,
        "cwd": session.project,
        "hook_event_name": "SessionStart",
        "source": source,
    }
    if source == "compact":
        payload.update(model="claude-opus-5-5", prompt_id=str(uuid.uuid4()))
    return json.dumps(payload).encode("utf-8")


def prompt_payload(session: workload.Session) -> bytes:
    payload = {
        "session_id": session.session_id,
        "transcript_path": session.transcript,
        "cwd": session.project,
        "prompt_id": str(uuid.uuid4()),
        "permission_mode": "default",
        "hook_event_name": "UserPromptSubmit",
        "prompt": "continue with the next step of the cursor",
    }
    return json.dumps(payload).encode("utf-8")


# A realistic edit of a source file: the old text is in the PostToolUse payload too, as Claude Code sends it.
EDITED_SOURCE = "def parse(tokens):\n    return [token for token in tokens if token]\n" * 100


def tool_payload(session: workload.Session, event: str, mention: bool = False, path: str | None = None) -> bytes:
    """A PreToolUse or PostToolUse payload of an Edit outside any anchors folder (2.1.332's fields), or of ``path``.
    ``mention``: its text names an anchors folder, so the byte search passes and the payload is parsed."""
    path = path or os.path.join(session.project, "src", "parser.py")
    new = "    return [token for token in tokens if token is not None]"
    if mention:
        new += f"  # see {os.path.join(session.project, '.claude', 'anchors')}/"
    given = {"file_path": path, "old_string": "    return [token for token in tokens if token]", "new_string": new}
    payload: dict[str, object] = {
        "session_id": session.session_id,
        "transcript_path": session.transcript,
        "cwd": session.project,
        "permission_mode": "bypassPermissions",
        "hook_event_name": event,
        "tool_name": "Edit",
        "tool_input": {**given, "replace_all": False},
        "tool_use_id": "toolu_01BenchBenchBenchBenchBench",
    }
    if event == "PostToolUse":
        payload["tool_response"] = {
            "filePath": path,
            "oldString": given["old_string"],
            "newString": new,
            "originalFile": EDITED_SOURCE,
            "structuredPatch": [],
            "userModified": False,
            "replaceAll": False,
        }
    return json.dumps(payload).encode("utf-8")


def hook_payload(session: workload.Session, event: str, source: str | None, key: str) -> bytes:
    if event == "SessionStart":
        return session_start_payload(session, source or "startup")
    if event in ("PreToolUse", "PostToolUse"):
        return tool_payload(session, event, key.endswith("-mention"))
    return prompt_payload(session)


def interpreter_dir(load: workload.Workload, python: str) -> str:
    """A folder of the workload whose ``python3`` is a link to ``python`` (made again when it points elsewhere)."""
    folder = os.path.join(load.root, "interpreter")
    link = os.path.join(folder, "python3")
    os.makedirs(folder, exist_ok=True)
    if not os.path.islink(link) or os.readlink(link) != python:
        if os.path.lexists(link):
            os.unlink(link)
        os.symlink(python, link)
    return folder


def pyenv_shims() -> str | None:
    """pyenv's shims folder when it has a python3 (``PYENV_ROOT``, else ``~/.pyenv``); None without pyenv."""
    root = os.environ.get("PYENV_ROOT") or os.path.expanduser("~/.pyenv")
    shims = os.path.join(root, "shims")
    return shims if os.path.isfile(os.path.join(shims, "python3")) else None


def own_folder(python: str) -> str | None:
    """The folder ``python`` is in when its ``python3`` is that very interpreter (/usr/bin, a pyenv version's bin):
    the PATH a machine has, the launcher's cost for that folder included (an ``ls`` but for /usr/bin and /bin)."""
    candidate = os.path.join(os.path.dirname(python), "python3")
    try:
        return os.path.dirname(python) if os.path.samefile(candidate, python) else None
    except OSError:
        return None


def set_up(env: dict[str, str], load: workload.Workload, python: str, setup: str) -> dict[str, str]:
    """``env`` with PATH (and PYTHONDONTWRITEBYTECODE) as ``setup`` has them (``SETUPS``)."""
    first = pyenv_shims() if setup == "shim" else own_folder(python) or interpreter_dir(load, python)
    assert first is not None, "no pyenv shims here"
    env["PATH"] = first + os.pathsep + env.get("PATH", os.defpath)
    if setup == "nobc":
        env["PYTHONDONTWRITEBYTECODE"] = "1"
    return env


def launched(env: Mapping[str, str], cwd: str) -> str:
    """The python3 hooks/python.sh runs in ``env`` and ``cwd`` (its ``--which``): the row's interpreter."""
    done = subprocess.run(["/bin/sh", LAUNCHER, "--which"], env=env, cwd=cwd, capture_output=True, text=True)
    path = done.stdout.strip()
    real = os.path.realpath(path) if path else ""
    return f"{path} (= {real})" if real and real != path else path or "(none)"


def hook_scenario(
    spec: Mapping[str, object],
    python: str,
    load: workload.Workload,
    row: tuple[str, str, workload.Session, str, str | None, tuple[str, ...] | None, tuple[str, float] | None],
    setup: str = "binary",
) -> Scenario:
    """A hook scenario from ``(key, label, session, event, source, expected parts, growth)``; an n/a one when
    hooks.json has no such hook or its script is not there yet. Expected parts None: its output is not a hook
    JSON (PreCompact's plain text), only exit 0 is checked."""
    key, label, session, event, source, expect, growth = row
    argvs = hook_argvs(spec, event, source, python)
    plugin_data = workload.plugin_data_of(load, session)
    reason = ""
    if not argvs:
        reason = f"no {event} hook in hooks.json" + (f" for {source}" if source else "")
    elif missing_script(argvs[0]):
        reason = f"{missing_script(argvs[0])} missing"
    if len(argvs) > 1:
        label += f" (first of {len(argvs)} hooks)"
    # hooks/python.sh runs PATH's first real python3 outside the project: what the setup puts first on PATH.
    env = set_up(hook_env(load, session, plugin_data), load, python, setup)
    return Scenario(
        key,
        label,
        None if reason else argvs[0],
        env=env,
        cwd=session.project,
        payload=hook_payload(session, event, source, key),
        expect=expect,
        growth=growth,
        reason=reason,
    )


# The growth table's rows: SessionStart source, label, what the output must hold (see workload.generate).
GROWTH_ROWS: dict[str, tuple[str, str, tuple[str, ...]]] = {
    "anchors": ("compact", "growth: {} anchors (compact)", (workload.ANCHOR_TITLE, workload.LAST_PROMPT)),
    "tasks": ("compact", "growth: {} task files (compact)", (workload.TASK_SUBJECT, workload.LAST_PROMPT)),
    "siblings": ("startup", "growth: {} sibling transcripts (startup)", (workload.TASK_SUBJECT,)),
    "records": ("startup", "growth: {} delivery records (startup)", (workload.STATE_TITLE,)),
}


def own_anchor(writer: workload.Session, env: dict[str, str], task: str) -> str:
    """An anchor of the writer's project that only ``task``'s scenario writes (made by ``anchor new`` once): an
    ``anchor write`` of the text it read, as a run makes it, never meets another writer's later step."""
    folder = os.path.join(writer.project, ".claude", "anchors")
    slug = task.replace(" ", "-")
    found = sorted(name for name in os.listdir(folder) if name.endswith(f"-{slug}.md"))
    if found:
        return os.path.join(folder, found[-1])
    done = subprocess.run(
        [CLI, "anchor", "new", "--task", task], env=env, cwd=writer.project, capture_output=True, text=True, check=True
    )
    return done.stdout.strip().splitlines()[-1]


def scenarios(load: workload.Workload, python: str, setup: str = "binary", rounds: int = 1) -> list[Scenario]:
    """Floors first, then every hook and writer scenario, in table order; hooks and writers run as users run
    them (through hooks/python.sh, and bin/session-workflow's own line) on the interpreter ``setup`` leads to.
    ``rounds``: how many runs (warm-up included) a writer that creates something makes a place for."""
    with open(HOOKS_JSON, encoding="utf-8") as handle:
        spec = json.load(handle)
    empty = load.anchorless
    writer = load.writer
    assert empty is not None and writer is not None
    found = [
        Scenario(FLOOR_P, "floor P: python3 -I -c pass", [python, "-I", "-c", "pass"], env=base_env(load), cwd=ROOT),
        Scenario(
            FLOOR_J,
            'floor J: python3 -I -S -c "import json"',
            [python, "-I", "-S", "-c", "import json"],
            env=base_env(load),
            cwd=ROOT,
        ),
    ]
    full_parts = (workload.STATE_TITLE, workload.ANCHOR_TITLE, workload.TASK_SUBJECT, workload.LAST_PROMPT)
    rows: list[tuple[str, str, workload.Session, str, str | None, tuple[str, ...] | None, tuple[str, float] | None]] = [
        ("ss-anchorless", "SessionStart startup, anchor-less", empty, "SessionStart", "startup", (), None)
    ]
    for group, sessions, headline in (
        ("compact", load.compact, min(load.compact)),
        ("scale", load.scale, max(load.scale)),
    ):
        for size, session in sorted(sessions.items()):
            key = f"ss-{group}" if size == headline else f"ss-{group}-{report.human_size(size).replace(' ', '')}"
            label = (
                f"SessionStart compact, {'full' if group == 'compact' else group}, {report.human_size(size)} transcript"
            )
            rows.append((key, label, session, "SessionStart", "compact", full_parts, (group, size)))
    for dimension, (source, label, expect) in GROWTH_ROWS.items():
        for count, session in sorted(load.growth.get(dimension, {}).items()):
            key = f"growth-{dimension}-{count}"
            rows.append((key, label.format(f"{count:,}"), session, "SessionStart", source, expect, (dimension, count)))
    assert load.record is not None
    record_label = f"SessionStart compact, run record: {report.human_size(max(load.compact))} transcript, "
    record_parts = (*full_parts, "RUN RECORD (")
    rows.append(
        (
            "ss-record",
            record_label + "actions since the cursor",
            load.record,
            "SessionStart",
            "compact",
            record_parts,
            None,
        )
    )
    rows.append(
        (
            "ss-record-off",
            record_label + "the record switched off",
            load.record,
            "SessionStart",
            "compact",
            full_parts,
            None,
        )
    )
    assert load.record_logs is not None
    logs_label = f"SessionStart compact, run record: actions printing {report.human_size(workload.LOG_BYTES)} test logs"
    # Its tail is all command output: no prompt to recover.
    logs_parts = full_parts[:3]
    rows.append(
        ("ss-record-logs", logs_label, load.record_logs, "SessionStart", "compact", (*logs_parts, "RUN RECORD ("), None)
    )
    rows.append(
        (
            "ss-record-logs-off",
            logs_label + ", the record switched off",
            load.record_logs,
            "SessionStart",
            "compact",
            logs_parts,
            None,
        )
    )
    assert load.moved is not None
    moved_label = "SessionStart compact, anchor moved (hashed)"
    rows.append(("ss-moved", moved_label, load.moved, "SessionStart", "compact", (workload.ANCHOR_TITLE,), None))
    full = load.compact[min(load.compact)]
    # Issue 42: resume and fork read the thread (the fork finds no parent here: every part is sent), PreCompact.
    assert load.resumed is not None
    for source, session in (("resume", load.resumed), ("fork", full)):
        # A fork is a new session: the work state is named in one line as another session's.
        expect = full_parts[:3] if source == "resume" else (workload.ANCHOR_TITLE, workload.TASK_SUBJECT)
        rows.append((f"ss-{source}", f"SessionStart {source}, full", session, "SessionStart", source, expect, None))
    rows.append(("pc-full", "PreCompact, full", full, "PreCompact", None, None, None))
    # Issue 42's 1× and 100× (workload.generate_hundredfold): each hook at both, in the case's own HOME.
    for factor in sorted(load.hundred_compact):
        compact, startup = load.hundred_compact[factor], load.hundred_startup[factor]
        at = f"{factor}× scale"
        expect = (workload.ANCHOR_TITLE, workload.TASK_SUBJECT, workload.LAST_PROMPT)
        compact_row = (f"x{factor}-compact", f"SessionStart compact, {at}", compact, "SessionStart", "compact")
        rows.append((*compact_row, expect, None))
        rows.append(
            (
                f"x{factor}-startup",
                f"SessionStart startup (fallback), {at}",
                startup,
                "SessionStart",
                "startup",
                (workload.ANCHOR_TITLE, workload.TASK_SUBJECT),
                None,
            )
        )
        rows.append((f"x{factor}-precompact", f"PreCompact, {at}", compact, "PreCompact", None, None, None))
    rows.append(("pc-anchorless", "PreCompact, anchor-less", empty, "PreCompact", None, None, None))
    rows.append(("ups-unchanged", "UserPromptSubmit, work state unchanged", full, "UserPromptSubmit", None, (), None))
    rows.append(("ups-no-state", "UserPromptSubmit, no work state", empty, "UserPromptSubmit", None, (), None))
    rows.append(("tool-pre", "PreToolUse Edit, not an anchor", full, "PreToolUse", None, (), None))
    rows.append(("tool-post", "PostToolUse Edit, not an anchor", full, "PostToolUse", None, (), None))
    rows.append(
        ("tool-post-mention", "PostToolUse Edit, not an anchor, text names one", full, "PostToolUse", None, (), None)
    )
    found += [hook_scenario(spec, python, load, row, setup) for row in rows]
    for scenario in found:  # the record's cost is the difference between these two rows
        if scenario.key in ("ss-record-off", "ss-record-logs-off"):
            scenario.env["SESSION_WORKFLOW_RUN_RECORD"] = "0"
        if scenario.key.startswith("x") and scenario.key[1:].split("-")[0].isdigit():
            scenario.env["HOME"] = workload.hundred_home(load.root, int(scenario.key[1:].split("-")[0]))
    # Diagnostics: the hooks' imports alone (no payload, no work), to split each hook's cost into the two. They
    # end as the hook shims do, in os._exit, which skips the interpreter's teardown that the floors pay; their
    # bytecode goes to the workload's home, as the hooks' goes to the plugin data folder, never into src/.
    for module in HOOK_MODULES:
        code = f"import os, sys; sys.path.insert(0, {os.path.join(ROOT, 'src')!r}); import json, {module}; os._exit(0)"
        argv = [python, "-I", "-S", "-X", f"pycache_prefix={os.path.join(load.home, 'import-pycache')}", "-c", code]
        found.append(
            Scenario(
                "import-" + module.split(".")[-1].replace("_", "-"),
                f"imports only: {module}",
                argv,
                env=base_env(load),
                cwd=ROOT,
            )
        )
    # Diagnostic: what every hook pays before its own work (the launcher, the interpreter, hook.py and its bytecode
    # rule, ``os``): SessionStart's command with an event name that has no handler, so hook.py decides and exits.
    entry_row = ("entry-alone", ENTRY_LABEL, full, "SessionStart", "compact", (), None)
    entry = hook_scenario(spec, python, load, entry_row, setup)
    if entry.argv is not None:
        entry.argv = [*entry.argv[:-1], "-"]
    found.append(entry)
    writer_env = set_up(base_env(load), load, python, setup)
    writer_env.update(CLAUDECODE="1", CLAUDE_CODE_SESSION_ID=writer.session_id, CLAUDE_CONFIG_DIR=writer.config)
    # A machine that never ran the CLI: no bytecode of the plugin's yet (the first, warm-up run writes it).
    shutil.rmtree(os.path.join(load.home, ".local", "state", "session-workflow", "pycache"), ignore_errors=True)
    no_bytecode = {**writer_env, "PYTHONDONTWRITEBYTECODE": "1"}
    for key, label, args in (
        ("writer-state-step", "writer: session-workflow state step", ["state", "step", "bench step {n}"]),
        (
            "writer-anchor-step",
            "writer: session-workflow anchor step",
            ["anchor", "step", load.writer_anchor, "done: bench step {n}; next: bench step {n} + 1"],
        ),
    ):
        present = os.path.isfile(CLI)
        for suffix, env, note in (("", writer_env, ""), ("-nobc", no_bytecode, ", PYTHONDONTWRITEBYTECODE=1")):
            found.append(
                Scenario(
                    key + suffix,
                    label + note,
                    [CLI, *args] if present else None,
                    env=env,
                    cwd=writer.project,
                    reason="" if present else "bin/session-workflow missing",
                )
            )
    # Issue 42's other writers as a run calls them: `anchor new` (each run in a project folder of its own, since it
    # never overwrites), `anchor write` (the writer's anchor, whole, from stdin) and `state set`.
    fresh = os.path.join(load.root, "anchor-new")
    shutil.rmtree(fresh, ignore_errors=True)
    for index in range(rounds + 1):
        os.makedirs(os.path.join(fresh, str(index)))
    written = own_anchor(writer, writer_env, "bench write")
    with open(written, "rb") as handle:
        whole = handle.read()
    for key, label, args, stdin in (
        (
            "writer-anchor-new",
            "writer: session-workflow anchor new",
            ["anchor", "new", "--task", "bench run {n}", "--dir", os.path.join(fresh, "{n}")],
            b"",
        ),
        (
            "writer-anchor-write",
            "writer: session-workflow anchor write",
            ["anchor", "write", written],
            whole,
        ),
        (
            "writer-state-set",
            "writer: session-workflow state set",
            ["state", "set", "--ticket", "42", "--title", "bench run {n}", "--map", "none", "--step", "start"],
            b"",
        ),
    ):
        present = os.path.isfile(CLI)
        found.append(
            Scenario(
                key,
                label,
                [CLI, *args] if present else None,
                env=writer_env,
                cwd=writer.project,
                payload=stdin,
                reason="" if present else "bin/session-workflow missing",
            )
        )
    # PostToolUse on the model's Edit of its anchor (issue 42): it re-vouches under the anchor's lock, after the
    # PreToolUse that notes the vouched state (run untimed before each run, as Claude Code runs the pair).
    pre = hook_argvs(spec, "PreToolUse", None, python)
    post = hook_argvs(spec, "PostToolUse", None, python)
    if pre and post:
        edit_env = set_up(hook_env(load, writer), load, python, setup)
        found.append(
            Scenario(
                "tool-post-anchor",
                "PostToolUse Edit of the anchor (after its PreToolUse)",
                post[0],
                env=edit_env,
                cwd=writer.project,
                payload=tool_payload(writer, "PostToolUse", path=load.writer_anchor),
                expect=(),
                before=(pre[0], tool_payload(writer, "PreToolUse", path=load.writer_anchor)),
            )
        )
    # Issue 42: `session-workflow log` in the writer's session (its default: this session's entries), over a
    # ledger of each count (``workload.write_ledger``), the entries' project this one.
    folder = os.path.dirname(os.path.dirname(workload.log_home(load.root, 0)))
    for count in sorted(int(name) for name in (os.listdir(folder) if os.path.isdir(folder) else []) if name.isdigit()):
        home = workload.log_home(load.root, count)
        present = os.path.isfile(CLI) and os.path.isdir(home)
        found.append(
            Scenario(
                f"log-{count}",
                f"writer: session-workflow log, {count:,} ledger entries",
                [CLI, "log"] if present else None,
                env={**writer_env, "HOME": home},
                cwd=writer.project,
                reason="" if present else "bin/session-workflow or the ledger missing",
            )
        )
    # The writers' import breakdown: the interpreter with site (what a script pays before its first line), then
    # what bin/session-workflow imports for each group, and filelock (found the way the bin script finds it).
    for key, label, code in WRITER_IMPORTS:
        found.append(
            Scenario(key, label, [python, "-c", code.replace("{root}", repr(ROOT))], env=writer_env, cwd=writer.project)
        )
    return found


# What bin/session-workflow runs before main() (its bytecode rule, src and the vendored copy on the path, the
# import of cli.main): the script itself, run without its last line.
BIN_PRELUDE = (
    "import os; __file__ = os.path.join({root}, 'bin', 'session-workflow');"
    " exec(open(__file__).read().rsplit('raise SystemExit(main())', 1)[0]); "
)
WRITER_IMPORTS = (
    ("writer-floor", "writer imports: python3 -c pass (site)", "pass"),
    (
        "writer-imports-state",
        "writer imports: bin + cli.main + cli.state",
        BIN_PRELUDE + "import session_workflow.cli.main, session_workflow.cli.state",
    ),
    (
        "writer-imports-anchor",
        "writer imports: bin + cli.main + cli.anchor",
        BIN_PRELUDE
        + "import session_workflow.cli.main, session_workflow.cli.anchor, session_workflow.cli.anchor_writer",
    ),
    ("writer-imports-filelock", "writer imports: bin + filelock", BIN_PRELUDE + "import filelock"),
)


# --- checking one run --------------------------------------------------------------------------------------


def run_once(scenario: Scenario, run: int = 0, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[bytes]:
    """One untimed run with its output captured (for the checks and the profiles), after its ``before``."""
    if scenario.before is not None:
        subprocess.run(
            scenario.before[0],
            input=scenario.before[1],
            capture_output=True,
            cwd=scenario.cwd,
            env=env or scenario.env,
            timeout=CHECK_TIMEOUT_SECONDS,
            check=False,
        )
    return subprocess.run(
        scenario.argv_for(run),
        input=scenario.payload,
        capture_output=True,
        cwd=scenario.cwd,
        env=env or scenario.env,
        timeout=CHECK_TIMEOUT_SECONDS,
        check=False,
    )


def context_of(stdout: bytes) -> str | None:
    """The additionalContext of a hook's JSON answer; None when it printed something else."""
    try:
        document = json.loads(stdout)
        text = document["hookSpecificOutput"]["additionalContext"]
    except (ValueError, KeyError, TypeError):
        return None
    return text if isinstance(text, str) else None


def check(scenario: Scenario, load: workload.Workload) -> tuple[str, str]:
    """(``ok`` or what is wrong, what the command printed in short) from one untimed run.

    For the unchanged-prompt scenario, a run with an empty plugin-data dir must first deliver the section, so
    its later silence is the latch, not a hook that finds nothing.
    """
    if scenario.key == "ups-unchanged":
        with tempfile.TemporaryDirectory() as fresh:
            env = dict(scenario.env, CLAUDE_PLUGIN_DATA=fresh)
            first = context_of(run_once(scenario, env=env).stdout) or ""
        if workload.STATE_TITLE not in first:
            return "the first prompt did not deliver the work state", "silent"
        run_once(scenario)
    if scenario.before is not None:  # the timed run must do the work: take the note its PreToolUse left
        notes = os.path.join(scenario.env["HOME"], ".local", "state", "session-workflow", "edits-pending")
        run_once(
            Scenario(
                scenario.key,
                scenario.label,
                scenario.before[0],
                env=scenario.env,
                cwd=scenario.cwd,
                payload=scenario.before[1],
            )
        )
        if not (os.path.isdir(notes) and os.listdir(notes)):
            return "its PreToolUse noted no vouched state", ""
        done = run_once(
            Scenario(
                scenario.key,
                scenario.label,
                scenario.argv,
                env=scenario.env,
                cwd=scenario.cwd,
                payload=scenario.payload,
            )
        )
        if os.listdir(notes):
            return "the PostToolUse left its PreToolUse's note", ""
    else:
        done = run_once(scenario)
    if done.returncode != 0:
        lines = done.stderr.decode("utf-8", "replace").strip().splitlines()
        return f"exit {done.returncode}: {lines[-1] if lines else 'no stderr'}", ""
    if scenario.expect is None:
        return "ok", "exit 0"
    if done.stderr:
        return f"stderr: {done.stderr.decode('utf-8', 'replace').strip().splitlines()[0]}", ""
    if not scenario.expect:
        return ("ok", "silent") if not done.stdout else (f"expected silence, got {len(done.stdout)} bytes", "")
    text = context_of(done.stdout)
    if text is None:
        return "no additionalContext in the output", ""
    missing = [part for part in scenario.expect if part not in text]
    units = len(text.encode("utf-16-le")) // 2
    if missing:
        return f"output ({units:,} units) lacks: " + "; ".join(missing), ""
    return "ok", f"{units:,} UTF-16 units"


def checked(scenario: Scenario, load: workload.Workload) -> tuple[str, str]:
    """``check``, with a command that hangs reported instead of raised (it is then not timed)."""
    try:
        return check(scenario, load)
    except subprocess.TimeoutExpired:
        return f"exit: none, still running after {CHECK_TIMEOUT_SECONDS:.0f} s", ""


# --- timing ------------------------------------------------------------------------------------------------


def launch(python: str, jobs: list[tuple[object, ...]]) -> list[tuple[int, float, int, int]]:
    """Run jobs through the small launcher (see spawn.py for why); one result per job."""
    done = subprocess.run(
        [python, "-I", "-S", SPAWN],
        input=marshal.dumps(jobs),
        capture_output=True,
        timeout=JOB_TIMEOUT_SECONDS * max(1, len(jobs)),
        check=True,
    )
    results: list[tuple[int, float, int, int]] = marshal.loads(done.stdout)
    return results


def rss_resolution(python: str, scratch: str) -> int:
    """The launcher's own share of a child's ru_maxrss: what a trivial ``true`` child reports (KiB)."""
    true = shutil.which("true")
    if true is None:
        return 0
    null = os.devnull
    results = launch(python, [([true], {}, scratch, null, null, null)] * 3)
    return min(rss for _wall, _cpu, rss, _code in results)


def measure(
    python: str, timed: list[Scenario], out_dir: str, rounds: int, warmup: int, seed: int
) -> dict[str, list[tuple[int, float, int, int]]]:
    """All rounds in one launcher, each round every scenario once in a shuffled order; warm-up rounds dropped."""
    shuffler = random.Random(seed)
    payloads = {}
    for scenario in timed:
        payloads[scenario.key] = os.path.join(out_dir, f"{scenario.key}.payload")
        with open(payloads[scenario.key], "wb") as handle:
            handle.write(scenario.payload)
        if scenario.before is not None:
            payloads[scenario.key + ".before"] = os.path.join(out_dir, f"{scenario.key}.before.payload")
            with open(payloads[scenario.key + ".before"], "wb") as handle:
                handle.write(scenario.before[1])
    jobs: list[tuple[object, ...]] = []
    keys: list[tuple[str | None, int]] = []
    for round_index in range(warmup + rounds):
        order = list(timed)
        shuffler.shuffle(order)
        for scenario in order:
            stem = os.path.join(out_dir, scenario.key)
            argv = scenario.argv_for(round_index + 1)
            if scenario.before is not None:  # untimed: its result is dropped
                before = payloads[scenario.key + ".before"]
                jobs.append((scenario.before[0], scenario.env, scenario.cwd, before, f"{stem}.b.out", f"{stem}.b.err"))
                keys.append((None, round_index))
            jobs.append((argv, scenario.env, scenario.cwd, payloads[scenario.key], f"{stem}.out", f"{stem}.err"))
            keys.append((scenario.key, round_index))
    samples: dict[str, list[tuple[int, float, int, int]]] = {scenario.key: [] for scenario in timed}
    for (key, round_index), result in zip(keys, launch(python, jobs)):
        if key is not None and round_index >= warmup:
            samples[key].append(result)
    return samples


def collect(
    all_scenarios: Sequence[Scenario],
    checks: dict[str, tuple[str, str]],
    samples: dict[str, list[tuple[int, float, int, int]]],
) -> list[Measured]:
    """Samples into Measured records; a paired ratio divides a run by the floor's run of the same round."""
    floor_p, floor_j = samples[FLOOR_P], samples[FLOOR_J]
    results = []
    for scenario in all_scenarios:
        status, output = checks.get(scenario.key, (f"n/a: {scenario.reason}", ""))
        result = Measured(
            scenario.key,
            scenario.label,
            target=scenario.target,
            growth=scenario.growth,
            check=status,
            output=output,
            hook=scenario.expect is not None,
            rss_target=scenario.rss_target,
        )
        for index, (wall, cpu, rss, code) in enumerate(samples.get(scenario.key, [])):
            result.wall_ms.append(wall / 1e6)
            result.cpu_ms.append(cpu * 1e3)
            result.rss_kib.append(rss)
            result.exit_codes.append(code)
            result.paired_p.append(wall / floor_p[index][0])
            result.paired_j.append(wall / floor_j[index][0])
        if any(result.exit_codes) and result.check == "ok":
            result.check = f"exit {max(result.exit_codes, key=abs)} in a timed run"
        results.append(result)
    return results


# --- profiling ---------------------------------------------------------------------------------------------

# Runs a hook shim (or the CLI) under cProfile in-process: the shims end in os._exit, which would skip the report,
# so os._exit becomes an exception for the length of the run; the CLI's SystemExit is caught too. The report
# goes to stderr.
PROFILE_CODE = """
import cProfile, os, pstats, sys
class _Exit(BaseException):
    pass
def _exit(code):
    raise _Exit(code)
script = sys.argv[1]
sys.argv = sys.argv[1:]
os._exit = _exit
namespace = {"__file__": script, "__name__": "__main__"}
with open(script) as handle:
    code = compile(handle.read(), script, "exec")
profile = cProfile.Profile()
try:
    profile.runctx(code, namespace, namespace)
except (_Exit, SystemExit):
    pass
sys.stdout.flush()
pstats.Stats(profile, stream=sys.stderr).sort_stats("cumulative").print_stats(%d)
"""
IMPORTTIME_RUNS = 7
IMPORT_LINE = re.compile(r"import time:\s+(\d+) \|\s+(\d+) \|( *)(\S+)")


def profile(scenario: Scenario, top: int) -> list[str]:
    """``-X importtime`` (slowest imports by self and cumulative time) and a cProfile of one run."""
    assert scenario.argv is not None
    argv = scenario.argv_for(0)
    if argv[:2] == ["/bin/sh", LAUNCHER]:  # the interpreter the launcher runs: ``-X`` and ``-c`` are its options
        argv = [launched(scenario.env, scenario.cwd).split(" ")[0], *argv[2:]]
    lines = [f"profile of {scenario.label}: {' '.join(argv)}"]
    timed = Scenario(
        scenario.key,
        scenario.label,
        [argv[0], "-X", "importtime", *argv[1:]],
        env=scenario.env,
        cwd=scenario.cwd,
        payload=scenario.payload,
    )
    fastest: dict[str, tuple[int, int, int]] = {}  # module: (own µs, cumulative µs, depth), each the least seen
    for _run in range(IMPORTTIME_RUNS):
        for line in run_once(timed).stderr.decode("utf-8", "replace").splitlines():
            match = IMPORT_LINE.match(line)
            if match:
                own, cumulative, name = int(match.group(1)), int(match.group(2)), match.group(4)
                seen = fastest.get(name, (own, cumulative, 0))
                fastest[name] = (min(own, seen[0]), min(cumulative, seen[1]), len(match.group(3)) // 2)
    imports = [(own, cumulative, depth, name) for name, (own, cumulative, depth) in fastest.items()]
    total = sum(own for own, _cumulative, _depth, _name in imports)
    lines.append(
        f"-X importtime, least of {IMPORTTIME_RUNS} runs: {len(imports)} modules, {total / 1000:.1f} ms of imports"
    )
    lines.append("  slowest by own time (µs own | cumulative | module):")
    for own, cumulative, _depth, name in sorted(imports, reverse=True)[:top]:
        lines.append(f"  {own:>7} | {cumulative:>8} | {name}")
    lines.append("  top-level imports by cumulative time:")
    for own, cumulative, _depth, name in sorted((i for i in imports if i[2] == 0), key=lambda i: -i[1])[:top]:
        lines.append(f"  {own:>7} | {cumulative:>8} | {name}")
    script_at = next((index for index, arg in enumerate(argv) if index and not arg.startswith("-")), None)
    if script_at is None:
        return lines
    profiled = Scenario(
        scenario.key,
        scenario.label,
        [argv[0], *argv[1:script_at], "-c", PROFILE_CODE % top, *argv[script_at:]],
        env=scenario.env,
        cwd=scenario.cwd,
        payload=scenario.payload,
    )
    lines.append("cProfile (cumulative):")
    lines += ["  " + line for line in run_once(profiled).stderr.decode("utf-8", "replace").splitlines() if line]
    return lines


# --- the run -----------------------------------------------------------------------------------------------


def machine_line(python: str, version: str, loads: tuple[float, float], resolution: int) -> str:
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as handle:
            cpu = next((line.split(":", 1)[1].strip() for line in handle if line.startswith("model name")), cpu)
    except OSError:
        pass
    stamp = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    return (
        f"machine: {platform.system()} {platform.release()} {platform.machine()}, {cpu}, {os.cpu_count()} CPUs;"
        f" Python {version} ({python}); load {loads[0]:.2f} → {loads[1]:.2f}; {stamp};"
        f" RSS resolution {resolution / 1024:.1f} MB"
    )


def load_average() -> float:
    return os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")


def update_readme(block: list[str]) -> bool:
    """Put the table between the README's markers; False when the markers are missing."""
    with open(README, encoding="utf-8") as handle:
        text = handle.read()
    if README_BEGIN not in text or README_END not in text:
        return False
    before, rest = text.split(README_BEGIN, 1)
    _old, after = rest.split(README_END, 1)
    body = "\n".join(["```", *block, "```"])
    with open(README, "w", encoding="utf-8") as handle:
        handle.write(f"{before}{README_BEGIN}\n{body}\n{README_END}{after}")
    return True


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="benchmarks/run.py", description=__doc__.splitlines()[0] if __doc__ else "")
    parser.add_argument("--runs", type=int, default=20, help="timed rounds (default 20)")
    parser.add_argument("--warmup", type=int, default=3, help="untimed rounds first (default 3)")
    parser.add_argument("--tiny", action="store_true", help="a tiny workload (the smoke test's), not the issue's")
    parser.add_argument("--python", default=sys.executable, help="the interpreter hooks.json's python3 stands for")
    parser.add_argument("--workdir", help="where the workload is generated and cached (default benchmarks/results/)")
    parser.add_argument("--regenerate", action="store_true", help="rebuild the cached workload")
    parser.add_argument("--only", help="comma-separated scenario keys or prefixes to run (floors always run)")
    parser.add_argument("--json", help="write the results here (default benchmarks/results/bench-<time>.json)")
    parser.add_argument("--seed", type=int, default=11, help="shuffle seed of the interleaving")
    parser.add_argument("--profile", metavar="KEY", help="profile one scenario (-X importtime, cProfile) instead")
    parser.add_argument("--update-readme", action="store_true", help="put this run's table in benchmarks/README.md")
    parser.add_argument("--strict", action="store_true", help="exit 1 when a target is missed or a check fails")
    parser.add_argument("--list", action="store_true", help="list the scenario keys and exit")
    parser.add_argument(
        "--setup", choices=SETUPS, default="binary", help="what leads hooks/python.sh to python3 (default binary)"
    )
    return parser.parse_args(argv)


def setup_line(setup: str) -> str:
    """What ``setup`` put first on the hooks' PATH, in words."""
    if setup == "shim":
        return f"pyenv's shims {pyenv_shims()} first on PATH"
    return "--python's folder (or a link to it) first on PATH" + (
        ", PYTHONDONTWRITEBYTECODE=1" if setup == "nobc" else ""
    )


def by_interpreter(ran: Mapping[str, str]) -> dict[str, list[str]]:
    """The rows' keys per interpreter that ran them."""
    found: dict[str, list[str]] = {}
    for key, path in ran.items():
        found.setdefault(path, []).append(key)
    return found


def selected(all_scenarios: list[Scenario], only: str | None) -> list[Scenario]:
    if not only:
        return all_scenarios
    wanted = [item.strip() for item in only.split(",") if item.strip()]
    return [s for s in all_scenarios if s.key in (FLOOR_P, FLOOR_J) or any(s.key.startswith(w) for w in wanted)]


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    python = os.path.abspath(args.python)
    sizes = workload.TINY if args.tiny else workload.FULL
    workdir = args.workdir or os.path.join(RESULTS, "workload-tiny" if args.tiny else "workload")
    started = time.monotonic()
    load_start = load_average()
    load, reused = workload.ensure(workdir, sizes, args.regenerate)
    print(f"workload: {load.root} ({'cached' if reused else 'generated'} in {time.monotonic() - started:.1f} s)")
    if args.setup == "shim" and pyenv_shims() is None:
        print("--setup shim: no pyenv shims folder with a python3 here", file=sys.stderr)
        return 2
    chosen = selected(scenarios(load, python, args.setup, args.warmup + args.runs), args.only)
    # Which python3 each row ran: the launcher's choice under the row's PATH (the floors: --python itself).
    ran = {s.key: launched(s.env, s.cwd) for s in chosen if s.argv is not None and s.argv[:1] in (["/bin/sh"], [CLI])}
    if args.list:
        for scenario in chosen:
            print(f"{scenario.key:<22} {scenario.label}" + (f"  [n/a: {scenario.reason}]" if scenario.reason else ""))
        return 0
    if args.profile:
        match = [s for s in chosen if s.key == args.profile and s.argv is not None]
        if not match:
            print(f"no runnable scenario {args.profile!r} (see --list)", file=sys.stderr)
            return 2
        print("\n".join(profile(match[0], 25)))
        return 0
    checks = {s.key: checked(s, load) for s in chosen if s.argv is not None}
    # A hook whose output is wrong is still timed (and flagged); a command that fails outright is not.
    timed = [s for s in chosen if s.argv is not None and not checks[s.key][0].startswith("exit")]
    out_dir = os.path.join(load.root, "out")
    os.makedirs(out_dir, exist_ok=True)
    resolution = rss_resolution(python, out_dir)
    print(f"measuring {len(timed)} commands × {args.runs} rounds (+{args.warmup} warm-up), interleaved …", flush=True)
    samples = measure(python, timed, out_dir, args.runs, args.warmup, args.seed)
    results = collect(chosen, checks, samples)
    version = subprocess.run(
        [python, "-I", "-S", "-c", "import sys; print(sys.version.split()[0])"], capture_output=True, text=True
    ).stdout.strip()
    machine = machine_line(python, version, (load_start, load_average()), resolution)
    found = report.verdicts(results, resolution)
    block = [
        f"session-workflow hook benchmarks: {args.runs} rounds after {args.warmup} warm-up, interleaved"
        + (" (tiny workload)" if args.tiny else ""),
        machine,
        f"setup {args.setup}: {setup_line(args.setup)}; hooks and writers ran "
        + "; ".join(f"{path} ({len(keys)} rows)" for path, keys in by_interpreter(ran).items()),
        "",
        *report.table_lines(results, resolution),
        "",
        *report.growth_lines(results),
        "",
        "targets:",
        *(f"  {v.result:<4} {v.name}" + (f" (measured {v.value:.2f})" if v.value is not None else "") for v in found),
    ]
    print("\n".join(block))
    document = {
        "machine": machine,
        "python": python,
        "python_version": version,
        "setup": args.setup,
        "interpreters": ran,
        "runs": args.runs,
        "warmup": args.warmup,
        "tiny": args.tiny,
        "rss_resolution_kib": resolution,
        "sizes": sizes.as_dict(),
        "scenarios": [
            {
                "key": r.key,
                "label": r.label,
                "check": r.check,
                "output": r.output,
                "target": r.target,
                "growth": list(r.growth) if r.growth else None,
                "wall_ms": r.wall_ms,
                "cpu_ms": r.cpu_ms,
                "rss_kib": r.rss_kib,
                "paired_j": r.paired_j,
            }
            for r in results
        ],
        "verdicts": [v.as_dict() for v in found],
        "table": block,
    }
    path = args.json or os.path.join(RESULTS, time.strftime("bench-%Y%m%d-%H%M%S.json", time.gmtime()))
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    with open(path, "w", encoding="utf-8") as handle:
        json.dump(document, handle, indent=1)
    print(f"\nresults: {path} ({time.monotonic() - started:.0f} s in all)")
    if args.update_readme and not update_readme(block):
        print(f"{README} has no {README_BEGIN} … {README_END} markers; not updated", file=sys.stderr)
    failed = any(v.result == "MISS" for v in found) or any(r.check not in ("ok",) and r.measured for r in results)
    return 1 if args.strict and failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
