"""Realistic on-disk workloads for the hook benchmarks: projects, Claude Code config dirs, transcripts, tasks.

Everything is generated under one folder and cached there (``manifest.json`` names the generator version, the
sizes and the folder), because the 200 MB transcripts and the tens of thousands of small files take a while
to write. Transcripts are built from the real Claude Code records in ``tests/fixtures/transcripts`` (paths and
session ids rewritten), plus large tool results and request blobs, written in big blocks. Anchors follow
``references/anchor-format.md``; task files follow Claude Code's task store; the work state is encoded by the
writer's own ``encode``.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import sys
import time
import uuid

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "src"))

from session_workflow.core.deps import add_vendored  # noqa: E402

add_vendored()  # the writers' filelock, as bin/session-workflow has it: the benchmark needs nothing installed

from session_workflow.anchor import registry  # noqa: E402
from session_workflow.anchor.discover import MAX_CLASSIFIED  # noqa: E402
from session_workflow.anchor.writer import vouch_as_read  # noqa: E402
from session_workflow.core.jsonload import dumps_flat_object  # noqa: E402
from session_workflow.core.ledger import LEDGER_ROTATED  # noqa: E402
from session_workflow.core.places import Places  # noqa: E402
from session_workflow.core.where import project_slug  # noqa: E402
from session_workflow.workstate.section import WorkState  # noqa: E402
from session_workflow.workstate.writer import encode  # noqa: E402

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence
    from typing import Any

# 8: the resume scenario on its own copy of the full transcript; 7: no .highwatermark in a list only created into
# (2.1.332's); the ledgers of `log`
GENERATOR_VERSION = 9
# An assistant's answer, as a transcript record's message.
ANSWER = {"role": "assistant", "content": [{"type": "text", "text": "Resumed: carrying on from the cursor."}]}
KB = 1 << 10
MB = 1 << 20
# A test log's size in the run record's text-heavy case.
LOG_BYTES = 20 * KB
FIXTURES = os.path.join(ROOT, "tests", "fixtures", "transcripts")
FIXTURE_PROJECT = "/home/user/proj"
FIXTURE_CONFIG = "/home/user/.claude"
SEED = 20261129

# What the verification looks for in the hook output, so a timing is never of a hook that silently did nothing.
ANCHOR_TITLE = "Move billing to the ledger (bench)"
STATE_TITLE = "Bench: migrate invoices to the ledger"
TASK_SUBJECT = "Bench task"
LAST_PROMPT = "prompt five: this one triggers auto compaction"


class Sizes:
    """How big each workload is; ``FULL`` is the issue's, ``TINY`` keeps the smoke test to seconds."""

    __slots__ = (
        "anchorless_siblings",
        "compact_transcripts",
        "full_tasks",
        "growth_counts",
        "growth_transcript",
        "head_bytes",
        "hundredfold",
        "hundredfold_transcript",
        "ledger_counts",
        "record_actions",
        "record_log_actions",
        "scale_anchors",
        "scale_records",
        "scale_siblings",
        "scale_tasks",
        "scale_transcripts",
        "tail_bytes",
    )

    def __init__(
        self,
        *,
        compact_transcripts: Sequence[int],
        scale_transcripts: Sequence[int],
        growth_counts: Sequence[int],
        scale_anchors: int,
        scale_tasks: int,
        scale_siblings: int,
        scale_records: int,
        growth_transcript: int = 64 * KB,
        full_tasks: int = 40,
        anchorless_siblings: int = 20,
        head_bytes: int = 8 * KB,
        tail_bytes: int = 40 * KB,
        record_actions: int = 2_000,
        record_log_actions: int = 300,
        ledger_counts: Sequence[int] = (10, 1_000),
        hundredfold: Sequence[int] = (1, 100),
        hundredfold_transcript: int = 2 * MB,
    ) -> None:
        self.compact_transcripts = tuple(compact_transcripts)
        self.scale_transcripts = tuple(scale_transcripts)
        self.growth_counts = tuple(growth_counts)
        self.growth_transcript = growth_transcript
        self.scale_anchors = scale_anchors
        self.scale_tasks = scale_tasks
        self.scale_siblings = scale_siblings
        self.scale_records = scale_records
        self.full_tasks = full_tasks
        self.anchorless_siblings = anchorless_siblings
        self.head_bytes = head_bytes
        self.tail_bytes = tail_bytes
        self.record_actions = record_actions
        self.record_log_actions = record_log_actions
        self.ledger_counts = tuple(ledger_counts)
        self.hundredfold = tuple(hundredfold)
        self.hundredfold_transcript = hundredfold_transcript

    def as_dict(self) -> dict[str, object]:
        return {name: getattr(self, name) for name in self.__slots__}


FULL = Sizes(
    compact_transcripts=(2 * MB, 20 * MB, 200 * MB),
    scale_transcripts=(2 * MB, 20 * MB, 200 * MB),
    growth_counts=(1, 100, 1_000, 10_000, 100_000),
    scale_anchors=1_000,
    scale_tasks=5_000,
    scale_siblings=100_000,
    scale_records=10_000,
)
TINY = Sizes(
    compact_transcripts=(8 * KB, 32 * KB, 128 * KB),
    scale_transcripts=(8 * KB, 32 * KB, 128 * KB),
    growth_counts=(1, 3, 30),
    scale_anchors=12,
    scale_tasks=60,
    scale_siblings=40,
    scale_records=20,
    growth_transcript=16 * KB,
    anchorless_siblings=3,
    record_actions=50,
    record_log_actions=10,
    ledger_counts=(2, 20),
    hundredfold=(1, 2),
    hundredfold_transcript=8 * KB,
)
# The dimensions the growth table varies one at a time, each from 1 to 100,000 (see ``generate``), anchors only
# up to the 10,000 directory entries the anchor part looks at (past them it sees the first 10,000 listed).
GROWTH_DIMENSIONS = ("anchors", "tasks", "siblings", "records")
GROWTH_LIMITS = {"anchors": 10_000}


class Session:
    """One Claude Code session as a hook payload names it: its project, config dir, id and transcript."""

    __slots__ = ("config", "project", "session_id", "transcript")

    def __init__(self, project: str, config: str, session_id: str, transcript: str) -> None:
        self.project = project
        self.config = config
        self.session_id = session_id
        self.transcript = transcript

    def as_list(self) -> list[str]:
        return [self.project, self.config, self.session_id, self.transcript]


class Workload:
    """Where everything is; rebuilt from ``manifest.json`` when the cache is reused."""

    __slots__ = (
        "anchorless",
        "compact",
        "growth",
        "home",
        "hundred_compact",
        "hundred_startup",
        "moved",
        "plugin_data",
        "record",
        "record_logs",
        "resumed",
        "root",
        "scale",
        "writer",
        "writer_anchor",
    )

    def __init__(self, root: str) -> None:
        self.root = root
        self.home = os.path.join(root, "home")
        self.plugin_data = os.path.join(root, "plugin-data")
        self.anchorless: Session | None = None
        # One anchor whose record names other identities than the file's: the hook hashes it (same bytes).
        self.moved: Session | None = None
        # The full compact's state on its largest transcript, ``record_actions`` actions after an anchor step.
        self.record: Session | None = None
        # The same on a small transcript, ``record_log_actions`` actions each printing a test log (``LOG_BYTES``).
        self.record_logs: Session | None = None
        # The full compact's session resumed: its own copy of the smallest transcript, one answer longer.
        self.resumed: Session | None = None
        self.compact: dict[int, Session] = {}
        self.scale: dict[int, Session] = {}
        # dimension → count → session; each session's plugin data is ``plugin_data_of(session)``.
        self.growth: dict[str, dict[int, Session]] = {}
        self.writer: Session | None = None
        self.writer_anchor = ""
        # Issue 42's 1× and 100× (factor → session): ``10·f`` anchors, ``100·f`` task files, ``5·f`` siblings, a
        # ``2·f`` MB transcript, ``10·f`` ledger entries; the compact session keeps the list, the startup one
        # (another config dir, same project and home) recovers its predecessor's.
        self.hundred_compact: dict[int, Session] = {}
        self.hundred_startup: dict[int, Session] = {}

    def sessions(self) -> dict[str, object]:
        def table(sessions: dict[int, Session]) -> dict[str, list[str]]:
            return {str(size): session.as_list() for size, session in sessions.items()}

        return {
            "anchorless": self.anchorless.as_list() if self.anchorless else None,
            "moved": self.moved.as_list() if self.moved else None,
            "record": self.record.as_list() if self.record else None,
            "record_logs": self.record_logs.as_list() if self.record_logs else None,
            "resumed": self.resumed.as_list() if self.resumed else None,
            "compact": table(self.compact),
            "scale": table(self.scale),
            "growth": {dimension: table(sessions) for dimension, sessions in self.growth.items()},
            "writer": self.writer.as_list() if self.writer else None,
            "writer_anchor": self.writer_anchor,
            "hundred_compact": table(self.hundred_compact),
            "hundred_startup": table(self.hundred_startup),
        }

    @classmethod
    def from_manifest(cls, root: str, sessions: dict[str, Any]) -> Workload:
        workload = cls(root)

        def table(entries: dict[str, list[str]]) -> dict[int, Session]:
            return {int(size): Session(*fields) for size, fields in entries.items()}

        workload.anchorless = Session(*sessions["anchorless"])
        workload.moved = Session(*sessions["moved"])
        workload.record = Session(*sessions["record"])
        workload.record_logs = Session(*sessions["record_logs"])
        workload.resumed = Session(*sessions["resumed"])
        workload.compact = table(sessions["compact"])
        workload.scale = table(sessions["scale"])
        workload.growth = {dimension: table(entries) for dimension, entries in sessions["growth"].items()}
        workload.writer = Session(*sessions["writer"])
        workload.writer_anchor = str(sessions["writer_anchor"])
        workload.hundred_compact = table(sessions["hundred_compact"])
        workload.hundred_startup = table(sessions["hundred_startup"])
        return workload


def transcript_path(config: str, project: str, session_id: str) -> str:
    return os.path.join(config, "projects", project_slug(project), f"{session_id}.jsonl")


def session_id(rng: random.Random) -> str:
    return str(uuid.UUID(int=rng.getrandbits(128), version=4))


def write_bytes(path: str, data: bytes) -> None:
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as handle:
        handle.write(data)


# --- anchors -----------------------------------------------------------------------------------------------

_VERBS = ("port", "verify", "backfill", "migrate", "review", "benchmark", "document", "retire")
_THINGS = ("invoice writer", "ledger client", "refund path", "tax report", "billing_v1 reads", "webhook retry")


def _phrase(index: int) -> str:
    return f"{_VERBS[index % len(_VERBS)]} the {_THINGS[index % len(_THINGS)]}"


def anchor_text(
    title: str, head_bytes: int, tail_bytes: int, *, steps: int = 24, status: str | None = None, parked: str = ""
) -> str:
    """An ``anchor/v1`` file: a HEAD of about ``head_bytes`` (cursor, invariants and last-known-good grow to fill
    it), the tail marker, then a Decisions log and Folded history of about ``tail_bytes``."""
    front = ["---", "format: anchor/v1", "date: 2026-11-28", f"task: {title}", f"step: {steps}"]
    front += ["source: session-workflow anchor new (session bench)"]
    if parked:
        front.append(f"parked: {parked}")
    front.append("---")
    top = [*front, "", f"# {title}", ""]
    if status:
        top += [f"**Status:** {status}", ""]
    mission = [
        "## Mission",
        "Move every invoice write from `billing_v1` to the ledger API with no downtime; keep a dual-write until",
        'phase 3. User rule U1 (verbatim): "never run the backfill against production without a dry-run first".',
        "",
    ]
    cursor = [
        f"- Step {step}: done: {_phrase(step)}; next: {_phrase(step + 1)} (see log/{step}.txt)"
        for step in range(steps, 0, -1)
    ][:6]
    invariants = ["- Writes go through `LedgerClient`; reads may hit `billing_v1` until phase 3."]
    known_good = ["- Branch `ledger-migration`, commit `4f2c1ab` (tests green on CI run 7741)."]
    rest = [
        "## Resume steps",
        "1. Read this file: /srv/app/.claude/anchors/2026-11-28-move-billing-to-the-ledger.md",
        "2. `git -C /srv/app log --oneline -5` and `git -C /srv/app status`.",
        "3. Continue from the cursor's next action; record each step with `session-workflow anchor step`.",
        "",
        "## Parallel tracks",
        "- Track B (reporting) owns `reports/`; never touch it from this run.",
        "",
        "## In-flight work",
        "- Backfill dry-run job 5521 on staging; log /srv/app/logs/backfill-dry-run.log; relaunch only if dead.",
        "",
        "## Plan pointer",
        "- /srv/app/docs/plans/ledger-migration.md",
        "",
    ]

    def head() -> str:
        body = [*top, *mission, "## Cursor", *cursor, "", "## Invariants", *invariants, ""]
        return "\n".join([*body, "## Last-known-good", *known_good, "", *rest])

    filler = 0
    while len(head().encode("utf-8")) < head_bytes:
        filler += 1
        invariants.append(f"- I{filler}: {_phrase(filler)} only behind the `ledger_write` flag; keep it reversible.")
        known_good.append(f"- Checkpoint {filler}: `{_phrase(filler + 3)}` verified at commit {filler * 7919:07x}.")
    tail = ["<!-- anchor:tail -->", "", "## Decisions log"]
    index = 0
    while len("\n".join(tail).encode("utf-8")) < tail_bytes:
        index += 1
        tail.append(
            f"- D{index}: chose to {_phrase(index)} before we {_phrase(index + 2)}, because a rollback must stay"
            f" a config flip; rejected a cut-over (risk R{index % 9})."
        )
        if index % 25 == 0:
            tail += ["", "## Folded history", f"- Phase {index // 25}: {_phrase(index)} — landed in PR {400 + index}."]
    return head() + "\n".join(tail) + "\n"


# --- tasks -------------------------------------------------------------------------------------------------


def task_document(task_id: int, status: str, blocked_by: Sequence[int] = ()) -> dict[str, object]:
    return {
        "id": str(task_id),
        "subject": f"{TASK_SUBJECT} {task_id}: {_phrase(task_id)}",
        "description": (
            f"{_phrase(task_id).capitalize()} for tenant shard {task_id % 16}; update the runbook and attach the"
            f" dry-run output. Acceptance: zero diffs between billing_v1 and the ledger for shard {task_id % 16}."
        ),
        "activeForm": f"Working on {_phrase(task_id)}",
        "status": status,
        "blocks": [],
        "blockedBy": [str(blocker) for blocker in blocked_by],
    }


def malformed_task(task_id: int, kind: int) -> bytes:
    """The kinds of damage a task store shows: a cut write, a wrong id, a missing field, a bad status."""
    document = task_document(task_id, "pending")
    if kind == 0:
        return json.dumps(document).encode("utf-8")[:60]
    if kind == 1:
        document["id"] = str(task_id + 100_000)
    elif kind == 2:
        del document["subject"]
    else:
        document["status"] = "blocked"
    return json.dumps(document).encode("utf-8")


def write_task_store(folder: str, statuses: Sequence[str], malformed_every: int = 0) -> None:
    """``1.json`` … ``n.json`` with the given statuses (``malformed_every``-th file damaged) and ``.lock`` beside
    them, as Claude Code 2.1.332 leaves a list it only created tasks in (it writes ``.highwatermark`` on a delete,
    a reset or a skipped id, never on a TaskCreate)."""
    os.makedirs(folder, exist_ok=True)
    for task_id, status in enumerate(statuses, start=1):
        if malformed_every and task_id % malformed_every == 0:
            data = malformed_task(task_id, task_id // malformed_every % 4)
        else:
            blockers = [task_id - 1] if status == "pending" and task_id % 5 == 0 else []
            data = json.dumps(task_document(task_id, status, blockers), indent=2).encode("utf-8")
        write_bytes(os.path.join(folder, f"{task_id}.json"), data)
    write_bytes(os.path.join(folder, ".lock"), b"")


def mixed_statuses(count: int, open_count: int) -> list[str]:
    """History first (completed), then the newest ``open_count`` ids open: one in progress, the rest pending."""
    history = ["completed"] * max(0, count - open_count)
    recent = ["in_progress" if index == 0 else "pending" for index in range(min(count, open_count))]
    return history + recent


# --- transcripts -------------------------------------------------------------------------------------------


def fixture_lines(name: str, project: str, config: str, sid: str) -> list[bytes]:
    """A fixture transcript's lines with its project, config dir and session id rewritten (bytes kept as is)."""
    with open(os.path.join(FIXTURES, name), encoding="utf-8") as handle:
        lines = handle.read().splitlines()
    old_ids = {json.loads(line).get("sessionId") for line in lines} - {None}
    rewritten = []
    for line in lines:
        line = line.replace(FIXTURE_PROJECT, json.dumps(project)[1:-1]).replace(FIXTURE_CONFIG, config)
        for old in old_ids:
            line = line.replace(str(old), sid)
        rewritten.append(line.encode("utf-8") + b"\n")
    return rewritten


def bulky_lines(project: str, sid: str, rng: random.Random) -> list[bytes]:
    """A large Bash tool result and an ``api-request-blob``: the records that make real transcripts big."""
    words = " ".join(f"{_phrase(rng.randrange(1000))} ok" for _ in range(6000))
    output = (words * 2)[: 96 * KB]
    result = {
        "parentUuid": str(uuid.UUID(int=rng.getrandbits(128))),
        "isSidechain": False,
        "type": "user",
        "message": {
            "role": "user",
            "content": [{"tool_use_id": "toolu_bench", "type": "tool_result", "content": output, "is_error": False}],
        },
        "uuid": str(uuid.UUID(int=rng.getrandbits(128))),
        "timestamp": "2026-11-29T19:03:49.000Z",
        "toolUseResult": {"stdout": output, "stderr": "", "interrupted": False, "isImage": False},
        "sourceToolAssistantUUID": str(uuid.UUID(int=rng.getrandbits(128))),
        "userType": "external",
        "entrypoint": "sdk-cli",
        "cwd": project,
        "sessionId": sid,
        "version": "2.1.332",
        "gitBranch": "HEAD",
    }
    blob = {
        "type": "api-request-blob",
        "message": {"role": "user", "content": [{"type": "text", "text": (words * 3)[: 120 * KB]}]},
        "sessionId": sid,
    }
    compact = (",", ":")
    return [(json.dumps(record, separators=compact) + "\n").encode("utf-8") for record in (result, blob)]


def write_transcript(path: str, size: int, project: str, config: str, sid: str) -> None:
    """About ``size`` bytes of JSON Lines: a session's opening records, a repeated body, and a compaction at
    the end (so the tail holds prompts, boundaries and a summary, as at SessionStart(compact))."""
    rng = random.Random(SEED)
    head = fixture_lines("basic.jsonl", project, config, sid)[:16]
    tail = fixture_lines("after_compact.jsonl", project, config, sid)
    body_lines = [
        *fixture_lines("with_tools.jsonl", project, config, sid),
        *bulky_lines(project, sid, rng),
        *tail,
    ]
    block = b"".join(body_lines)
    fixed = sum(map(len, head)) + sum(map(len, tail))
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb", buffering=4 * MB) as handle:
        handle.writelines(head)
        remaining = size - fixed
        while remaining >= len(block):
            handle.write(block)
            remaining -= len(block)
        for line in body_lines:
            if remaining <= 0:
                break
            handle.write(line)
            remaining -= len(line)
        handle.writelines(tail)


def _compact(record: dict[str, object]) -> bytes:
    return (json.dumps(record, separators=(",", ":")) + "\n").encode("utf-8")


def log_output(index: int, size: int) -> str:
    """About ``size`` characters of a test run's output: text like real logs, not a repeated word, since how fast a
    byte search finds nothing depends on the text searched."""
    lines = []
    used = 0
    for case in range(size):
        line = f"tests/test_bench_{index}.py::test_{_phrase(case).replace(' ', '_')}_{case} PASSED [{case % 100:3d}%]\n"
        used += len(line)
        if used > size:
            break
        lines.append(line)
    return "".join(lines)


def action_lines(project: str, sid: str, count: int, log_bytes: int = 0) -> list[bytes]:
    """An ``anchor step`` and then ``count`` tool calls with their results, as Claude Code 2.1.332 writes them
    (tests/fixtures/transcripts/background.jsonl): commands (one in ten failing, one in fifty a commit) and
    writes, all distinct, so the run record folds nothing and cuts most of them. With ``log_bytes``, each command
    that ends well prints a test log of that size (Claude Code keeps up to 30,000 characters of an output)."""
    common = {"isSidechain": False, "cwd": project, "sessionId": sid, "version": "2.1.332", "userType": "external"}

    def call(index: int, name: str, tool_input: dict[str, object], text: str, result: object, error: bool) -> bytes:
        ident = f"toolu_bench_{index:06d}"
        use = {"type": "tool_use", "id": ident, "name": name, "input": tool_input}
        assistant = {**common, "type": "assistant", "message": {"role": "assistant", "content": [use]}}
        block = {"tool_use_id": ident, "type": "tool_result", "content": text, "is_error": error}
        user = {**common, "type": "user", "message": {"role": "user", "content": [block]}, "toolUseResult": result}
        return _compact(assistant) + _compact(user)

    def bash(command: str, output: str = "", code: int = 0) -> tuple[str, dict[str, object], str, object, bool]:
        if code:
            return "Bash", {"command": command}, f"Exit code {code}\n{output}", f"Error: Exit code {code}", True
        result = {"stdout": output, "stderr": "", "interrupted": False, "isImage": False}
        return "Bash", {"command": command}, output, result, False

    anchor = os.path.join(project, ".claude", "anchors", anchor_name(0))
    step = bash(f'session-workflow anchor step {anchor} "bench: cursor; next: the actions"', f"step 2 -> 3  {anchor}")
    lines = [call(0, *step)]
    for index in range(1, count + 1):
        if index % 50 == 0:
            step = bash(f"git commit -am 'bench change {index}'", f"[main {index:07x}] bench change {index}")
        elif index % 10 == 0:
            step = bash(f"pytest tests/test_bench_{index}.py", "1 failed", 1)
        elif index % 7 == 0:
            path = os.path.join(project, "src", f"module_{index}.py")
            step = ("Write", {"file_path": path, "content": "x"}, "ok", {"type": "create", "filePath": path}, False)
        else:
            step = bash(f"make bench-target-{index}", log_output(index, log_bytes) if log_bytes else "ok " * 40)
        lines.append(call(index, *step))
    return lines


def write_siblings(folder: str, project: str, config: str, sids: Iterable[str], newest: float) -> None:
    """Small finished sessions beside the current transcript, each older than ``newest`` by a minute more."""
    opening = fixture_lines("basic.jsonl", project, config, "SID")[:5]
    template = b"".join(opening)
    for age, sid in enumerate(sids, start=1):
        path = os.path.join(folder, f"{sid}.jsonl")
        write_bytes(path, template.replace(b"SID", sid.encode("ascii")))
        stamp = newest - 60.0 * age
        os.utime(path, (stamp, stamp))


# --- projects ----------------------------------------------------------------------------------------------


def write_state(project: str, sid: str, title: str = STATE_TITLE) -> None:
    state = WorkState(
        ticket=34,
        title=title,
        map=12,
        step="execute: port the invoice writer",
        session=sid,
        updated_at="2026-11-29T19:00:00Z",
    )
    write_bytes(os.path.join(project, ".claude", "session-workflow", "work-state.json"), encode(state, None))


def anchor_name(index: int) -> str:
    return "2026-11-28-move-billing-to-the-ledger.md" if index == 0 else f"2026-11-{index % 28 + 1:02d}-run-{index}.md"


def write_anchors(project: str, count: int, sizes: Sizes, now: float | None = None) -> None:
    """The live anchor first; the others done in content or parked, so the hook reads its classification cap.

    With ``now``, the others are given ages a second apart behind the live one here (``refresh`` then only
    touches the live one): the growth series' 100,000 files are not re-dated on every run.
    """
    folder = os.path.join(project, ".claude", "anchors")
    done = anchor_text("Run (done)", 3 * KB, 12 * KB, status="done").encode("utf-8")
    parked = anchor_text("Run (parked)", 3 * KB, 12 * KB, parked="waiting for the reporting track").encode("utf-8")
    os.makedirs(folder, exist_ok=True)
    for index in range(count):
        path = os.path.join(folder, anchor_name(index))
        if index == 0:
            text = anchor_text(ANCHOR_TITLE, sizes.head_bytes, sizes.tail_bytes).encode("utf-8")
        else:
            text = done if index % 2 else parked
        with open(path, "wb") as handle:
            handle.write(text)
        if now is not None and index:
            os.utime(path, (now - 600.0 - index, now - 600.0 - index))


def write_records(folder: str, count: int, now: float, rng: random.Random) -> None:
    """``count`` delivery records of other sessions, a day old (none old enough to prune)."""
    os.makedirs(folder, exist_ok=True)
    for _ in range(count):
        path = os.path.join(folder, f"{session_id(rng)}.key")
        with open(path, "w", encoding="ascii") as handle:
            handle.write('{"ticket":"#1","title":"other","map":null,"url":null,"session":"x"}')
        os.utime(path, (now - 86_400.0, now - 86_400.0))


def plugin_data_of(workload: Workload, session: Session) -> str:
    """The plugin data dir a session's hooks get: its config's own (the delivery-record cases), else the shared."""
    own = os.path.join(session.config, "plugin-data")
    return own if os.path.isdir(own) else workload.plugin_data


def adopt(workload: Workload, path: str) -> None:
    """Vouch for a generated anchor as ``anchor adopt`` would (its kind too), in the workload's HOME (where the
    hooks look)."""
    vouch_as_read(path, Places({"HOME": workload.home}), None, "adopt", 0.0)


def refresh(workload: Workload, now: float) -> None:
    """Make anchor ages what the scenarios assume (minutes old, the chosen one newest) and reset the writers'
    project, whose files the writer scenarios change on every run."""
    for sessions in (workload.compact, workload.scale):
        folder = os.path.join(next(iter(sessions.values())).project, ".claude", "anchors")
        others = sorted(name for name in os.listdir(folder) if name.endswith(".md") and name != anchor_name(0))
        for index, name in enumerate([anchor_name(0), *others]):
            stamp = now - 300.0 - 60.0 * index
            os.utime(os.path.join(folder, name), (stamp, stamp))
            adopt(workload, os.path.join(folder, name))
    for session in workload.growth.get("anchors", {}).values():
        folder = os.path.join(session.project, ".claude", "anchors")
        os.utime(os.path.join(folder, anchor_name(0)), (now - 300.0, now - 300.0))
        adopt(workload, os.path.join(folder, anchor_name(0)))
        for index in range(1, MAX_CLASSIFIED + 1):  # the files the hook reads, once (their dates stay put)
            path = os.path.join(folder, anchor_name(index))
            if os.path.exists(path) and not registry.Registry(Places({"HOME": workload.home})).is_ours(path):
                adopt(workload, path)
    moved = workload.moved
    assert moved is not None
    path = os.path.join(moved.project, ".claude", "anchors", anchor_name(0))
    os.utime(path, (now - 300.0, now - 300.0))
    adopt(workload, path)
    shutil.copy2(path, path + ".moved")  # ``cp -p`` back over it: the same bytes at a new inode
    os.replace(path + ".moved", path)
    writer = workload.writer
    assert writer is not None
    write_bytes(workload.writer_anchor, anchor_text(ANCHOR_TITLE, 8 * KB, 40 * KB).encode("utf-8"))
    adopt(workload, workload.writer_anchor)
    shutil.rmtree(os.path.join(writer.project, ".claude", "session-workflow"), ignore_errors=True)
    write_state(writer.project, writer.session_id)
    refresh_hundredfold(workload, now)


def log_home(root: str, count: int) -> str:
    """The HOME whose compaction ledger holds ``count`` entries (``write_ledger``)."""
    return os.path.join(root, "log", str(count), "home")


def write_ledger(home: str, count: int, session: Session, rng: random.Random) -> None:
    """``count`` ledger lines as the SessionStart hook writes them (flat JSON, ≈ 330 bytes), twenty sessions taking
    turns (``session`` one of them, in its project; the others in it or another), split over the rotated file and
    the current one as the hook's rotation at 256 KiB leaves them."""
    others = [session_id(rng) for _ in range(19)]
    lines = []
    for index in range(count):
        turn = index % 20
        entry = {
            "ts": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(1_764_000_000 + 60 * index)),
            "kind": "start",
            "source": ("compact", "startup", "resume")[index % 3],
            "session": session.session_id if turn == 0 else others[turn - 1],
            "project": session.project if turn % 2 == 0 else "/srv/other/project",
            "units": 6_000 + index % 3_000,
            "parts": f"anchor={3_000 + index % 900},tasks={1_200 + index % 300},state={400 + index % 50}",
            "cut": "run_record" if index % 7 == 0 else "",
            "failed": "",
            "held": "",
            "anchor": os.path.join(session.project, ".claude", "anchors", anchor_name(0)),
            "step": index % 40 + 1,
        }
        lines.append(dumps_flat_object(entry) + "\n")
    places = Places({"HOME": home})
    state, ledger = places.state, places.ledger
    assert state is not None and ledger is not None
    half = count // 2
    write_bytes(os.path.join(state, LEDGER_ROTATED), "".join(lines[:half]).encode("ascii"))
    write_bytes(ledger, "".join(lines[half:]).encode("ascii"))


def hundred_home(root: str, factor: int) -> str:
    """The HOME (trust records, ledger) of the ``factor``× scale case."""
    return os.path.join(root, "hundredfold", str(factor), "home")


def refresh_hundredfold(workload: Workload, now: float) -> None:
    """The live anchor newest and every file the hook may classify vouched for in the case's own HOME; the
    ledger written afresh (the hooks append to it)."""
    for factor, session in workload.hundred_compact.items():
        home = hundred_home(workload.root, factor)
        folder = os.path.join(session.project, ".claude", "anchors")
        os.utime(os.path.join(folder, anchor_name(0)), (now - 300.0, now - 300.0))
        places = Places({"HOME": home})
        vouch_as_read(os.path.join(folder, anchor_name(0)), places, None, "adopt", 0.0)
        for index in range(1, MAX_CLASSIFIED + 1):
            path = os.path.join(folder, anchor_name(index))
            if os.path.exists(path) and not registry.Registry(places).is_ours(path):
                vouch_as_read(path, places, None, "adopt", 0.0)
        write_ledger(home, 10 * factor, session, random.Random(SEED + factor))


def generate_hundredfold(workload: Workload, sizes: Sizes, now: float, rng: random.Random) -> None:
    """Issue 42's 1× and 100× cases (``Workload.hundred_compact``)."""
    for factor in sizes.hundredfold:
        base = os.path.join(workload.root, "hundredfold", str(factor))
        project = os.path.join(base, "project")
        os.makedirs(hundred_home(workload.root, factor))
        write_anchors(project, 10 * factor, sizes, now)
        write_state(project, "another-session")
        sid = session_id(rng)
        config = os.path.join(base, "config-compact")
        compact = Session(project, config, sid, transcript_path(config, project, sid))
        write_task_store(os.path.join(config, "tasks", sid), mixed_statuses(100 * factor, 12))
        write_transcript(compact.transcript, sizes.hundredfold_transcript * factor, project, config, sid)
        sid = session_id(rng)
        config = os.path.join(base, "config-startup")
        startup = Session(project, config, sid, transcript_path(config, project, sid))
        write_transcript(startup.transcript, sizes.growth_transcript, project, config, sid)
        others = [session_id(rng) for _ in range(5 * factor)]
        write_siblings(os.path.dirname(startup.transcript), project, config, others, now - 3600)
        write_task_store(os.path.join(config, "tasks", others[0]), mixed_statuses(100 * factor, 12))
        workload.hundred_compact[factor] = compact
        workload.hundred_startup[factor] = startup


def generate(root: str, sizes: Sizes) -> Workload:
    """Write every workload under ``root`` (which must not exist) and return where things are."""
    rng = random.Random(SEED)
    workload = Workload(root)
    os.makedirs(workload.home)
    os.makedirs(workload.plugin_data)
    now = time.time()

    # SessionStart anchor-less: a project with nothing of ours; a few earlier sessions without task lists.
    project = os.path.join(root, "anchorless", "project")
    config = os.path.join(root, "anchorless", "config")
    os.makedirs(project)
    sid = session_id(rng)
    workload.anchorless = Session(project, config, sid, transcript_path(config, project, sid))
    siblings = [session_id(rng) for _ in range(sizes.anchorless_siblings)]
    write_siblings(os.path.dirname(workload.anchorless.transcript), project, config, siblings, now)

    # Full compact: one anchor, 40 tasks (some malformed), a work state; one config dir per transcript size.
    project = os.path.join(root, "full", "project")
    sid = session_id(rng)
    write_anchors(project, 1, sizes)
    write_state(project, sid)
    for size in sizes.compact_transcripts:
        config = os.path.join(root, "full", f"config-{size}")
        session = Session(project, config, sid, transcript_path(config, project, sid))
        write_task_store(os.path.join(config, "tasks", sid), mixed_statuses(sizes.full_tasks, 12), 13)
        write_transcript(session.transcript, size, project, config, sid)
        workload.compact[size] = session

    # Resume: the full compact's session on its own copy of the smallest transcript with one more answer. A resume
    # block's ledger line names its thread's size, and a compaction of that thread with no answer since holds
    # the parts that block still carries (hook.pending): sharing the compact's transcript, every compact timed
    # after a resume would be that case instead of the full compact.
    config = os.path.join(root, "full", "config-resume")
    session = Session(project, config, sid, transcript_path(config, project, sid))
    write_task_store(os.path.join(config, "tasks", sid), mixed_statuses(sizes.full_tasks, 12), 13)
    os.makedirs(os.path.dirname(session.transcript))
    shutil.copyfile(workload.compact[min(sizes.compact_transcripts)].transcript, session.transcript)
    with open(session.transcript, "ab") as handle:
        handle.write(_compact({"type": "assistant", "isSidechain": False, "sessionId": sid, "message": ANSWER}))
    workload.resumed = session

    # The run record: the full compact's state on its largest transcript, then an anchor step and 2,000 actions.
    config = os.path.join(root, "full", "config-record")
    session = Session(project, config, sid, transcript_path(config, project, sid))
    write_task_store(os.path.join(config, "tasks", sid), mixed_statuses(sizes.full_tasks, 12), 13)
    write_transcript(session.transcript, max(sizes.compact_transcripts), project, config, sid)
    with open(session.transcript, "ab") as handle:
        handle.writelines(action_lines(project, sid, sizes.record_actions))
    workload.record = session
    # The same with test logs: the tail the record and the prompt recovery read is all command output.
    config = os.path.join(root, "full", "config-record-logs")
    session = Session(project, config, sid, transcript_path(config, project, sid))
    write_task_store(os.path.join(config, "tasks", sid), mixed_statuses(sizes.full_tasks, 12), 13)
    write_transcript(session.transcript, min(sizes.compact_transcripts), project, config, sid)
    with open(session.transcript, "ab") as handle:
        handle.writelines(action_lines(project, sid, sizes.record_log_actions, LOG_BYTES))
    workload.record_logs = session

    # Scale: 1,000 anchors, the session's list missing so the fallback finds the one predecessor with 5,000
    # tasks among 100,000 siblings, 10,000 other sessions' delivery records; one projects folder per transcript
    # size, the siblings hard-linked.
    project = os.path.join(root, "scale", "project")
    config = os.path.join(root, "scale", "config")
    sid = session_id(rng)
    write_anchors(project, sizes.scale_anchors, sizes)
    write_state(project, sid)
    write_records(os.path.join(config, "plugin-data", "work-state-delivered"), sizes.scale_records, now, rng)
    siblings = [session_id(rng) for _ in range(sizes.scale_siblings)]
    write_task_store(os.path.join(config, "tasks", siblings[0]), mixed_statuses(sizes.scale_tasks, 60), 97)
    first_folder = ""
    for size in sizes.scale_transcripts:
        folder = os.path.join(config, "projects", f"{project_slug(project)}-{size}")
        session = Session(project, config, sid, os.path.join(folder, f"{sid}.jsonl"))
        if first_folder:
            os.makedirs(folder)
            for name in os.listdir(first_folder):
                if name != f"{sid}.jsonl":
                    os.link(os.path.join(first_folder, name), os.path.join(folder, name))
        else:
            write_siblings(folder, project, config, siblings, now - 3600)
            first_folder = folder
        write_transcript(session.transcript, size, project, config, sid)
        workload.scale[size] = session

    # The growth table: one dimension varied at a time, everything else minimal; each count its own project and
    # config dir with a small compacted transcript (hard-linked from one).
    template = os.path.join(root, "growth", "transcript.jsonl")
    sid = session_id(rng)
    write_transcript(template, sizes.growth_transcript, "/growth/project", "/growth/config", sid)
    for dimension in GROWTH_DIMENSIONS:
        workload.growth[dimension] = {}
        for count in sizes.growth_counts:
            if count > GROWTH_LIMITS.get(dimension, count):
                continue
            base = os.path.join(root, "growth", f"{dimension}-{count}")
            project, config = os.path.join(base, "project"), os.path.join(base, "config")
            session = Session(project, config, sid, transcript_path(config, project, sid))
            os.makedirs(project)
            os.makedirs(os.path.dirname(session.transcript))
            os.link(template, session.transcript)
            if dimension == "anchors":  # SessionStart(compact): the live anchor among ``count`` open files
                write_anchors(project, count, sizes, now)
            elif dimension == "tasks":  # SessionStart(compact): this session's list of ``count`` files
                write_task_store(os.path.join(config, "tasks", sid), mixed_statuses(count, 12))
            elif dimension == "siblings":  # SessionStart(startup): no list of its own, ``count`` earlier sessions,
                # the newest with 40 tasks and the next nine (when there are) with a finished list
                others = [session_id(rng) for _ in range(count)]
                write_siblings(os.path.dirname(session.transcript), project, config, others, now - 3600)
                write_task_store(os.path.join(config, "tasks", others[0]), mixed_statuses(sizes.full_tasks, 12))
                for other in others[1:10]:
                    write_task_store(os.path.join(config, "tasks", other), ["completed"] * 3)
            else:  # SessionStart(startup) with a work state: ``count`` delivery records, one of them this session's
                write_state(project, sid)
                write_records(os.path.join(config, "plugin-data", "work-state-delivered"), count - 1, now, rng)
            workload.growth[dimension][count] = session

    # Moved: the full compact's anchor alone, its bytes put back at a new inode (``refresh``), a small transcript.
    project = os.path.join(root, "moved", "project")
    config = os.path.join(root, "moved", "config")
    sid = session_id(rng)
    write_anchors(project, 1, sizes)
    workload.moved = Session(project, config, sid, transcript_path(config, project, sid))
    write_transcript(workload.moved.transcript, sizes.growth_transcript, project, config, sid)

    # Writers: their own project (reset before every run), so they never disturb the SessionStart scenarios.
    project = os.path.join(root, "writer", "project")
    config = os.path.join(root, "writer", "config")
    os.makedirs(config)
    sid = session_id(rng)
    workload.writer = Session(project, config, sid, transcript_path(config, project, sid))
    workload.writer_anchor = os.path.join(project, ".claude", "anchors", anchor_name(0))
    for count in sizes.ledger_counts:  # `log` in the writer's session, over ledgers of ``count`` entries
        write_ledger(log_home(root, count), count, workload.writer, rng)
    generate_hundredfold(workload, sizes, now, rng)
    return workload


def manifest_key(root: str, sizes: Sizes) -> dict[str, object]:
    return {"generator": GENERATOR_VERSION, "root": os.path.abspath(root), "sizes": sizes.as_dict()}


def ensure(root: str, sizes: Sizes, regenerate: bool = False) -> tuple[Workload, bool]:
    """The cached workload under ``root`` when its manifest matches, else a fresh one; (workload, reused)."""
    manifest = os.path.join(root, "manifest.json")
    key = manifest_key(root, sizes)
    if not regenerate and os.path.isfile(manifest):
        with open(manifest, encoding="utf-8") as handle:
            document = json.load(handle)
        if {name: document.get(name) for name in key} == json.loads(json.dumps(key)):
            workload = Workload.from_manifest(os.path.abspath(root), document["sessions"])
            refresh(workload, time.time())
            return workload, True
    shutil.rmtree(root, ignore_errors=True)
    workload = generate(os.path.abspath(root), sizes)
    refresh(workload, time.time())
    with open(manifest, "w", encoding="utf-8") as handle:
        json.dump({**key, "sessions": workload.sessions()}, handle, indent=1)
    return workload, False
