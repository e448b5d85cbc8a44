"""Mutation check of the promised numbers and rules: every mutant below must make the unit tests fail.

Each mutant is one exact text replacement in one source file. It is applied to a temporary copy of the repo
and the unit tests (``-m "not e2e and not slow"``) run there: the mutant's own targeted files by default, the
whole unit suite with ``--full``; a mutant of the mod (``hooks/mod/*.ts``) names the mod's own runner instead,
``claude plugin test`` on the copy (``tools/run_claude.sh``). A mutant that survives, or whose text no longer
occurs exactly once (the code moved: update the list), fails the check. The unmutated copy runs the same tests
first, so a red baseline is reported as such and not mistaken for a kill.

    python tools/mutants.py [--full] [--only NAME ...] [--list] [--jobs N]
"""

from __future__ import annotations

import argparse
import os
import queue
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor

if not __package__:  # run as ``python tools/<name>.py``: the checkout's root on the path, for tools.checkout
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from tools.checkout import copy_checkout

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PKG = "src/session_workflow/"
PROMISES = "tests/test_promises.py"
ANCHOR, HOOK, TASKS = ("tests/anchor",), ("tests/hook",), ("tests/tasks",)
STATE = ("tests/workstate", "tests/hook")
DOCTOR = ("tests/cli/test_doctor.py", "tests/core/test_health.py")
REPOSITORY_INPUT = ("tests/reliability/test_repository_input.py",)
FRESH = ("tests/cli/test_fresh_machine.py",)
RECORD = ("tests/transcript/test_record.py",)


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
        "return next((loaded for loaded in _states(ctx) if loaded.state.session == ctx.session_id), None)",
        "return next((loaded for loaded in _states(ctx) if loaded.state.session in (None, ctx.session_id)), None)",
        STATE,
    ),
    # Our own: every other promised number and rule.
    Mutant(
        "any owner is this session's (no orphans)",
        "workstate/state.py",
        "return next((loaded for loaded in _states(ctx) if loaded.state.session == ctx.session_id), None)",
        "return next((loaded for loaded in _states(ctx) if loaded.state.session is not None), None)",
        STATE,
    ),
    Mutant(
        "cap measured in code points",
        "hook/compose.py",
        "units = utf16_len(text)\n        if not text or units > budget:",
        "units = len(text)\n        if not text or units > budget:",
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
        "a part the unsent resume block holds is sent again at the compaction",
        "hook/compose.py",
        "                held = unsent[0]\n",
        "                held = None\n",
        HOOK,
    ),
    Mutant(
        "a resume block an answer followed is taken for unsent",
        "hook/pending.py",
        "    if now > size and next(",
        "    if False and next(",
        HOOK,
    ),
    Mutant(
        "a deleted state's snapshot is never said gone",
        "hook/prompt_submit.py",
        "        if any_work_state(folders, ctx.env, ctx.session_id):",
        "        if False:",
        HOOK,
    ),
    Mutant(
        "a sibling transcript of another project is a candidate",
        "tasks/store.py",
        "        if not same_project(",
        "        if False and not same_project(",
        TASKS,
    ),
    Mutant(
        "a fork's parent is not asked: the predecessor lookup decides",
        "tasks/store.py",
        "    if parent_session:\n        return parent_part(root, parent_session)\n",
        "",
        TASKS,
    ),
    Mutant(
        "issue 42: a probed run read as it stands when a file of it is gone",
        "tasks/store.py",
        "            if isinstance(ids, range) and _exists(_task_path(directory, task_id)) is not True:",
        "            if False:",
        TASKS,
    ),
    Mutant(
        "issue 42: a list with a high-water mark is probed",
        "tasks/store.py",
        "    if _exists(os.path.join(directory, HIGH_WATER_MARK)) is not False:",
        "    if False:",
        TASKS,
    ),
    Mutant(
        "issue 42: a list of 999 ids is probed",
        "tasks/store.py",
        "MAX_LISTED_TASKS = 1000",
        "MAX_LISTED_TASKS = 999",
        TASKS,
    ),
    Mutant(
        "issue 42: the run's last id taken one short",
        "tasks/store.py",
        "    return range(1, present + 1)",
        "    return range(1, present)",
        TASKS,
    ),
    Mutant(
        "issue 42: the trust folder checked for every anchor",
        "anchor/choice.py",
        "        if self.folder is False:",
        "        if True:",
        ("tests/reliability/test_recorded_kind.py",),
    ),
    Mutant(
        "issue 42: log leaves out the session's lines whose id is quoted",
        "cli/log.py",
        "    marks = {quote_ascii(session) for session in sessions} if sessions is not None else None",
        "    marks = {quote_ascii(session + '\"') for session in sessions} if sessions is not None else None",
        ("tests/cli/test_log.py",),
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
    Mutant("startup 6 h -> 7 h", "anchor/age.py", "STARTUP_MAX_AGE = 6 * 3600", "STARTUP_MAX_AGE = 7 * 3600", ANCHOR),
    Mutant(
        "6 h applies to every source",
        "anchor/age.py",
        'if source == "startup" and age > startup_window:',
        "if age > startup_window:",
        ANCHOR,
    ),
    Mutant("pointer 24 h -> 25 h", "anchor/age.py", "POINTER_AGE = 24 * 3600", "POINTER_AGE = 25 * 3600", ANCHOR),
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
        "the writer lock is never taken",
        "core/atomic.py",
        "            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)\n            return True",
        "            return True",
        ("tests/core/test_atomic.py",),
    ),
    Mutant(
        "a killed writer's temp file blocks the next",
        "core/atomic.py",
        "        try:\n            os.unlink(temp)\n        except OSError as error:",
        "        try:\n            pass\n        except OSError as error:",
        ("tests/core/test_atomic.py",),
    ),
    # Issue 28 (unfilled anchor, status).
    Mutant(
        "an unfilled anchor injects its template",
        "anchor/block.py",
        "        if self.unfilled:\n            line = unfilled_line",
        "        if False:\n            line = unfilled_line",
        ("tests/anchor/test_template.py",),
    ),
    Mutant(
        "a cut read counts as unfilled",
        "anchor/template.py",
        'if anchor.truncated or "<!--" not in anchor.head:',
        'if "<!--" not in anchor.head:',
        ("tests/anchor/test_template.py",),
    ),
    Mutant(
        "an anchor without format: anchor/ counts as unfilled",
        "anchor/template.py",
        'if not anchor.frontmatter.get("format", "").lower().startswith("anchor/"):',
        "if False:",
        ("tests/anchor/test_template.py",),
    ),
    Mutant(
        "words under the title stay unfilled",
        "anchor/template.py",
        "if body or titles > 1:",
        "if titles > 1:",
        ("tests/anchor/test_template.py",),
    ),
    Mutant(
        "a second title stays unfilled",
        "anchor/template.py",
        "if body or titles > 1:",
        "if body or titles > 2:",
        ("tests/anchor/test_template.py",),
    ),
    Mutant(
        "a heading of the run's own stays unfilled",
        "anchor/template.py",
        "elif section.level != 2 or section.heading not in _TEMPLATE_HEADINGS:",
        "elif section.level > 2:",
        ("tests/anchor/test_template.py",),
    ),
    Mutant(
        "edited resume steps stay unfilled",
        "anchor/template.py",
        "if not _template_resume(body):",
        "if not body:",
        ("tests/anchor/test_template.py",),
    ),
    Mutant(
        "any comment counts as the template's prompt",
        "anchor/template.py",
        "elif not _TEMPLATE_PROMPTS.issuperset(body):",
        'elif not all(line.startswith("<!--") for line in body):',
        ("tests/anchor/test_template.py",),
    ),
    Mutant(
        "a comment is the next action",
        "anchor/text.py",
        "body = without_comments(section_body_lines(section))\n    for line in body:\n        label = NEXT_LABEL",
        "body = (section_body_lines(section))\n    for line in body:\n        label = NEXT_LABEL",
        ("tests/anchor/test_text.py", "tests/anchor/test_template.py"),
    ),
    Mutant(
        "a comment is the cursor line",
        "anchor/text.py",
        'against reality."""\n    body = without_comments(section_body_lines(section))',
        'against reality."""\n    body = (section_body_lines(section))',
        ("tests/anchor/test_text.py", "tests/anchor/test_template.py"),
    ),
    Mutant(
        "a comment spanning lines never ends",
        "core/text.py",
        'found = line.find("-->" if inside else "<!--", start)',
        'found = -1 if inside else line.find("<!--", start)',
        ("tests/core/test_text.py", "tests/anchor/test_text.py"),
    ),
    Mutant(
        "anchor list shows an unfilled anchor's prompt",
        "anchor/report.py",
        "if candidate.anchor is not None and is_unfilled(candidate.anchor):",
        "if False:",
        ("tests/anchor/test_template.py",),
    ),
    Mutant(
        "PreCompact cut in code points",
        "hook/precompact.py",
        "if utf16_len(text + piece) > MAX_CHARS:",
        "if len(text + piece) > MAX_CHARS:",
    ),
    # session-workflow doctor (issue 34): the plugin's enabled state, the 4.x task-tools table, gone anchors.
    Mutant(
        "doctor: the local settings before the managed ones",
        "core/health.py",
        'SETTINGS_PRECEDENCE = ("managed", "project local", "project", "user")',
        'SETTINGS_PRECEDENCE = ("project local", "managed", "project", "user")',
        DOCTOR,
    ),
    Mutant(
        "doctor: a disabled plugin not essential",
        "core/health.py",
        'is installed but disabled for this project ({said})", fix, essential=True)',
        'is installed but disabled for this project ({said})", fix, essential=False)',
        DOCTOR,
    ),
    Mutant(
        "doctor: a missing install not essential",
        "core/health.py",
        '"install it (README, Quick start), or load it for one session: claude --plugin-dir <plugin folder>",\n'
        "            essential=True,",
        '"install it (README, Quick start), or load it for one session: claude --plugin-dir <plugin folder>",\n'
        "            essential=False,",
        DOCTOR,
    ),
    Mutant(
        "doctor: a gone run folder (a moved clone) passes",
        "core/health.py",
        "        if folder is not None and not os.path.isdir(folder):",
        "        if False:",
        DOCTOR,
    ),
    Mutant(
        "doctor: an invalid settings file not named",
        "core/health.py",
        "        for item in files\n        if item.problem is not None\n    ]",
        "        for item in files\n        if False\n    ]",
        DOCTOR,
    ),
    Mutant(
        "doctor: claude-sonnet-5 without default task tools",
        "core/health.py",
        '"sonnet": {(4,), (4, 0), (4, 5), (4, 6), (5,)},',
        '"sonnet": {(4,), (4, 0), (4, 5), (4, 6)},',
        DOCTOR,
    ),
    Mutant(
        "doctor: gone anchors of this session only",
        "cli/doctor.py",
        "for path in registry.kept_in(env, real_folder, session):",
        "for path in (registry.kept_by(env, session) if session else []):",
        DOCTOR,
    ),
    # session-workflow doctor (issue 28).
    Mutant("doctor: python3 3.9 -> 3.10", "core/health.py", "MIN_PYTHON = (3, 9)", "MIN_PYTHON = (3, 10)", DOCTOR),
    Mutant(
        "doctor: the mod from 2.1.287 -> 2.1.288",
        "core/health.py",
        "MOD_MIN_VERSION = (2, 1, 287)",
        "MOD_MIN_VERSION = (2, 1, 288)",
        DOCTOR,
    ),
    Mutant(
        "doctor: any failure fails the doctor",
        "cli/doctor.py",
        "return 1 if any(check.mark == FAIL and check.essential for check in checks) else 0",
        "return 1 if any(check.mark == FAIL for check in checks) else 0",
        DOCTOR,
    ),
    Mutant(
        "doctor: the trust folder probe leaves its file",
        "core/health.py",
        "    finally:\n        os.unlink(path)\n    return None",
        "    finally:\n        pass\n    return None",
        DOCTOR,
    ),
    Mutant(
        "doctor: an untrusted workspace keeps the shared settings' allow",
        "core/health.py",
        'Settings("project", os.path.join(claude, "settings.json"), trusted_only=True)',
        'Settings("project", os.path.join(claude, "settings.json"), trusted_only=False)',
        DOCTOR,
    ),
    Mutant(
        "doctor: an anchor's name shown raw",
        "cli/doctor.py",
        'f"anchor {named(candidate.name)}: not created here; the hooks do not inject it"',
        'f"anchor {candidate.name}: not created here; the hooks do not inject it"',
        DOCTOR,
    ),
    Mutant(
        "doctor: the vendored copy named as any folder",
        "cli/doctor.py",
        'source = "vendored in" if folders == [deps.vendored_dir()] else "from"',
        'source = "from"',
        DOCTOR,
    ),
    # Issue 25 (digest, copy, restore).
    Mutant(
        "moved bytes trusted whatever they are",
        "anchor/registry.py",
        "return digest_of(read[0]) == record.digest",
        "return True",
        ("tests/anchor/test_registry.py", "tests/reliability/test_own_anchor.py"),
    ),
    Mutant(
        "a file of another size is hashed",
        "anchor/registry.py",
        "if record.digest is None or not record.identities or identity.size != record.identities[0].size:",
        "if record.digest is None or not record.identities:",
        ("tests/anchor/test_registry.py",),
    ),
    Mutant(
        "hashed up to 1 MiB -> 2 MiB",
        "anchor/registry.py",
        "MAX_DIGEST_BYTES = 1 << 20",
        "MAX_DIGEST_BYTES = 2 << 20",
        ("tests/anchor/test_registry.py",),
    ),
    Mutant(
        "the whole-file copy 64 KiB -> 65 KiB",
        "anchor/registry.py",
        "COPY_MAX_BYTES = 64 * 1024",
        "COPY_MAX_BYTES = 65 * 1024",
        ("tests/anchor/test_registry.py",),
    ),
    Mutant(
        "8 kept anchors -> 9", "anchor/registry.py", "MAX_KEPT = 8", "MAX_KEPT = 9", ("tests/anchor/test_registry.py",)
    ),
    Mutant(
        "hash budget 4 MiB -> 5 MiB",
        "anchor/choice.py",
        "HASH_BUDGET_BYTES = 4 << 20",
        "HASH_BUDGET_BYTES = 5 << 20",
        ("tests/anchor/test_part.py",),
    ),
    Mutant(
        "an unrecorded write only warns",
        "anchor/writer.py",
        '            raise Failure(\n                f"cannot record {escaped(path)}',
        '            print(\n                f"cannot record {escaped(path)}',
        ("tests/reliability/test_own_anchor.py",),
    ),
    Mutant(
        "write takes over a changed anchor",
        "anchor/writer.py",
        "        refuse_changed(env, path)\n        stored = frontmatter_step(current)",
        "        stored = frontmatter_step(current)",
        ("tests/reliability/test_own_anchor.py",),
    ),
    Mutant(
        "restore writes over a changed file",
        "anchor/writer.py",
        "            if not force:\n                advice",
        "            if False:\n                advice",
        ("tests/reliability/test_own_anchor.py",),
    ),
    Mutant(
        "restore --force drops the changed file",
        "anchor/writer.py",
        "kept.append(_keep_changed(path, current, now))",
        'kept.append(path + ".changed")',
        ("tests/reliability/test_own_anchor.py",),
    ),
    Mutant(
        "a changed anchor of ours named as a stranger's",
        "anchor/part.py",
        "notes += changed_notes(changed) + untrusted_notes(strangers)",
        "notes += untrusted_notes(selection.untrusted)",
        ("tests/reliability/test_own_anchor.py", "tests/reliability/test_trust.py"),
    ),
    Mutant(
        "the session's own anchors not looked at first (issue 41)",
        "anchor/discover.py",
        "own = {os.path.basename(real) for real in kept if os.path.dirname(real) == real_folder}",
        "own = {os.path.basename(real) for real in kept if not real}",
        ("tests/reliability/test_red_team_4.py",),
    ),
    Mutant(
        "a name's backtick closes its code span (issue 41)",
        "core/text.py",
        'flat = escaped(text, "`")',
        "flat = escaped(text)",
        ("tests/core/test_text.py", "tests/reliability/test_red_team_4.py"),
    ),
    Mutant(
        "the CLI's bytecode folder judged at its own level only (issue 41)",
        "../../bin/session-workflow",
        'judged[0] = prefix if foreign_level(prefix, user_top(os.environ)) is None else ""',
        'judged[0] = prefix if foreign_level(prefix, prefix) is None else ""',
        ("tests/reliability/test_red_team_4.py",),
    ),
    Mutant(
        "the hooks' bytecode folder judged at its own level only (issue 41)",
        "../../hooks/hook.py",
        "            if level == top or os.path.dirname(level) == level:",
        "            if True:",
        ("tests/hook/test_bytecode.py",),
    ),
    Mutant(
        "the anchors folder left out of info/exclude (issue 41)",
        "core/gitignore.py",
        "    _ensure_ignore_file(folder)\n    ensure_excluded(folder)\n",
        "    _ensure_ignore_file(folder)\n",
        ("tests/reliability/test_red_team_4.py", "tests/core/test_gitignore.py"),
    ),
    Mutant(
        "anchor list follows a link out of the project (issue 41)",
        "anchor/report.py",
        "    escape = leads_outside(project, folder)\n",
        "    escape = None\n",
        ("tests/reliability/test_red_team_4.py",),
    ),
    Mutant(
        "CLAUDE_PLUGIN_DATA kept in the Bash tool (issue 41)",
        "cli/main.py",
        "        env.pop(PLUGIN_DATA_ENV, None)",
        "        env.get(PLUGIN_DATA_ENV)",
        ("tests/reliability/test_red_team_4.py",),
    ),
    Mutant(
        "an anchor closed by a rename is gone",
        "anchor/part.py",
        "if os.path.dirname(real) in folders and not os.path.lexists(closed_name(real))]",
        "if os.path.dirname(real) in folders]",
        ("tests/reliability/test_own_anchor.py",),
    ),
    Mutant(
        "no gone line without an anchors folder",
        "hook/compose.py",
        "return locations.any_anchors(folders) or locations.any_kept_anchors(ctx.env, ctx.session_id)",
        "return locations.any_anchors(folders)",
        ("tests/reliability/test_own_anchor.py",),
    ),
    # Issue 25 (in-session edits).
    Mutant(
        "an edit grants trust (no vouched state before it)",
        "hook/tool_edit.py",
        "if not stat.S_ISREG(info.st_mode) or record is None:\n        return False\n    if not record.vouches_for(",
        "if not stat.S_ISREG(info.st_mode):\n        return False\n    if record and not record.vouches_for(",
        ("tests/hook/test_tool_edit.py",),
    ),
    Mutant(
        "an edit of other bytes at a moved anchor's new inode keeps trust",
        "hook/tool_edit.py",
        "        if not registry.same_bytes(record, real, identity):\n            return False\n",
        "",
        ("tests/hook/test_tool_edit.py",),
    ),
    Mutant(
        "an edit after a stash and pop loses trust",
        "hook/tool_edit.py",
        "        identity = record.identities[0]\n",
        "",
        ("tests/hook/test_tool_edit.py",),
    ),
    Mutant(
        "an edit is vouched without the tool's result naming the file",
        "hook/tool_edit.py",
        "if taken is None or session is None or not tool_wrote(payload, path):",
        "if taken is None or session is None:",
        ("tests/hook/test_tool_edit.py",),
    ),
    Mutant(
        "a Write need not say it created or updated",
        "hook/tool_edit.py",
        'return payload.get("tool_name") != "Write" or response.get("type") in ("create", "update")',
        "return True",
        ("tests/hook/test_tool_edit.py",),
    ),
    Mutant(
        "a closed anchor's edit is looked at",
        "hook/tool_edit.py",
        'if not folder.endswith(ANCHORS_TAIL) or not name.endswith(".md") or name.endswith(".closed.md"):',
        'if not folder.endswith(ANCHORS_TAIL) or not name.endswith(".md"):',
        ("tests/hook/test_tool_edit.py",),
    ),
    Mutant(
        "an anchors folder linked out of the project is followed",
        "hook/tool_edit.py",
        "if is_inside(real_folder, os.path.realpath(project)) and os.path.dirname(real) == real_folder:",
        "if os.path.dirname(real) == real_folder:",
        ("tests/hook/test_tool_edit.py",),
    ),
    Mutant(
        "an edited anchor's symlink out of its folder is followed",
        "hook/tool_edit.py",
        "if is_inside(real_folder, os.path.realpath(project)) and os.path.dirname(real) == real_folder:",
        "if is_inside(real_folder, os.path.realpath(project)):",
        ("tests/hook/test_tool_edit.py",),
    ),
    Mutant(
        "a record dropped between the hooks is made again",
        "hook/tool_edit.py",
        "if current is not None and record is not None and record.vouches_for(earlier):",
        "if current is not None:",
        ("tests/hook/test_tool_edit.py",),
    ),
    Mutant(
        "a marker is used twice",
        "hook/tool_edit.py",
        "    if not _remove(marker):\n        return None\n",
        "",
        ("tests/hook/test_tool_edit.py",),
    ),
    Mutant(
        "a non-anchor edit parses its payload",
        "hook/tool_edit.py",
        "if ANCHORS_MARK not in raw or len(raw) > MAX_PAYLOAD_BYTES:",
        "if len(raw) > MAX_PAYLOAD_BYTES:",
        ("tests/hook/test_tool_edit.py",),
    ),
    # Issue 27.
    Mutant(
        "the demo's CLI calls run in the caller's folder with its PYTHONPATH",
        "cli/demo.py",
        'return [sys.executable, "-I", "-c", DEMO_CLI',
        'return [sys.executable, "-c", DEMO_CLI',
        ("tests/cli/test_demo.py",),
    ),
    Mutant(
        "the error log keeps 21 entries",
        "core/errorlog.py",
        "MAX_ENTRIES = 20",
        "MAX_ENTRIES = 21",
        ("tests/core/test_errorlog.py",),
    ),
    Mutant(
        "an error log entry of 4,200 bytes",
        "core/errorlog.py",
        "MAX_ENTRY_BYTES = 4096",
        "MAX_ENTRY_BYTES = 4200",
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
        "../../bin/session-workflow",
        'set -- -I -S -- "$0"',
        'set -- -S -- "$0"',
        REPOSITORY_INPUT,
    ),
    # Issue 32.
    Mutant(
        "the vendored copy after site-packages",
        "core/deps.py",
        "sys.path.insert(0, path)",
        "sys.path.append(path)",
        FRESH,
    ),
    Mutant(
        "the standard library's bytecode sent to the plugin's folder",
        "../../bin/session-workflow",
        "        if path != ROOT and not path.startswith(ROOT + os.sep):\n",
        "        if False:\n",
        FRESH,
    ),
    Mutant(
        "the plugin's bytecode beside its sources",
        "../../bin/session-workflow",
        "sys.pycache_prefix, sys.dont_write_bytecode = judged[0] or None, not judged[0]",
        "sys.pycache_prefix, sys.dont_write_bytecode = None, False",
        FRESH,
    ),
    Mutant(
        "a vendored file that differs from the lock passes",
        "../../tools/vendor.py",
        "if actual.get(path, expected[path]) != expected[path]",
        "if False",
        ("tests/test_vendor.py",),
    ),
    Mutant(
        "plugin folders 0755 where the umask allowed",
        "core/folders.py",
        "os.fchmod(fd, PRIVATE_MODE)",
        "os.fchmod(fd, 0o755)",
        ("tests/core/test_folders.py",),
    ),
    Mutant(
        "a group-writable trust folder is trusted",
        "core/folders.py",
        "_SHARED_WRITE = stat.S_IWGRP | stat.S_IWOTH",
        "_SHARED_WRITE = stat.S_IWOTH",
        ("tests/core/test_folders.py",),
    ),
    Mutant(
        "a trust folder of another user is trusted",
        "core/folders.py",
        "            if info.st_uid not in (uid, 0):",
        "            if False:",
        ("tests/core/test_folders.py",),
    ),
    Mutant(
        "anchor show frames a file a link in an anchors folder leads out to",
        "anchor/report.py",
        "        return all(os.path.dirname(found).endswith(suffix)",
        "        return any(os.path.dirname(found).endswith(suffix)",
        ("tests/anchor/test_report.py",),
    ),
    Mutant(
        "delivery records in the project",
        "core/locations.py",
        "        if is_inside(real, base):\n            return base",
        "        if False:\n            return base",
        (*REPOSITORY_INPUT, "tests/core/test_locations.py"),
    ),
    Mutant(
        "a relative CLAUDE_CONFIG_DIR locates the task store",
        "core/locations.py",
        'if os.path.isabs(given) and "\\x00" not in given:\n        return given',
        'if given and "\\x00" not in given:\n        return given',
        (*REPOSITORY_INPUT, "tests/core/test_locations.py", "tests/tasks/test_store.py"),
    ),
    Mutant(
        "CLAUDE_PROJECT_DIR counts in the Bash tool",
        "core/where.py",
        "if (hook or not in_bash_tool(env)) and _folder(env.get(PROJECT_ENV)):",
        "if _folder(env.get(PROJECT_ENV)):",
        (*REPOSITORY_INPUT, "tests/core/test_where.py", "tests/cli/test_state.py"),
    ),
    Mutant(
        "the project is the cwd the model cd'd into",
        "core/where.py",
        "return start or _folder(cwd)",
        "return _folder(cwd) or start",
        ("tests/core/test_where.py", "tests/core/test_context.py", "tests/workstate/test_state.py"),
    ),
    Mutant(
        "an anchor read by path, whatever its identity",
        "core/boundedio.py",
        "if identity is not None and (info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns) != identity:",
        "if False:",
        (*REPOSITORY_INPUT, "tests/core/test_boundedio.py"),
    ),
    Mutant(
        "state show --json prints hidden characters raw",
        "core/text.py",
        'if (char.isprintable() and not has_invisible(char)) or char == "\\n":',
        "if True:",
        ("tests/cli/test_state.py",),
    ),
    # Issue 25 (new session, fork).
    Mutant(
        "a cloned work state is shown as the run's own",
        "workstate/part.py",
        'return os.path.isfile(os.path.join(os.path.dirname(transcript), owner + ".jsonl"))',
        "return True",
        ("tests/hook/test_session_start.py",),
    ),
    Mutant(
        "clear with the cleared session's tasks",
        "hook/compose.py",
        'Part("tasks", ("compact", "resume", "startup", "fork"), _always, _tasks)',
        'Part("tasks", ALL_SOURCES, _always, _tasks)',
        (*HOOK, *TASKS),
    ),
    Mutant(
        "clear without the work-state line",
        "hook/compose.py",
        'Part("work state", ("compact", "resume", "startup", "clear"),',
        'Part("work state", ("compact", "resume", "startup"),',
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
        "workstate/part.py",
        "    return unreadable_part(ctx) or prepare_foreign(ctx)\n",
        "    return unreadable_part(ctx)\n",
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
    # Issue 26.
    Mutant(
        "a startup window of 0 h admits an anchor of age 0 or less",
        "anchor/age.py",
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
        "return (unreadable_part(ctx) or prepare_foreign(ctx)) if loaded is None else None",
        "return prepare_foreign(ctx) if loaded is None else None",
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
        "        if still and present is not None and present.as_tuple() != newest.as_tuple():",
        "        if False:",
        ANCHOR,
    ),
    Mutant(
        "a killed write keeps an identity the record never vouched for",
        "anchor/registry.py",
        "still = present is not None and before is not None and trusts(before, real, present)",
        "still = present is not None",
        ANCHOR,
    ),
    Mutant("2 identities kept -> 3", "anchor/registry.py", "MAX_IDENTITIES = 2", "MAX_IDENTITIES = 3", ANCHOR),
    Mutant(
        "another session's parked anchor is a parallel track",
        "anchor/choice.py",
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
        "anchor/block.py",
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
        "a block from before the last compaction that an answer followed counts as in the thread",
        "transcript/thread.py",
        '        if passed and record.get("type") == "assistant":\n            break\n',
        "",
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
        "core/text.py",
        '_SHELL_SAFE = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_@%+=:,./-")',
        '_SHELL_SAFE = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_@%+=:,./-~")',
        ("tests/core/test_text.py",),
    ),
    Mutant(
        "a backtick stays inside single quotes",
        "core/text.py",
        """if word.isprintable() and "`" not in word and not has_invisible(word):""",
        """if word.isprintable() and not has_invisible(word):""",
        ("tests/core/test_text.py",),
    ),
    Mutant(
        "a hidden character as its code point, not its bytes",
        "core/text.py",
        'return "".join(f"\\\\x{byte:02x}" for byte in raw)',
        'return f"\\\\u{ord(char):04x}"',
        ("tests/core/test_text.py",),
    ),
    Mutant(
        "Resume step 2 with the git root unquoted",
        "anchor/template.py",
        "_git_check(git_root, shell_command)\n        if git_root",
        "_git_check(git_root, str)\n        if git_root",
        ("tests/anchor/test_template.py",),
    ),
    Mutant(
        "an old anchor's Resume step 2 left unquoted",
        "anchor/writer.py",
        "add_step(mend_resume(current, path), text)",
        "add_step(current, text)",
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
        "tasks/render.py",
        "if used + cost + (reserve if more_may_follow else 0) <= budget:",
        "if used + cost + (reserve if more_may_follow else 0) < budget:",
        TASKS,
    ),
    Mutant(
        "issue 45: a switched-off anchor counts as restored state",
        "hook/compose.py",
        "isinstance(loaded, (FailedPart, SwitchedOff))",
        "isinstance(loaded, FailedPart)",
        HOOK,
    ),
    Mutant(
        "issue 45: edit markers in a folder others can write",
        "hook/tool_edit.py",
        "if folder is None or foreign_level(folder, user_top(env)) is not None:",
        "if folder is None:",
        HOOK,
    ),
    Mutant(
        "issue 45: separators not reserved for the parts after",
        "hook/compose.py",
        "reserved = sum(later.floor + len(SEPARATOR) for later in parts[index + 1 :])",
        "reserved = sum(later.floor for later in parts[index + 1 :])",
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
        "anchor/choice.py",
        "scan.ranked.sort(key=lambda candidate: (candidate.kind, is_future(candidate, ctx.now)))",
        "scan.ranked.sort(key=lambda candidate: candidate.kind)",
        ANCHOR,
    ),
    Mutant(
        "issue 45: DEL and C1 controls reach the model",
        "anchor/text.py",
        '_UNSAFE = "[\\x00-\\x08\\x0b\\x0c\\x0e-\\x1f\\x7f-\\x9f"',
        '_UNSAFE = "[\\x00-\\x08\\x0b\\x0c\\x0e-\\x1f"',
        ANCHOR,
    ),
    Mutant(
        "issue 45: other anchors' names unescaped",
        "anchor/block.py",
        'labels.append(f"{display_name(other.name)}{kind}")',
        'labels.append(f"{other.name}{kind}")',
        ANCHOR,
    ),
    # Issue 43: the run record.
    Mutant("run record 1 KB -> 1,100 bytes", "transcript/record.py", "CAP_BYTES = 1024", "CAP_BYTES = 1100", RECORD),
    Mutant(
        "run record counts 200 -> 210 calls", "transcript/record.py", "MAX_COUNTED = 200", "MAX_COUNTED = 210", RECORD
    ),
    Mutant("run record parses 40 -> 44 calls", "transcript/record.py", "MAX_PARSED = 40", "MAX_PARSED = 44", RECORD),
    Mutant(
        "run record: failures not first",
        "transcript/record.py",
        'return [(0, f"- FAILED ({status}): {span(command)}")]',
        'return [(5, f"- FAILED ({status}): {span(command)}")]',
        RECORD,
    ),
    Mutant(
        "run record: a failed anchor write opens the window",
        "transcript/record.py",
        "if succeeded and is_anchor_write(name, tool_input):",
        "if is_anchor_write(name, tool_input):",
        RECORD,
    ),
    Mutant(
        "run record: a backtick closes the code span",
        "transcript/record.py",
        'shown = escaped(text[:limit], "`")',
        "shown = escaped(text[:limit])",
        RECORD,
    ),
    Mutant(
        "run record: repeats not folded",
        "transcript/record.py",
        'text + (f" ×{counts[(rank, text)]}" if counts[(rank, text)] > 1 else "")',
        "text",
        RECORD,
    ),
    Mutant(
        "run record: a forged notification ends a shell",
        "transcript/record.py",
        'not isinstance(origin, dict) or origin.get("kind") != "task-notification"',
        "False",
        RECORD,
    ),
    Mutant(
        "run record: parsed on past a boundary with no anchor write before it",
        "transcript/record.py",
        "if not self._write_before(at):",
        "if False:",
        RECORD,
    ),
    Mutant(
        "run record: the recovery reads the tail again at a compaction",
        "transcript/record.py",
        "other = along(ctx)",
        "other = None",
        ("tests/transcript/test_tail.py",),
    ),
    Mutant(
        "PreCompact: the cursor line over a later step's next",
        "anchor/part.py",
        "newest = newest_step_next(section) if section is not None and stepped else None",
        "newest = None",
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
    parser.add_argument("--jobs", type=int, default=2, help="mutants judged at once, each in its own copy (2)")
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
        copy_checkout(ROOT, copy)
        baseline = sorted({test for tests in scope.values() for test in tests})
        started = time.monotonic()
        result = run_tests(copy, tuple(baseline), max(1, args.jobs)) if baseline else None
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
        # Each worker judges mutants in a copy of its own, so two run at once on a machine of two cores.
        copies: queue.Queue[str] = queue.Queue()
        copies.put(copy)
        for index in range(1, max(1, args.jobs)):
            other = os.path.join(base, f"repo{index}")
            copy_checkout(ROOT, other)
            copies.put(other)

        def judge(mutant: Mutant) -> str | None:
            """Print ``mutant``'s verdict; its name when it survived (or is stale), else None."""
            started = time.monotonic()
            where = copies.get()
            try:
                original = apply(where, mutant)
                if original is None:
                    print(f"STALE     {mutant.name}: not exactly once in {mutant.path}; update tools/mutants.py")
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

        with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
            survivors = [name for name in pool.map(judge, chosen) if name is not None]
    print(f"{len(chosen) - len(survivors)} of {len(chosen)} mutants killed")
    return 1 if survivors else 0


if __name__ == "__main__":
    sys.exit(main())
