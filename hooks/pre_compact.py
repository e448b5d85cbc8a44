"""PreCompact hook: ask the compaction summary to keep the anchor, ticket and task pointers verbatim."""

import os
import sys

sys.dont_write_bytecode = True  # until core.bytecode.place says where: never the plugin folder, never a project
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "src"))
try:
    from session_workflow.core.bytecode import place

    place()
    from session_workflow.hook.precompact import main

    main()
finally:
    os._exit(0)
