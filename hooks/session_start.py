"""SessionStart hook: one additionalContext block with the anchor, open tasks, work state and recovery."""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "src"))
try:
    from session_workflow.hook.compose import main

    main()
finally:
    os._exit(0)
