#!/usr/bin/env bash
# Memory of the session hosts against tmux, by PSS and private memory
# (/proc/PID/smaps_rollup), COUNT rounds, with the real binary running the
# engine (`engine --foreground`), its hosts (ORCHESTRA_HOST_BIN) and a
# console of it attached at 200x50, as an operator runs them, measured
# once the hosts have sat idle for 3 s (a host hands back what its work
# took a second after its session falls quiet):
#   - an idle host: its PSS and private memory (median of 8 hosts; goal at
#     most 3 MiB private);
#   - eight panes that each printed 3 MB: the engine + its eight hosts +
#     the console, against a tmux server (both sides in the same round)
#     holding the same eight panes with the same history limit (goal at
#     most 1x). The agents (`cat`) are counted on neither side.
#
#   bash bench/memory.sh            # from the project root; needs tmux
#   COUNT=5 bash bench/memory.sh
set -euo pipefail
cd "$(dirname "$0")/.."
COUNT=${COUNT:-3}
command -v tmux >/dev/null || { echo "bench/memory.sh needs tmux (apt-get install tmux)" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
go build -o "$work/orchestra-tui" ./cmd/orchestra-tui
go test -c -o "$work/engine.test" ./engine/
for ((i = 1; i <= COUNT; i++)); do
	echo "round $i, load average $(cut -d' ' -f1-3 /proc/loadavg)"
	ORCHESTRA_HOST_BIN="$work/orchestra-tui" "$work/engine.test" -test.run '^$' \
		-test.bench 'BenchmarkHostMemory$|BenchmarkMemoryVsTmux$' -test.benchtime 1x 2>/dev/null | grep ^Benchmark | tee -a "$work/out"
done
median() {
	grep "^$1-" "$work/out" | awk -v unit="$2" '{for (i = 2; i <= NF; i++) if ($i == unit) print $(i-1)}' |
		sort -g | awk '{v[NR] = $1} END {if (NR) print (NR % 2 ? v[(NR+1)/2] : (v[NR/2] + v[NR/2+1]) / 2)}'
}
echo
echo "median of $COUNT rounds:"
echo "  idle host:  private $(median BenchmarkHostMemory private-kB/host | awk '{printf "%.1f", $1/1024}') MiB, PSS $(median BenchmarkHostMemory pss-kB/host | awk '{printf "%.1f", $1/1024}') MiB (goal: private at most 3 MiB)"
echo "  8 panes of 3 MB, PSS: console $(median BenchmarkMemoryVsTmux console-pss-MiB) + engine $(median BenchmarkMemoryVsTmux engine-pss-MiB) + hosts $(median BenchmarkMemoryVsTmux hosts-pss-MiB) = $(median BenchmarkMemoryVsTmux ours-pss-MiB) MiB"
echo "  tmux server, same panes:  $(median BenchmarkMemoryVsTmux tmux-pss-MiB) MiB; ours/tmux $(median BenchmarkMemoryVsTmux ours/tmux) (goal at most 1)"
