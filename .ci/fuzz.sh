#!/usr/bin/env bash
# Runs every fuzzer for FUZZTIME (15s by default) on top of its committed
# corpus (testdata/fuzz/<Fuzzer>/). A failing input is written there by go
# test; commit it with the fix. Usage: bash .ci/fuzz.sh [FUZZTIME]
set -euo pipefail
cd "$(dirname "$0")/.."
fuzztime=${1:-${FUZZTIME:-15s}}
targets=(
  "./config FuzzParse"
  "./task FuzzValidateArtifact"
  "./task FuzzParsePipeline"
  "./usage FuzzParseTranscriptLine"
  "./usage FuzzParsePrintResult"
  "./session FuzzReadCast"
  "./session FuzzParseLaunch"
  "./coord FuzzDecodeCommand"
  "./cmd/orchestra-tui FuzzDecodeTaskFile"
  "./demo/agent FuzzParseBrief"
  "./demo/modelstub FuzzParseBrief"
  "./handoff FuzzParse"
  "./vt FuzzTerminal"
)
for t in "${targets[@]}"; do
  read -r pkg name <<<"$t"
  echo "== fuzz $pkg $name ($fuzztime)"
  go test -run '^$' -fuzz "^${name}\$" -fuzztime "$fuzztime" -parallel 2 "$pkg"
done
