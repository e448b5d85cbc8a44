"""Benchmarks of the hook cost against the interpreter floor (``tox -e bench``; see benchmarks/README.md)."""
