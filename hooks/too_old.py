"""The path a python3 older than the plugin's 3.9 takes (hooks/hook.py runs it; the package cannot even be parsed
by 3.6): recorded in the error log as ``core.errorlog`` writes it (in ``core.places.Places.state``), at most its size
(``doctor`` shows it and names the interpreter), and said in the SessionStart block. It parses on Python 3.6, and
lives apart from hook.py, which every hook compiles afresh: a current interpreter never reads it."""

import json
import os
import sys
import time

event = sys.argv[1] if len(sys.argv) > 1 else ""
found = "Python " + sys.version.split()[0]
given, home = os.environ.get("XDG_STATE_HOME", ""), os.environ.get("HOME", "")
folder = "/Library/Application Support" if sys.platform == "darwin" else "/.local/state"
base = given if given.startswith("/") else home.rstrip("/") + folder if home.startswith("/") else ""
if base and "\x00" not in base:
    from session_workflow import __version__

    log = os.path.join(base, "session-workflow", "errors.jsonl")
    fields = {"time": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "where": event[:200]}
    fields.update(version=__version__, python=sys.version.split()[0])
    fields["error"] = fields["traceback"] = f"the hooks' python3 is {found}; the plugin needs 3.9+"
    try:
        os.makedirs(os.path.dirname(log), 0o700, exist_ok=True)
        flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0)
        handle = os.open(log, flags, 0o600)
        try:
            if os.fstat(handle).st_size < 20 * 4096:  # errorlog.MAX_LOG_BYTES: once full, it says so already
                os.write(handle, (json.dumps(fields) + "\n").encode("ascii"))
        finally:
            os.close(handle)
    except OSError:
        pass
if event == "SessionStart":
    text = (
        "session-workflow could not restore this run's anchor, tasks or work state: the python3 its hooks"
        f" found on PATH is {found}, and the plugin needs Python 3.9 or newer. Tell the user."
    )
    output = {"hookSpecificOutput": {"hookEventName": event, "additionalContext": text}}
    sys.stdout.write(json.dumps(output))
    sys.stdout.flush()
