"""The work state: the state file, its system-prompt section, the writer and the per-session delivery records.

``section`` (pure: parse a state, build its section and key), ``state`` (read and own a state file), ``records``
(per-session delivery records), ``part`` (the SessionStart part, and the one line naming another session's state),
``writer``.
"""
