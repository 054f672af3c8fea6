#!/usr/bin/env bash
# Pane ingest and latency benchmarks for session/.
#
# Generates the shared 50 MiB agent stream (once, into a temporary folder
# unless ORCHESTRA_BENCH_STREAM already names a file), then runs, COUNT times
# each, in interleaved rounds: the session's emulator (vt) ingest at 120x40
# and 240x60 in 4 KiB chunks, the raw pty read reference (cat under a pty,
# 32 KiB reads), a detached tmux pane cat-ing the same stream (the tmux
# reference), the emulator with a full history (steady state: allocations
# per pass), a 16-pane 200x50 grid frame, the recording writer, and the
# pty-to-screen latency; then, each in a process of its own, the resident
# memory of 8 panes that each printed 3 MB and of a tmux server holding the
# same output with the same history (10,000 lines). Prints medians, the
# ingest as ratios to tmux and to the raw pty read of the same run.
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
ORCHESTRA_BENCH_STREAM=$(realpath "$ORCHESTRA_BENCH_STREAM")
out=$(mktemp)
go test -c -o "$out.test" ./session/
go test -c -o "$out.vt" ./vt/
# Rounds interleave the benchmarks, so load from elsewhere on the machine
# falls on the reference and the emulator alike and the ratios hold.
for ((i = 1; i <= COUNT; i++)); do
	"$out.test" -test.run '^$' -test.bench 'RawPtyRead|EmulatorIngest|TmuxIngest' -test.benchtime=1x | tee -a "$out"
	(cd vt && "$out.vt" -test.run '^$' -test.bench 'IngestSteady' -test.benchtime=1x) | tee -a "$out"
	(cd vt && "$out.vt" -test.run '^$' -test.bench 'GridFrame' -test.benchtime=200x) | tee -a "$out"
	"$out.test" -test.run '^$' -test.bench 'CastWrite' -test.benchtime=5000x | tee -a "$out"
	"$out.test" -test.run '^$' -test.bench 'PtyToScreenLatency' -test.benchtime=500x | tee -a "$out"
done
for ((i = 1; i <= COUNT; i++)); do
	"$out.test" -test.run '^$' -test.bench '^BenchmarkPaneMemory$' -test.benchtime=1x | tee -a "$out"
	"$out.test" -test.run '^$' -test.bench '^BenchmarkTmuxMemory$' -test.benchtime=1x | tee -a "$out"
done

# median NAME FIELD-UNIT: the median of the value preceding UNIT on NAME's lines.
median() {
	grep "^$1" "$out" | awk -v unit="$2" '{for (i = 2; i <= NF; i++) if ($i == unit) print $(i-1)}' |
		sort -g | awk '{v[NR] = $1} END {if (NR) print (NR % 2 ? v[(NR+1)/2] : (v[NR/2] + v[NR/2+1]) / 2)}'
}
raw=$(median BenchmarkRawPtyRead MB/s)
mb=$(awk -v n="$(stat -c %s "$ORCHESTRA_BENCH_STREAM")" 'BEGIN {print n / 1e6}')
echo
echo "medians of $COUNT runs:"
printf '  %-34s %8s MB/s\n' "raw pty read (reference)" "$raw"
for size in 120x40 240x60; do
	tmux=$(median "BenchmarkTmuxIngest/$size" MB/s)
	mbs=$(median "BenchmarkEmulatorIngest/$size" MB/s)
	allocs=$(median "BenchmarkEmulatorIngest/$size" allocs/op)
	steady=$(median "BenchmarkIngestSteady/$size" allocs/op)
	printf '  %-34s %8s MB/s  (%s of raw)\n' "tmux pane $size (reference)" "$tmux" "$(awk -v a="$tmux" -v b="$raw" 'BEGIN {printf "%.3f", a / b}')"
	printf '  %-34s %8s MB/s  (%s x tmux, %s of raw)  %s allocs/MB from empty, %s allocs/MB with a full history\n' \
		"vt ingest $size" "$mbs" "$(awk -v a="$mbs" -v b="$tmux" 'BEGIN {printf "%.2f", a / b}')" \
		"$(awk -v a="$mbs" -v b="$raw" 'BEGIN {printf "%.3f", a / b}')" \
		"$(awk -v a="$allocs" -v b="$mb" 'BEGIN {printf "%.1f", a / b}')" "$(awk -v a="$steady" -v b="$mb" 'BEGIN {printf "%.2f", a / b}')"
done
printf '  %-34s %8s µs  (cells straight into the buffer)\n' "16-pane 200x50 grid frame" "$(awk -v v="$(median BenchmarkGridFrame/cells ns/op)" 'BEGIN {printf "%.0f", v / 1000}')"
printf '  %-34s %8s µs  (pane-width rows, frame text parsed back)\n' "" "$(awk -v v="$(median BenchmarkGridFrame/rows ns/op)" 'BEGIN {printf "%.0f", v / 1000}')"
printf '  %-34s %8s MiB  (%s MiB added by the panes, %s MiB live heap)\n' "8 panes x 3 MB, process RSS" \
	"$(median BenchmarkPaneMemory MiB-rss)" "$(median BenchmarkPaneMemory MiB-panes)" "$(median BenchmarkPaneMemory MiB-heap)"
printf '  %-34s %8s MiB\n' "tmux server, same output (reference)" "$(median BenchmarkTmuxMemory MiB-rss)"
printf '  %-34s %8s MB/s\n' "cast writer (flush per event)" "$(median BenchmarkCastWrite MB/s)"
printf '  %-34s %8s µs median  %s µs p99\n' "pty-to-screen latency" \
	"$(median BenchmarkPtyToScreenLatency µs-median)" "$(median BenchmarkPtyToScreenLatency µs-p99)"
rm -f "$out" "$out.test" "$out.vt"
