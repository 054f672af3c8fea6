#!/usr/bin/env bash
# The long soak: tasks with corrections under repeated kill -9 of the
# engine (the headless run), then the checks (no task lost, no correction
# lost or typed twice, integrity, no orphan, no attempt charged for a kill,
# every task green) and the restart-to-first-confirmed-session figures.
# CI runs the short version (20 kill points) with go test ./soak.
# Usage: bash bench/soak.sh [KILL_POINTS]   (default 200)
set -euo pipefail
cd "$(dirname "$0")/.."
ORCHESTRA_SOAK_KILLS=${1:-200} go test -count=1 -v -timeout 90m -run '^TestSoak$' ./soak
