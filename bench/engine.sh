#!/usr/bin/env bash
# Engine benchmarks with 16 live sessions (each `cat` at a prompt, real
# ptys, a real engine on its unix socket), COUNT rounds each; prints medians.
#
#   bash bench/engine.sh            # from the project root
#   COUNT=5 bash bench/engine.sh
#
# attach: from dialling the engine to holding the snapshot and every pane's
# screen (the first full frame's data); goal under 300 ms.
# key: a key typed through the console's client; ack-p99 is until the engine
# wrote it into the agent's pty (goal under 10 ms), echo-p99 until the
# agent's echo is back on the console's copy of the pane.
# idle: the engine's CPU with the sessions idle and one console attached;
# goal under 1% of one core.
set -euo pipefail
cd "$(dirname "$0")/.."
COUNT=${COUNT:-3}
out=$(mktemp)
trap 'rm -f "$out" "$out".test' EXIT
go test -c -o "$out.test" ./engine/
for ((i = 1; i <= COUNT; i++)); do
	"$out.test" -test.run '^$' -test.bench 'BenchmarkAttach' -test.benchtime 50x | tee -a "$out"
	"$out.test" -test.run '^$' -test.bench 'BenchmarkKeyLatency' -test.benchtime 200x | tee -a "$out"
	"$out.test" -test.run '^$' -test.bench 'BenchmarkIdleCPU' -test.benchtime 1x | tee -a "$out"
done

# median NAME UNIT: the median of the value preceding UNIT on NAME's lines.
median() {
	grep "^$1" "$out" | awk -v unit="$2" '{for (i = 2; i <= NF; i++) if ($i == unit) print $(i-1)}' |
		sort -g | awk '{v[NR] = $1} END {if (NR) print (NR % 2 ? v[(NR+1)/2] : (v[NR/2] + v[NR/2+1]) / 2)}'
}
echo
echo "median of $COUNT rounds, 16 live sessions:"
echo "  attach to first full frame: $(median BenchmarkAttach ns/op | awk '{printf "%.1f ms", $1/1e6}')"
echo "  key to agent's pty (ack):   p50 $(median BenchmarkKeyLatency ack-p50-ms) ms, p99 $(median BenchmarkKeyLatency ack-p99-ms) ms"
echo "  key to echo on console:     p50 $(median BenchmarkKeyLatency echo-p50-ms) ms, p99 $(median BenchmarkKeyLatency echo-p99-ms) ms"
echo "  engine idle CPU:            $(median BenchmarkIdleCPU %cpu) % of one core"
