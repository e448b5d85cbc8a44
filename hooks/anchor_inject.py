"""Anchor reports without the CLI: --list-dormant [DIR] | --list-stale [DIR] | --head-fit FILE (read-only)."""

import os
import sys

# Bytecode in the plugin's data folder (Claude Code's, which a project cannot set for hooks), never in the plugin
# folder: a marketplace install copies a checkout whole. Without one (a test, a demo), none is written.
data = os.environ.get("CLAUDE_PLUGIN_DATA", "")
sys.pycache_prefix = os.path.join(data, "pycache") if os.path.isabs(data) else None
sys.dont_write_bytecode = not os.path.isabs(data)
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
