"""Open tasks from Claude Code's own task store: reading the store and rendering the part."""
