"""PreToolUse / PostToolUse on Write, Edit and MultiEdit: an anchor the session edits with Claude Code's own tools
keeps the trust it had.

The registry vouches for an anchor by its identity (``anchor.registry``), so any write but our writers' used to
make the run's own anchor "not created here" at the next compaction. Here an edit keeps trust and never grants
it: PreToolUse notes, in a small per-call marker in the user state folder, that the registry vouches for the file
as it is just before the call; PostToolUse, when the tool's own result says it wrote that file and the marker is
there, vouches for the file as the tool left it, for this session, as ``anchor write`` does. A planted file the
model is talked into editing was never vouched for, so no marker is made and it stays untrusted; a new anchor
still comes from ``anchor new`` (a Write that creates one had no vouched state before it).

What is vouched for is the bytes the PostToolUse hook reads under the anchor's lock, with the identity of the
descriptor it read them from (``writer.vouch_as_read``): an ``anchor step`` of another session holds the lock
and vouches its own bytes, so those are ours either way. A process that replaces the file between the tool's
write and this read gets its bytes vouched; such a process already runs as the user (it could run ``anchor
adopt`` itself), while repository content alone never reaches that window.

Both hooks run for every Write and Edit of every session, and most sessions have no anchor: the path is checked
in the raw payload with string operations before anything is imported, so that exit costs the interpreter floor
(``benchmarks/``). Only a re-vouch takes the lock (``core.atomic.locked``: an flock, filelock's primitive, with no
library to import), so every edit of a vouched anchor is vouched again. The mod leaves
all this to these hooks: they run in every build, the mod's included, and the mod would have to spawn the same
Python to vouch, so nothing vouches twice.
"""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

    from session_workflow.anchor.registry import Identity
    from session_workflow.core.places import Places

TOOLS = ("Write", "Edit", "MultiEdit")
# The anchors folder as it appears in a tool's absolute ``file_path``; a payload without it is no anchor edit.
ANCHORS_MARK = b"/.claude/anchors/"
ANCHORS_TAIL = "/.claude/anchors"
# A Write's payload carries the new content, and its PostToolUse the old file too: room for two writer-sized files.
MAX_PAYLOAD_BYTES = 40 << 20
PENDING_FOLDER = "edits-pending"
MAX_MARKER_BYTES = 8192
# A marker whose call never reached PostToolUse (the tool failed) is removed by a later PreToolUse after this.
STALE_MARKER_SECONDS = 3600.0
MAX_SWEPT = 64


def read_stdin() -> bytes:
    """The payload (bounded); empty on any error."""
    try:
        return sys.stdin.buffer.read(MAX_PAYLOAD_BYTES + 1)
    except (OSError, ValueError):
        return b""


def edited_anchor(raw: bytes) -> tuple[dict[str, object], str] | None:
    """The payload and the tool's absolute ``file_path`` when it names an open anchor (``*.md``, not closed, not
    hidden) directly in a ``.claude/anchors`` folder; None otherwise, decided by a byte search before parsing."""
    if ANCHORS_MARK not in raw or len(raw) > MAX_PAYLOAD_BYTES:
        return None
    from session_workflow.core.jsonload import loads

    try:
        payload = loads(raw)
    except (ValueError, RecursionError):
        return None
    if not isinstance(payload, dict) or payload.get("tool_name") not in TOOLS:
        return None
    given = payload.get("tool_input")
    path = given.get("file_path") if isinstance(given, dict) else None
    if not isinstance(path, str) or not path.startswith("/") or "\x00" in path:
        return None
    path = os.path.normpath(path)
    folder, name = os.path.split(path)
    if not folder.endswith(ANCHORS_TAIL) or not name.endswith(".md") or name.endswith(".closed.md"):
        return None
    return (payload, path) if not name.startswith(".") else None


def _text(payload: Mapping[str, object], key: str) -> str | None:
    value = payload.get(key)
    return value if isinstance(value, str) and value and "\x00" not in value else None


def project_anchor(payload: dict[str, object], path: str, places: Places, now: float) -> str | None:
    """The real path of the anchor ``path`` names when its folder is the anchors folder of one of the session's
    project dirs, nothing on the way leading out of the project and the file itself, symlinks followed, in that
    same folder; else None."""
    from session_workflow.core.context import HookContext
    from session_workflow.core.locations import anchors_dir, is_inside

    real = os.path.realpath(path)
    for project in HookContext.from_payload(payload, places, now).project_dirs():
        folder = os.path.normpath(anchors_dir(project))
        if os.path.dirname(path) != folder:
            continue
        real_folder = os.path.realpath(folder)
        if is_inside(real_folder, os.path.realpath(project)) and os.path.dirname(real) == real_folder:
            return real
    return None


def marker_path(places: Places, session: str, call: str) -> str | None:
    """This call's marker file in the user state folder (None without one, or when that folder is not the user's
    alone: another user's marker must not carry trust from PreToolUse to PostToolUse)."""
    from session_workflow.core.locations import record_name

    root = places.state
    folder = os.path.join(root, PENDING_FOLDER) if root is not None else None
    if folder is None or places.foreign(folder) is not None:
        return None
    return os.path.join(folder, record_name(f"{session}\n{call}")[: -len(".key")])


def encode_marker(real: str, identity: Identity) -> bytes:
    return os.fsencode(real) + b"\n" + " ".join(map(str, identity.as_tuple())).encode("ascii") + b"\n"


def decode_marker(data: bytes) -> tuple[str, tuple[int, int, int, int]] | None:
    """(real path, identity tuple) from a marker's bytes; None for anything else."""
    lines = data.split(b"\n")
    if len(lines) != 3 or lines[2] or not lines[0]:
        return None
    fields = lines[1].split(b" ")
    if len(fields) != 4 or not all(field.isdigit() for field in fields):
        return None
    dev, ino, size, mtime_ns = (int(field) for field in fields)
    return os.fsdecode(lines[0]), (dev, ino, size, mtime_ns)


def _sweep(folder: str, now: float) -> None:
    """Remove markers of calls that failed long ago (PostToolUse never ran for them) and temp files of killed
    hooks; a bounded look."""
    try:
        with os.scandir(folder) as entries:
            for count, entry in enumerate(entries):
                if count >= MAX_SWEPT:
                    return
                if now - entry.stat(follow_symlinks=False).st_mtime >= STALE_MARKER_SECONDS:
                    os.unlink(entry.path)
    except OSError:
        return


def before_edit(raw: bytes, env: Mapping[str, str], now: float) -> bool:
    """PreToolUse: leave this call's marker when the registry vouches for the anchor as it is now (its identity,
    or its very bytes: ``registry.trusts``). True when a marker was written."""
    found = edited_anchor(raw)
    if found is None:
        return False
    payload, path = found
    session, call = _text(payload, "session_id"), _text(payload, "tool_use_id")
    if session is None or call is None:
        return False
    places = _places(env)
    real = project_anchor(payload, path, places, now)
    marker = marker_path(places, session, call)
    if real is None or marker is None:
        return False
    import stat

    from session_workflow.anchor import registry

    try:
        info = os.stat(real)
    except OSError:
        return False
    identity = registry.Identity.of(info)
    record = registry.Registry(places).read(real)
    if not stat.S_ISREG(info.st_mode) or record is None:
        return False
    if not record.vouches_for(identity):
        # Its very bytes at a new inode (a stash and pop, a checkout): the marker names the identity the record
        # vouches for, so PostToolUse finds the record unchanged since, exactly as for an unmoved file.
        if not registry.same_bytes(record, real, identity):
            return False
        identity = record.identities[0]
    return _store(marker, encode_marker(real, identity), now)


def _store(marker: str, data: bytes, now: float) -> bool:
    """Write the marker whole (a temp file renamed over it): one writer per call, so no lock is needed."""
    from session_workflow.core.folders import make_private

    folder = os.path.dirname(marker)
    temp = os.path.join(folder, f".{os.path.basename(marker)}.{os.getpid()}.tmp")
    try:
        make_private(folder)
        fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_NOFOLLOW", 0), 0o600)
        try:
            os.write(fd, data)
        finally:
            os.close(fd)
        os.replace(temp, marker)
    except OSError:
        _remove(temp)
        return False
    _sweep(folder, now)
    return True


def _take(marker: str) -> tuple[str, tuple[int, int, int, int]] | None:
    """Read and remove this call's marker (each is used once)."""
    from session_workflow.core.boundedio import read_prefix

    read = read_prefix(marker, MAX_MARKER_BYTES)
    if not _remove(marker):
        return None
    return decode_marker(read[0]) if read is not None and read[1] <= MAX_MARKER_BYTES else None


def _remove(path: str) -> bool:
    """Unlink ``path``; False when it was not there (or could not be removed)."""
    try:
        os.unlink(path)
    except OSError:
        return False
    return True


def tool_wrote(payload: Mapping[str, object], path: str) -> bool:
    """True when the tool's own result says it wrote ``path``: ``tool_response.filePath`` is the file (measured on
    2.1.332: Write answers ``{type: create|update, filePath, content, …}``, Edit ``{filePath, oldString,
    newString, originalFile, structuredPatch, …}``; a failed call raises no PostToolUse)."""
    response = payload.get("tool_response")
    if not isinstance(response, dict):
        return False
    written = response.get("filePath")
    if not isinstance(written, str) or "\x00" in written or os.path.normpath(written) != path:
        return False
    return payload.get("tool_name") != "Write" or response.get("type") in ("create", "update")


def after_edit(raw: bytes, env: Mapping[str, str], now: float) -> bool:
    """PostToolUse: vouch for the anchor as the tool left it when PreToolUse found it vouched for. True when it
    did."""
    found = edited_anchor(raw)
    if found is None:
        return False
    payload, path = found
    session, call = _text(payload, "session_id"), _text(payload, "tool_use_id")
    places = _places(env)
    marker = marker_path(places, session, call) if session is not None and call is not None else None
    taken = _take(marker) if marker is not None else None
    if taken is None or session is None or not tool_wrote(payload, path):
        return False
    real = project_anchor(payload, path, places, now)
    if real is None or real != taken[0]:
        return False
    return keep_trust(real, taken[1], places, session, now)


def keep_trust(real: str, before: tuple[int, int, int, int], places: Places, session: str, now: float) -> bool:
    """Under the anchor's lock, vouch for its bytes as read now when the record still vouches for the identity
    PreToolUse noted (a record dropped or rewritten meanwhile, by ``anchor close`` say, stays as it is)."""
    from session_workflow.anchor import registry
    from session_workflow.anchor.writer import vouch_as_read
    from session_workflow.core import atomic
    from session_workflow.core.errors import Failure

    kept: list[bool] = []
    earlier = registry.Identity(*before)

    def transform(current: bytes | None) -> None:
        record = registry.Registry(places).read(real)
        if current is not None and record is not None and record.vouches_for(earlier):
            vouch_as_read(real, places, session, "edit", now, current)
            kept.append(True)

    try:
        atomic.update_file(real, transform)
    except (OSError, atomic.WriteError, Failure):
        return False
    return bool(kept)


def run(handler: Callable[[bytes, Mapping[str, str], float], bool], event: str) -> None:
    """Read the payload and run ``handler`` inside the one error guard (``core.errors.guard``): an error goes to the
    error log, never further (a hook must exit 0 and print nothing). A payload that names no anchors folder is done
    before the guard is loaded: a byte search cannot fail, and nearly every edit of every session ends there."""
    raw = read_stdin()
    if ANCHORS_MARK not in raw:
        return
    import time

    from session_workflow.core.errors import guard

    def call() -> int:
        handler(raw, os.environ, time.time())
        return 0

    guard(event, call, lambda: _places(os.environ))


def _places(env: Mapping[str, str]) -> Places:
    """The hook's places (``core.places``), built once the payload names an anchor (or a bug is recorded): an edit
    of any other file never imports them."""
    from session_workflow.core.places import Places

    return Places(env)


def pre_tool_use() -> None:
    """The PreToolUse entry of hooks/hook.py."""
    run(before_edit, "PreToolUse")


def post_tool_use() -> None:
    """The PostToolUse entry of hooks/hook.py."""
    run(after_edit, "PostToolUse")
