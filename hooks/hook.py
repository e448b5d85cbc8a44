"""Every hook of hooks.json: ``python3 -I -S hooks/hook.py EVENT``, the event naming the handler in ``HANDLERS``."""

import gc
import os
import sys

# A hook lives milliseconds and ends in os._exit: no cycle it makes outlives it, so the collector would only rescan
# the objects its imports create (measured: about a tenth of their cost).
gc.disable()

# Bytecode goes to the plugin's data folder (Claude Code's), never into the plugin folder (a marketplace install
# copies a checkout whole) nor into the project (bytecode is code); else none is written. Inline: a module imported
# before this is decided would be compiled afresh on every run.
data = os.environ.get("CLAUDE_PLUGIN_DATA", "")
try:
    real = os.path.realpath(data) if os.path.isabs(data) else ""
    homes = [os.path.realpath(p) for p in (os.environ.get("CLAUDE_PROJECT_DIR", ""), os.getcwd()) if os.path.isabs(p)]
except (OSError, ValueError):  # a deleted working directory, a NUL
    real = ""
keep = bool(real) and os.path.isdir(real) and not any((real + "/").startswith(p.rstrip("/") + "/") for p in homes)
if keep:  # the folder is ours alone (0700, made so whatever the umask), or no bytecode is read from it
    cache = os.path.join(real, "pycache")
    try:  # noqa: SIM105 - contextlib is not a hot-path import
        os.mkdir(cache, 0o700)
    except OSError:  # there already, or it cannot be made: judged below
        pass
    # Every level up to the home (or, outside it, up to / where a sticky /tmp may be shared) is the user's (or
    # root's) and writable by no one else: core.folders.foreign_level's rule, inline (lstat calls only), so a
    # group-writable ~/.claude cannot let a member put a folder of their own in the chain (issue 41).
    try:
        level, top = cache, os.path.realpath(os.environ.get("HOME") or "/")
        below = cache.startswith(top.rstrip("/") + "/")
        while keep:
            info = os.lstat(level)
            shared = info.st_mode & 0o022 and (below or level == cache or not info.st_mode & 0o1000)
            owner = info.st_uid == os.getuid() or (level != cache and info.st_uid == 0)
            keep = info.st_mode & 0o170000 == 0o040000 and owner and not shared
            if level == top or os.path.dirname(level) == level:
                break
            level = os.path.dirname(level)
    except OSError:
        keep = False
sys.pycache_prefix = os.path.join(real, "pycache") if keep else None
sys.dont_write_bytecode = not keep
src = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "src")
sys.path.insert(0, src)

# Event → the module and function that handle it (each reads its payload on stdin and never raises).
HANDLERS = {
    "SessionStart": ("session_workflow.hook.compose", "main"),
    "UserPromptSubmit": ("session_workflow.hook.prompt_submit", "main"),
    "PreCompact": ("session_workflow.hook.precompact", "main"),
    "PreToolUse": ("session_workflow.hook.tool_edit", "pre_tool_use"),
    "PostToolUse": ("session_workflow.hook.tool_edit", "post_tool_use"),
}
# The events whose modules come from one file (core.bytecode): SessionStart and PreCompact import about forty;
# the others a few, whose standard import costs less than reading that file's index (measured).
BUNDLED = ("SessionStart", "PreCompact")
event = sys.argv[1] if len(sys.argv) > 1 else ""

try:
    if sys.version_info < (3, 9):  # noqa: UP036 - the one path an older python3 on PATH can take: too_old.py
        with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "too_old.py"), encoding="utf-8") as old:
            exec(old.read(), {"__name__": "too_old"})
    elif event in HANDLERS:
        bundle = None
        if keep and event in BUNDLED:
            from session_workflow.core.bytecode import Bundle

            bundle = Bundle.install(cache, src, event)
        module, function = HANDLERS[event]
        getattr(__import__(module, fromlist=[function]), function)()
        if bundle is not None:
            bundle.save()
except Exception as error:  # the package itself did not load: recorded too, and still exit 0
    try:
        from session_workflow.core.errors import record
        from session_workflow.core.places import Places

        record(event, error, Places(os.environ))
    except Exception:
        pass
finally:
    os._exit(0)  # no interpreter teardown: the hook's output is written and flushed
