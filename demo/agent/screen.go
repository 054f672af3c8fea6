package agent

import (
	"fmt"
	"io"
	"strings"
	"time"
)

// spinnerFrames are the glyphs of the "Thinking…" spinner. The lease's
// screen fingerprint masks exactly these, so the spinner alone never counts
// as progress — the demo shows that rule at work.
var spinnerFrames = []string{"⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"}

// ANSI styles for diffs and marks; the pane's emulator renders them and the
// plain-text fingerprint ignores them.
const (
	styleAdd   = "\x1b[32m"
	styleDel   = "\x1b[31m"
	styleDim   = "\x1b[2m"
	styleReset = "\x1b[0m"
	clearLine  = "\r\x1b[K"
)

// write draws s, translating "\n" to "\r\n" on a raw tty (where the line
// discipline no longer does). Called with a.mu held. Write errors are
// ignored: a closed tty means the session is ending anyway.
func (a *agent) write(s string) {
	if a.raw {
		s = strings.ReplaceAll(s, "\n", "\r\n")
	}
	io.WriteString(a.out, s) //nolint:errcheck // see above
}

// print draws s under the lock, unless the agent has stalled.
func (a *agent) print(s string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if !a.stalled {
		a.write(s)
	}
}

// printf is print with formatting.
func (a *agent) printf(format string, args ...any) { a.print(fmt.Sprintf(format, args...)) }

// pause waits units pacing units; with pace 0 it returns at once.
func (a *agent) pause(units int) {
	if ms := a.script.pace(); ms > 0 && units > 0 {
		a.sleep(time.Duration(units*ms) * time.Millisecond)
	}
}

// banner draws the start-up box.
func (a *agent) banner() {
	a.print(styleDim + "╭──────────────────────────────────────────╮\n" +
		"│ ✻ scripted-agent — orchestra-tui's demo  │\n" +
		"│   reads a brief, follows its script      │\n" +
		"╰──────────────────────────────────────────╯" + styleReset + "\n\n")
}

// prompt draws the ready marker.
func (a *agent) prompt() { a.print(ReadyMarker) }

// spin animates the spinner in place for frames frames, with an elapsed
// counter derived from the frame number so output stays deterministic,
// and leaves its last frame on screen.
func (a *agent) spin(label string, frames int) {
	for i := range frames {
		a.printf("%s%s %s (%ds · esc to interrupt)", clearLine, spinnerFrames[i%len(spinnerFrames)], label, i+1)
		a.pause(5)
	}
	a.print("\n")
}
