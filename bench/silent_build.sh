#!/usr/bin/env bash
# A silent build is work, not a stall (issue 26): coord's
# BenchmarkSilentBuild runs a scripted agent whose build keeps one core
# busy for BUILD_SECONDS (default 300) and draws nothing, with
# stuck.after = 1m and two-minute leases, in a real pty with its CPU time
# measured for real (the session's cgroup, else /proc). Goal: 0 stuck
# flags and 0 leases lost during the build, and the task finished.
#
#   bash bench/silent_build.sh                 # from the project root
#   BUILD_SECONDS=600 bash bench/silent_build.sh
set -euo pipefail
cd "$(dirname "$0")/.."
echo "load average $(cut -d' ' -f1-3 /proc/loadavg)"
BUILD_SECONDS=${BUILD_SECONDS:-300} go test -count=1 -run '^$' -bench 'BenchmarkSilentBuild$' -benchtime 1x -timeout 30m -v ./coord/ |
	grep -E '^(Benchmark|ok|FAIL|---)|lease\.renewed|refusal|lease\.expired'
