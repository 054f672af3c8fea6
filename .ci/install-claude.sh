#!/usr/bin/env bash
# Installs the Claude Code CLI into a cache directory outside the repository
# and prints the path of its `claude` binary on stdout. The real-CLI tests in
# demo/modelstub run it against the scripted model server, never the network.
#
# Idempotent: when the pinned version is already installed it only prints
# the path. Progress goes to stderr so callers can capture stdout:
#
#   ORCHESTRA_CLAUDE_BIN=$(.ci/install-claude.sh)
set -euo pipefail

# Pinned so CI runs the version the tests were written against. Bump it on
# purpose and rerun the demo/modelstub tests.
CLAUDE_CODE_VERSION="${CLAUDE_CODE_VERSION:-2.1.332}"
cache="${ORCHESTRA_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/orchestra-tui}"
dir="$cache/claude-$CLAUDE_CODE_VERSION"
bin="$dir/node_modules/.bin/claude"

# Run the version check with a throwaway HOME so it cannot touch the user's
# ~/.claude.
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
runs() { [ -x "$bin" ] && HOME="$scratch" "$bin" --version >/dev/null 2>&1; }

if runs; then
  echo "$bin"
  exit 0
fi

if ! command -v npm >/dev/null 2>&1; then
  echo "install-claude: npm is not installed; Claude Code needs Node.js 18 or later" >&2
  exit 1
fi

echo "install-claude: installing @anthropic-ai/claude-code@$CLAUDE_CODE_VERSION into $dir" >&2
mkdir -p "$dir"
npm install --prefix "$dir" --no-audit --no-fund --loglevel=error \
  "@anthropic-ai/claude-code@$CLAUDE_CODE_VERSION" >&2

if ! runs; then
  echo "install-claude: $bin does not run after install" >&2
  exit 1
fi
echo "$bin"
