#!/usr/bin/env bash
# Captures the console's screenshots from the real binary in tmux and
# renders them to PNG: e2e's TestScreenshots stages a run and writes
# docs/console-{live,brief}.{txt,ans} (plain text, and tmux capture-pane -e
# with its colours), and TestFirstHourScreenshots the README's "Your first
# hour" steps as docs/first-hour-*; the demo is recorded with `demo --exit-when-done --record` at 100x30
# and docs/castshot renders its screen at DEMO_AT (the correction has just
# reached the stalled pane) into docs/demo.ans; aha turns the colours into
# HTML and headless Chromium photographs it.
#
#   bash docs/screenshots.sh             # from anywhere in the repository
#   bash docs/screenshots.sh first-hour  # only the README's "Your first hour"
#
# Needs tmux, aha and chromium (Debian: apt-get install tmux aha chromium).
set -euo pipefail
cd "$(dirname "$0")/.."
for tool in tmux aha chromium perl; do
	command -v "$tool" >/dev/null || { echo "docs/screenshots.sh needs $tool (apt-get install tmux aha chromium)" >&2; exit 1; }
done
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"; tmux -L orchestra-shot kill-server 2>/dev/null || true' EXIT
if [ "${1:-}" = first-hour ]; then
	ORCHESTRA_SCREENSHOTS="$PWD/docs" go test -count=1 -run '^TestFirstHourScreenshots$' ./e2e
	names=""
else
	ORCHESTRA_SCREENSHOTS="$PWD/docs" go test -count=1 -run '^(TestScreenshots|TestFirstHourScreenshots)$' ./e2e
	go build -o "$tmp/orchestra-tui" ./cmd/orchestra-tui
	tmux -L orchestra-shot new-session -d -x 100 -y 30 "$tmp/orchestra-tui demo --exit-when-done --record $tmp/demo.cast; touch $tmp/done"
	for _ in $(seq 120); do [ -f "$tmp/done" ] && break; sleep 1; done
	go run ./docs/castshot -at "${DEMO_AT:-15.5s}" -o docs/demo.ans "$tmp/demo.cast"
	names="console-live console-brief demo"
fi

for name in $names $(cd docs && ls first-hour-*.ans | sed 's/\.ans$//'); do
	{
		printf '<!DOCTYPE html><html><head><meta charset="utf-8"><style>'
		printf 'body{margin:0;background:#1d1f21}'
		printf 'pre{margin:0;padding:12px 14px;font:14px/17px "DejaVu Sans Mono",monospace;color:#d8d8d8;background:#1d1f21}'
		# Glyphs the monospace font lacks come from a proportional
		# fallback; a one-cell box keeps the columns aligned.
		printf '.c{display:inline-block;width:1ch;text-align:center;overflow:hidden;vertical-align:bottom}'
		printf '</style></head><body><pre>'
		# Every character outside ASCII, Latin-1 and box drawing goes in
		# its own cell.
		aha --no-header <"docs/$name.ans" |
			perl -CSD -pe 's/([^\x{00}-\x{FF}\x{2500}-\x{257F}])/<span class="c">$1<\/span>/g'
		printf '</pre></body></html>'
	} >"$tmp/$name.html"
	size=1040,710
	[ "$name" = demo ] && size=880,540 # 100x30
	chromium --headless --no-sandbox --disable-gpu --hide-scrollbars --force-device-scale-factor=1 \
		--window-size=$size --screenshot="$PWD/docs/$name.png" "file://$tmp/$name.html" 2>/dev/null
	echo "docs/$name.png: $(stat -c %s "docs/$name.png") bytes"
done
