"""PostToolUse hook (Write|Edit|MultiEdit): vouch for an anchor this session edited, as the tool left it."""

import os
import sys

sys.dont_write_bytecode = True  # until core.bytecode.place says where: never the plugin folder, never a project
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "src"))
try:
    from session_workflow.core.bytecode import place

    place()
    from session_workflow.hook.tool_edit import post_tool_use

    post_tool_use()
finally:
    os._exit(0)
