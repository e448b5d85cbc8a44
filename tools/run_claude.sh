#!/usr/bin/env bash
# Run the pinned Claude Code CLI (installed on demand into the dev cache) with a throwaway HOME, offline.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
bin=$(bash "$here/install_claude_cli.sh" | tail -n 1)
home=$(mktemp -d)
trap 'rm -rf "$home"' EXIT
HOME="$home" CLAUDE_CONFIG_DIR="$home/.claude" DISABLE_AUTOUPDATER=1 DISABLE_TELEMETRY=1 \
  CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1 "$bin" "$@"
