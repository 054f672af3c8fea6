#!/usr/bin/env bash
# The long soak: tasks with corrections under repeated kill -9 of the
# engine, then the checks (no task lost, no correction lost or typed twice,
# integrity, no orphan, no attempt charged for a kill, every task green) and
# the restart-to-first-live-session figures. TestSoak kills the background
# engine with its sessions in session hosts (the mode users run: a restart
# takes them up); TestSoakHeadless kills `run --headless`, whose sessions
# die with it. CI runs the short version (20 kill points each) with
# go test ./soak.
# Usage: bash bench/soak.sh [KILL_POINTS] [hosts|headless|both]   (default 200 both)
set -euo pipefail
cd "$(dirname "$0")/.."
case "${2:-both}" in
  hosts) run='^TestSoak$' ;;
  headless) run='^TestSoakHeadless$' ;;
  both) run='^TestSoak(Headless)?$' ;;
  *) echo "usage: bash bench/soak.sh [KILL_POINTS] [hosts|headless|both]" >&2; exit 2 ;;
esac
ORCHESTRA_SOAK_KILLS=${1:-200} go test -count=1 -v -timeout 120m -run "$run" ./soak
