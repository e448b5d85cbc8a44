"""``session-workflow inject``: the SessionStart hook as a command, and its dry run.

``inject --dry-run`` shows what the hook would inject for a session right now, with what each part spent;
plain ``inject`` reads a hook payload on stdin and answers exactly as ``hooks/hook.py SessionStart`` does, so a
hand-registered hook (references/cold-start.md) can point at the installed CLI.

Run from Claude Code's Bash tool, the dry run finds what the hook gets from Claude Code: the session's
transcript (for the start directory, the user's prompts and what a resumed thread already holds) and whether
the mod is loaded, which decides whether the work state goes in the block or in the system prompt.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

from session_workflow.cli.health import MOD_MIN_VERSION, agent_version
from session_workflow.cli.parser import CliError, OneLineParser
from session_workflow.core.context import SOURCES, HookContext
from session_workflow.core.locations import SESSION_ENV
from session_workflow.core.places import Places
from session_workflow.core.text import escaped, utf8_len, utf16_len
from session_workflow.core.where import command_project_dir, session_transcript
from session_workflow.hook import compose
from session_workflow.hook.io import run_hook

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence

    from session_workflow.core.places import Places

PLUGIN_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))


def context_for(
    source: str,
    cwd: str,
    session: str | None,
    transcript: str | None,
    places: Places,
    mod_active: bool = False,
    project: str | None = None,
) -> HookContext:
    """A context as Claude Code would describe this session at SessionStart (its project ``project``), as a dry
    run."""
    ctx = HookContext(
        event="SessionStart",
        source=source,
        session_id=session,
        cwd=os.path.abspath(cwd),
        transcript_path=os.path.abspath(transcript) if transcript else None,
        mod_active=mod_active,
        places=places,
        now=time.time(),
        project=project,
    )
    ctx.dry_run = True
    return ctx


def declares_mod(plugin_root: str) -> bool:
    """Whether the plugin at ``plugin_root`` registers a hooks module (``"modules"`` in hooks/hooks.json)."""
    try:
        with open(os.path.join(plugin_root, "hooks", "hooks.json"), encoding="utf-8") as handle:
            config = json.load(handle)
    except (OSError, ValueError):
        return False
    return isinstance(config, dict) and bool(config.get("modules"))


def detect_mod(agent: str | None, plugin_root: str) -> tuple[bool, str]:
    """(whether the mod is loaded, why we think so), from the Claude Code build the Bash tool names."""
    version = agent_version(agent)
    if version is None:
        return False, "not run from Claude Code's Bash tool; --mod shows the block with the mod loaded"
    shown = ".".join(map(str, version))
    if version < MOD_MIN_VERSION:
        return False, f"detected: Claude Code {shown} predates hooks modules"
    if not declares_mod(plugin_root):
        return False, f"detected: Claude Code {shown}, but {plugin_root}/hooks/hooks.json declares no mod"
    return True, f"detected: Claude Code {shown} loads this plugin's hooks/mod/register.ts"


def size_report(composition: compose.Composition) -> list[str]:
    """One line per emitted part, then the total against the cap."""
    lines = [f"{name:<11} {units:>6} UTF-16 units {size:>6} bytes" for name, units, size in composition.sizes]
    total = utf16_len(composition.text)
    lines.append(f"{'total':<11} {total:>6} UTF-16 units {utf8_len(composition.text):>6} bytes")
    lines.append(f"cap {compose.CAP_UTF16} UTF-16 units: {compose.CAP_UTF16 - total} to spare")
    if composition.omitted:
        lines.append("omitted for space: " + ", ".join(composition.omitted))
    return lines


def dry_run(args: argparse.Namespace, places: Places) -> int:
    if not os.path.isdir(args.cwd):
        raise CliError(f"--cwd {escaped(args.cwd)}: no such directory", 2)
    if args.mod is None:
        mod, why = detect_mod(places.env.get("AI_AGENT"), PLUGIN_ROOT)
    else:
        mod, why = args.mod, "--mod given" if args.mod else "--no-mod given"
    cwd = os.path.abspath(args.cwd)
    named = Places({**places.env, SESSION_ENV: args.session or ""})  # the session --session names
    transcript = args.transcript or session_transcript(named, cwd)
    project, ignored = command_project_dir(named, cwd, os.path.abspath(transcript) if transcript else None)
    if ignored:
        print(ignored, file=sys.stderr)
    ctx = context_for(args.source, cwd, args.session, transcript, places, mod, project)
    mod_line = f"mod: {'loaded' if mod else 'not loaded'} ({why})" + (
        "; the work state goes in the system prompt, not in this block" if mod else ""
    )
    where = (
        f"transcript: {escaped(transcript)}"
        if transcript
        else "transcript: none (no user prompts; --transcript names one)"
    )
    composition = compose.compose(ctx)
    if not composition.text:
        print(f"(nothing to inject at SessionStart:{args.source} for {escaped(os.path.abspath(args.cwd))})")
        print(mod_line)
        print(where)
        return 0
    print(composition.text)
    print("\n--- sizes ---")
    print("\n".join([*size_report(composition), mod_line, where]))
    return 0


def run(args: argparse.Namespace, places: Places) -> int:
    if args.dry_run:
        return dry_run(args, places)
    run_hook(compose.session_start, "SessionStart")
    return 0


def setup(parser: OneLineParser, _argv: Sequence[str]) -> None:
    """Set up ``inject``."""
    parser.description = __doc__.splitlines()[0] if __doc__ else None
    parser.add_argument(
        "--dry-run", action="store_true", help="print the block the hook would send here and its sizes; write nothing"
    )
    mod = parser.add_mutually_exclusive_group()
    mod.add_argument(
        "--mod",
        dest="mod",
        action="store_true",
        default=None,
        help="as with the mod loaded (the work state in the system prompt); default: detect it",
    )
    mod.add_argument(
        "--no-mod", dest="mod", action="store_false", help="as without the mod (the work state in the block)"
    )
    parser.add_argument("--source", choices=SOURCES, default="compact", help="SessionStart source (default compact)")
    parser.add_argument("--cwd", default=".", help="the session's working directory (default: here)")
    parser.add_argument(
        "--session",
        default=os.environ.get("CLAUDE_CODE_SESSION_ID"),
        help="session id (default: $CLAUDE_CODE_SESSION_ID)",
    )
    parser.add_argument(
        "--transcript",
        help="the session's transcript (start directory, user prompts, a resumed thread's blocks); default: the "
        "session's own under $CLAUDE_CONFIG_DIR/projects",
    )
    parser.set_defaults(run=run)
