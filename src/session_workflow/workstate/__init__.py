"""The work state: the state file, its system-prompt section, the writer and the per-session delivery records."""
