"""The run never loses its own anchor to git, a lost file or a full disk (an edit: tests/hook/test_tool_edit.py).

1. Same bytes, new inode: a record also keeps the SHA-256 of the bytes the writer left, and a file whose identity
   moved but whose bytes did not (stash and pop, checkout, ``cp -p``, ``touch``, a backup put back) is trusted.
2. A copy outside the repository: the writers keep the last version beside the record; an anchor the session keeps
   that is gone, or changed outside the writers, is named in one line with the commands the model runs itself
   (``anchor restore``; ``anchor show`` then ``anchor adopt``); ``step`` and ``write`` refuse a changed one.
3. A record that cannot be written fails the write, and the anchor's bytes stay as they were.

The hook runs cold here (``python3 -I -S hooks/hook.py SessionStart``, as Claude Code starts it), the CLI as the Bash
tool runs it. The unwritable state folder is a file where its folder should be (the tests run as root, so a
chmod binds nothing), and a full tmpfs where this machine lets the test mount one.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import sys
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from session_workflow.anchor import registry
from session_workflow.core.errors import Failure
from session_workflow.core.places import Places

from .sandbox import REPO, Sandbox, sandbox, snapshot
from .test_trust import MARKER, NOT_HERE, anchor_text, assert_changed, assert_only_named, cli

COLD_PYTHON = shutil.which("python3", path="/usr/bin:/bin") or sys.executable


def cold_block(box: Sandbox, source: str = "compact") -> str:
    """The block the real shim prints under ``python3 -I -S`` (no platformdirs, no filelock), as Claude Code runs it."""
    payload = json.dumps(box.payload("SessionStart", source=source)).encode()
    done = subprocess.run(
        [COLD_PYTHON, "-I", "-S", str(REPO / "hooks" / "hook.py"), "SessionStart"],
        input=payload,
        env=box.env(),
        capture_output=True,
        timeout=30,
        cwd=box.project,
        check=False,
    )
    assert done.returncode == 0 and not done.stderr, done.stderr
    if not done.stdout:
        return ""
    context: str = json.loads(done.stdout)["hookSpecificOutput"]["additionalContext"]
    return context


def new_anchor(box: Sandbox, marker: str = "OURS") -> str:
    """An anchor made by ``anchor new`` in this session, written whole with ``anchor write`` (step 2)."""
    path = cli(box, "anchor", "new", "--dir", box.project, "--task", "Own run").stdout.strip()
    written = cli(box, "anchor", "write", path, stdin=anchor_text(marker).replace("step: 1", "step: 2").encode())
    assert written.returncode == 0, written.stderr
    return path


def git(box: Sandbox, *argv: str) -> None:
    env = {**box.env(), "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t"}
    env["GIT_COMMITTER_EMAIL"] = "t@t"
    subprocess.run(["git", *argv], cwd=box.project, env=env, check=True, capture_output=True, timeout=60)


def git_project(box: Sandbox) -> None:
    git(box, "init", "-q")
    with open(os.path.join(box.project, "README"), "w") as handle:
        handle.write("x\n")
    git(box, "add", "README")
    git(box, "commit", "-qm", "init")


# --- 2. same bytes, new inode ----------------------------------------------------------------------------------


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_git_stash_all_and_pop_keeps_the_anchor_injected_once() -> None:
    with sandbox() as box:
        git_project(box)
        path = new_anchor(box)
        before = os.stat(path)
        git(box, "stash", "--all")
        assert not os.path.exists(path)
        git(box, "stash", "pop")
        assert os.stat(path).st_ino != before.st_ino or os.stat(path).st_mtime_ns != before.st_mtime_ns
        text = cold_block(box)
        assert text.count("- Next action: OURS") == 1 and NOT_HERE not in text and "changed" not in text
        assert cli(box, "anchor", "step", path, "after the pop").returncode == 0  # the writers take it too
        record = registry.Registry(Places(box.env())).read(os.path.realpath(path))
        assert record is not None and record.vouches_for(registry.Identity.of(os.stat(path)))


@pytest.mark.parametrize("how", ["cp -p", "touch", "backup"])
def test_the_writers_bytes_at_a_new_inode_or_mtime_are_trusted(how: str) -> None:
    with sandbox() as box:
        path = new_anchor(box)
        data = Path(path).read_bytes()
        if how == "cp -p":
            shutil.copy2(path, path + ".bak")
            os.replace(path + ".bak", path)
        elif how == "touch":
            os.utime(path, None)
        else:
            os.unlink(path)
            with open(path, "wb") as handle:
                handle.write(data)
        assert cold_block(box).count("- Next action: OURS") == 1


def test_the_hook_writes_nothing_when_it_trusts_moved_bytes() -> None:
    """Read-only on the hot path: the record follows at the next writer, never in the hook (no lock taken)."""
    with sandbox() as box:
        path = new_anchor(box)
        shutil.copy2(path, path + ".bak")
        os.replace(path + ".bak", path)
        folder = Places(box.env()).trust
        assert folder is not None
        before = snapshot(folder)
        assert "OURS" in cold_block(box)
        assert snapshot(folder) == before


def test_a_different_file_of_the_same_size_never_matches() -> None:
    with sandbox() as box:
        path = new_anchor(box, "OURS")
        size = os.path.getsize(path)
        with open(path, "wb") as handle:
            handle.write(anchor_text("EVIL").replace("step: 1", "step: 2").encode())
        assert os.path.getsize(path) == size
        assert_changed(cold_block(box), path, "EVIL")


# --- a hostile repository still cannot make its anchor trusted -------------------------------------------------


def planted(box: Sandbox, name: str, marker: str = MARKER) -> str:
    return box.write_anchor(name, anchor_text(marker).encode(), trusted=False)


def test_a_cloned_or_unzipped_anchor_of_our_size_and_name_elsewhere_is_only_named() -> None:
    """The same name and size as ours in another checkout (a clone, an unzip): no record there, never trusted."""
    with sandbox() as box:
        ours = new_anchor(box, "OURS")
        other = os.path.join(box.root, "clone")
        archive = os.path.join(box.root, "repo.zip")
        with zipfile.ZipFile(archive, "w") as bundle:
            bundle.writestr(
                ".claude/anchors/" + os.path.basename(ours), Path(ours).read_bytes().replace(b"OURS", b"EVIL")
            )
        with zipfile.ZipFile(archive) as bundle:
            bundle.extractall(other)
        box.project = other
        clone = os.path.join(other, ".claude", "anchors", os.path.basename(ours))
        assert os.path.getsize(clone) == os.path.getsize(ours)
        assert_only_named(cold_block(box), clone, "EVIL")


def test_a_pulled_or_copied_anchor_over_ours_is_changed_not_trusted() -> None:
    """``git pull`` or a copy over our own anchor: other bytes, of any size, are named as changed, never shown."""
    with sandbox() as box:
        path = new_anchor(box, "OURS")
        for text in (anchor_text("EVIL").replace("step: 1", "step: 2"), anchor_text(MARKER, "much longer")):
            os.unlink(path)
            with open(path, "w") as handle:
                handle.write(text)
            assert_changed(cold_block(box), path, "EVIL" if "EVIL" in text else MARKER)


def test_a_planted_record_copy_or_session_list_in_the_repository_is_never_read() -> None:
    """Records, copies and session lists live in the user state folder only: the same names under the project
    (or in a variable the project sets) vouch for nothing and name nothing gone."""
    with sandbox() as box:
        path = planted(box, "run.md")
        data = Path(path).read_bytes()
        folder = Places(box.env()).trust
        assert folder is not None
        real = os.path.realpath(path)
        digest = registry.digest_of(data)
        identity = registry.Identity.of(os.stat(path))
        record = registry.Record(real, [identity], [box.session], 0, digest, 9, (digest, True))
        for where in (box.anchors(), os.path.join(box.project, ".claude", "session-workflow"), box.project):
            os.makedirs(where, exist_ok=True)
            with open(registry.record_file(where, real), "wb") as handle:
                handle.write(registry.encode(record, "new", 0.0))
            with open(registry.copy_file(where, real, digest), "wb") as handle:
                handle.write(data)
        index = Places(box.env()).kept_index(box.session)
        assert index is not None
        os.makedirs(os.path.join(box.anchors(), "sessions"), exist_ok=True)
        with open(os.path.join(box.anchors(), "sessions", os.path.basename(index)), "w") as handle:
            json.dump({"v": 1, "anchors": [os.path.join(box.anchors(), "gone.md")]}, handle)
        text = cold_block(box)
        assert_only_named(text, path)
        assert "gone" not in text
        restored = cli(box, "anchor", "restore", path)
        assert restored.returncode == 2 and "no session of this machine wrote it" in restored.stderr


def test_a_planted_anchor_of_our_size_under_a_new_name_is_only_named() -> None:
    with sandbox() as box:
        ours = new_anchor(box, "OURS")
        fake = os.path.join(box.anchors(), "zz-" + os.path.basename(ours))
        with open(fake, "wb") as handle:
            handle.write(Path(ours).read_bytes().replace(b"OURS", b"EVIL"))
        text = cold_block(box)
        assert text.count("- Next action: OURS") == 1 and "EVIL" not in text
        named = [line for line in text.splitlines() if fake in line]
        assert len(named) == 1 and NOT_HERE in named[0] and f"session-workflow anchor adopt {fake}" in named[0]


# --- 3. gone and changed: one line each, the model's own commands ------------------------------------------------


def test_gone_after_the_anchors_folder_is_deleted_golden() -> None:
    with sandbox() as box:
        path = new_anchor(box)
        shutil.rmtree(os.path.join(box.project, ".claude"))
        assert cold_block(box) == (
            "session-workflow: state restored from disk at SessionStart (compact); it outranks the summary of"
            " earlier context.\n\n"
            f"Control anchor gone: `{path}`, last written here at step 2, is no longer on disk; put it back with"
            f" `session-workflow anchor restore {path}`."
        )
        restored = cli(box, "anchor", "restore", path)
        assert restored.returncode == 0, restored.stderr
        # The anchor's HEAD follows, as `anchor show` prints it: the model continues from it in the same turn.
        first, shown = restored.stdout.split("\n", 1)
        assert first == f"restored {path} (step 2)"
        assert shown == cli(box, "anchor", "show", path).stdout and shown.count("- Next action: OURS") == 1
        again = cli(box, "anchor", "restore", path)
        assert again.stdout.split("\n", 1) == [
            f"{path} is already step 2, as this machine's writers left it: nothing to restore",
            shown,
        ]
        assert cold_block(box).count("- Next action: OURS") == 1
        assert Path(box.anchors(), ".gitignore").read_text() == "*\n"


def test_changed_outside_the_writers_golden() -> None:
    with sandbox() as box:
        path = new_anchor(box)
        with open(path, "a") as handle:
            handle.write(f"{MARKER}\n")
        assert cold_block(box) == (
            "session-workflow: state restored from disk at SessionStart (compact); it outranks the summary of"
            " earlier context.\n\n"
            f"Control anchor changed outside the writers (not shown): `{path}`, last written here at step 2; the bytes"
            " there now are not the run's (another program wrote them: a git pull, a checkout, an editor): read it"
            f" with `session-workflow anchor show {path}`, then keep it with `session-workflow anchor adopt {path}`"
            f" only if it is the run's to continue, or put step 2 back with"
            f" `session-workflow anchor restore --force {path}`."
        )


def test_a_session_without_anchors_gets_nothing_and_another_sessions_gone_anchor_is_not_named() -> None:
    with sandbox() as box:
        path = new_anchor(box)
        os.unlink(path)
        box.session = "another-session"
        assert cold_block(box) == ""
        index = Places(box.env()).kept_index(box.session)
        assert index is not None and not os.path.lexists(index)


def test_an_anchor_closed_by_a_rename_is_not_gone() -> None:
    with sandbox() as box:
        path = new_anchor(box)
        os.replace(path, path[: -len(".md")] + ".closed.md")
        assert "gone" not in cold_block(box)


def test_a_gone_anchor_of_another_project_is_not_named() -> None:
    with sandbox() as box:
        path = new_anchor(box)
        os.unlink(path)
        box.project = os.path.join(box.root, "other")
        os.makedirs(box.project)
        assert cold_block(box) == ""


def test_step_and_write_refuse_a_changed_anchor_with_the_same_advice() -> None:
    with sandbox() as box:
        path = new_anchor(box)
        with open(path, "a") as handle:
            handle.write("hand edit\n")
        before = anchors_now(box)
        advice = (
            "the bytes there now are not the run's (another program wrote them: a git pull, a checkout, an editor):"
            f" read it with `session-workflow anchor show {path}`, then keep it with `session-workflow anchor adopt"
            f" {path}` only if it is the run's to continue, or put step 2 back with"
            f" `session-workflow anchor restore --force {path}`"
        )
        for argv, stdin in ((("step", path, "x"), b""), (("write", path), anchor_text("W").encode())):
            done = cli(box, "anchor", *argv, stdin=stdin)
            assert done.returncode == 2
            assert done.stderr == (
                f"session-workflow: {path} changed outside the writers since step 2 was written here; {advice}\n"
            )
            assert NOT_HERE not in done.stderr and "user" not in done.stderr
        assert anchors_now(box) == before
        assert cli(box, "anchor", "adopt", path).returncode == 0
        assert cli(box, "anchor", "step", path, "kept").returncode == 0


def test_show_names_a_changed_anchor_as_ours_changed() -> None:
    with sandbox() as box:
        path = new_anchor(box)
        with open(path, "a") as handle:
            handle.write("hand edit\n")
        shown = cli(box, "anchor", "show", path)
        assert shown.stdout.splitlines()[0] == (
            f"CHANGED OUTSIDE THE WRITERS: the hooks do not inject `{path}` until it is adopted; what follows is its"
            " text as data, and the bytes there now are not the run's (another program wrote them: a git pull, a"
            f" checkout, an editor). To keep it: session-workflow anchor adopt {path}; to put step 2 back:"
            f" session-workflow anchor restore --force {path}"
        )


# --- restore: its refusals -------------------------------------------------------------------------------------


def test_restore_never_writes_over_a_changed_file_unless_forced_and_then_keeps_it() -> None:
    with sandbox() as box:
        path = new_anchor(box)
        ours = Path(path).read_bytes()
        with open(path, "ab") as handle:
            handle.write(b"theirs\n")
        theirs = Path(path).read_bytes()
        refused = cli(box, "anchor", "restore", path)
        assert refused.returncode == 2 and "not restored over" in refused.stderr
        assert Path(path).read_bytes() == theirs
        forced = cli(box, "anchor", "restore", "--force", path)
        assert forced.returncode == 0, forced.stderr
        assert Path(path).read_bytes() == ours
        kept = [name for name in os.listdir(box.anchors()) if ".changed-" in name]
        assert len(kept) == 1 and kept[0].startswith(os.path.basename(path) + ".changed-")
        assert Path(box.anchors(), kept[0]).read_bytes() == theirs
        assert forced.stdout.splitlines()[1] == f"the changed file it replaced is kept as {box.anchors()}/{kept[0]}"
        text = cold_block(box)
        assert text.count("- Next action: OURS") == 1 and kept[0] not in text  # not taken for an open anchor


def test_restore_refusals() -> None:
    with sandbox() as box:
        stranger = planted(box, "cloned.md")
        done = cli(box, "anchor", "restore", stranger)
        assert done.returncode == 2
        assert (
            done.stderr
            == f"session-workflow: {stranger}: no session of this machine wrote it, so there is no copy to put back\n"
        )
        path = new_anchor(box)
        same = cli(box, "anchor", "restore", path)
        assert same.returncode == 0 and same.stdout.split("\n", 1)[0].endswith("nothing to restore")
        for argv in (("restore", os.path.join(box.project, "x.md")), ("restore", path[:-3] + ".closed.md")):
            assert cli(box, "anchor", *argv).returncode == 2
        record = registry.Registry(Places(box.env())).read(os.path.realpath(path))
        folder = Places(box.env()).trust
        assert record is not None and record.copy is not None and folder is not None
        os.unlink(registry.copy_file(folder, record.path, record.copy[0]))
        os.unlink(path)
        lost = cli(box, "anchor", "restore", path)
        assert lost.returncode == 1 and "is not kept" in lost.stderr and not os.path.exists(path)


def test_restore_refuses_a_copy_that_is_not_the_recorded_one() -> None:
    with sandbox() as box:
        path = new_anchor(box)
        record = registry.Registry(Places(box.env())).read(os.path.realpath(path))
        folder = Places(box.env()).trust
        assert record is not None and record.copy is not None and folder is not None
        with open(registry.copy_file(folder, record.path, record.copy[0]), "ab") as handle:
            handle.write(b"tampered\n")
        os.unlink(path)
        assert cli(box, "anchor", "restore", path).returncode == 1 and not os.path.exists(path)


def test_restore_puts_back_a_head_only_copy_of_a_large_anchor() -> None:
    with sandbox() as box:
        path = new_anchor(box)
        text = anchor_text("BIG").replace("step: 1", "step: 3") + "<!-- anchor:tail -->\n" + "t" * 70_000 + "\n"
        assert cli(box, "anchor", "write", path, stdin=text.encode()).returncode == 0
        os.unlink(path)
        restored = cli(box, "anchor", "restore", path)
        first, shown = restored.stdout.split("\n", 1)
        assert first == f"restored {path} (step 3), its HEAD only: the file was over 64 KiB"
        assert shown.count("- Next action: BIG") == 1
        assert Path(path).read_text() == text.split("<!-- anchor:tail -->")[0]
        assert cold_block(box).count("- Next action: BIG") == 1


# --- 4. a record that cannot be written fails the write ----------------------------------------------------------


def block_the_state_folder(box: Sandbox) -> None:
    """A file where the trust folder should be: no record, copy or list can be made there (even by root)."""
    folder = Places(box.env()).trust
    assert folder is not None
    if os.path.isdir(folder):
        shutil.rmtree(folder)
    os.makedirs(os.path.dirname(folder), exist_ok=True)
    with open(folder, "w") as handle:
        handle.write("in the way\n")


def anchors_now(box: Sandbox) -> dict[str, object]:
    """The anchors folder's files, bytes and identities, but the writers' lock files (taken before a failure)."""
    return {path: seen for path, seen in snapshot(box.anchors()).items() if not path.endswith(".lock")}


def assert_failed_untouched(done: subprocess.CompletedProcess[str], before: dict[str, object], box: Sandbox) -> None:
    assert done.returncode == 1, done.stdout
    assert done.stderr.count("\n") == 1 and "so it was left as it was" in done.stderr, done.stderr
    assert anchors_now(box) == before


def test_write_step_new_and_adopt_fail_when_the_record_cannot_be_made() -> None:
    with sandbox() as box:
        path = new_anchor(box)
        hand = planted(box, "hand.md")
        block_the_state_folder(box)
        before = anchors_now(box)
        newer = anchor_text("NEW").replace("step: 1", "step: 5").encode()
        assert_failed_untouched(cli(box, "anchor", "write", path, stdin=newer), before, box)
        assert_failed_untouched(cli(box, "anchor", "write", hand, stdin=anchor_text("NEW").encode()), before, box)
        created = cli(box, "anchor", "new", "--dir", box.project, "--task", "Another")
        assert created.returncode == 1 and created.stderr.count("\n") == 1
        assert anchors_now(box) == before
        adopted = cli(box, "anchor", "adopt", hand)
        assert adopted.returncode == 1 and adopted.stderr.count("\n") == 1
        assert anchors_now(box) == before


def test_step_fails_untouched_when_the_record_cannot_be_made(monkeypatch: pytest.MonkeyPatch) -> None:
    """``step`` (refused earlier, as not ours, once the record is unreachable) fails at the record itself too."""
    from session_workflow.anchor import writer

    with sandbox() as box:
        path = new_anchor(box)
        before = anchors_now(box)

        def full(*_args: object, **_kwargs: object) -> str:
            raise OSError(28, "No space left on device")

        monkeypatch.setattr(registry.Registry, "vouch", full)
        with pytest.raises(Failure, match="No space left on device"):
            writer.step_anchor(path, "x", Places(box.env()), box.session, 0.0)
        assert anchors_now(box) == before


@contextlib.contextmanager
def small_tmpfs(folder: str) -> Iterator[str]:
    """A 64 KiB tmpfs at ``folder``, the user's alone (a tmpfs is 1777 by default: its records would not be
    trusted); skipped where this machine does not let the test mount one."""
    os.makedirs(folder, exist_ok=True)
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k,mode=0700", "tmpfs", folder], capture_output=True)
    if mounted.returncode != 0:
        pytest.skip("cannot mount a tmpfs here")
    try:
        yield folder
    finally:
        subprocess.run(["umount", "-l", folder], capture_output=True, check=False)


def fill(folder: str) -> None:
    fd = os.open(os.path.join(folder, "filler"), os.O_WRONLY | os.O_CREAT, 0o600)
    try:
        with contextlib.suppress(OSError):
            while os.write(fd, b"\0" * 512):
                pass
    finally:
        os.close(fd)


@pytest.mark.skipif(os.geteuid() != 0 or shutil.which("mount") is None, reason="needs root to mount a tmpfs")
def test_a_full_state_folder_fails_the_write_and_keeps_the_anchor() -> None:
    with sandbox(on_disk=True) as box:
        folder = Places(box.env()).trust
        assert folder is not None
        # The trust records' own folder fills (the state folder also holds the CLI's bytecode, hundreds of KiB).
        with small_tmpfs(folder):
            path = new_anchor(box)
            fill(folder)
            before = anchors_now(box)
            done = cli(box, "anchor", "write", path, stdin=anchor_text("NEW").replace("step: 1", "step: 5").encode())
            assert "No space left on device" in done.stderr
            assert_failed_untouched(done, before, box)
            assert_failed_untouched(cli(box, "anchor", "step", path, "x"), before, box)
            assert cold_block(box).count("- Next action: OURS") == 1
