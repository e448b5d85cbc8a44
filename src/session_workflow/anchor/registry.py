"""Which anchors this machine's session-workflow made, and which sessions keep them: one record per anchor.

Repository content is data, never authority: an anchor's HEAD is injected with the plugin's framing only when
this record says our own writer (``new``, ``write``, ``step``) or an explicit ``anchor adopt`` produced the file
as it is now. The records live in the user's state dir (``core.locations.trust_dir``), never under a project,
one small JSON file per anchor named after its real path, so the hook reads only the records of the files it
looks at and two writers of different anchors never contend.

The key is the file's identity as the writer left it: real path, device, inode, size and ``st_mtime_ns``. A file
that arrives by ``git clone``, ``git pull``, an unzip or a copy is a new inode written by another program at
another nanosecond, so it never matches, even at the same path; nor does a hand edit (adopt it again). The check
costs the hook nothing it does not already do (the listing's ``stat``); a content hash would mean reading every
file whole. The writer records the finished temp file's identity (a rename keeps inode, size and mtime) before
it renames it into place, under the anchor's lock, and keeps the identity before it too: a writer killed on
either side of the rename leaves a file the record still vouches for.

Each record also lists the sessions that wrote or adopted the anchor, newest first: the hook prefers the anchor
its own session keeps (``session affinity``) and names another session's live anchor as a parallel track. And it
holds the kind (live, parked, done) the writer found in the text it wrote: while the file is still that identity,
the hook ranks it without reading it, and reads only the anchor it injects.
Hot-path safe (os, time, and ``core.jsonload``: no ``json`` import); the writer side imports ``json`` and
``core.atomic`` lazily.
"""

from __future__ import annotations

import os
import time

from session_workflow.anchor.text import LIVE, NOT_ANCHOR, shell_quote
from session_workflow.core.boundedio import read_prefix
from session_workflow.core.jsonload import loads
from session_workflow.core.locations import record_name, trust_dir

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping

VERSION = 1
MAX_RECORD_BYTES = 16 * 1024
MAX_SESSIONS = 8
MAX_IDENTITIES = 2
# The classification rules a recorded kind was found by (``anchor.text.AnchorText.kind``); a record of other rules
# tells the hook nothing, and it reads the file. Bump it with any change to how a HEAD is classified.
KIND_RULES = 1


class Identity:
    """What a file must still be for its record to hold: (device, inode, size, mtime in ns)."""

    __slots__ = ("dev", "ino", "mtime_ns", "size")

    def __init__(self, dev: int, ino: int, size: int, mtime_ns: int) -> None:
        self.dev = dev
        self.ino = ino
        self.size = size
        self.mtime_ns = mtime_ns

    @classmethod
    def of(cls, info: os.stat_result) -> Identity:
        return cls(info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns)

    def as_tuple(self) -> tuple[int, int, int, int]:
        return (self.dev, self.ino, self.size, self.mtime_ns)


class Record:
    """One anchor's record: its real path, the identities our last write (or adopt) left (newest first, at most
    two: the file before a rename and after it), the keeping sessions, and the kind of the newest identity's text
    (None when not recorded)."""

    __slots__ = ("identities", "kind", "path", "sessions")

    def __init__(self, path: str, identities: list[Identity], sessions: list[str], kind: int | None = None) -> None:
        self.path = path
        self.identities = identities
        self.sessions = sessions
        self.kind = kind

    def vouches_for(self, identity: Identity) -> bool:
        """True when the file is still exactly what this machine's writer (or adopt) left."""
        return any(known.as_tuple() == identity.as_tuple() for known in self.identities)

    def kind_of(self, identity: Identity) -> int | None:
        """The recorded kind when ``identity`` is the text it was found in (the newest identity), else None."""
        if self.kind is None or not self.identities or self.identities[0].as_tuple() != identity.as_tuple():
            return None
        return self.kind


def record_file(folder: str, real_path: str) -> str:
    """The record's file name for an anchor's real path (a readable prefix plus a hash of the whole path)."""
    return os.path.join(folder, record_name(real_path)[: -len(".key")] + ".json")


def _identity(value: object) -> Identity | None:
    if not isinstance(value, list) or len(value) != 4:
        return None
    if not all(type(field) is int and field >= 0 for field in value):
        return None
    return Identity(value[0], value[1], value[2], value[3])


def parse(data: bytes, real_path: str) -> Record | None:
    """The record in ``data`` when it is well formed and for ``real_path`` (a hash clash names another path)."""
    try:
        document = loads(data)
    except (ValueError, RecursionError):
        return None
    if not isinstance(document, dict) or document.get("v") != VERSION or document.get("path") != real_path:
        return None
    listed = document.get("ids")
    sessions = document.get("sessions")
    if not isinstance(listed, list) or not isinstance(sessions, list):
        return None
    identities = [identity for identity in map(_identity, listed[:MAX_IDENTITIES]) if identity is not None]
    kept = [item for item in sessions if isinstance(item, str) and item][:MAX_SESSIONS]
    return Record(real_path, identities, kept, _kind(document.get("kind")))


def _kind(value: object) -> int | None:
    """``[rules, kind]`` as ``encode`` writes it: the kind when found by this version's rules, else None."""
    if not isinstance(value, list) or len(value) != 2 or value[0] != KIND_RULES:
        return None
    kind = value[1]
    return kind if type(kind) is int and LIVE <= kind <= NOT_ANCHOR else None


def read(env: Mapping[str, str], real_path: str) -> Record | None:
    """The record of the anchor at ``real_path`` (None: no record, no state dir, or an unreadable one)."""
    folder = trust_dir(env)
    if folder is None:
        return None
    read_back = read_prefix(record_file(folder, real_path), MAX_RECORD_BYTES)
    if read_back is None or read_back[1] > MAX_RECORD_BYTES:
        return None
    return parse(read_back[0], real_path)


def is_ours(env: Mapping[str, str], path: str) -> bool:
    """True when the record vouches for ``path`` as it is now (this machine's writer or an adopt left it so)."""
    real = os.path.realpath(path)
    record = read(env, real)
    try:
        return record is not None and record.vouches_for(Identity.of(os.stat(real)))
    except OSError:
        return False


def encode(record: Record, how: str, now: float) -> bytes:
    """The record's bytes (``how``: the writer that produced the file, for a person reading the folder)."""
    import json  # the writer side only: the hooks never encode a record

    document = {
        "v": VERSION,
        "path": record.path,
        "ids": [list(identity.as_tuple()) for identity in record.identities],
        "sessions": record.sessions,
        **({"kind": [KIND_RULES, record.kind]} if record.kind is not None else {}),
        "by": how,
        "at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(now)),
    }
    return (json.dumps(document, ensure_ascii=True, indent=1) + "\n").encode("ascii")


def _present(real: str) -> Identity | None:
    try:
        return Identity.of(os.stat(real))
    except FileNotFoundError:
        return None


def kept_sessions(previous: list[str], session: str | None) -> list[str]:
    """``session`` first, then the earlier ones (no repeats), at most ``MAX_SESSIONS``."""
    if not session:
        return previous[:MAX_SESSIONS]
    return [session, *(item for item in previous if item != session)][:MAX_SESSIONS]


def vouch(
    env: Mapping[str, str],
    path: str,
    session: str | None,
    how: str,
    now: float,
    identity: Identity | None = None,
    kind: int | None = None,
) -> str:
    """Record that this machine's writer leaves ``path`` as ``identity`` (default: the file as it is now), kept by
    ``session``, its text of ``kind``; the caller holds the anchor's lock, so no other writer changes the file
    meanwhile. A file the record already vouched for stays vouched for too, so a rename that never happens strands
    nothing.

    Returns the record file. Raises ``atomic.WriteError`` (one line) when there is no user state dir.
    """
    from session_workflow.core import atomic

    folder = trust_dir(env)
    if folder is None:
        raise atomic.WriteError("no user state dir (HOME is not set): cannot record that this anchor is ours")
    real = os.path.realpath(path)
    present = _present(real) if identity is not None else None
    newest = identity if identity is not None else Identity.of(os.stat(real))
    target = record_file(folder, real)

    def transform(current: bytes | None) -> bytes:
        before = parse(current, real) if current is not None else None
        sessions = kept_sessions(before.sessions if before is not None else [], session)
        identities = [newest]
        kept = present is not None and before is not None and before.vouches_for(present)
        if kept and present is not None and present.as_tuple() != newest.as_tuple():
            identities.append(present)
        return encode(Record(real, identities, sessions, kind), how, now)

    os.makedirs(folder, mode=0o700, exist_ok=True)
    atomic.update_file(target, transform, 0o600)
    return target


def forget(env: Mapping[str, str], path: str) -> None:
    """Drop the record of an anchor that was closed or moved (best effort: a stale record never matches)."""
    folder = trust_dir(env)
    if folder is None:
        return
    import contextlib

    from session_workflow.core.atomic import lock_path

    target = record_file(folder, os.path.realpath(path))
    for name in (target, lock_path(target)):
        with contextlib.suppress(OSError):
            os.unlink(name)


def adopt_command(path: str) -> str:
    """The one command that makes a hand-made or cloned anchor ours (printed wherever one is refused)."""
    return f"session-workflow anchor adopt {shell_quote(path)}"
