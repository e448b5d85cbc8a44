"""Hook command of the test-only e2e-probe plugin.

Appends ``{"event": ..., "payload": <stdin JSON>, "transcript_exists": bool}``
to ``$E2E_PROBE_LOG`` (if set) and prints a marker:

* SessionStart: additionalContext ``E2E-PROBE-SESSIONSTART source=<source>``,
  padded with ``x`` to ``$E2E_PROBE_SS_LEN`` characters when that is set;
* PreCompact: plain stdout ``E2E-PROBE-PRECOMPACT trigger=<trigger>``;
* UserPromptSubmit: additionalContext ``E2E-PROBE-USERPROMPT``.

Set ``E2E_PROBE_QUIET=1`` to print nothing.
"""

from __future__ import annotations

import json
import os
import sys


def main() -> int:
    event = sys.argv[1] if len(sys.argv) > 1 else "?"
    raw = sys.stdin.read()
    try:
        payload = json.loads(raw)
    except ValueError:
        payload = raw
    log = os.environ.get("E2E_PROBE_LOG")
    if log:
        tpath = payload.get("transcript_path") if isinstance(payload, dict) else None
        exists = os.path.exists(tpath) if isinstance(tpath, str) else None
        with open(log, "a", encoding="utf-8") as f:
            f.write(json.dumps({"event": event, "payload": payload, "transcript_exists": exists}) + "\n")
    if os.environ.get("E2E_PROBE_QUIET") == "1":
        return 0
    fields = payload if isinstance(payload, dict) else {}
    if event == "SessionStart":
        text = f"E2E-PROBE-SESSIONSTART source={fields.get('source')}"
        want = int(os.environ.get("E2E_PROBE_SS_LEN") or 0)
        if want > len(text):
            text = text + " " + "x" * (want - len(text) - 1)
        out = {"hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": text}}
        print(json.dumps(out))
    elif event == "PreCompact":
        print(f"E2E-PROBE-PRECOMPACT trigger={fields.get('trigger')}")
    elif event == "UserPromptSubmit":
        out = {"hookSpecificOutput": {"hookEventName": "UserPromptSubmit", "additionalContext": "E2E-PROBE-USERPROMPT"}}
        print(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
