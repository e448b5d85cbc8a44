"""End-to-end tests: the real Claude Code CLI against a fake Messages API (``tox -e e2e``)."""
