#!/usr/bin/env bash
# Scale benchmarks: a store of TASKS tasks and EVENTS ledger events made by
# bench/storegen (every task ended or parked), then, in COUNT interleaved
# rounds, medians of:
#   - `orchestra-tui status` against one SQL query over the same file
#     (sqlite3), as wall seconds and their ratio;
#   - the first console frame with the task list, from starting the console
#     in a 200x50 tmux (it spawns the engine, which loads the store), as
#     wall seconds and as the CPU seconds the engine and the console had
#     used by then (the figure a loaded machine does not inflate);
# and, once, the idle CPU of the engine and of the console over 10 s, then
# the first frame's stages timed in one process (bench/firstframe: engine
# start with the store loaded, attach with the snapshot, first render).
# Goals: status under 100 ms, first frame under 500 ms, idle under 1% of a
# core each.
#
#   bash bench/scale.sh                   # from the project root; needs tmux and sqlite3
#   COUNT=3 TASKS=1000 EVENTS=100000 bash bench/scale.sh
#   STORE_DIR=/tmp/big bash bench/scale.sh   # reuse a store storegen made
set -euo pipefail
cd "$(dirname "$0")/.."
TASKS=${TASKS:-10000}
EVENTS=${EVENTS:-1000000}
COUNT=${COUNT:-5}
for tool in tmux sqlite3; do
	command -v "$tool" >/dev/null || { echo "bench/scale.sh needs $tool (apt-get install $tool)" >&2; exit 1; }
done
work=$(mktemp -d)
sock="orch-scale-$$"
bin="$work/orchestra-tui"
dir=${STORE_DIR:-$work/big}
cleanup() {
	tmux -L "$sock" kill-server 2>/dev/null || true
	"$bin" stop -C "$dir" >/dev/null 2>&1 || true
	rm -rf "$work"
}
trap cleanup EXIT
go build -o "$bin" ./cmd/orchestra-tui
if [[ -z ${STORE_DIR:-} ]]; then
	echo "making a store of $TASKS tasks and $EVENTS events…"
	go run ./bench/storegen -dir "$dir" -tasks "$TASKS" -events "$EVENTS"
fi
db="$dir/.orchestra/orchestra.db"
"$bin" status -C "$dir" >/dev/null # migrate once, outside the rounds
query="SELECT t.id, t.title, t.state, t.phase, t.attempt, (SELECT v.verdict FROM verdicts v WHERE v.task_id = t.id ORDER BY v.id DESC LIMIT 1) FROM tasks t ORDER BY t.created_at, t.id"

now() { date +%s%N; }
median() { sort -g | awk '{v[NR] = $1} END {if (NR) print (NR % 2 ? v[(NR+1)/2] : (v[NR/2] + v[NR/2+1]) / 2)}'; }
status_s=() query_s=() frame_s=() framecpu_s=()
ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
hz=$(getconf CLK_TCK)
for ((i = 1; i <= COUNT; i++)); do
	t0=$(now); "$bin" status -C "$dir" >/dev/null; t1=$(now)
	sqlite3 "$db" "$query" >/dev/null; t2=$(now)
	status_s+=("$(echo "($t1 - $t0) / 1000000000" | bc -l)")
	query_s+=("$(echo "($t2 - $t1) / 1000000000" | bc -l)")

	"$bin" stop -C "$dir" >/dev/null 2>&1 || true
	t0=$(now)
	tmux -L "$sock" -f /dev/null new-session -d -s main -x 200 -y 50 "cd '$dir' && exec '$bin'"
	until tmux -L "$sock" capture-pane -p -t main | grep -q "$TASKS tasks"; do sleep 0.01; done
	t1=$(now)
	frame_s+=("$(echo "($t1 - $t0) / 1000000000" | bc -l)")
	cp=$(tmux -L "$sock" display-message -p -t main '#{pane_pid}')
	ep=$(head -1 "$dir/.orchestra/engine.lock")
	framecpu_s+=("$(echo "($(ticks "$cp") + $(ticks "$ep")) / $hz" | bc -l)")
	if ((i < COUNT)); then
		tmux -L "$sock" kill-server
	fi
done

console=$(tmux -L "$sock" display-message -p -t main '#{pane_pid}')
engine=$(head -1 "$dir/.orchestra/engine.lock")
sleep 3 # the first frames and the engine's start-up settle
c0=$(ticks "$console") e0=$(ticks "$engine")
sleep 10
c1=$(ticks "$console") e1=$(ticks "$engine")

status_m=$(printf '%s\n' "${status_s[@]}" | median)
query_m=$(printf '%s\n' "${query_s[@]}" | median)
printf '\nmedians of %d rounds, %d tasks, %d events:\n' "$COUNT" "$TASKS" "$EVENTS"
printf '  status                      %8.3f s\n' "$status_m"
printf '  one SQL query (sqlite3)     %8.3f s   status/query %.1fx\n' "$query_m" "$(echo "$status_m / $query_m" | bc -l)"
frame_m=$(printf '%s\n' "${frame_s[@]}" | median)
printf '  console first frame         %8.3f s   (engine spawned and loaded)   frame/query %.1fx\n' "$frame_m" "$(echo "$frame_m / $query_m" | bc -l)"
printf '    CPU of engine + console   %8.3f s   by the first frame\n' "$(printf '%s\n' "${framecpu_s[@]}" | median)"
printf '  idle engine                 %8.2f %%cpu over 10 s\n' "$(echo "($e1 - $e0) / 10" | bc -l)"
printf '  idle console                %8.2f %%cpu over 10 s\n' "$(echo "($c1 - $c0) / 10" | bc -l)"

tmux -L "$sock" kill-server
"$bin" stop -C "$dir" >/dev/null 2>&1 || true
printf '\nthe first frame in one process, by stage (bench/firstframe):\n'
go run ./bench/firstframe -C "$dir" -n "$COUNT"
