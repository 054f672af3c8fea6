#!/usr/bin/env bash
# Installs xterm.js headless (@xterm/headless), the second reference of the
# emulator's differential tests (vt/xterm_test.go), at a pinned version in
# a cache directory outside the repository, and prints the variable that
# points the tests at it, for eval:
#
#   eval "$(bash .ci/install-xterm.sh)"
#
# Idempotent: an installed pinned version is only named. Progress goes to
# stderr. Bump the version together with xtermVersion in vt/xterm_test.go.
set -euo pipefail

pkg="@xterm/headless@${XTERM_HEADLESS_VERSION:-6.0.0}"
cache="${ORCHESTRA_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/orchestra-tui}"
dir="$cache/${pkg//[@\/]/_}" # one directory per package and version, as install-agents.sh

if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
  echo "install-xterm: node and npm are needed (Node.js 20 or later)" >&2
  exit 1
fi
if [ ! -f "$dir/node_modules/@xterm/headless/package.json" ]; then
  echo "install-xterm: installing $pkg into $dir" >&2
  mkdir -p "$dir"
  npm install --prefix "$dir" --no-audit --no-fund --loglevel=error "$pkg" >&2
fi
node -e 'require(process.argv[1])' "$dir/node_modules/@xterm/headless" || {
  echo "install-xterm: $pkg does not load in node after install" >&2
  exit 1
}
printf 'export ORCHESTRA_XTERM_HEADLESS=%q\n' "$dir"
