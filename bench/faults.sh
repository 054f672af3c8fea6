#!/usr/bin/env bash
# The long randomized fault run: three engines on one PostgreSQL, each
# through an in-process Toxiproxy, 30 tasks, and a seeded random schedule of
# FAULTS_PER_KIND faults of each of eight kinds (latency, timeout, reset_peer
# and bandwidth toxics, pg_ctl restart, SIGSTOP of an engine past its TTL,
# SIGKILL of an engine, SIGKILL of a session host), then the ledger checker
# (no overlapping sessions, no agent write after its session's end, no stale write landed, no task lost, no attempt
# charged to a fault, every task green). 25 per kind is 200 faults.
# Usage: bash bench/faults.sh [FAULTS_PER_KIND] [SEED]   (default 25, a fresh seed)
set -euo pipefail
cd "$(dirname "$0")/.."
export ORCHESTRA_FAULT_COUNT=${1:-25}
# The agents' own logs decide too: a write after the ledger's end of its
# session fails the run (the suite's short run only reports it).
export ORCHESTRA_FAULT_STRICT_AGENTS=1
if [ -n "${2:-}" ]; then export ORCHESTRA_FAULT_SEED=$2; fi
go test -count=1 -v -timeout 90m -run '^TestFleetRandomFaults$' ./e2e
