#!/usr/bin/env bash
# Console benchmarks: the frame time of ui/ (200 tasks, one 120x40 live
# pane, lease timers) and the idle CPU of the real console in tmux while 8
# scripted sessions sit at their prompts for 10 seconds (e2e/idle_cpu_test.go),
# COUNT rounds each. Prints medians.
#
#   bash bench/console.sh            # from the project root; needs tmux
#   COUNT=5 bash bench/console.sh
#
# %cpu is the console process itself (coordinator, workers and UI);
# %cpu-children is the short-lived processes it ran and reaped in the window
# (the workers' git calls). Goals: under 2 ms a frame, under 2% of one core.
set -euo pipefail
cd "$(dirname "$0")/.."
COUNT=${COUNT:-3}
command -v tmux >/dev/null || { echo "bench/console.sh needs tmux (apt-get install tmux)" >&2; exit 1; }
out=$(mktemp)
trap 'rm -f "$out" "$out".*.test' EXIT
go test -c -o "$out.ui.test" ./ui/
go test -c -o "$out.e2e.test" ./e2e/
for ((i = 1; i <= COUNT; i++)); do
	"$out.ui.test" -test.run '^$' -test.bench 'BenchmarkFrame' -test.benchmem | tee -a "$out"
	(cd e2e && "$out.e2e.test" -test.run '^$' -test.bench 'BenchmarkIdleCPU' -test.benchtime=1x) | tee -a "$out"
done

# median NAME UNIT: the median of the value preceding UNIT on NAME's lines.
median() {
	grep "^$1" "$out" | awk -v unit="$2" '{for (i = 2; i <= NF; i++) if ($i == unit) print $(i-1)}' |
		sort -g | awk '{v[NR] = $1} END {if (NR) print (NR % 2 ? v[(NR+1)/2] : (v[NR/2] + v[NR/2+1]) / 2)}'
}
echo
echo "medians of $COUNT runs:"
for name in $(grep -o '^BenchmarkFrame[^ ]*' "$out" | sed 's/-[0-9]*$//' | sort -u); do
	printf '  %-34s %10s ns/frame  %s allocs/frame\n' "$name" "$(median "$name" ns/op)" "$(median "$name" allocs/op)"
done
for view in live no-anim grid; do
	printf '  %-34s %6s %%cpu  %6s %%cpu-children\n' "idle 8 sessions, $view" \
		"$(median "BenchmarkIdleCPU/$view" %cpu)" "$(median "BenchmarkIdleCPU/$view" %cpu-children)"
done
