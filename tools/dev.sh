#!/usr/bin/env bash
# Run pytest from a development venv of its own, in the dev cache (never inside the plugin folder, which a
# marketplace install copies whole): `bash tools/dev.sh tests/anchor/test_text.py -k cut`. The first call makes
# the venv (`pip install -e '.[test]'`, a minute); later calls only run pytest, which takes the checkout's `src`
# (pyproject's `pythonpath`), so an edit needs no reinstall. A changed pyproject.toml makes the venv anew.
# PYTHON picks the interpreter (default python3); each interpreter gets its own venv.
set -euo pipefail
cd "$(dirname "$0")/.."

python="${PYTHON:-python3}"
export SESSION_WORKFLOW_DEV_CACHE="${SESSION_WORKFLOW_DEV_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/session-workflow-dev}"
version="$("$python" -c 'import sys; print("%d.%d" % sys.version_info[:2])')"
venv="$SESSION_WORKFLOW_DEV_CACHE/dev-venv-$version"
stamp="$(cksum < pyproject.toml)"
if [ ! -x "$venv/bin/python" ] || [ "$(cat "$venv/pyproject.cksum" 2>/dev/null)" != "$stamp" ]; then
  rm -rf "$venv"
  "$python" -m venv "$venv"
  "$venv/bin/python" -m pip install --quiet --upgrade pip
  "$venv/bin/python" -m pip install --quiet -e '.[test]'
  printf '%s\n' "$stamp" > "$venv/pyproject.cksum"
fi
PYTHONDONTWRITEBYTECODE=1 exec "$venv/bin/python" -m pytest "$@"
