"""The trust record: its recorded kind (which rules found it, and that they still classify as they did), its keeping
sessions, the path it is bound to and the identities a killed write leaves."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from session_workflow.anchor import registry
from session_workflow.anchor.discover import kind_of_bytes
from session_workflow.anchor.text import KIND_LABELS
from session_workflow.core.places import Places
from tests.mod_tables import check_mod_table
from tests.trust import state_env

FRONT = "---\nformat: anchor/v1\nstep: 3\n---\n"
CURSOR = "## Cursor\n- Next action: port the writer\n"
TAIL = "<!-- anchor:tail -->\n"

# What the classification said when KIND_RULES was 1. A record on disk holds [1, kind] for text like this, and the
# hook trusts that kind without reading the file: if a change to the rules flips any row, bump KIND_RULES (so old
# records are read again) and then update this table.
KINDS_AT_RULES_1 = [
    (FRONT + "# Run\n\n" + CURSOR, "live"),
    (FRONT.replace("step: 3\n", 'step: 3\nparked: "waiting for review"\n') + "# Run\n\n" + CURSOR, "parked"),
    (FRONT + "# Run\n\n**Status:** done\n\n" + CURSOR, "done"),
    (FRONT + "# Run\n\nStatus: merged to main.\n" + CURSOR, "done"),
    (FRONT + "# Run\n\n" + CURSOR + TAIL + "Status: done\n", "live"),
    (FRONT + "# Run\n\nThe status is not done yet.\n" + CURSOR, "live"),
    ("# Notes\n\nNothing here.\n", "not an anchor"),
    ("# Run\n\n" + CURSOR, "live"),
    ("\ufeff" + FRONT.replace("\n", "\r\n") + "# Run\r\n\r\n**Status:** done\r\n", "done"),
    (FRONT + "# Run\n\n" + "x" * 70_000 + "\n**Status:** done\n", "live"),
]


def test_kind_rules_are_the_version_records_name() -> None:
    assert registry.KIND_RULES == 1, "KIND_RULES changed: update KINDS_AT_RULES_1 to what the new rules say"


@pytest.mark.parametrize(("text", "label"), KINDS_AT_RULES_1)
def test_the_rules_still_classify_as_recorded(text: str, label: str) -> None:
    assert KIND_LABELS[kind_of_bytes(text.encode("utf-8"))] == label


def test_a_record_keeps_its_kind_for_its_newest_identity_only() -> None:
    newest, before = registry.Identity(1, 2, 3, 4), registry.Identity(1, 2, 3, 5)
    record = registry.Record("/p/a.md", [newest, before], [], kind=2)
    assert record.kind_of(newest) == 2 and record.kind_of(before) is None
    parsed = registry.parse(registry.encode(record, "step", 0.0), "/p/a.md")
    assert parsed is not None and parsed.kind_of(newest) == 2


# --- the digest, the copy, the session's list --------------------------------------------------------------------


def _anchor_file(tmp_path: Path, data: bytes) -> tuple[str, registry.Identity]:
    path = tmp_path / "a.md"
    path.write_bytes(data)
    return str(path), registry.Identity.of(os.stat(path))


def test_a_record_without_the_new_fields_still_vouches_by_identity() -> None:
    """Records written before the digest existed: no ``sha256``, ``step`` or ``copy``; still read and trusted."""
    old = b'{"v": 1, "path": "/p/a.md", "ids": [[1, 2, 3, 4]], "sessions": ["s"], "kind": [1, 0], "by": "new"}'
    record = registry.parse(old, "/p/a.md")
    assert record is not None and record.vouches_for(registry.Identity(1, 2, 3, 4))
    assert (record.digest, record.step, record.copy) == (None, None, None)
    assert not registry.same_bytes(record, "/p/a.md", registry.Identity(1, 9, 3, 4))


@pytest.mark.parametrize(
    "fields",
    [
        '"sha256": "abc", "step": -1, "copy": ["abc", true]',
        '"sha256": "' + "G" * 64 + '", "step": "2", "copy": ["' + "a" * 64 + '", 1]',
        '"sha256": 7, "step": 1.5, "copy": ["' + "a" * 64 + '"]',
    ],
)
def test_malformed_optional_fields_are_dropped(fields: str) -> None:
    data = '{"v": 1, "path": "/p/a.md", "ids": [[1, 2, 3, 4]], "sessions": [], ' + fields + "}"
    record = registry.parse(data.encode(), "/p/a.md")
    assert record is not None and (record.digest, record.step, record.copy) == (None, None, None)


def test_the_new_fields_round_trip() -> None:
    digest = "0123456789abcdef" * 4
    record = registry.Record("/p/a.md", [registry.Identity(1, 2, 3, 4)], ["s"], 0, digest, 7, (digest, False))
    parsed = registry.parse(registry.encode(record, "write", 0.0), "/p/a.md")
    assert parsed is not None and (parsed.digest, parsed.step, parsed.copy) == (digest, 7, (digest, False))


def test_same_bytes_needs_the_very_bytes_of_the_same_size(tmp_path: Path) -> None:
    ours = b"---\nstep: 1\n---\n## Cursor\n- Next: A\n"
    path, identity = _anchor_file(tmp_path, ours)
    moved = registry.Identity(identity.dev, identity.ino, identity.size, identity.mtime_ns)
    record = registry.Record(path, [registry.Identity(0, 0, len(ours), 1)], [], digest=registry.digest_of(ours))
    assert registry.same_bytes(record, path, moved)
    _path, same_size = _anchor_file(tmp_path, ours.replace(b"A", b"B"))
    assert same_size.size == len(ours) and not registry.same_bytes(record, path, same_size)
    _path, longer = _anchor_file(tmp_path, ours + b"\n")
    assert not registry.same_bytes(record, path, longer)


@pytest.mark.parametrize(("size", "hashed"), [(1_048_576, True), (1_048_577, False)])
def test_the_hook_hashes_files_up_to_1_mib(tmp_path: Path, size: int, hashed: bool) -> None:
    data = b"x" * size
    path, identity = _anchor_file(tmp_path, data)
    record = registry.Record(path, [registry.Identity(0, 0, size, 1)], [], digest=registry.digest_of(data))
    assert registry.same_bytes(record, path, identity) is hashed


def test_the_digest_is_sha256() -> None:
    assert registry.digest_of(b"abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"


@pytest.mark.parametrize(("size", "whole"), [(65_536, True), (65_537, False)])
def test_the_copy_is_the_whole_file_up_to_64_kib(size: int, whole: bool) -> None:
    head = b"---\nstep: 1\n---\n## Cursor\n- Next: A\n" + TAIL.encode()
    data = head + b"t" * (size - len(head))
    copy, is_whole = registry.copy_of(data)
    assert is_whole is whole and copy == (data if whole else head[: -len(TAIL)])


def test_a_head_over_64_kib_is_kept_to_its_last_whole_line() -> None:
    data = b"---\nstep: 1\n---\n" + b"line of head\n" * 6_000 + TAIL.encode() + b"tail\n"
    copy, whole = registry.copy_of(data)
    assert not whole and len(copy) <= 65_536 and copy.endswith(b"line of head\n") and data.startswith(copy)


def test_a_session_lists_at_most_8_anchors_newest_first(tmp_path: Path) -> None:
    env = {"XDG_STATE_HOME": str(tmp_path / "state")}
    paths = []
    for n in range(10):
        path = tmp_path / f"p{n}" / ".claude" / "anchors" / "a.md"
        path.parent.mkdir(parents=True)
        path.write_text(FRONT + "# Run\n\n" + CURSOR)
        registry.Registry(Places(env)).vouch(str(path), "s-1", "new", 0.0)
        paths.append(os.path.realpath(path))
    assert registry.Registry(Places(env)).kept_by("s-1") == paths[::-1][:8]
    assert registry.Registry(Places(env)).kept_by("s-2") == []


def test_only_a_file_of_the_recorded_size_is_hashed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The hook reads and hashes a file only when its size is the recorded one: linear, and rare."""
    hashed: list[int] = []
    real = registry.digest_of

    def counted(data: bytes) -> str:
        hashed.append(len(data))
        return real(data)

    monkeypatch.setattr(registry, "digest_of", counted)
    path, identity = _anchor_file(tmp_path, b"x" * 100)
    record = registry.Record(path, [registry.Identity(0, 0, 99, 1)], [], digest=real(b"x" * 99))
    assert not registry.same_bytes(record, path, identity) and hashed == []
    record.identities = [registry.Identity(0, 0, 100, 1)]
    assert not registry.same_bytes(record, path, identity) and hashed == [100]


# --- the rules a record holds: its keeping sessions, its path, the identities a killed write leaves -------------


def _anchor(tmp_path: Path, text: str = FRONT + "# Run\n\n" + CURSOR) -> str:
    path = tmp_path / "proj" / ".claude" / "anchors" / "run.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return str(path)


def _record(path: str) -> registry.Record:
    record = registry.Registry(Places(state_env())).read(os.path.realpath(path))
    assert record is not None
    return record


def test_the_newest_keeping_session_comes_first_and_at_most_8_are_kept(tmp_path: Path) -> None:
    path = _anchor(tmp_path)
    for number in range(1, 10):
        registry.Registry(Places(state_env())).vouch(path, f"s{number}", "step", 0.0)
    assert _record(path).sessions == ["s9", "s8", "s7", "s6", "s5", "s4", "s3", "s2"]
    registry.Registry(Places(state_env())).vouch(
        path, "s4", "step", 0.0
    )  # a keeper writing again moves to the front, once
    assert _record(path).sessions == ["s4", "s9", "s8", "s7", "s6", "s5", "s3", "s2"]
    registry.Registry(Places(state_env())).vouch(path, None, "adopt", 0.0)  # no session: the keepers stay as they were
    assert _record(path).sessions == ["s4", "s9", "s8", "s7", "s6", "s5", "s3", "s2"]


def test_a_hand_made_record_of_9_sessions_is_read_as_its_first_8(tmp_path: Path) -> None:
    path = os.path.realpath(_anchor(tmp_path))
    document = {"v": 1, "path": path, "ids": [], "sessions": [f"s{n}" for n in range(1, 10)]}
    parsed = registry.parse(json.dumps(document).encode(), path)
    assert parsed is not None and parsed.sessions == [f"s{n}" for n in range(1, 9)]


def test_a_record_holds_only_for_the_path_it_names(tmp_path: Path) -> None:
    """A record file reached for another path (a hash clash, a copied state dir) vouches for nothing there."""
    path = _anchor(tmp_path)
    registry.Registry(Places(state_env())).vouch(path, "s1", "step", 0.0)
    assert registry.Registry(Places(state_env())).is_ours(path)
    other = str(tmp_path / "other.md")
    os.link(path, other)  # the very same file (same identity) under another path
    folder = Places(state_env()).trust
    assert folder is not None
    mine = registry.record_file(folder, os.path.realpath(path))
    with open(mine, "rb") as handle:
        data = handle.read()
    with open(registry.record_file(folder, os.path.realpath(other)), "wb") as handle:
        handle.write(data)
    assert registry.parse(data, os.path.realpath(other)) is None
    assert not registry.Registry(Places(state_env())).is_ours(other)


def test_a_writer_killed_before_its_rename_leaves_the_file_still_vouched_for(tmp_path: Path) -> None:
    """The writer records the temp file's identity before the rename: killed between the two, the file in place
    (which the record vouched for) must stay ours, and so must the renamed one had the rename happened."""
    path = _anchor(tmp_path)
    registry.Registry(Places(state_env())).vouch(path, "s1", "step", 0.0)
    temp = path + ".tmp"
    with open(temp, "w", encoding="utf-8") as handle:
        handle.write(FRONT + "# Run\n\n" + CURSOR + "- more\n")
    registry.Registry(Places(state_env())).vouch(path, "s1", "step", 0.0, registry.Identity.of(os.stat(temp)))
    assert registry.Registry(Places(state_env())).is_ours(path)  # killed here: the old file is still ours
    os.replace(temp, path)
    assert registry.Registry(Places(state_env())).is_ours(path)  # or the rename went through: the new one is
    assert len(_record(path).identities) == 2


def test_a_file_the_record_did_not_vouch_for_is_not_kept_by_the_next_write(tmp_path: Path) -> None:
    """Only an identity the record already vouched for is kept beside the new one: a hand edit (or a clone) in
    place when our writer runs does not become ours because that writer was killed."""
    path = _anchor(tmp_path)
    registry.Registry(Places(state_env())).vouch(path, "s1", "step", 0.0)
    with open(path, "a", encoding="utf-8") as handle:
        handle.write("- edited by hand\n")
    os.utime(path, ns=(1, 1))
    temp = path + ".tmp"
    with open(temp, "w", encoding="utf-8") as handle:
        handle.write(FRONT + "# Run\n\n" + CURSOR)
    registry.Registry(Places(state_env())).vouch(path, "s1", "step", 0.0, registry.Identity.of(os.stat(temp)))
    assert not registry.Registry(Places(state_env())).is_ours(path)
    assert len(_record(path).identities) == 1


def test_a_record_keeps_at_most_2_identities(tmp_path: Path) -> None:
    path = os.path.realpath(_anchor(tmp_path))
    ids = [[1, 2, 3, n] for n in (4, 5, 6)]
    parsed = registry.parse(json.dumps({"v": 1, "path": path, "ids": ids, "sessions": []}).encode(), path)
    assert parsed is not None and [identity.mtime_ns for identity in parsed.identities] == [4, 5]


def test_each_write_keeps_one_copy_beside_the_record_and_close_leaves_none(tmp_path: Path) -> None:
    """The copy of the last version is the only one kept: five steps leave one copy (not six), and close none (not
    the ones older writes left), so the user's state folder never fills with an anchor's history."""
    from session_workflow.anchor import writer

    env = state_env()
    folder = Places(env).trust
    assert folder is not None
    project = tmp_path / "project"
    project.mkdir()

    def copies() -> list[str]:
        return sorted(name for name in os.listdir(folder) if name.endswith(".copy"))

    path = writer.create_anchor(str(project), "Port the parser", 1.0, Places(env), "s-1")
    assert len(copies()) == 1
    for step in range(1, 6):
        writer.step_anchor(path, f"done: part {step}", Places(env), "s-1", float(step))
        assert len(copies()) == 1, step
    record = registry.Registry(Places(env)).read(os.path.realpath(path))
    assert record is not None and record.copy is not None
    assert copies() == [os.path.basename(registry.copy_file(folder, record.path, record.copy[0]))]
    assert registry.Registry(Places(env)).read_copy(record) == (Path(path).read_bytes(), True)
    writer.close_anchor(path, "the parser landed", 6.0, Places(env))
    assert copies() == []


# --- the mod's side of the record (hooks/mod/checkpoint.ts `recordFile`, `recordVouches`) --------------------------

MOD_RECORDS = Path(__file__).resolve().parents[1] / "mod" / "python-records.ts"
MOD_STATE_HOME = "/home/dev/.local/state"
MOD_SESSION = "3f2b8e0c-5a1d-4c9e-9b7a-1d2e3f4a5b6c"
MOD_ANCHOR = "/home/dev/project/.claude/anchors/2026-11-30-port-the-parser.md"
MOD_ANCHOR_TEXT = "---\nformat: anchor/v1\ntask: Port the parser\nstep: 0\n---\n\n# Port the parser\n\n## Cursor\n"
# A real mtime whose second and millisecond readings differ (2026-12-03T...:34.567891234Z): a mod comparing
# seconds, or taking the writer's nanoseconds for milliseconds, finds no record that vouches.
MOD_MTIME_NS = 1_796_320_234_567_891_234
# Paths whose record name the mod must give as Python does: ASCII, spaces and quotes, non-ASCII, astral
# characters (one `-` each in the prefix, four UTF-8 bytes in the hash), over 64 code points (the prefix is the
# first 64, by code point, astral ones before the cut too), and hashes that start with one and two zero digits.
MOD_RECORD_PATHS = [
    MOD_ANCHOR,
    *(
        f"/home/dev/project/.claude/anchors/{why}.md"
        for why in (
            "cloned",
            "kept-by-another-session",
            "changed-since-the-writer",
            "touched-in-the-same-second",
            "record-of-another-path",
        )
    ),
    '/home/dev/My Proj/.claude/anchors/it\'s "the" run.md',
    "/p/.claude/anchors/a.md",
    "/home/dév/プロジェクト/.claude/anchors/café ☕.md",
    "/home/dev/\U0001f642 proj/.claude/anchors/\U0001f680 launch \U000e0041.md",
    "/home/dev/" + "\U0001f642" * 60 + "/.claude/anchors/x.md",
    "/srv/" + "deep/" * 30 + ".claude/anchors/2026-11-30-a-long-run.md",
    "/home/dev/project/.claude/anchors/run-16.md",
    "/home/dev/project/.claude/anchors/run-571.md",
]


def python_record_cases(tmp_path: Path) -> dict[str, object]:
    """What Python gives the mod: the trust folder for ``XDG_STATE_HOME``, each path's record file, and the record
    the writer leaves for MOD_ANCHOR_TEXT at MOD_MTIME_NS (written for a real file, then bound to MOD_ANCHOR: the
    record names the path, and the test's device and inode are this machine's) with the stat the engine sees."""
    folder = Places({"XDG_STATE_HOME": MOD_STATE_HOME}).trust
    assert folder is not None
    names = [{"path": path, "file": registry.record_file(folder, path)} for path in MOD_RECORD_PATHS]
    hashes = [entry["file"][-len("0123456789abcdef.json") :] for entry in names]
    assert hashes[-2].startswith("0") and hashes[-1].startswith("00")

    env = {"XDG_STATE_HOME": str(tmp_path / "state")}
    anchor = tmp_path / "project" / ".claude" / "anchors" / "a.md"
    anchor.parent.mkdir(parents=True)
    anchor.write_bytes(MOD_ANCHOR_TEXT.encode())
    os.utime(anchor, ns=(MOD_MTIME_NS, MOD_MTIME_NS))
    data = anchor.read_bytes()
    registry.Registry(Places(env)).vouch(
        str(anchor), MOD_SESSION, "step", 1_796_320_234.0, kind=kind_of_bytes(data), step=0
    )
    real = os.path.realpath(anchor)
    written_folder = Places(env).trust
    assert written_folder is not None
    document = json.loads(Path(registry.record_file(written_folder, real)).read_bytes())
    info = os.stat(real)
    assert document["path"] == real and document["ids"] == [[info.st_dev, info.st_ino, len(data), MOD_MTIME_NS]]
    document["path"] = MOD_ANCHOR
    document["ids"][0][:2] = [2049, 7]
    return {
        "stateHome": MOD_STATE_HOME,
        "trustDir": folder,
        "session": MOD_SESSION,
        "names": names,
        "anchor": {"path": MOD_ANCHOR, "text": MOD_ANCHOR_TEXT},
        "record": json.dumps(document, ensure_ascii=True, indent=1) + "\n",
        "stat": {"size": info.st_size, "mtimeMs": info.st_mtime_ns / 1e6},
    }


def test_the_mods_record_table_is_what_the_writer_gives(tmp_path: Path) -> None:
    """tests/mod/python-records.ts (tests/mod/checkpoint*.test.ts hold the mod's ``recordFile`` and
    ``recordVouches`` to it) is exactly what ``record_file`` and the writer give; SESSION_WORKFLOW_UPDATE_GOLDEN=1
    writes it anew."""
    header = (
        "// Generated by tests/anchor/test_registry.py (SESSION_WORKFLOW_UPDATE_GOLDEN=1): the trust record's file\n"
        "// name Python gives each path, and the record its writer leaves for a file of a real mtime (nanoseconds)\n"
        "// with the stat the engine gives the mod (milliseconds); that test holds Python to it.\n"
    )
    check_mod_table(MOD_RECORDS, "PYTHON_RECORDS", header, python_record_cases(tmp_path))
