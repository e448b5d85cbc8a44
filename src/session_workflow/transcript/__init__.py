"""What the hooks read from Claude Code's session transcript."""
