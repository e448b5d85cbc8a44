"""The anchor writers behind ``session-workflow anchor new | step | write | close``.

Every write goes through ``atomic`` (a lock beside the file, a temp file, a rename), so the SessionStart hook —
which never locks — always reads a whole old or a whole new anchor. The text transforms are pure and work on the
file as written: a BOM, CRLF line ends and bytes that are not UTF-8 survive a rewrite untouched.

Why ``write`` exists: Claude Code treats files under ``.claude/`` as sensitive, so its Write and Edit tools (and
shell redirections into them) ask for permission — and fail outright in an unattended ``-p`` run. A heredoc
piped into ``session-workflow anchor write`` is a plain Bash call that ``allowed-tools`` can grant.

How ``close`` stays atomic: under the anchor's lock the stub is created under the closed name with create-only
semantics (a finished temp file hard-linked into place, never overwriting), and only then is the open name
removed. A reader sees the open anchor or the closed stub, never a half-written file and never neither; a crash
between the two steps leaves the untouched original beside the stub, and closing again picks a free name.
"""

from __future__ import annotations

import contextlib
import os
import re
import stat
import sys
import time

from session_workflow.anchor import registry
from session_workflow.anchor.part import (
    is_open_name,
    kind_of_bytes,
    list_open,
)
from session_workflow.anchor.report import head_fit_report, resolve_folder, stale_paths
from session_workflow.anchor.text import (
    BOM,
    STEP_BULLET,
    TAIL_MARKER,
    closed_name,
    cursor_index,
    frontmatter_span,
    lines_of,
    mv_command,
    newest_cursor_step,
    parse_frontmatter,
    shell_quote,
    split_head,
    split_sections,
    title_of,
)
from session_workflow.cli.bootstrap import config_dir
from session_workflow.cli.parser import CliError
from session_workflow.core import atomic
from session_workflow.core.boundedio import read_prefix_and_stat
from session_workflow.core.gitignore import ensure_gitignore
from session_workflow.core.locations import (
    ANCHORS_SUBDIR,
    SESSION_ENV,
    anchors_dir,
    given_project_dir,
    is_inside,
    leads_outside,
)
from session_workflow.core.text import cut_code_points, one_line
from session_workflow.hook import context
from session_workflow.workstate.section import is_session_id

TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse
    from collections.abc import Callable, Mapping, Sequence

    from session_workflow.cli.parser import OneLineParser, Verb

FORMAT = "anchor/v1"
SLUG_MAX = 48
MAX_NAME_TRIES = 100
MAX_STDIN_BYTES = atomic.MAX_WRITER_READ_BYTES
BAD_ARGUMENTS = 2

# The HEAD in survival order (the hook spends its budget top-down on whole sections), each with what goes there.
HEAD_SECTIONS: tuple[tuple[str, str], ...] = (
    (
        "Mission",
        "The goal in a sentence or two and the hard constraints. Quote every user instruction that constrains"
        " the mechanism word for word with an id (U1, U2, ...); a reversal is quoted too and names what it replaces.",
    ),
    (
        "Cursor",
        "Done / in progress / the NEXT ACTION on resume: one imperative step and the precondition to check"
        ' before it; a pending question to re-ask verbatim. `anchor step` adds "- Step N: ..." lines here,'
        " newest first.",
    ),
    ("Resume steps", ""),  # filled in with absolute paths by ``resume_steps``
    (
        "Invariants",
        "Decisions and constraints that hold for the whole run, so a fresh context does not reopen them.",
    ),
    (
        "Parallel tracks",
        "Only when a peer run shares these trees: its anchor's path and the surface this track never touches.",
    ),
    (
        "In-flight work",
        "Background jobs the cursor waits on: ids, log paths, and 'do not relaunch over the same output'.",
    ),
    (
        "Last-known-good",
        "The recoverable state: commit hashes, branches and PRs, tags, files written, the checkpoint reached.",
    ),
    (
        "Plan pointer",
        "Where the full plan lives (a path), so this file stays a cursor and not a second copy of the plan.",
    ),
)
TAIL_SECTIONS: tuple[tuple[str, str], ...] = (
    ("Decisions log", "Append-only: why the non-obvious calls were made (date, decision, reason)."),
    ("Folded history", "Closed phases and finished cursor entries, one line each, moved here to keep the HEAD small."),
)

_LEADING_NUMBER = re.compile(r"\d{1,9}")
_LIST_ITEM = re.compile(r"^[ \t]*(?:[-*+]|\d{1,9}[.)])(?:[ \t]|$)")


class Refusal(CliError):
    """The file is not something this writer may change; it is left untouched (exit 2)."""

    def __init__(self, message: str) -> None:
        super().__init__(message, BAD_ARGUMENTS)


# ---------------------------------------------------------------------------------------------------------------
# Pure text transforms


class Encoded:
    """Anchor bytes as text that round-trips exactly: the BOM set aside, undecodable bytes kept as escapes."""

    __slots__ = ("bom", "newline", "text")

    def __init__(self, data: bytes) -> None:
        text = data.decode("utf-8", "surrogateescape")
        self.bom = text.startswith(BOM)
        self.text = text[1:] if self.bom else text
        self.newline = "\r\n" if "\r\n" in self.text else "\n"

    def encode(self, text: str) -> bytes:
        return ((BOM if self.bom else "") + text).encode("utf-8", "surrogateescape")


def slugify(task: str) -> str:
    """A file-name-safe slug: ASCII letters and digits joined by hyphens, cut at a word, ``anchor`` when empty."""
    import unicodedata

    ascii_text = unicodedata.normalize("NFKD", task).encode("ascii", "ignore").decode("ascii").lower()
    words = re.findall(r"[a-z0-9]+", ascii_text)
    slug = ""
    for word in words:
        candidate = f"{slug}-{word}" if slug else word
        if len(candidate) > SLUG_MAX:
            slug = slug or word[:SLUG_MAX]
            break
        slug = candidate
    return slug or "anchor"


def _git_root(directory: str) -> str | None:
    """The enclosing git work tree, found by looking for ``.git`` upwards (no subprocess)."""
    current = os.path.abspath(directory)
    while True:
        if os.path.exists(os.path.join(current, ".git")):
            return current
        parent = os.path.dirname(current)
        if parent == current:
            return None
        current = parent


def resume_steps(anchor_path: str, project_dir: str, git_root: str | None) -> list[str]:
    """Resume steps in absolute paths: they run after a restart, wherever the shell happens to be."""
    check = (
        f"`git -C {git_root} log --oneline -10` and `git -C {git_root} status --short`, then the artifacts"
        " named in Last-known-good"
        if git_root
        else f"the artifacts named in Last-known-good (under {project_dir})"
    )
    return [
        f"1. Print this anchor: `session-workflow anchor show {shell_quote(anchor_path)}` (`--all` adds the TAIL;"
        " never Read or cat it, which Claude Code re-attaches whole after each compaction).",
        f"2. Check the durable state before trusting the cursor: {check}; where they disagree, they win.",
        "3. Continue from the Cursor's newest entry: verify its precondition first, so a half-done step is"
        " finished, not redone.",
    ]


def anchor_template(task: str, anchor_path: str, project_dir: str, date: str, source: str) -> str:
    """A new anchor: frontmatter, the HEAD sections in survival order with prompts, the marker, the TAIL."""
    title = one_line(task)
    lines = ["---", f"format: {FORMAT}", f"date: {date}", f"task: {title}", "step: 0", f"source: {source}", "---"]
    lines += ["", f"# {title}"]
    for heading, prompt in HEAD_SECTIONS:
        lines += ["", f"## {heading}"]
        if heading == "Resume steps":
            lines += resume_steps(anchor_path, project_dir, _git_root(project_dir))
        else:
            lines.append(f"<!-- {prompt} -->")
    lines += ["", TAIL_MARKER]
    for heading, prompt in TAIL_SECTIONS:
        lines += ["", f"## {heading}", f"<!-- {prompt} -->"]
    return "\n".join(lines) + "\n"


def _head_parts(text: str) -> tuple[str, str, tuple[int, int], int, int]:
    """(head, tail, frontmatter span, cursor start line, cursor end line) or a Refusal naming what is missing."""
    head, tail = split_head(text)
    span = frontmatter_span(head)
    if span is None:
        raise Refusal("no frontmatter: the file must start with a '---' line and close it with another '---'")
    sections = split_sections(head)
    index = cursor_index(sections)
    if index is None:
        raise Refusal(f"no cursor section: no heading containing 'Cursor' above the {TAIL_MARKER} line")
    start = sum(len(lines_of(section.text)) for section in sections[:index])
    return head, tail or "", span, start, start + len(lines_of(sections[index].text))


def _number(value: str | None) -> int:
    match = _LEADING_NUMBER.match((value or "").strip())
    return int(match.group()) if match else 0


def current_step(head: str) -> int:
    """The run's step so far: the larger of the frontmatter ``step`` and the newest ``- Step N`` cursor bullet."""
    frontmatter = parse_frontmatter(head) or {}
    return max(_number(frontmatter.get("step")), newest_cursor_step(head) or 0)


def _step_key(line: str) -> str | None:
    """The ``step:`` key of a frontmatter line (spaces or tabs around the word, any case), colon included; else
    None. String operations, not a regex: the value after it may be any length."""
    word = line.lstrip(" \t")
    rest = word[4:].lstrip(" \t")
    if word[:4].lower() != "step" or not rest.startswith(":"):
        return None
    return line[: len(line) - len(rest) + 1]


def _set_step(lines: list[str], span: tuple[int, int], step: int, newline: str) -> None:
    """Write ``step: N`` over every ``step:`` line of the frontmatter, or add one before its closing line."""
    found = False
    for index in range(span[0] + 1, span[1]):
        ending = newline if lines[index].endswith("\n") else ""
        key = _step_key(lines[index].rstrip("\r\n"))
        if key is not None:
            lines[index] = f"{key} {step}{ending}"
            found = True
    if not found:
        lines.insert(span[1], f"step: {step}{newline}")


def _insertion_line(lines: list[str], start: int, end: int) -> int:
    """Where the newest step goes: above the first ``- Step N`` bullet, else right below the cursor heading.

    The line under the heading is what a reader — and the hook's 24-hour pointer — sees first.
    """
    for index in range(start + 1, end):
        if STEP_BULLET.match(lines[index]):
            return index
    return start + 1


def add_step(data: bytes, step_text: str) -> tuple[bytes, int, int]:
    """Return (new bytes, previous step, new step) with ``- Step N: text`` as the cursor's newest entry.

    The text is flattened to one line, so it can never forge a heading or the tail marker.
    """
    line = one_line(step_text)
    if not line:
        raise Refusal("the step text is empty")
    encoded = Encoded(data)
    head, tail, span, start, end = _head_parts(encoded.text)
    previous = _number((parse_frontmatter(head) or {}).get("step"))
    step = current_step(head) + 1
    newline = encoded.newline
    lines = lines_of(head)
    at = _insertion_line(lines, start, end)
    if not lines[at - 1].endswith("\n"):
        lines[at - 1] += newline
    bullet = [f"- Step {step}: {line}{newline}"]
    following = lines[at] if at < len(lines) else ""
    if following.strip() and not _LIST_ITEM.match(following):
        bullet.append(newline)
    lines[at:at] = bullet
    _set_step(lines, span, step, newline)
    return encoded.encode("".join(lines) + tail), previous, step


def record_step_counter(new: bytes, old: bytes | None) -> bytes:
    """Make a whole rewrite's ``step:`` honest: the larger of its own counter, its newest bullet and the old step.

    So the counter never goes backwards and never lags the cursor after ``write``.
    """
    encoded = Encoded(new)
    head, tail, span, _start, _end = _head_parts(encoded.text)
    step = max(current_step(head), current_step(split_head(Encoded(old).text)[0]) if old is not None else 0)
    if _number((parse_frontmatter(head) or {}).get("step")) == step:
        return new
    lines = lines_of(head)
    _set_step(lines, span, step, encoded.newline)
    return encoded.encode("".join(lines) + tail)


def closed_stub(data: bytes, outcome: str, date: str, fallback_title: str) -> bytes:
    """The landed stub a closed anchor keeps: its frontmatter facts, status, one-line outcome, ``resume: none``."""
    encoded = Encoded(data)
    head, _tail = split_head(encoded.text)
    frontmatter = parse_frontmatter(head) or {}
    title = one_line(title_of(head) or "") or fallback_title
    lines = ["---", f"format: {frontmatter.get('format') or FORMAT}"]
    lines += [f"{key}: {one_line(frontmatter[key])}" for key in ("date", "task", "step") if frontmatter.get(key)]
    lines += [f"closed: {date}", "---", "", f"# {title}", "", "Status: closed", f"Outcome: {outcome}", "Resume: none"]
    return encoded.encode(encoded.newline.join(lines) + encoded.newline)


# ---------------------------------------------------------------------------------------------------------------
# File operations


def _today(now: float) -> str:
    return time.strftime("%Y-%m-%d", time.localtime(now))


def _source(env: Mapping[str, str]) -> str:
    session = one_line(env.get(SESSION_ENV, ""))
    suffix = f" (session {cut_code_points(session, 80)})" if session else ""
    return f"session-workflow anchor new{suffix}"


def create_anchor(project_dir: str, task: str, now: float, env: Mapping[str, str], session: str | None = None) -> str:
    """Create a new anchor under ``<project_dir>/.claude/anchors/`` and return its path; never overwrites.

    A taken name (open or closed) gets ``-2``, ``-3``, ... The folder gets its ``.gitignore``; the registry
    records the anchor as ours, kept by ``session``.
    """
    folder = anchors_dir(project_dir)
    refuse_escape(project_dir, folder)
    date = _today(now)
    stem = f"{date}-{slugify(task)}"
    for attempt in range(1, MAX_NAME_TRIES + 1):
        name = stem if attempt == 1 else f"{stem}-{attempt}"
        path = os.path.join(folder, name + ".md")
        if os.path.lexists(closed_name(path)):
            continue
        refuse_escape(project_dir, path, atomic.lock_path(path))
        data = anchor_template(task, path, project_dir, date, _source(env)).encode("utf-8")
        try:
            created = atomic.create_new(path, data, staged=_vouch(env, path, session, "new", now, [data]))
        except (OSError, atomic.WriteError) as error:
            raise CliError(f"cannot create {path}: {_reason(error)}") from error
        if created:
            ensure_gitignore(folder)
            _note_others(folder, path)
            return path
    raise CliError(f"no free name for {stem}.md in {folder} after {MAX_NAME_TRIES} tries")


def _note_others(folder: str, created: str) -> None:
    """One line on stderr when the new anchor is not alone: the hook injects one, and stale ones confuse it."""
    others = [candidate for candidate in list_open(folder) if candidate.path != created]
    if others:
        print(
            f"session-workflow: note: {len(others)} other open anchor(s) in {folder}; close finished ones"
            " (`session-workflow anchor list`, `anchor close`)",
            file=sys.stderr,
        )


def refuse_escape(project_dir: str, *paths: str) -> None:
    """Refuse (exit 2) when a symlink on the way to any of ``paths`` leads outside the project."""
    for path in paths:
        escape = leads_outside(project_dir, path)
        if escape is not None:
            link, real = escape
            raise Refusal(f"{one_line(link)} leads outside the project ({one_line(real)}); refusing to write there")


def _vouch(
    env: Mapping[str, str], path: str, session: str | None, how: str, now: float, written: list[bytes]
) -> Callable[[os.stat_result], None]:
    """The registry update a writer runs under the anchor's lock, with the finished temp file about to be renamed;
    ``written`` holds the bytes of that file by then (the kind the record keeps is found in them).

    A record that cannot be made is a warning, not a failure (the anchor itself is fine): the hooks will name
    it as not created here until ``adopt`` succeeds.
    """

    def record(staged: os.stat_result) -> None:
        try:
            kind = kind_of_bytes(written[0])
            registry.vouch(env, path, session, how, now, registry.Identity.of(staged), kind)
        except (OSError, atomic.WriteError) as error:
            print(
                f"session-workflow: warning: {path} was written but not recorded as ours ({_reason(error)});"
                f" the hooks will not inject it until `{registry.adopt_command(path)}` succeeds",
                file=sys.stderr,
            )

    return record


def _reason(error: Exception) -> str:
    return one_line(error.strerror or str(error)) if isinstance(error, OSError) else one_line(str(error))


def open_anchor_path(path: str) -> str:
    """Check that ``path`` names an existing open anchor file in an anchors folder; return the file to change.

    Nothing on the way may lead outside the project; an anchor that is a symlink to another anchor of the same
    folder is changed through its target (the link stays a link), and any other symlink is refused.
    """
    absolute = os.path.abspath(path)
    name = os.path.basename(absolute)
    folder = os.path.dirname(absolute)
    if folder.endswith(os.sep + ANCHORS_SUBDIR) is False:
        raise Refusal(f"{absolute} is not in a {ANCHORS_SUBDIR} folder; the writers only change anchors")
    if name.endswith(".closed.md"):
        raise Refusal(f"{absolute} is closed; create a new anchor with `session-workflow anchor new`")
    if not is_open_name(name):
        raise Refusal(f"{absolute} is not an anchor file name (*.md, not hidden)")
    refuse_escape(os.path.dirname(os.path.dirname(folder)), absolute)
    if os.path.islink(absolute):
        real = os.path.realpath(absolute)
        if not is_inside(os.path.dirname(real), os.path.realpath(folder)) or not is_open_name(os.path.basename(real)):
            raise Refusal(f"{absolute} is a symlink to {one_line(real)}, not to an open anchor in its own folder")
        absolute = real
    refuse_escape(os.path.dirname(os.path.dirname(folder)), atomic.lock_path(absolute))
    try:
        info = os.stat(absolute)
    except OSError as error:
        raise Refusal(f"{absolute}: {_reason(error)}") from error
    if not stat.S_ISREG(info.st_mode):
        raise Refusal(f"{absolute} is not a regular file")
    return absolute


def _rewrite(path: str, transform: Callable[[bytes], bytes], staged: Callable[[os.stat_result], object]) -> None:
    """Run ``transform`` on the current bytes under the lock, and ``staged`` (the registry update) just before
    the rename; a vanished file or a refusal writes nothing."""

    def guarded(current: bytes | None) -> bytes:
        if current is None:
            raise CliError(f"{path} no longer exists (closed or moved by another writer?)")
        return transform(current)

    try:
        atomic.update_file(path, guarded, staged=staged)
    except (OSError, atomic.WriteError) as error:
        raise CliError(f"cannot write {path}: {_reason(error)}") from error


def step_anchor(
    path: str, text: str, env: Mapping[str, str], session: str | None = None, now: float = 0.0
) -> tuple[int, int]:
    """Add ``- Step N: text`` to the anchor at ``path``; returns (previous frontmatter step, N).

    Only to an anchor the registry vouches for: a step would otherwise lend our record to text we never saw.
    """
    if not one_line(text):
        raise Refusal("the step text is empty")
    result: list[int] = []
    written: list[bytes] = []

    def transform(current: bytes) -> bytes:
        if not registry.is_ours(env, path):
            advice = registry.adopt_command(path)
            raise Refusal(f"{path} was not created here; if it is yours, adopt it first: {advice}")
        new, previous, step = add_step(current, text)
        result[:] = [previous, step]
        written[:] = [new]
        return new

    _rewrite(path, transform, _vouch(env, path, session, "step", now, written))
    return result[0], result[1]


def frontmatter_step(data: bytes) -> int:
    """The ``step:`` of an anchor's frontmatter (0 when it has none): the version ``write`` compares."""
    return _number((parse_frontmatter(split_head(Encoded(data).text)[0]) or {}).get("step"))


def write_anchor(
    path: str,
    data: bytes,
    env: Mapping[str, str],
    session: str | None = None,
    now: float = 0.0,
    force: bool = False,
) -> int:
    """Replace the anchor at ``path`` with ``data`` whole (an anchor itself); returns the step it records.

    Compare-and-swap on the frontmatter ``step:``: text older than the stored anchor (another writer stepped it
    since the caller read it) is refused unless ``force``, so no update is lost without a word.
    """
    if not data.strip():
        raise Refusal("nothing on stdin: pipe the whole anchor in, e.g. with a heredoc")
    _head_parts(Encoded(data).text)
    written: list[bytes] = []
    given = frontmatter_step(data)

    def transform(current: bytes) -> bytes:
        stored = frontmatter_step(current)
        if given < stored and not force:
            raise Refusal(
                f"{path} is at step {stored} but this text says step {given}: it moved on since you read it;"
                f" read it with `session-workflow anchor show {shell_quote(path)}` and write again (or --force)"
            )
        written[:] = [record_step_counter(data, current)]
        return written[0]

    _rewrite(path, transform, _vouch(env, path, session, "write", now, written))
    return current_step(split_head(Encoded(written[0]).text)[0])


def vouch_as_read(
    path: str, env: Mapping[str, str], session: str | None, how: str, now: float, seen: bytes | None = None
) -> None:
    """Record the file at ``path`` as ours: the identity of the very bytes whose kind is recorded (the fstat of the
    descriptor they are read from), so a save by an editor (no lock) can never pair one text's kind with another's
    identity. With ``seen`` (the bytes a caller read under the lock), other bytes are refused.
    """
    limit = atomic.MAX_WRITER_READ_BYTES if seen is None else len(seen)
    read = read_prefix_and_stat(path, limit + 1)
    if read is None or (seen is not None and read[0] != seen):
        raise CliError(f"{path} changed while being adopted; adopt it again")
    registry.vouch(env, path, session, how, now, registry.Identity.of(read[1]), kind_of_bytes(read[0]))


def adopt_anchor(path: str, env: Mapping[str, str], session: str | None, now: float) -> None:
    """Record the anchor at ``path`` as ours as it is now (a hand-made or cloned one the user vouches for)."""

    def transform(current: bytes | None) -> None:
        if current is None:
            raise CliError(f"{path} no longer exists (closed or moved by another writer?)")
        vouch_as_read(path, env, session, "adopt", now, current)
        return None  # the lock was all we needed: the file itself is not changed

    try:
        atomic.update_file(path, transform)
    except (OSError, atomic.WriteError) as error:
        raise CliError(f"cannot adopt {path}: {_reason(error)}") from error


def _free_closed_name(path: str, attempt: int) -> str:
    base = closed_name(path)
    return base if attempt == 1 else f"{base[: -len('.closed.md')]}-{attempt}.closed.md"


def _forget_lock(path: str) -> None:
    """Remove the lock file of a name no writer will use again.

    Safe only because every writer of an existing name (step, write, close) re-checks under the lock that the
    file is still there, and ``new`` never reuses a name whose closed file exists.
    """
    with contextlib.suppress(OSError):
        os.unlink(atomic.lock_path(path))


def _move_to_closed(path: str, data: bytes, mode: int) -> str:
    """Create ``data`` under a free closed name (create-only), then remove ``path``; the caller holds the lock."""
    for attempt in range(1, MAX_NAME_TRIES + 1):
        target = _free_closed_name(path, attempt)
        if atomic.create_new(target, data, mode):
            os.unlink(path)
            _forget_lock(target)
            _forget_lock(path)
            return target
    raise CliError(f"no free closed name for {path} after {MAX_NAME_TRIES} tries")


def _close_under_lock(path: str, make: Callable[[bytes], bytes], env: Mapping[str, str]) -> str:
    """Close ``path`` atomically: ``make`` turns the current bytes into what the closed file holds."""
    closed: list[str] = []

    def transform(current: bytes | None) -> None:
        if current is None:
            raise CliError(f"{path} no longer exists (closed or moved by another writer?)")
        closed.append(_move_to_closed(path, make(current), stat.S_IMODE(os.stat(path).st_mode)))
        return None  # the lock was all we needed from update_file: nothing is written in place

    try:
        atomic.update_file(path, transform)
    except (OSError, atomic.WriteError) as error:
        raise CliError(f"cannot close {path}: {_reason(error)}") from error
    registry.forget(env, path)
    return closed[0]


def close_anchor(path: str, outcome: str, now: float, env: Mapping[str, str]) -> str:
    """Rewrite the anchor to its landed stub under the closed name; returns the closed path."""
    line = one_line(outcome)
    if not line:
        raise Refusal("the outcome is empty: say in one line what the run delivered")
    fallback = os.path.basename(path)[: -len(".md")]
    return _close_under_lock(path, lambda current: closed_stub(current, line, _today(now), fallback), env)


def rename_closed(path: str, env: Mapping[str, str]) -> str:
    """Close an anchor that already says it is done, keeping its content: only the name changes."""
    return _close_under_lock(path, lambda current: current, env)


# ---------------------------------------------------------------------------------------------------------------
# Where a new anchor goes


def session_start_dir(env: Mapping[str, str], home: str) -> str | None:
    """The directory this Claude Code session started in, from its transcript (found by the session id).

    The Bash tool's shell knows ``CLAUDE_CODE_SESSION_ID`` but not the project dir, and its cwd may have
    wandered; the hook looks in the start directory first, so that is where a new anchor belongs.
    """
    import glob

    session = env.get(SESSION_ENV, "")
    if not re.fullmatch(r"[A-Za-z0-9_-]{1,128}", session):
        return None
    projects = os.path.join(config_dir(env, home), "projects")
    for transcript in sorted(glob.glob(os.path.join(glob.escape(projects), "*", glob.escape(session) + ".jsonl"))):
        start = context.session_start_dir(transcript)
        if start and os.path.isabs(start) and os.path.isdir(start):
            return start
    return None


def default_project_dir(env: Mapping[str, str], home: str, cwd: str) -> str:
    """``CLAUDE_PROJECT_DIR`` (never in the Bash tool: ``given_project_dir``), else the session's start directory,
    else the current directory."""
    given, ignored = given_project_dir(env)
    if ignored:
        print(ignored, file=sys.stderr)
    return given or session_start_dir(env, home) or cwd


def _project_dir(option: str | None) -> str:
    """The ``--dir`` value as a project directory; an anchors folder itself (as ``list`` accepts) is taken too."""
    if option is None:
        return default_project_dir(os.environ, os.path.expanduser("~"), os.getcwd())
    if not os.path.isdir(option):
        raise Refusal(f"--dir {option}: no such directory")
    directory = os.path.abspath(option)
    if directory.endswith(os.sep + ANCHORS_SUBDIR):
        return os.path.dirname(os.path.dirname(directory))
    return directory


# ---------------------------------------------------------------------------------------------------------------
# The subcommands


def _fit_lines(path: str) -> list[str]:
    """The head-fit lines worth seeing after every write: the size verdict, any drops, any warnings."""
    lines, code = head_fit_report(path)
    if code:
        return []
    return [
        line
        for line in lines
        if line.startswith(("HEAD:", "warning:")) or (line.startswith("would drop:") and not line.endswith(": nothing"))
    ]


def _session(args: argparse.Namespace) -> str | None:
    """The session that keeps what this command writes: ``--session``, else the Bash tool's session id."""
    if args.session is not None:
        if not is_session_id(args.session):
            raise Refusal("--session: a session id is 1-256 visible ASCII characters")
        return str(args.session)
    given = os.environ.get(SESSION_ENV, "")
    return given if is_session_id(given) else None


def _run_new(args: argparse.Namespace) -> int:
    task = one_line(args.task)
    if not task:
        raise Refusal("--task is empty: name the run's task in a few words")
    path = create_anchor(_project_dir(args.dir), task, time.time(), os.environ, _session(args))
    print(path)
    return 0


def _run_step(args: argparse.Namespace) -> int:
    path = open_anchor_path(args.file)
    previous, step = step_anchor(path, args.text, os.environ, _session(args), time.time())
    print(f"step {previous} -> {step}  {path}")
    for line in _fit_lines(path):
        print(line)
    return 0


def _run_write(args: argparse.Namespace) -> int:
    path = open_anchor_path(args.file)
    if sys.stdin is None or sys.stdin.isatty():
        raise Refusal("write reads the whole anchor from stdin; pipe it in with a heredoc")
    data = sys.stdin.buffer.read(MAX_STDIN_BYTES + 1)
    if len(data) > MAX_STDIN_BYTES:
        raise Refusal(f"stdin is larger than {MAX_STDIN_BYTES} bytes; an anchor is a cursor, not a transcript")
    step = write_anchor(path, data, os.environ, _session(args), time.time(), args.force)
    print(f"wrote {path} (step {step})")
    for line in _fit_lines(path):
        print(line)
    return 0


def _run_close(args: argparse.Namespace) -> int:
    if args.stale:
        if args.file is not None or args.outcome is not None:
            raise Refusal("close --stale takes no FILE and no --outcome")
        return _close_stale(_project_dir(args.dir), args.yes)
    if args.file is None or args.outcome is None:
        raise Refusal('close needs FILE --outcome "..." (or --stale)')
    if args.yes or args.dir is not None:
        raise Refusal("--yes and --dir go with close --stale")
    path = open_anchor_path(args.file)
    print(f"closed {path} -> {close_anchor(path, args.outcome, time.time(), os.environ)}")
    return 0


def _run_adopt(args: argparse.Namespace) -> int:
    paths = [open_anchor_path(file) for file in args.files]
    session = _session(args)
    for path in paths:
        adopt_anchor(path, os.environ, session, time.time())
        print(f"adopted {path}: the hooks now inject its HEAD (until it changes outside the writers)")
    return 0


def _close_stale(directory: str, yes: bool) -> int:
    paths = stale_paths(directory)
    if not paths:
        print(f"no open anchor in {resolve_folder(directory)} is marked done in its content")
        return 0
    if not yes:
        for path in paths:
            print(mv_command(path))
        print(
            f"# {len(paths)} rename(s) shown, none done: run `session-workflow anchor close --stale --yes` to do them"
        )
        return 0
    for path in paths:
        print(f"closed {path} -> {rename_closed(path, os.environ)}")
    return 0


def _session_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--session", help=f"the session that keeps this anchor (default: ${SESSION_ENV})")


def _setup_new(parser: OneLineParser, _argv: Sequence[str]) -> None:
    parser.description = "Create <dir>/.claude/anchors/<date>-<slug>.md from the template (never overwrites)."
    parser.add_argument("--task", required=True, help="the run's task in a few words (title, file name)")
    parser.add_argument(
        "--dir", help="the project directory; default: $CLAUDE_PROJECT_DIR, else where this session started, else ."
    )
    _session_option(parser)
    parser.set_defaults(run=_run_new)


def _setup_step(parser: OneLineParser, _argv: Sequence[str]) -> None:
    parser.description = "N is one more than the larger of the frontmatter step and the newest Step bullet."
    parser.add_argument("file", metavar="FILE")
    parser.add_argument("text", metavar="TEXT", help='what was done and what is next, e.g. "done: X; next: Y"')
    _session_option(parser)
    parser.set_defaults(run=_run_step)


def _setup_write(parser: OneLineParser, _argv: Sequence[str]) -> None:
    parser.description = (
        "Atomic, locked, keeps the file mode; the step counter never goes backwards. Use this instead of the"
        " Write/Edit tools, which ask for permission under .claude/. Refused (exit 2) when the stored anchor's"
        " frontmatter step is newer than the text's: another writer moved it on since you read it."
    )
    parser.add_argument("file", metavar="FILE")
    parser.add_argument("--force", action="store_true", help="write even when the stored anchor's step is newer")
    _session_option(parser)
    parser.set_defaults(run=_run_write)


def _setup_adopt(parser: OneLineParser, _argv: Sequence[str]) -> None:
    parser.description = (
        "The hooks inject only anchors this machine's writers made or an adopt vouched for, as they are now; an"
        " anchor that arrived with the repository (clone, pull, unzip) or was edited by hand is only named. Read it"
        " first: once adopted, its HEAD is injected as the run's source of truth."
    )
    parser.add_argument("files", metavar="FILE", nargs="+")
    _session_option(parser)
    parser.set_defaults(run=_run_adopt)


def _setup_close(parser: OneLineParser, _argv: Sequence[str]) -> None:
    parser.description = (
        'close FILE --outcome "...": stub + rename, atomically. close --stale [--yes]: the done-in-content'
        " anchors' renames, shown (or done with --yes)."
    )
    parser.add_argument("file", metavar="FILE", nargs="?")
    parser.add_argument("--outcome", help="one line: what the run delivered")
    parser.add_argument("--stale", action="store_true", help="find the anchors marked done but never renamed")
    parser.add_argument("--yes", action="store_true", help="with --stale: do the renames instead of showing them")
    parser.add_argument("--dir", help="with --stale: the project directory (default as for new)")
    parser.set_defaults(run=_run_close)


# The ``anchor`` group's writing verbs, listed after its reports (``cli.anchor``).
VERBS: dict[str, Verb] = {
    "new": ("create a new anchor and print its path", _setup_new),
    "step": ('record a step: "- Step N: TEXT" on top of the cursor, step: N in the frontmatter', _setup_step),
    "write": ("replace FILE with the whole anchor read from stdin (a heredoc)", _setup_write),
    "adopt": ("vouch for a hand-made or cloned anchor, so the hooks inject its HEAD", _setup_adopt),
    "close": ("close FILE: rewrite it to a landed stub and rename it *.closed.md (or --stale)", _setup_close),
}
