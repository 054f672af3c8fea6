#!/usr/bin/env bash
# Runs every fuzzer for FUZZTIME (30s by default) on top of its committed
# corpus (testdata/fuzz/<Fuzzer>/). A failing input is written there by go
# test; commit it with the fix. Usage: bash .ci/fuzz.sh [FUZZTIME]
#
# A run that reports "0/sec" for a while is minimising a new interesting
# input, not stuck: go test counts the executions of a minimisation only
# when it ends (measured on FuzzTerminal: the fuzz function kept running
# 1,000-6,600 times a second through twenty seconds of "0/sec").
set -euo pipefail
cd "$(dirname "$0")/.."
fuzztime=${1:-${FUZZTIME:-30s}}
# Every fuzzer in the tree, found rather than listed, so a new one runs too.
mapfile -t targets < <(git grep -n -E '^func Fuzz[A-Za-z0-9_]+\(' -- '*_test.go' |
  sed -E 's#^(.*)/[^/]*_test\.go:[0-9]+:func (Fuzz[A-Za-z0-9_]+)\(.*#./\1 \2#; s#^[^/]*_test\.go:[0-9]+:func (Fuzz[A-Za-z0-9_]+)\(.*#. \1#' | sort)
[ ${#targets[@]} -gt 0 ] || { echo "no fuzzers found" >&2; exit 1; }
#
# Go 1.26's fuzzing coordinator can fail a target with a bare "context
# deadline exceeded" as -fuzztime ends while a worker is mid-call
# (go.dev/issue/75804, fixed in Go 1.27; seen here on FuzzTerminal). Such a
# run found nothing: a real finding prints "Failing input written to" and
# leaves the input in testdata/fuzz. That run alone is tried once more; any
# other failure fails at once.
log=$(mktemp)
trap 'rm -f "$log"' EXIT
for t in "${targets[@]}"; do
  read -r pkg name <<<"$t"
  for try in 1 2; do
    echo "== fuzz $pkg $name ($fuzztime)"
    if go test -run '^$' -fuzz "^${name}\$" -fuzztime "$fuzztime" -parallel 2 "$pkg" 2>&1 | tee "$log"; then
      break
    fi
    if [ "$try" = 1 ] && grep -q 'context deadline exceeded' "$log" && ! grep -q -e 'Failing input written to' -e '^panic:' "$log"; then
      echo "== $name: the coordinator's deadline race (go.dev/issue/75804), no failing input; once more"
      continue
    fi
    exit 1
  done
done
