"""UserPromptSubmit hook: the work-state section, once per snapshot, when the mod does not deliver it."""

import os
import sys

sys.dont_write_bytecode = True  # until core.bytecode.place says where: never the plugin folder, never a project
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "src"))
try:
    from session_workflow.core.bytecode import place

    place()
    from session_workflow.hook.prompt_submit import main

    main()
finally:
    os._exit(0)
