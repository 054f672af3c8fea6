#!/usr/bin/env bash
# Pane ingest and latency benchmarks for session/.
#
# Generates the shared 50 MiB agent stream (once, into a temporary folder
# unless ORCHESTRA_BENCH_STREAM already names a file), then runs, COUNT times
# each: the x/vt emulator ingest at 120x40 and 240x60 in 4 KiB chunks, the
# raw pty read reference (cat under a pty, 32 KiB reads), the recording
# writer, and the pty-to-screen latency. Prints medians and the emulator's
# throughput as a ratio to the raw pty read of the same run.
#
#   bash bench/ingest.sh            # from the project root
#   COUNT=3 bash bench/ingest.sh
set -euo pipefail
cd "$(dirname "$0")/.."
COUNT=${COUNT:-5}
GEN=${AGENTSTREAM:-../shared/bench/agentstream.go}
if [[ -z "${ORCHESTRA_BENCH_STREAM:-}" || ! -s "${ORCHESTRA_BENCH_STREAM}" ]]; then
	tmp=$(mktemp -d)
	trap 'rm -rf "$tmp"' EXIT
	export ORCHESTRA_BENCH_STREAM="$tmp/stream.bin"
	[[ -f "$GEN" ]] || { echo "agentstream.go not found at $GEN; set AGENTSTREAM" >&2; exit 1; }
	go run "$GEN" -o "$ORCHESTRA_BENCH_STREAM" -size 52428800
fi
out=$(mktemp)
go test -c -o "$out.test" ./session/
# Rounds interleave the benchmarks, so load from elsewhere on the machine
# falls on the reference and the emulator alike and the ratios hold.
for ((i = 1; i <= COUNT; i++)); do
	"$out.test" -test.run '^$' -test.bench 'RawPtyRead|EmulatorIngest' -test.benchtime=1x | tee -a "$out"
	"$out.test" -test.run '^$' -test.bench 'CastWrite' -test.benchtime=5000x | tee -a "$out"
	"$out.test" -test.run '^$' -test.bench 'PtyToScreenLatency' -test.benchtime=500x | tee -a "$out"
done

# median NAME FIELD-UNIT: the median of the value preceding UNIT on NAME's lines.
median() {
	grep "^$1" "$out" | awk -v unit="$2" '{for (i = 2; i <= NF; i++) if ($i == unit) print $(i-1)}' |
		sort -g | awk '{v[NR] = $1} END {if (NR) print (NR % 2 ? v[(NR+1)/2] : (v[NR/2] + v[NR/2+1]) / 2)}'
}
raw=$(median BenchmarkRawPtyRead MB/s)
echo
echo "medians of $COUNT runs:"
printf '  %-34s %8s MB/s\n' "raw pty read (reference)" "$raw"
for size in 120x40 240x60; do
	mbs=$(median "BenchmarkEmulatorIngest/$size" MB/s)
	allocs=$(median "BenchmarkEmulatorIngest/$size" allocs/op)
	bytes=$(median "BenchmarkEmulatorIngest/$size" B/op)
	ratio=$(awk -v a="$mbs" -v b="$raw" 'BEGIN {printf "%.3f", a / b}')
	printf '  %-34s %8s MB/s  (%s of raw)  %s allocs/op  %s B/op\n' "x/vt ingest $size" "$mbs" "$ratio" "$allocs" "$bytes"
done
printf '  %-34s %8s MB/s\n' "cast writer (flush per event)" "$(median BenchmarkCastWrite MB/s)"
printf '  %-34s %8s µs median  %s µs p99\n' "pty-to-screen latency" \
	"$(median BenchmarkPtyToScreenLatency µs-median)" "$(median BenchmarkPtyToScreenLatency µs-p99)"
rm -f "$out" "$out.test"
