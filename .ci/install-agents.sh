#!/usr/bin/env bash
# Installs the agent CLIs the real-CLI tests run against the scripted model
# servers (demo/modelstub), each at a pinned version in its own cache
# directory outside the repository, and prints the variables that point the
# tests at them, for eval:
#
#   eval "$(bash .ci/install-agents.sh)"
#
# Idempotent: a CLI whose pinned version is installed and runs is only
# named. Installs run in parallel; progress goes to stderr. Bump a version
# on purpose and rerun the tests that name its variable.
set -euo pipefail

# name  variable  npm package@version  binary
agents=(
  "codex ORCHESTRA_CODEX_BIN @openai/codex@${CODEX_VERSION:-0.171.0} codex"
  "gemini ORCHESTRA_GEMINI_BIN @google/gemini-cli@${GEMINI_CLI_VERSION:-0.61.0} gemini"
  "opencode ORCHESTRA_OPENCODE_BIN opencode-ai@${OPENCODE_VERSION:-1.18.33} opencode"
  # The oldest Claude Code release the console supports; the newest is
  # .ci/install-claude.sh's.
  "claude-oldest ORCHESTRA_CLAUDE_OLDEST_BIN @anthropic-ai/claude-code@${CLAUDE_CODE_OLDEST_VERSION:-2.1.197} claude"
)
cache="${ORCHESTRA_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/orchestra-tui}"

if ! command -v npm >/dev/null 2>&1; then
  echo "install-agents: npm is not installed; the agent CLIs need Node.js 20 or later" >&2
  exit 1
fi

# Version checks run with a throwaway HOME, one per CLI, so they cannot
# touch the user's or each other's (codex once failed its check here while
# another CLI's first run wrote the shared one).
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT

install() {
  local name=$1 pkg=$2 cmd=$3
  local dir="$cache/${pkg//[@\/]/_}" # one directory per package and version
  local bin="$dir/node_modules/.bin/$cmd"
  mkdir -p "$scratch/$name"
  if ! { [ -x "$bin" ] && HOME="$scratch/$name" "$bin" --version >/dev/null 2>&1; }; then
    echo "install-agents: installing $pkg into $dir" >&2
    mkdir -p "$dir"
    npm install --prefix "$dir" --no-audit --no-fund --loglevel=error "$pkg" >&2
    # One second look: a CLI's first run may set up its home while the
    # others install beside it.
    if ! HOME="$scratch/$name" "$bin" --version >"$scratch/$name.out" 2>&1 &&
      ! HOME="$scratch/$name" "$bin" --version >"$scratch/$name.out" 2>&1; then
      echo "install-agents: $bin ($name) does not run after install; its --version printed:" >&2
      sed 's/^/  /' "$scratch/$name.out" >&2
      return 1
    fi
  fi
  echo "$bin" >"$scratch/$name.bin"
}

pids=()
for a in "${agents[@]}"; do
  read -r name _ pkg cmd <<<"$a"
  install "$name" "$pkg" "$cmd" &
  pids+=($!)
done
failed=0
for p in "${pids[@]}"; do wait "$p" || failed=1; done
[ "$failed" = 0 ] || exit 1

for a in "${agents[@]}"; do
  read -r name var _ _ <<<"$a"
  printf 'export %s=%q\n' "$var" "$(cat "$scratch/$name.bin")"
done
