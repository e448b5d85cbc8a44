"""Hook plumbing: the SessionStart composer, its context and part contract, hook I/O, PreCompact, UserPromptSubmit."""
