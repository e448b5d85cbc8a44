"""Anchor reports without the CLI: --list-dormant [DIR] | --list-stale [DIR] | --head-fit FILE (read-only)."""

import os
import sys

# Bytecode goes to the plugin's data folder (Claude Code's), never into the plugin folder (a marketplace install
# copies a checkout whole) nor into the project (bytecode is code); else none is written. Inline: a module imported
# before this is decided would be compiled afresh on every run.
data = os.environ.get("CLAUDE_PLUGIN_DATA", "")
try:
    real = os.path.realpath(data) if os.path.isabs(data) else ""
    homes = [os.path.realpath(p) for p in (os.environ.get("CLAUDE_PROJECT_DIR", ""), os.getcwd()) if os.path.isabs(p)]
except (OSError, ValueError):  # a deleted working directory, a NUL
    real = ""
keep = bool(real) and os.path.isdir(real) and not any((real + "/").startswith(p.rstrip("/") + "/") for p in homes)
sys.pycache_prefix = os.path.join(real, "pycache") if keep else None
sys.dont_write_bytecode = not keep
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "src"))
code = 1
try:
    from session_workflow.anchor.report import shim_main

    code = shim_main(sys.argv[1:])
    sys.stdout.flush()
except BrokenPipeError:
    code = 0
except Exception as error:  # a report tool prints one line, never a traceback
    sys.stderr.write(f"anchor_inject.py: {error}\n")
finally:
    os._exit(code)
