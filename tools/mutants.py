"""Mutation check of the promised numbers and rules: every mutant below must make the unit tests fail.

Each mutant is one exact text replacement in one source file. It is applied to a temporary copy of the repo
and the unit tests (``-m "not e2e and not slow"``) run there: the mutant's own targeted files by default, the
whole unit suite with ``--full``. A mutant that survives, or whose text no longer occurs exactly once (the code
moved: update the list), fails the check. The unmutated copy runs the same files first, so a red baseline is
reported as such and not mistaken for a kill.

    python tools/mutants.py [--full] [--only NAME ...] [--list]
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PKG = "src/session_workflow/"
PROMISES = "tests/test_promises.py"
ANCHOR, HOOK, TASKS = ("tests/anchor",), ("tests/hook",), ("tests/tasks",)
STATE = ("tests/workstate", "tests/hook")
IGNORED = (".git", ".cache", ".tox", "node_modules", "__pycache__", ".hypothesis", ".mypy_cache", ".ruff_cache")


class Mutant:
    """One change of a promise: ``old`` (exactly once in ``path``) becomes ``new``; ``tests`` should notice."""

    __slots__ = ("name", "new", "old", "path", "tests")

    def __init__(self, name: str, path: str, old: str, new: str, tests: tuple[str, ...] = ()) -> None:
        self.name = name
        self.path = PKG + path
        self.old = old
        self.new = new
        self.tests = (PROMISES, *tests)


MUTANTS = [
    # The five of issue 20.
    Mutant("cap 10,000 -> 10,200", "hook/compose.py", "CAP_UTF16 = 10_000", "CAP_UTF16 = 10_200", HOOK),
    Mutant("task block 4,096 -> 5,000 bytes", "tasks/render.py", "CAP_BYTES = 4096", "CAP_BYTES = 5000", TASKS),
    Mutant("PreCompact 600 -> 700", "hook/precompact.py", "MAX_CHARS = 600", "MAX_CHARS = 700", HOOK),
    Mutant(
        "in progress not first",
        "tasks/render.py",
        'return (0 if task.status == "in_progress" else 1, -task.mtime, -task.id)',
        "return (0, -task.mtime, -task.id)",
        TASKS,
    ),
    Mutant(
        "a state without an owner is this session's",
        "workstate/state.py",
        "if loaded is not None and loaded.state.session == ctx.session_id:",
        "if loaded is not None and loaded.state.session in (None, ctx.session_id):",
        STATE,
    ),
    # Our own: every other promised number and rule.
    Mutant(
        "any owner is this session's (no orphans)",
        "workstate/state.py",
        "if loaded is not None and loaded.state.session == ctx.session_id:",
        "if loaded is not None and loaded.state.session is not None:",
        STATE,
    ),
    Mutant(
        "cap measured in code points",
        "hook/compose.py",
        "units = utf16_len(text)\n        if not text or units > budget:",
        "units = len(text)\n        if not text or units > budget:",
    ),
    Mutant(
        "clear gets the old session's tasks",
        "hook/compose.py",
        '"clear": ("anchor",),',
        '"clear": ("anchor", "tasks"),',
        HOOK,
    ),
    Mutant("40 tasks -> 41", "tasks/render.py", "MAX_TASKS = 40", "MAX_TASKS = 41", TASKS),
    Mutant("subject 160 -> 200 bytes", "tasks/render.py", "SUBJECT_BYTES = 160", "SUBJECT_BYTES = 200"),
    Mutant("description 300 -> 400 bytes", "tasks/render.py", "DESCRIPTION_BYTES = 300", "DESCRIPTION_BYTES = 400"),
    Mutant(
        "subject cut in code points",
        "tasks/render.py",
        "subject = cut_utf8(one_line(task.subject), SUBJECT_BYTES)",
        "subject = one_line(task.subject)[:SUBJECT_BYTES]",
    ),
    Mutant(
        "highest id first within a status",
        "tasks/render.py",
        "-task.mtime, -task.id)",
        "-task.id, -task.mtime)",
        TASKS,
    ),
    Mutant(
        "lowest id first on a tie",
        "tasks/render.py",
        "-task.mtime, -task.id)",
        "-task.mtime, task.id)",
        TASKS,
    ),
    Mutant(
        "the newest of several older candidates is taken",
        "tasks/store.py",
        "        if found is not None:\n            return AMBIGUOUS\n",
        "        if found is not None:\n            break\n",
        TASKS,
    ),
    Mutant(
        "a sibling newer than this session is a candidate",
        "tasks/store.py",
        "if mtime < upper_bound:",
        "if mtime < upper_bound + 1e9:",
        TASKS,
    ),
    Mutant(
        "section 1,024 -> 1,100 bytes",
        "workstate/section.py",
        "MAX_SECTION_BYTES = 1024",
        "MAX_SECTION_BYTES = 1100",
        ("tests/workstate",),
    ),
    Mutant("anchor 8,000 -> 8,500", "anchor/block.py", "CAP = 8000", "CAP = 8500", ANCHOR),
    Mutant("startup 6 h -> 7 h", "anchor/text.py", "STARTUP_MAX_AGE = 6 * 3600", "STARTUP_MAX_AGE = 7 * 3600", ANCHOR),
    Mutant(
        "6 h applies to every source",
        "anchor/text.py",
        'if source == "startup" and age > startup_window:',
        "if age > startup_window:",
        ANCHOR,
    ),
    Mutant("pointer 24 h -> 25 h", "anchor/text.py", "POINTER_AGE = 24 * 3600", "POINTER_AGE = 25 * 3600", ANCHOR),
    Mutant(
        "done outranks parked",
        "anchor/text.py",
        "LIVE, PARKED, DONE, NOT_ANCHOR = 0, 1, 2, 3",
        "LIVE, PARKED, DONE, NOT_ANCHOR = 0, 2, 1, 3",
        ANCHOR,
    ),
    Mutant(
        ".closed.md is open",
        "anchor/discover.py",
        'return name.endswith(".md") and not name.endswith(".closed.md") and not name.startswith(".")',
        'return name.endswith(".md") and not name.startswith(".")',
        ANCHOR,
    ),
    Mutant(
        "a stored section is trusted as it stands",
        "workstate/state.py",
        "if loaded.stored_text == section(state, False, slug):",
        "if loaded.stored_text:",
        ("tests/reliability/test_injection.py",),
    ),
    Mutant(
        "an undecodable byte in a close command escaped as a code point",
        "core/text.py",
        r'out.append(f"\\x{code - 0xDC00:02x}")',
        r'out.append(f"\\u{code:04x}")',
        ("tests/anchor/test_classify.py", "tests/core/test_text.py"),
    ),
    Mutant(
        "the manual install command drops a pin",
        "cli/bootstrap.py",
        "*pip_arguments(target, wheels, version), *specs])",
        "*pip_arguments(target, wheels, version), *specs[:1]])",
        ("tests/cli/test_bootstrap.py",),
    ),
    Mutant(
        "a lone surrogate counted as one byte",
        "core/text.py",
        'return len(text.encode("utf-8", "surrogatepass"))',
        'return len(text.encode("utf-8", "replace"))',
        ("tests/core/test_text.py",),
    ),
    Mutant(
        "the dry run writes",
        "cli/inject.py",
        "ctx.dry_run = True",
        "ctx.dry_run = False",
        ("tests/cli/test_inject.py",),
    ),
    Mutant(
        "every verb's parser is built",
        "cli/parser.py",
        "        elif only is None:",
        "        else:",
        ("tests/cli/test_parser.py",),
    ),
    Mutant(
        "a verb's usage starts with the parent's usage",
        "cli/parser.py",
        "required=True, help=help, prog=parser.prog",
        "required=True, help=help",
        ("tests/cli/test_parser.py",),
    ),
    Mutant(
        "a killed writer's temp file blocks the next",
        "core/atomic.py",
        "        try:\n            os.unlink(temp)\n        except OSError as error:",
        "        try:\n            pass\n        except OSError as error:",
        ("tests/core/test_atomic.py",),
    ),
    Mutant(
        "PreCompact cut in code points",
        "hook/precompact.py",
        "if utf16_len(text + piece) > MAX_CHARS:",
        "if len(text + piece) > MAX_CHARS:",
    ),
    # Issue 25 (new session, fork).
    Mutant(
        "clear without the recovered tasks",
        "hook/compose.py",
        '"clear": ("work state", "anchor", "tasks"),',
        '"clear": ("work state", "anchor"),',
        (*HOOK, *TASKS),
    ),
    Mutant(
        "clear without the work-state line",
        "hook/compose.py",
        '"clear": ("work state", "anchor", "tasks"),',
        '"clear": ("anchor", "tasks"),',
        HOOK,
    ),
    Mutant(
        "the foreign work state at startup ignores the window",
        "workstate/part.py",
        'if ctx.source == "startup" and age >',
        'if ctx.source == "startup" and age < 0 and age >',
        STATE,
    ),
    Mutant(
        "the foreign line without state adopt",
        "workstate/part.py",
        '" that ticket, take it over first: `session-workflow state adopt`."',
        '" that ticket, see `session-workflow state show`."',
        STATE,
    ),
    Mutant(
        "the foreign line's title unflattened",
        "workstate/part.py",
        """f' "{display_title(state.title)}", step""",
        """f' "{state.title}", step""",
        STATE,
    ),
    Mutant(
        "the mod's session gets no foreign line",
        "hook/compose.py",
        "if not state_elsewhere:  # the mod",
        "if False:  # the mod",
        HOOK,
    ),
    Mutant(
        "a fork reads its own (absent) transcript",
        "hook/compose.py",
        'thread = fork_parent(ctx.transcript_path) if ctx.source == "fork" else ctx.transcript_path',
        "thread = ctx.transcript_path",
        HOOK,
    ),
    Mutant(
        "a resume's command line names a fork parent",
        "transcript/thread.py",
        'if "--fork-session" not in argv:',
        'if "--fork-session" in argv and False:',
        ("tests/transcript/test_thread.py", *HOOK),
    ),
    Mutant(
        "a fork parent outside the folder",
        "transcript/thread.py",
        'if not session or "/" in session or',
        "if not session or",
        ("tests/transcript/test_thread.py",),
    ),
    Mutant(
        "a block with a note after its header named 'earlier'",
        "hook/compose.py",
        'block.startswith(header(source) + "\\n")',
        "block.startswith(header(source) + SEPARATOR)",
        HOOK,
    ),
    Mutant(
        "a fork block without the fork note",
        "hook/compose.py",
        "notes = [FORK_NOTE, *notes]",
        "notes = [*notes]",
        HOOK,
    ),
]


def copy_repo(target: str) -> None:
    shutil.copytree(ROOT, target, ignore=shutil.ignore_patterns(*IGNORED), symlinks=True)


def run_tests(copy: str, files: tuple[str, ...]) -> subprocess.CompletedProcess[str]:
    """The unit tests named by ``files`` in ``copy``, stopping at the first failure (a kill needs only one)."""
    env = {key: value for key, value in os.environ.items() if not key.startswith(("SESSION_WORKFLOW_", "CLAUDE"))}
    env.update(PYTHONPATH=os.path.join(copy, "src"), PYTHONDONTWRITEBYTECODE="1")
    argv = [sys.executable, "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider", "-m", "not e2e and not slow"]
    return subprocess.run([*argv, *files], cwd=copy, env=env, capture_output=True, text=True, check=False)


def apply(copy: str, mutant: Mutant) -> str | None:
    """Apply ``mutant`` in ``copy``; returns the original text, or None when its ``old`` is not there once."""
    path = os.path.join(copy, mutant.path)
    with open(path, encoding="utf-8") as handle:
        original = handle.read()
    if original.count(mutant.old) != 1:
        return None
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(original.replace(mutant.old, mutant.new))
    return original


def restore(copy: str, mutant: Mutant, original: str) -> None:
    with open(os.path.join(copy, mutant.path), "w", encoding="utf-8") as handle:
        handle.write(original)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--full", action="store_true", help="run the whole unit suite for each mutant")
    parser.add_argument("--only", nargs="+", metavar="NAME", help="mutants whose name contains one of these")
    parser.add_argument("--list", action="store_true", help="print the mutants and exit")
    args = parser.parse_args(argv)
    chosen = [m for m in MUTANTS if not args.only or any(part in m.name for part in args.only)]
    if args.list:
        for mutant in chosen:
            print(f"{mutant.name:<48} {mutant.path}")
        return 0
    scope: dict[str, tuple[str, ...]] = {m.name: (("tests",) if args.full else m.tests) for m in chosen}
    with tempfile.TemporaryDirectory(prefix="session-workflow-mutants-") as base:
        copy = os.path.join(base, "repo")
        copy_repo(copy)
        baseline = sorted({test for tests in scope.values() for test in tests})
        started = time.monotonic()
        result = run_tests(copy, tuple(baseline))
        if result.returncode != 0:
            print(f"baseline fails, no mutant can be judged:\n{result.stdout[-3000:]}{result.stderr[-2000:]}")
            return 2
        print(f"baseline passes ({time.monotonic() - started:.0f}s): {' '.join(baseline)}")
        survivors = []
        for mutant in chosen:
            started = time.monotonic()
            original = apply(copy, mutant)
            if original is None:
                print(f"STALE     {mutant.name}: not exactly once in {mutant.path}; update tools/mutants.py")
                survivors.append(mutant.name)
                continue
            try:
                result = run_tests(copy, scope[mutant.name])
            finally:
                restore(copy, mutant, original)
            killed = result.returncode == 1
            if not killed:
                survivors.append(mutant.name)
            verdict = "killed" if killed else f"SURVIVED (pytest exit {result.returncode})"
            print(f"{verdict:<9} {mutant.name} ({time.monotonic() - started:.0f}s)")
    print(f"{len(chosen) - len(survivors)} of {len(chosen)} mutants killed")
    return 1 if survivors else 0


if __name__ == "__main__":
    sys.exit(main())
