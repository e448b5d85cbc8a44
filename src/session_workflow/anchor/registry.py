"""Which anchors this machine's session-workflow made, and which sessions keep them: one record per anchor.

Repository content is data, never authority: an anchor's HEAD is injected with the plugin's framing only when
this record says our own writer (``new``, ``write``, ``step``) or an explicit ``anchor adopt`` produced the file
as it is now. The records live in the user's state dir (``core.places.Places.trust``), never under a project,
one small JSON file per anchor named after its real path, so the hook reads only the records of the files it
looks at and two writers of different anchors never contend.

The key is the file's identity as the writer left it: real path, device, inode, size and ``st_mtime_ns``. A file
that arrives by ``git clone``, ``git pull``, an unzip or a copy is a new inode written by another program at
another nanosecond, so it never matches, even at the same path; nor does a hand edit (adopt it again). The check
costs the hook nothing it does not already do (the listing's ``stat``). The record also keeps the SHA-256 of the
bytes the writer left: a file whose identity no longer matches but whose size does (``git stash`` and ``pop``, a
checkout, ``cp -p``, ``touch``, a backup put back) is read and hashed, and trusted when its bytes are the same
(``same_bytes``): a different file of that size never collides. The hook only trusts it for that run and writes
nothing (no lock on the hot path); the next writer (or ``adopt``, ``restore``) records the new identity. The
writer records the finished temp file's identity (a rename keeps inode, size and mtime) before
it renames it into place, under the anchor's lock, and keeps the identity before it too: a writer killed on
either side of the rename leaves a file the record still vouches for.

Each record also lists the sessions that wrote or adopted the anchor, newest first: the hook prefers the anchor
its own session keeps (``session affinity``) and names another session's live anchor as a parallel track. And it
holds the kind (live, parked, done) the writer found in the text it wrote: while the file is still that identity,
the hook ranks it without reading it, and reads only the anchor it injects.

Beside each record the writers keep a copy of the last version they wrote (``copy_of``: the whole file up to 64 KiB,
else its HEAD cut to 64 KiB, the most the hook ever reads of one), so ``anchor restore`` can put a deleted or
changed anchor back; and per session, the list of the anchors it keeps (``kept_by``), so the hook learns of one
that is gone without listing the records.
Hot-path safe (os, time, and ``core.jsonload``: no ``json`` import, the writer side's records included, which
the edit hook's re-vouch writes); the writer side imports ``core.atomic`` lazily.
"""

from __future__ import annotations

import os
import time

from session_workflow.anchor.text import LIVE, NOT_ANCHOR, split_head
from session_workflow.core.boundedio import read_prefix, read_prefix_and_stat
from session_workflow.core.folders import make_private, problem_line
from session_workflow.core.jsonload import dumps_indented, loads
from session_workflow.core.locations import KEPT_FOLDER, record_name
from session_workflow.core.text import escaped, shell_command

TYPE_CHECKING = False
if TYPE_CHECKING:
    from session_workflow.core.places import Places

VERSION = 1
MAX_RECORD_BYTES = 16 * 1024
MAX_SESSIONS = 8
MAX_IDENTITIES = 2
# The classification rules a recorded kind was found by (``anchor.text.AnchorText.kind``); a record of other rules
# tells the hook nothing, and it reads the file. Bump it with any change to how a HEAD is classified.
KIND_RULES = 1
# The hook hashes a file whose identity moved only up to this size (a larger one is named as changed: adopt it).
MAX_DIGEST_BYTES = 1 << 20
# The copy beside the record: the whole file when it fits, else its HEAD cut to this (``discover.HEAD_READ_BYTES``).
COPY_MAX_BYTES = 64 * 1024
# Anchors named in a session's list (newest first), and the bytes the hook reads of that list.
MAX_KEPT = 8
MAX_KEPT_BYTES = 64 * 1024
# The sessions' lists the doctor reads at most (the newest), to find a project's kept anchors from any shell.
MAX_INDEXES = 512
_HEX = frozenset("0123456789abcdef")


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
    (None when not recorded). Optional, so older records still hold: ``digest`` (SHA-256 hex of the newest
    identity's bytes), ``step`` (the step those bytes were at) and ``copy`` (the SHA-256 hex of the copy kept
    beside the record, and whether it is the whole file)."""

    __slots__ = ("copy", "digest", "identities", "kind", "path", "sessions", "step")

    def __init__(
        self,
        path: str,
        identities: list[Identity],
        sessions: list[str],
        kind: int | None = None,
        digest: str | None = None,
        step: int | None = None,
        copy: tuple[str, bool] | None = None,
    ) -> None:
        self.path = path
        self.identities = identities
        self.sessions = sessions
        self.kind = kind
        self.digest = digest
        self.step = step
        self.copy = copy

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
    step = document.get("step")
    copy = document.get("copy")
    return Record(
        real_path,
        identities,
        kept,
        _kind(document.get("kind")),
        _digest(document.get("sha256")),
        step if type(step) is int and step >= 0 else None,
        (copy[0], copy[1])
        if isinstance(copy, list) and len(copy) == 2 and _digest(copy[0]) and type(copy[1]) is bool
        else None,
    )


def _digest(value: object) -> str | None:
    """A SHA-256 hex digest as ``encode`` writes it, else None."""
    return value if isinstance(value, str) and len(value) == 64 and _HEX.issuperset(value) else None


def digest_of(data: bytes) -> str:
    """The SHA-256 of ``data`` (hex). ``hashlib`` is imported only here: the hook needs it only for a file whose
    identity moved while its size did not."""
    import hashlib

    return hashlib.sha256(data).hexdigest()


def same_bytes(record: Record, path: str, identity: Identity) -> bool:
    """True when the file at ``path``, of ``identity`` (not one the record names), holds exactly the bytes the
    record's newest identity held: same size, then the same SHA-256 (a file of the size read once, bounded)."""
    if record.digest is None or not record.identities or identity.size != record.identities[0].size:
        return False
    if identity.size > MAX_DIGEST_BYTES:
        return False
    read = read_prefix_and_stat(path, identity.size + 1)
    if read is None or Identity.of(read[1]).as_tuple() != identity.as_tuple():
        return False  # changed since the listing: not the file that was stat'ed
    return digest_of(read[0]) == record.digest


def trusts(record: Record | None, path: str, identity: Identity) -> bool:
    """The record vouches for the file as it is: its identity, or (moved) its very bytes."""
    return record is not None and (record.vouches_for(identity) or same_bytes(record, path, identity))


def _kind(value: object) -> int | None:
    """``[rules, kind]`` as ``encode`` writes it: the kind when found by this version's rules, else None."""
    if not isinstance(value, list) or len(value) != 2 or value[0] != KIND_RULES:
        return None
    kind = value[1]
    return kind if type(kind) is int and LIVE <= kind <= NOT_ANCHOR else None


TRUST_RECORDS = "anchors' trust records"


class Registry:
    """The trust records of one run, under ``places``' trust folder (``core.places.Places.trust``: resolved once,
    its ownership checked once, ``Places.foreign``): what the hook, the writers and ``doctor`` read and write."""

    __slots__ = ("_trusted", "places")

    def __init__(self, places: Places) -> None:
        self.places = places
        self._trusted: str | bool | None = False  # the trust folder when trusted, looked up at the first read

    def trusted_folder(self, folder: str | None = None) -> str | None:
        """The trust folder (or ``folder`` below it) when its records can be trusted: it and every folder above it up to
        the user's state root (or the home) are the user's alone (``Places.foreign``); else None. The trust folder's
        answer is kept: a hook that looks up the records of a hundred anchors checks the folder once."""
        if folder is None and self._trusted is not False:
            return self._trusted if isinstance(self._trusted, str) else None
        found = folder or self.places.trust
        trusted = found if found is not None and self.places.foreign(found) is None else None
        if folder is None:
            self._trusted = trusted
        return trusted

    def trust_problem(self) -> str | None:
        """The one line that says the trust records are not read, naming the folder and the fix (None: they are)."""
        folder = self.places.trust
        found = self.places.foreign(folder) if folder is not None else None
        return problem_line(TRUST_RECORDS, found) if found is not None else None

    def read(self, real_path: str) -> Record | None:
        """The record of the anchor at ``real_path`` (None: no record, no state dir, an unreadable one, or a trust
        folder not the user's alone: ``trusted_folder``)."""
        folder = self.trusted_folder()
        if folder is None:
            return None
        read_back = read_prefix(record_file(folder, real_path), MAX_RECORD_BYTES)
        if read_back is None or read_back[1] > MAX_RECORD_BYTES:
            return None
        return parse(read_back[0], real_path)

    def is_ours(self, path: str) -> bool:
        """True when the record vouches for ``path`` as it is now (this machine's writer or an adopt left it so)."""
        real = os.path.realpath(path)
        record = self.read(real)
        try:
            return trusts(record, real, Identity.of(os.stat(real)))
        except OSError:
            return False

    def changed_since(self, path: str) -> Record | None:
        """The record of ``path`` when the file changed since this machine's writers left it (None: no record, or the
        record still vouches for it): such an anchor is the run's own, never a stranger's."""
        real = os.path.realpath(path)
        record = self.read(real)
        if record is None:
            return None
        try:
            identity = Identity.of(os.stat(real))
        except OSError:
            return record
        return None if trusts(record, real, identity) else record

    def read_copy(self, record: Record) -> tuple[bytes, bool] | None:
        """(the copy's bytes, whole) when the copy the record names is there and still has its digest, else None."""
        folder = self.trusted_folder()
        if folder is None or record.copy is None:
            return None
        read_back = read_prefix(copy_file(folder, record.path, record.copy[0]), COPY_MAX_BYTES + 1)
        if read_back is None or read_back[1] > COPY_MAX_BYTES or digest_of(read_back[0]) != record.copy[0]:
            return None
        return read_back[0], record.copy[1]

    def kept_by(self, session: str | None) -> list[str]:
        """The real paths of the anchors ``session`` wrote or adopted, newest first (bounded; [] when none)."""
        index = self.places.kept_index(session) if session else None
        if index is not None and self.trusted_folder(os.path.dirname(index)) is None:
            return []
        read_back = read_prefix(index, MAX_KEPT_BYTES) if index is not None else None
        if read_back is None or read_back[1] > MAX_KEPT_BYTES:
            return []
        return _kept_paths(read_back[0])

    def kept_in(self, folder: str, session: str | None = None) -> list[str]:
        """The real paths in ``folder`` (a real anchors folder) that any session of this machine wrote or adopted,
        ``session``'s first, then by the newest lists (at most ``MAX_INDEXES`` lists read, each bounded): what the
        doctor checks from any shell, a terminal without a session id included. Not for the hook path (it lists)."""
        root = self.places.trust
        if root is None:
            return []
        lists = os.path.join(root, KEPT_FOLDER)
        try:
            with os.scandir(lists) as entries:
                found = [(entry.stat().st_mtime_ns, entry.path) for entry in entries if entry.name.endswith(".json")]
        except OSError:
            found = []
        own = self.places.kept_index(session) if session else None
        newest = sorted(found, reverse=True)[:MAX_INDEXES]
        ordered = ([own] if own else []) + [path for _mtime, path in newest if path != own]
        paths: list[str] = []
        for path in ordered:
            read_back = read_prefix(path, MAX_KEPT_BYTES)
            if read_back is None or read_back[1] > MAX_KEPT_BYTES:
                continue
            paths += [
                item for item in _kept_paths(read_back[0]) if os.path.dirname(item) == folder and item not in paths
            ]
        return paths

    def _keep(self, session: str, real: str) -> None:
        """Put ``real`` first in ``session``'s list of kept anchors (nothing is written when it already is)."""
        from session_workflow.core import atomic

        index = self.places.kept_index(session)
        if index is None or self.kept_by(session)[:1] == [real]:
            return

        def transform(current: bytes | None) -> bytes:
            listed = [real, *(item for item in _kept_paths(current) if item != real)][:MAX_KEPT]
            document = {"v": VERSION, "session": session, "anchors": listed}
            return (dumps_indented(document) + "\n").encode("ascii")

        make_private(os.path.dirname(index))
        atomic.update_file(index, transform, 0o600)

    def vouch(
        self,
        path: str,
        session: str | None,
        how: str,
        now: float,
        identity: Identity | None = None,
        kind: int | None = None,
        *,
        data: bytes | None = None,
        step: int | None = None,
    ) -> str:
        """Record that this machine's writer leaves ``path`` as ``identity`` holding ``data``, kept by ``session``,
        its text of ``kind`` at ``step``; the caller holds the anchor's lock, so no other writer changes the file
        meanwhile. Without ``identity`` the file is taken as it is now: its bytes and the ``fstat`` of the descriptor
        they were read from. A file the record already vouched for stays vouched for too, so a rename that never
        happens strands nothing.

        With the bytes, the record keeps their SHA-256 and the copy beside it (``copy_of``), and the session's list
        names the anchor. The copy and the list are written first and the record last: any failure raises before the
        record changes, so a writer that vouches before its rename leaves the file as it was. Returns the record file.
        Raises ``atomic.WriteError`` (one line) when there is no user state dir or it is not the user's alone (its
        records would not be trusted), ``OSError`` when a write fails.
        """
        import contextlib

        from session_workflow.core import atomic

        folder = self.places.trust
        if folder is None:
            raise atomic.WriteError("no user state dir (HOME is not set): cannot record that this anchor is ours")
        real = os.path.realpath(path)
        present = _present(real) if identity is not None else None
        if identity is None:
            read_back = read_prefix_and_stat(real, atomic.MAX_WRITER_READ_BYTES + 1)
            if read_back is None:
                raise atomic.WriteError(f"cannot read {escaped(real)} (gone, or not a regular file)")
            data, identity = read_back[0], Identity.of(read_back[1])
        newest = identity
        if data is not None and len(data) != newest.size:
            data = None  # not the bytes of that identity: no digest rather than a wrong one
        digest = digest_of(data) if data is not None else None
        kept = copy_of(data) if data is not None else None
        copy = (digest if kept[1] else digest_of(kept[0]), kept[1]) if kept is not None and digest is not None else None
        target = record_file(folder, real)
        problem = self.trust_problem()
        if problem is not None:
            raise atomic.WriteError(problem)
        make_private(folder)
        made = None
        if kept is not None and copy is not None:
            made = copy_file(folder, real, copy[0])
            if not atomic.link_new(made, kept[0], 0o600):
                made = None  # that very copy is already there (its name is its digest)
        dropped: list[str] = []

        def transform(current: bytes | None) -> bytes:
            before = parse(current, real) if current is not None else None
            sessions = kept_sessions(before.sessions if before is not None else [], session)
            identities = [newest]
            still = present is not None and before is not None and trusts(before, real, present)
            if still and present is not None and present.as_tuple() != newest.as_tuple():
                identities.append(present)
            if before is not None and before.copy is not None and (copy is None or before.copy[0] != copy[0]):
                dropped[:] = [copy_file(folder, real, before.copy[0])]
            return encode(Record(real, identities, sessions, kind, digest, step, copy), how, now)

        try:
            if session:
                self._keep(session, real)
            atomic.update_file(target, transform, 0o600)
        except BaseException:
            if made is not None:
                with contextlib.suppress(OSError):
                    os.unlink(made)
            raise
        for name in dropped:
            with contextlib.suppress(OSError):
                os.unlink(name)
        return target

    def forget(self, path: str, strict: bool = False) -> None:
        """Drop the record of an anchor that was closed or moved, its lock and its copy. Best effort unless
        ``strict`` (``close``): then a record that cannot be removed raises ``OSError`` (a stale record would call the
        closed anchor gone)."""
        folder = self.places.trust
        if folder is None:
            return
        import contextlib

        from session_workflow.core.atomic import lock_path

        real = os.path.realpath(path)
        target = record_file(folder, real)
        record = self.read(real)
        copy = [copy_file(folder, real, record.copy[0])] if record is not None and record.copy is not None else []
        try:
            os.unlink(target)
        except (FileNotFoundError, NotADirectoryError):
            pass  # no record there to go stale
        except OSError:
            if strict:
                raise
        for name in (lock_path(target), *copy):
            with contextlib.suppress(OSError):
                os.unlink(name)


def encode(record: Record, how: str, now: float) -> bytes:
    """The record's bytes (``how``: the writer that produced the file, for a person reading the folder)."""
    document = {
        "v": VERSION,
        "path": record.path,
        "ids": [list(identity.as_tuple()) for identity in record.identities],
        "sessions": record.sessions,
        **({"kind": [KIND_RULES, record.kind]} if record.kind is not None else {}),
        **({"sha256": record.digest} if record.digest is not None else {}),
        **({"step": record.step} if record.step is not None else {}),
        **({"copy": list(record.copy)} if record.copy is not None else {}),
        "by": how,
        "at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(now)),
    }
    return (dumps_indented(document) + "\n").encode("ascii")


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


def copy_of(data: bytes) -> tuple[bytes, bool]:
    """What is kept of an anchor outside the repository, and whether it is the whole file: all of it up to 64 KiB,
    else its HEAD (the lines above the TAIL marker) cut at a line end to 64 KiB, all the hook would ever inject."""
    if len(data) <= COPY_MAX_BYTES:
        return data, True
    head = split_head(data.decode("utf-8", "surrogateescape"))[0].encode("utf-8", "surrogateescape")
    if len(head) > COPY_MAX_BYTES:
        head = head[:COPY_MAX_BYTES]
        head = head[: head.rindex(b"\n") + 1] if b"\n" in head else head
    return head, False


def copy_file(folder: str, real_path: str, digest: str) -> str:
    """The copy's file beside the record, named by its digest: a record never names a copy another write replaced."""
    return record_file(folder, real_path)[: -len(".json")] + f".{digest[:16]}.copy"


def _kept_paths(data: bytes | None) -> list[str]:
    if data is None:
        return []
    try:
        document = loads(data)
    except (ValueError, RecursionError):
        return []
    listed = document.get("anchors") if isinstance(document, dict) and document.get("v") == VERSION else None
    if not isinstance(listed, list):
        return []
    return [item for item in listed[:MAX_KEPT] if isinstance(item, str) and os.path.isabs(item)]


def restore_command(path: str, force: bool = False) -> str:
    """The command that puts back the last version this machine's writers left of an anchor."""
    return shell_command("session-workflow", "anchor", "restore", *(["--force"] if force else []), path)


# Said wherever an anchor of ours changed outside the writers is named: after a `git pull` overwrote the ignored
# anchor (or a checkout, an editor), the file still has the run's name and place, but none of its bytes are the run's.
CHANGED_CAUTION = (
    "the bytes there now are not the run's (another program wrote them: a git pull, a checkout, an editor)"
)


def changed_advice(path: str, step: int | None) -> str:
    """What to do about an anchor of ours changed outside the writers: know its bytes are not the run's, read it,
    then keep it or put ours back."""
    back = f"step {step}" if step is not None else "the last version written here"
    show = shell_command("session-workflow", "anchor", "show", path)
    return (
        f"{CHANGED_CAUTION}: read it with `{show}`, then keep it with `{adopt_command(path)}` only if it is the"
        f" run's to continue, or put {back} back with `{restore_command(path, True)}`"
    )


def adopt_command(path: str) -> str:
    """The one command that makes a hand-made or cloned anchor ours (printed wherever one is refused)."""
    return shell_command("session-workflow", "anchor", "adopt", path)
