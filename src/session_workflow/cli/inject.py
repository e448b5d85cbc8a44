"""``session-workflow inject``: the SessionStart hook as a command, and its dry run.

``inject --dry-run`` shows what the hook would inject for a session right now, with what each part spent;
plain ``inject`` reads a hook payload on stdin and answers exactly as ``hooks/session_start.py`` does, so a
hand-registered hook (references/cold-start.md) can point at the installed CLI.
"""

from __future__ import annotations

import argparse
import os
import time

from session_workflow.cli.parser import OneLineParser
from session_workflow.core.text import utf8_len, utf16_len
from session_workflow.hook import compose
from session_workflow.hook.context import SOURCES, HookContext
from session_workflow.hook.io import run_hook


def context_for(source: str, cwd: str, session: str | None, transcript: str | None) -> HookContext:
    """A context as Claude Code would describe this session at SessionStart, as a dry run."""
    ctx = HookContext(
        event="SessionStart",
        source=source,
        session_id=session,
        cwd=os.path.abspath(cwd),
        transcript_path=os.path.abspath(transcript) if transcript else None,
        mod_active=False,
        env=os.environ,
        now=time.time(),
    )
    ctx.dry_run = True
    return ctx


def size_report(composition: compose.Composition) -> list[str]:
    """One line per emitted part, then the total against the cap."""
    lines = [f"{name:<11} {units:>6} UTF-16 units {size:>6} bytes" for name, units, size in composition.sizes]
    total = utf16_len(composition.text)
    lines.append(f"{'total':<11} {total:>6} UTF-16 units {utf8_len(composition.text):>6} bytes")
    lines.append(f"cap {compose.CAP_UTF16} UTF-16 units: {compose.CAP_UTF16 - total} to spare")
    if composition.omitted:
        lines.append("omitted for space: " + ", ".join(composition.omitted))
    return lines


def dry_run(args: argparse.Namespace) -> int:
    composition = compose.compose(context_for(args.source, args.cwd, args.session, args.transcript))
    if not composition.text:
        print(f"(nothing to inject at SessionStart:{args.source} for {os.path.abspath(args.cwd)})")
        return 0
    print(composition.text)
    print("\n--- sizes ---")
    print("\n".join(size_report(composition)))
    return 0


def run(args: argparse.Namespace) -> int:
    if args.dry_run:
        return dry_run(args)
    run_hook(compose.session_start)
    return 0


def register(commands: argparse._SubParsersAction[OneLineParser]) -> None:
    """Add ``inject``."""
    parser = commands.add_parser(
        "inject",
        help="run the SessionStart hook (stdin payload), or show what it would inject (--dry-run)",
        description=__doc__.splitlines()[0] if __doc__ else None,
    )
    parser.add_argument(
        "--dry-run",
        action="store_true",
        help="print the block and its sizes; write nothing (as without the mod: the work state is in the block)",
    )
    parser.add_argument("--source", choices=SOURCES, default="compact", help="SessionStart source (default compact)")
    parser.add_argument("--cwd", default=".", help="the session's working directory (default: here)")
    parser.add_argument(
        "--session",
        default=os.environ.get("CLAUDE_CODE_SESSION_ID"),
        help="session id (default: $CLAUDE_CODE_SESSION_ID)",
    )
    parser.add_argument("--transcript", help="the session's transcript (for the start directory and recovery)")
    parser.set_defaults(run=run)
