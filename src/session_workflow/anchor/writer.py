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
import stat
import sys
import time

from session_workflow.anchor import registry
from session_workflow.anchor.discover import is_open_name, kind_of_bytes, list_open
from session_workflow.anchor.template import HEAD_SECTIONS, TAIL_SECTIONS, requoted_resume, resume_steps
from session_workflow.anchor.text import (
    BOM,
    STEP_BULLET,
    TAIL_MARKER,
    closed_name,
    cursor_index,
    frontmatter_span,
    lines_of,
    newest_cursor_step,
    parse_frontmatter,
    split_head,
    split_sections,
    title_of,
)
from session_workflow.core import atomic
from session_workflow.core.boundedio import read_prefix_and_stat
from session_workflow.core.errors import Failure
from session_workflow.core.gitignore import ensure_gitignore
from session_workflow.core.locations import (
    ANCHORS_SUBDIR,
    anchors_dir,
    is_inside,
    leads_outside,
)
from session_workflow.core.text import cut_code_points, escaped, one_line, shell_command
from session_workflow.core.where import command_project_dir

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

    from session_workflow.core.places import Places


FORMAT = "anchor/v1"
SLUG_MAX = 48
MAX_NAME_TRIES = 100
MAX_STDIN_BYTES = atomic.MAX_WRITER_READ_BYTES
BAD_ARGUMENTS = 2

# Patterns ``re`` compiles (and caches) where they are used: the edit hook's re-vouch imports this module, and
# ``re`` with ``enum`` costs it about 0.2 J it never needs.
_LIST_ITEM = r"^[ \t]*(?:[-*+]|\d{1,9}[.)])(?:[ \t]|$)"


class Refusal(Failure):
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
    import re
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


def mend_resume(data: bytes, path: str) -> bytes:
    """``data`` with an earlier writer's unquoted Resume step 2 quoted, for the git work tree ``path`` is in (the
    anchors folder's, as ``new`` found it); only in the HEAD, every other byte as it was."""
    root = _git_root(os.path.dirname(path))
    if root is None:
        return data
    encoded = Encoded(data)
    head, tail = split_head(encoded.text)
    mended = requoted_resume(head, root)
    return data if mended == head else encoded.encode(mended + (tail or ""))


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
    """The number ``value`` starts with (``\\d{1,9}``: at most 9 decimal digits, any script's), else 0; string
    methods, not ``re``: the edit hook's re-vouch reads the step through here."""
    text = (value or "").strip()
    digits = ""
    for char in text[:9]:
        if not char.isdecimal():
            break
        digits += char
    return int(digits) if digits else 0


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
    import re

    if following.strip() and not re.match(_LIST_ITEM, following):
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


def _source(places: Places) -> str:
    session = one_line(places.session)
    suffix = f" (session {cut_code_points(session, 80)})" if session else ""
    return f"session-workflow anchor new{suffix}"


def create_anchor(project_dir: str, task: str, now: float, places: Places, session: str | None = None) -> str:
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
        data = anchor_template(task, path, project_dir, date, _source(places)).encode("utf-8")
        try:
            created = atomic.create_new(path, data, staged=_vouch(places, path, session, "new", now, [data]))
        except (OSError, atomic.WriteError) as error:
            raise Failure(f"cannot create {escaped(path)}: {_reason(error)}") from error
        if created:
            ensure_gitignore(folder)
            _note_others(folder, path)
            return path
    raise Failure(f"no free name for {escaped(stem)}.md in {escaped(folder)} after {MAX_NAME_TRIES} tries")


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
            raise Refusal(f"{escaped(link)} leads outside the project ({escaped(real)}); refusing to write there")


def _vouch(
    places: Places, path: str, session: str | None, how: str, now: float, written: list[bytes]
) -> Callable[[os.stat_result], None]:
    """The registry update a writer runs under the anchor's lock, with the finished temp file about to be renamed;
    ``written`` holds the bytes of that file by then (the record keeps their kind, step, digest and copy).

    A record that cannot be made fails the write before the rename: an anchor whose trust cannot follow it would be
    named as not created here at the next compaction, so the file is left as it was.
    """

    def record(staged: os.stat_result) -> None:
        data = written[0]
        try:
            step = current_step(split_head(Encoded(data).text)[0])
            identity = registry.Identity.of(staged)
            registry.Registry(places).vouch(
                path, session, how, now, identity, kind_of_bytes(data), data=data, step=step
            )
        except (OSError, atomic.WriteError) as error:
            where = places.trust or "the user state dir"
            raise Failure(
                f"cannot record {escaped(path)} as this machine's ({_reason(error)}), so it was left as it was: the"
                f" hooks would not inject it; make room in (or repair) {escaped(where)} and run this again"
            ) from error

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
        raise Refusal(f"{escaped(absolute)} is not in a {ANCHORS_SUBDIR} folder; the writers only change anchors")
    if name.endswith(".closed.md"):
        raise Refusal(f"{escaped(absolute)} is closed; create a new anchor with `session-workflow anchor new`")
    if not is_open_name(name):
        raise Refusal(f"{escaped(absolute)} is not an anchor file name (*.md, not hidden)")
    refuse_escape(os.path.dirname(os.path.dirname(folder)), absolute)
    if os.path.islink(absolute):
        real = os.path.realpath(absolute)
        if not is_inside(os.path.dirname(real), os.path.realpath(folder)) or not is_open_name(os.path.basename(real)):
            raise Refusal(
                f"{escaped(absolute)} is a symlink to {escaped(real)}, not to an open anchor in its own folder"
            )
        absolute = real
    refuse_escape(os.path.dirname(os.path.dirname(folder)), atomic.lock_path(absolute))
    try:
        info = os.stat(absolute)
    except OSError as error:
        raise Refusal(f"{escaped(absolute)}: {_reason(error)}") from error
    if not stat.S_ISREG(info.st_mode):
        raise Refusal(f"{escaped(absolute)} is not a regular file")
    return absolute


def _rewrite(path: str, transform: Callable[[bytes], bytes], staged: Callable[[os.stat_result], object]) -> None:
    """Run ``transform`` on the current bytes under the lock, and ``staged`` (the registry update) just before
    the rename; a vanished file or a refusal writes nothing."""

    def guarded(current: bytes | None) -> bytes:
        if current is None:
            raise Failure(f"{escaped(path)} no longer exists (closed or moved by another writer?)")
        return transform(current)

    try:
        atomic.update_file(path, guarded, staged=staged)
    except (OSError, atomic.WriteError) as error:
        raise Failure(f"cannot write {escaped(path)}: {_reason(error)}") from error


def step_anchor(path: str, text: str, places: Places, session: str | None = None, now: float = 0.0) -> tuple[int, int]:
    """Add ``- Step N: text`` to the anchor at ``path``; returns (previous frontmatter step, N).

    Only to an anchor the registry vouches for: a step would otherwise lend our record to text we never saw.
    """
    if not one_line(text):
        raise Refusal("the step text is empty")
    result: list[int] = []
    written: list[bytes] = []

    def transform(current: bytes) -> bytes:
        refuse_changed(places, path)
        if not registry.Registry(places).is_ours(path):
            advice = registry.adopt_command(path)
            raise Refusal(f"{escaped(path)} was not created here; if it is yours, adopt it first: {advice}")
        new, previous, step = add_step(mend_resume(current, path), text)
        result[:] = [previous, step]
        written[:] = [new]
        return new

    _rewrite(path, transform, _vouch(places, path, session, "step", now, written))
    return result[0], result[1]


def refuse_changed(places: Places, path: str) -> None:
    """Refuse (exit 2) to step or replace an anchor of ours changed outside the writers: that change (a hand edit,
    another tool) would be lost, or lent our record, without anyone having read it."""
    record = registry.Registry(places).changed_since(path)
    if record is not None:
        advice = registry.changed_advice(path, record.step)
        raise Refusal(f"{escaped(path)} changed outside the writers{_since(record)}; {advice}")


def _since(record: registry.Record) -> str:
    return f" since step {record.step} was written here" if record.step is not None else " since it was written here"


def frontmatter_step(data: bytes) -> int:
    """The ``step:`` of an anchor's frontmatter (0 when it has none): the version ``write`` compares."""
    return _number((parse_frontmatter(split_head(Encoded(data).text)[0]) or {}).get("step"))


def write_anchor(
    path: str,
    data: bytes,
    places: Places,
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
        refuse_changed(places, path)
        stored = frontmatter_step(current)
        if given < stored and not force:
            raise Refusal(
                f"{escaped(path)} is at step {stored} but this text says step {given}: it moved on since you read it;"
                f" read it with `{shell_command('session-workflow', 'anchor', 'show', path)}` and write again"
                " (or --force)"
            )
        written[:] = [record_step_counter(mend_resume(data, path), current)]
        return written[0]

    _rewrite(path, transform, _vouch(places, path, session, "write", now, written))
    return current_step(split_head(Encoded(written[0]).text)[0])


def vouch_as_read(
    path: str, places: Places, session: str | None, how: str, now: float, seen: bytes | None = None
) -> None:
    """Record the file at ``path`` as ours: the identity of the very bytes whose kind is recorded (the fstat of the
    descriptor they are read from), so a save by an editor (no lock) can never pair one text's kind with another's
    identity. With ``seen`` (the bytes a caller read under the lock), other bytes are refused.
    """
    limit = atomic.MAX_WRITER_READ_BYTES if seen is None else len(seen)
    read = read_prefix_and_stat(path, limit + 1)
    if read is None or (seen is not None and read[0] != seen):
        raise Failure(f"{escaped(path)} changed while being adopted; adopt it again")
    data, identity = read[0], registry.Identity.of(read[1])
    step = current_step(split_head(Encoded(data).text)[0])
    registry.Registry(places).vouch(path, session, how, now, identity, kind_of_bytes(data), data=data, step=step)


def adopt_anchor(path: str, places: Places, session: str | None, now: float) -> None:
    """Record the anchor at ``path`` as ours as it is now (a hand-made or cloned one the user vouches for)."""

    def transform(current: bytes | None) -> None:
        if current is None:
            raise Failure(f"{escaped(path)} no longer exists (closed or moved by another writer?)")
        vouch_as_read(path, places, session, "adopt", now, current)
        return None  # the lock was all we needed: the file itself is not changed

    try:
        atomic.update_file(path, transform)
    except (OSError, atomic.WriteError) as error:
        raise Failure(f"cannot adopt {escaped(path)}: {_reason(error)}") from error


class Restored:
    """What ``restore`` did: put the copy back (``written``), whether it holds the whole file or its HEAD only,
    the step it is at, and where the changed file it replaced was kept (``--force``)."""

    __slots__ = ("kept", "step", "whole", "written")

    def __init__(self, written: bool, whole: bool, step: int | None, kept: str | None) -> None:
        self.written = written
        self.whole = whole
        self.step = step
        self.kept = kept


def restore_path(path: str) -> str:
    """``open_anchor_path`` for a file that may be gone (its folder too): an open anchor's name in an anchors
    folder, nothing on the way leading outside the project, not a symlink."""
    absolute = os.path.abspath(path)
    name = os.path.basename(absolute)
    folder = os.path.dirname(absolute)
    if not folder.endswith(os.sep + ANCHORS_SUBDIR):
        raise Refusal(f"{escaped(absolute)} is not in a {ANCHORS_SUBDIR} folder; the writers only change anchors")
    if not is_open_name(name):
        raise Refusal(f"{escaped(absolute)} is not an open anchor's file name (*.md, not *.closed.md, not hidden)")
    refuse_escape(os.path.dirname(os.path.dirname(folder)), absolute, atomic.lock_path(absolute))
    if os.path.islink(absolute):
        raise Refusal(f"{escaped(absolute)} is a symlink; restore the anchor it points to")
    return absolute


def changed_name(path: str, now: float, attempt: int) -> str:
    """Where ``restore --force`` keeps the changed file it replaces: ``<name>.md.changed-<UTC time>`` beside it,
    not ``*.md``, so no hook or listing takes it for an open anchor (``-2``, ``-3``, ... when taken)."""
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime(now))
    return f"{path}.changed-{stamp}" + (f"-{attempt}" if attempt > 1 else "")


def _keep_changed(path: str, data: bytes, now: float) -> str:
    """Create ``data`` under a free ``changed_name`` (create-only); the caller holds the anchor's lock, so no lock
    of the name's own is taken (no writer ever uses these names again: its lock file would stay behind)."""
    mode = stat.S_IMODE(os.stat(path).st_mode)
    for attempt in range(1, MAX_NAME_TRIES + 1):
        target = changed_name(path, now, attempt)
        if atomic.link_new(target, data, mode):
            return target
    raise Failure(f"no free name to keep the changed {escaped(path)} beside it after {MAX_NAME_TRIES} tries")


def restore_anchor(path: str, places: Places, session: str | None, now: float, force: bool = False) -> Restored:
    """Put back the last version this machine's writers left of ``path`` (the copy beside its record).

    Atomic and locked as every write. A file that is gone (its folder too) is recreated; one the record still
    vouches for is left alone (its identity re-recorded, as after a stash and pop); one changed since is refused
    unless ``force``, and then kept beside it first (``changed_name``), so nothing is lost either way.
    """
    records = registry.Registry(places)
    record = records.read(os.path.realpath(path))
    if record is None:
        raise Refusal(f"{escaped(path)}: no session of this machine wrote it, so there is no copy to put back")
    copy = records.read_copy(record)
    if copy is None:
        raise Failure(
            f"{escaped(path)}: the last version written here is not kept (an older record, or its copy is gone)"
        )
    data, whole = copy
    kept: list[str] = []
    written: list[bytes] = [data]

    def transform(current: bytes | None) -> bytes | None:
        if current is not None:
            if records.is_ours(path):
                vouch_as_read(path, places, session, "restore", now, current)
                return None
            if not force:
                advice = registry.changed_advice(path, record.step)
                raise Refusal(
                    f"{escaped(path)} changed outside the writers{_since(record)}, so it was not restored over;"
                    f" {advice} (which keeps the changed file beside it)"
                )
            kept.append(_keep_changed(path, current, now))
        return data

    try:
        result = atomic.update_file(path, transform, staged=_vouch(places, path, session, "restore", now, written))
    except (OSError, atomic.WriteError) as error:
        raise Failure(f"cannot restore {escaped(path)}: {_reason(error)}") from error
    ensure_gitignore(os.path.dirname(path))
    return Restored(result is not None, whole, record.step, kept[0] if kept else None)


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
    raise Failure(f"no free closed name for {escaped(path)} after {MAX_NAME_TRIES} tries")


def _close_under_lock(path: str, make: Callable[[bytes], bytes], places: Places) -> str:
    """Close ``path`` atomically: ``make`` turns the current bytes into what the closed file holds."""
    closed: list[str] = []

    def transform(current: bytes | None) -> None:
        if current is None:
            raise Failure(f"{escaped(path)} no longer exists (closed or moved by another writer?)")
        closed.append(_move_to_closed(path, make(current), stat.S_IMODE(os.stat(path).st_mode)))
        return None  # the lock was all we needed from update_file: nothing is written in place

    try:
        atomic.update_file(path, transform)
    except (OSError, atomic.WriteError) as error:
        raise Failure(f"cannot close {escaped(path)}: {_reason(error)}") from error
    try:
        registry.Registry(places).forget(path, strict=True)
    except OSError as error:
        raise Failure(
            f"closed {escaped(path)} -> {escaped(closed[0])}, but its record could not be removed"
            f" ({_reason(error)}): remove {escaped(registry.record_file(places.trust or '', os.path.realpath(path)))}"
            " by hand"
        ) from error
    return closed[0]


def close_anchor(path: str, outcome: str, now: float, places: Places) -> str:
    """Rewrite the anchor to its landed stub under the closed name; returns the closed path."""
    line = one_line(outcome)
    if not line:
        raise Refusal("the outcome is empty: say in one line what the run delivered")
    fallback = os.path.basename(path)[: -len(".md")]
    return _close_under_lock(path, lambda current: closed_stub(current, line, _today(now), fallback), places)


def rename_closed(path: str, places: Places) -> str:
    """Close an anchor that already says it is done, keeping its content: only the name changes."""
    return _close_under_lock(path, lambda current: current, places)


# ---------------------------------------------------------------------------------------------------------------
# Where a new anchor goes


def default_project_dir(places: Places, cwd: str) -> str:
    """The session's project (``core.where.command_project_dir``), else the current directory; an ignored
    ``CLAUDE_PROJECT_DIR`` is named on stderr."""
    project, ignored = command_project_dir(places, cwd)
    if ignored:
        print(ignored, file=sys.stderr)
    return project or cwd
