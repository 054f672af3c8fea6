#!/usr/bin/env bash
# Builds Gitea from the Go module proxy into a cache directory outside the
# repository and prints the variables that point the forge tests at it, for
# eval:
#
#   eval "$(bash .ci/install-gitea.sh)"
#
# forge/gitea/giteatest starts the binary as an unprivileged user on
# 127.0.0.1 with SQLite. No prebuilt release is downloaded: the module proxy
# is the only source reachable from CI. Idempotent: when the pinned version
# is built and runs it only prints the variables. Progress goes to stderr.
set -euo pipefail

# Pinned so CI runs the server the tests were written against. Bump it on
# purpose and rerun go test ./forge/...
GITEA_VERSION="${GITEA_VERSION:-1.27.3}"
cache="${ORCHESTRA_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/orchestra-tui}"
dir="$cache/gitea-$GITEA_VERSION"
bin="$dir/gitea"
options="$dir/options" # locale and label files: the binary is built without bindata

runs() { [ -x "$bin" ] && [ -d "$options/locale" ] && "$bin" --version >/dev/null 2>&1; }

if ! runs; then
  echo "install-gitea: building code.gitea.io/gitea@v$GITEA_VERSION into $dir (several minutes on 2 cores)" >&2
  # go install refuses the module (its go.mod has replace directives), so
  # build in a writable copy of the downloaded source.
  src=$(GOFLAGS=-mod=mod go mod download -json "code.gitea.io/gitea@v$GITEA_VERSION" |
    sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
  if [ -z "$src" ] || [ ! -d "$src" ]; then
    echo "install-gitea: the module proxy did not give code.gitea.io/gitea@v$GITEA_VERSION" >&2
    exit 1
  fi
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT
  cp -r "$src" "$work/src"
  chmod -R u+w "$work/src"
  mkdir -p "$dir"
  start=$(date +%s)
  # The cheapest build that serves the API: no cgo (SQLite is the pure-Go
  # modernc driver without the sqlite_mattn tag), no bindata (options/ is
  # copied beside the binary), no symbols or DWARF, paths trimmed.
  (cd "$work/src" && CGO_ENABLED=0 GOFLAGS=-mod=mod go build -trimpath \
    -ldflags "-s -w -X main.Version=$GITEA_VERSION" -o "$dir/gitea.new" .) >&2
  rm -rf "$options"
  cp -r "$work/src/options" "$options"
  mv "$dir/gitea.new" "$bin"
  echo "install-gitea: built in $(( $(date +%s) - start ))s" >&2
  if ! runs; then
    echo "install-gitea: $bin does not run after the build" >&2
    exit 1
  fi
fi

printf 'export ORCHESTRA_GITEA_BIN=%q\n' "$bin"
printf 'export ORCHESTRA_GITEA_OPTIONS=%q\n' "$options"
