"""What the hooks read from Claude Code's session transcript.

``recovery`` (the user's last prompts after a compaction), ``record`` (the run record: what the session did since
its anchor's last write, and the shells still running), ``shell`` (which programs a Bash call ran, for the
record), ``tail`` (one backward pass over the transcript's tail for the record and the recovery), ``thread`` (our
blocks still in the thread; a fork's parent transcript, from Claude Code's command line).
"""
