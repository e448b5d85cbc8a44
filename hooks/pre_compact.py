"""PreCompact hook: ask the compaction summary to keep the anchor, ticket and task pointers verbatim."""

import os
import sys

# Bytecode goes to the user's cache, never into the plugin folder (a marketplace install copies a checkout whole).
cache = os.environ.get("XDG_CACHE_HOME", "")
cache = cache if os.path.isabs(cache) else os.path.join(os.path.expanduser("~"), ".cache")
sys.pycache_prefix = sys.pycache_prefix or os.path.join(cache, "session-workflow", "pycache")
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "src"))
try:
    from session_workflow.hook.precompact import main

    main()
finally:
    os._exit(0)
