"""Mutation check of the promised numbers and rules: every mutant below must make the unit tests fail.

Each mutant is one exact text replacement in one source file. It is applied to a temporary copy of the repo
and the unit tests (``-m "not e2e and not slow"``) run there: the mutant's own targeted files by default, the
whole unit suite with ``--full``; a mutant of the mod (``hooks/mod/*.ts``) names the mod's own runner instead,
``claude plugin test`` on the copy (``tools/run_claude.sh``). A mutant that survives, or whose text no longer
occurs exactly once (the code moved: update the list), fails the check. The unmutated copy runs the same tests
first, so a red baseline is reported as such and not mistaken for a kill.

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


# The runners a mutant can name: the unit tests (its ``tests``), or the mod's own tests under the real CLI.
PYTEST, MOD = "pytest", "claude plugin test"


class Mutant:
    """One change of a promise: ``old`` (exactly once in ``path``) becomes ``new``; ``tests`` should notice.

    ``path`` is under ``src/session_workflow/`` for the ``PYTEST`` runner and under the repo root for ``MOD``.
    """

    __slots__ = ("name", "new", "old", "path", "runner", "tests")

    def __init__(
        self, name: str, path: str, old: str, new: str, tests: tuple[str, ...] = (), runner: str = PYTEST
    ) -> None:
        self.name = name
        self.path = PKG + path if runner == PYTEST else path
        self.old = old
        self.new = new
        self.runner = runner
        self.tests = (PROMISES, *tests) if runner == PYTEST else ()


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
    Mutant("anchor 8,000 -> 8,500", "anchor/part.py", "CAP = 8000", "CAP = 8500", ANCHOR),
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
        "anchor/part.py",
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
    # Issue 26.
    Mutant(
        "a startup window of 0 h admits an anchor of age 0 or less",
        "anchor/text.py",
        '    if source == "startup" and startup_window <= 0:\n        return None\n',
        "",
        (*ANCHOR, *HOOK),
    ),
    Mutant(
        "a broken task file is not named",
        "tasks/render.py",
        "    if unreadable:\n        lines.append(unreadable)\n",
        "",
        ("tests/tasks/test_store.py",),  # literal goldens: test_properties would shrink its failure for minutes
    ),
    Mutant(
        "3 broken task files named -> 4",
        "tasks/render.py",
        "MAX_UNREADABLE_NAMED = 3",
        "MAX_UNREADABLE_NAMED = 4",
        TASKS,
    ),
    Mutant(
        "a broken work-state file is not named",
        "workstate/part.py",
        "return unreadable_part(ctx) if loaded is None else None",
        "return None",
        HOOK,
    ),
    Mutant(
        "the keeping sessions newest last",
        "anchor/registry.py",
        "return [session, *(item for item in previous if item != session)][:MAX_SESSIONS]",
        "return [*(item for item in previous if item != session), session][:MAX_SESSIONS]",
        ANCHOR,
    ),
    Mutant("8 keeping sessions -> 9", "anchor/registry.py", "MAX_SESSIONS = 8", "MAX_SESSIONS = 9", ANCHOR),
    Mutant(
        "a record holds for any path",
        "anchor/registry.py",
        'or document.get("v") != VERSION or document.get("path") != real_path:',
        'or document.get("v") != VERSION:',
        ANCHOR,
    ),
    Mutant(
        "a write killed before its rename strands the file in place",
        "anchor/registry.py",
        "        if kept and present is not None and present.as_tuple() != newest.as_tuple():",
        "        if False:",
        ANCHOR,
    ),
    Mutant(
        "a killed write keeps an identity the record never vouched for",
        "anchor/registry.py",
        "kept = present is not None and before is not None and before.vouches_for(present)",
        "kept = present is not None",
        ANCHOR,
    ),
    Mutant("2 identities kept -> 3", "anchor/registry.py", "MAX_IDENTITIES = 2", "MAX_IDENTITIES = 3", ANCHOR),
    Mutant(
        "another session's parked anchor is a parallel track",
        "anchor/part.py",
        "        and c.kind == LIVE\n        and c.record is not None",
        "        and c.kind <= LIVE + 1\n        and c.record is not None",
        ANCHOR,
    ),
    Mutant(
        "a line of file content after the first unquoted",
        "anchor/frame.py",
        'return QUOTE + body.replace("\\n", "\\n" + QUOTE) + end',
        "return QUOTE + body + end",
        ANCHOR,
    ),
    Mutant(
        "a quote in the framed file name not escaped",
        "anchor/frame.py",
        "cut_utf16(escaped(name, chr(34)), NAME_CAP)",
        "cut_utf16(escaped(name), NAME_CAP)",
        ANCHOR,
    ),
    Mutant("framed file name 80 -> 120", "anchor/frame.py", "NAME_CAP = 80", "NAME_CAP = 120", ANCHOR),
    Mutant(
        "a stale anchor's cursor line unquoted",
        "anchor/part.py",
        'asserts = f"Its cursor still asserts:\\n{QUOTE}{cursor}" if cursor',
        'asserts = f"Its cursor still asserts:\\n{cursor}" if cursor',
        ANCHOR,
    ),
    Mutant(
        "a user's prompt unquoted",
        "transcript/recovery.py",
        'line = "> " + cut_utf8(prompt, PROMPT_BYTES)',
        "line = cut_utf8(prompt, PROMPT_BYTES)",
        ("tests/transcript", "tests/reliability/test_injection.py"),
    ),
    Mutant(
        "a user's prompt kept on its many lines",
        "transcript/recovery.py",
        'return one_line(" ".join(kept)) or None',
        'return " ".join(kept) or None',
        ("tests/transcript", "tests/reliability/test_injection.py"),
    ),
    Mutant(
        "an untrusted anchor's path shown unescaped",
        "anchor/part.py",
        'f"Open anchor not created here (not shown): {display_path(candidate.path)}; only if',
        'f"Open anchor not created here (not shown): {candidate.path}; only if',
        (*ANCHOR, "tests/reliability/test_injection.py"),
    ),
    Mutant(
        "a block from before the last compaction counts as in the thread",
        "transcript/thread.py",
        "        if is_boundary(record):\n            break\n",
        "        if is_boundary(record):\n            continue\n",
        ("tests/transcript", "tests/hook"),
    ),
    Mutant(
        "another hook's context counts as a SessionStart block",
        "transcript/thread.py",
        ' or attachment.get("hookEvent") != "SessionStart":',
        ":",
        ("tests/transcript", "tests/hook"),
    ),
    Mutant(
        "any text of the thread counts as our block",
        "transcript/thread.py",
        "for text in reversed(session_start_texts(record)) if text.startswith(prefix))",
        "for text in reversed(session_start_texts(record)))",
        ("tests/transcript", "tests/hook"),
    ),
    Mutant(
        "adopt keeps a blocker it did not adopt",
        "tasks/adopt.py",
        "copy[key] = [item for item in value if item in kept_ids]",
        "copy[key] = list(value)",
        TASKS,
    ),
    Mutant(
        "adopt lets a task this session has block an adopted one",
        "tasks/adopt.py",
        "free = {str(task_id) for task_id, _record in tasks if task_id not in taken}",
        "free = {str(task_id) for task_id, _record in tasks}",
        TASKS,
    ),
    Mutant(
        "adopt lowers the high-water mark",
        "tasks/adopt.py",
        "if adopted and max(adopted) > _high_water_mark(target):",
        "if adopted:",
        TASKS,
    ),
    Mutant(
        "adopt copies completed tasks",
        "tasks/adopt.py",
        "if parsed is not None and parsed[0] in OPEN_STATUSES:",
        "if parsed is not None:",
        TASKS,
    ),
    Mutant(
        "anchor write takes text one step behind",
        "anchor/writer.py",
        "if given < stored and not force:",
        "if given < stored - 1 and not force:",
        ANCHOR,
    ),
    Mutant(
        "anchor write refuses text of the stored step",
        "anchor/writer.py",
        "if given < stored and not force:",
        "if given <= stored and not force:",
        ANCHOR,
    ),
    Mutant(
        "anchor write ignores --force",
        "anchor/writer.py",
        "if given < stored and not force:",
        "if given < stored:",
        ANCHOR,
    ),
    Mutant(
        "the mod puts another session's state in the system prompt",
        "hooks/mod/register.ts",
        "if (stored !== null && stored.owner === session) return stored",
        "if (stored !== null) return stored",
        runner=MOD,
    ),
    Mutant(
        "the mod takes a section over 1,024 bytes",
        "hooks/mod/workstate.ts",
        "if (utf8Length(text) > MAX_SECTION_BYTES || !isPrintableSection(text)) return null",
        "if (!isPrintableSection(text)) return null",
        runner=MOD,
    ),
    Mutant(
        "the mod lets a lone surrogate into the system prompt",
        "hooks/mod/workstate.ts",
        "    } else if (unit >= 0xdc00 && unit <= 0xdfff) return false\n",
        "    }\n",
        runner=MOD,
    ),
    Mutant(
        "the mod's reminder 300 -> 400 bytes",
        "hooks/mod/checkpoint.ts",
        "export const MAX_REMINDER_BYTES = 300",
        "export const MAX_REMINDER_BYTES = 400",
        runner=MOD,
    ),
]


def copy_repo(target: str) -> None:
    shutil.copytree(ROOT, target, ignore=shutil.ignore_patterns(*IGNORED), symlinks=True)


def run_mod_tests(copy: str) -> subprocess.CompletedProcess[str]:
    """The mod's tests (``tests/mod/*.test.ts``) on ``copy`` through the pinned CLI; exit 1 when one fails."""
    argv = ["bash", os.path.join(copy, "tools", "run_claude.sh"), "plugin", "test", copy]
    return subprocess.run(argv, cwd=copy, capture_output=True, text=True, stdin=subprocess.DEVNULL, check=False)


def failed_mod_tests(result: subprocess.CompletedProcess[str]) -> int:
    """How many mod tests failed, from the runner's `` N fail`` line (a crash before the tests is no kill)."""
    counts = [line.split()[0] for line in (result.stdout + result.stderr).splitlines() if line.endswith(" fail")]
    return int(counts[-1]) if counts and counts[-1].isdigit() else 0


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
    scope: dict[str, tuple[str, ...]] = {
        m.name: (("tests",) if args.full and m.runner == PYTEST else m.tests) for m in chosen
    }
    with tempfile.TemporaryDirectory(prefix="session-workflow-mutants-") as base:
        copy = os.path.join(base, "repo")
        copy_repo(copy)
        baseline = sorted({test for tests in scope.values() for test in tests})
        started = time.monotonic()
        result = run_tests(copy, tuple(baseline)) if baseline else None
        if result is not None and result.returncode != 0:
            print(f"baseline fails, no mutant can be judged:\n{result.stdout[-3000:]}{result.stderr[-2000:]}")
            return 2
        if result is not None:
            print(f"baseline passes ({time.monotonic() - started:.0f}s): {' '.join(baseline)}")
        if any(mutant.runner == MOD for mutant in chosen):
            started = time.monotonic()
            result = run_mod_tests(copy)
            if result.returncode != 0:
                print(f"the mod's baseline fails, no mutant can be judged:\n{result.stdout[-3000:]}")
                return 2
            print(f"baseline passes ({time.monotonic() - started:.0f}s): {MOD}")
        survivors = []
        for mutant in chosen:
            started = time.monotonic()
            original = apply(copy, mutant)
            if original is None:
                print(f"STALE     {mutant.name}: not exactly once in {mutant.path}; update tools/mutants.py")
                survivors.append(mutant.name)
                continue
            try:
                result = run_mod_tests(copy) if mutant.runner == MOD else run_tests(copy, scope[mutant.name])
            finally:
                restore(copy, mutant, original)
            killed = result.returncode == 1 and (mutant.runner != MOD or failed_mod_tests(result) > 0)
            if not killed:
                survivors.append(mutant.name)
            verdict = "killed" if killed else f"SURVIVED (pytest exit {result.returncode})"
            print(f"{verdict:<9} {mutant.name} ({time.monotonic() - started:.0f}s)")
    print(f"{len(chosen) - len(survivors)} of {len(chosen)} mutants killed")
    return 1 if survivors else 0


if __name__ == "__main__":
    sys.exit(main())
