"""session-workflow: put a long run's load-bearing state back after Claude Code compacts, resumes or clears."""

__version__ = "0.1.0"
