"""PreCompact hook: ask the compaction summary to keep the anchor, ticket and task pointers verbatim."""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "src"))
try:
    from session_workflow.hook.precompact import main

    main()
finally:
    os._exit(0)
