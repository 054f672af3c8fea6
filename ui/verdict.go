package ui

import (
	"fmt"
	"strings"

	"github.com/charmbracelet/x/ansi"
	"github.com/orchestra-tui/orchestra-tui/store"
	"github.com/orchestra-tui/orchestra-tui/verify"
)

// verdictLine is the verify package's one-line verdict plus how long the
// run took, which an operator weighs when deciding to wait for the next.
func verdictLine(v verify.Verdict) string {
	s := v.Line()
	if v.Duration > 0 {
		s += fmt.Sprintf(" · %.1fs", v.Duration.Seconds())
	}
	return s
}

// verdictGlyph is the one-cell verdict mark in the task list.
func verdictGlyph(v *verify.Verdict) string {
	if v == nil {
		return "·"
	}
	switch v.Status {
	case verify.StatusOK:
		return "✓"
	case verify.StatusIncomplete:
		return "✗"
	case verify.StatusError:
		return "!"
	}
	return "·"
}

func styleVerdict(st styles, v *verify.Verdict, s string) string {
	if v == nil {
		return st.dim.Render(s)
	}
	switch v.Status {
	case verify.StatusOK:
		return st.ok.Render(s)
	case verify.StatusIncomplete:
		return st.bad.Render(s)
	case verify.StatusError:
		return st.warn.Render(s)
	}
	return s
}

// verdictContent is the Verdict tab: the latest verdict, its command, the
// tail of its output and the history of runs, newest first.
func (dt *detailTabs) verdictContent(latest *verify.Verdict, history []store.VerdictRecord) string {
	var b strings.Builder
	// The stored record carries the output tail; the snapshot's copy may not.
	if len(history) > 0 {
		latest = &history[len(history)-1].Verdict
	}
	if latest == nil {
		b.WriteString(dt.st.dim.Render("no verify run yet: the console runs the task's verify command when a phase finishes"))
		return b.String()
	}
	b.WriteString(styleVerdict(dt.st, latest, verdictLine(*latest)) + "\n")
	fmt.Fprintf(&b, "%s %s  (exit %d)\n", dt.st.dim.Render("$"), latest.Command, latest.ExitCode)
	if tail := strings.TrimRight(latest.Tail, "\n"); tail != "" {
		b.WriteString(dt.st.heading.Render("── output (tail) ──") + "\n")
		for _, l := range strings.Split(tail, "\n") {
			b.WriteString(ansiSafe(l) + "\n")
		}
	}
	if len(history) > 0 {
		b.WriteString(dt.st.heading.Render("── history ("+plural(len(history), "run", "runs")+") ──") + "\n")
		for i := len(history) - 1; i >= 0; i-- {
			r := history[i]
			at := r.Verdict.At.In(dt.now().Location()).Format("15:04:05")
			fmt.Fprintf(&b, "%s %-9s %s\n", at, r.Phase, styleVerdict(dt.st, &r.Verdict, verdictLine(r.Verdict)))
		}
	}
	return strings.TrimRight(b.String(), "\n")
}

// ansiSafe drops control characters from foreign text (test output) so it
// cannot move the cursor or restyle the console; tabs become spaces.
func ansiSafe(s string) string {
	s = ansi.Strip(s)
	if !strings.ContainsFunc(s, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		switch {
		case r == '\t':
			b.WriteString("    ")
		case r < 0x20 || r == 0x7f:
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}
