"""Writes that cannot be lost silently.

``anchor write`` is a compare-and-swap on the frontmatter ``step:``: text older than the stored anchor is refused
(exit 2, one line naming ``anchor show``) unless ``--force``. Journal lines land whole or not at all, on a full
disk and under RLIMIT_FSIZE too, and a work-state change that lands is journaled.
"""

from __future__ import annotations

import errno
import functools
import io
import json
import os
import resource
import sys
import time
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from session_workflow.cli import main as cli
from session_workflow.core import jsonlog
from session_workflow.workstate import writer as workstate_writer

from .processes import fork_call
from .sandbox import Sandbox, sandbox
from .sizes import Size, Tally

SESSION = "lost-writes-session"


def anchor(step: int, marker: str = "x") -> bytes:
    return f"---\nformat: anchor/v1\nstep: {step}\n---\n# Run\n\n## Cursor\n- Next action: {marker}\n".encode()


def run_cli(box: Sandbox, argv: list[str], stdin: bytes = b"") -> tuple[int, str]:
    """(exit code, stderr) of one CLI command run in-process in the sandbox's environment."""
    saved = (sys.stdin, sys.stdout, sys.stderr)
    saved_env = dict(os.environ)
    err = io.StringIO()
    sys.stdin = io.TextIOWrapper(io.BytesIO(stdin), encoding="utf-8")
    sys.stdout, sys.stderr = io.StringIO(), err
    os.environ.update(box.env())
    try:
        return cli.main(argv), err.getvalue()
    finally:
        sys.stdin, sys.stdout, sys.stderr = saved
        os.environ.clear()
        os.environ.update(saved_env)


# --- compare-and-swap -----------------------------------------------------------------------------------------------


@given(st.integers(0, 10**6), st.integers(0, 10**6), st.booleans())
def test_write_refuses_text_older_than_the_stored_anchor(stored: int, given_step: int, force: bool) -> None:
    with sandbox() as box:
        path = box.write_anchor("run.md", anchor(stored, "STORED"))
        before = Path(path).read_bytes()
        argv = ["anchor", "write", path, *(["--force"] if force else [])]
        code, err = run_cli(box, argv, anchor(given_step, "NEW"))
        after = Path(path).read_bytes()
        if given_step < stored and not force:
            assert code == 2 and err.count("\n") == 1, err
            assert "session-workflow anchor show" in err and str(stored) in err
            assert after == before
        else:
            assert code == 0, err
            assert b"NEW" in after and f"step: {max(stored, given_step)}\n".encode() in after


def test_a_step_taken_since_the_read_refuses_the_stale_rewrite() -> None:
    """Two writers read step 3; one steps it to 4; the other's rewrite of what it read would lose that step."""
    with sandbox() as box:
        path = box.write_anchor("run.md", anchor(3))
        read_by_both = Path(path).read_bytes()
        assert run_cli(box, ["anchor", "step", path, "the first writer's step"])[0] == 0
        code, err = run_cli(box, ["anchor", "write", path], read_by_both.replace(b"x\n", b"the second writer\n"))
        assert code == 2 and "moved on" in err
        assert "- Step 4: the first writer's step" in Path(path).read_text(encoding="utf-8")


# --- whole journal lines ----------------------------------------------------------------------------------------------


def _journal_lines(path: str) -> list[dict[str, object]]:
    with open(path, "rb") as handle:
        data = handle.read()
    assert not data or data.endswith(b"\n"), f"a torn last line: {data[-80:]!r}"
    return [json.loads(line) for line in data.splitlines()]


def test_short_writes_leave_no_torn_line(monkeypatch: pytest.MonkeyPatch, size: Size, tally: Tally) -> None:
    """Every way a write can come up short (a full disk after n bytes, or at once) leaves whole lines only."""
    real_write = os.write

    @given(st.lists(st.integers(-1, 400), min_size=1, max_size=size.pick(10, 60)))
    @size.settings(30, 500)
    def check(limits: list[int]) -> None:
        with sandbox() as box:
            log = os.path.join(box.root, "log.ndjson")
            landed = 0
            for limit in limits:

                def short(fd: int, data: bytes, limit: int = limit) -> int:
                    if limit < 0:
                        raise OSError(errno.ENOSPC, "No space left on device")
                    return real_write(fd, data[:limit])

                record = {"n": landed, "pad": "p" * (limit % 97)}
                monkeypatch.setattr(os, "write", short)
                ok = jsonlog.append_record(log, record, log + ".1")
                monkeypatch.setattr(os, "write", real_write)
                tally.add("appends")
                landed += ok
                lines = _journal_lines(log) if os.path.exists(log) else []
                assert len(lines) == landed
                assert ok == (lines[-1:] == [record])

    check()


def _append_under_fsize(log: str, room: int) -> object:
    """In a child: cap the file size ``room`` bytes past the log's end, then append one long line."""
    size = os.path.getsize(log) if os.path.exists(log) else 0
    resource.setrlimit(resource.RLIMIT_FSIZE, (size + room, size + room))
    return jsonlog.append_record(log, {"line": "y" * 500}, log + ".1")


def test_rlimit_fsize_leaves_whole_lines(size: Size, tally: Tally) -> None:
    with sandbox() as box:
        log = os.path.join(box.root, "log.ndjson")
        expected = 0
        for room in range(0, size.pick(600, 2000), size.pick(37, 7)):
            landed = fork_call(functools.partial(_append_under_fsize, log, room)).result(30)
            tally.add("appends under RLIMIT_FSIZE")
            expected += bool(landed)
            assert len(_journal_lines(log)) == expected
        assert expected > 0


def _state_step_under_fsize(box: Sandbox, room: int, step: str) -> object:
    journal = os.path.join(box.state_dir(), "work-state.log")
    size = os.path.getsize(journal)
    resource.setrlimit(resource.RLIMIT_FSIZE, (size + room, size + room))
    try:
        workstate_writer.set_step(
            os.path.join(box.state_dir(), "work-state.json"), SESSION, step, slug=None, now=time.time()
        )
    except workstate_writer.WorkStateError:
        return False
    return True


def test_a_state_change_that_lands_is_journaled(size: Size, tally: Tally) -> None:
    """Under any file-size limit the state either changes with its journal line, or does not change at all."""
    with sandbox() as box:
        state = os.path.join(box.state_dir(), "work-state.json")
        journal = os.path.join(box.state_dir(), "work-state.log")
        argv = ["state", "set", "--ticket", "5", "--title", "J", "--dir", box.project, "--session", SESSION]
        assert run_cli(box, argv)[0] == 0
        while os.path.getsize(journal) < 2 * os.path.getsize(state):  # a limit can now fit the state, not a line
            workstate_writer.set_step(state, SESSION, "warm-up", slug=None, now=time.time())
        for index, room in enumerate(range(0, size.pick(300, 1200), size.pick(11, 3))):
            step = f"step-{index}"
            before = json.loads(Path(state).read_text(encoding="utf-8"))["step"]
            landed = fork_call(functools.partial(_state_step_under_fsize, box, room, step)).result(30)
            tally.add("state writes under RLIMIT_FSIZE")
            now = json.loads(Path(state).read_text(encoding="utf-8"))["step"]
            steps = [entry["state"]["step"] for entry in _journal_lines(journal) if entry["op"] == "step"]  # type: ignore[index]
            if now != before:
                assert landed and now == step and steps[-1] == step
            else:
                assert not landed
