# The python3 the plugin runs, with this script's arguments: `/bin/sh hooks/python.sh ARG...` (hooks.json), or
# sourced by bin/session-workflow after `set -- ARG...`. It is the first python3 on PATH that is a real interpreter
# in a folder nothing in the project can steer. A project's .claude/settings.json "env" block reaches PATH even in
# a workspace never trusted, so an entry is skipped when it is relative (the empty one too), lies under /proc or
# /dev (`/proc/self/cwd/..` is a relative entry spelled as an absolute one), lies inside the project folder
# ($CLAUDE_PROJECT_DIR and the working directory, unless either is /), or is a folder neither this user nor root
# owns, or one group or others may write; each entry is resolved from / with symbolic links resolved (`cd -P`), so
# no spelling depends on the working directory. A script standing in for python3 (a version manager's shim: its
# first line is `#!`) is never run: it would obey the project's pin (.python-version), an interpreter too old for
# the plugin among them. For pyenv's shims the interpreter is the one of pyenv's global version file
# (PYENV_ROOT/version, never the project's); otherwise the search goes on along PATH.
# POSIX sh builtins only (no subshell, no other program), so it costs one /bin/sh start where PATH leads to the
# system's /usr/bin or /bin; elsewhere it reads python3's first line and runs one `ls` for the folder's owner and
# mode (no builtin can tell them).
# Without such a python3 it says so on stderr and exits 127. `--which` prints the path instead (doctor asks).
sw_start=${PWD-}
sw_here=
cd -P . 2>/dev/null && sw_here=$PWD
sw_project=
case ${CLAUDE_PROJECT_DIR-} in /*) cd -P -- "$CLAUDE_PROJECT_DIR" 2>/dev/null && sw_project=$PWD ;; esac

# True when ./python3 is a regular executable file that is not a script (its first line does not start with #!).
sw_binary() {
    [ -f python3 ] && [ -x python3 ] || return 1
    sw_line=
    IFS= read -r sw_line <python3 2>/dev/null  # an ELF's first newline is about 1 KB in
    case $sw_line in '#!'*) return 1 ;; esac
}

# True when folder $1 (resolved) is this user's or root's and neither group nor others may write it.
sw_safe() {
    sw_listed=$(command -p ls -ldn -- "$1" 2>/dev/null) || return 1
    IFS=' '
    sw_fields $sw_listed
    IFS=:
    case $sw_mode in d????w* | d???????w*) return 1 ;; d*) ;; *) return 1 ;; esac
    [ "$sw_owner" = 0 ] || [ -O "$1" ]
}
sw_fields() { sw_mode=${1-} sw_owner=${3-}; }

# True when the working directory is fit to run python3 from: not inside the project, and the system's own
# (/usr/bin, /bin: no version manager installs there; nothing is read) or safe (sw_safe) with a binary python3.
sw_fit() {
    for sw_home in "$sw_project" "$sw_here"; do
        case $sw_home in
            "" | /) ;;  # none, or a session started at the root: that would leave out every entry
            *) case $PWD/ in "$sw_home"/*) return 1 ;; esac ;;
        esac
    done
    case $PWD in /usr/bin | /bin) [ -x python3 ] && return 0 ;; esac
    sw_binary && sw_safe "$PWD"
}

sw_python=
set -f  # PATH is split on ':' and never globbed; neither is undone: every way out is exec or exit
IFS=:
for sw_entry in $PATH; do
    case $sw_entry in /*) ;; *) continue ;; esac
    cd / && cd -L -- "$sw_entry" 2>/dev/null || continue
    case $PWD in /proc | /proc/* | //proc | //proc/* | /dev | /dev/* | //dev | //dev/*) continue ;; esac
    [ -f python3 ] && cd -P . 2>/dev/null || continue
    if sw_fit; then
        sw_python=$PWD/python3
        break
    fi
    case $PWD in
        */shims)  # pyenv's when a versions folder is beside it: its global version's python3, if fit
            sw_root=${PWD%/shims}
            [ -d "$sw_root/versions" ] && [ -f "$sw_root/version" ] || continue
            while IFS=' 	' read -r sw_pin || [ -n "$sw_pin" ]; do
                IFS=' 	'
                for sw_version in $sw_pin; do
                    case $sw_version in "" | .* | */* | system) continue ;; esac
                    cd -P -- "$sw_root/versions/$sw_version/bin" 2>/dev/null && sw_fit && sw_python=$PWD/python3
                    [ -n "$sw_python" ] && break
                done
                IFS=:
                [ -n "$sw_python" ] && break
            done <"$sw_root/version"
            [ -n "$sw_python" ] && break
            ;;
    esac
done
if [ -n "$sw_here" ]; then
    cd -P -- "$sw_here" || exit 127
    [ -n "$sw_start" ] && PWD=$sw_start
else
    cd -- "$sw_start" 2>/dev/null
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
