#!/usr/bin/env bash
# Install the pinned Claude Code CLI into the dev cache, outside the plugin root
# (a marketplace install copies the whole plugin folder, ignored files included),
# and print the path of its native binary as the last line of stdout.
#
# Idempotent: when the binary is already there and reports the pinned version,
# nothing is downloaded.  npm is used only to fetch the registry packages
# (@anthropic-ai/claude-code and its per-platform optional dependency, which
# ships the native binary); the package's postinstall script is not needed and
# is not run.
#
# Environment:
#   CLAUDE_CLI_VERSION   version to install (default: the pinned one below)
#   CLAUDE_CLI_CACHE     install prefix (default: $SESSION_WORKFLOW_DEV_CACHE/claude-cli, where the dev
#                        cache defaults to ${XDG_CACHE_HOME:-~/.cache}/session-workflow-dev; a checkout
#                        that already has the pinned CLI in <repo>/.cache/claude-cli keeps using it)
#
# Used by tox's validate and e2e envs, .ci/run and tests/e2e/conftest.py.
set -euo pipefail

VERSION="${CLAUDE_CLI_VERSION:-2.1.332}"
REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
DEV_CACHE="${SESSION_WORKFLOW_DEV_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/session-workflow-dev}"
LEGACY_PREFIX="$REPO/.cache/claude-cli"

log() { printf 'install_claude_cli: %s\n' "$*" >&2; }
die() { log "error: $*"; exit 1; }

platform_package() {
    local os arch libc=""
    case "$(uname -s)" in
        Linux) os=linux ;;
        Darwin) os=darwin ;;
        *) die "unsupported OS $(uname -s)" ;;
    esac
    case "$(uname -m)" in
        x86_64 | amd64) arch=x64 ;;
        aarch64 | arm64) arch=arm64 ;;
        *) die "unsupported CPU $(uname -m)" ;;
    esac
    if [ "$os" = linux ]; then
        if ls /lib/ld-musl-* >/dev/null 2>&1 || { command -v ldd >/dev/null 2>&1 && ldd --version 2>&1 | grep -qi musl; }; then
            libc=-musl
        fi
    fi
    printf '@anthropic-ai/claude-code-%s-%s%s' "$os" "$arch" "$libc"
}

PKG="$(platform_package)"

installed_version() {
    # "2.1.332 (Claude Code)" -> 2.1.332; empty when the binary is missing or broken.
    [ -x "$BIN" ] || return 0
    DISABLE_AUTOUPDATER=1 CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1 "$BIN" --version 2>/dev/null | awk 'NR==1 {print $1}' || true
}

PREFIX="${CLAUDE_CLI_CACHE:-$LEGACY_PREFIX}"
BIN="$PREFIX/node_modules/$PKG/claude"
if [ -z "${CLAUDE_CLI_CACHE:-}" ] && [ "$(installed_version)" != "$VERSION" ]; then
    PREFIX="$DEV_CACHE/claude-cli"
    BIN="$PREFIX/node_modules/$PKG/claude"
fi

if [ "$(installed_version)" = "$VERSION" ]; then
    printf '%s\n' "$BIN"
    exit 0
fi

command -v npm >/dev/null 2>&1 || die "npm is not installed (apt-get install -y npm, or install Node.js), needed to fetch @anthropic-ai/claude-code@$VERSION"

log "installing @anthropic-ai/claude-code@$VERSION ($PKG) into $PREFIX"
mkdir -p "$PREFIX"
# A package.json of our own keeps npm from walking up to the repo, and pins the version.
printf '{\n  "private": true,\n  "dependencies": {\n    "@anthropic-ai/claude-code": "%s"\n  }\n}\n' "$VERSION" >"$PREFIX/package.json"
# --ignore-scripts: the postinstall only relinks bin/claude.exe; we use the
# platform package's binary directly.  The package declares node>=22 but the
# native binary does not use the installed node at all, hence --engine-strict=false.
npm install \
    --prefix "$PREFIX" \
    --no-audit --no-fund --no-save --ignore-scripts --engine-strict=false \
    --loglevel=error \
    "@anthropic-ai/claude-code@$VERSION" "$PKG@$VERSION" >&2 \
    || die "npm install @anthropic-ai/claude-code@$VERSION failed"

[ -x "$BIN" ] || chmod +x "$BIN" 2>/dev/null || true
got="$(installed_version)"
[ "$got" = "$VERSION" ] || die "installed $BIN but it reports version '${got:-nothing}', expected $VERSION"
log "installed $BIN ($got)"
printf '%s\n' "$BIN"
