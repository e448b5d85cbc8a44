"""Reliability and security tests: hostile inputs, concurrency, crashes (fast slice by default, ``tox -e stress``)."""
