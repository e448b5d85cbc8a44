# The python3 the plugin runs, with this script's arguments: `/bin/sh hooks/python.sh ARG...` (hooks.json), or
# sourced by bin/session-workflow after `set -- ARG...`. It is the first python3 on PATH that is a regular
# executable file, skipping relative entries (the empty one too) and entries inside the project folder
# ($CLAUDE_PROJECT_DIR and the working directory, unless either is /), compared with symbolic links resolved (`cd -P`): a project's
# .claude/settings.json "env" block reaches PATH even in a workspace never trusted, and a python3 it ships there is
# the repository's code. POSIX sh builtins only (no subshell, no other program), so it costs one /bin/sh start.
# Without such a python3 it says so on stderr and exits 127. `--which` prints the path instead (doctor asks).
sw_start=${PWD-}
sw_here=
cd -P . 2>/dev/null && sw_here=$PWD
sw_project=
case ${CLAUDE_PROJECT_DIR-} in /*) cd -P -- "$CLAUDE_PROJECT_DIR" 2>/dev/null && sw_project=$PWD ;; esac
sw_python=
set -f  # PATH is split on ':' and never globbed; neither is undone: every way out is exec or exit
IFS=:
for sw_entry in $PATH; do
    case $sw_entry in /*) ;; *) continue ;; esac
    [ -f "$sw_entry/python3" ] && [ -x "$sw_entry/python3" ] || continue
    sw_real=$sw_entry
    if [ -n "$sw_here" ]; then  # resolved only where it can come back to the working directory
        cd -P -- "$sw_entry" 2>/dev/null || continue
        sw_real=$PWD
    fi
    sw_inside=
    for sw_home in "$sw_project" "$sw_here"; do
        case $sw_home in
            "" | /) ;;  # none, or a session started at the root: that would leave out every entry
            *) case $sw_real/ in "$sw_home"/*) sw_inside=1 ;; esac ;;
        esac
    done
    if [ -z "$sw_inside" ]; then
        sw_python=$sw_real/python3
        break
    fi
done
if [ -n "$sw_here" ]; then
    cd -P -- "$sw_here" || exit 127
    [ -n "$sw_start" ] && PWD=$sw_start
fi
if [ "${1-}" = --which ]; then
    printf '%s\n' "$sw_python"
    exit 0
fi
if [ -z "$sw_python" ]; then
    echo "session-workflow: no python3 on PATH outside the project (relative entries are skipped too)" >&2
    exit 127
fi
exec "$sw_python" "$@"
