"""PostToolUse hook (Write|Edit|MultiEdit): vouch for an anchor this session edited, as the tool left it."""

import os
import sys

# Bytecode in the plugin's data folder (Claude Code's, which a project cannot set for hooks), never in the plugin
# folder: a marketplace install copies a checkout whole. Without one (a test, a demo), none is written.
data = os.environ.get("CLAUDE_PLUGIN_DATA", "")
sys.pycache_prefix = os.path.join(data, "pycache") if os.path.isabs(data) else None
sys.dont_write_bytecode = not os.path.isabs(data)
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "src"))
try:
    from session_workflow.hook.tool_edit import post_tool_use

    post_tool_use()
finally:
    os._exit(0)
