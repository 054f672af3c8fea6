package ui

import (
	"fmt"
	"strings"
	"time"

	"github.com/charmbracelet/x/ansi"

	"github.com/orchestra-tui/orchestra-tui/session"
)

// fit makes s exactly w cells wide: truncated with an ellipsis when longer,
// padded with spaces when shorter. Every line of a frame goes through it, so
// no component can make a line overflow the terminal.
func fit(s string, w int) string {
	if w <= 0 {
		return ""
	}
	sw := ansi.StringWidth(s)
	if sw > w {
		s = ansi.Truncate(s, w, "…")
		sw = ansi.StringWidth(s)
	}
	if sw < w {
		s += strings.Repeat(" ", w-sw)
	}
	return s
}

// fitRaw is fit for foreign ANSI text (a pane's screen): it cuts without an
// ellipsis and resets attributes at the end so a colour never bleeds into
// the next component on the same row (session.FitRow).
func fitRaw(s string, w int) string { return session.FitRow(s, w) }

// block makes lines exactly h rows of exactly w cells.
func block(lines []string, w, h int) []string {
	out := make([]string, h)
	blank := strings.Repeat(" ", max(w, 0))
	for i := range out {
		if i < len(lines) {
			out[i] = fit(lines[i], w)
		} else {
			out[i] = blank
		}
	}
	return out
}

// clock renders a duration as mm:ss (minutes may exceed 59) for the lease
// timers, which an operator reads at a glance.
func clock(d time.Duration) string {
	if d < 0 {
		d = 0
	}
	s := int(d.Round(time.Second) / time.Second)
	return fmt.Sprintf("%02d:%02d", s/60, s%60)
}

// ago renders an elapsed duration compactly: "12s", "4m05s", "2h03m".
func ago(d time.Duration) string {
	if d < 0 {
		d = 0
	}
	d = d.Round(time.Second)
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d/time.Second))
	case d < time.Hour:
		return fmt.Sprintf("%dm%02ds", int(d/time.Minute), int(d%time.Minute/time.Second))
	default:
		return fmt.Sprintf("%dh%02dm", int(d/time.Hour), int(d%time.Hour/time.Minute))
	}
}

// wrapParts joins parts with " · " into at most maxLines lines of width w,
// starting a new line where the next part would not fit.
func wrapParts(parts []string, w, maxLines int) []string {
	var lines []string
	cur := ""
	for _, p := range parts {
		if cur == "" {
			cur = p
			continue
		}
		if ansi.StringWidth(cur)+3+ansi.StringWidth(p) <= w || len(lines)+1 >= maxLines {
			cur += " · " + p
			continue
		}
		lines = append(lines, cur)
		cur = p
	}
	if cur != "" {
		lines = append(lines, cur)
	}
	return lines
}

// plural counts things in English: "1 task", "2 tasks", "0 tasks".
func plural(n int, one, many string) string {
	if n == 1 {
		return fmt.Sprintf("%d %s", n, one)
	}
	return fmt.Sprintf("%d %s", n, many)
}
