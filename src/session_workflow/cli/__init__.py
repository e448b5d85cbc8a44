"""The ``session-workflow`` command: the parser and error type below one module per group."""
