"""Anchor reports without the CLI: --list-dormant [DIR] | --list-stale [DIR] | --head-fit FILE (read-only)."""

import os
import sys

# Bytecode goes to the user's cache, never into the plugin folder (a marketplace install copies a checkout whole).
cache = os.environ.get("XDG_CACHE_HOME", "")
cache = cache if os.path.isabs(cache) else os.path.join(os.path.expanduser("~"), ".cache")
sys.pycache_prefix = sys.pycache_prefix or os.path.join(cache, "session-workflow", "pycache")
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
