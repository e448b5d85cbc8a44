"""The hand-written mutants: each promised number and rule changed in a copy must make the unit tests fail.

They run through ``tools/mutation.py`` (its one report and ``tox -e mutation``), beside mutmut's generated sample:
``--hand`` runs only these, ``--mutant NAME`` some of them, ``--check`` only verifies that each still applies
(fast; ``tests/tools/test_mutants.py`` does it in the unit suite). Each mutant is keyed by syntax tree (``Mutant``):
a module, the definition that holds the change and an expression or statements (old -> new), matched on their
trees, so a reformatted line or a new comment does not move it. It is applied to a temporary copy of the repo and
the unit tests (``-m "not e2e and not slow"``) run there: the mutant's own targeted files by default, the whole
unit suite with ``--full``; a mutant of the mod (``hooks/mod/*.ts``) names the mod's own runner instead, ``claude
plugin test`` on the copy (``tools/run_claude.sh``). A mutant that survives, or that no longer applies (``Stale``
says which and what no longer matches: re-key it here), fails the check. The unmutated copy runs the same tests
first, so a red baseline is reported as such and not mistaken for a kill.

Adding one: a ``Mutant(name, "module.py::scope", old, new, tests)`` in ``MUTANTS``, ``scope`` the qualified name
of the function, method, class or assigned name whose code changes (``MODULE`` for a script's top level), ``old``
the smallest expression or statements there that is there once, as written or reformatted.
"""

from __future__ import annotations

import ast
import os
import queue
import subprocess
import sys
import tempfile
import textwrap
import time
from concurrent.futures import ThreadPoolExecutor

if not __package__:  # run as ``python tools/<name>.py``: the checkout's root on the path, for tools.checkout
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from tools.checkout import copy_checkout

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator, Sequence

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PKG = "src/session_workflow/"
PROMISES = "tests/test_promises.py"
ANCHOR, HOOK, TASKS = ("tests/anchor",), ("tests/hook",), ("tests/tasks",)
# The task store's probe of a long list: its own tests (seconds; the whole of tests/tasks writes 100,000 files).
PROBE = tuple(
    "tests/tasks/test_store.py::test_" + name
    for name in (
        "task_ids_are_claude_codes_own",
        "a_run_of_1000_or_more_without_a_mark_is_probed_to_its_last_id",
        "a_long_list_without_a_mark_reads_its_newest_200_and_counts_the_rest_unlisted",
        "a_list_with_a_high_water_mark_is_listed_whatever_the_mark_says",
        "a_file_gone_from_the_run_without_a_mark_makes_the_hook_list_it",
        "what_the_probe_cannot_see_is_what_claude_codes_numbering_never_leaves",
        "malformed_files_in_a_probed_run_are_named_not_a_reason_to_list",
        "a_short_or_unlistable_list_is_listed_as_before",
        "a_file_missing_at_a_probed_id_below_the_read_window_hides_no_newer_task",
        "a_delete_claude_code_makes_while_the_hook_probes_hides_no_newer_task",
        "a_probed_run_whose_listing_then_fails_gets_the_hint_not_silence",
    )
)
STATE = ("tests/workstate", "tests/hook")
DOCTOR = ("tests/cli/test_doctor.py", "tests/cli/test_health.py")
REPOSITORY_INPUT = ("tests/reliability/test_repository_input.py",)
FRESH = ("tests/cli/test_fresh_machine.py",)
RECORD = ("tests/transcript/test_record.py",)
# The doctor's line for a plugin not installed for the project (``cli.health.plugin_check``), as its mutant keys it.
MISSING_INSTALL = (
    "Check(\n"
    "            FAIL,\n"
    '            f"{what}: {PLUGIN_NAME} is not installed for this project (none in'
    ' {escaped(index)}); Claude Code runs"\n'
    '            " none of its hooks here",\n'
    '            "install it (README, Quick start), or load it for one session: claude'
    ' --plugin-dir <plugin folder>",\n'
    "            essential=True,\n"
    "        )"
)
# The id a stop names, as the run record's reader spells it (a mutant's text around it).
STOPPED = "_stopped_id(tool_input)"


# The runners a mutant can name: the unit tests (its ``tests``), or the mod's own tests under the real CLI.
PYTEST, MOD = "pytest", "claude plugin test"
# The scope of a mutant in a module's own statements, outside every definition (a script's top level).
MODULE = "<module>"


class Mutant:
    """One change of a promise, keyed by syntax tree: ``where`` is ``module::scope``, the module's path and the
    qualified name of the definition that holds the change (a function, a method ``Class.name``, a class, the name
    a module or class statement assigns, or ``MODULE``); there, the one expression or run of statements whose tree
    is ``old``'s becomes ``new`` (a run of statements may become nothing); ``tests`` should notice. Formatting,
    comments and code elsewhere do not move it; a mutant whose scope or tree is gone, or not there once, is stale
    (``Stale`` names it and what no longer matches).

    The path is under ``src/session_workflow/`` for the ``PYTEST`` runner, under the repo root for ``MOD``. A
    mutant of a file Python does not parse (the mod's TypeScript, a shell script) names no scope: its ``old`` is
    exact text, once in the file.
    """

    __slots__ = ("name", "new", "old", "path", "runner", "scope", "tests")

    def __init__(
        self, name: str, where: str, old: str, new: str, tests: tuple[str, ...] = (), runner: str = PYTEST
    ) -> None:
        path, _, self.scope = where.partition("::")
        self.name = name
        self.path = PKG + path if runner == PYTEST else path
        self.old = old
        self.new = new
        self.runner = runner
        self.tests = (PROMISES, *tests) if runner == PYTEST else ()


class Stale(Exception):
    """A mutant that no longer applies; the message names it and what no longer matches: re-key it (``scope``,
    ``old``) in tools/mutants.py to the code as it is now, or drop it with the promise it held."""


def fragment(text: str) -> list[ast.AST]:
    """``text`` as the nodes it is: one expression, or a run of statements (none for empty text)."""
    source = textwrap.dedent(text).strip("\n")
    if not source:
        return []
    try:
        return [ast.parse(f"(\n{source}\n)", mode="eval").body]
    except SyntaxError:
        return list(ast.parse(source).body)


def scopes(body: list[ast.stmt], prefix: str = "", names: bool = True) -> Iterator[tuple[str, ast.stmt]]:
    """Each definition in ``body`` and its qualified name: functions, classes and their members (``Outer.inner``),
    and each name a module or class statement assigns (``names``); through ``if``/``try`` blocks (no name)."""
    for node in body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            yield prefix + node.name, node
            yield from scopes(node.body, f"{prefix}{node.name}.", isinstance(node, ast.ClassDef))
        elif names and isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for name in (leaf for target in targets for leaf in ast.walk(target) if isinstance(leaf, ast.Name)):
                yield prefix + name.id, node
        elif isinstance(node, (ast.If, ast.Try)):
            handlers = [handler.body for handler in getattr(node, "handlers", [])]
            for block in (node.body, node.orelse, *handlers, getattr(node, "finalbody", [])):
                yield from scopes(block, prefix, names)


def matches(within: Sequence[ast.AST], wanted: list[ast.AST]) -> list[list[ast.AST]]:
    """Every place in ``within`` whose tree is ``wanted``'s: an expression, or a run of statements of one body."""
    key = [ast.dump(node) for node in wanted]
    if not key:
        return []
    found: list[list[ast.AST]] = [[scope] for scope in within if [ast.dump(scope)] == key]
    for node in (node for scope in within for node in ast.walk(scope)):
        if isinstance(wanted[0], ast.expr) and isinstance(node, ast.expr) and ast.dump(node) == key[0]:
            found.append([node])
        for _field, value in ast.iter_fields(node):
            if isinstance(wanted[0], ast.stmt) and isinstance(value, list) and value and isinstance(value[0], ast.stmt):
                found += [
                    value[i : i + len(key)]
                    for i in range(len(value))
                    if [ast.dump(one) for one in value[i : i + len(key)]] == key
                ]
    return found


def mutated(source: str, mutant: Mutant) -> str:
    """``source`` with ``mutant`` applied; ``Stale`` when it no longer applies there."""
    if not mutant.scope and mutant.path.endswith(".py"):
        raise Stale(f"{mutant.name}: {mutant.path} is Python: key it by tree (module.py::scope), not by text")
    if not mutant.scope:  # the mod's TypeScript, a shell script: exact text
        if source.count(mutant.old) != 1:
            raise Stale(f"{mutant.name}: its text is in {mutant.path} {source.count(mutant.old)} times, not once")
        return source.replace(mutant.old, mutant.new)
    where = f"{mutant.path}, {mutant.scope}"
    tree = ast.parse(source)
    within = tree.body if mutant.scope == MODULE else [node for name, node in scopes(tree.body) if name == mutant.scope]
    if not within:
        raise Stale(f"{mutant.name}: no definition {mutant.scope} in {mutant.path}")
    found = matches(within, fragment(mutant.old))
    if len(found) != 1:
        shown = " ".join(mutant.old.split())
        raise Stale(f"{mutant.name}: `{shown}` is in {where} {len(found)} times, not once")
    first, last = found[0][0], found[0][-1]
    lines = source.split("\n")

    def offset(line: int, column: int) -> int:  # ast's columns count UTF-8 bytes
        return sum(len(text) + 1 for text in lines[: line - 1]) + len(lines[line - 1].encode()[:column].decode())

    start = offset(first.lineno, first.col_offset)  # type: ignore[attr-defined]
    end = offset(last.end_lineno, last.end_col_offset)  # type: ignore[attr-defined]
    new = textwrap.dedent(mutant.new).strip("\n")
    if isinstance(first, ast.stmt):
        indent = " " * first.col_offset
        texts = [textwrap.indent(new, indent)[len(indent) :], "pass"] if new else ["", "pass"]
    else:
        texts = [new, f"({new})"]
    wanted = fragment(new)
    before = len(matches(within, wanted)) - len(matches(found[0], wanted))  # the new tree outside the old one
    for text in texts:
        result = source[:start] + text + source[end:]
        try:
            tree = ast.parse(result)
        except SyntaxError:
            continue
        after = tree.body if mutant.scope == MODULE else [n for name, n in scopes(tree.body) if name == mutant.scope]
        if not wanted or text == "pass" or len(matches(after, wanted)) == before + 1:
            return result
    raise Stale(f"{mutant.name}: `{' '.join(new.split())}` does not fit in place of the old in {where}")


MUTANTS = [
    # The five of issue 20.
    Mutant("cap 10,000 -> 10,200", "hook/compose.py::CAP_UTF16", "10_000", "10_200", HOOK),
    Mutant("task block 4,096 -> 5,000 bytes", "tasks/render.py::CAP_BYTES", "4096", "5000", TASKS),
    Mutant("PreCompact 600 -> 700", "hook/precompact.py::MAX_CHARS", "600", "700", HOOK),
    Mutant(
        "in progress not first",
        "tasks/render.py::priority",
        '0 if task.status == "in_progress" else 1',
        "0",
        TASKS,
    ),
    Mutant(
        "a state without an owner is this session's",
        "workstate/state.py::owned_state",
        "loaded.state.session == ctx.session_id",
        "loaded.state.session in (None, ctx.session_id)",
        STATE,
    ),
    # Our own: every other promised number and rule.
    Mutant(
        "any owner is this session's (no orphans)",
        "workstate/state.py::owned_state",
        "loaded.state.session == ctx.session_id",
        "loaded.state.session is not None",
        STATE,
    ),
    Mutant(
        "cap measured in code points",
        "hook/compose.py::allocate",
        "units = utf16_len(text)\nif not text or units > budget:\n    omitted.append(part.name)\n    continue",
        "units = len(text)\nif not text or units > budget:\n    omitted.append(part.name)\n    continue",
    ),
    Mutant("40 tasks -> 41", "tasks/render.py::MAX_TASKS", "40", "41", TASKS),
    Mutant("subject 160 -> 200 bytes", "tasks/render.py::SUBJECT_BYTES", "160", "200"),
    Mutant("description 300 -> 400 bytes", "tasks/render.py::DESCRIPTION_BYTES", "300", "400"),
    Mutant(
        "subject cut in code points",
        "tasks/render.py::task_entry",
        "cut_utf8(one_line(task.subject), SUBJECT_BYTES)",
        "one_line(task.subject)[:SUBJECT_BYTES]",
    ),
    Mutant(
        "highest id first within a status",
        "tasks/render.py::priority",
        '(0 if task.status == "in_progress" else 1, -task.mtime, -task.id)',
        '(0 if task.status == "in_progress" else 1, -task.id, -task.mtime)',
        TASKS,
    ),
    Mutant(
        "lowest id first on a tie",
        "tasks/render.py::priority",
        "-task.id",
        "task.id",
        TASKS,
    ),
    Mutant(
        "the newest of several older candidates is taken",
        "tasks/store.py::find_predecessor",
        "if found is not None:\n    return AMBIGUOUS",
        "if found is not None:\n    break",
        TASKS,
    ),
    Mutant(
        "a part the unsent resume block holds is sent again at the compaction",
        "hook/compose.py::allocate",
        "unsent[0]",
        "None",
        HOOK,
    ),
    Mutant(
        "a resume block an answer followed is taken for unsent",
        "hook/pending.py::_unsent",
        "now > size",
        "False",
        HOOK,
    ),
    Mutant(
        "a deleted state's snapshot is never said gone",
        "hook/prompt_submit.py::prompt_submit",
        "any_work_state(folders, ctx.places, ctx.session_id)",
        "False",
        HOOK,
    ),
    Mutant(
        "a sibling transcript of another project is a candidate",
        "tasks/store.py::find_predecessor",
        "not same_project(os.path.join(os.path.dirname(ctx.transcript_path), session + TRANSCRIPT_SUFFIX), project)",
        (
            "False and not same_project(os.path.join(os.path.dirname(ctx.transcript_path), session +"
            " TRANSCRIPT_SUFFIX), project)"
        ),
        TASKS,
    ),
    Mutant(
        "a fork's parent is not asked: the predecessor lookup decides",
        "tasks/store.py::prepare",
        "if parent_session:\n    return parent_part(root, parent_session)",
        "",
        TASKS,
    ),
    Mutant(
        "issue 42: a probed run read as it stands when a file of it is gone",
        "tasks/store.py::read_store",
        "isinstance(ids, range) and _exists(_task_path(directory, task_id)) is not True",
        "False",
        PROBE,
    ),
    Mutant(
        "issue 42: a list with a high-water mark is probed",
        "tasks/store.py::HIGH_WATER_MARK",
        "'.highwatermark'",
        "'.no-such-mark'",
        PROBE,
    ),
    Mutant(
        "a gap at a probed id is taken for the run's end (doubling)",
        "tasks/store.py::task_ids",
        "_exists(_task_path(directory, absent + 1)) is not False",
        "False",
        PROBE,
    ),
    Mutant(
        "a gap at a probed id is taken for the run's end (halving)",
        "tasks/store.py::task_ids",
        "_exists(_task_path(directory, middle + 1)) is not False",
        "False",
        PROBE,
    ),
    Mutant(
        "a mark raised while probing is not looked at again",
        "tasks/store.py::task_ids",
        "if _exists(os.path.join(directory, HIGH_WATER_MARK)) is not False:\n    return list_task_ids(directory)\n"
        "return range(1, present + 1)",
        "return range(1, present + 1)",
        PROBE,
    ),
    Mutant(
        "a probed run whose listing then fails reads as empty",
        "tasks/store.py::read_store",
        "Store([], [], 0, len(ids))",
        "Store([], [], 0, 0)",
        PROBE,
    ),
    Mutant(
        "issue 42: a list of 999 ids is probed",
        "tasks/store.py::MAX_LISTED_TASKS",
        "1000",
        "999",
        PROBE,
    ),
    Mutant(
        "issue 42: the run's last id taken one short",
        "tasks/store.py::task_ids",
        "present + 1",
        "present",
        PROBE,
    ),
    Mutant(
        "issue 42: the trust folder checked for every anchor",
        "anchor/registry.py::Registry.trusted_folder",
        "folder is None and self._trusted is not False",
        "False",
        ("tests/reliability/test_recorded_kind.py",),
    ),
    Mutant(
        "issue 42: log leaves out the session's lines whose id is quoted",
        "cli/log.py::entries",
        "quote_ascii(session)",
        "quote_ascii(session + '\"')",
        ("tests/cli/test_log.py",),
    ),
    Mutant(
        "a sibling newer than this session is a candidate",
        "tasks/store.py::older_siblings",
        "upper_bound",
        "upper_bound + 1e9",
        TASKS,
    ),
    Mutant(
        "section 1,024 -> 1,100 bytes",
        "workstate/section.py::MAX_SECTION_BYTES",
        "1024",
        "1100",
        ("tests/workstate",),
    ),
    Mutant("anchor 8,000 -> 8,500", "anchor/block.py::CAP", "8000", "8500", ANCHOR),
    Mutant("startup 6 h -> 7 h", "anchor/age.py::STARTUP_MAX_AGE", "6", "7", ANCHOR),
    Mutant(
        "6 h applies to every source",
        "anchor/age.py::tier_for",
        'source == "startup" and age > startup_window',
        "age > startup_window",
        ANCHOR,
    ),
    Mutant("pointer 24 h -> 25 h", "anchor/age.py::POINTER_AGE", "24", "25", ANCHOR),
    Mutant(
        "done outranks parked",
        "anchor/text.py::LIVE",
        "0, 1, 2, 3",
        "0, 2, 1, 3",
        ANCHOR,
    ),
    Mutant(
        ".closed.md is open",
        "anchor/discover.py::is_open_name",
        'name.endswith(".md") and not name.endswith(".closed.md") and not name.startswith(".")',
        'name.endswith(".md") and not name.startswith(".")',
        ANCHOR,
    ),
    Mutant(
        "a stored section is trusted as it stands",
        "workstate/state.py::section_text",
        "loaded.stored_text == section(state, False, slug)",
        "loaded.stored_text",
        ("tests/reliability/test_injection.py",),
    ),
    Mutant(
        "an undecodable byte in a close command escaped as a code point",
        "core/text.py::escaped",
        'f"\\\\x{code - 0xDC00:02x}"',
        'f"\\\\u{code:04x}"',
        ("tests/anchor/test_classify.py", "tests/core/test_text.py"),
    ),
    Mutant(
        "a lone surrogate counted as one byte",
        "core/text.py::utf8_len",
        '"surrogatepass"',
        '"replace"',
        ("tests/core/test_text.py",),
    ),
    Mutant(
        "the dry run writes",
        "cli/inject.py::context_for",
        "True",
        "False",
        ("tests/cli/test_inject.py",),
    ),
    Mutant(
        "every verb's parser is built",
        "cli/parser.py::add_verbs",
        (
            "if name == chosen:\n"
            "    rest = argv[list(argv).index(name) + 1 :]\n"
            "    chosen_parser = subcommands.add_parser(name, help=help_line)\n"
            "    chosen_parser.given = list(rest)\n"
            "    setup(chosen_parser, rest)\n"
            "elif only is None:\n"
            "    subcommands.add_parser(name, help=help_line)"
        ),
        (
            "if name == chosen:\n"
            "    rest = argv[list(argv).index(name) + 1 :]\n"
            "    chosen_parser = subcommands.add_parser(name, help=help_line)\n"
            "    chosen_parser.given = list(rest)\n"
            "    setup(chosen_parser, rest)\n"
            "else:\n"
            "    subcommands.add_parser(name, help=help_line)"
        ),
        ("tests/cli/test_parser.py",),
    ),
    Mutant(
        "a verb's usage starts with the parent's usage",
        "cli/parser.py::add_verbs",
        (
            "parser.add_subparsers(\n"
            "        dest=dest, metavar=metavar, parser_class=OneLineParser, required=True,"
            " help=help, prog=parser.prog\n"
            "    )"
        ),
        (
            "parser.add_subparsers(\n"
            "        dest=dest, metavar=metavar, parser_class=OneLineParser, required=True, help=help\n"
            "    )"
        ),
        ("tests/cli/test_parser.py",),
    ),
    Mutant(
        "the writer lock is never taken",
        "core/atomic.py::_flock",
        "fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)",
        "",
        ("tests/core/test_atomic.py",),
    ),
    Mutant(
        "a killed writer's temp file blocks the next",
        "core/atomic.py::_create_temp",
        "os.unlink(temp)",
        "pass",
        ("tests/core/test_atomic.py",),
    ),
    # Issue 28 (unfilled anchor, status).
    Mutant(
        "an unfilled anchor injects its template",
        "anchor/block.py::AnchorBlock.render",
        "self.unfilled",
        "False",
        ("tests/anchor/test_template.py",),
    ),
    Mutant(
        "a cut read counts as unfilled",
        "anchor/template.py::is_unfilled",
        'anchor.truncated or "<!--" not in anchor.head',
        '"<!--" not in anchor.head',
        ("tests/anchor/test_template.py",),
    ),
    Mutant(
        "an anchor without format: anchor/ counts as unfilled",
        "anchor/template.py::is_unfilled",
        'not anchor.frontmatter.get("format", "").lower().startswith("anchor/")',
        "False",
        ("tests/anchor/test_template.py",),
    ),
    Mutant(
        "words under the title stay unfilled",
        "anchor/template.py::is_unfilled",
        "body or titles > 1",
        "titles > 1",
        ("tests/anchor/test_template.py",),
    ),
    Mutant(
        "a second title stays unfilled",
        "anchor/template.py::is_unfilled",
        "titles > 1",
        "titles > 2",
        ("tests/anchor/test_template.py",),
    ),
    Mutant(
        "a heading of the run's own stays unfilled",
        "anchor/template.py::is_unfilled",
        "section.level != 2 or section.heading not in _TEMPLATE_HEADINGS",
        "section.level > 2",
        ("tests/anchor/test_template.py",),
    ),
    Mutant(
        "edited resume steps stay unfilled",
        "anchor/template.py::is_unfilled",
        "_template_resume(body)",
        "body",
        ("tests/anchor/test_template.py",),
    ),
    Mutant(
        "any comment counts as the template's prompt",
        "anchor/template.py::is_unfilled",
        "_TEMPLATE_PROMPTS.issuperset(body)",
        'all(line.startswith("<!--") for line in body)',
        ("tests/anchor/test_template.py",),
    ),
    Mutant(
        "a comment is the next action",
        "anchor/text.py::cursor_next_action",
        "without_comments(section_body_lines(section))",
        "section_body_lines(section)",
        ("tests/anchor/test_text.py", "tests/anchor/test_template.py"),
    ),
    Mutant(
        "a comment is the cursor line",
        "anchor/text.py::cursor_first_line",
        "without_comments(section_body_lines(section))",
        "section_body_lines(section)",
        ("tests/anchor/test_text.py", "tests/anchor/test_template.py"),
    ),
    Mutant(
        "a comment spanning lines never ends",
        "core/text.py::without_comments",
        'line.find("-->" if inside else "<!--", start)',
        '-1 if inside else line.find("<!--", start)',
        ("tests/core/test_text.py", "tests/anchor/test_text.py"),
    ),
    Mutant(
        "anchor list shows an unfilled anchor's prompt",
        "anchor/report.py::_cursor",
        "candidate.anchor is not None and is_unfilled(candidate.anchor)",
        "False",
        ("tests/anchor/test_template.py",),
    ),
    Mutant(
        "PreCompact cut in code points",
        "hook/precompact.py::instructions",
        "utf16_len(text + piece)",
        "len(text + piece)",
    ),
    # session-workflow doctor (issue 34): the plugin's enabled state, the 4.x task-tools table, gone anchors.
    Mutant(
        "doctor: the local settings before the managed ones",
        "cli/health.py::SETTINGS_PRECEDENCE",
        '("managed", "project local", "project", "user")',
        '("project local", "managed", "project", "user")',
        DOCTOR,
    ),
    Mutant(
        "doctor: a disabled plugin not essential",
        "cli/health.py::plugin_check",
        ('Check(FAIL, f"{what}: {shown} is installed but disabled for this project ({said})", fix, essential=True)'),
        ('Check(FAIL, f"{what}: {shown} is installed but disabled for this project ({said})", fix, essential=False)'),
        DOCTOR,
    ),
    Mutant(
        "doctor: a missing install not essential",
        "cli/health.py::plugin_check",
        MISSING_INSTALL,
        MISSING_INSTALL.replace("essential=True", "essential=False"),
        DOCTOR,
    ),
    Mutant(
        "doctor: a gone run folder (a moved clone) passes",
        "cli/health.py::plugin_check",
        "folder is not None and not os.path.isdir(folder)",
        "False",
        DOCTOR,
    ),
    Mutant(
        "doctor: an invalid settings file not named",
        "cli/health.py::settings_checks",
        "item.problem is not None",
        "False",
        DOCTOR,
    ),
    Mutant(
        "doctor: claude-sonnet-5 without default task tools",
        "cli/health.py::TASK_TOOL_MODELS",
        "{(4,), (4, 0), (4, 5), (4, 6), (5,)}",
        "{(4,), (4, 0), (4, 5), (4, 6)}",
        DOCTOR,
    ),
    Mutant(
        "doctor: gone anchors of this session only",
        "cli/doctor.py::gone_checks",
        "records.kept_in(real_folder, session)",
        "records.kept_by(session) if session else []",
        DOCTOR,
    ),
    # session-workflow doctor (issue 28).
    Mutant("doctor: python3 3.9 -> 3.10", "cli/health.py::MIN_PYTHON", "9", "10", DOCTOR),
    Mutant(
        "doctor: the mod from 2.1.287 -> 2.1.288",
        "cli/health.py::MOD_MIN_VERSION",
        "287",
        "288",
        DOCTOR,
    ),
    Mutant(
        "doctor: any failure fails the doctor",
        "cli/doctor.py::exit_code",
        "check.mark == FAIL and check.essential",
        "check.mark == FAIL",
        DOCTOR,
    ),
    Mutant(
        "doctor: the trust folder probe leaves its file",
        "cli/health.py::_can_create_in",
        "os.unlink(path)",
        "pass",
        DOCTOR,
    ),
    Mutant(
        "doctor: an untrusted workspace keeps the shared settings' allow",
        "cli/health.py::settings_files",
        "True",
        "False",
        DOCTOR,
    ),
    Mutant(
        "doctor: an anchor's name shown raw",
        "cli/doctor.py::not_created_here",
        "named(candidate.name)",
        "candidate.name",
        DOCTOR,
    ),
    Mutant(
        "doctor: the vendored copy named as any folder",
        "cli/doctor.py::dependency_check",
        '"vendored in" if folder == vendored else "from"',
        '"from"',
        DOCTOR,
    ),
    # Issue 25 (digest, copy, restore).
    Mutant(
        "moved bytes trusted whatever they are",
        "anchor/registry.py::same_bytes",
        "digest_of(read[0]) == record.digest",
        "True",
        ("tests/anchor/test_registry.py", "tests/reliability/test_own_anchor.py"),
    ),
    Mutant(
        "a file of another size is hashed",
        "anchor/registry.py::same_bytes",
        "record.digest is None or not record.identities or identity.size != record.identities[0].size",
        "record.digest is None or not record.identities",
        ("tests/anchor/test_registry.py",),
    ),
    Mutant(
        "hashed up to 1 MiB -> 2 MiB",
        "anchor/registry.py::MAX_DIGEST_BYTES",
        "1",
        "2",
        ("tests/anchor/test_registry.py",),
    ),
    Mutant(
        "the whole-file copy 64 KiB -> 65 KiB",
        "anchor/registry.py::COPY_MAX_BYTES",
        "64",
        "65",
        ("tests/anchor/test_registry.py",),
    ),
    Mutant("8 kept anchors -> 9", "anchor/registry.py::MAX_KEPT", "8", "9", ("tests/anchor/test_registry.py",)),
    Mutant(
        "hash budget 4 MiB -> 5 MiB",
        "anchor/choice.py::HASH_BUDGET_BYTES",
        "4",
        "5",
        ("tests/anchor/test_part.py",),
    ),
    Mutant(
        "an unrecorded write only warns",
        "anchor/writer.py::_vouch.record",
        (
            "raise Failure(\n"
            "    f\"cannot record {escaped(path)} as this machine's ({_reason(error)}), so it was"
            ' left as it was: the"\n'
            '    f" hooks would not inject it; make room in (or repair) {escaped(where)} and run'
            ' this again"\n'
            ") from error"
        ),
        (
            "print(\n"
            "    f\"cannot record {escaped(path)} as this machine's ({_reason(error)}), so it was"
            ' left as it was: the"\n'
            '    f" hooks would not inject it; make room in (or repair) {escaped(where)} and run'
            ' this again"\n'
            ")"
        ),
        ("tests/reliability/test_own_anchor.py",),
    ),
    Mutant(
        "write takes over a changed anchor",
        "anchor/writer.py::write_anchor.transform",
        "refuse_changed(places, path)",
        "",
        ("tests/reliability/test_own_anchor.py",),
    ),
    Mutant(
        "restore writes over a changed file",
        "anchor/writer.py::restore_anchor.transform",
        "not force",
        "False",
        ("tests/reliability/test_own_anchor.py",),
    ),
    Mutant(
        "restore --force drops the changed file",
        "anchor/writer.py::restore_anchor.transform",
        "_keep_changed(path, current, now)",
        'path + ".changed"',
        ("tests/reliability/test_own_anchor.py",),
    ),
    Mutant(
        "a changed anchor of ours named as a stranger's",
        "anchor/part.py::prepare",
        "changed_notes(changed) + untrusted_notes(strangers)",
        "untrusted_notes(selection.untrusted)",
        ("tests/reliability/test_own_anchor.py", "tests/reliability/test_trust.py"),
    ),
    Mutant(
        "the session's own anchors not looked at first (issue 41)",
        "anchor/discover.py::_open_files",
        "os.path.dirname(real) == real_folder",
        "not real",
        ("tests/reliability/test_red_team_4.py",),
    ),
    Mutant(
        "a name's backtick closes its code span (issue 41)",
        "core/text.py::named",
        'escaped(text, "`")',
        "escaped(text)",
        ("tests/core/test_text.py", "tests/reliability/test_red_team_4.py"),
    ),
    Mutant(
        "the CLI's bytecode folder judged at its own level only (issue 41)",
        "../../bin/session-workflow::plugin_bytecode",
        "foreign_level(prefix, top)",
        "foreign_level(prefix, prefix)",
        ("tests/reliability/test_red_team_4.py",),
    ),
    Mutant(
        "the hooks' bytecode folder judged at its own level only (issue 41)",
        "../../hooks/hook.py::<module>",
        "level == top or os.path.dirname(level) == level",
        "True",
        ("tests/hook/test_bytecode.py",),
    ),
    Mutant(
        "a bundled module served after its source changed",
        "core/bytecode.py::_current",
        "_stamp(origin) == (mtime, size)",
        "True",
        ("tests/core/test_bytecode.py",),
    ),
    Mutant(
        "another module's bundled code served under a name",
        "core/bytecode.py::_current",
        'origin != where + ("/__init__.py" if package else ".py")',
        "False",
        ("tests/core/test_bytecode.py",),
    ),
    Mutant(
        "a bundled module served where a package of its name wins",
        "core/bytecode.py::_current",
        '(package or _stamp(where + "/__init__.py") is None)',
        "True",
        ("tests/core/test_bytecode.py",),
    ),
    Mutant(
        "another interpreter's bundle read",
        "core/bytecode.py::_index_end",
        "head[: len(magic)] != magic",
        "False",
        ("tests/core/test_bytecode.py",),
    ),
    Mutant(
        "the anchors folder left out of info/exclude (issue 41)",
        "core/gitignore.py::ensure_gitignore",
        "ensure_excluded(folder)",
        "",
        ("tests/reliability/test_red_team_4.py", "tests/core/test_gitignore.py"),
    ),
    Mutant(
        "anchor list follows a link out of the project (issue 41)",
        "anchor/report.py::_scan_all",
        "leads_outside(project, folder)",
        "None",
        ("tests/reliability/test_red_team_4.py",),
    ),
    Mutant(
        "CLAUDE_PLUGIN_DATA kept in the Bash tool (issue 41)",
        "cli/main.py::from_claude_code",
        "env.pop(PLUGIN_DATA_ENV, None)",
        "env.get(PLUGIN_DATA_ENV)",
        ("tests/reliability/test_red_team_4.py",),
    ),
    Mutant(
        "an anchor closed by a rename is gone",
        "anchor/part.py::kept_here",
        "os.path.dirname(real) in folders and not os.path.lexists(closed_name(real))",
        "os.path.dirname(real) in folders",
        ("tests/reliability/test_own_anchor.py",),
    ),
    Mutant(
        "no gone line without an anchors folder",
        "hook/parts.py::PARTS",
        "locations.any_anchors(folders) or locations.any_kept_anchors(ctx.places, ctx.session_id)",
        "locations.any_anchors(folders)",
        ("tests/reliability/test_own_anchor.py",),
    ),
    # Issue 25 (in-session edits).
    Mutant(
        "an edit grants trust (no vouched state before it)",
        "hook/tool_edit.py::before_edit",
        (
            "if not stat.S_ISREG(info.st_mode) or record is None:\n"
            "    return False\n"
            "if not record.vouches_for(identity):\n"
            "    # Its very bytes at a new inode (a stash and pop, a checkout): the marker names the"
            " identity the record\n"
            "    # vouches for, so PostToolUse finds the record unchanged since, exactly as for an"
            " unmoved file.\n"
            "    if not registry.same_bytes(record, real, identity):\n"
            "        return False\n"
            "    identity = record.identities[0]"
        ),
        (
            "if not stat.S_ISREG(info.st_mode):\n"
            "    return False\n"
            "if record and not record.vouches_for(identity):\n"
            "    # Its very bytes at a new inode (a stash and pop, a checkout): the marker names the"
            " identity the record\n"
            "    # vouches for, so PostToolUse finds the record unchanged since, exactly as for an"
            " unmoved file.\n"
            "    if not registry.same_bytes(record, real, identity):\n"
            "        return False\n"
            "    identity = record.identities[0]"
        ),
        ("tests/hook/test_tool_edit.py",),
    ),
    Mutant(
        "an edit of other bytes at a moved anchor's new inode keeps trust",
        "hook/tool_edit.py::before_edit",
        "if not registry.same_bytes(record, real, identity):\n    return False",
        "",
        ("tests/hook/test_tool_edit.py",),
    ),
    Mutant(
        "an edit after a stash and pop loses trust",
        "hook/tool_edit.py::before_edit",
        "identity = record.identities[0]",
        "",
        ("tests/hook/test_tool_edit.py",),
    ),
    Mutant(
        "an edit is vouched without the tool's result naming the file",
        "hook/tool_edit.py::after_edit",
        "taken is None or session is None or not tool_wrote(payload, path)",
        "taken is None or session is None",
        ("tests/hook/test_tool_edit.py",),
    ),
    Mutant(
        "a Write need not say it created or updated",
        "hook/tool_edit.py::tool_wrote",
        'payload.get("tool_name") != "Write" or response.get("type") in ("create", "update")',
        "True",
        ("tests/hook/test_tool_edit.py",),
    ),
    Mutant(
        "a closed anchor's edit is looked at",
        "hook/tool_edit.py::edited_anchor",
        ('not folder.endswith(ANCHORS_TAIL) or not name.endswith(".md") or name.endswith(".closed.md")'),
        'not folder.endswith(ANCHORS_TAIL) or not name.endswith(".md")',
        ("tests/hook/test_tool_edit.py",),
    ),
    Mutant(
        "an anchors folder linked out of the project is followed",
        "hook/tool_edit.py::project_anchor",
        "is_inside(real_folder, os.path.realpath(project)) and os.path.dirname(real) == real_folder",
        "os.path.dirname(real) == real_folder",
        ("tests/hook/test_tool_edit.py",),
    ),
    Mutant(
        "an edited anchor's symlink out of its folder is followed",
        "hook/tool_edit.py::project_anchor",
        "is_inside(real_folder, os.path.realpath(project)) and os.path.dirname(real) == real_folder",
        "is_inside(real_folder, os.path.realpath(project))",
        ("tests/hook/test_tool_edit.py",),
    ),
    Mutant(
        "a record dropped between the hooks is made again",
        "hook/tool_edit.py::keep_trust.transform",
        "current is not None and record is not None and record.vouches_for(earlier)",
        "current is not None",
        ("tests/hook/test_tool_edit.py",),
    ),
    Mutant(
        "a marker is used twice",
        "hook/tool_edit.py::_take",
        "if not _remove(marker):\n    return None",
        "",
        ("tests/hook/test_tool_edit.py",),
    ),
    Mutant(
        "a non-anchor edit parses its payload",
        "hook/tool_edit.py::run",
        "if ANCHORS_MARK not in raw:\n    return",
        "",
        ("tests/hook/test_tool_edit.py",),
    ),
    # Issue 27.
    Mutant(
        "the demo's CLI calls run in the caller's folder with its PYTHONPATH",
        "cli/demo.py::cli_argv",
        '[sys.executable, "-I", "-c", DEMO_CLI.format(paths=[SRC, *dependency_paths()]), *args]',
        '[sys.executable, "-c", DEMO_CLI.format(paths=[SRC, *dependency_paths()]), *args]',
        ("tests/cli/test_demo.py",),
    ),
    Mutant(
        "the error log keeps 21 entries",
        "core/errorlog.py::MAX_ENTRIES",
        "20",
        "21",
        ("tests/core/test_errorlog.py",),
    ),
    Mutant(
        "an error log entry of 4,200 bytes",
        "core/errorlog.py::MAX_ENTRY_BYTES",
        "4096",
        "4200",
        ("tests/core/test_errorlog.py",),
    ),
    Mutant(
        "the launcher runs a python3 inside the project",
        "../../hooks/python.sh",
        '*) case $PWD/ in "$sw_home"/*) return 1 ;; esac ;;',
        "*) ;;",
        ("tests/hook/test_launcher.py",),
    ),
    Mutant(
        "the launcher runs a python3 of a relative PATH entry",
        "../../hooks/python.sh",
        "case $sw_entry in /*) ;; *) continue ;; esac",
        "case $sw_entry in *) ;; esac",
        ("tests/hook/test_launcher.py",),
    ),
    Mutant(
        "the launcher runs a script standing in for python3",
        "../../hooks/python.sh",
        "case $sw_line in '#!'*) return 1 ;; esac",
        "case $sw_line in '#!'*) ;; esac",
        ("tests/hook/test_launcher.py",),
    ),
    Mutant(
        "the launcher runs a python3 of a folder others may write",
        "../../hooks/python.sh",
        "case $sw_mode in d????w* | d???????w*) return 1 ;;",
        "case $sw_mode in d????w*) return 1 ;;",
        ("tests/hook/test_launcher.py",),
    ),
    Mutant(
        "the launcher resolves PATH entries from the working directory",
        "../../hooks/python.sh",
        'cd / && cd -L -- "$sw_entry"',
        'cd -L -- "$sw_entry"',
        ("tests/hook/test_launcher.py",),
    ),
    Mutant(
        "the bin script runs python3 without -I",
        "../../bin/session-workflow::<module>",
        (
            '\'\'\'\'set -- -I -S -- "$0" "$@";b=$0;[ -h "$b" ]&&b=$(command -p readlink -f "$b");.'
            " \"${b%/*}/../hooks/python.sh\" #'''"
        ),
        (
            '\'\'\'\'set -- -S -- "$0" "$@";b=$0;[ -h "$b" ]&&b=$(command -p readlink -f "$b");.'
            " \"${b%/*}/../hooks/python.sh\" #'''"
        ),
        REPOSITORY_INPUT,
    ),
    # Issue 32.
    Mutant(
        "the vendored copy after site-packages",
        "core/deps.py::add_vendored",
        "sys.path.insert(0, path)",
        "sys.path.append(path)",
        FRESH,
    ),
    Mutant(
        "the standard library's bytecode sent to the plugin's folder",
        "../../bin/session-workflow::plugin_bytecode.finder",
        "path != ROOT and not path.startswith(ROOT + os.sep)",
        "False",
        FRESH,
    ),
    Mutant(
        "the plugin's bytecode beside its sources",
        "../../bin/session-workflow::plugin_bytecode.Loader.get_code",
        "judged[0] or None, not judged[0]",
        "None, False",
        FRESH,
    ),
    Mutant(
        "a vendored file that differs from the lock passes",
        "../../tools/vendor.py::problems",
        "actual.get(path, expected[path]) != expected[path]",
        "False",
        ("tests/test_vendor.py",),
    ),
    Mutant(
        "plugin folders 0755 where the umask allowed",
        "core/folders.py::make_private",
        "os.fchmod(fd, PRIVATE_MODE)",
        "os.fchmod(fd, 0o755)",
        ("tests/core/test_folders.py",),
    ),
    Mutant(
        "a group-writable trust folder is trusted",
        "core/folders.py::_SHARED_WRITE",
        "stat.S_IWGRP | stat.S_IWOTH",
        "stat.S_IWOTH",
        ("tests/core/test_folders.py",),
    ),
    Mutant(
        "a trust folder of another user is trusted",
        "core/folders.py::_walk",
        "info.st_uid not in (uid, 0)",
        "False",
        ("tests/core/test_folders.py",),
    ),
    Mutant(
        "anchor show frames a file a link in an anchors folder leads out to",
        "anchor/report.py::in_anchors_folder",
        "all",
        "any",
        ("tests/anchor/test_report.py",),
    ),
    Mutant(
        "delivery records in the project",
        "core/places.py::Places.containing_project",
        "is_inside(real, base)",
        "False",
        (*REPOSITORY_INPUT, "tests/core/test_locations.py"),
    ),
    Mutant(
        "a relative CLAUDE_CONFIG_DIR locates the task store",
        "core/places.py::Places.config.compute",
        '_absolute(self.env.get(CONFIG_ENV, ""))',
        'self.env.get(CONFIG_ENV, "") or None',
        (*REPOSITORY_INPUT, "tests/core/test_locations.py", "tests/tasks/test_store.py"),
    ),
    Mutant(
        "CLAUDE_PROJECT_DIR counts in the Bash tool",
        "core/places.py::Places.project_variable",
        "self.env.get(PROJECT_ENV) if hook or not self.in_bash_tool else None",
        "self.env.get(PROJECT_ENV)",
        (*REPOSITORY_INPUT, "tests/core/test_where.py", "tests/cli/test_state.py"),
    ),
    Mutant(
        "a task folder that cannot be looked at taken as absent",
        "core/where.py::no_tasks_folder",
        "(FileNotFoundError, NotADirectoryError)",
        "OSError",
        ("tests/core/test_where.py",),
    ),
    Mutant(
        "the task store skipped where its folder is there",
        "core/where.py::no_tasks_folder",
        "os.lstat(root)",
        "os.lstat(os.path.join(root, 'x'))",
        ("tests/core/test_where.py", "tests/hook/test_session_start.py"),
    ),
    Mutant(
        "the project is the cwd the model cd'd into",
        "core/where.py::project_dir",
        "start or _folder(cwd)",
        "_folder(cwd) or start",
        ("tests/core/test_where.py", "tests/core/test_context.py", "tests/workstate/test_state.py"),
    ),
    Mutant(
        "an anchor read by path, whatever its identity",
        "core/boundedio.py::read_prefix_as",
        "identity is not None and (info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns) != identity",
        "False",
        (*REPOSITORY_INPUT, "tests/core/test_boundedio.py"),
    ),
    Mutant(
        "state show --json prints hidden characters raw",
        "core/text.py::visible_json",
        '(char.isprintable() and not has_invisible(char)) or char == "\\n"',
        "True",
        ("tests/cli/test_state.py",),
    ),
    # Issue 25 (new session, fork).
    Mutant(
        "a cloned work state is shown as the run's own",
        "workstate/part.py::written_here",
        'os.path.isfile(os.path.join(os.path.dirname(transcript), owner + ".jsonl"))',
        "True",
        ("tests/hook/test_session_start.py",),
    ),
    Mutant(
        "clear with the cleared session's tasks",
        "hook/parts.py::PARTS",
        '("compact", "resume", "startup", "fork")',
        "ALL_SOURCES",
        (*HOOK, *TASKS),
    ),
    Mutant(
        "clear without the work-state line",
        "hook/parts.py::PARTS",
        '("compact", "resume", "startup", "clear")',
        '("compact", "resume", "startup")',
        HOOK,
    ),
    Mutant(
        "the foreign work state at startup ignores the window",
        "workstate/part.py::prepare_foreign",
        ('ctx.source == "startup" and age > ctx.places.hours(config.STARTUP_WINDOW_HOURS) * 3600'),
        ('ctx.source == "startup" and age < 0 and age > ctx.places.hours(config.STARTUP_WINDOW_HOURS) * 3600'),
        STATE,
    ),
    Mutant(
        "the foreign line without state adopt",
        "workstate/part.py::foreign_line",
        (
            'f"Work state of another session (its section is not given to this one):'
            ' {ticket_label(state.ticket)}"\n'
            '        f\' "{display_title(state.title)}", step {step}{paused}, {age_words(age)}. If'
            " this session carries on with'\n"
            '        " that ticket, take it over first: `session-workflow state adopt`."'
        ),
        (
            'f"Work state of another session (its section is not given to this one):'
            ' {ticket_label(state.ticket)}"\n'
            '        f\' "{display_title(state.title)}", step {step}{paused}, {age_words(age)}. If'
            " this session carries on with'\n"
            '        " that ticket, see `session-workflow state show`."'
        ),
        STATE,
    ),
    Mutant(
        "the foreign line's title unflattened",
        "workstate/part.py::foreign_line",
        "display_title(state.title)",
        "state.title",
        STATE,
    ),
    Mutant(
        "the mod's session gets no foreign line",
        "workstate/part.py::prepare_session_start",
        "unreadable_part(ctx) or prepare_foreign(ctx)",
        "unreadable_part(ctx)",
        HOOK,
    ),
    Mutant(
        "a fork reads its own (absent) transcript",
        "hook/compose.py::_compose",
        'fork_parent(ctx.transcript_path) if ctx.source == "fork" else ctx.transcript_path',
        "ctx.transcript_path",
        HOOK,
    ),
    Mutant(
        "a resume's command line names a fork parent",
        "transcript/thread.py::resumed_session",
        '"--fork-session" not in argv',
        '"--fork-session" in argv and False',
        ("tests/transcript/test_thread.py", *HOOK),
    ),
    Mutant(
        "a fork parent outside the folder",
        "transcript/thread.py::fork_parent",
        'not session or "/" in session or "\\0" in session or session.startswith(".")',
        'not session or "\\0" in session or session.startswith(".")',
        ("tests/transcript/test_thread.py",),
    ),
    Mutant(
        "a block with a note after its header named 'earlier'",
        "hook/compose.py::earlier_source",
        '"\\n"',
        "SEPARATOR",
        HOOK,
    ),
    Mutant(
        "a fork block without the fork note",
        "hook/compose.py::_compose",
        "[FORK_NOTE, *notes]",
        "[*notes]",
        HOOK,
    ),
    # Issue 26.
    Mutant(
        "a startup window of 0 h admits an anchor of age 0 or less",
        "anchor/age.py::tier_for",
        ('if source == "startup" and startup_window <= 0:\n    return None'),
        "",
        (*ANCHOR, *HOOK),
    ),
    Mutant(
        "a broken task file is not named",
        "tasks/render.py::render_block",
        "if unreadable:\n    lines.append(unreadable)",
        "",
        ("tests/tasks/test_store.py",),  # literal goldens: test_properties would shrink its failure for minutes
    ),
    Mutant(
        "3 broken task files named -> 4",
        "tasks/render.py::MAX_UNREADABLE_NAMED",
        "3",
        "4",
        TASKS,
    ),
    Mutant(
        "a broken work-state file is not named",
        "workstate/part.py::prepare",
        "unreadable_part(ctx) or prepare_foreign(ctx)",
        "prepare_foreign(ctx)",
        HOOK,
    ),
    Mutant(
        "the keeping sessions newest last",
        "anchor/registry.py::kept_sessions",
        "[session, *(item for item in previous if item != session)]",
        "[*(item for item in previous if item != session), session]",
        ANCHOR,
    ),
    Mutant("8 keeping sessions -> 9", "anchor/registry.py::MAX_SESSIONS", "8", "9", ANCHOR),
    Mutant(
        "a record holds for any path",
        "anchor/registry.py::parse",
        ('not isinstance(document, dict) or document.get("v") != VERSION or document.get("path") != real_path'),
        'not isinstance(document, dict) or document.get("v") != VERSION',
        ANCHOR,
    ),
    Mutant(
        "a write killed before its rename strands the file in place",
        "anchor/registry.py::Registry.vouch.transform",
        "still and present is not None and present.as_tuple() != newest.as_tuple()",
        "False",
        ANCHOR,
    ),
    Mutant(
        "a killed write keeps an identity the record never vouched for",
        "anchor/registry.py::Registry.vouch.transform",
        "present is not None and before is not None and trusts(before, real, present)",
        "present is not None",
        ANCHOR,
    ),
    Mutant("2 identities kept -> 3", "anchor/registry.py::MAX_IDENTITIES", "2", "3", ANCHOR),
    Mutant(
        "another session's parked anchor is a parallel track",
        "anchor/choice.py::select",
        "c.kind == LIVE",
        "c.kind <= LIVE + 1",
        ANCHOR,
    ),
    Mutant(
        "a line of file content after the first unquoted",
        "anchor/frame.py::quote",
        'body.replace("\\n", "\\n" + QUOTE)',
        "body",
        ANCHOR,
    ),
    Mutant(
        "a quote in the framed file name not escaped",
        "anchor/frame.py::opening",
        "escaped(name, chr(34))",
        "escaped(name)",
        ANCHOR,
    ),
    Mutant("framed file name 80 -> 120", "anchor/frame.py::NAME_CAP", "80", "120", ANCHOR),
    Mutant(
        "a stale anchor's cursor line unquoted",
        "anchor/block.py::AnchorBlock._pointer_variants",
        'f"Its cursor still asserts:\\n{QUOTE}{cursor}"',
        'f"Its cursor still asserts:\\n{cursor}"',
        ANCHOR,
    ),
    Mutant(
        "a user's prompt unquoted",
        "transcript/recovery.py::RecoveryPart._render",
        '"> " + cut_utf8(prompt, PROMPT_BYTES)',
        "cut_utf8(prompt, PROMPT_BYTES)",
        ("tests/transcript", "tests/reliability/test_injection.py"),
    ),
    Mutant(
        "a user's prompt kept on its many lines",
        "transcript/recovery.py::prompt_text",
        'one_line(" ".join(kept))',
        '" ".join(kept)',
        ("tests/transcript", "tests/reliability/test_injection.py"),
    ),
    Mutant(
        "an untrusted anchor's path shown unescaped",
        "anchor/part.py::untrusted_notes",
        "display_path(candidate.path)",
        "candidate.path",
        (*ANCHOR, "tests/reliability/test_injection.py"),
    ),
    Mutant(
        "a block from before the last compaction that an answer followed counts as in the thread",
        "transcript/thread.py::blocks_in_thread",
        ('if passed and record.get("type") == "assistant":\n    break'),
        "",
        ("tests/transcript", "tests/hook"),
    ),
    Mutant(
        "another hook's context counts as a SessionStart block",
        "transcript/thread.py::session_start_texts",
        ('attachment.get("type") != "hook_additional_context" or attachment.get("hookEvent") != "SessionStart"'),
        'attachment.get("type") != "hook_additional_context"',
        ("tests/transcript", "tests/hook"),
    ),
    Mutant(
        "any text of the thread counts as our block",
        "transcript/thread.py::blocks_in_thread",
        "(text for text in reversed(session_start_texts(record)) if text.startswith(prefix))",
        "(text for text in reversed(session_start_texts(record)))",
        ("tests/transcript", "tests/hook"),
    ),
    Mutant(
        "adopt keeps a blocker it did not adopt",
        "tasks/adopt.py::adopted_record",
        "[item for item in value if item in kept_ids]",
        "list(value)",
        TASKS,
    ),
    Mutant(
        "adopt lets a task this session has block an adopted one",
        "tasks/adopt.py::adopt",
        "{str(task_id) for task_id, _record in tasks if task_id not in taken}",
        "{str(task_id) for task_id, _record in tasks}",
        TASKS,
    ),
    Mutant(
        "adopt lowers the high-water mark",
        "tasks/adopt.py::adopt",
        "adopted and max(adopted) > _high_water_mark(target)",
        "adopted",
        TASKS,
    ),
    Mutant(
        "adopt copies completed tasks",
        "tasks/adopt.py::read_open_tasks",
        "parsed is not None and parsed[0] in OPEN_STATUSES",
        "parsed is not None",
        TASKS,
    ),
    Mutant(
        "anchor write takes text one step behind",
        "anchor/writer.py::write_anchor.transform",
        "given < stored",
        "given < stored - 1",
        ANCHOR,
    ),
    Mutant(
        "anchor write refuses text of the stored step",
        "anchor/writer.py::write_anchor.transform",
        "given < stored",
        "given <= stored",
        ANCHOR,
    ),
    Mutant(
        "anchor write ignores --force",
        "anchor/writer.py::write_anchor.transform",
        "given < stored and not force",
        "given < stored",
        ANCHOR,
    ),
    Mutant(
        "the mod puts another session's state in the system prompt",
        "hooks/mod/register.ts",
        "return stored !== null && stored.owner === session ? stored : null",
        "return stored",
        runner=MOD,
    ),
    Mutant(
        "the mod's project is the shell's cwd",
        "hooks/mod/where.ts",
        "return $.session.root()",
        "return $.session.cwd()",
        runner=MOD,
    ),
    Mutant(
        "the mod takes a relative CLAUDE_CONFIG_DIR",
        "hooks/mod/where.ts",
        "if (isAbsolute(env.CLAUDE_CONFIG_DIR)) return env.CLAUDE_CONFIG_DIR",
        "if (env.CLAUDE_CONFIG_DIR) return env.CLAUDE_CONFIG_DIR",
        runner=MOD,
    ),
    Mutant(
        "the mod takes a section over 1,024 bytes",
        "hooks/mod/text.ts",
        "  return cutUtf8(lines.join('\\n'), MAX_SECTION_BYTES)\n}",
        "  return lines.join('\\n')\n}",
        runner=MOD,
    ),
    Mutant(
        "the mod lets a lone surrogate into the system prompt",
        "hooks/mod/text.ts",
        "  [0x3000, 0x3000],\n  [0xd800, 0xdfff],\n]",
        "  [0x3000, 0x3000],\n]",
        runner=MOD,
    ),
    Mutant(
        "a bare ~ is shell-safe",
        "core/text.py::_SHELL_SAFE",
        '"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_@%+=:,./-"',
        '"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_@%+=:,./-~"',
        ("tests/core/test_text.py",),
    ),
    Mutant(
        "a backtick stays inside single quotes",
        "core/text.py::shell_quote",
        'word.isprintable() and "`" not in word and not has_invisible(word)',
        "word.isprintable() and not has_invisible(word)",
        ("tests/core/test_text.py",),
    ),
    Mutant(
        "a hidden character as its code point, not its bytes",
        "core/text.py::_shell_escape",
        '"".join(f"\\\\x{byte:02x}" for byte in raw)',
        'f"\\\\u{ord(char):04x}"',
        ("tests/core/test_text.py",),
    ),
    Mutant(
        "Resume step 2 with the git root unquoted",
        "anchor/template.py::resume_steps",
        "_git_check(git_root, shell_command)",
        "_git_check(git_root, str)",
        ("tests/anchor/test_template.py",),
    ),
    Mutant(
        "an old anchor's Resume step 2 left unquoted",
        "anchor/writer.py::step_anchor.transform",
        "mend_resume(current, path)",
        "current",
        ("tests/anchor/test_template.py",),
    ),
    Mutant(
        "the mod's reminder 300 -> 400 bytes",
        "hooks/mod/checkpoint.ts",
        "export const MAX_REMINDER_BYTES = 300",
        "export const MAX_REMINDER_BYTES = 400",
        runner=MOD,
    ),
    # Issue 45: the edges an independent mutation round found the suite let through, and three bugs that only
    # tests/reliability caught; each now fails a unit test (the mod's under its own runner).
    Mutant(
        "issue 45: a task block of exactly 4,096 bytes cut",
        "tasks/render.py::render_block",
        "used + cost + (reserve if more_may_follow else 0) <= budget",
        "used + cost + (reserve if more_may_follow else 0) < budget",
        TASKS,
    ),
    Mutant(
        "issue 45: a switched-off anchor counts as restored state",
        "hook/compose.py::prepare_parts",
        "(FailedPart, SwitchedOff)",
        "FailedPart",
        HOOK,
    ),
    Mutant(
        "issue 45: edit markers in a folder others can write",
        "hook/tool_edit.py::marker_path",
        "folder is None or places.foreign(folder) is not None",
        "folder is None",
        HOOK,
    ),
    Mutant(
        "issue 45: separators not reserved for the parts after",
        "hook/compose.py::allocate",
        "later.floor + len(SEPARATOR)",
        "later.floor",
        HOOK,
    ),
    Mutant(
        "issue 45: the mod links a stored URL of 301 characters",
        "hooks/mod/text.ts",
        "state.url.length <= 300",
        "state.url.length <= 301",
        runner=MOD,
    ),
    Mutant(
        "issue 45: the mod bounds the state file in UTF-16 units",
        "hooks/mod/workstate.ts",
        "if (utf8Length(raw) > MAX_FILE_BYTES) return null",
        "if (raw.length > MAX_FILE_BYTES) return null",
        runner=MOD,
    ),
    Mutant(
        "issue 45: the mod takes a state file in project-evil",
        "hooks/mod/workstate.ts",
        "!real.startsWith(`${root}/`)",
        "!real.startsWith(root)",
        runner=MOD,
    ),
    Mutant(
        "issue 45: the reminder's 300 bytes counted in UTF-16 units",
        "hooks/mod/checkpoint.ts",
        "utf8Length(line) <= MAX_REMINDER_BYTES",
        "line.length <= MAX_REMINDER_BYTES",
        runner=MOD,
    ),
    Mutant(
        "issue 45: a future mtime outranks a present anchor",
        "anchor/choice.py::select",
        "(candidate.kind, is_future(candidate, ctx.now))",
        "candidate.kind",
        ANCHOR,
    ),
    Mutant(
        "issue 45: DEL and C1 controls reach the model",
        "anchor/text.py::_UNSAFE",
        '"[\\x00-\\x08\\x0b\\x0c\\x0e-\\x1f\\x7f-\\x9f"',
        '"[\\x00-\\x08\\x0b\\x0c\\x0e-\\x1f"',
        ANCHOR,
    ),
    Mutant(
        "issue 45: other anchors' names unescaped",
        "anchor/block.py::AnchorBlock._others_note",
        "display_name(other.name)",
        "other.name",
        ANCHOR,
    ),
    # Issue 43: the run record.
    Mutant("run record 1 KB -> 1,100 bytes", "transcript/record.py::CAP_BYTES", "1024", "1100", RECORD),
    Mutant("run record counts 100 -> 110 calls", "transcript/record.py::MAX_COUNTED", "100", "110", RECORD),
    Mutant("run record reads 1 MB -> 2 MB", "transcript/record.py::WINDOW_BYTES", "1 << 20", "1 << 21", RECORD),
    Mutant("run record parses 40 -> 44 calls", "transcript/record.py::MAX_PARSED", "40", "44", RECORD),
    Mutant(
        "run record: a call past the parse limit without its result is not counted",
        "transcript/record.py::Reading._call",
        "if self.parsed >= MAX_PARSED:\n    if name in STOP_TOOLS:\n        self.stopped.add(STOPPED)\n"
        "    if name not in QUIET_TOOLS:\n        found.older += 1".replace("STOPPED", STOPPED),
        "if self.parsed >= MAX_PARSED:\n    if name in STOP_TOOLS:\n        self.stopped.add(STOPPED)".replace(
            "STOPPED", STOPPED
        ),
        RECORD,
    ),
    Mutant(
        "run record: an escaped call before a boundary is not looked at",
        "transcript/record.py::_may_write",
        "any((sign in line for sign in WRITE_SIGNS)) or ESCAPE_SIGN in line",
        "any((sign in line for sign in WRITE_SIGNS))",
        RECORD,
    ),
    Mutant(
        "run record: failures not first",
        "transcript/record.py::action_lines",
        '(0, f"- FAILED ({status}): {span(command)}")',
        '(5, f"- FAILED ({status}): {span(command)}")',
        RECORD,
    ),
    Mutant(
        "run record: a failed anchor write opens the window",
        "transcript/record.py::Reading._call",
        "succeeded and writes",
        "writes",
        RECORD,
    ),
    Mutant(
        "run record: a backtick closes the code span",
        "transcript/record.py::span",
        'escaped(text[:limit], "`")',
        "escaped(text[:limit])",
        RECORD,
    ),
    Mutant(
        "run record: repeats not folded",
        "transcript/record.py::fold",
        'text + (f" ×{times}" if times > 1 else "")',
        "text",
        RECORD,
    ),
    Mutant(
        "run record: a forged notification ends a shell",
        "transcript/record.py::_notified_id",
        ('record.get("type") != "user" or not isinstance(origin, dict) or origin.get("kind") != "task-notification"'),
        'record.get("type") != "user" or False',
        RECORD,
    ),
    Mutant(
        "run record: parsed on past a boundary with no anchor write before it",
        "transcript/record.py::Reading._parsed",
        "not self._write_before(at)",
        "False",
        RECORD,
    ),
    Mutant(
        "run record: any command's output makes a commit line",
        "transcript/record.py::action_lines",
        "isinstance(stdout, str) and runs_git_commit(command)",
        "isinstance(stdout, str)",
        RECORD,
    ),
    Mutant(
        "run record: a quoted mention of the writer moves the window",
        "transcript/shell.py::simple_commands",
        "quote, started = (char, True)",
        "started = True",
        ("tests/transcript/test_shell.py",),
    ),
    Mutant(
        "run record: no room kept for a count line that is always there",
        "transcript/record.py::RecordPart._render",
        "self.whole <= room and not self.counted",
        "self.whole <= room",
        RECORD,
    ),
    Mutant(
        "run record: an unparsed result's error is not looked for",
        "transcript/record.py::PARSE_SIGNS",
        """(b'"is_error":true', b'"interrupted":true', START_MARKER)""",
        """(b'"interrupted":true', START_MARKER)""",
        RECORD,
    ),
    Mutant(
        "run record: a commit's result left unparsed",
        "transcript/record.py::_went_well",
        "not isinstance(command, str) or runs_git_commit(command)",
        "not isinstance(command, str)",
        RECORD,
    ),
    Mutant(
        "run record: a repeated line kept by its first run",
        "transcript/record.py::fold",
        "last[action] = when",
        "last.setdefault(action, when)",
        RECORD,
    ),
    Mutant(
        "run record: an older line naming a call's id taken for its result",
        "transcript/record.py::Reading.take",
        "self.results.setdefault(ident, line)",
        "self.results.__setitem__(ident, line)",
        RECORD,
    ),
    Mutant(
        "run record: a line naming several ids taken unread",
        "transcript/record.py::Reading._call",
        "ident not in self.shared and _went_well(name, tool_input, outcome)",
        "_went_well(name, tool_input, outcome)",
        RECORD,
    ),
    Mutant(
        "run record: a long result's call before the newest MB not read",
        "transcript/record.py::Reading.take",
        "at + len(line) < self.size - WINDOW_BYTES and not self._awaited(line, held)",
        "at + len(line) < self.size - WINDOW_BYTES",
        RECORD,
    ),
    Mutant(
        "run record: a cut keeps each kind's oldest lines",
        "transcript/record.py::RecordPart.__init__",
        "(self.lines[index][0], -self.lines[index][3])",
        "(self.lines[index][0], self.lines[index][3])",
        RECORD,
    ),
    Mutant(
        "run record: the lines a cut keeps shown in the order it kept them",
        "transcript/record.py::RecordPart._render",
        "(line for index, (line, _times) in enumerate(self.pending) if index in kept)",
        "(self.pending[index][0] for index in self.keeping if index in kept)",
        RECORD,
    ),
    Mutant(
        "run record: the ledger keeps a digest of the record",
        "transcript/record.py::RecordPart",
        "digest_kept = False",
        "digest_kept = True",
        RECORD,
    ),
    Mutant(
        "run record: the recovery reads the tail again at a compaction",
        "transcript/record.py::prepare",
        "along(ctx)",
        "None",
        ("tests/transcript/test_tail.py",),
    ),
    Mutant(
        "PreCompact: the cursor line over a later step's next",
        "anchor/part.py::precompact_facts",
        "newest_step_next(section) if section is not None and stepped else None",
        "None",
        ("tests/hook/test_precompact.py",),
    ),
]


def run_mod_tests(copy: str) -> subprocess.CompletedProcess[str]:
    """The mod's tests (``tests/mod/*.test.ts``) on ``copy`` through the pinned CLI; exit 1 when one fails."""
    argv = ["bash", os.path.join(copy, "tools", "run_claude.sh"), "plugin", "test", copy]
    return subprocess.run(argv, cwd=copy, capture_output=True, text=True, stdin=subprocess.DEVNULL, check=False)


def failed_mod_tests(result: subprocess.CompletedProcess[str]) -> int:
    """How many mod tests failed, from the runner's `` N fail`` line (a crash before the tests is no kill)."""
    counts = [line.split()[0] for line in (result.stdout + result.stderr).splitlines() if line.endswith(" fail")]
    return int(counts[-1]) if counts and counts[-1].isdigit() else 0


def run_tests(copy: str, files: tuple[str, ...], workers: int = 1) -> subprocess.CompletedProcess[str]:
    """The unit tests named by ``files`` in ``copy``, stopping at the first failure (a kill needs only one); on
    ``workers`` pytest-xdist workers when more than one (the baseline, which runs alone)."""
    env = {key: value for key, value in os.environ.items() if not key.startswith(("SESSION_WORKFLOW_", "CLAUDE"))}
    env.update(PYTHONPATH=os.path.join(copy, "src"), PYTHONDONTWRITEBYTECODE="1")
    argv = [sys.executable, "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider", "-m", "not e2e and not slow"]
    argv += ["-n", str(workers)] if workers > 1 else []
    return subprocess.run([*argv, *files], cwd=copy, env=env, capture_output=True, text=True, check=False)


def apply(copy: str, mutant: Mutant) -> str:
    """Apply ``mutant`` in ``copy``; returns the original text (``Stale`` when it no longer applies)."""
    path = os.path.join(copy, mutant.path)
    with open(path, encoding="utf-8") as handle:
        original = handle.read()
    changed = mutated(original, mutant)
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(changed)
    return original


def restore(copy: str, mutant: Mutant, original: str) -> None:
    with open(os.path.join(copy, mutant.path), "w", encoding="utf-8") as handle:
        handle.write(original)


def stale(root: str, chosen: list[Mutant]) -> list[str]:
    """Why each of ``chosen`` no longer applies to the checkout at ``root`` (fast: no test runs); empty when all do."""
    found = []
    for mutant in chosen:
        with open(os.path.join(root, mutant.path), encoding="utf-8") as handle:
            source = handle.read()
        try:
            mutated(source, mutant)
        except Stale as error:
            found.append(str(error))
    return found


def judge(root: str, chosen: list[Mutant], jobs: int, full: bool) -> list[str]:
    """Run ``chosen`` against the checkout at ``root``, each in a copy (``jobs`` at once), and print a verdict a
    mutant; the names of those that survived or no longer apply. The unmutated copy runs the same tests first: a
    red baseline raises ``RuntimeError``, never taken for a kill."""
    scope = {m.name: (("tests",) if full and m.runner == PYTEST else m.tests) for m in chosen}
    with tempfile.TemporaryDirectory(prefix="session-workflow-mutants-") as base:
        copy = os.path.join(base, "repo")
        copy_checkout(root, copy)
        baseline = sorted({test for tests in scope.values() for test in tests})
        started = time.monotonic()
        result = run_tests(copy, tuple(baseline), max(1, jobs)) if baseline else None
        if result is not None and result.returncode != 0:
            raise RuntimeError(
                f"the hand-written mutants' baseline fails:\n{result.stdout[-3000:]}{result.stderr[-2000:]}"
            )
        if result is not None:
            print(f"baseline passes ({time.monotonic() - started:.0f}s): {' '.join(baseline)}")
        if any(mutant.runner == MOD for mutant in chosen):
            started = time.monotonic()
            result = run_mod_tests(copy)
            if result.returncode != 0:
                raise RuntimeError(f"the mod's baseline fails:\n{result.stdout[-3000:]}")
            print(f"baseline passes ({time.monotonic() - started:.0f}s): {MOD}")
        # Each worker judges mutants in a copy of its own, so two run at once on a machine of two cores.
        copies: queue.Queue[str] = queue.Queue()
        copies.put(copy)
        for index in range(1, max(1, jobs)):
            other = os.path.join(base, f"repo{index}")
            copy_checkout(root, other)
            copies.put(other)

        def one(mutant: Mutant) -> str | None:
            """Print ``mutant``'s verdict; its name when it survived (or is stale), else None."""
            started = time.monotonic()
            where = copies.get()
            try:
                try:
                    original = apply(where, mutant)
                except Stale as error:
                    print(f"STALE     {error}")
                    return mutant.name
                try:
                    result = run_mod_tests(where) if mutant.runner == MOD else run_tests(where, scope[mutant.name])
                finally:
                    restore(where, mutant, original)
            finally:
                copies.put(where)
            killed = result.returncode == 1 and (mutant.runner != MOD or failed_mod_tests(result) > 0)
            verdict = "killed" if killed else f"SURVIVED (pytest exit {result.returncode})"
            print(f"{verdict:<9} {mutant.name} ({time.monotonic() - started:.0f}s)", flush=True)
            return None if killed else mutant.name

        with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
            return [name for name in pool.map(one, chosen) if name is not None]
