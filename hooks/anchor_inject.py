"""Anchor reports without the CLI: --list-dormant [DIR] | --list-stale [DIR] | --head-fit FILE (read-only)."""

import os
import sys

sys.dont_write_bytecode = True  # until core.bytecode.place says where: never the plugin folder, never a project
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "src"))
code = 1
try:
    from session_workflow.core.bytecode import place

    place()
    from session_workflow.anchor.report import shim_main

    code = shim_main(sys.argv[1:])
    sys.stdout.flush()
except BrokenPipeError:
    code = 0
except Exception as error:  # a report tool prints one line, never a traceback
    sys.stderr.write(f"anchor_inject.py: {error}\n")
finally:
    os._exit(code)
