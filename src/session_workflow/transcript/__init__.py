"""What the hooks read from Claude Code's session transcript.

``recovery`` (the user's last prompts after a compaction), ``thread`` (our blocks still in the thread; a fork's
parent transcript, from Claude Code's command line).
"""
