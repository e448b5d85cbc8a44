"""``session-workflow demo``: the main job on a throwaway project, end to end through the real hook.

It makes an anchor and a work state with the real CLI, a task store and a transcript shaped like Claude Code's,
then pipes real SessionStart payloads through ``hooks/hook.py SessionStart`` exactly as hooks.json runs it, and
prints what Claude Code would inject, with its size against the 10,000-unit cap.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import uuid

from session_workflow.cli.parser import OneLineParser
from session_workflow.core import config
from session_workflow.core.text import escaped, shell_command, utf16_len
from session_workflow.hook.compose import CAP_UTF16

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence

    from session_workflow.core.places import Places

# The folder holding the package: ``<checkout>/src``, or the site folder of an installed (pipx) copy.
SRC = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
ROOT = os.path.dirname(SRC)
# What hooks/hook.py does for SessionStart, for an installed copy that has no hooks/ folder.
INSTALLED_HOOK = """import os, sys
sys.path.insert(0, {src!r})
try:
    from session_workflow.hook.compose import main

    main()
finally:
    os._exit(0)
"""

# The CLI the demo runs in its throwaway project: isolated (``-I``) as bin/session-workflow runs it, with only this
# package and its dependencies on the path, so neither the folder the demo is started in (a repository's
# ``session_workflow/`` or ``json.py``) nor a ``PYTHONPATH`` its ``env`` block set can run inside it.
DEMO_CLI = """import sys
sys.path[:0] = {paths!r}
from session_workflow.cli.main import main

raise SystemExit(main())
"""

ANCHOR = """---
format: anchor/v1
task: Migrate the billing service to the new ledger
step: 0
---
# Mission
Move every invoice write from the legacy `billing_v1` tables to the ledger API, with no downtime.
User rule U1 (verbatim): "never run the backfill against production without a dry-run first".

## Cursor
- Next action: run the backfill dry-run against staging; first verify `ledger_migration_2` is applied.

## Resume steps
1. `session-workflow anchor show` (not Read). 2. `{log}`. 3. Continue from the cursor.

## Invariants
- Writes go through `LedgerClient`; reads may still hit `billing_v1` until phase 3.

## Last-known-good
- Branch `ledger-migration`, commit `4f2c1ab` (tests green).

<!-- anchor:tail -->
## Decisions log
- Chose dual-write over a cut-over: rollback stays a config flip.
"""

TASKS = [
    ("in_progress", "Port the invoice writer to LedgerClient", "Swap the three call sites in billing/writer.py."),
    ("pending", "Run the backfill dry-run on staging", "Needs migration 2 applied first."),
    ("pending", "Remove the billing_v1 write path", ""),
    ("completed", "Add LedgerClient", "Done in 4f2c1ab."),
]

PROMPTS = [
    "Let's migrate billing to the ledger; keep a dual-write until phase 3.",
    "Remember: never run the backfill against production without a dry-run first.",
    "Go ahead with the invoice writer.",
]


def in_checkout() -> bool:
    return os.path.isfile(os.path.join(ROOT, "hooks", "hooks.json"))


def hook_argv(event: str) -> list[str]:
    """The command hooks.json registers for ``event``, with the plugin root substituted.

    An installed copy (``pipx install``) has no hooks/ folder: it runs the same ``main`` hooks/hook.py
    runs, with the interpreter flags hooks.json gives it.
    """
    if not in_checkout():
        return [sys.executable, "-I", "-S", "-c", INSTALLED_HOOK.format(src=SRC)]
    with open(os.path.join(ROOT, "hooks", "hooks.json"), encoding="utf-8") as handle:
        spec = json.load(handle)
    hook = spec["hooks"][event][0]["hooks"][0]
    return [hook["command"], *(arg.replace("${CLAUDE_PLUGIN_ROOT}", ROOT) for arg in hook["args"])]


def dependency_paths() -> list[str]:
    """The folder filelock imports from, for an installed copy's CLI runs (``-I`` leaves out the user site a ``pip
    install --user`` put it in)."""
    import filelock

    return [os.path.dirname(os.path.dirname(os.path.abspath(filelock.__file__ or "")))]


def cli_argv(*args: str) -> list[str]:
    """The demo's CLI call: from the plugin folder, ``bin/session-workflow`` itself (its vendored dependencies, and
    its bytecode rule: never into the plugin folder); from an installed copy, ``DEMO_CLI``."""
    if in_checkout():
        return [sys.executable, "-I", os.path.join(ROOT, "bin", "session-workflow"), *args]
    return [sys.executable, "-I", "-c", DEMO_CLI.format(paths=[SRC, *dependency_paths()]), *args]


def _cli(env: dict[str, str], *args: str, stdin: str | None = None) -> str:
    done = subprocess.run(cli_argv(*args), input=stdin, capture_output=True, text=True, env=env, check=True)
    return done.stdout.strip()


def _write_tasks(folder: str) -> None:
    os.makedirs(folder)
    for number, (status, subject, description) in enumerate(TASKS, start=1):
        task: dict[str, object] = {"id": str(number), "subject": subject, "description": description}
        task.update(status=status, blocks=[], blockedBy=["1"] if number == 2 else [])
        with open(os.path.join(folder, f"{number}.json"), "w", encoding="utf-8") as handle:
            json.dump(task, handle)


def _write_transcript(path: str, project: str, session: str) -> None:
    with open(path, "w", encoding="utf-8") as handle:
        for prompt in PROMPTS:
            record = {
                "type": "user",
                "promptSource": "sdk",
                "cwd": project,
                "sessionId": session,
                "message": {"role": "user", "content": prompt},
            }
            handle.write(json.dumps(record) + "\n")


def build_project(base: str) -> tuple[str, str, dict[str, str]]:
    """Create the project, its state and the environment a hook would get; returns (project, session, env)."""
    project = os.path.join(base, "project")
    os.makedirs(project)
    session = str(uuid.uuid4())
    env = dict(
        os.environ,
        CLAUDE_CODE_SESSION_ID=session,
        CLAUDE_CONFIG_DIR=os.path.join(base, "config"),
        CLAUDE_PLUGIN_ROOT=ROOT,
        CLAUDE_PLUGIN_DATA=os.path.join(base, "plugin-data"),
        CLAUDE_PROJECT_DIR=project,
        XDG_STATE_HOME=os.path.join(base, "state"),  # the demo anchor's trust record goes with the demo
    )
    env.pop("CLAUDE_CODE_TASK_LIST_ID", None)
    for option in config.HOOK_OPTIONS:  # the demo shows the defaults, whatever this shell has set
        for name in option.names():
            env.pop(name, None)
    anchor = _cli(env, "anchor", "new", "--task", "Migrate the billing service", "--dir", project)
    _cli(
        env,
        "anchor",
        "write",
        anchor,
        stdin=ANCHOR.format(log=shell_command("git", "-C", project, "log", "--oneline", "-5")),
    )
    _cli(env, "anchor", "step", anchor, "Added LedgerClient (4f2c1ab); tests green")
    _cli(env, "state", "set", "--dir", project, "--ticket", "34", "--title", "Ledger migration", "--map", "12")
    _cli(env, "state", "step", "--dir", project, "execute")
    _write_tasks(os.path.join(base, "config", "tasks", session))
    return project, session, env


def run_hook(source: str, project: str, session: str, transcript: str, env: dict[str, str]) -> str:
    """Pipe one SessionStart payload through the real hook; return the additionalContext (or "")."""
    payload = {
        "session_id": session,
        "transcript_path": transcript,
        "cwd": project,
        "hook_event_name": "SessionStart",
        "source": source,
    }
    done = subprocess.run(hook_argv("SessionStart"), input=json.dumps(payload).encode(), capture_output=True, env=env)
    if not done.stdout:
        return ""
    context: str = json.loads(done.stdout)["hookSpecificOutput"]["additionalContext"]
    return context


def run(args: argparse.Namespace, places: Places) -> int:
    base = tempfile.mkdtemp(prefix="session-workflow-demo-")
    try:
        project, session, env = build_project(base)
        transcript = os.path.join(base, "config", "projects", "demo", f"{session}.jsonl")
        os.makedirs(os.path.dirname(transcript))
        if not in_checkout():
            print("(an installed copy: the hook runs from the installed package, as hooks/hook.py does)")
        print(f"A throwaway project: {escaped(project)}")
        print("  an anchor (session-workflow anchor new/write/step), ticket #34 at step 'execute'")
        print(
            f"  (session-workflow state set/step), 3 open tasks in {escaped(env['CLAUDE_CONFIG_DIR'])}/tasks/{session}/"
        )
        for source in ("startup", "compact"):
            if source == "compact":
                _write_transcript(transcript, project, session)
            context = run_hook(source, project, session, transcript, env)
            print(f"\n===== SessionStart ({source}): what Claude Code would inject =====")
            print(context or "(nothing)")
            print(f"===== {utf16_len(context)} of {CAP_UTF16} UTF-16 units =====")
    except subprocess.CalledProcessError as error:
        command = " ".join(error.cmd[len(cli_argv()) :])
        print(f"demo: session-workflow {command} failed: {error.stderr.strip()}", file=sys.stderr)
        return 1
    finally:
        if args.keep:
            print(f"\n(kept {escaped(base)})")
        else:
            shutil.rmtree(base, ignore_errors=True)
    return 0


def setup(parser: OneLineParser, _argv: Sequence[str]) -> None:
    """Set up ``demo``."""
    parser.description = __doc__
    parser.add_argument("--keep", action="store_true", help="keep the throwaway project and print where it is")
    parser.set_defaults(run=run)
