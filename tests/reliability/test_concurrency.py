"""Concurrency: N writer processes × M ``anchor step`` and ``state step`` each on one anchor and one state file,
while 4 reader processes parse both in a loop the way the hooks do (without a lock).

Properties: every read parses (readers never lock, so they must only ever see a whole file); no write is lost
(the anchor's step counter ends at N×M with every ``- Step k`` bullet present once, each writer's steps in its
own order; the work-state journal chains every change to the one before it); nothing is left behind but the
sibling lock files ``.<name>.lock``, which are by design (a lock file is never removed while a writer may be
waiting on it, so removing it would let two writers hold "the" lock at once).

Writers run the CLI's own entry point (``cli.main``) in forked processes; one slice starts the real
``bin/session-workflow`` command.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from collections.abc import Callable

from session_workflow.anchor import discover
from session_workflow.anchor import writer as anchor_writer
from session_workflow.anchor.text import split_head
from session_workflow.cli import main as cli
from session_workflow.core.places import Places
from session_workflow.workstate import state as workstate

from .processes import Child, fork_call
from .sandbox import REPO, Sandbox, sandbox
from .sizes import Size, Tally

SESSION = "writer-session"
READERS = 4
STEP_BULLET = re.compile(r"^- Step (\d+): w(\d+) s(\d+)$", re.MULTILINE)


def _setup(box: Sandbox) -> tuple[str, str]:
    """An anchor made by ``anchor new`` and a work state made by ``state set``; returns their paths."""
    anchor = anchor_writer.create_anchor(box.project, "concurrency", time.time(), Places(os.environ))
    code = cli.main(["state", "set", "--ticket", "7", "--title", "Race", "--dir", box.project, "--session", SESSION])
    assert code == 0
    return anchor, os.path.join(box.state_dir(), "work-state.json")


def _writer(index: int, count: int, anchor: str, project: str) -> Callable[[], object]:
    def write() -> object:
        failures = 0
        for step in range(count):
            failures += cli.main(["anchor", "step", anchor, f"w{index} s{step}"]) != 0
            state_args = ["state", "step", f"w{index}-{step}", "--dir", project, "--session", SESSION]
            failures += cli.main(state_args) != 0
        return failures

    return write


def _reader(anchor: str, state: str, project: str, stop: str) -> Callable[[], object]:
    """Parse both files as the hook does until ``stop`` exists; count reads and the ones that did not parse."""

    def read() -> object:
        reads = bad = 0
        # Stop when told, or when the sandbox is gone (a failed test must not leave readers spinning).
        while not os.path.exists(stop) and os.path.isdir(project):
            parsed = discover.read_anchor(anchor)
            frontmatter = parsed.frontmatter if parsed is not None else {}
            if parsed is None or parsed.cursor is None or not frontmatter.get("step", "").isdigit():
                bad += 1
            loaded = workstate.load(state, project)
            if loaded is None or loaded.state.session != SESSION or not loaded.stored_text:
                bad += 1
            reads += 2
        return [reads, bad]

    return read


def _journal(state: str) -> list[dict[str, object]]:
    folder = os.path.dirname(state)
    lines: list[dict[str, object]] = []
    for name in ("work-state.log.1", "work-state.log"):
        path = os.path.join(folder, name)
        if os.path.exists(path):
            with open(path, "rb") as handle:
                lines += [json.loads(line) for line in handle.read().splitlines()]
    return lines


def check_anchor(anchor: str, writers: int, count: int) -> None:
    """The counter and the bullets account for every step, and each writer's steps are in its own order."""
    with open(anchor, encoding="utf-8") as handle:
        head = split_head(handle.read())[0]
    total = writers * count
    assert re.search(rf"^step: {total}$", head, re.MULTILINE), "the frontmatter counter lost a step"
    bullets = [tuple(int(group) for group in match.groups()) for match in STEP_BULLET.finditer(head)]
    assert sorted(number for number, _w, _s in bullets) == list(range(1, total + 1))
    for writer in range(writers):
        mine = sorted((step, number) for number, index, step in bullets if index == writer)
        assert [step for step, _n in mine] == list(range(count))
        assert [number for _s, number in mine] == sorted(number for _s, number in mine), "a writer's steps reordered"


def check_state(state: str, writers: int, count: int) -> None:
    """Each journal line's ``was`` is the previous line's ``state``: no change was made from a stale read."""
    journal = _journal(state)
    steps = [line for line in journal if line["op"] == "step"]
    rotated = os.path.exists(os.path.join(os.path.dirname(state), "work-state.log.1"))
    if not rotated:
        assert len(steps) == writers * count
    chain = steps if rotated else journal
    for previous, line in zip(chain, chain[1:]):
        assert line["was"] == previous["state"], f"lost update: {previous} then {line}"
    seen = [str(line["state"]["step"]) for line in steps if isinstance(line["state"], dict)]
    assert len(set(seen)) == len(seen), "a step written twice"
    with open(state, "rb") as handle:
        document = json.loads(handle.read())
    assert document["step"] == seen[-1]


def check_debris(box: Sandbox, anchor: str) -> None:
    """Only the files themselves, their journals, .gitignore and the by-design sibling lock files remain."""
    anchors = sorted(os.listdir(os.path.dirname(anchor)))
    name = os.path.basename(anchor)
    assert anchors == sorted([name, f".{name}.lock", ".gitignore"]), anchors
    states = set(os.listdir(box.state_dir()))
    expected = {"work-state.json", ".work-state.json.lock", "work-state.log", ".gitignore"}
    assert expected <= states <= expected | {"work-state.log.1"}, states


def test_concurrent_steps(size: Size, tally: Tally) -> None:
    writers = size.pick(3, 8)
    count = size.pick(15, 500)
    with sandbox(on_disk=True) as box:
        anchor, state = _setup(box)
        stop = os.path.join(box.root, "stop")
        readers = [fork_call(_reader(anchor, state, box.project, stop)) for _ in range(READERS)]
        workers: list[Child] = [fork_call(_writer(i, count, anchor, box.project)) for i in range(writers)]
        try:
            failures = [worker.result(timeout=size.pick(120, 3600)) for worker in workers]
        finally:
            with open(stop, "w"):
                pass
        reads = bad = 0
        for reader in readers:
            result = reader.result(timeout=30)
            assert isinstance(result, list)
            reads += result[0]
            bad += result[1]
        assert failures == [0] * writers
        tally.add("writes", 2 * writers * count)
        tally.add("reads", reads)
        assert reads > 0 and bad == 0, f"{bad} of {reads} reads did not parse"
        check_anchor(anchor, writers, count)
        check_state(state, writers, count)
        check_debris(box, anchor)


def test_concurrent_cli_processes(size: Size, tally: Tally) -> None:
    """The real command, started as separate processes, on one anchor at once."""
    processes = size.pick(4, 8)
    count = size.pick(1, 10)
    with sandbox(on_disk=True) as box:
        anchor, _state = _setup(box)
        command = [sys.executable, str(REPO / "bin" / "session-workflow")]
        env = {**os.environ, "PYTHONPATH": str(REPO / "src")}
        for step in range(count):
            running = [
                subprocess.Popen(
                    [*command, "anchor", "step", anchor, f"w{index} s{step}"],
                    env=env,
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.PIPE,
                )
                for index in range(processes)
            ]
            for process in running:
                _out, err = process.communicate(timeout=120)
                assert process.returncode == 0, err
        tally.add("writes", processes * count)
        check_anchor(anchor, processes, count)
        check_debris(box, anchor)
