"""Run a schedule of commands, each in a fresh process, from a deliberately small parent; report time and rusage.

Why a separate, tiny launcher: Linux folds the memory of the process image an ``exec`` replaces into the new
program's ``ru_maxrss``. A child forked from the benchmark runner (a Python with json, statistics, the
workload…) would report at least the runner's resident size, hiding the floors' own peaks. This launcher runs
as ``python -I -S`` with only builtin modules (``os``, ``sys``, ``time``, ``marshal``), so its children's
``ru_maxrss`` is their own peak whenever that is above ~5 MB (the runner measures the exact resolution).

Protocol: stdin is ``marshal.dumps(jobs)``, run in order, where a job is ``(argv, env, cwd, stdin_path,
stdout_path, stderr_path)`` and ``argv[0]`` a path; stdout gets ``marshal.dumps(results)``, one
``(wall_ns, cpu_seconds, maxrss_kib, exit_code)`` per job.
"""

from __future__ import annotations

import marshal
import os
import sys
import time

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

# ru_maxrss is bytes on macOS and KiB elsewhere.
RSS_DIVISOR = 1024 if sys.platform == "darwin" else 1
_OUT_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_TRUNC


def run_job(job: tuple[Any, ...]) -> tuple[int, float, int, int]:
    """Fork, wire stdin/stdout/stderr to the job's files, exec; wait4 gives this one child's rusage."""
    argv, env, cwd, stdin_path, stdout_path, stderr_path = job
    stdin_fd = os.open(stdin_path, os.O_RDONLY)
    stdout_fd = os.open(stdout_path, _OUT_FLAGS, 0o600)
    stderr_fd = os.open(stderr_path, _OUT_FLAGS, 0o600)
    start = time.perf_counter_ns()
    pid = os.fork()
    if pid == 0:
        try:
            os.dup2(stdin_fd, 0)
            os.dup2(stdout_fd, 1)
            os.dup2(stderr_fd, 2)
            os.chdir(cwd)
            os.execve(argv[0], argv, env)
        finally:
            os._exit(127)
    _pid, status, usage = os.wait4(pid, 0)
    wall = time.perf_counter_ns() - start
    for fd in (stdin_fd, stdout_fd, stderr_fd):
        os.close(fd)
    code = os.WEXITSTATUS(status) if os.WIFEXITED(status) else -os.WTERMSIG(status)
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss // RSS_DIVISOR, code


def main() -> None:
    results = [run_job(job) for job in marshal.loads(sys.stdin.buffer.read())]
    sys.stdout.buffer.write(marshal.dumps(results))
    sys.stdout.buffer.flush()


if __name__ == "__main__":
    main()
