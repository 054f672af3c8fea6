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
# idle: the engine's CPU with the sessions idle and one console attached,
# over a minute, the programs it runs meanwhile (git) included; goal under
# 1% of one core.
# The same three with every session in a session host (as the background
# engine runs them): attach and keys go console → engine → host, idle CPU is
# the engine's plus its 16 hosts'; and each host's resident memory (VmRSS).
# reference: one byte to another process and back over a unix socket at the
# keys' pace, in the same round: the two process wakeups a key costs
# between engine and host with none of our code, so a key's tail can be read
# against what the machine's load does to any wakeup (the ratio). The load
# average is printed with each round: on a shared machine it moves the tail.
set -euo pipefail
cd "$(dirname "$0")/.."
COUNT=${COUNT:-3}
out=$(mktemp)
trap 'rm -f "$out" "$out".test' EXIT
go test -c -o "$out.test" ./engine/
for ((i = 1; i <= COUNT; i++)); do
	echo "round $i, load average $(cut -d' ' -f1-3 /proc/loadavg)"
	"$out.test" -test.run '^$' -test.bench 'BenchmarkAttach$' -test.benchtime 50x | tee -a "$out"
	"$out.test" -test.run '^$' -test.bench 'BenchmarkKeyLatency$' -test.benchtime 200x | tee -a "$out"
	"$out.test" -test.run '^$' -test.bench 'BenchmarkIdleCPU$' -test.benchtime 1x | tee -a "$out"
	"$out.test" -test.run '^$' -test.bench 'BenchmarkAttachHosts' -test.benchtime 50x 2>/dev/null | tee -a "$out"
	"$out.test" -test.run '^$' -test.bench 'BenchmarkSocketRoundTrip' -test.benchtime 200x 2>/dev/null | tee -a "$out"
	"$out.test" -test.run '^$' -test.bench 'BenchmarkKeyLatencyHosts' -test.benchtime 200x 2>/dev/null | tee -a "$out"
	"$out.test" -test.run '^$' -test.bench 'BenchmarkIdleCPUHosts' -test.benchtime 1x 2>/dev/null | tee -a "$out"
	"$out.test" -test.run '^$' -test.bench 'BenchmarkHostRSS' -test.benchtime 1x 2>/dev/null | tee -a "$out"
	"$out.test" -test.run 'TestKilledEngineReadoptsItsSession$' -test.v 2>/dev/null |
		sed -n 's/.*re-adopted \([0-9.]*\)\(ms\|µs\|s\) after.*/\1 \2/p' |
		awk '{v = $1; if ($2 == "µs") v /= 1000; if ($2 == "s") v *= 1000; printf "Readopt-1 %s readopt-ms\n", v}' | tee -a "$out"
done

# median NAME UNIT: the median of the value preceding UNIT on NAME's lines.
median() {
	grep "^$1-" "$out" | awk -v unit="$2" '{for (i = 2; i <= NF; i++) if ($i == unit) print $(i-1)}' |
		sort -g | awk '{v[NR] = $1} END {if (NR) print (NR % 2 ? v[(NR+1)/2] : (v[NR/2] + v[NR/2+1]) / 2)}'
}
echo
echo "median of $COUNT rounds, 16 live sessions:"
echo "  attach to first full frame: $(median BenchmarkAttach ns/op | awk '{printf "%.1f ms", $1/1e6}')"
echo "  key to agent's pty (ack):   p50 $(median BenchmarkKeyLatency ack-p50-ms) ms, p99 $(median BenchmarkKeyLatency ack-p99-ms) ms"
echo "  key to echo on console:     p50 $(median BenchmarkKeyLatency echo-p50-ms) ms, p99 $(median BenchmarkKeyLatency echo-p99-ms) ms"
echo "  engine idle CPU:            $(median BenchmarkIdleCPU %cpu) % of one core (git it ran $(median BenchmarkIdleCPU children-%cpu))"
echo "with every session in a session host:"
echo "  attach to first full frame: $(median BenchmarkAttachHosts ns/op | awk '{printf "%.1f ms", $1/1e6}')"
echo "  key to agent's pty (ack):   p50 $(median BenchmarkKeyLatencyHosts ack-p50-ms) ms, p99 $(median BenchmarkKeyLatencyHosts ack-p99-ms) ms"
echo "  key to echo on console:     p50 $(median BenchmarkKeyLatencyHosts echo-p50-ms) ms, p99 $(median BenchmarkKeyLatencyHosts echo-p99-ms) ms"
ref99=$(median BenchmarkSocketRoundTrip rt-p99-ms)
echo "  reference round trip:       p50 $(median BenchmarkSocketRoundTrip rt-p50-ms) ms, p99 $ref99 ms (two processes, one byte, no code of ours)"
echo "  key ack p99 / reference p99: $(awk -v k="$(median BenchmarkKeyLatencyHosts ack-p99-ms)" -v r="$ref99" 'BEGIN {if (r > 0) printf "%.1f", k / r}')"
echo "  engine + 16 hosts idle CPU: $(median BenchmarkIdleCPUHosts %cpu) % of one core (engine $(median BenchmarkIdleCPUHosts engine-%cpu) with git $(median BenchmarkIdleCPUHosts children-%cpu), hosts $(median BenchmarkIdleCPUHosts hosts-%cpu))"
echo "  resident memory per host:   $(median BenchmarkHostRSS rss-kB/host | awk '{printf "%.1f MiB", $1/1024}') (median host; largest $(median BenchmarkHostRSS max-rss-kB/host | awk '{printf "%.1f MiB", $1/1024}'))"
echo "  engine start to re-adoption: $(median Readopt readopt-ms) ms (after kill -9 mid-implement)"
