"""Which anchor a session gets: the registry's trust view for one hook run, the tiers the source admits, the
session's own anchor (its affinity), and the parallel tracks other sessions keep."""

from __future__ import annotations

import os

from session_workflow.anchor import registry
from session_workflow.anchor.age import FUTURE_SLACK_SECONDS, tier_for
from session_workflow.anchor.discover import OTHERS_NAMED, chosen_scan
from session_workflow.anchor.registry import Identity
from session_workflow.anchor.text import (
    LIVE,
)
from session_workflow.core import config

TYPE_CHECKING = False
if TYPE_CHECKING:
    from session_workflow.anchor.discover import Candidate, DirScan
    from session_workflow.core.context import HookContext


# The bytes one look at a folder may hash to trust moved anchors (each at most ``registry.MAX_DIGEST_BYTES``): a
# folder of 100 moved anchors of ours costs at most this much reading; past it, a moved one is named as changed.
HASH_BUDGET_BYTES = 4 << 20


class Trust:
    """The registry's view for one hook run: does this machine's writer (or an adopt) vouch for a file as it is?

    ``by_record``: a file still of the identity its record names is ranked by the kind recorded there, unread.
    ``budget``: the bytes still to hash for files whose identity moved (``HASH_BUDGET_BYTES`` in all).
    """

    __slots__ = ("budget", "by_record", "records")

    def __init__(self, records: registry.Registry, by_record: bool = True) -> None:
        self.records = records
        self.by_record = by_record
        self.budget = HASH_BUDGET_BYTES

    def vouch(self, candidate: Candidate) -> bool:
        """True when the record vouches for the file: by its identity, or (moved: a stash and pop, a checkout, a
        copy kept with ``cp -p``) by its very bytes, which have the kind recorded for them. A file whose record
        no longer vouches for it keeps that record in ``candidate.record``: it is the run's own, changed."""
        if candidate.identity is None:
            return False
        record = candidate.record = self.records.read(candidate.real)
        if record is None:
            return False
        if record.vouches_for(candidate.identity):
            if self.by_record:
                candidate.recorded_kind = record.kind_of(candidate.identity)
            return True
        size = candidate.identity.size
        if size > self.budget or not registry.same_bytes(record, candidate.real, candidate.identity):
            return False
        self.budget -= size
        if self.by_record:
            candidate.recorded_kind = record.kind
        return True


class Selection:
    """The anchor a session start (or PreCompact) gets, the parallel tracks beside it, the untrusted files, and the
    real paths of the anchors the session keeps (``kept``)."""

    __slots__ = ("chosen", "kept", "scan", "scans", "tracks", "untrusted")

    def __init__(
        self,
        scan: DirScan | None,
        scans: list[DirScan | None],
        chosen: Candidate | None,
        tracks: list[Candidate],
        untrusted: list[Candidate],
        kept: list[str],
    ) -> None:
        self.scan = scan
        self.scans = scans
        self.chosen = chosen
        self.tracks = tracks
        self.untrusted = untrusted
        self.kept = kept


def is_future(candidate: Candidate, now: float) -> bool:
    """An mtime past the hook's clock (a skewed clock, a crafted file): it may never outrank a present one."""
    return candidate.mtime > now + FUTURE_SLACK_SECONDS


def startup_window(ctx: HookContext) -> float:
    """The startup window in seconds (6 h unless the ``startup_window_hours`` option says otherwise)."""
    return ctx.places.hours(config.STARTUP_WINDOW_HOURS) * 3600


def idle_seconds(ctx: HookContext) -> float:
    """How long a resumed or forked conversation sat idle since its last reply (0 for any other source).

    Such a conversation is as current as its last reply: an anchor updated shortly before that reply is the run's
    live state however long the session then sat idle, so the tiers count the anchor's age from the last reply,
    not from now. The block still shows the true age.
    """
    return (ctx.idle_seconds or 0.0) if ctx.source in ("resume", "fork") else 0.0


def select(ctx: HookContext, by_record: bool = True) -> Selection:
    """Choose the anchor for this session: trusted files only; among those that the source's tier admits, the
    one this session keeps (the registry's affinity), else the best ranked (live, then newest first).

    ``resume`` and ``compact`` keep the session id, so affinity is exact there. A ``/clear`` or a fork gets a new
    id, and nothing at hook time ties it to the old one (measured on 2.1.332: the new transcript does not exist
    yet when SessionStart and PreCompact run), so it starts newest first until its first write records it.

    The anchors the session keeps (its list in the registry) are looked at first, whatever else the folder holds.
    A live anchor whose newest keeper is another session is a parallel track. Files with a future mtime rank
    after present ones of their kind. Files are ranked by the kinds their records hold, unread (``by_record``); when
    the chosen one, finally read, is gone, unreadable or of another kind, every file is read and ranked by its text.
    """
    records = registry.Registry(ctx.places)
    kept = records.kept_by(ctx.session_id)
    scan, scans = chosen_scan(ctx.project_dirs(), Trust(records, by_record).vouch, kept)
    window = startup_window(ctx)
    idle = idle_seconds(ctx)
    untrusted = [
        candidate
        for found in scans
        if found is not None
        for candidate in found.untrusted
        if tier_for(ctx.source, ctx.now - candidate.mtime - idle, False, window) is not None
    ]
    if scan is None:
        return Selection(None, scans, None, [], untrusted, kept)
    scan.ranked.sort(key=lambda candidate: (candidate.kind, is_future(candidate, ctx.now)))
    eligible = [c for c in scan.ranked if tier_for(ctx.source, ctx.now - c.mtime - idle, False, window) is not None]
    session = ctx.session_id
    mine = [c for c in eligible if session and c.record is not None and session in c.record.sessions]
    chosen = mine[0] if mine else (eligible[0] if eligible else None)
    tracks = [
        c
        for c in scan.ranked
        if mine
        and c is not chosen
        and c.kind == LIVE
        and c.record is not None
        and c.record.sessions
        and session not in c.record.sessions
    ]
    shown = [*scan.ranked[: OTHERS_NAMED + 1], *tracks[:OTHERS_NAMED]]
    if chosen is not None and chosen.anchor is None:
        ranked_as = chosen.kind
        if not _unchanged(chosen) or not chosen.load() or chosen.kind != ranked_as:
            # Not what its record said (gone, unreadable, or other text since the listing): it was ranked, and
            # counted among the live ones that end the scan, by that record, so rank every file by its text instead.
            return select(ctx, by_record=False)
    if not all(_unchanged(candidate) for candidate in shown):
        return select(ctx, by_record=False)  # a file the block would name is gone or changed since the listing
    return Selection(scan, scans, chosen, tracks, untrusted, kept)


def _unchanged(candidate: Candidate) -> bool:
    """A file ranked unread, by its record, is still there and still the identity the listing saw (one stat)."""
    if candidate.anchor is not None:
        return True
    try:
        info = os.stat(candidate.path)
    except (OSError, ValueError):
        return False
    return candidate.identity is not None and Identity.of(info).as_tuple() == candidate.identity.as_tuple()
