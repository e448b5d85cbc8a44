"""The one expected-failure type below every package: the CLI prints it as one line and exits with its code.

Domain code (the writers) raises it without knowing the command line that reports it.
"""

from __future__ import annotations


class Failure(Exception):
    """An expected failure: its message is printed as one line and the command exits with ``code``."""

    def __init__(self, message: str, code: int = 1) -> None:
        super().__init__(message)
        self.code = code
