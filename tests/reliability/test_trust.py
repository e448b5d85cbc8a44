"""Anchor trust and session affinity: which anchors are injected, and which session each one goes to.

An anchor gets the plugin's framing and its HEAD injected only when this machine's writer made it, wrote it, or
was told to adopt it; the record lives outside the repository, keyed so that a file arriving by clone, pull,
unzip or copy at the same name is not trusted by accident. An untrusted open anchor is named in one short line
(path, "not created here", the adopt command) and nothing of its content is injected. The CLI, which in the
Bash tool has no ``CLAUDE_PLUGIN_DATA``, and the hooks find the same record. Each session gets the anchor it
keeps; another session's live anchor is named as a parallel track; with no affinity, newest first.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time

import pytest
from hypothesis import given
from hypothesis import strategies as st

from session_workflow.anchor import registry
from session_workflow.core import boundedio
from session_workflow.core.places import Places

from .sandbox import REPO, Sandbox, run_in_process, sandbox, snapshot
from .sizes import Size, Tally

MARKER = "CONTENT-MARKER-7f3a"
NOT_HERE = "not created here"
TEXT = st.text(st.characters(blacklist_categories=("Cs",)), max_size=300)


def anchor_text(marker: str = MARKER, extra: str = "") -> str:
    return f"---\nformat: anchor/v1\nstep: 1\n---\n# Run\n\n## Cursor\n- Next action: {marker}\n{extra}\n"


def cli(box: Sandbox, *argv: str, stdin: bytes = b"", session: str | None = None) -> subprocess.CompletedProcess[str]:
    """The real ``bin/session-workflow`` as the Bash tool runs it: no CLAUDE_PLUGIN_DATA, the session's id."""
    env = {key: value for key, value in box.env().items() if key != "CLAUDE_PLUGIN_DATA"}
    env["CLAUDE_CODE_SESSION_ID"] = session or box.session
    return subprocess.run(
        [sys.executable, str(REPO / "bin" / "session-workflow"), *argv],
        input=stdin.decode("utf-8", "surrogateescape"),
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def block(box: Sandbox, source: str = "compact", session: str | None = None) -> str:
    """The SessionStart block the hook (with CLAUDE_PLUGIN_DATA, as Claude Code runs it) prints here."""
    payload = box.payload("SessionStart", source=source)
    if session is not None:
        payload["session_id"] = session
    out = run_in_process("SessionStart", payload, box.env())
    if not out:
        return ""
    context: str = json.loads(out)["hookSpecificOutput"]["additionalContext"]
    return context


def untrusted_lines(text: str, path: str) -> list[str]:
    return [line for line in text.splitlines() if path in line]


def assert_only_named(text: str, path: str, marker: str = MARKER) -> None:
    """The one-line notice for ``path`` and nothing of the file's content."""
    assert marker not in text
    lines = untrusted_lines(text, path)
    assert len(lines) == 1, lines
    assert NOT_HERE in lines[0] and f"session-workflow anchor adopt {path}" in lines[0]
    assert "## Control anchor" not in text and "<anchor-head" not in text


def spy_reads(monkeypatch: pytest.MonkeyPatch, missing: str | None = None) -> list[str]:
    """The anchor files the hook opens (``missing``: one that vanished since the listing)."""
    from session_workflow.anchor import discover

    opened: list[str] = []
    real = boundedio.read_prefix_as

    def spy(target: str, max_bytes: int, identity: tuple[int, int, int, int] | None) -> tuple[bytes, bool] | None:
        opened.append(target)
        return None if target == missing else real(target, max_bytes, identity)

    monkeypatch.setattr(discover, "read_prefix_as", spy)
    return opened


# --- what the CLI writes is trusted, in the same record the hooks read -------------------------------------------


def test_the_cli_without_plugin_data_and_the_hook_with_it_share_the_record() -> None:
    with sandbox() as box:
        made = cli(box, "anchor", "new", "--dir", box.project, "--task", "Port it")
        assert made.returncode == 0, made.stderr
        path = made.stdout.strip()
        assert cli(box, "anchor", "write", path, stdin=anchor_text().encode()).returncode == 0
        assert MARKER in block(box) and f"## Control anchor: `{path}`" in block(box)
        folder = Places(box.env()).trust
        assert folder is not None and os.listdir(folder)
        assert not folder.startswith(box.project + os.sep)  # never under the project
        project_files = [os.path.join(d, f) for d, _s, files in os.walk(box.project) for f in files]
        assert all(name.startswith(box.anchors() + os.sep) for name in project_files), project_files


def test_every_writer_keeps_the_anchor_trusted() -> None:
    with sandbox() as box:
        path = cli(box, "anchor", "new", "--dir", box.project, "--task", "Keep it").stdout.strip()
        assert f"Control anchor `{path}`: created, not filled yet." in block(box)  # trusted, and said to be empty
        assert cli(box, "anchor", "step", path, "one done").returncode == 0
        assert "- Step 1: one done" in block(box)
        assert (
            cli(box, "anchor", "write", path, stdin=anchor_text().replace("step: 1", "step: 2").encode()).returncode
            == 0
        )
        assert MARKER in block(box)


# --- files that arrive by other means ------------------------------------------------------------------------------


def _in_place(path: str, data: bytes) -> None:
    with open(path, "wb") as handle:  # an editor or `git checkout` writing over the same inode
        handle.write(data)


def _recreate(path: str, data: bytes) -> None:
    os.unlink(path)  # git pull, unzip -o: unlink, then a new file (maybe even the same inode number)
    with open(path, "wb") as handle:
        handle.write(data)


def _rename_over(path: str, data: bytes) -> None:
    temp = path + ".tmp"
    with open(temp, "wb") as handle:
        handle.write(data)
    os.replace(temp, path)


def _copy_keeping_seconds(path: str, data: bytes) -> None:
    before = os.stat(path)
    _recreate(path, data)
    os.utime(path, (int(before.st_atime), int(before.st_mtime)))  # tar, zip and cp -p keep whole seconds


def _touch(path: str, data: bytes) -> None:
    os.utime(path, None)


ARRIVALS = {
    "in-place": _in_place,
    "recreate": _recreate,
    "rename-over": _rename_over,
    "copy-keeping-seconds": _copy_keeping_seconds,
    "touch": _touch,
}


@pytest.mark.parametrize("arrival", sorted(ARRIVALS))
def test_a_file_arriving_at_a_trusted_name_is_trusted_only_with_the_writers_bytes(
    arrival: str, size: Size, tally: Tally
) -> None:
    """Whatever changes the file outside the writers ends its trust (a different text of the very same size too),
    and the block says it changed with the commands that show, keep or restore it; the very bytes the writer left,
    put back at a new inode or mtime (a stash and pop, a checkout, ``cp -p``, ``touch``), are trusted again."""

    @given(st.data())
    @size.settings(10, 200)
    def check(data: st.DataObject) -> None:
        with sandbox() as box:
            path = box.write_anchor("run.md", anchor_text("OURS").encode())
            assert "OURS" in block(box)
            kind = "same" if arrival == "touch" else data.draw(st.sampled_from(["same", "same size", "other"]))
            payload = {
                "same": anchor_text("OURS"),
                "same size": anchor_text("OURT"),
                "other": anchor_text(MARKER, data.draw(TEXT)),
            }[kind]
            time.sleep(data.draw(st.sampled_from([0.0, 0.002])))
            ARRIVALS[arrival](path, payload.encode("utf-8", "surrogatepass"))
            tally.add("arrivals")
            text = block(box)
            if kind == "same":
                assert text.count("- Next action: OURS") == 1 and NOT_HERE not in text
            else:
                assert_changed(text, path, "OURT" if kind == "same size" else MARKER)

    check()


def assert_changed(text: str, path: str, marker: str) -> None:
    """The one-line notice of an anchor of ours changed outside the writers, and nothing of its content."""
    assert marker not in text
    lines = untrusted_lines(text, path)
    assert len(lines) == 1, lines
    assert "changed outside the writers" in lines[0] and NOT_HERE not in lines[0]
    assert "only if the user" not in lines[0]
    for command in ("show", "adopt", "restore --force"):
        assert f"`session-workflow anchor {command} {path}`" in lines[0]
    assert "## Control anchor" not in text and "<anchor-head" not in text


def test_anchors_that_came_with_the_repository_are_only_named_until_adopted(size: Size, tally: Tally) -> None:
    """The upgrade and clone case: anchors with no record; content of any shape never leaks, adopt is one step."""

    @given(st.lists(TEXT, min_size=1, max_size=size.pick(3, 8)), st.sampled_from(["compact", "resume", "clear"]))
    @size.settings(10, 150)
    def check(bodies: list[str], source: str) -> None:
        with sandbox() as box:
            paths = [
                box.write_anchor(
                    f"cloned-{n}.md", anchor_text(MARKER, body).encode("utf-8", "surrogatepass"), age=n, trusted=False
                )
                for n, body in enumerate(bodies)
            ]
            text = block(box, source)
            tally.add("untrusted blocks")
            assert MARKER not in text
            named = [path for path in paths if untrusted_lines(text, path)]
            assert len(named) == min(len(paths), 3)
            if len(paths) > 3:
                assert f"{len(paths) - 3} more open anchor(s) not created here" in text
            adopted = cli(box, "anchor", "adopt", paths[0])
            assert adopted.returncode == 0, adopted.stderr
            after = block(box, source)
            assert MARKER in after and f"## Control anchor: `{paths[0]}`" in after

    check()


def test_an_untrusted_anchor_is_never_read(monkeypatch: pytest.MonkeyPatch) -> None:
    with sandbox() as box:
        path = box.write_anchor("cloned.md", anchor_text().encode(), trusted=False)
        opened = spy_reads(monkeypatch)
        assert_only_named(block(box), path)
        assert path not in opened


def test_step_refuses_an_untrusted_anchor_and_write_takes_it_over() -> None:
    with sandbox() as box:
        path = box.write_anchor("hand.md", anchor_text().encode(), trusted=False)
        before = snapshot(box.anchors())[path]
        stepped = cli(box, "anchor", "step", path, "x")
        assert stepped.returncode == 2 and stepped.stderr.count("\n") == 1
        assert NOT_HERE in stepped.stderr and f"session-workflow anchor adopt {path}" in stepped.stderr
        assert snapshot(box.anchors())[path] == before
        written = cli(box, "anchor", "write", path, stdin=anchor_text("WRITTEN-BY-US").encode())
        assert written.returncode == 0, written.stderr
        assert "WRITTEN-BY-US" in block(box)


def test_a_record_is_keyed_to_its_real_path() -> None:
    """A trusted anchor moved (or its project copied) elsewhere is a different file: named, not injected."""
    with sandbox() as box:
        path = box.write_anchor("run.md", anchor_text().encode())
        moved = os.path.join(box.root, "copy")
        shutil.copytree(box.project, moved, symlinks=True, copy_function=shutil.copy2)
        box.project = moved
        assert_only_named(block(box), os.path.join(moved, ".claude", "anchors", "run.md"))
        assert os.path.exists(path)


@given(st.binary(max_size=600))
def test_a_hostile_record_never_vouches(data: bytes) -> None:
    with sandbox() as box:
        path = box.write_anchor("run.md", anchor_text().encode(), trusted=False)
        folder = Places(box.env()).trust
        assert folder is not None
        os.makedirs(folder, exist_ok=True)
        with open(registry.record_file(folder, os.path.realpath(path)), "wb") as handle:
            handle.write(data)
        assert MARKER not in block(box)


def test_a_writer_killed_around_the_rename_strands_nothing() -> None:
    """The record names the staged file before the rename and keeps the file it replaces."""
    with sandbox() as box:
        path = box.write_anchor("run.md", anchor_text().encode())
        staged = os.stat(path)
        fake = registry.Identity(staged.st_dev, staged.st_ino + 1, staged.st_size + 1, staged.st_mtime_ns + 1)
        registry.Registry(Places(box.env())).vouch(path, None, "write", 0.0, fake)  # ... and the rename never happened
        assert MARKER in block(box)


# --- the recorded kind: ranked without reading, while the file is still what the writer wrote -----------------------


def done_text(marker: str) -> str:
    return anchor_text(marker).replace("# Run\n", "# Run\n\n**Status:** done\n")


def test_the_writers_record_the_kind_they_wrote() -> None:
    with sandbox() as box:
        path = cli(box, "anchor", "new", "--dir", box.project, "--task", "Kinds").stdout.strip()

        def recorded() -> int | None:
            record = registry.Registry(Places(box.env())).read(os.path.realpath(path))
            assert record is not None
            return record.kind_of(registry.Identity.of(os.stat(path)))

        assert recorded() == registry_kind("live")
        assert (
            cli(box, "anchor", "write", path, stdin=done_text("D").replace("step: 1", "step: 2").encode()).returncode
            == 0
        )
        assert recorded() == registry_kind("done")
        assert cli(box, "anchor", "step", path, "one more").returncode == 0
        assert recorded() == registry_kind("done")
        with open(path, "ab") as handle:
            handle.write(b"\nhand edit\n")
        assert recorded() is None  # another text: the kind is not its kind
        assert cli(box, "anchor", "adopt", path).returncode == 0
        assert recorded() == registry_kind("done")


def registry_kind(label: str) -> int:
    from session_workflow.anchor.text import KIND_LABELS

    return KIND_LABELS.index(label)


def test_only_the_injected_anchor_is_read_when_every_kind_is_recorded(monkeypatch: pytest.MonkeyPatch) -> None:
    with sandbox() as box:
        chosen = box.write_anchor("live.md", anchor_text("LIVE-ONE").encode(), age=600)
        for n in range(3):
            box.write_anchor(f"done-{n}.md", done_text(f"DONE-{n}").encode(), age=60 + n)
        opened = spy_reads(monkeypatch)
        text = block(box)
        assert "LIVE-ONE" in text and "`done-0.md` (done)" in text
        assert [name for name in opened if name.startswith(box.anchors())] == [chosen]


def test_a_kind_recorded_for_other_text_is_never_used(monkeypatch: pytest.MonkeyPatch) -> None:
    """The record's kind belongs to its newest identity; the file the record also vouches for is read instead."""
    with sandbox() as box:
        box.write_anchor("older.md", anchor_text("OLDER").encode(), age=600)
        newer = box.write_anchor("newer.md", done_text("NEWER").encode(), age=10)
        staged = os.stat(newer)  # a writer killed before its rename: the record names text that never arrived
        never = registry.Identity(staged.st_dev, staged.st_ino + 1, staged.st_size + 1, staged.st_mtime_ns + 1)
        registry.Registry(Places(box.env())).vouch(newer, None, "write", 0.0, never, kind=registry_kind("live"))
        opened = spy_reads(monkeypatch)
        assert "OLDER" in block(box) and newer in opened


@pytest.mark.parametrize("kind", [[registry.KIND_RULES + 1, 0], [registry.KIND_RULES, 4], [registry.KIND_RULES], 0])
def test_a_kind_of_other_rules_or_shape_is_read_again(kind: object, monkeypatch: pytest.MonkeyPatch) -> None:
    with sandbox() as box:
        box.write_anchor("older.md", anchor_text("OLDER").encode(), age=600)
        newer = box.write_anchor("newer.md", done_text("NEWER").encode(), age=10)
        folder = Places(box.env()).trust
        assert folder is not None
        record_path = registry.record_file(folder, os.path.realpath(newer))
        with open(record_path, encoding="utf-8") as handle:
            document = json.load(handle)
        document["kind"] = kind  # what a later version (or a hand) might have written: says "live"
        with open(record_path, "w", encoding="utf-8") as handle:
            json.dump(document, handle)
        opened = spy_reads(monkeypatch)
        assert "OLDER" in block(box) and newer in opened


def test_a_chosen_anchor_gone_since_the_listing_gives_way(monkeypatch: pytest.MonkeyPatch) -> None:
    with sandbox() as box:
        box.write_anchor("older.md", anchor_text("OLDER").encode(), age=600)
        newer = box.write_anchor("newer.md", anchor_text("NEWER").encode(), age=10)
        spy_reads(monkeypatch, missing=newer)
        text = block(box)
        assert "OLDER" in text and "newer.md" not in text


# --- session affinity ---------------------------------------------------------------------------------------------


def test_each_session_gets_the_anchor_it_keeps(size: Size, tally: Tally) -> None:
    """Any number of sessions, any order of writes: each gets its own, names the others' as parallel tracks."""

    @given(st.integers(2, size.pick(3, 6)), st.randoms(use_true_random=False), st.sampled_from(["compact", "resume"]))
    @size.settings(4, 40)
    def check(count: int, rng: object, source: str) -> None:
        with sandbox() as box:
            sessions = [f"session-{n}" for n in range(count)]
            paths = {}
            for session in sessions:
                made = cli(box, "anchor", "new", "--dir", box.project, "--task", f"Track {session}", session=session)
                assert made.returncode == 0, made.stderr
                paths[session] = made.stdout.strip()
            order = list(sessions)
            rng.shuffle(order)  # type: ignore[attr-defined]
            for session in order:  # the newest anchor is whichever was stepped last
                assert cli(box, "anchor", "step", paths[session], f"{session} moved", session=session).returncode == 0
                time.sleep(0.002)
            for session in sessions:
                text = block(box, source, session)
                tally.add("sessions")
                assert f"## Control anchor: `{paths[session]}`" in text, (session, text[:400])
                assert f"- Step 1: {session} moved" in text
                for other in sessions:
                    if other != session:
                        assert f"Parallel track: `{os.path.basename(paths[other])}` is kept by another session" in text
            stranger = block(box, source, "a-session-with-no-anchor")
            assert f"## Control anchor: `{paths[order[-1]]}`" in stranger  # no affinity: newest first
            assert "Parallel track: " not in stranger

    check()


def test_adopt_ties_the_anchor_to_the_adopting_session() -> None:
    with sandbox() as box:
        older = box.write_anchor("older.md", anchor_text("OLDER").encode(), age=600, trusted=False)
        box.write_anchor("newer.md", anchor_text("NEWER").encode(), age=10)
        assert cli(box, "anchor", "adopt", older, session="keeper").returncode == 0
        assert "OLDER" in block(box, "compact", "keeper")
        assert "NEWER" in block(box, "compact", "someone-else")


# --- future mtimes ------------------------------------------------------------------------------------------------


@given(
    st.floats(2.0, 10 * 365 * 86400.0), st.floats(0.0, 5 * 3600.0), st.sampled_from(["compact", "resume", "startup"])
)
def test_a_future_mtime_never_outranks_a_live_anchor(ahead: float, age: float, source: str) -> None:
    with sandbox() as box:
        box.write_anchor("present.md", anchor_text("PRESENT").encode(), age=age)
        box.write_anchor("future.md", anchor_text("FUTURE").encode(), age=-ahead)
        text = block(box, source)
        assert "PRESENT" in text and "FUTURE" not in text


@given(st.floats(2.0, 10 * 365 * 86400.0))
def test_a_future_mtime_is_never_shown_as_just_now(ahead: float) -> None:
    with sandbox() as box:
        box.write_anchor("future.md", anchor_text("FUTURE").encode(), age=-ahead)
        text = block(box)
        assert "FUTURE" in text
        assert "<1 min" not in text and "future time" in text
