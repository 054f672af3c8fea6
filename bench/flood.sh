#!/usr/bin/env bash
# The flood's effect on the other panes (issue 14's isolation goal): COUNT
# runs of coord's BenchmarkFloodIsolation, N probes each, and the medians
# over the runs of each figure. A run alternates quiet rounds (the flooding
# session stopped with SIGSTOP) with flooded ones (it cats 50 MB over and
# over), so the ratios hold the machine's load alike on both sides:
#   pty     a correction, from Enter to the agent reading it from its tty
#   screen  the agent's echo of it back on the console's copy of its pane
# Goal: the flooded p99 under 2x the quiet p99. A p99 of 200 probes is the
# second worst of them and moves with anything else on the machine; 1,000
# probes and the median of five runs give a figure that holds.
#
#   bash bench/flood.sh                 # from the project root
#   COUNT=3 N=500 bash bench/flood.sh
set -euo pipefail
cd "$(dirname "$0")/.."
COUNT=${COUNT:-5}
N=${N:-1000}
out=$(mktemp)
trap 'rm -f "$out" "$out".test' EXIT
go test -c -o "$out.test" ./coord/
for ((i = 1; i <= COUNT; i++)); do
	echo "run $i, load average $(cut -d' ' -f1-3 /proc/loadavg)"
	(cd coord && "$out.test" -test.run '^$' -test.bench 'BenchmarkFloodIsolation$' -test.benchtime "${N}x") | grep '^Benchmark' | tee -a "$out"
done
# Each line holds "value unit" pairs after the name and the count.
awk '{for (i = 3; i + 1 <= NF; i += 2) v[$(i+1)] = v[$(i+1)] " " $i}
END {
	n = split("pty-quiet-p50-ms pty-flood-p50-ms pty-quiet-p99-ms pty-flood-p99-ms pty-p99-ratio screen-quiet-p50-ms screen-flood-p50-ms screen-quiet-p99-ms screen-flood-p99-ms screen-p99-ratio flood-MB/s", keys, " ")
	printf "\nmedians of %d runs, %s probes each:\n", '"$COUNT"', '"$N"'
	for (k = 1; k <= n; k++) {
		m = split(substr(v[keys[k]], 2), xs, " ")
		for (a = 1; a <= m; a++) for (b = a + 1; b <= m; b++) if (xs[b] + 0 < xs[a] + 0) { t = xs[a]; xs[a] = xs[b]; xs[b] = t }
		med = m % 2 ? xs[(m + 1) / 2] : (xs[m / 2] + xs[m / 2 + 1]) / 2
		printf "  %-22s %10.3f\n", keys[k], med
	}
}' "$out"
