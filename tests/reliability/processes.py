"""Forked worker processes for the concurrency and crash tests: the writers' own code, many processes, cheaply.

A fork starts in microseconds with every module already imported, so hundreds of writer processes (and
hundreds of kills) fit in a test run; the slices that start the real CLI command are in the tests themselves.
"""

from __future__ import annotations

import contextlib
import json
import os
import select
import signal
import sys
import time
import traceback

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable


class Child:
    """A forked process running one function; its JSON result (or traceback) comes back through a pipe."""

    def __init__(self, pid: int, result_fd: int) -> None:
        self.pid = pid
        self.result_fd = result_fd
        self.status: int | None = None

    def alive(self) -> bool:
        if self.status is not None:
            return False
        pid, status = os.waitpid(self.pid, os.WNOHANG)
        if pid == 0:
            return True
        self.status = status
        return False

    def kill(self) -> None:
        """SIGKILL the child (if it still runs) and reap it."""
        if self.status is None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.pid, signal.SIGKILL)
            self.status = os.waitpid(self.pid, 0)[1]
        os.close(self.result_fd)

    def finish(self, timeout: float) -> int:
        """Wait for the child to end by itself (killed by its own hand counts); SIGKILL it past ``timeout``."""
        deadline = time.monotonic() + timeout
        while self.alive():
            if time.monotonic() > deadline:
                break
            select.select([self.result_fd], [], [], 0.01)
            with contextlib.suppress(OSError):
                os.read(self.result_fd, 1 << 16)
        self.kill()
        assert self.status is not None
        return self.status

    def result(self, timeout: float) -> object:
        """Wait for the child's result; raise with its traceback if it failed, or kill it past ``timeout``."""
        deadline = time.monotonic() + timeout
        chunks = []
        try:
            while True:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    os.kill(self.pid, signal.SIGKILL)
                    raise AssertionError(f"worker {self.pid} still running after {timeout:.0f}s")
                ready, _w, _x = select.select([self.result_fd], [], [], remaining)
                if ready:
                    data = os.read(self.result_fd, 1 << 16)
                    if not data:
                        break
                    chunks.append(data)
        finally:
            os.close(self.result_fd)
            if self.status is None:
                self.status = os.waitpid(self.pid, 0)[1]
        text = b"".join(chunks).decode("utf-8", "replace")
        if os.waitstatus_to_exitcode(self.status) != 0:
            raise AssertionError(f"worker {self.pid} failed:\n{text}")
        return json.loads(text)


def fork_call(function: Callable[[], object], quiet: bool = True) -> Child:
    """Run ``function`` in a forked child; its stdout and stderr go to /dev/null when ``quiet``."""
    read_fd, write_fd = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: never returns into pytest
        code = 1
        try:
            os.close(read_fd)
            if quiet:
                null = os.open(os.devnull, os.O_WRONLY)
                os.dup2(null, 1)
                os.dup2(null, 2)
                sys.stdout = sys.stderr = open(os.devnull, "w")  # noqa: SIM115 - the child ends with os._exit
            result = json.dumps(function())
            code = 0
        except BaseException:
            result = traceback.format_exc()
        finally:
            with contextlib.suppress(BaseException):
                os.write(write_fd, result.encode("utf-8", "replace"))
            os._exit(code)
    os.close(write_fd)
    return Child(pid, read_fd)
