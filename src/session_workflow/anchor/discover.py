"""Finding the open anchors of a project: list the folder, read and classify files on demand, rank them.

Reads are bounded: a HEAD is read up to what an 8,000-unit budget can use plus a margin for naming what was
dropped, and open files are read newest first only until the choice and the names the block shows are settled
(at most ``MAX_CLASSIFIED``). Ranking needs only each file's kind, which ``AnchorText.from_bytes`` finds in its
HEAD without splitting it into sections. Symlinks that lead out of the anchors folder are never followed.
"""

from __future__ import annotations

import os
import stat

from session_workflow.anchor.registry import Identity, Record
from session_workflow.anchor.text import (
    LIVE,
    NOT_ANCHOR,
    AnchorText,
    split_head,
)
from session_workflow.core.boundedio import read_prefix, read_prefix_as
from session_workflow.core.locations import anchors_dir, resolves_inside
from session_workflow.core.text import cut_utf16, one_line

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Collection
    from typing import Optional

    # (-mtime, name, real path or None, stat): an alias, evaluated on 3.9: no ``str | None``
    Listed = tuple[float, str, Optional[str], os.stat_result]


# A HEAD is read in two steps: most anchors end (or reach their tail marker) within the first read; a larger
# HEAD is read up to what the 8,000-unit budget can use (at most 3 bytes a unit) plus room to name what it drops.
FIRST_READ_BYTES = 16 * 1024
HEAD_READ_BYTES = 64 * 1024
# Directory entries looked at, and open files read to classify them (newest first); the rest are only counted.
MAX_LISTED = 10_000
MAX_CLASSIFIED = 100
TITLE_CAP = 120
OTHERS_NAMED = 5
_DIR_FLAGS = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)


class Candidate:
    """One open anchor file: found by the listing, read and classified on demand.

    ``real`` is its resolved path (inside its anchors folder) and ``identity`` what ``stat`` said of it, which
    the trust registry compares; ``record`` is that registry entry once looked up, and ``recorded_kind`` the kind
    it holds for this very identity, which ranks the file without reading it (``load`` reads it when chosen).
    """

    __slots__ = ("anchor", "identity", "mtime", "name", "path", "real", "record", "recorded_kind")

    def __init__(
        self,
        path: str,
        mtime: float,
        name: str | None = None,
        real: str | None = None,
        identity: Identity | None = None,
    ) -> None:
        self.path = path
        self.name = os.path.basename(path) if name is None else name
        self.mtime = mtime
        self.real = path if real is None else real
        self.identity = identity
        self.anchor: AnchorText | None = None
        self.record: Record | None = None
        self.recorded_kind: int | None = None

    @property
    def kind(self) -> int:
        if self.anchor is not None:
            return self.anchor.kind
        return self.recorded_kind if self.recorded_kind is not None else NOT_ANCHOR

    def load(self) -> bool:
        """Read the HEAD if it was ranked by its recorded kind alone; False when the file is gone, unreadable, or no
        longer the identity the listing saw (and the registry vouched for)."""
        if self.anchor is None:
            identity = self.identity.as_tuple() if self.identity is not None else None  # what the trust check saw
            self.anchor = head_of(lambda size: read_prefix_as(self.path, size, identity))
        return self.anchor is not None

    def title(self) -> str:
        """The anchor's title on one line, or its file name when it has none."""
        title = self.anchor.title if self.anchor is not None else None
        return cut_utf16(one_line(title or "") or self.name, TITLE_CAP)


def is_open_name(name: str) -> bool:
    """An open anchor's file name: ``*.md`` but not ``*.closed.md`` nor hidden (editor locks, temp files)."""
    return name.endswith(".md") and not name.endswith(".closed.md") and not name.startswith(".")


def list_open(folder: str) -> list[Candidate]:
    """The regular ``*.md`` files of an anchors folder that are not closed, newest first (ties by name).

    A symlink is followed only to a file inside the same folder; loops, dangling links, links elsewhere,
    directories, FIFOs and devices are skipped.
    """
    return _candidates(folder, *_open_files(folder))


def _open_files(folder: str, kept: Collection[str] = ()) -> tuple[str, list[Listed]]:
    """The folder's real path, and (-mtime, name, real path or None, stat) of each open anchor, sorted:
    ``list_open`` without the Candidates; the files among ``kept`` (real paths: the session's own anchors) first,
    looked at by name even past ``MAX_LISTED``, so no number of other files or mtimes pushes them out.

    Where the platform allows, the folder is listed through a descriptor, so each stat resolves one name
    instead of the whole path. Only a symlink pays for resolving its target (its real path is kept); a plain
    file's real path and identity are made only for the files that become Candidates. A plain file is taken in
    the loop itself, with no call per entry: a folder of 1,000 anchors spends its time in their ``stat`` calls.
    """
    found: list[Listed] = []
    try:
        real_folder = os.path.realpath(folder)
        listing: int | str = os.open(folder, _DIR_FLAGS) if os.scandir in os.supports_fd else folder
    except (OSError, ValueError):
        return folder, []
    own = {os.path.basename(real) for real in kept if os.path.dirname(real) == real_folder}
    try:
        with os.scandir(listing) as entries:
            for count, entry in enumerate(entries):
                if count >= MAX_LISTED:
                    break
                name = entry.name
                if not is_open_name(name) or name in own:  # the session's own: looked at below, by name
                    continue
                try:  # one entry that cannot be looked at costs only itself
                    link = entry.is_symlink()
                    info = None if link else entry.stat()
                except (OSError, ValueError):
                    continue
                if info is None:  # a link: resolved by name
                    listed = _listed(folder, real_folder, name)
                    if listed is not None:
                        found.append(listed)
                elif stat.S_ISREG(info.st_mode):
                    found.append((-info.st_mtime, name, None, info))
    except (OSError, ValueError):
        return real_folder, []
    finally:
        if isinstance(listing, int):
            os.close(listing)
    found.sort()
    first = [listed for listed in (_listed(folder, real_folder, name) for name in own) if listed is not None]
    return real_folder, sorted(first) + found


def _listed(folder: str, real_folder: str, name: str) -> Listed | None:
    """One file as ``_open_files`` keeps it, looked up by name (a session's own anchor, or a link the listing
    met), or None: not an open anchor's name, gone, not a regular file, or a link out of the folder."""
    if not is_open_name(name):
        return None
    path = os.path.join(folder, name)
    real = None
    try:
        info = os.stat(path)
        if os.path.islink(path):
            real = os.path.realpath(path)
            if os.path.dirname(real) != real_folder:
                return None
    except (OSError, ValueError):
        return None
    return (-info.st_mtime, name, real, info) if stat.S_ISREG(info.st_mode) else None


def _candidates(folder: str, real_folder: str, files: list[Listed]) -> list[Candidate]:
    prefix, real_prefix = os.path.join(folder, ""), os.path.join(real_folder, "")
    return [
        Candidate(prefix + name, -negative_mtime, name, real or real_prefix + name, Identity.of(info))
        for negative_mtime, name, real, info in files
    ]


def read_anchor(path: str, max_bytes: int = HEAD_READ_BYTES) -> AnchorText | None:
    """Read a HEAD boundedly: a first small read, a second one only when the marker was not reached."""
    return head_of(lambda size: _read_bytes(path, size), max_bytes)


def head_of(read: Callable[[int], tuple[bytes, bool] | None], max_bytes: int = HEAD_READ_BYTES) -> AnchorText | None:
    """The HEAD as the hook sees it, from ``read(n)``: up to ``n`` bytes from the start, and whether more follow."""
    first = read(min(FIRST_READ_BYTES, max_bytes))
    if first is None:
        return None
    data, truncated = first
    if truncated and max_bytes > FIRST_READ_BYTES and split_head(data.decode("utf-8", "replace"))[1] is None:
        second = read(max_bytes)
        if second is None:
            return None
        data, truncated = second
    if truncated and b"\n" in data:
        data = data[: data.rindex(b"\n") + 1]  # the last line was cut by the read
    return AnchorText.from_bytes(data, truncated)


def kind_of_bytes(data: bytes) -> int:
    """The kind the hook finds in an anchor file holding ``data``: what a writer records beside its identity."""
    anchor = head_of(lambda size: (data[:size], len(data) > size))
    return anchor.kind if anchor is not None else NOT_ANCHOR


def _read_bytes(path: str, max_bytes: int) -> tuple[bytes, bool] | None:
    read = read_prefix(path, max_bytes)
    if read is None:
        return None
    data, size = read
    return data, size > len(data)


def rank(candidates: list[Candidate]) -> list[Candidate]:
    """Candidates in listing order (newest first), stably re-ranked live < parked < done < not anchor-shaped."""
    return sorted(candidates, key=lambda candidate: candidate.kind)


class DirScan:
    """The open anchors of one anchors folder, ranked; files past the classification cap only counted.

    ``untrusted`` are the open files the registry does not vouch for: never read, only named.
    """

    __slots__ = ("directory", "folder", "ranked", "total", "untrusted")

    def __init__(
        self,
        directory: str,
        folder: str,
        ranked: list[Candidate],
        total: int,
        untrusted: list[Candidate] | None = None,
    ) -> None:
        self.directory = directory
        self.folder = folder
        self.ranked = ranked
        self.total = total
        self.untrusted = untrusted or []


def scan_folder(
    folder: str,
    directory: str,
    classify: bool = True,
    limit: int | None = None,
    vouch: Callable[[Candidate], bool] | None = None,
    kept: Collection[str] = (),
) -> DirScan | None:
    """The open anchors of ``folder``, read and ranked (or, unclassified, only listed); None when none.

    Without ``limit`` (the hook) at most ``MAX_CLASSIFIED`` files are read, newest first, and reading stops once
    the ranking's head is settled: when ``OTHERS_NAMED`` + 1 live anchors are found, the chosen one and every
    name the block shows are live. With ``limit`` (the reports) up to that many files are all read. Files that
    vanish or turn unreadable between the listing and the read are left out. With ``vouch`` (the hooks) a file
    it refuses is not read at all and lands in ``untrusted``, and one it ranks by its record's kind (the hook's
    ``Trust``; the reports, which show every file's title, rank by text) is not read either: ``select`` reads the
    one it chooses. The files among ``kept`` (the session's own anchors, real paths) are looked at first, so no
    number of other files and no mtime keeps them out of the files read.
    """
    real_folder, listed = _open_files(folder, kept)
    if not classify:
        return DirScan(directory, folder, _candidates(folder, real_folder, listed), len(listed)) if listed else None
    readable: list[Candidate] = []
    untrusted: list[Candidate] = []
    unreadable = live = 0
    for candidate in _candidates(folder, real_folder, listed[: limit or MAX_CLASSIFIED]):
        if vouch is not None and not vouch(candidate):
            untrusted.append(candidate)
            continue
        if candidate.recorded_kind is None and not candidate.load():
            unreadable += 1
            continue
        readable.append(candidate)
        live += candidate.kind == LIVE
        if live > OTHERS_NAMED and limit is None and candidate.real not in kept:  # the session's own all read
            break
    total = len(listed) - unreadable - len(untrusted)
    if not readable and not untrusted:
        return None
    readable.sort(key=lambda candidate: (-candidate.mtime, candidate.name))  # the session's own were read first
    return DirScan(directory, folder, rank(readable), total, untrusted)


def scan_dir(
    directory: str,
    classify: bool = True,
    vouch: Callable[[Candidate], bool] | None = None,
    kept: Collection[str] = (),
) -> DirScan | None:
    """The open anchors of a project directory (see ``scan_folder``); an anchors folder that resolves outside
    the project is not looked at."""
    folder = anchors_dir(directory)
    if not resolves_inside(folder, directory):
        return None
    return scan_folder(folder, directory, classify, vouch=vouch, kept=kept)


def chosen_scan(
    directories: list[str], vouch: Callable[[Candidate], bool] | None = None, kept: Collection[str] = ()
) -> tuple[DirScan | None, list[DirScan | None]]:
    """The first directory (best first) with a readable open anchor, classified; the others only listed."""
    scans: list[DirScan | None] = []
    chosen: DirScan | None = None
    for directory in directories:
        scan = scan_dir(directory, classify=chosen is None, vouch=vouch, kept=kept)
        if chosen is None and scan is not None and (scan.ranked or vouch is None):
            chosen = scan
        scans.append(scan)
    return chosen, scans
