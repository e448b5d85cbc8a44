"""session-workflow: put a long run's load-bearing state back after Claude Code compacts, resumes or clears."""

# The one source of the version: pyproject.toml reads it, plugin.json and marketplace.json must agree.
__version__ = "0.1.0"
