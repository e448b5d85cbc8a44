"""``session-workflow doctor``: one screen that says whether the plugin can work here, and what to fix.

The marks and the exit rule are ``DESCRIPTION`` (the ``doctor --help`` text). The domain-free checks are
``cli.health``'s; here are those that need the domain (the writers' dependencies, the anchors, the work state)
and the screen. It only reads (bounded).
"""

from __future__ import annotations

import os
import sys

from session_workflow.anchor import registry
from session_workflow.anchor.discover import is_open_name, list_open
from session_workflow.cli import health
from session_workflow.cli.health import FAIL, INFO, OK, Check
from session_workflow.cli.parser import RawDescriptionHelpFormatter
from session_workflow.core import deps
from session_workflow.core.boundedio import read_prefix
from session_workflow.core.gitignore import staged
from session_workflow.core.locations import SESSION_ENV, anchors_dir
from session_workflow.core.text import escaped, named, shell_command

TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse
    from collections.abc import Callable, Sequence

    from session_workflow.anchor.discover import Candidate
    from session_workflow.anchor.registry import Record
    from session_workflow.cli.parser import OneLineParser
    from session_workflow.core.places import Places

    # An anchor state: its Check for a candidate, its record (None: none) and this shell's session, or None
    # when the state does not apply.
    AnchorState = Callable[[Candidate, "Record | None", str], "Check | None"]

DESCRIPTION = """\
Check that the plugin can work here: one line per check, marked ✔ (fine), ✘ (its fix on the next line) or
· (what a shell cannot know, or what is expected). Reads only; installs nothing.

Exit 0 when nothing essential is missing (a python3 3.9+ for the hooks, a writable trust folder, the writers'
lock, the plugin enabled where Claude Code has it installed), 1 otherwise.
"""
# What the writers import beyond the standard library (vendored in the plugin folder, declared by the wheel).
DEPENDENCY = "filelock"
# One screen: anchors past this many are counted, not listed.
MAX_ANCHOR_LINES = 12
# The organisation's settings file Claude Code reads here (where known), for the plugin and settings checks.
MANAGED_SETTINGS = health.managed_settings_path(sys.platform)


def dependency_check() -> Check:
    """Where the writers' filelock comes from, found as ``core.atomic`` finds it: the plugin folder's vendored copy
    first on the path, else the environment an installed wheel runs in. The writers lock with flock on POSIX and
    import filelock only where there is none, so one that does not import is essential only off POSIX; on POSIX it
    is a failure with its fix (a file system without flock needs it), and the writers run."""
    import importlib

    vendored = deps.add_vendored()
    what = "writers' dependency"
    try:
        module = importlib.import_module(DEPENDENCY)
    except ImportError as error:
        fix = (
            f"the plugin folder is incomplete ({escaped(vendored)}): reinstall the plugin"
            if vendored is not None
            else f"`{escaped(sys.executable)} -m pip install {DEPENDENCY}`"
        )
        text = f"{what}: {DEPENDENCY} does not import in {escaped(sys.executable)} ({escaped(str(error))})"
        if os.name != "posix":  # core.atomic.locked's test: no flock, so every writer needs it
            return Check(FAIL, text, fix, essential=True)
        return Check(FAIL, f"{text}; the writers lock with flock here, and need it only on a file system without", fix)
    version = getattr(module, "__version__", "(no version)")
    folder = os.path.dirname(os.path.dirname(os.path.abspath(module.__file__ or DEPENDENCY)))
    source = "vendored in" if folder == vendored else "from"
    return Check(OK, f"{what}: {DEPENDENCY} {version}, {source} {escaped(folder)}")


def trusted(candidate: Candidate, record: Record | None, session: str) -> Check | None:
    """The registry vouches for the file as it is (its identity, or the very bytes at a new inode): injected."""
    if record is None or candidate.identity is None or not registry.trusts(record, candidate.path, candidate.identity):
        return None
    kept = ", kept by this session" if session and session in record.sessions else ""
    return Check(OK, f"anchor {named(candidate.name)}: trusted{kept}")


def changed(candidate: Candidate, record: Record | None, _session: str) -> Check | None:
    """This machine's writers made it, and something else changed it since (an edit, a copy, a checkout)."""
    if record is None:
        return None
    path = os.path.abspath(candidate.path)  # shell_command escapes what it must itself, and stays runnable
    return Check(
        FAIL,
        f"anchor {named(candidate.name)}: changed outside the writers; the hooks do not inject it",
        f"read it ({shell_command('session-workflow', 'anchor', 'show', path)}); if the change is yours:"
        f" {registry.adopt_command(path)}",
    )


def not_created_here(candidate: Candidate, _record: Record | None, _session: str) -> Check:
    """No record: cloned, unpacked or hand-made. Expected in a stranger's repository, so not a failure."""
    return Check(
        INFO,
        f"anchor {named(candidate.name)}: not created here; the hooks do not inject it",
        f"if it is yours: {registry.adopt_command(os.path.abspath(candidate.path))}",  # shell-quoted: one visible line
    )


# The states of an anchor file, the first that applies wins; a new state is one more function here. A kept anchor
# whose file is missing has no file to look at: ``gone_checks`` names those.
ANCHOR_STATES: tuple[AnchorState, ...] = (trusted, changed, not_created_here)


def anchor_checks(project: str, places: Places) -> list[Check]:
    """The project's anchors section: one line per open anchor and its state (at most ``MAX_ANCHOR_LINES``, then a
    count), then each anchor a session of this machine kept here whose file is gone (``gone_checks``); one line
    "no open anchor" only when there is neither."""
    folder = anchors_dir(project)
    candidates = list_open(folder) if os.path.isdir(folder) else []
    gone = gone_checks(project, places)
    if not candidates:
        return gone or [Check(INFO, f"anchors: no open anchor in {named(folder)}")]
    session = places.session
    records = registry.Registry(places)
    checks = []
    for candidate in candidates[:MAX_ANCHOR_LINES]:
        record = records.read(candidate.real)
        states = (state(candidate, record, session) for state in ANCHOR_STATES)
        checks.append(next(check for check in states if check is not None))
    more = len(candidates) - MAX_ANCHOR_LINES
    if more > 0:
        checks.append(Check(INFO, f"anchors: {more} more in {named(folder)}", "session-workflow anchor list"))
    return checks + gone


def gone_checks(project: str, places: Places) -> list[Check]:
    """The anchors any session of this machine kept in ``project`` whose files are gone (deleted, ``git clean
    -fdx``) while their records stand, so ``anchor restore`` can put them back; from any shell (this one's
    session first, when it has one). A closed anchor's record is dropped at close: it is not gone."""
    real_folder = os.path.realpath(anchors_dir(project))
    session = places.session or None
    records = registry.Registry(places)
    checks = []
    for path in records.kept_in(real_folder, session):
        if os.path.lexists(path):
            continue
        record = records.read(path)
        if record is None:
            continue
        whose = "this session" if session and session in record.sessions else "a session of this machine"
        checks.append(
            Check(
                FAIL,
                f"anchor {named(os.path.basename(path))}: kept by {whose}, gone from {named(real_folder)}",
                f"put the last version back: {registry.restore_command(path)}",
            )
        )
    return checks[:MAX_ANCHOR_LINES]


def staged_checks(project: str) -> list[Check]:
    """An open anchor ``git add -A`` would stage (issue 41): the repository re-includes the anchors folder from a
    ``.gitignore`` above it, past the writers' rules (``core.gitignore``). An anchor quotes the user's words."""
    folder = anchors_dir(project)
    found = [path for path in (staged(project, folder) or []) if is_open_name(os.path.basename(path))]
    if not found or not os.path.isdir(folder):
        return []
    more = f" and {len(found) - 1} more" if len(found) > 1 else ""
    check = shell_command("git", "-C", project, "check-ignore", "-v", "--no-index", found[0])
    return [
        Check(
            FAIL,
            f"anchors: `git add -A` would stage {named(found[0])}{more}: nothing keeps the anchors folder out of git"
            " here, or a .gitignore of the repository re-includes it",
            f"remove the rule that lets git see it (`{check}` names it); with no rule, any anchor writer adds one",
        )
    ]


def work_state_check(dir_arg: str | None, places: Places) -> Check:
    """The work state ``session-workflow state`` works on here, and whether this shell's session owns it.

    The caller makes sure the current directory exists, so the state is the project's (``cli.state.locate``), never
    the user-level fallback.
    """
    from session_workflow.cli.state import locate, summary  # the state group's own rules for "here"
    from session_workflow.workstate.state import MAX_STATE_BYTES, decode

    path = locate(dir_arg, places).path
    read = read_prefix(path, MAX_STATE_BYTES + 1)
    if read is None:
        if os.path.lexists(path):
            return Check(FAIL, f"work state: {escaped(path)} is not a readable regular file", "remove it")
        return Check(INFO, f"work state: none in {escaped(path)}")
    decoded = decode(read[0])
    if decoded is None:
        return Check(FAIL, f"work state: {escaped(path)} is not a valid work state", "session-workflow state clear")
    state = decoded[0]
    owner = escaped(state.session or "(none)")
    session = places.session
    shown = f"work state: {escaped(summary(state))}; owner {owner}"
    if not session:
        return Check(INFO, f"{shown} (no {SESSION_ENV} in this shell to compare)")
    if state.session == session:
        return Check(OK, f"{shown} (this session)")
    return Check(INFO, f"{shown}, another session: orphaned here", "session-workflow state adopt (claims it here)")


def ledger_check(project: str, places: Places) -> Check:
    """How many blocks and reminders the compaction ledger holds for this project, and the command that lists them."""
    from session_workflow.cli.log import entries

    found = entries(places, None, project)
    blocks = sum(1 for entry in found if entry.get("kind") == "start")
    reminders = len(found) - blocks
    if not found:
        return Check(INFO, "ledger: nothing sent in this project yet (`session-workflow log` will list it)")
    newest = escaped(str(found[0].get("ts", "?")))
    what = f"{blocks} SessionStart block(s) and {reminders} checkpoint reminder(s) sent here, the newest at {newest}"
    return Check(INFO, f"ledger: {what}", "session-workflow log --all")


# The error log's entries the screen shows, newest last (the log holds more, with their tracebacks).
MAX_ERROR_LINES = 3


def error_checks(places: Places) -> list[Check]:
    """The newest entries of the error log (``core.errorlog``: every unexpected exception of a hook or a command),
    or that it holds none."""
    from session_workflow.core import errorlog

    path = places.error_log
    found = errorlog.entries(places)
    if path is None or not found:
        return [Check(OK, "errors: none recorded")]
    fix = f"the tracebacks are in {escaped(path)}; `session-workflow --debug <command>` prints a command's"
    lines = [Check(INFO, f"errors: {len(found)} recorded, the newest {min(len(found), MAX_ERROR_LINES)} below", fix)]
    for entry in found[-MAX_ERROR_LINES:]:
        time, where, error, version = (str(entry.get(key, "?")) for key in ("time", "where", "error", "version"))
        lines.append(Check(INFO, escaped(f"error {time} in {where} (version {version}): {error}")))
    return lines


def report(places: Places, home: str, cwd: str | None, dir_arg: str | None) -> tuple[list[str], int]:
    """The screen's lines and the exit code."""
    from session_workflow.anchor.writer import default_project_dir

    own = os.path.join(deps.PLUGIN_ROOT, "bin", "session-workflow")
    in_claude_code = places.in_bash_tool
    launcher = os.path.join(deps.PLUGIN_ROOT, "hooks", "python.sh")
    project = dir_arg or (default_project_dir(places, cwd) if cwd is not None else None)
    config = places.config_or(home)
    files = health.settings_files(config, project, MANAGED_SETTINGS)
    runs_from = health.enabled_run_folder(config, files, project)
    command = health.command_check(places.env, own, in_claude_code, runs_from)
    python = health.python_check(places.env, launcher if os.path.isfile(launcher) else None, project)
    checks = [python, dependency_check(), command, health.writable_check(places.trust)]
    if project is None:
        fix = "cd to the project, or pass --dir"
        checks.append(Check(FAIL, "project: the current directory no longer exists (deleted?)", fix))
    else:
        checks += [*anchor_checks(project, places), *staged_checks(project)]
        checks += [work_state_check(dir_arg, places), ledger_check(project, places)]
    loaded = in_claude_code and command.mark == OK
    plugin = health.plugin_check(config, files, project, deps.PLUGIN_ROOT, loaded)
    checks[3:3] = [*health.settings_checks(files), plugin]
    checks += [health.mod_check(places.env), health.permission_check(files), health.task_tools_check(places.env, files)]
    checks += error_checks(places)
    where = f", project {escaped(project)}" if project is not None else ""
    lines = [f"session-workflow doctor: plugin {escaped(deps.PLUGIN_ROOT)}{where}"]
    for check in checks:
        lines += check.lines()
    lines.append(verdict(checks))
    return lines, exit_code(checks)


def exit_code(checks: Sequence[Check]) -> int:
    """1 when an essential check fails (the plugin cannot work), else 0: a non-essential ✘ only has a fix."""
    return 1 if any(check.mark == FAIL and check.essential for check in checks) else 0


def verdict(checks: Sequence[Check]) -> str:
    """The last line: what the exit code says, in words."""
    essential = sum(1 for check in checks if check.mark == FAIL and check.essential)
    others = sum(1 for check in checks if check.mark == FAIL and not check.essential)
    if essential:
        failing = "check fails" if essential == 1 else "checks fail"
        return f"{essential} essential {failing}: the plugin cannot work here"
    if others:
        return f"nothing essential is missing; {others} {'line' if others == 1 else 'lines'} marked {FAIL} to fix"
    return "nothing essential is missing"


def _run(args: argparse.Namespace, places: Places) -> int:
    try:
        cwd: str | None = os.getcwd()
    except OSError:
        cwd = None
    lines, code = report(places, os.path.expanduser("~"), cwd, args.dir)
    print("\n".join(lines))
    return code


def _directory(value: str) -> str:
    import argparse

    if not os.path.isdir(value):
        raise argparse.ArgumentTypeError(f"not a directory: {value!r}")
    return os.path.abspath(value)


def setup(parser: OneLineParser, _argv: Sequence[str]) -> None:
    """Set up ``doctor``."""
    parser.description = DESCRIPTION
    parser.formatter_class = RawDescriptionHelpFormatter
    parser.add_argument("--dir", type=_directory, help="the project directory (default: the one the writers use)")
    parser.set_defaults(run=_run)
