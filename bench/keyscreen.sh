#!/usr/bin/env bash
# Key to screen (issue 24): a key typed into the console focused on a shell
# pane (the real console, its background engine and the pane's session
# host) until its echo reaches the console's terminal, against the same key
# typed into a tmux client attached to a tmux pane running the same shell,
# both in a 120x40 pty, N keys each in alternating rounds; p50 and p99 and
# their ratios. BUSY busy loops run beside the rounds when asked for.
# Goal: console / tmux at or below 1.5x at p50 and p99.
#
#   bash bench/keyscreen.sh               # from the project root; needs tmux and git
#   BUSY=8 N=400 bash bench/keyscreen.sh
#   BIN=path/to/orchestra-tui bash bench/keyscreen.sh   # another build
set -euo pipefail
cd "$(dirname "$0")/.."
N=${N:-200}
BUSY=${BUSY:-0}
command -v tmux >/dev/null || { echo "bench/keyscreen.sh needs tmux (apt-get install tmux)" >&2; exit 1; }
work=$(mktemp -d)
sock="orch-keyscreen-$$"
bin="$work/orchestra-tui"
repo="$work/repo"
cleanup() {
	tmux -L "$sock" kill-server 2>/dev/null || true
	"$bin" stop -C "$repo" >/dev/null 2>&1 || true
	rm -rf "$work"
}
trap cleanup EXIT
if [ -n "${BIN:-}" ]; then cp "$BIN" "$bin"; else go build -o "$bin" ./cmd/orchestra-tui; fi
go build -o "$work/keyscreen" ./bench/keyscreen

mkdir -p "$repo"
git -C "$repo" init -q
git -C "$repo" -c user.name=bench -c user.email=bench@example.com commit -q --allow-empty -m init
"$bin" add -C "$repo" --harness shell --title bench --goal "sit at the prompt" --verify true --pipeline implement >/dev/null
"$bin" engine -C "$repo" >/dev/null

tmux -L "$sock" -f /dev/null new-session -d -s main -x 120 -y 40 "env PS1='\$ ' /bin/sh"
tmux -L "$sock" set -g status off

"$work/keyscreen" -bin "$bin" -C "$repo" -tmux "$sock" -pane main -n "$N" -busy "$BUSY"
