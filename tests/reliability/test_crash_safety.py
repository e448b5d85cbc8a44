"""Crash safety: SIGKILL a writer anywhere in a write; the file is always the old or the new version, and the
next writer never waits on the dead writer's lock.

Three ways to pick the point: a sweep that kills the writer just before each of its file-system calls in turn
(open, write, fsync, fchmod, replace, link, unlink, close: deterministic, every step of the protocol), kills at
random times during a forked write, and kills at random times of the real ``bin/session-workflow`` command.
After each kill: the file is byte-identical to the old version or to the one the writer would have written; the
lock can be taken at once with a zero timeout (the kernel drops a dead process's fcntl lock); and the next write
succeeds and leaves no temp file behind (it removes the dead writer's).
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from collections.abc import Callable

import pytest
from filelock import FileLock

from session_workflow.anchor import writer as anchor_writer
from session_workflow.cli import main as cli
from session_workflow.core import atomic
from session_workflow.core.places import Places
from session_workflow.workstate import state as workstate
from session_workflow.workstate import writer as workstate_writer

from .processes import fork_call
from .sandbox import REPO, Sandbox, sandbox
from .sizes import Size, Tally

SESSION = "crash-session"
# The file-system calls a write makes, each a point to die just before.
SYSCALLS = ("open", "write", "fsync", "fchmod", "replace", "link", "unlink", "close", "rename", "ftruncate")


class Target:
    """One file and its writer: ``write(text)`` in-process, and what the file would be after it (``expect``)."""

    def __init__(self, box: Sandbox, kind: str) -> None:
        self.kind = kind
        self.project = box.project
        if kind == "anchor":
            self.path = anchor_writer.create_anchor(box.project, "crash", time.time(), Places(os.environ))
        else:
            args = ["state", "set", "--ticket", "9", "--title", "Crash", "--dir", box.project, "--session", SESSION]
            assert cli.main(args) == 0
            self.path = os.path.join(box.state_dir(), "work-state.json")

    def write(self, text: str) -> None:
        if self.kind == "anchor":
            anchor_writer.step_anchor(self.path, text, Places(os.environ))
        else:
            workstate_writer.set_step(self.path, SESSION, text, slug=None, now=time.time())

    def cli_args(self, text: str) -> list[str]:
        if self.kind == "anchor":
            return ["anchor", "step", self.path, text]
        return ["state", "step", text, "--dir", self.project, "--session", SESSION]

    def read(self) -> bytes:
        with open(self.path, "rb") as handle:
            return handle.read()

    def is_old_or_new(self, old: bytes, now: bytes, text: str) -> bool:
        """The file is exactly the old version, or exactly what the write of ``text`` makes of it."""
        if now == old:
            return True
        if self.kind == "anchor":
            return now == anchor_writer.add_step(old, text)[0]
        decoded = workstate.decode(now)
        before = workstate.decode(old)
        if decoded is None or before is None:
            return False
        state, old_state = decoded[0], before[0]
        same = all(getattr(state, name) == getattr(old_state, name) for name in ("ticket", "title", "map", "session"))
        return same and state.step == text and decoded[2] is not None

    def check_after_kill(self, old: bytes, text: str, tally: Tally) -> bytes:
        """The file is whole, the lock is free, and the next writer succeeds and clears the debris."""
        now = self.read()
        assert self.is_old_or_new(old, now, text), f"torn or foreign content after a kill:\n{now!r}"
        lock = FileLock(atomic.lock_path(self.path), timeout=0)
        lock.acquire()  # raises Timeout if a dead writer still held it
        lock.release()
        follow = f"after {text}"
        self.write(follow)
        debris = [name for name in os.listdir(os.path.dirname(self.path)) if name.endswith(".tmp")]
        assert debris == [], debris
        tally.add("kills")
        return self.read()


def _die_before(call_number: int) -> None:
    """Make the ``call_number``-th file-system call of this (child) process SIGKILL it instead."""
    count = [0]

    def wrap(name: str) -> None:
        original = getattr(os, name)

        def killer(*args: object, **kwargs: object) -> object:
            count[0] += 1
            if count[0] == call_number:
                os.kill(os.getpid(), signal.SIGKILL)
            return original(*args, **kwargs)

        setattr(os, name, killer)

    for name in SYSCALLS:
        wrap(name)


def _count_calls(target: Target) -> int:
    """How many file-system calls one write makes (measured in a child, so the count covers lazy imports)."""

    def measure() -> object:
        calls = [0]
        for name in SYSCALLS:
            original = getattr(os, name)

            def counting(*args: object, _original: Callable[..., object] = original, **kwargs: object) -> object:
                calls[0] += 1
                return _original(*args, **kwargs)

            setattr(os, name, counting)
        target.write("measure")
        return calls[0]

    result = fork_call(measure).result(timeout=60)
    assert isinstance(result, int) and result > 3
    return result


@pytest.mark.parametrize("kind", ["anchor", "state"])
def test_kill_before_each_call(kind: str, tally: Tally) -> None:
    """Deterministic: die just before each file-system call of a write, in turn."""
    with sandbox(on_disk=True) as box:
        target = Target(box, kind)
        calls = _count_calls(target)
        old = target.read()
        for call_number in range(1, calls + 2):
            text = f"sweep {call_number}"

            def die(call_number: int = call_number, text: str = text) -> object:
                _die_before(call_number)
                target.write(text)
                return None

            child = fork_call(die)
            child.finish(timeout=30)
            old = target.check_after_kill(old, text, tally)


@pytest.mark.parametrize("kind", ["anchor", "state"])
def test_kill_at_random_times(kind: str, size: Size, tally: Tally) -> None:
    """Die at a random moment of a forked write (timed against how long a write takes here)."""
    rng = random.Random(0x5EED)
    with sandbox(on_disk=True) as box:
        target = Target(box, kind)
        started = time.monotonic()
        for warmup in range(5):
            target.write(f"warm {warmup}")
        window = (time.monotonic() - started) / 5 * 2
        old = target.read()
        for iteration in range(size.pick(40, 2000)):
            text = f"random {iteration}"

            def write(text: str = text) -> object:
                target.write(text)
                return None

            child = fork_call(write)
            time.sleep(rng.uniform(0, window))
            child.kill()
            old = target.check_after_kill(old, text, tally)


@pytest.mark.parametrize("kind", ["anchor", "state"])
def test_kill_the_real_command(kind: str, size: Size, tally: Tally) -> None:
    """Kill ``bin/session-workflow`` at a random moment of its run, start-up included."""
    rng = random.Random(0xC0FFEE)
    command = [sys.executable, str(REPO / "bin" / "session-workflow")]
    with sandbox(on_disk=True) as box:
        target = Target(box, kind)
        started = time.monotonic()
        probe = subprocess.run([*command, *target.cli_args("probe")], capture_output=True, timeout=60)
        assert probe.returncode == 0, probe.stderr
        window = (time.monotonic() - started) * 1.5
        old = target.read()
        for iteration in range(size.pick(4, 100)):
            text = f"command {iteration}"
            process = subprocess.Popen(
                [*command, *target.cli_args(text)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
            )
            time.sleep(rng.uniform(0, window))
            process.kill()
            process.wait(timeout=30)
            old = target.check_after_kill(old, text, tally)
            tally.add("processes")


def test_journal_stays_parseable_after_kills(tally: Tally) -> None:
    """A writer killed mid-journal-append leaves whole lines: every line of work-state.log parses."""
    with sandbox(on_disk=True) as box:
        target = Target(box, "state")
        calls = _count_calls(target)
        for call_number in range(1, calls + 2):

            def die(call_number: int = call_number) -> object:
                _die_before(call_number)
                target.write(f"journal {call_number}")
                return None

            fork_call(die).finish(timeout=30)
            tally.add("kills")
        with open(os.path.join(box.state_dir(), "work-state.log"), "rb") as handle:
            for line in handle.read().splitlines():
                json.loads(line)
