#!/usr/bin/env bash
# A correction from the command line against tmux's own way of typing into a
# pane (issue 24, item 6): `orchestra-tui correct TASK TEXT` from the
# command's start to the agent's read() of it, through the real background
# engine and its session host, against `tmux send-keys` of the same line
# into a tmux pane that runs the same reader (the scripted agent, which
# logs each submitted line with the time it read it), in N alternating
# rounds; medians and their ratio. Then the engine's input path alone:
# engine.Client.Do to the agent's read over one connection, DO times, its
# p50 and p99. BUSY busy loops (sh -c 'while :; do :; done') run beside
# every figure when asked for.
# Goals: correct / send-keys at or below 1x; the input path's p99 under
# 5 ms with eight busy loops.
#
#   bash bench/correct.sh                 # from the project root; needs tmux and git
#   BUSY=8 N=21 DO=200 bash bench/correct.sh
set -euo pipefail
cd "$(dirname "$0")/.."
N=${N:-21}
DO=${DO:-200}
BUSY=${BUSY:-0}
command -v tmux >/dev/null || { echo "bench/correct.sh needs tmux (apt-get install tmux)" >&2; exit 1; }
work=$(mktemp -d)
sock="orch-correct-$$"
bin="$work/orchestra-tui"
repo="$work/repo"
cleanup() {
	tmux -L "$sock" kill-server 2>/dev/null || true
	"$bin" stop -C "$repo" >/dev/null 2>&1 || true
	rm -rf "$work"
}
trap cleanup EXIT
go build -o "$bin" ./cmd/orchestra-tui
go build -o "$work/correctread" ./bench/correctread

mkdir -p "$repo"
git -C "$repo" init -q
git -C "$repo" -c user.name=bench -c user.email=bench@example.com commit -q --allow-empty -m init
# Every phase's agent ignores its brief and sits at its prompt, so each
# correction is read at the prompt and answered with an echo.
script() {
	printf '{"pace_ms": 0, "record_dir": "%s", "phases": {' "$1"
	printf '"frame": [{"behave": "ignore_first"}], "research": [{"behave": "ignore_first"}], "plan": [{"behave": "ignore_first"}], '
	printf '"implement": [{"behave": "ignore_first"}], "review": [{"behave": "ignore_first"}]}}\n'
}
script "$work/engine-rec" >"$work/engine.json"
script "$work/tmux-rec" >"$work/tmux.json"
cat >"$repo/orchestra.toml" <<EOF
[harness.scripted]
argv = ["{{self}}", "agent", "--script", "$work/engine.json"]
EOF
id=$("$bin" add -C "$repo" --title bench --goal "sit at the prompt" --verify true --pipeline implement)
"$bin" engine -C "$repo" >/dev/null
until grep -q '"kind":"brief"' "$work/engine-rec/inputs.log" 2>/dev/null; do sleep 0.05; done

tmux -L "$sock" -f /dev/null new-session -d -s main -x 120 -y 40 "exec '$bin' agent --script '$work/tmux.json'"
until tmux -L "$sock" capture-pane -p -t main | grep -q 'scripted-agent'; do sleep 0.05; done

echo "load average $(cut -d' ' -f1-3 /proc/loadavg)"
"$work/correctread" -bin "$bin" -C "$repo" -task "$id" -engine-rec "$work/engine-rec" \
	-tmux "$sock" -pane main -tmux-rec "$work/tmux-rec" -n "$N" -do "$DO" -busy "$BUSY"
