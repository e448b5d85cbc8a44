"""Open tasks from Claude Code's own task store: reading the store and rendering the part.

``store`` (reading Claude Code's task store, the predecessor fallback), ``render`` (tested through
``tests/tasks/test_store.py``).
"""
