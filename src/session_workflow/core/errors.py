"""How a failure ends a run: the expected-failure type below every package, and the one guard of hooks and commands.

Domain code (the writers) raises ``Failure`` without knowing the command line that reports it. Every hook and
every command runs inside ``guard``: an expected failure is one line and its code (1 unless it says otherwise);
anything else is a bug, recorded in the error log (``core.errorlog``, imported only then) and, in a command, one
line that says where it was recorded, with its own status (``BUG``). A hook exits 0 on every path (Claude Code's
contract): it prints nothing of a failure, and records the bug.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

    from session_workflow.core.places import Places

# sysexits' EX_SOFTWARE: an unexpected exception, a bug (an expected failure exits 1, bad arguments 2).
BUG = 70
INTERRUPTED = 130


class Failure(Exception):
    """An expected failure: its message is printed as one line and the command exits with ``code``."""

    def __init__(self, message: str, code: int = 1) -> None:
        super().__init__(message)
        self.code = code


def record(where: str, error: BaseException, places: Places) -> str | None:
    """Put ``error`` (raised in ``where``) in the error log; the log's path when it was written, else None. Never
    raises; the log's module is imported only here, so a run that does not fail never loads it."""
    from session_workflow.core.errorlog import record as write

    return write(where, error, places)


def os_error_line(error: OSError) -> str:
    """An OS error as one line: its reason and the file it names (a deleted working directory said as such)."""
    import os

    from session_workflow.core.text import escaped

    try:
        os.getcwd()
    except OSError:
        return "the current directory no longer exists (deleted?): cd to the project, or pass its path"
    name = error.filename
    where = f": {escaped(name) if isinstance(name, str) else repr(name)}" if name is not None else ""
    return f"{error.strerror or error}{where}"


def guard(
    where: str,
    run: Callable[[], int],
    places: Callable[[], Places],
    say: Callable[[str], None] | None = None,
    debug: bool = False,
) -> int:
    """``run()``'s exit status, whatever it raises: the one error guard of hooks and commands.

    A hook (no ``say``): every exception is recorded under ``where`` and the status is 0. A command: a ``Failure``
    is its line and its code, an ``OSError`` its line and 1, Ctrl-C 130; any other exception (a RecursionError, a
    MemoryError, a bug) is recorded, said in one line naming the log, and exits ``BUG``; ``debug`` prints its
    traceback too. ``places`` gives the run's places, asked only to record a bug: a hook that decides early never
    builds them.
    """
    try:
        return run()
    except KeyboardInterrupt:
        if say is None:
            raise
        return INTERRUPTED
    except Exception as error:
        if say is None:
            record(where, error, places())
            return 0
        if isinstance(error, Failure):
            say(str(error))
            return error.code
        if isinstance(error, OSError):
            say(os_error_line(error))
            return 1
        path = record(where, error, places())
        if debug:
            import sys
            import traceback

            traceback.print_exception(type(error), error, error.__traceback__, file=sys.stderr)
        from session_workflow.core.text import named

        told = f"recorded in {named(path)}" if path is not None else "not recorded (no user state folder)"
        say(f"failed ({type(error).__name__}): {error}; a bug, {told}: `session-workflow doctor` shows it")
        return BUG
