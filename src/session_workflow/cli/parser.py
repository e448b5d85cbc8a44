"""The CLI's parser and error type, below every verb: each group module imports these, never the other way."""

from __future__ import annotations

import argparse

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import NoReturn


class CliError(Exception):
    """An expected failure: its message is printed as one line and the command exits with ``code``."""

    def __init__(self, message: str, code: int = 1) -> None:
        super().__init__(message)
        self.code = code


class OneLineParser(argparse.ArgumentParser):
    """An ArgumentParser whose errors are a single line and exit 2."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message}\n")
